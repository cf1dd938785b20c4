//! The driver: advances a backend through a scene, writing `energy.csv` (and, unless
//! turned off, the VTK frames and `particles.pvd`) as it goes and `final.csv` at the end.
//! This is what `varidem run` calls.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::checkpoint::{checkpoint_path, Checkpoint};
use crate::error::{Error, Result};
use crate::io::{
    write_final_rows, BondsBrokenCsv, EnergyCsv, InsertersCsv, RemovedCsv, SolverCsv, VtkSeries,
    WallsCsv,
};
use crate::model::Scene;

pub use crate::io::{ENERGY_CSV, FINAL_CSV, RUN_RECORD};
pub use crate::select::{fallback_to_cpu, gpu_options, make_backend, select_backend};

/// What a completed run did.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Name of the backend that ran.
    pub backend: String,
    /// Number of particles.
    pub particles: usize,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time at the end (s).
    pub time: f64,
    /// Wall-clock time of the stepping loop, output included.
    pub wall_time: Duration,
    /// Throughput: particles × steps / wall time (1/s).
    pub particle_steps_per_second: f64,
    /// Path of `energy.csv`.
    pub energy_csv: PathBuf,
    /// Path of `final.csv`.
    pub final_csv: PathBuf,
    /// Path of `particles.pvd`, the VTK time series (`None` when VTK output was off).
    pub pvd: Option<PathBuf>,
    /// The process's peak resident memory so far (bytes; [`peak_memory`]), `None`
    /// where the system does not tell.
    pub peak_memory: Option<u64>,
}

/// The peak resident memory of this process so far (bytes): Linux's `VmHWM`, `None`
/// elsewhere or when `/proc/self/status` cannot be read.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Optional outputs of [`run_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    /// Write a VTK PolyData frame (`vtk/particles_<step>.vtp`) with every `energy.csv`
    /// row and keep `particles.pvd` up to date (see [`crate::io::vtk_writer`]). Default on.
    pub vtk: bool,
    /// Write a checkpoint ([`crate::checkpoint`]) into `checkpoints/` every this many
    /// steps (at every multiple of it, the last step included when it is one).
    /// Default `None`: no checkpoints.
    pub checkpoint_every: Option<u64>,
    /// Show a progress bar on stderr (simulated time, ETA, particle-steps/s), updated at
    /// every output step. Default off; the CLI turns it on when stderr is a terminal.
    pub progress: bool,
    /// The identity of the run being continued (a resumed checkpoint's
    /// [`Checkpoint::run_id`]). `None` starts a new run with a fresh identity
    /// ([`new_run_id`]). It goes into `run.toml` and every checkpoint the run writes, so
    /// that a resume recognises the run's own directory ([`check_same_run`]).
    pub run_id: Option<u64>,
}

impl Default for OutputOptions {
    fn default() -> Self {
        Self {
            vtk: true,
            checkpoint_every: None,
            progress: false,
            run_id: None,
        }
    }
}

/// A fresh run identity: 64 random bits (std's randomly keyed hasher over the time and
/// the process id), never 0, which the checkpoint format reserves for none.
pub fn new_run_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish().max(1)
}

/// How `run.toml` and errors write a run identity: 16 hexadecimal digits.
pub fn run_id_text(id: u64) -> String {
    format!("{id:016x}")
}

fn progress_bar(first: u64, total: u64, dt: f64) -> Option<indicatif::ProgressBar> {
    let bar = indicatif::ProgressBar::new(total);
    let style =
        indicatif::ProgressStyle::with_template("{bar:40} step {pos}/{len} t = {msg} ETA {eta}")
            .ok()?;
    bar.set_style(style);
    bar.set_position(first);
    bar.set_message(format!("{:.4} s", first as f64 * dt));
    Some(bar)
}

/// Runs `scene` on `backend` with the default [`OutputOptions`] (VTK output on): see
/// [`run_with`].
pub fn run(scene: &Scene, backend: &mut dyn Backend, out_dir: &Path) -> Result<RunSummary> {
    run_with(scene, backend, out_dir, &OutputOptions::default())
}

