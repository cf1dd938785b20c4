//! The Rust↔WGSL contract besides the binding numbers ([`crate::gpu::bindings`]): the
//! status words, kernel error codes, particle flags, parameter flags, integrator
//! codes, the stride and offsets of a bond result, and the reduction slots. They are defined here once and emitted into the generated WGSL header
//! ([`wgsl`]), so the host and the shaders cannot disagree on a value.

use crate::error::{ClumpFault, Contacted, Fault};
use crate::model::{
    FLAG_DORMANT, FLAG_HELD, FLAG_MEMBER, FLAG_NO_ROTATION, FLAG_PENDULUM, FLAG_REMOVED,
};

/// Status word: steps completed (`step_begin` counts; an error stops the count).
pub const STATUS_STEP: u32 = 0;
/// Status word: bit set of raised error codes (0: no error), with the raising
/// dispatch's phase above them ([`ERROR_CODES`], [`ERROR_PHASE_SHIFT`], [`ERROR_SEALED`]).
pub const STATUS_ERROR: u32 = 1;
/// Status word: the neighbour list is stale.
pub const STATUS_REBUILD: u32 = 2;
/// Status word: neighbour-list builds so far.
pub const STATUS_BUILDS: u32 = 3;
/// Status word: the longest neighbour list seen.
pub const STATUS_MAX_NEIGHBORS: u32 = 4;
/// Status word: 1 when the error was raised by the predict half fused into
/// `particle_forces_predict`: it belongs to the step after the one `STATUS_STEP` counts.
pub const STATUS_AHEAD: u32 = 5;
/// Status word: the step whose force evaluation records the wall loads (`rows.wall_load`).
pub const STATUS_LOADS: u32 = 6;
/// Status word: bonds broken so far (issue 47; `bond_forces` counts each break).
pub const STATUS_BREAKS: u32 = 7;
/// Status word: the last step at which a bond broke (`u32::MAX`: none); `bond_unload`
/// does nothing at other steps.
pub const STATUS_BROKE_STEP: u32 = 29;
/// Status words `STATUS_FIRST_INDEX + code`: the lowest particle or bond index that
/// raised error `code`.
pub const STATUS_FIRST_INDEX: u32 = 8;
/// Number of status words.
pub const STATUS_WORDS: u32 = 32;
/// Words `STATUS_DETAIL + i` after the status words, one per particle: what particle
/// `i` overlaps too deeply when it raises [`ERR_OVERLAP`] (a partner id `j`, `n + w`
/// for plane wall `w`, `n + n_walls + m` for mesh `m`; [`overlap_partner`]). Each is
/// written by its own particle only, so the host reads the lowest raising particle's
/// without a race.
///
/// Then words `STATUS_DETAIL + n + k`, one per bond in scenes whose bonds can break
/// (issue 47): the step at which bond `k` broke, `u32::MAX` while it holds.
pub const STATUS_DETAIL: u32 = STATUS_WORDS;
/// Steps of moving-wall poses held on the device (`tables`' wall-pose section, by step
/// modulo this): at least the steps of one submitted batch.
pub const POSE_SLOTS: u32 = 64;
/// vec4 per wall pose: point, normal, velocity, angular velocity, axis point.
pub const POSE_VEC4: u32 = 5;
/// vec4 per mesh pose (`Pose`): the rotation's three columns, centre, translation,
/// velocity, angular velocity, axis point.
pub const MESH_POSE_VEC4: u32 = 8;

