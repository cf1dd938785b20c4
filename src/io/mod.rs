//! Input and output: TOML scene files ([`scene`]), the CSV outputs ([`csv`]) and the
//! VTK outputs for ParaView ([`vtk_writer`]; [`vtk_reader`] reads them back).
//!
//! * a scene file is parsed and validated into a [`Scene`](crate::model::Scene) by
//!   [`parse_scene`] / [`load_scene`]; every invalid value is reported with its key, its
//!   value and the allowed range. [`scene_to_toml`] writes a resolved scene back as an
//!   explicit list of particles, bonds and walls that parses to the same scene.
//! * `energy.csv` ([`EnergyCsv`]) holds one [`Diagnostics`](crate::diagnostics::Diagnostics)
//!   row per output step; `final.csv` ([`write_final_csv`], [`read_final_csv`]) the final
//!   state of every particle, in a format that round-trips every `f64` bit for bit;
//!   `solver.csv` ([`SolverCsv`]) the hard-contact solver's sweeps, residual and contact
//!   counts of every step (hard-contact scenes only); `walls.csv` ([`WallsCsv`]) the
//!   force and moment on every wall at each output step (scenes with walls).
//! * the ParaView output ([`vtk_writer`]): one VTK XML PolyData file per output step in `vtk/`
//!   and the `particles.pvd` collection ([`VtkSeries`]); [`vtk_reader`] reads the frames back.
//! * [`plot`]: PNG plots of a run's `energy.csv` (`varidem plot`).

/// File name of the energy and momentum time series in the output directory.
pub const ENERGY_CSV: &str = "energy.csv";
/// File name of the hard-contact solver's per-step record in the output directory
/// (`[contact] law = "hard"` only).
pub const SOLVER_CSV: &str = "solver.csv";
/// File name of the wall loads (force and moment on every plane and mesh at each
/// output step) in the output directory (scenes with walls).
pub const WALLS_CSV: &str = "walls.csv";
/// File name of the inserters' running counts (inserted and skipped particles at each
/// output step) in the output directory (scenes with `[[inserter]]`s).
pub const INSERTERS_CSV: &str = "inserters.csv";
/// File name of the particles removed for leaving the domain (`[domain] on_exit =
/// "remove"`): one row a particle, its state at exit.
pub const REMOVED_CSV: &str = "removed.csv";
/// File name of the bonds that broke (issue 47; scenes whose bonds have `break_*`
/// strengths): one row a break, the loads that broke it.
pub const BONDS_BROKEN_CSV: &str = "bonds_broken.csv";
/// File name of the final particle state in the output directory.
pub const FINAL_CSV: &str = "final.csv";
/// File name of the reproducibility record in the output directory.
pub const RUN_RECORD: &str = "run.toml";

pub mod channel;
pub mod csv;
pub mod liggghts;
pub mod plot;
pub mod run_record;
pub mod scene;
pub mod stl;
pub mod vtk_reader;
pub mod vtk_writer;

pub use csv::{
    read_energy_csv, read_final_csv, write_final_csv, write_final_rows, BondsBrokenCsv, EnergyCsv,
    EnergyTable, InsertersCsv, ParticleState, RemovedCsv, SolverCsv, WallsCsv, FINAL_CSV_HEADER,
};
pub use run_record::{recorded_run, RecordedRun};
pub use scene::{
    default_scene, load_scene, parse_scene, parse_scene_in, scene_to_toml, DEFAULT_SCENE,
};
pub use vtk_writer::{VtkSeries, PVD_FILE, VTK_DIR};