/// Runs `scene` on `backend`, writing into `out_dir` (created if needed):
///
/// * `energy.csv`: the [`Diagnostics`](crate::diagnostics::Diagnostics) header, then a
///   row at the start, every `output_every` steps and at the last step (once, when the
///   last step is a multiple of `output_every`); each row is flushed when written.
/// * with `options.vtk`, at the same steps, `vtk/particles_<step>.vtp` and
///   `particles.pvd`, rewritten after every frame (see [`crate::io::vtk_writer`]; a resumed
///   run keeps the frames of earlier steps, [`VtkSeries::resume`]).
/// * `final.csv`: the final state (see [`crate::io::write_final_csv`]).
///
/// * with `options.checkpoint_every = Some(k)` (else the scene's `checkpoint_every`),
///   at every step that is a multiple of `k`, `checkpoints/checkpoint_<step>.vdc`
///   ([`crate::checkpoint`]), after that step's other outputs.
///
/// The run advances `backend` from its current step to `scene.simulation.steps()`,
/// and the rows carry the backend's step count and time. A backend at step 0 (freshly
/// built from `scene`) starts a new `energy.csv`. `DIR/run.toml` records how the run was
/// made (see [`write_run_record`]). A backend past step 0 (restored from
/// a checkpoint of `scene`) continues the run: `energy.csv` keeps its rows of earlier
/// steps and drops those of later ones (see [`EnergyCsv::resume`]), the rows from the
/// backend's step on are written, and the outputs end up as those of a run that never
/// stopped.
///
/// If a step fails, the rows so far are on disk, `final.csv` is written with the
/// backend's state (that of the last completed step), and the step's error is
/// returned.
pub fn run_with(
    scene: &Scene,
    backend: &mut dyn Backend,
    out_dir: &Path,
    options: &OutputOptions,
) -> Result<RunSummary> {
    let energy_path = out_dir.join(ENERGY_CSV);
    let final_path = out_dir.join(FINAL_CSV);
    let sim = &scene.simulation;
    let total = sim.steps();
    let first = backend.step_count();
    if first > total {
        return Err(Error::Snapshot(format!(
            "the backend is at step {first}, past the scene's last step {total}"
        )));
    }
    let n = scene.model.sphere_count();
    let reserved: u64 = scene
        .model
        .inserters
        .iter()
        .map(|i| u64::from(i.capacity))
        .sum();
    let count = if reserved > 0 {
        format!("{n} (of which {reserved} reserved by inserters)")
    } else {
        n.to_string()
    };
    log::info!(
        "running {count} particle(s), {} bond(s), {} wall(s), {} mesh(es) on the {} backend: {} steps of dt = {} s ({}), energy row every {} steps",
        scene.model.bonds.len(),
        scene.model.walls.len(),
        scene.model.meshes.len(),
        backend.name(),
        total,
        sim.dt,
        sim.integrator,
        sim.output_every,
    );

    if let Some(a) = crate::physics::granular::time_step_advice(&scene.model) {
        if sim.dt > a.dt_max {
            log::warn!(
                "dt = {:e} s is above the recommended t_col/20 = {:.3e} s (Hertz collision duration {:.3e} s at v_rel = {:.3e} m/s, Campello eq. 50): collisions get {:.1} steps; run `varidem check` for details",
                sim.dt,
                a.dt_max,
                a.collision_duration,
                a.v_rel,
                a.collision_duration / sim.dt
            );
        }
    }
    let start = Instant::now();
    let first_step = first;
    let mut recorder = Recorder::start(scene, backend, out_dir, options)?;
    let stepped = step_and_record(scene, backend, &mut recorder, start, options.progress);
    let wall_time = start.elapsed();
    let done = backend.step_count() - first_step;

    let written = recorder.write_final(backend);
    match (stepped, written) {
        (Ok(()), Ok(())) => {}
        (Ok(()), Err(e)) => return Err(e),
        (Err(e), Ok(())) => {
            log::error!(
                "the run failed after {done} of {total} steps; {} holds the state of step {}",
                final_path.display(),
                backend.step_count()
            );
            return Err(e);
        }
        (Err(e), Err(e2)) => {
            log::error!("the run failed after {done} of {total} steps, and the final state could not be written either: {e2}");
            return Err(e);
        }
    }

    let seconds = wall_time.as_secs_f64();
    let particle_steps_per_second = if seconds > 0.0 {
        n as f64 * done as f64 / seconds
    } else {
        f64::INFINITY
    };
    let summary = RunSummary {
        backend: backend.name(),
        particles: n,
        steps: done,
        time: backend.time(),
        wall_time,
        particle_steps_per_second,
        energy_csv: energy_path,
        final_csv: final_path,
        pvd: recorder.vtk.as_ref().map(VtkSeries::pvd_path),
        peak_memory: peak_memory(),
    };
    log::info!(
        "done: {} steps in {:.3} s ({:.3e} particle-steps/s)",
        summary.steps,
        seconds,
        summary.particle_steps_per_second
    );
    if let Some(bytes) = summary.peak_memory {
        log::info!("peak memory: {:.1} MB", bytes as f64 / 1e6);
    }
    for (q, c) in backend.insertion_counts().iter().enumerate() {
        let level = if c.skipped > 0 {
            log::Level::Warn
        } else {
            log::Level::Info
        };
        log::log!(
            level,
            "inserter[{q}]: {} particles inserted, {} skipped (no free spot, or the capacity used up)",
            c.inserted,
            c.skipped
        );
    }
    Ok(summary)
}

/// The stepping loop of [`run_with`]: advances `backend` to the scene's last step
/// through `recorder`, showing a progress bar (with `progress`) and logging progress
/// at every tenth of the run. If a step fails, the last good state is saved as a
/// checkpoint and the error is returned as [`Error::RunFailed`].
fn step_and_record(
    scene: &Scene,
    backend: &mut dyn Backend,
    recorder: &mut Recorder,
    start: Instant,
    progress: bool,
) -> Result<()> {
    let result = step_loop(scene, backend, recorder, start, progress);
    let Err(e) = result else {
        return Ok(());
    };
    // Save the last good state so the run can be resumed (or inspected) from it.
    let snapshot = if backend.state_after_error_is_good(&e) {
        backend.checkpoint_state().ok()
    } else {
        recorder.last_good.take()
    };
    let Some(state) = snapshot else {
        return Err(e);
    };
    let step = state.step;
    let checkpoint = Checkpoint {
        scene: scene.clone(),
        state,
        checkpoint_every: recorder.checkpoint_every,
        run_id: Some(recorder.run_id),
        vtk: recorder.vtk.is_some(),
    };
    let path = checkpoint_path(&recorder.out_dir, step);
    match checkpoint.write(&path) {
        Ok(()) => Err(Error::RunFailed {
            error: Box::new(e),
            step,
            checkpoint: path,
        }),
        Err(w) => {
            log::error!("the last good state (step {step}) could not be saved: {w}");
            Err(e)
        }
    }
}

/// Energy growth (e_total − e_total(0)) beyond this multiple of the initial energy
/// scale (Σ|kinetic and potential parts| at the start) is a blow-up: the physical
/// systems varidem runs conserve or dissipate energy.
pub const BLOW_UP_FACTOR: f64 = 1.0;

