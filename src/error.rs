//! Errors, each naming what went wrong and where (field, particle, bond, step).

use std::path::PathBuf;

/// Every failure varidem reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scene file or scene value is invalid.
    #[error("scene: {0}")]
    Scene(String),
    /// A bond cannot be formed.
    #[error("scene: {0}")]
    Bond(#[from] crate::model::BondError),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A step failed on a physical fault, named alike by both backends (tests match the
    /// [`Fault`] variant, not the message).
    #[error("step {step}, {fault}")]
    Fault {
        /// Step being computed.
        step: u64,
        /// What failed, and where.
        fault: Fault,
    },
    /// The implicit integrator's fixed-point iteration did not converge.
    #[error("step {step}: campello-trapezoidal did not converge in {iterations} fixed-point iterations (normalised change {error:.3e} > tolerance {tolerance:e}); lower dt or raise [simulation] tolerance")]
    NotConverged {
        /// Step.
        step: u64,
        /// Iterations taken.
        iterations: u32,
        /// Largest normalised change of the last iteration (eqs. 48-49).
        error: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The total energy grew beyond the blow-up bound.
    #[error("step {step}: blow-up: the total energy grew from {initial:.6e} J to {energy:.6e} J, more than the initial energy scale {scale:.3e} J; particle {particle} has the largest kinetic energy (time step too large or stiffness too high?)")]
    BlowUp {
        /// Output step where it was detected.
        step: u64,
        /// Particle with the largest kinetic energy.
        particle: usize,
        /// Total energy now (J).
        energy: f64,
        /// Total energy at the start (J).
        initial: f64,
        /// Initial energy scale (J).
        scale: f64,
    },
    /// A run failed; the last good state was saved as a checkpoint.
    #[error("{error}; the last good state (step {step}) is saved in {} (continue with: varidem resume {} --out DIR)", checkpoint.display(), checkpoint.display())]
    RunFailed {
        /// What went wrong.
        error: Box<Error>,
        /// Step of the saved state.
        step: u64,
        /// The checkpoint written.
        checkpoint: std::path::PathBuf,
    },
    /// The requested backend is not available or failed.
    #[error("backend: {0}")]
    Backend(String),
    /// No usable GPU adapter.
    #[error("gpu: {0}")]
    NoAdapter(String),
    /// The problem does not fit the device.
    #[error("gpu: the problem does not fit the device: {0}")]
    DeviceTooSmall(String),
    /// The device's limits are below what a kernel needs.
    #[error("gpu: {what} needs {need} {limit}, but the device allows {have} (the adapter's limit, or the one requested by VARIDEM_GPU_LIMITS; varidem info shows both)")]
    DeviceLimit {
        /// What needs it (a kernel, a buffer).
        what: String,
        /// The limit, in words.
        limit: &'static str,
        /// What is needed.
        need: u64,
        /// What the device allows.
        have: u64,
    },
    /// The GPU reported an error: validation, out of memory, an internal error or a
    /// lost device. Nothing panics: the run stops with this error.
    #[error("gpu: {during}: {message}")]
    Gpu {
        /// What varidem was doing (creating a named buffer, pipeline or bind group,
        /// submitting steps, reading back).
        during: String,
        /// wgpu's report.
        message: String,
    },
    /// The problem does not fit the host's memory.
    #[error("host memory: {0}")]
    HostTooSmall(String),
    /// A checkpoint file cannot be written, read or trusted (bad header, unknown
    /// format version, checksum mismatch, corrupt contents).
    #[error("checkpoint {}: {message}", path.display())]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A state snapshot does not fit the model or backend it is restored into.
    #[error("snapshot: {0}")]
    Snapshot(String),
    /// A picture cannot be rendered (`varidem render`).
    #[error("render: {0}")]
    Render(String),
}

/// A physical fault of one step, raised by either backend: the CPU names it where it
/// happens; a GPU kernel raises an error code (`gpu::contract::ERR_*`) with the first
/// particle or bond index, which the backend maps to the same variant. What only the
/// CPU can know (the offending value, the contact count) is `None` from the GPU.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Fault {
    /// Map (23) left its domain: `h²‖Ω + h RM/(2J)‖² ≥ 1`.
    #[error("particle {particle}: the time step is too large for the exact rotation update of map (23): h²‖Ω + h·RM/(2J)‖²{} ≥ 1; reduce dt", value.map(|v| format!(" = {v:.6}")).unwrap_or_default())]
    RotationStepTooLarge {
        /// Particle.
        particle: usize,
        /// `h²‖w‖²`, where known (CPU).
        value: Option<f64>,
    },
    /// The attitude update `α ⊕ Δα` met the half-turn singularity of eq. (5).
    #[error("particle {particle}: rotation composition α⊕Δα is singular (α·Δα ≈ 4); reduce dt")]
    HalfTurn {
        /// Particle.
        particle: usize,
    },
    /// A clump's step failed (issue 24): named by its index among the clumps (the
    /// `[[clump]]`s, then clouds of clumps, in scene order) and its `final.csv` row.
    #[error("clump {clump} (final.csv row {row}): {fault}")]
    Clump {
        /// Index among the clumps.
        clump: usize,
        /// Its `final.csv` row (the free particles come first).
        row: usize,
        /// What went wrong.
        fault: ClumpFault,
    },
    /// A bond's relative rotation reached a half turn (bending strain undefined).
    #[error("bond {bond} ({i}, {j}): the relative rotation of the bonded particles reached a half turn; the bending strain is undefined")]
    BondHalfTurn {
        /// Bond index.
        bond: usize,
        /// First particle.
        i: u32,
        /// Second particle.
        j: u32,
    },
    /// More particles hash to one grid bucket than it holds (GPU grid).
    #[error("particle {particle}: grid bucket overflow (too many particles hash to one cell; lower the packing density or raise [simulation] bucket_capacity)")]
    BucketOverflow {
        /// Particle.
        particle: usize,
    },
    /// More neighbours within `r_i + r_j + skin` than a list holds (GPU lists).
    #[error("particle {particle}: neighbour-list overflow (more neighbours within r_i + r_j + skin than max_neighbors; raise [simulation] max_neighbors or lower the skin)")]
    NeighborOverflow {
        /// Particle.
        particle: usize,
    },
    /// A state value became NaN or infinite.
    #[error("particle {particle}: {} is not finite{}; the simulation blew up (time step too large or stiffness too high?)", field.unwrap_or("a state value"), value.as_ref().map(|v| format!(" ({v})")).unwrap_or_default())]
    NonFinite {
        /// Particle.
        particle: usize,
        /// Which quantity, where known (CPU).
        field: Option<&'static str>,
        /// The value shown, where known (CPU).
        value: Option<String>,
    },
    /// A particle touches more particles than its contact-history slots hold.
    #[error("particle {particle}: contact-history overflow: {} touching contacts, but [contact] max_contacts = {capacity}; raise max_contacts (the packing may also be overlapping too much: time step too large?)", contacts.map(|c| c.to_string()).unwrap_or_else(|| "more".into()))]
    ContactOverflow {
        /// Particle.
        particle: usize,
        /// Touching contacts found (at least), where known (CPU).
        contacts: Option<usize>,
        /// Slots per particle.
        capacity: usize,
    },
    /// A particle touches more mesh features at once than its mesh slots hold.
    #[error("particle {particle}: mesh-contact overflow: it touches {contacts} mesh faces, edges or corners at once, but a particle holds {capacity}; the mesh may be much finer than the particles, or the particle pressed deep into it (time step too large?)")]
    MeshContactOverflow {
        /// Particle.
        particle: usize,
        /// Mesh contacts found.
        contacts: usize,
        /// Slots per particle.
        capacity: usize,
    },
    /// The hard-contact solver stopped at `max_sweeps` above its tolerance, with
    /// `[contact] on_nonconvergence = "error"`.
    #[error("the hard-contact solver did not converge: velocity residual {residual:.3e} m/s > tolerance {tolerance:.3e} m/s after {sweeps} sweeps over {contacts} contacts (raise [contact] max_sweeps or tolerance, or set on_nonconvergence = \"warn\")")]
    SolverNoConvergence {
        /// Sweeps taken.
        sweeps: u32,
        /// The last sweep's velocity residual (m/s).
        residual: f64,
        /// `[contact] tolerance` (m/s).
        tolerance: f64,
        /// Contacts in the step's problem.
        contacts: usize,
    },
    /// The speculative margin of hard contacts (`2h` times the largest speed, or
    /// `[contact] margin`) exceeds the neighbour skin, which the GPU's list cannot grow.
    #[error("the speculative margin of hard contacts exceeds the neighbour skin: a body moves faster than skin/(2 dt) (the GPU keeps the scene's skin; raise [contact] skin, or set [contact] margin below it)")]
    HardMarginBeyondSkin,
    /// The speculative margin of hard contacts outran what the GPU's mesh cell grid
    /// reaches beyond the largest sphere (built once, for the larger of the scene's
    /// skin and twice the largest radius).
    #[error("the speculative margin of hard contacts ({margin:.3e} m) needs a skin of {skin:.3e} m, beyond the {reach:.3e} m the GPU's mesh grid reaches past the largest sphere (the larger of [contact] skin and twice the largest radius): a body moves more than half a radius per step; lower dt, or raise [contact] skin")]
    HardMarginBeyondMeshGrid {
        /// The step's margin (m).
        margin: f64,
        /// The skin the margin needs, twice it (m).
        skin: f64,
        /// How far the mesh grid reaches beyond the largest radius (m).
        reach: f64,
    },
    /// More hard contacts than the GPU's contact buffers hold.
    #[error("{contacts} hard contacts: more than the GPU's contact buffers hold (N × (max_contacts/2 + 1)); raise [contact] max_contacts")]
    HardContactCapacity {
        /// Contacts of the step.
        contacts: usize,
    },
    /// The colored solver's contact graph needs more colours than the GPU encodes.
    #[error("the contact graph needs more than {max} colours for solver = \"colored\" on the GPU; use solver = \"jacobi\"")]
    HardColors {
        /// Colours encoded per sweep.
        max: u32,
    },
    /// A Hertz contact overlaps by more than `[contact] max_overlap` of the smaller
    /// radius (of the particle's, against a wall or mesh): the law of eq. (19) assumes
    /// `δ ≪ r` and means nothing there; the time step is almost always too large. Of
    /// the contacts beyond the limit, the one named is that of the lowest particle id
    /// (a pair counts for its lower id), with its lowest-id partner, else its first
    /// wall, else its lowest-index mesh: both backends name the same one.
    #[error("{}: the Hertz contact means nothing that deep; {}", overlap_what(*particle, other, *fraction, *limit), dt_advice(*dt, *recommended_dt))]
    Overlap {
        /// The particle (a pair's lower id).
        particle: usize,
        /// What it overlaps.
        other: Contacted,
        /// The overlap as a fraction of the smaller radius, where known (CPU).
        fraction: Option<f64>,
        /// `[contact] max_overlap`.
        limit: f64,
        /// The run's time step (s).
        dt: f64,
        /// `varidem check`'s recommended largest time step, `t_col/20` of Campello
        /// eq. (50) for the scene at `t = 0` (`physics::granular::time_step_advice`),
        /// where it has one.
        recommended_dt: Option<f64>,
    },
    /// A particle left the `[domain]` box (with `on_exit = "error"`).
    #[error("particle {particle}: left the domain{} ([domain] on_exit = \"error\"; use on_exit = \"remove\" to take leaving particles out)", position.map(|p| format!(" at {p:?}")).unwrap_or_default())]
    LeftDomain {
        /// Particle.
        particle: usize,
        /// Where it would have been, where known (CPU).
        position: Option<[f64; 3]>,
    },
}

