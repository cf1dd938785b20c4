//! The Rust↔WGSL binding contract: the `@binding` number of every global of
//! `shaders/common/layout.wgsl` (group 0), named as in WGSL. `tests/gpu_shaders.rs`
//! checks every binding of every kernel against [`TABLE`] through naga, so the two
//! cannot drift apart.

/// `params`.
pub const PARAMS: u32 = 0;
/// `status`.
pub const STATUS: u32 = 1;
/// Sections: x and r, v and m, Ω and J, F, motion records' v (two copies).
pub const BODY: u32 = 2;
/// Sections: α, M, pendulum offsets, reference positions, energies, rebuild
/// shift, `pos_next`, `rot_next`.
pub const VECS: u32 = 3;
/// Sections: flags, materials.
pub const PARTICLE_FLAGS: u32 = 4;
/// Sections: pair table, walls, compact bond kinds.
pub const TABLES: u32 = 5;
/// Sections: motion records' Δx and Δα (two copies each).
pub const MOTION: u32 = 6;
/// `bonds`.
pub const BONDS: u32 = 7;
/// `bond_out`.
pub const BOND_OUT: u32 = 8;
/// `incidence`.
pub const INCIDENCE: u32 = 9;
/// `chunk`.
pub const CHUNK: u32 = 10;
/// `neighbors`.
pub const NEIGHBORS: u32 = 11;
/// `kahan`.
pub const KAHAN: u32 = 12;
/// Two copies by step parity.
pub const HIST: u32 = 13;
/// Sections per row chunk: wall springs (two copies), granular output.
pub const ROW_VEC: u32 = 14;
/// `rows`.
pub const ROWS: u32 = 15;
/// `bucket_count`.
pub const BUCKET_COUNT: u32 = 16;
/// `bucket_items`.
pub const BUCKET_ITEMS: u32 = 17;
/// `grid_args`.
pub const GRID_ARGS: u32 = 18;
/// `partials`.
pub const PARTIALS: u32 = 19;
/// `result`.
pub const RESULT: u32 = 20;
/// `hard` (uniform): the hard-contact solver's parameters.
pub const HARD_PARAMS: u32 = 21;
/// `contacts`: hard contacts' and solver bodies' reals (sections `H_*`).
pub const CONTACTS: u32 = 22;
/// `hard_words`: hard contacts' offsets, keys, lists and rows (sections `W_*`).
pub const HARD_WORDS: u32 = 23;
/// `hard_atomic`: colours, cursors and counters (sections `A_*`).
pub const HARD_ATOMIC: u32 = 24;
/// `hard_args`: indirect-dispatch triples of the hard kernels.
pub const HARD_ARGS: u32 = 25;
/// `hard_color` (uniform, one per colour).
pub const HARD_COLOR: u32 = 26;
/// Number of bindings.
pub const COUNT: usize = 27;

/// Every binding: its WGSL name and number.
pub const TABLE: [(&str, u32); COUNT] = [
    ("params", PARAMS),
    ("status", STATUS),
    ("body", BODY),
    ("vecs", VECS),
    ("particle_flags", PARTICLE_FLAGS),
    ("tables", TABLES),
    ("motion", MOTION),
    ("bonds", BONDS),
    ("bond_out", BOND_OUT),
    ("incidence", INCIDENCE),
    ("chunk", CHUNK),
    ("neighbors", NEIGHBORS),
    ("kahan", KAHAN),
    ("hist", HIST),
    ("row_vec", ROW_VEC),
    ("rows", ROWS),
    ("bucket_count", BUCKET_COUNT),
    ("bucket_items", BUCKET_ITEMS),
    ("grid_args", GRID_ARGS),
    ("partials", PARTIALS),
    ("result", RESULT),
    ("hard", HARD_PARAMS),
    ("contacts", CONTACTS),
    ("hard_words", HARD_WORDS),
    ("hard_atomic", HARD_ATOMIC),
    ("hard_args", HARD_ARGS),
    ("hard_color", HARD_COLOR),
];

/// Bindings that differ per bond chunk.
pub const CHUNK_BINDINGS: [u32; 4] = [BONDS, BOND_OUT, INCIDENCE, CHUNK];

/// Bindings that differ per row chunk: the per-particle rows that only their owner
/// touches (the largest buffers of a granular run: 2 × 8 f64 history slots per particle
/// are 512 B), then the chunk's `RowChunk` uniform (one per step parity). State arrays that
/// kernels read for partners (`body`, `vecs`, ...) stay whole.
pub const ROW_BINDINGS: [u32; 5] = [NEIGHBORS, KAHAN, HIST, ROW_VEC, ROWS];