/// Kernel error: map (23)'s exact rotation update left its domain.
pub const ERR_ROTATION_DOMAIN: u32 = 0;
/// Kernel error: α ⊕ Δα met the half-turn singularity.
pub const ERR_HALF_TURN: u32 = 1;
/// Kernel error: a bond's relative rotation reached a half turn.
pub const ERR_BOND_HALF_TURN: u32 = 2;
/// Kernel error: a grid bucket overflowed.
pub const ERR_BUCKET_OVERFLOW: u32 = 3;
/// Kernel error: a neighbour list overflowed.
pub const ERR_NEIGHBOR_OVERFLOW: u32 = 4;
/// Kernel error: a state value is not finite.
pub const ERR_NON_FINITE: u32 = 5;
/// Kernel error: more touching contacts than history slots.
pub const ERR_CONTACT_OVERFLOW: u32 = 6;
/// Kernel error: a particle left the domain.
pub const ERR_LEFT_DOMAIN: u32 = 7;
/// Kernel error: a clump's map-(23) rotation update left its domain (the index of
/// every `ERR_CLUMP_*` is the clump's, among the clumps).
pub const ERR_CLUMP_ROTATION_DOMAIN: u32 = 8;
/// Kernel error: a clump's α ⊕ Δα met the half-turn singularity.
pub const ERR_CLUMP_HALF_TURN: u32 = 9;
/// Kernel error: Newton's iteration for a clump's map-(23) rotation increment did not
/// converge.
pub const ERR_CLUMP_NO_CONVERGENCE: u32 = 10;
/// Kernel error: a clump's centre of mass left the domain.
pub const ERR_CLUMP_LEFT_DOMAIN: u32 = 11;
/// Kernel error: a clump's state is not finite.
pub const ERR_CLUMP_NON_FINITE: u32 = 12;
/// Kernel error: the speculative margin of hard contacts exceeds the neighbour skin.
pub const ERR_HARD_SKIN: u32 = 13;
/// Kernel error: more hard contacts than the contact buffers hold (index: the count).
pub const ERR_HARD_CAPACITY: u32 = 14;
/// Kernel error: the colored solver's contact graph needs more than
/// [`HARD_MAX_COLORS`] colours (index: a contact).
pub const ERR_HARD_COLORS: u32 = 15;
/// Kernel error: the hard-contact solve did not converge with `on_nonconvergence =
/// "error"` (index: the step).
pub const ERR_HARD_NO_CONVERGENCE: u32 = 16;
/// Kernel error, internal: the hard-contact solve used every sweep encoded for the step
/// (fewer than `max_sweeps`) without converging; the host encodes more and takes the
/// step again (index: the sweeps).
pub const ERR_HARD_SWEEP_BUDGET: u32 = 17;
/// Kernel error, internal: the step's colouring needs more colours than are encoded
/// per sweep; the host encodes more and takes the step again (index: the colours).
pub const ERR_HARD_COLOR_BUDGET: u32 = 18;
/// Error code: a particle touches more mesh features than its mesh slots hold.
pub const ERR_MESH_OVERFLOW: u32 = 19;
/// Error code: a Hertz contact overlaps by more than `[contact] max_overlap` of the
/// smaller radius (index: the particle, a pair's lower id; what it overlaps in its
/// word at [`STATUS_DETAIL`]).
pub const ERR_OVERLAP: u32 = 20;
/// Number of error codes.
pub const ERR_COUNT: u32 = 21;
/// `STATUS_ERROR` bits `ERROR_CODES`: the raised codes; above them, from bit
/// `ERROR_PHASE_SHIFT`, the phase of the dispatch that raised first (0: a kernel without
/// one), and `ERROR_SEALED` once a later step has begun. In one word, so that an
/// invocation never sees a code without the phase that raised it (WGSL atomics are
/// relaxed). See `failed` in `shaders/common/layout.wgsl`.
pub const ERROR_CODES: u32 = (1 << ERR_COUNT) - 1;
/// First bit of the raising dispatch's phase in `STATUS_ERROR`.
pub const ERROR_PHASE_SHIFT: u32 = ERR_COUNT;
/// `STATUS_ERROR` bit: a step began after the error (`step_begin` sets it), so no
/// kernel runs on.
pub const ERROR_SEALED: u32 = 1 << 31;
const _: () = assert!(
    ERR_COUNT <= 21,
    "the phase bits need 10 bits above the codes (phases below 1024, shaders/common/layout.wgsl), under ERROR_SEALED"
);

/// What the detail word `word` of a particle raising [`ERR_OVERLAP`] names, for `n`
/// particles, `walls` plane walls and `meshes` meshes (`None`: a contract mismatch).
pub fn overlap_partner(word: u32, n: u32, walls: u32, meshes: u32) -> Option<Contacted> {
    let k = word as usize;
    let (n, walls, meshes) = (n as usize, walls as usize, meshes as usize);
    if k < n {
        Some(Contacted::Particle(k))
    } else if k - n < walls {
        Some(Contacted::Wall(k - n))
    } else if k - n - walls < meshes {
        Some(Contacted::Mesh(k - n - walls))
    } else {
        None
    }
}