/// A fault naming the particle when an energy or momentum of `d` is not finite (a state
/// can stay finite while its kinetic energy overflows: a velocity of 1e160 m/s). The
/// particle is the first whose state or kinetic energy is not finite, else
/// [`fastest_particle`].
fn non_finite_energy(d: &crate::diagnostics::Diagnostics, backend: &mut dyn Backend) -> Result<()> {
    let q = &d.potentials;
    let parts = [
        ("kinetic energy", d.e_kin),
        ("rotational energy", d.e_rot),
        ("contact energy", q.contact),
        ("wall energy", q.wall),
        ("field energy", q.field),
        ("bond energy", q.bend + q.axial + q.shear),
        ("near-field energy", q.near_field),
        ("linear momentum", d.momentum.length_squared()),
        ("angular momentum", d.angular_momentum.length_squared()),
    ];
    let Some(&(what, value)) = parts.iter().find(|(_, v)| !v.is_finite()) else {
        return Ok(());
    };
    let p = backend.particles()?;
    let ke = |i: usize| {
        0.5 * p.mass[i] * p.velocity[i].length_squared()
            + 0.5 * p.inertia[i] * p.angular_velocity[i].length_squared()
    };
    let finite =
        |i: usize| p.position[i].is_finite() && p.velocity[i].is_finite() && ke(i).is_finite();
    let particle = (0..p.len())
        .find(|&i| !finite(i))
        .unwrap_or_else(|| fastest_particle(&p));
    Err(Error::fault(
        d.step,
        crate::error::Fault::NonFinite {
            particle,
            field: Some(what),
            value: Some(format!("{value:e}")),
        },
    ))
}

/// The particle in the system with the largest translational kinetic energy (0
/// without particles): the one a blow-up or a non-finite energy names. Removed
/// particles keep their exit velocity but are out of the system.
fn fastest_particle(p: &crate::model::Particles) -> usize {
    let ke = |i: usize| p.mass[i] * p.velocity[i].length_squared();
    (0..p.len())
        .filter(|&i| p.flags[i] & crate::model::FLAG_REMOVED == 0)
        .max_by(|&a, &b| ke(a).total_cmp(&ke(b)))
        .unwrap_or(0)
}

/// The initial energy scale for the blow-up guard: the sum of the magnitudes of every
/// kinetic and potential part.
fn energy_scale(d: &crate::diagnostics::Diagnostics) -> f64 {
    let p = &d.potentials;
    d.e_kin.abs()
        + d.e_rot.abs()
        + [
            p.bend,
            p.axial,
            p.shear,
            p.contact,
            p.wall,
            p.field,
            p.near_field,
        ]
        .iter()
        .map(|v| v.abs())
        .sum::<f64>()
}

