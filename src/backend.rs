//! The interface every backend (CPU reference, GPU) implements, and backend selection.

use crate::diagnostics::Diagnostics;
use crate::error::Result;
use crate::model::Particles;

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The `f64` CPU reference (multi-threaded, deterministic).
    #[default]
    Cpu,
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