/// The [`Fault`] a kernel error `code` stands for, at the particle, bond or clump
/// `index` the status words record; `bond_ends` names a bond's particles,
/// `max_contacts` is the history capacity, `free` the particles before the clumps'
/// spheres (a clump's `final.csv` row is `free` + its index). `None` for an unknown
/// code (a contract mismatch), and for [`ERR_OVERLAP`], whose fault needs the raising
/// particle's detail word (the backend reads it: [`overlap_partner`]).
pub fn fault(
    code: u32,
    index: u32,
    bond_ends: impl Fn(usize) -> Option<(u32, u32)>,
    max_contacts: u32,
    free: usize,
) -> Option<Fault> {
    let particle = index as usize;
    Some(match code {
        ERR_ROTATION_DOMAIN => Fault::RotationStepTooLarge {
            particle,
            value: None,
        },
        ERR_HALF_TURN => Fault::HalfTurn { particle },
        ERR_BOND_HALF_TURN => {
            let (i, j) = bond_ends(particle)?;
            Fault::BondHalfTurn {
                bond: particle,
                i,
                j,
            }
        }
        ERR_BUCKET_OVERFLOW => Fault::BucketOverflow { particle },
        ERR_NEIGHBOR_OVERFLOW => Fault::NeighborOverflow { particle },
        ERR_NON_FINITE => Fault::NonFinite {
            particle,
            field: None,
            value: None,
        },
        ERR_CONTACT_OVERFLOW => Fault::ContactOverflow {
            particle,
            contacts: None,
            capacity: max_contacts as usize,
        },
        ERR_LEFT_DOMAIN => Fault::LeftDomain {
            particle,
            position: None,
        },
        ERR_CLUMP_ROTATION_DOMAIN..=ERR_CLUMP_NON_FINITE => Fault::Clump {
            clump: particle,
            row: free + particle,
            fault: match code {
                ERR_CLUMP_ROTATION_DOMAIN => ClumpFault::RotationStepTooLarge { value: None },
                ERR_CLUMP_HALF_TURN => ClumpFault::HalfTurn,
                ERR_CLUMP_NO_CONVERGENCE => ClumpFault::NoConvergence { residual: None },
                ERR_CLUMP_LEFT_DOMAIN => ClumpFault::LeftDomain { position: None },
                _ => ClumpFault::NonFinite,
            },
        },
        ERR_HARD_SKIN => Fault::HardMarginBeyondSkin,
        ERR_HARD_CAPACITY => Fault::HardContactCapacity {
            contacts: index as usize,
        },
        ERR_HARD_COLORS => Fault::HardColors {
            max: HARD_MAX_COLORS,
        },
        ERR_MESH_OVERFLOW => Fault::MeshContactOverflow {
            particle,
            contacts: crate::physics::mesh::MESH_SLOTS + 1,
            capacity: crate::physics::mesh::MESH_SLOTS,
        },
        _ => return None,
    })
}

/// `Params::flags`: contact detection on.
pub const PARAM_CONTACT: u32 = 1;
/// `Params::flags`: the printed (not frame-indifferent) shear binder law.
pub const PARAM_PRINTED_SHEAR: u32 = 2;
/// `Params::flags`: granular Hertz–Mindlin contacts.
pub const PARAM_HERTZ: u32 = 8;
/// `Params::flags`: drag and Magnus forces.
pub const PARAM_DRAG: u32 = 16;
/// `Params::flags`: the first force evaluation (zero increments).
pub const PARAM_FIRST: u32 = 32;
/// `Params::flags`: the `[domain]` box is checked in the predict.
pub const PARAM_DOMAIN: u32 = 64;
/// `Params::flags`: particles leaving the domain are removed, not an error.
pub const PARAM_DOMAIN_REMOVE: u32 = 128;
/// `Params::flags`: near-field Mie forces.
pub const PARAM_NEAR: u32 = 256;
/// `Params::flags`: fused steps run the contact pass in `particle_forces_predict`.
pub const PARAM_MERGED: u32 = 512;
/// `Params::flags`: `particle_forces_predict` predicts x in place, not in `pos_next`.
pub const PARAM_POS_DIRECT: u32 = 1024;
/// `Params::flags`: fused steps compute their bond terms in `particle_forces_predict`.
pub const PARAM_INLINE_BONDS: u32 = 2048;
/// `Params::flags`: bonds are compact records.
pub const PARAM_COMPACT_BONDS: u32 = 4096;