/// The loop of [`step_and_record`].
fn step_loop(
    scene: &Scene,
    backend: &mut dyn Backend,
    recorder: &mut Recorder,
    start: Instant,
    progress: bool,
) -> Result<()> {
    let sim = &scene.simulation;
    let total = sim.steps();
    let n = scene.model.sphere_count() as f64;
    let first = backend.step_count();
    let e0 = recorder.initial_energy();
    let span = total - first;
    let bar = progress
        .then(|| progress_bar(first, total, sim.dt))
        .flatten();
    let mut step = first;
    let mut next_report = 1u64;
    while step < total {
        let written = recorder.advance_chunk(scene, backend, total)?;
        step = backend.step_count();
        if let Some(b) = &bar {
            let secs = start.elapsed().as_secs_f64();
            let rate = if secs > 0.0 {
                n * (step - first) as f64 / secs
            } else {
                0.0
            };
            b.set_position(step);
            b.set_message(format!(
                "{:.4} s, {rate:.3e} particle-steps/s",
                step as f64 * sim.dt
            ));
        }
        let Some(d) = written else {
            continue;
        };
        // Progress at each tenth of the run (and at the end).
        let done = step - first;
        if done * 10 >= next_report * span {
            while done * 10 >= next_report * span {
                next_report += 1;
            }
            let secs = start.elapsed().as_secs_f64();
            let rate = if secs > 0.0 {
                n * done as f64 / secs
            } else {
                f64::INFINITY
            };
            log::info!(
                "step {} ({}%): t = {:.6} s, E = {:.9e} J (ΔE = {:.3e}), {:.3e} particle-steps/s",
                d.step,
                done * 100 / span,
                d.time,
                d.e_total(),
                d.e_total() - e0,
                rate
            );
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// The outputs of a run in a directory, written as a backend advances: what
/// [`run_with`] writes, for callers that drive the stepping themselves (the Python
/// binding steps a simulation in pieces of any size and writes the same files).
///
/// At every output step (a multiple of `output_every`, and the scene's last step) it
/// writes the `energy.csv` row, the `walls.csv` and `inserters.csv` rows of scenes
/// with walls or inserters, and the VTK frame (with [`OutputOptions::vtk`]); after
/// every advance of a hard-contact scene, the `solver.csv` rows; at every multiple of
/// [`OutputOptions::checkpoint_every`], a checkpoint. At output steps it checks the
/// energy for a blow-up ([`BLOW_UP_FACTOR`]; not for scenes with moving walls or
/// inserters). The backend is advanced in chunks that end at those steps, which gives
/// the same bits as advancing it in one piece.
#[derive(Debug)]
pub struct Recorder {
    out_dir: PathBuf,
    energy: EnergyCsv,
    solver: Option<SolverCsv>,
    walls: Option<WallsCsv>,
    inserters: Option<InsertersCsv>,
    vtk: Option<VtkSeries>,
    checkpoint_every: Option<u64>,
    /// Total energy at the start.
    e0: f64,
    /// Initial energy scale of the blow-up check (0: the check is off).
    scale0: f64,
    /// The state at the last output step that passed the checks.
    last_good: Option<crate::backend::StateSnapshot>,
    /// The run's identity ([`OutputOptions::run_id`]).
    run_id: u64,
    /// Scenes with `[domain] on_exit = "remove"`: the particles removed so far, logged
    /// as one line per output step that removed some (the hopper printed 887 lines, one
    /// per particle; issue 49).
    removed: Option<usize>,
    /// Scenes with `[domain] on_exit = "remove"`: `removed.csv`, and the step up to
    /// which its rows are written.
    exits: Option<(RemovedCsv, u64)>,
    /// Particles removed so far (with removal).
    removed_total: usize,
    /// Scenes whose bonds can break: `bonds_broken.csv`, and the step up to which its
    /// rows are written (issue 47).
    breaks: Option<(BondsBrokenCsv, u64)>,
}

impl Recorder {
    /// The run's identity, as `run.toml` and its checkpoints record it.
    pub fn run_id(&self) -> u64 {
        self.run_id
    }

    /// Starts recording `scene`'s run on `backend` into `out_dir` (created if needed):
    /// writes `run.toml` ([`write_run_record`]), creates the output files (a backend
    /// at step 0) or continues them from the backend's step (a backend past step 0:
    /// rows of later steps are dropped, see [`EnergyCsv::resume`]), and writes the rows
    /// of the current step when it is an output step. `options.progress` is not used
    /// here ([`run_with`] shows the bar).
    pub fn start(
        scene: &Scene,
        backend: &mut dyn Backend,
        out_dir: &Path,
        options: &OutputOptions,
    ) -> Result<Self> {
        check_out_dir(out_dir)?;
        let first = backend.step_count();
        // A resumed run continues its own outputs or starts in an empty directory:
        // never another run's (issue 49: its later energy rows would be cut and the
        // files left mixed). Checked before anything is written.
        if first > 0 {
            check_same_run(scene, options.run_id, out_dir)?;
        } else {
            clear_previous_outputs(out_dir)?;
        }
        let run_id = options.run_id.unwrap_or_else(new_run_id);
        std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
        write_run_record(scene, backend, out_dir, run_id, options.vtk)?;
        let sim = &scene.simulation;
        let energy_path = out_dir.join(ENERGY_CSV);
        // A fresh run starts energy.csv; a resumed one continues it.
        let (energy, replaced) = if first == 0 {
            (EnergyCsv::create(&energy_path)?, None)
        } else {
            EnergyCsv::resume(&energy_path, first)?
        };
        // Hard contacts: one solver.csv row per step, written after every advance (also
        // a failed one: the rows of the steps it completed are kept).
        let solver = if sim.integrator == crate::integrators::IntegratorKind::ImpulseVelocity {
            let path = out_dir.join(crate::io::SOLVER_CSV);
            Some(if first == 0 {
                SolverCsv::create(&path)?
            } else {
                SolverCsv::resume(&path, first)?
            })
        } else {
            None
        };
        // Scenes with walls: walls.csv, one row per wall at each output step (where the
        // backend computes the loads).
        let walls = if scene.model.walls.is_empty() && scene.model.meshes.is_empty() {
            None
        } else {
            let path = out_dir.join(crate::io::WALLS_CSV);
            Some(if first == 0 {
                WallsCsv::create(&path)?
            } else {
                WallsCsv::resume(&path, first)?
            })
        };
        // Scenes with inserters: inserters.csv, their running counts at each output step.
        let inserters = if scene.model.inserters.is_empty() {
            None
        } else {
            let path = out_dir.join(crate::io::INSERTERS_CSV);
            Some(if first == 0 {
                InsertersCsv::create(&path)?
            } else {
                InsertersCsv::resume(&path, first)?
            })
        };
        // Removal: removed.csv, a row per particle that left (issue 44).
        let exits = if scene.model.domain.is_some_and(|d| d.remove) {
            let path = out_dir.join(crate::io::REMOVED_CSV);
            Some(if first == 0 {
                (RemovedCsv::create(&path)?, 0)
            } else {
                (RemovedCsv::resume(&path, first)?, first)
            })
        } else {
            None
        };
        // Breakable bonds: bonds_broken.csv, a row per break (issue 47).
        let breaks = if scene.model.breakable() {
            let path = out_dir.join(crate::io::BONDS_BROKEN_CSV);
            Some(if first == 0 {
                (BondsBrokenCsv::create(&path)?, 0)
            } else {
                (BondsBrokenCsv::resume(&path, first)?, first)
            })
        } else {
            None
        };
        let vtk = match (options.vtk, first) {
            (false, _) => None,
            (true, 0) => Some(VtkSeries::create(out_dir, &scene.model.bonds)?),
            (true, step) => Some(VtkSeries::resume(out_dir, &scene.model.bonds, step)?),
        };
        let mut recorder = Self {
            out_dir: out_dir.to_owned(),
            energy,
            solver,
            walls,
            inserters,
            vtk,
            // The command line's interval, else the scene's (`checkpoint_every` or
            // `checkpoint_interval`); 0 from the command line turns them off.
            checkpoint_every: (options.checkpoint_every)
                .or(scene.simulation.checkpoint_every)
                .filter(|&k| k > 0),
            e0: 0.0,
            scale0: 0.0,
            last_good: None,
            run_id,
            removed: None,
            exits,
            removed_total: 0,
            breaks,
        };
        if scene.model.domain.is_some_and(|d| d.remove) {
            recorder.removed_total = removed_count(backend)?;
            recorder.removed = Some(recorder.removed_total);
        }
        let d = backend.diagnostics()?;
        non_finite_energy(&d, backend)?;
        if is_output(scene, first) {
            recorder.energy.write(&d)?;
            recorder.write_rows(scene, backend, first)?;
            if let Some(v) = &mut recorder.vtk {
                v.write(&backend.frame()?)?;
            }
            if replaced.as_ref().is_some_and(|old| *old != d.csv_row()) {
                log::warn!(
                    "{}: the row of step {first} written before differs from the one of the resumed state: the file may come from another run",
                    energy_path.display()
                );
            }
        }
        recorder.e0 = d.e_total();
        // Walls that move do work on the particles, and inserted particles bring their
        // energy: the energy may grow without a fault, so the blow-up check (which
        // assumes it cannot) is off.
        let m = &scene.model;
        let moving = m.walls.iter().any(|w| !w.motion.is_static())
            || m.meshes.iter().any(|w| !w.motion.is_static());
        if moving {
            log::info!("moving walls do work on the particles: the energy blow-up check is off");
        }
        if !m.inserters.is_empty() {
            log::info!("inserters add particles and their energy: the energy blow-up check is off");
        }
        let driven = moving || !m.inserters.is_empty();
        recorder.scale0 = if driven { 0.0 } else { energy_scale(&d) };
        log::info!(
            "step {first}: t = {:.6} s, E = {:.9e} J",
            d.time,
            recorder.e0
        );
        recorder.last_good = backend.checkpoint_state().ok();
        Ok(recorder)
    }

    /// The output directory.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// The total energy of the state the recording started from (J).
    pub fn initial_energy(&self) -> f64 {
        self.e0
    }

    /// Advances `backend` to step `target`, writing the outputs of every output and
    /// checkpoint step on the way (see [`Recorder`]); nothing when the backend is
    /// already there.
    pub fn advance_to(
        &mut self,
        scene: &Scene,
        backend: &mut dyn Backend,
        target: u64,
    ) -> Result<()> {
        while backend.step_count() < target {
            self.advance_chunk(scene, backend, target)?;
        }
        Ok(())
    }

    /// Advances `backend` to the next output or checkpoint step, or to `target` if that
    /// comes first (nothing when the backend is at `target` or past it), and writes
    /// that step's outputs. Returns the diagnostics written to `energy.csv` when the
    /// step reached is an output step.
    pub fn advance_chunk(
        &mut self,
        scene: &Scene,
        backend: &mut dyn Backend,
        target: u64,
    ) -> Result<Option<crate::diagnostics::Diagnostics>> {
        let step = backend.step_count();
        if step >= target {
            return Ok(None);
        }
        let every = scene.simulation.output_every.max(1);
        let mut next = (step / every + 1) * every;
        if let Some(k) = self.checkpoint_every {
            next = next.min((step / k + 1) * k);
        }
        let total = scene.simulation.steps();
        if step < total {
            next = next.min(total);
        }
        let next = next.min(target);
        let advanced = backend.advance(next - step);
        if let Some(log) = &mut self.solver {
            log.write(&backend.take_solver_rows())?;
        }
        // The exits of the steps advanced (of a failed advance too: removal is not
        // undone), before anything can stop the run.
        let exits = self.write_exits(scene, backend);
        let breaks = self.write_breaks(scene, backend);
        advanced?;
        exits?;
        breaks?;
        let mut written = None;
        if is_output(scene, next) {
            let d = backend.diagnostics()?;
            // Before the row is written: a NaN or infinite energy is a fault on either
            // backend (issue 49), never a row of energy.csv.
            non_finite_energy(&d, backend)?;
            self.energy.write(&d)?;
            self.write_rows(scene, backend, next)?;
            if self.scale0 > 0.0 && d.e_total() - self.e0 > BLOW_UP_FACTOR * self.scale0 {
                let particle = fastest_particle(&backend.particles()?);
                return Err(Error::BlowUp {
                    step: next,
                    particle,
                    energy: d.e_total(),
                    initial: self.e0,
                    scale: self.scale0,
                });
            }
            if let Some(v) = &mut self.vtk {
                v.write(&backend.frame()?)?;
            }
            log::debug!("step {}: E = {:.16e}", d.step, d.e_total());
            // The old state goes first: two at once would double the peak memory.
            self.last_good = None;
            self.last_good = backend.checkpoint_state().ok();
            written = Some(d);
        }
        if let Some(k) = self.checkpoint_every {
            if next % k == 0 {
                let path = checkpoint_path(&self.out_dir, next);
                let mut c = Checkpoint::take(scene, backend, Some(k))?;
                c.run_id = Some(self.run_id);
                c.vtk = self.vtk.is_some();
                c.write(&path)?;
                log::info!("step {next}: checkpoint {}", path.display());
            }
        }
        Ok(written)
    }

    /// Appends the exits since the last call to `removed.csv` (scenes with removal).
    fn write_exits(&mut self, scene: &Scene, backend: &mut dyn Backend) -> Result<()> {
        let Some((log, written)) = &mut self.exits else {
            return Ok(());
        };
        let exits = backend.exits(*written)?;
        log.write(&exits, scene.simulation.dt)?;
        self.removed_total += exits.len();
        // A failed step may have removed particles (removal is not undone) at a step
        // past the backend's count.
        let last = exits.last().map_or(0, |e| e.step);
        *written = backend.step_count().max(last).max(*written);
        Ok(())
    }

    /// Appends the bonds broken since the last call to `bonds_broken.csv` (scenes whose
    /// bonds can break).
    fn write_breaks(&mut self, scene: &Scene, backend: &mut dyn Backend) -> Result<()> {
        let Some((log, written)) = &mut self.breaks else {
            return Ok(());
        };
        let breaks = backend.bond_breaks(*written)?;
        log.write(&breaks, scene.simulation.dt)?;
        if !breaks.is_empty() {
            let n = breaks.len();
            log::info!(
                "step {}: {n} bond{} broken",
                backend.step_count(),
                if n == 1 { "" } else { "s" }
            );
        }
        let last = breaks.last().map_or(0, |b| b.step);
        *written = backend.step_count().max(last).max(*written);
        Ok(())
    }

    /// Writes `final.csv` with the backend's current state
    /// ([`crate::io::write_final_csv`]).
    pub fn write_final(&self, backend: &mut dyn Backend) -> Result<()> {
        let (ids, p) = backend.particles_in_system()?;
        write_final_rows(&self.out_dir.join(FINAL_CSV), &ids, &p)
    }

    /// The `walls.csv` and `inserters.csv` rows of `step`.
    fn write_rows(&mut self, scene: &Scene, backend: &mut dyn Backend, step: u64) -> Result<()> {
        let t = step as f64 * scene.simulation.dt;
        if let Some(log) = &mut self.walls {
            match backend.wall_loads()? {
                Some(loads) => log.write(step, t, &loads)?,
                None => {
                    log::warn!(
                        "the {} backend has no wall loads for step {step}: {} stays without rows",
                        backend.name(),
                        log.path().display()
                    );
                    self.walls = None;
                }
            }
        }
        if let Some(log) = &mut self.inserters {
            log.write(step, t, &backend.insertion_counts())?;
        }
        if let Some(before) = self.removed {
            let now = self.removed_total;
            if now > before {
                log::info!(
                    "step {step}: {} left the domain and were removed since the last output step ({now} in all)",
                    plural_particles(now - before)
                );
            }
            self.removed = Some(now);
        }
        Ok(())
    }
}

/// Particles removed from the run (left the domain with `on_exit = "remove"`; reserved
/// particles an inserter has not yet inserted are not counted).
fn removed_count(backend: &mut dyn Backend) -> Result<usize> {
    Ok(crate::model::removed_ids(&backend.particles()?.flags).len())
}

/// "1 particle", "5 particles".
fn plural_particles(n: usize) -> String {
    if n == 1 {
        "1 particle".to_owned()
    } else {
        format!("{n} particles")
    }
}

/// Whether `step` is an output step of `scene`: a multiple of `output_every`, or the
/// last step.
fn is_output(scene: &Scene, step: u64) -> bool {
    step % scene.simulation.output_every.max(1) == 0 || step == scene.simulation.steps()
}

/// The outputs a run writes into its directory: a directory holding any of them
/// belongs to some run.
const RUN_OUTPUTS: [&str; 9] = [
    ENERGY_CSV,
    FINAL_CSV,
    crate::io::WALLS_CSV,
    crate::io::SOLVER_CSV,
    crate::io::INSERTERS_CSV,
    crate::io::REMOVED_CSV,
    crate::io::BONDS_BROKEN_CSV,
    crate::io::PVD_FILE,
    crate::io::VTK_DIR,
];

/// A fresh run into `out_dir` replaces the outputs of a run there before wholly
/// (issue 49): its CSV files, `particles.pvd` and `vtk/particles_*.vtp` frames are
/// removed, so that no file (a `--no-vtk` run's frames, a walls.csv the new scene
/// does not write) is left from the other run for `render` or `plot` to read.
/// `checkpoints/` and any other file are kept: each checkpoint carries its own scene.
fn clear_previous_outputs(out_dir: &Path) -> Result<()> {
    let remove = |path: &Path| match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    };
    for f in RUN_OUTPUTS.iter().filter(|&&f| f != crate::io::VTK_DIR) {
        remove(&out_dir.join(f))?;
    }
    let frames = out_dir.join(crate::io::VTK_DIR);
    if let Ok(entries) = std::fs::read_dir(&frames) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("particles_") && name.ends_with(".vtp") {
                remove(&entry.path())?;
            }
        }
    }
    Ok(())
}

