//! The interface every backend (CPU reference, GPU) implements, and backend selection.

use glam::DVec3;

use crate::diagnostics::Diagnostics;
use crate::error::Result;
use crate::model::Particles;

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The GPU if there is a hardware adapter (or one is named with `--adapter` or
    /// `$VARIDEM_ADAPTER`), the CPU otherwise; falls back to the CPU with a warning if
    /// the GPU backend cannot be set up.
    #[default]
    Auto,
    /// The `f64` CPU reference (multi-threaded, deterministic).
    Cpu,
    /// The wgpu backend (`f32` or `f64` kernels); falls back to the CPU with a warning
    /// if there is no usable adapter.
    Gpu,
}

impl BackendKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One output frame: the state at a step and the per-particle and per-bond quantities
/// the VTK output shows (see [`crate::io::vtk`]). Vectors are indexed by particle id,
/// `bond_energy` by bond id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Step index of the state.
    pub step: u64,
    /// Simulated time of the state (s).
    pub time: f64,
    /// The particle state (positions, velocities, rotations, angular velocities, radii).
    pub particles: Particles,
    /// Total force on each particle (N): bonds, contacts, walls and field.
    pub force: Vec<DVec3>,
    /// Total spatial moment `RM` on each particle (N m).
    pub moment: Vec<DVec3>,
    /// Number of touching contacts of each particle, walls included: partners `j` with
    /// `|x_i − x_j| < r_i + r_j` and walls closer than `r_i`. Zero for every particle
    /// when the scene has no `[contact]` (nothing touches then).
    pub contact_count: Vec<u32>,
    /// Strain energy `U^m + U^a + U^s` of each bond (J).
    pub bond_energy: Vec<f64>,
}

/// A simulation advancing on some device.
pub trait Backend {
    /// Short name for logs and `run.toml`.
    fn name(&self) -> String;
    /// Steps taken so far.
    fn step_count(&self) -> u64;
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// Advances `n` steps. On error the state is that of the last completed step.
    fn advance(&mut self, n: u64) -> Result<()>;
    /// Energies and momenta of the current state.
    fn diagnostics(&mut self) -> Result<Diagnostics>;
    /// A copy of the current particle state.
    fn particles(&mut self) -> Result<Particles>;
    /// The current state with forces, moments, contact counts and bond energies, for
    /// the VTK output.
    fn frame(&mut self) -> Result<Frame>;
}