/// `HardParams::flags`: warm start from the last step's impulses.
pub const HARD_WARM: u32 = 1;
/// `HardParams::flags`: `[contact] margin` is set (otherwise `h(s_i + s_j)`).
pub const HARD_FIXED_MARGIN: u32 = 2;
/// `HardParams::flags`: `on_nonconvergence = "error"`.
pub const HARD_ON_ERROR: u32 = 4;
/// `HardParams::flags`: the `jacobi` solver.
pub const HARD_JACOBI: u32 = 8;
/// `HardParams::flags`: the `colored` solver.
pub const HARD_COLORED: u32 = 16;
/// `HardParams::flags`: `friction_model = "coulomb"` (clump contacts; spheres get the
/// same impulse under both models).
pub const HARD_COULOMB: u32 = 32;
/// Colours the GPU's `colored` solver encodes per sweep (more: [`ERR_HARD_COLORS`]).
pub const HARD_MAX_COLORS: u32 = 32;
/// Jones–Plassmann rounds encoded per step before the sequential rest.
pub const HARD_ROUNDS: u32 = 24;
/// `solver.csv` rows kept on the device: one per step of a submission.
pub const HARD_ROWS: u32 = 64;
/// Words per row in `hard_words` (the `ROW_*` fields).
pub const HARD_ROW_WORDS: u32 = 8;
/// Row word: sweeps.
pub const ROW_SWEEPS: u32 = 0;
/// Row word: converged (0/1).
pub const ROW_CONVERGED: u32 = 1;
/// Row word: contacts.
pub const ROW_CONTACTS: u32 = 2;
/// Row word: sticking contacts.
pub const ROW_STICKING: u32 = 3;
/// Row word: sliding contacts.
pub const ROW_SLIDING: u32 = 4;
/// Row word: separating contacts.
pub const ROW_SEPARATING: u32 = 5;
/// Row word: the step.
pub const ROW_STEP: u32 = 6;
/// Solver state word: the step's contacts.
pub const S_TOTAL: u32 = 0;
/// Solver state word: sweeps so far.
pub const S_SWEEPS: u32 = 1;
/// Solver state word: converged (0/1).
pub const S_CONVERGED: u32 = 2;
/// Solver state word: colours encoded per sweep (written by the host).
pub const S_COLOR_BUDGET: u32 = 3;
/// Solver state words.
pub const S_LEN: u32 = 4;
/// Solver counter: the largest speed's f32 bits (rounded up).
pub const M_UMAX: u32 = 0;
/// Solver counter: a residual of the sweep is above the tolerance.
pub const M_FLAG: u32 = 1;
/// Solver counter: contacts not yet coloured in a round.
pub const M_LEFT: u32 = 2;
/// Solver counter: sticking contacts.
pub const M_STICKING: u32 = 3;
/// Solver counter: sliding contacts.
pub const M_SLIDING: u32 = 4;
/// Solver counter: separating contacts.
pub const M_SEPARATING: u32 = 5;
/// Solver counters.
pub const A_MISC_LEN: u32 = 6;
/// `hard_args` entry: the step's contacts.
pub const ARG_CONTACTS: u32 = 0;
/// `hard_args` entry: a colouring round (zero once every contact has a colour).
pub const ARG_ROUND: u32 = 1;
/// `hard_args` entry: a Jacobi sweep's contacts (zero once solved).
pub const ARG_SOLVE_CONTACTS: u32 = 2;
/// `hard_args` entry: a Jacobi sweep's bodies (zero once solved).
pub const ARG_SOLVE_BODIES: u32 = 3;
/// `hard_args` entries: colour `k` of a colored sweep at `ARG_COLOR + k`.
pub const ARG_COLOR: u32 = 4;
/// `hard_args` entries.
pub const ARG_COUNT: u32 = ARG_COLOR + HARD_MAX_COLORS;

/// `Params::integrator`: map (25), `variational`.
pub const INTEGRATOR_VARIATIONAL: u32 = 0;
/// `Params::integrator`: map (23), `variational-exact`.
pub const INTEGRATOR_VARIATIONAL_EXACT: u32 = 1;
/// `Params::integrator`: map (27), `symplectic-euler`.
pub const INTEGRATOR_SYMPLECTIC_EULER: u32 = 2;