/// Refuses an output directory (`--out`) that is a file, or lies under one, naming it
/// (issue 49: the error was `DIR/energy.csv: Not a directory`). A directory that does
/// not exist yet is fine: the run creates it.
pub fn check_out_dir(out_dir: &Path) -> Result<()> {
    let Some(existing) = out_dir.ancestors().find(|a| a.exists()) else {
        return Ok(());
    };
    if existing.is_dir() || existing.as_os_str().is_empty() {
        return Ok(());
    }
    let what = if existing == out_dir {
        "is a file, not a directory: give a directory for the outputs (one that does not exist is created)".to_owned()
    } else {
        format!(
            "is a file, so the output directory {} cannot be made under it",
            out_dir.display()
        )
    };
    Err(Error::io(
        existing,
        std::io::Error::new(std::io::ErrorKind::AlreadyExists, what),
    ))
}

/// Refuses to resume `scene` (the checkpoint's, as it was at step 0) of the run
/// `run_id` (the checkpoint's identity; `None` for files of format 8 and older) into
/// `out_dir` when the directory holds the outputs of another run: its `run.toml`
/// records another run identity, or an identity where the checkpoint has none, or
/// (where neither has one) another scene, or it has outputs and no `run.toml`. An
/// empty or missing directory, or the run's own, is accepted.
pub fn check_same_run(scene: &Scene, run_id: Option<u64>, out_dir: &Path) -> Result<()> {
    check_out_dir(out_dir)?;
    let record = out_dir.join(RUN_RECORD);
    let text = match std::fs::read_to_string(&record) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let found: Vec<&str> = RUN_OUTPUTS
                .iter()
                .copied()
                .filter(|f| out_dir.join(f).exists())
                .collect();
            if found.is_empty() {
                return Ok(());
            }
            return Err(Error::Scene(format!(
                "{}: the directory holds outputs ({}) but no {RUN_RECORD}, so they cannot be told to come from the checkpoint's run; resume into an empty directory or the run's own",
                out_dir.display(),
                found.join(", ")
            )));
        }
        Err(e) => return Err(Error::io(&record, e)),
    };
    let recorded_id = crate::io::recorded_run(&text).run_id;
    if let (Some(ours), Some(theirs)) = (run_id, recorded_id) {
        if ours == theirs {
            return Ok(());
        }
        return Err(Error::Scene(format!(
            "{}: it holds the outputs of another run (run {}; the checkpoint belongs to run {}); resuming there would cut and mix that run's files: resume into an empty directory or the run's own",
            record.display(),
            run_id_text(theirs),
            run_id_text(ours)
        )));
    }
    // A run with an identity wrote the directory, and the checkpoint has none (a file of
    // format 8 or older, or one a program took without a run): nothing says it belongs
    // to that run, and two runs of one scene have the same scene.
    if let (None, Some(theirs)) = (run_id, recorded_id) {
        return Err(Error::Scene(format!(
            "{}: it holds the outputs of run {}, and the checkpoint has no run identity to show it belongs to that run; resuming there could cut and mix that run's files: resume into an empty directory",
            record.display(),
            run_id_text(theirs),
        )));
    }
    // Where the directory's record has no identity (a version before them), the scenes
    // decide. The record's scene follows its [run] table, after the first blank line.
    let recorded = text.split_once("\n\n").map_or("", |(_, scene)| scene);
    let ours = crate::io::scene_to_toml(scene);
    let same = recorded == ours || crate::io::parse_scene(recorded).is_ok_and(|s| s == *scene);
    if same {
        return Ok(());
    }
    Err(Error::Scene(format!(
        "{}: it holds the outputs of another run (its scene differs from the checkpoint's); resuming there would cut and mix that run's files: resume into an empty directory or the run's own",
        record.display()
    )))
}