/// What a particle overlaps too deeply ([`Fault::Overlap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contacted {
    /// Another particle (a higher id).
    Particle(usize),
    /// Plane wall `wall[k]`, in scene order.
    Wall(usize),
    /// Mesh wall `mesh[k]`, in scene order.
    Mesh(usize),
}

/// The first part of [`Fault::Overlap`]'s message: who overlaps what, by how much.
fn overlap_what(particle: usize, other: &Contacted, fraction: Option<f64>, limit: f64) -> String {
    let by = match fraction {
        Some(f) => format!("by {:.0} %", 100.0 * f),
        None => format!("by more than {} %", percent(limit)),
    };
    match other {
        Contacted::Particle(j) => format!(
            "particles {particle} and {j} overlap {by} of the smaller radius ([contact] max_overlap = {limit})"
        ),
        Contacted::Wall(k) => format!(
            "particle {particle} overlaps wall[{k}] {by} of its radius ([contact] max_overlap = {limit})"
        ),
        Contacted::Mesh(k) => format!(
            "particle {particle} overlaps mesh[{k}] {by} of its radius ([contact] max_overlap = {limit})"
        ),
    }
}

/// `x` in per cent, to at most two decimals and without trailing zeros (`0.3` is
/// "30", not "30.000000000000004").
fn percent(x: f64) -> String {
    let s = format!("{:.2}", 100.0 * x);
    match s.trim_end_matches('0').trim_end_matches('.') {
        "" => "0".to_owned(),
        t => t.to_owned(),
    }
}