/// `bond_out`: reals per bond result (F_i, M_i, M_j, then the three energies).
pub const BOND_OUT_STRIDE: u32 = 12;
/// `bond_out`: offset of the force on particle i.
pub const BOND_OUT_FORCE_I: u32 = 0;
/// `bond_out`: offset of the moment on particle i.
pub const BOND_OUT_MOMENT_I: u32 = 3;
/// `bond_out`: offset of the moment on particle j.
pub const BOND_OUT_MOMENT_J: u32 = 6;
/// `bond_out`: offset of the bending energy `U^m`.
pub const BOND_OUT_E_BEND: u32 = 9;
/// `bond_out`: offset of the axial energy `U^a`.
pub const BOND_OUT_E_AXIAL: u32 = 10;
/// `bond_out`: offset of the shear energy `U^s`.
pub const BOND_OUT_E_SHEAR: u32 = 11;

/// `bond_out` of scenes whose bonds can break (issue 47): after a chunk's `n` results
/// (`BOND_OUT_STRIDE · n` reals), reals per bond of its strength and break record.
pub const BOND_BREAK_STRIDE: u32 = 9;
/// Break record: the inverse strengths 1/T_c, 1/S_c, 1/M_bc, 1/M_tc (0: not set).
pub const BOND_BREAK_INV: u32 = 0;
/// Break record: the loads at the break (tension, shear, bend, twist).
pub const BOND_BREAK_LOADS: u32 = 4;
/// Break record: the strain energy at the break.
pub const BOND_BREAK_ENERGY: u32 = 8;

/// The clumps' state in `body` (section `O_CLUMP`): vec4 per body.
pub const CLUMP_RECORD: u32 = 10;
/// Clump record: the centre of mass x.
pub const CLUMP_X: u32 = 0;
/// Clump record: x's Kahan term (`f32`).
pub const CLUMP_CX: u32 = 1;
/// Clump record: the velocity v.
pub const CLUMP_V: u32 = 2;
/// Clump record: v's Kahan term.
pub const CLUMP_CV: u32 = 3;
/// Clump record: the attitude α.
pub const CLUMP_A: u32 = 4;
/// Clump record: α before the step (`clump_pose` turns the levers by the step).
pub const CLUMP_A_OLD: u32 = 5;
/// Clump record: the spin variable (π for a full tensor, Ω for a scalar one,
/// `integrators::rigid::spin_of`).
pub const CLUMP_SPIN: u32 = 6;
/// Clump record: the spin variable's Kahan term.
pub const CLUMP_CSPIN: u32 = 7;
/// Clump record: the force of the last evaluation (the field's included).
pub const CLUMP_F: u32 = 8;
/// Clump record: the moment about the centre of mass of the last evaluation.
pub const CLUMP_M: u32 = 9;

/// Reduction slots (`partials` rows and `result`): reals per row.
pub const Q_COUNT: u32 = 16;
/// Reduction slot: translational kinetic energy.
pub const Q_E_KIN: u32 = 0;
/// Reduction slot: rotational kinetic energy.
pub const Q_E_ROT: u32 = 1;
/// Reduction slots: linear momentum x, y, z.
pub const Q_MOMENTUM: u32 = 2;
/// Reduction slots: angular momentum about the origin x, y, z.
pub const Q_ANGULAR_MOMENTUM: u32 = 5;
/// Reduction slot: field (gravity) potential.
pub const Q_FIELD: u32 = 8;
/// Reduction slot: contact energy.
pub const Q_CONTACT: u32 = 9;
/// Reduction slot: wall energy.
pub const Q_WALL: u32 = 10;
/// Reduction slot: bending energy.
pub const Q_BEND: u32 = 11;
/// Reduction slot: axial energy.
pub const Q_AXIAL: u32 = 12;
/// Reduction slot: shear energy.
pub const Q_SHEAR: u32 = 13;
/// Reduction slot: near-field energy.
pub const Q_NEAR_FIELD: u32 = 14;

const _: () =
    assert!(BOND_OUT_E_SHEAR < BOND_OUT_STRIDE && BOND_OUT_MOMENT_J + 3 <= BOND_OUT_E_BEND);
const _: () = assert!(CLUMP_M < CLUMP_RECORD);
const _: () = assert!(Q_NEAR_FIELD < Q_COUNT && Q_ANGULAR_MOMENTUM + 3 <= Q_FIELD);