/// Writes `DIR/run.toml`: the varidem version, the backend (with adapter and precision),
/// the step the run starts from, the run's identity and whether it writes VTK frames,
/// then the full resolved scene (every particle, bond and wall with its rest state's
/// source configuration) as `io::scene_to_toml` writes it. The whole file is a scene
/// file that `run` and `check` accept as it is (they ignore the `[run]` table).
pub fn write_run_record(
    scene: &Scene,
    backend: &dyn Backend,
    out_dir: &Path,
    run_id: u64,
    vtk: bool,
) -> Result<()> {
    let path = out_dir.join(RUN_RECORD);
    let text = format!(
        "# varidem reproducibility record: a scene file (the [run] table says how it ran)\n\
         [run]\nvaridem_version = \"{}\"\nbackend = \"{}\"\nstart_step = {}\nrun_id = \"{}\"\nvtk = {vtk}\n\n{}",
        env!("CARGO_PKG_VERSION"),
        backend.name().replace('"', "'"),
        backend.step_count(),
        run_id_text(run_id),
        crate::io::scene_to_toml(scene)
    );
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendKind, Frame};
    use crate::diagnostics::Diagnostics;
    use crate::gpu::GpuOptions;
    use crate::io::{parse_scene, read_energy_csv, read_final_csv};
    use crate::model::Particles;
    use crate::model::Precision;
    use glam::DVec3;

    const TWO_BALLS: &str = "[simulation]\ndt = 1e-3\nsteps = 25\noutput_every = 10\n\
        [contact]\nlaw = \"binder\"\nk_pp = 100.0\n\
        [[particle]]\nposition = [0.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n\
        [[particle]]\nposition = [0.205, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n";

    #[test]
    fn rows_at_start_every_output_step_and_the_end() {
        for (steps, every, expected) in [
            (25u64, 10u64, vec![0.0, 10.0, 20.0, 25.0]),
            (30, 10, vec![0.0, 10.0, 20.0, 30.0]),
            (3, 10, vec![0.0, 3.0]),
            (1, 1, vec![0.0, 1.0]),
        ] {
            let text = TWO_BALLS
                .replace("steps = 25", &format!("steps = {steps}"))
                .replace("output_every = 10", &format!("output_every = {every}"));
            let scene = parse_scene(&text).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let mut backend =
                make_backend(BackendKind::Cpu, &scene, &GpuOptions::default()).unwrap();
            let summary = run(&scene, backend.as_mut(), dir.path()).unwrap();
            assert_eq!(summary.steps, steps);
            assert_eq!(summary.particles, 2);
            assert_eq!(summary.time, steps as f64 * 1e-3);
            let table = read_energy_csv(&summary.energy_csv).unwrap();
            assert_eq!(table.columns.join(","), Diagnostics::CSV_HEADER);
            assert_eq!(table.column("step").unwrap(), expected);
            let rows = read_final_csv(&summary.final_csv).unwrap();
            let p = backend.particles().unwrap();
            assert_eq!(rows.len(), 2);
            for (r, x) in rows.iter().zip(&p.position) {
                assert_eq!(r.position, *x);
            }
        }
    }

    /// A backend that fails at a given step, to check what a failed run leaves behind.
    struct Failing {
        step: u64,
        fail_at: u64,
        particles: Particles,
    }

    impl Backend for Failing {
        fn name(&self) -> String {
            "failing".into()
        }
        fn step_count(&self) -> u64 {
            self.step
        }
        fn time(&self) -> f64 {
            self.step as f64
        }
        fn advance(&mut self, n: u64) -> Result<()> {
            for _ in 0..n {
                if self.step + 1 == self.fail_at {
                    return Err(Error::fault(
                        self.fail_at,
                        crate::error::Fault::HalfTurn { particle: 0 },
                    ));
                }
                self.step += 1;
                self.particles.position[0].x = self.step as f64;
            }
            Ok(())
        }
        fn diagnostics(&mut self) -> Result<Diagnostics> {
            Ok(Diagnostics {
                step: self.step,
                time: self.time(),
                ..Diagnostics::default()
            })
        }
        fn particles(&mut self) -> Result<Particles> {
            Ok(self.particles.clone())
        }
        fn frame(&mut self) -> Result<Frame> {
            let n = self.particles.len();
            Ok(Frame {
                step: self.step,
                time: self.time(),
                particles: self.particles.clone(),
                force: vec![DVec3::ZERO; n],
                moment: vec![DVec3::ZERO; n],
                contact_count: vec![0; n],
                bond_energy: Vec::new(),
                bond_broken: Vec::new(),
                body_id: Vec::new(),
            })
        }
    }

    #[test]
    fn a_failed_run_keeps_its_rows_and_writes_the_last_good_state() {
        let scene = parse_scene(&TWO_BALLS.replace("steps = 25", "steps = 100")).unwrap();
        let mut backend = Failing {
            step: 0,
            fail_at: 37,
            particles: scene.model.particles.clone(),
        };
        let dir = tempfile::tempdir().unwrap();
        let err = run(&scene, &mut backend, dir.path()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Fault {
                    step: 37,
                    fault: crate::error::Fault::HalfTurn { .. }
                }
            ),
            "{err}"
        );
        let table = read_energy_csv(&dir.path().join(ENERGY_CSV)).unwrap();
        assert_eq!(table.column("step").unwrap(), [0.0, 10.0, 20.0, 30.0]);
        let rows = read_final_csv(&dir.path().join(FINAL_CSV)).unwrap();
        assert_eq!(rows[0].position.x, 36.0, "state of the last completed step");
        let pvd = std::fs::read_to_string(dir.path().join(crate::io::PVD_FILE)).unwrap();
        assert_eq!(pvd.matches("<DataSet ").count(), 4, "{pvd}");
        assert!(pvd.contains("file=\"vtk/particles_00000030.vtp\""), "{pvd}");
        assert!(dir.path().join("vtk/particles_00000030.vtp").is_file());
    }

    #[test]
    fn vtk_output_can_be_turned_off() {
        let scene = parse_scene(TWO_BALLS).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut backend = make_backend(BackendKind::Cpu, &scene, &GpuOptions::default()).unwrap();
        let options = OutputOptions {
            vtk: false,
            ..OutputOptions::default()
        };
        let summary = run_with(&scene, backend.as_mut(), dir.path(), &options).unwrap();
        assert_eq!(summary.pvd, None);
        assert!(!dir.path().join(crate::io::PVD_FILE).exists());
        assert!(!dir.path().join(crate::io::VTK_DIR).exists());
        assert!(summary.energy_csv.is_file() && summary.final_csv.is_file());
    }

    #[test]
    fn an_unavailable_backend_falls_back_to_the_cpu() {
        let scene = parse_scene(TWO_BALLS).unwrap();
        let attempt = Err(Error::Backend("no adapter".into()));
        let b = fallback_to_cpu("gpu", attempt, &scene).unwrap();
        assert_eq!(b.name(), "cpu");
        let attempt = Err(Error::NoAdapter("none here".into()));
        let b = fallback_to_cpu("gpu", attempt, &scene).unwrap();
        assert_eq!(b.name(), "cpu");
        let attempt = Err(Error::Scene("bad".into()));
        assert!(matches!(
            fallback_to_cpu("gpu", attempt, &scene),
            Err(Error::Scene(_))
        ));
    }

    #[test]
    fn a_gpu_request_for_a_missing_adapter_runs_on_the_cpu() {
        let scene = parse_scene(TWO_BALLS).unwrap();
        let options = GpuOptions {
            adapter: Some("no adapter is called this 7f3a".into()),
            ..GpuOptions::default()
        };
        for kind in [BackendKind::Gpu, BackendKind::Auto] {
            let b = make_backend(kind, &scene, &options).unwrap();
            assert_eq!(b.name(), "cpu", "{kind}");
        }
    }

    #[test]
    fn the_command_line_precision_overrides_the_scene() {
        let mut scene = parse_scene(TWO_BALLS).unwrap();
        assert_eq!(gpu_options(&scene, None, None).precision, Precision::F32);
        scene.simulation.precision = Some(Precision::F64);
        scene.simulation.gpu_max_neighbors = Some(12);
        let o = gpu_options(&scene, None, Some("llvm"));
        assert_eq!(o.precision, Precision::F64);
        assert_eq!(o.max_neighbors, Some(12));
        assert_eq!(o.adapter.as_deref(), Some("llvm"));
        let o = gpu_options(&scene, Some(Precision::F32), None);
        assert_eq!(o.precision, Precision::F32);
    }
}

