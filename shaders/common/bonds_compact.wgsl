// The bound bond chunk's records in compact form (struct BondCompact, src/gpu/layout.rs
// CompactBonds): bonds whose ends started with the same orientation, one rest
// direction, zero rest rotation, stiffnesses by kind from the tables. The host composes
// this file or common/bonds_full.wgsl after common/layout.wgsl.
@group(0) @binding(7) var<storage, read> bonds: array<BondCompact>;

// Bond k of the bound chunk, unpacked into the values of the full record, so the bond
// law computes the same bits.
fn load_bond(k: u32) -> BondRecord {
    let c = bonds[k];
    let kk = bond_kind(c.kind);
    return BondRecord(c.i, c.j, kk.x, kk.y, kk.z, c.rest_length,
                c.rest_dir_x, c.rest_dir_y, c.rest_dir_z, c.rest_dir_x, c.rest_dir_y, c.rest_dir_z,
                0.0, 0.0, 0.0);
}
