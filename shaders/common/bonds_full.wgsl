// The bound bond chunk's records in full form (struct BondRecord, the layout of
// src/model/bonds.rs `Bond`). The host composes this file or common/bonds_compact.wgsl
// after common/layout.wgsl, so binding 7 has one record type per pipeline.
@group(0) @binding(7) var<storage, read> bonds: array<BondRecord>;

// Bond k of the bound chunk.
fn load_bond(k: u32) -> BondRecord {
    return bonds[k];
}