/// The second part of [`Fault::Overlap`]'s message: the likely cause, with `varidem
/// check`'s figure as it prints it.
fn dt_advice(dt: f64, recommended: Option<f64>) -> String {
    match recommended {
        Some(r) if dt > r => format!(
            "the time step is likely too large: varidem check recommends dt <= {r:.4e} s (the scene's is {dt:e} s)"
        ),
        Some(r) => format!(
            "dt = {dt:e} s is within varidem check's dt <= {r:.4e} s, so the impacts are likely faster than it estimates or the material too soft for them (lower dt, raise young, or raise [contact] max_overlap)"
        ),
        None => format!(
            "the time step ({dt:e} s) is likely too large (varidem check has no estimate: nothing moves at t = 0)"
        ),
    }
}

/// What went wrong in a clump's step ([`Fault::Clump`]). What only the CPU can know is
/// `None` from the GPU.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClumpFault {
    /// Map (23) left its domain: `h²‖Ω‖² ≥ 1` for the half-kicked Ω.
    #[error("the time step is too large for the exact rotation update of map (23): h²‖Ω‖²{} ≥ 1; reduce dt", value.map(|v| format!(" = {v:.6}")).unwrap_or_default())]
    RotationStepTooLarge {
        /// `h²‖Ω‖²`, where known (CPU).
        value: Option<f64>,
    },
    /// The attitude update `α ⊕ Δα` met the half-turn singularity of eq. (5).
    #[error("rotation composition α⊕Δα is singular (α·Δα ≈ 4); reduce dt")]
    HalfTurn,
    /// Newton's iteration for the rotation increment of map (23) did not converge
    /// (`integrators::rigid::exact_increment`).
    #[error("the rotation increment of map (23) did not converge (relative residual {}); reduce dt", residual.map(|r| format!("{r:.3e}")).unwrap_or_else(|| "unknown".into()))]
    NoConvergence {
        /// The relative residual Newton stopped at, where known (CPU).
        residual: Option<f64>,
    },
    /// Its centre of mass left the `[domain]` box.
    #[error("left the domain{} ([domain] on_exit = \"error\")", position.map(|p| format!(" at {p:?}")).unwrap_or_default())]
    LeftDomain {
        /// Where it would have been, where known (CPU).
        position: Option<[f64; 3]>,
    },
    /// Its state became NaN or infinite.
    #[error("its state is not finite; the simulation blew up (time step too large or stiffness too high?)")]
    NonFinite,
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A step's physical fault.
    pub fn fault(step: u64, fault: Fault) -> Self {
        Error::Fault { step, fault }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overlap fault's line: the pair or wall, the overlap (or the limit it is
    /// beyond, from the GPU), and the cause by the time step against `varidem check`'s.
    #[test]
    fn overlap_faults_read_well() {
        let fault = |other, fraction, dt, recommended_dt| {
            Error::fault(
                7,
                Fault::Overlap {
                    particle: 3,
                    other,
                    fraction,
                    limit: 0.3,
                    dt,
                    recommended_dt,
                },
            )
            .to_string()
        };
        let m = fault(Contacted::Particle(9), Some(0.634), 2.5e-4, Some(2.3e-6));
        assert_eq!(
            m,
            "step 7, particles 3 and 9 overlap by 63 % of the smaller radius ([contact] max_overlap = 0.3): the Hertz contact means nothing that deep; the time step is likely too large: varidem check recommends dt <= 2.3000e-6 s (the scene's is 2.5e-4 s)"
        );
        let m = fault(Contacted::Mesh(1), None, 1e-6, Some(2.3e-6));
        assert!(
            m.starts_with("step 7, particle 3 overlaps mesh[1] by more than 30 % of its radius")
                && m.contains("within varidem check's dt <= 2.3000e-6 s")
                && m.contains("too soft"),
            "{m}"
        );
        let m = fault(Contacted::Wall(0), None, 1e-3, None);
        assert!(
            m.contains("wall[0]") && m.contains("(1e-3 s) is likely too large"),
            "{m}"
        );
        assert_eq!(percent(0.125), "12.5");
        assert_eq!(percent(1e-9), "0");
    }
}