// Every error code has its first-index word, after the other status words (checked
// when the crate compiles).
const _: () = assert!(STATUS_FIRST_INDEX + ERR_COUNT <= STATUS_WORDS);
const _: () = assert!(STATUS_AHEAD < STATUS_FIRST_INDEX);
const _: () = assert!(STATUS_LOADS < STATUS_FIRST_INDEX);
const _: () = assert!(STATUS_BREAKS < STATUS_FIRST_INDEX);
const _: () = assert!(
    STATUS_BROKE_STEP >= STATUS_FIRST_INDEX + ERR_COUNT && STATUS_BROKE_STEP < STATUS_WORDS
);
const _: () =
    assert!(BOND_BREAK_ENERGY < BOND_BREAK_STRIDE && BOND_BREAK_LOADS + 4 <= BOND_BREAK_ENERGY);

/// An unused contact-history slot's partner id (ends a row).
pub const NO_PARTNER: u32 = crate::physics::granular::NO_PARTNER;

/// Every constant of the contract: its WGSL name and value.
pub const CONSTANTS: [(&str, u32); 131] = [
    ("STATUS_STEP", STATUS_STEP),
    ("STATUS_ERROR", STATUS_ERROR),
    ("STATUS_REBUILD", STATUS_REBUILD),
    ("STATUS_BUILDS", STATUS_BUILDS),
    ("STATUS_MAX_NEIGHBORS", STATUS_MAX_NEIGHBORS),
    ("STATUS_AHEAD", STATUS_AHEAD),
    ("STATUS_LOADS", STATUS_LOADS),
    ("STATUS_BREAKS", STATUS_BREAKS),
    ("STATUS_BROKE_STEP", STATUS_BROKE_STEP),
    ("STATUS_FIRST_INDEX", STATUS_FIRST_INDEX),
    ("STATUS_WORDS", STATUS_WORDS),
    ("STATUS_DETAIL", STATUS_DETAIL),
    ("POSE_SLOTS", POSE_SLOTS),
    ("POSE_VEC4", POSE_VEC4),
    ("MESH_POSE_VEC4", MESH_POSE_VEC4),
    ("ERR_ROTATION_DOMAIN", ERR_ROTATION_DOMAIN),
    ("ERR_HALF_TURN", ERR_HALF_TURN),
    ("ERR_BOND_HALF_TURN", ERR_BOND_HALF_TURN),
    ("ERR_BUCKET_OVERFLOW", ERR_BUCKET_OVERFLOW),
    ("ERR_NEIGHBOR_OVERFLOW", ERR_NEIGHBOR_OVERFLOW),
    ("ERR_NON_FINITE", ERR_NON_FINITE),
    ("ERR_CONTACT_OVERFLOW", ERR_CONTACT_OVERFLOW),
    ("ERR_LEFT_DOMAIN", ERR_LEFT_DOMAIN),
    ("ERR_CLUMP_ROTATION_DOMAIN", ERR_CLUMP_ROTATION_DOMAIN),
    ("ERR_CLUMP_HALF_TURN", ERR_CLUMP_HALF_TURN),
    ("ERR_CLUMP_NO_CONVERGENCE", ERR_CLUMP_NO_CONVERGENCE),
    ("ERR_CLUMP_LEFT_DOMAIN", ERR_CLUMP_LEFT_DOMAIN),
    ("ERR_CLUMP_NON_FINITE", ERR_CLUMP_NON_FINITE),
    ("ERR_MESH_OVERFLOW", ERR_MESH_OVERFLOW),
    ("ERR_OVERLAP", ERR_OVERLAP),
    ("ERR_COUNT", ERR_COUNT),
    ("ERROR_CODES", ERROR_CODES),
    ("ERROR_PHASE_SHIFT", ERROR_PHASE_SHIFT),
    ("ERROR_SEALED", ERROR_SEALED),
    ("FLAG_HELD", FLAG_HELD),
    ("FLAG_PENDULUM", FLAG_PENDULUM),
    ("FLAG_NO_ROTATION", FLAG_NO_ROTATION),
    ("FLAG_REMOVED", FLAG_REMOVED),
    ("FLAG_MEMBER", FLAG_MEMBER),
    ("FLAG_DORMANT", FLAG_DORMANT),
    ("PARAM_CONTACT", PARAM_CONTACT),
    ("PARAM_PRINTED_SHEAR", PARAM_PRINTED_SHEAR),
    ("PARAM_HERTZ", PARAM_HERTZ),
    ("PARAM_DRAG", PARAM_DRAG),
    ("PARAM_FIRST", PARAM_FIRST),
    ("PARAM_DOMAIN", PARAM_DOMAIN),
    ("PARAM_DOMAIN_REMOVE", PARAM_DOMAIN_REMOVE),
    ("PARAM_NEAR", PARAM_NEAR),
    ("PARAM_MERGED", PARAM_MERGED),
    ("PARAM_POS_DIRECT", PARAM_POS_DIRECT),
    ("PARAM_INLINE_BONDS", PARAM_INLINE_BONDS),
    ("PARAM_COMPACT_BONDS", PARAM_COMPACT_BONDS),
    ("INTEGRATOR_VARIATIONAL", INTEGRATOR_VARIATIONAL),
    ("INTEGRATOR_VARIATIONAL_EXACT", INTEGRATOR_VARIATIONAL_EXACT),
    ("INTEGRATOR_SYMPLECTIC_EULER", INTEGRATOR_SYMPLECTIC_EULER),
    ("NO_PARTNER", NO_PARTNER),
    ("BOND_OUT_STRIDE", BOND_OUT_STRIDE),
    ("BOND_OUT_FORCE_I", BOND_OUT_FORCE_I),
    ("BOND_OUT_MOMENT_I", BOND_OUT_MOMENT_I),
    ("BOND_OUT_MOMENT_J", BOND_OUT_MOMENT_J),
    ("BOND_OUT_E_BEND", BOND_OUT_E_BEND),
    ("BOND_OUT_E_AXIAL", BOND_OUT_E_AXIAL),
    ("BOND_OUT_E_SHEAR", BOND_OUT_E_SHEAR),
    ("BOND_BREAK_STRIDE", BOND_BREAK_STRIDE),
    ("BOND_BREAK_INV", BOND_BREAK_INV),
    ("BOND_BREAK_LOADS", BOND_BREAK_LOADS),
    ("BOND_BREAK_ENERGY", BOND_BREAK_ENERGY),
    ("Q_COUNT", Q_COUNT),
    ("Q_E_KIN", Q_E_KIN),
    ("Q_E_ROT", Q_E_ROT),
    ("Q_MOMENTUM", Q_MOMENTUM),
    ("Q_ANGULAR_MOMENTUM", Q_ANGULAR_MOMENTUM),
    ("Q_FIELD", Q_FIELD),
    ("Q_CONTACT", Q_CONTACT),
    ("Q_WALL", Q_WALL),
    ("Q_BEND", Q_BEND),
    ("Q_AXIAL", Q_AXIAL),
    ("Q_SHEAR", Q_SHEAR),
    ("CLUMP_RECORD", CLUMP_RECORD),
    ("CLUMP_X", CLUMP_X),
    ("CLUMP_CX", CLUMP_CX),
    ("CLUMP_V", CLUMP_V),
    ("CLUMP_CV", CLUMP_CV),
    ("CLUMP_A", CLUMP_A),
    ("CLUMP_A_OLD", CLUMP_A_OLD),
    ("CLUMP_SPIN", CLUMP_SPIN),
    ("CLUMP_CSPIN", CLUMP_CSPIN),
    ("CLUMP_F", CLUMP_F),
    ("CLUMP_M", CLUMP_M),
    ("ERR_HARD_SKIN", ERR_HARD_SKIN),
    ("ERR_HARD_CAPACITY", ERR_HARD_CAPACITY),
    ("ERR_HARD_COLORS", ERR_HARD_COLORS),
    ("ERR_HARD_NO_CONVERGENCE", ERR_HARD_NO_CONVERGENCE),
    ("ERR_HARD_SWEEP_BUDGET", ERR_HARD_SWEEP_BUDGET),
    ("ERR_HARD_COLOR_BUDGET", ERR_HARD_COLOR_BUDGET),
    ("HARD_WARM", HARD_WARM),
    ("HARD_FIXED_MARGIN", HARD_FIXED_MARGIN),
    ("HARD_ON_ERROR", HARD_ON_ERROR),
    ("HARD_JACOBI", HARD_JACOBI),
    ("HARD_COLORED", HARD_COLORED),
    ("HARD_COULOMB", HARD_COULOMB),
    ("HARD_MAX_COLORS", HARD_MAX_COLORS),
    ("HARD_ROUNDS", HARD_ROUNDS),
    ("HARD_ROWS", HARD_ROWS),
    ("HARD_ROW_WORDS", HARD_ROW_WORDS),
    ("ROW_SWEEPS", ROW_SWEEPS),
    ("ROW_CONVERGED", ROW_CONVERGED),
    ("ROW_CONTACTS", ROW_CONTACTS),
    ("ROW_STICKING", ROW_STICKING),
    ("ROW_SLIDING", ROW_SLIDING),
    ("ROW_SEPARATING", ROW_SEPARATING),
    ("ROW_STEP", ROW_STEP),
    ("S_TOTAL", S_TOTAL),
    ("S_SWEEPS", S_SWEEPS),
    ("S_CONVERGED", S_CONVERGED),
    ("S_COLOR_BUDGET", S_COLOR_BUDGET),
    ("S_LEN", S_LEN),
    ("M_UMAX", M_UMAX),
    ("M_FLAG", M_FLAG),
    ("M_LEFT", M_LEFT),
    ("M_STICKING", M_STICKING),
    ("M_SLIDING", M_SLIDING),
    ("M_SEPARATING", M_SEPARATING),
    ("A_MISC_LEN", A_MISC_LEN),
    ("ARG_CONTACTS", ARG_CONTACTS),
    ("ARG_ROUND", ARG_ROUND),
    ("ARG_SOLVE_CONTACTS", ARG_SOLVE_CONTACTS),
    ("ARG_SOLVE_BODIES", ARG_SOLVE_BODIES),
    ("ARG_COLOR", ARG_COLOR),
    ("ARG_COUNT", ARG_COUNT),
    ("Q_NEAR_FIELD", Q_NEAR_FIELD),
];

