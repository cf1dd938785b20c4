//! The interface every backend (CPU reference, GPU) implements, and backend selection.

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
}
