//! The CPU twins of the GPU kernels: one module per WGSL file of `shaders/`, each
//! function named after the kernel it mirrors and written with the same loop
//! structure where the two can share it.
//!
//! | shader | GPU kernels | CPU twin |
//! |---|---|---|
//! | `integrate.wgsl` | `integrate_predict` (`step_begin`, `commit_pos`: GPU bookkeeping) | [`integrate`]: `integrate_predict`, `integrate_correct` |
//! | `bonds.wgsl` | `bond_forces` (`bond_gather`), `bond_unload` | [`bonds`]: `bond_forces`, `bond_unload` |
//! | `granular.wgsl`, `common/contact.wgsl` | `granular_forces` (each particle's `granular_sum` over its full row) | [`granular`]: `granular_pairs` (each listed pair once, by its lower id, into a half-list slot), then `granular_sum` per particle |
//! | `particles.wgsl` | `particle_forces`, `particle_forces_predict` (fused with the next step's predict) | [`particles`]: `particle_forces` (with `integrate_correct`), `particle_force` |
//! | `reduce.wgsl` | `reduce_partials`, `reduce_bond_partials`, `reduce_final` | [`reduce`]: `potentials`, with [`crate::diagnostics::kinematic`] |
//! | `storage.wgsl` | `permute_slots` (sorting during a run, issue 44) | [`storage`]: `permute_slots` |
//! | `grid.wgsl` | `grid_gate`, `grid_clear`, `grid_insert`, `neighbor_build`, `grid_finish` | [`crate::neighbor`] (cell grid and Verlet list, sorted rows: the same list) |
//!
//! Where the loop structures differ it is on purpose: the CPU computes each granular
//! pair once (half list) and both particles add the result, while a GPU invocation
//! owns one particle and computes its whole row (no atomics, no scatter); the sums are
//! taken in the same order (ascending partner id), so the two agree to rounding. The
//! law functions themselves (`hertz_contact`, `bond_law`, `binder_pair`, `near_field`,
//! `predict_half`/`correct_half`, the rotations) are tested against their WGSL twins in
//! `tests/gpu_laws.rs` and `tests/gpu_math.rs`.

pub(super) mod bonds;
pub(super) mod granular;
pub(super) mod hard;
pub(super) mod integrate;
pub(super) mod particles;
pub(super) mod reduce;
pub(super) mod storage;
