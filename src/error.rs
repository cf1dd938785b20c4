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
    /// Map (23) left its domain: `h²‖Ω + h RM/(2J)‖² ≥ 1`.
    #[error("step {step}, particle {particle}: the time step is too large for the exact rotation update of map (23): h²‖Ω + h·RM/(2J)‖² = {value:.6} ≥ 1; reduce dt")]
    RotationStepTooLarge {
        /// Step being computed.
        step: u64,
        /// Particle.
        particle: usize,
        /// `h²‖w‖²`.
        value: f64,
    },
    /// The attitude update `α ⊕ Δα` met the half-turn singularity of eq. (5).
    #[error("step {step}, particle {particle}: rotation composition α⊕Δα is singular (α·Δα ≈ 4); reduce dt")]
    HalfTurn {
        /// Step being computed.
        step: u64,
        /// Particle.
        particle: usize,
    },
    /// A bond's relative rotation reached a half turn (bending strain undefined).
    #[error("step {step}, bond {bond} ({i}, {j}): the relative rotation of the bonded particles reached a half turn; the bending strain is undefined")]
    BondHalfTurn {
        /// Step.
        step: u64,
        /// Bond index.
        bond: usize,
        /// First particle.
        i: u32,
        /// Second particle.
        j: u32,
    },
    /// A state value became NaN or infinite.
    #[error("step {step}, particle {particle}: {field} is not finite ({value}); the simulation blew up (time step too large or stiffness too high?)")]
    NonFinite {
        /// Step.
        step: u64,
        /// Particle.
        particle: usize,
        /// Which quantity.
        field: &'static str,
        /// The value shown.
        value: String,
    },
    /// A particle touches more particles than its contact-history slots hold.
    #[error("step {step}, particle {particle}: {contacts} touching contacts, but [contact] max_contacts = {capacity}; raise max_contacts (the packing may also be overlapping too much: time step too large?)")]
    ContactOverflow {
        /// Step.
        step: u64,
        /// Particle.
        particle: usize,
        /// Touching contacts found (at least).
        contacts: usize,
        /// Slots per particle.
        capacity: usize,
    },
    /// A particle left the `[domain]` box (with `on_exit = "error"`).
    #[error("step {step}, particle {particle}: left the domain at {position:?} ([domain] on_exit = \"error\"; use on_exit = \"remove\" to take leaving particles out)")]
    LeftDomain {
        /// Step.
        step: u64,
        /// Particle.
        particle: usize,
        /// Where it would have been.
        position: [f64; 3],
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
    /// A GPU kernel reported an error (overflow, non-finite value, ...).
    #[error("step {step}: {message}")]
    Kernel {
        /// Step at which it occurred.
        step: u64,
        /// What happened, naming the particle or bond.
        message: String,
    },
    /// A picture cannot be rendered (`varidem render`).
    #[error("render: {0}")]
    Render(String),
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