/// The pair forces of [`crate::backend::contacts`], from a CPU state.
#[cfg(test)]
mod contact_forces_tests {
    use crate::backend::contacts::contact_forces;
    use crate::backend::Backend;
    use crate::cpu::CpuBackend;
    use crate::io::parse_scene;

    #[test]
    fn two_touching_spheres_push_apart_along_the_normal() {
        let text = "[simulation]\ndt = 1e-5\nsteps = 10\noutput_every = 10\n\
            [contact]\nlaw = \"hertz\"\n\
            [[material]]\nname = \"m\"\nyoung = 1e8\npoisson = 0.25\ndensity = 2500.0\n\
            restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.5\n\
            [[particle]]\nposition = [0.0, 0.0, 0.0]\nvelocity = [0.1, 0.0, 0.0]\nradius = 0.01\n\
            [[particle]]\nposition = [0.0199, 0.0, 0.0]\nradius = 0.01\n\
            [[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 0.01\n";
        let scene = parse_scene(text).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        b.advance(3).unwrap();
        let snapshot = b.checkpoint_state().unwrap();
        let c = contact_forces(&scene.model, &snapshot).unwrap();
        assert_eq!((c.i.as_slice(), c.j.as_slice()), (&[0u32][..], &[1u32][..]));
        assert!(c.overlap[0] > 0.0);
        assert!(c.normal_force[0].x < 0.0, "{:?}", c.normal_force[0]);
        assert_eq!(c.normal_force[0].y, 0.0);
    }
}