/// The contract as WGSL `const` declarations, for the generated header.
pub fn wgsl() -> String {
    CONSTANTS
        .iter()
        .map(|(name, v)| format!("const {name}: u32 = {v}u;\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are distinct, and so are the values within each family that is a set of
    /// bits (flags) or of indices (status words, error codes).
    #[test]
    fn the_contract_is_consistent() {
        let mut names: Vec<&str> = CONSTANTS.iter().map(|c| c.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CONSTANTS.len());
        for family in [
            "STATUS_",
            "ERR_",
            "FLAG_",
            "PARAM_",
            "INTEGRATOR_",
            "Q_",
            "CLUMP_",
            "HARD_",
            "ROW_",
            "S_",
            "M_",
        ] {
            let mut v: Vec<u32> = CONSTANTS
                .iter()
                .filter(|c| c.0.starts_with(family) && !c.0.ends_with("_WORDS"))
                .filter(|c| !c.0.ends_with("_COUNT") && c.0 != "STATUS_FIRST_INDEX")
                .filter(|c| c.0 != "CLUMP_RECORD")
                .filter(|c| !matches!(c.0, "HARD_MAX_COLORS" | "HARD_ROUNDS" | "HARD_ROWS"))
                .filter(|c| !matches!(c.0, "HARD_ROW_WORDS" | "S_LEN"))
                .filter(|c| !matches!(c.0, "Q_MOMENTUM" | "Q_ANGULAR_MOMENTUM"))
                .map(|c| c.1)
                .collect();
            let n = v.len();
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), n, "{family} values repeat");
        }
        assert!(wgsl().contains("const PARAM_HERTZ: u32 = 8u;\n"));
    }

    /// A detail word names a partner below n, then the walls, then the meshes; past
    /// them, nothing.
    #[test]
    fn overlap_details_decode() {
        let decode = |w| overlap_partner(w, 10, 2, 3);
        assert_eq!(decode(0), Some(Contacted::Particle(0)));
        assert_eq!(decode(9), Some(Contacted::Particle(9)));
        assert_eq!(decode(10), Some(Contacted::Wall(0)));
        assert_eq!(decode(11), Some(Contacted::Wall(1)));
        assert_eq!(decode(12), Some(Contacted::Mesh(0)));
        assert_eq!(decode(14), Some(Contacted::Mesh(2)));
        assert_eq!(decode(15), None);
        assert_eq!(decode(u32::MAX), None);
        assert_eq!(fault(ERR_OVERLAP, 0, |_| None, 16, 0), None);
    }
}
