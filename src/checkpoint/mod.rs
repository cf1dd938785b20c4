//! Checkpoints: a run's complete state at a step, written by `varidem run
//! --checkpoint-every N` and continued by `varidem resume`.
//!
//! A [`Checkpoint`] holds the scene of the run as it was at step 0 (every particle's
//! constant properties and initial state, the bonds with their rest states stored
//! exactly, walls, laws and run parameters) and a [`StateSnapshot`] of the backend at
//! the checkpoint's step: positions, velocities, rotations and angular velocities bit
//! for bit, the integrator and time step, the backend and precision that took it and,
//! for the `f32` GPU backend, its Kahan compensation terms. Resumed on the backend and
//! precision that wrote it, a run continues with the same bits as if it had never
//! stopped (tested in `tests/checkpoint.rs`). Why the neighbour list, the forces and no
//! random state are stored is explained at [`StateSnapshot`].
//!
//! # File format (version 17)
//!
//! All integers and floats little-endian; floats as their IEEE bits.
//!
//! | bytes | content |
//! |---|---|
//! | 19 | magic `VARIDEM-CHECKPOINT\n` |
//! | 4 | format version (`u32`, [`FORMAT_VERSION`]) |
//! | 8 | body length `L` (`u64`) |
//! | L | body |
//! | 4 | CRC-32 (IEEE, `u32`) of every byte before it |
//!
//! The body is, in order: a human-readable summary (`u32` length + UTF-8 text, `key =
//! value` lines; informational only), the snapshot header (step, backend, backend name,
//! precision, integrator, dt, checkpoint interval), the run's identity (`u64`, 0 for
//! none) and VTK setting (`u8`), the run parameters, the model
//! (gravity, shear form, contact law, materials, drag, near field, then the particle
//! arrays, bonds, walls, clump types and clumps) and the snapshot arrays (x, v, α, Ω,
//! compensation terms, the `f32` GPU backend's device origin and relative positions,
//! removed particles, for granular scenes the contact history and the current forces,
//! then each clump's x, v, α, spin variable and load with, from the `f32` GPU, their
//! Kahan terms and device coordinates, then the hard-contact impulses of the last step,
//! each its key and world-frame impulse). Version 2 added the granular model and state,
//! version 3 the device origin (issue 29; a version-2 file reads with origin zero, as
//! its `f32` states were absolute), version 4 clumps (issue 24; older files have none), version 5 the hard-contact
//! impulses (issue 25; older files have none), version 6 wall motions, mesh walls and
//! their contact slots and loads, version 7 the inserters (after the meshes) and their
//! counts of inserted and skipped particles (after the impulses; issue 26), version 8
//! each inserter's clump type (a `u32` after its material, `u32::MAX` for spheres),
//! version 9 the run's identity and VTK setting (issue 49; older files have no
//! identity and VTK on), version 10 `[contact] max_overlap` (an `f64` after
//! `max_contacts`; older files read with the default), version 11 `[simulation]
//! sort_every` (a `u64` after the trapezoidal parameters, 0 for the default, else
//! 1 + the steps; issue 44), version 12 the step at which each removed particle
//! left (`u64`s after the inserters' counts; older files have none, and their
//! removals are not in `removed.csv`), version 13 the contact state's rows by id (the
//! particles in the system), version 14 rolling resistance (issue 50: the contact's
//! rolling model, each material's `rolling_friction` and `rolling_damping` and each
//! interaction's optional `rolling_friction` after the inserters; the EPSD rolling
//! springs of pairs, walls and mesh slots after the wall loads), version 15 JKR
//! cohesion (the contact's cohesion and each material's `surface_energy` after the
//! rolling block; the JKR wall flags after the rolling springs), version 16 breakable
//! bonds (issue 47: each bond's strength after the cohesion block, none or one per bond,
//! each of its four terms a `u8` flag and an `f64`; after the exit steps, every broken
//! bond's step, index, ends, loads and energy at the break), version 17 the layered inflow
//! (issue 48: each wall and mesh motion's `period` after its `stop`, an inserter's grid
//! region as region code 2 with origin, spacing and three `u32` counts, and its velocity
//! perturbation after its radius distribution). The state arrays are by particle id whatever the order
//! the backend that wrote them stored its particles in;
//! version-1 files are refused with a clear error. [`Checkpoint::read`] checks
//! the magic, then the version, then the length and the checksum, and names the file
//! in every error.
//!
//! The modules: `container` (the file around the body and the [`Checkpoint`] API),
//! `encode` and `decode` (the body: run parameters, model and state) and `bytes` (the
//! little-endian writer and reader both are made of).
//!
//! [`StateSnapshot`]: crate::backend::StateSnapshot

mod bytes;
mod container;
mod decode;
mod encode;

pub use container::{
    checkpoint_file_name, checkpoint_path, Checkpoint, CHECKPOINT_DIR, EXTENSION, FORMAT_VERSION,
    MAGIC, OLDEST_READ_VERSION,
};
