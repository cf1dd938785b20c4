//! `varidem`: run, check or benchmark a scene, list the GPU adapters, and plot or
//! picture a run's output, from the command line.
//!
//! ```text
//! varidem run [SCENE] [--out DIR] [--no-vtk] [--backend auto|cpu|gpu] [--precision f32|f64] [--adapter NAME]
//!                                   # no SCENE: the built-in torus impact
//!                                   # --checkpoint-every N: DIR/checkpoints/checkpoint_<step>.vdc
//! varidem resume CHECKPOINT --out DIR [--backend ...] [--precision ...] [--adapter NAME]
//!                                   # continue a run from a checkpoint to the scene's end
//! varidem check SCENE               # parse and validate, print counts
//! varidem info                      # CPU threads and GPU adapters with their limits
//! varidem bench [SCENE] [--n N] [--steps S] [--backend auto|cpu|gpu] [--precision f32|f64] [--adapter NAME]
//!                                   # timed steps: particle-steps/s and bond-steps/s
//!                                   # (with clumps also body-steps/s and sphere-steps/s)
//! varidem plot DIR [--out-dir OUT]  # OUT (default DIR/plots)/energy.png, momentum.png (walls.png)
//! varidem render DIR [--step N] [--out FILE] [--color FIELD] [--view auto|x|y|z|iso]
//!                [--width W] [--height H] [--adapter NAME]
//!                                   # frame N (default: the last) as shaded spheres, PNG
//! ```
//!
//! Errors print one line `error: ...` to stderr and exit with code 1.

/// `println!` that ends the process quietly when the reader of stdout has gone
/// (`varidem check SCENE | head -1`), as Unix tools do, instead of panicking on the
/// broken pipe; another write error is an `error:` line and exit code 1.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            eprintln!("error: writing to stdout: {e}");
            std::process::exit(1);
        }
    }};
}

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};

use varidem::backend::BackendKind;
use varidem::checkpoint::Checkpoint;
use varidem::gpu::context::{list_adapters, AdapterSummary, ADAPTER_ENV};
use varidem::gpu::limits::{LimitsRequest, LIMITS_ENV};
use varidem::gpu::Precision;
use varidem::integrators::IntegratorKind;
use varidem::io::{default_scene, load_scene};
use varidem::model::generators::{
    bonded_block, clump_bed, glass_bed, mesh_floor_bed, settling_bed, HARD_BED_DT, SETTLING_BED_DT,
};
use varidem::model::{RunLength, Scene, SimulationParams};
use varidem::physics::granular::time_step_advice;
use varidem::render::{render_run, ColorField, RenderOptions, View};
use varidem::run::{gpu_options, make_backend, run_with, OutputOptions, RunSummary};
use varidem::Result;

/// Particles in the default `bench` block.
const BENCH_DEFAULT_N: usize = 10_000;
/// Time step of the `bench` block (s): ω h ≈ 0.25 for its stiffest mode.
const BENCH_DT: f64 = 1e-7;
/// Most warm-up steps `bench` takes before timing.
const BENCH_WARMUP: u64 = 10;

/// Discrete element simulation of granular materials and particle-binder composites.
#[derive(Debug, Parser)]
#[command(name = "varidem", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene, writing energy.csv, final.csv and the ParaView time series
    /// (particles.pvd, vtk/) into the output directory.
    Run {
        /// Scene file (TOML). Without it, the built-in torus impact (Baker & Gonzalez
        /// §4.1, scenes/torus-impact.toml) runs.
        scene: Option<PathBuf>,
        /// Output directory (created if needed).
        #[arg(long, value_name = "DIR", default_value = "out")]
        out: PathBuf,
        /// Do not write the ParaView output (DIR/vtk/particles_<step>.vtp and
        /// DIR/particles.pvd).
        #[arg(long)]
        no_vtk: bool,
        /// No progress bar (it is shown only when stderr is a terminal anyway).
        #[arg(long)]
        quiet: bool,
        /// Write a checkpoint every N steps into DIR/checkpoints/
        /// (checkpoint_<step>.vdc), from which `varidem resume` continues the run
        /// [default: the scene's checkpoint_every or checkpoint_interval; 0: none].
        #[arg(long, value_name = "N")]
        checkpoint_every: Option<u64>,
        /// Stop after N steps instead of at the scene's end (`steps` or `t_end`): a short
        /// trial of a scene; run.toml records the shortened run.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        steps: Option<u64>,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Continue a run from a checkpoint to the end of its scene, writing the same
    /// outputs as `run`. Into the run's own directory, energy.csv is cut after the
    /// checkpoint's step and continued; into a new directory, it holds the rows from
    /// the checkpoint's step on.
    Resume {
        /// Checkpoint file (DIR/checkpoints/checkpoint_<step>.vdc).
        checkpoint: PathBuf,
        /// Output directory (created if needed).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Do not write the ParaView output (DIR/vtk/particles_<step>.vtp and
        /// DIR/particles.pvd).
        #[arg(long)]
        no_vtk: bool,
        /// No progress bar (it is shown only when stderr is a terminal anyway).
        #[arg(long)]
        quiet: bool,
        /// Write a checkpoint every N steps [default: the interval of the run that wrote
        /// the checkpoint; 0: none].
        #[arg(long, value_name = "N")]
        checkpoint_every: Option<u64>,
        /// Backend [default: the one that wrote the checkpoint]: auto, cpu or gpu. Only
        /// the same backend, adapter and precision continue the run bit for bit.
        #[arg(long, value_enum)]
        backend: Option<BackendKind>,
        /// GPU kernel precision [default: the checkpoint's].
        #[arg(long, value_enum)]
        precision: Option<Precision>,
        /// GPU adapter: a case-insensitive substring of its name, or a backend (vulkan,
        /// metal, dx12, gl); default $VARIDEM_ADAPTER, else the most capable adapter.
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
    },
    /// Load and validate a scene, and print what it contains.
    Check {
        /// Scene file (TOML).
        scene: PathBuf,
    },
    /// Show the CPU thread count and every GPU adapter with the limits that matter.
    Info,
    /// Time steps of a bonded lattice block (or of a scene) and print the throughput.
    Bench {
        /// Scene file (TOML) to time instead of the bonded block (ignored if --n is given).
        scene: Option<PathBuf>,
        /// Particles in the bonded lattice block (rounded to a near-cubic lattice)
        /// [default: 10000].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        n: Option<u64>,
        /// Timed steps (after the untimed warm-up steps).
        #[arg(long, value_name = "S", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
        steps: u64,
        /// Untimed warm-up steps before the timed ones [default: min(10, S)]; a bed
        /// that should be settled when timed (`hard-bed`, `glass-bed`) needs more.
        #[arg(long, value_name = "W")]
        warmup: Option<u64>,
        /// The generated problem timed with --n (or without a scene): the bonded
        /// block, the granular settling bed (Hertz–Mindlin with history, ±10 % radii,
        /// ~5 contacts per particle), the poured random bed (`poured-bed`, poured once
        /// and cached), the clump bed, or the glass bed with hard contacts
        /// (`hard-bed`) or the Hertz law (`glass-bed`).
        #[arg(long, value_enum, default_value_t = Workload::BondedBlock)]
        workload: Workload,
        /// Write the bed to be timed as LIGGGHTS input into DIR (`bed.data`, `in.bed`:
        /// the same state, materials, walls and time step) and exit without timing;
        /// `bench/peers/liggghts.sh` runs it.
        #[arg(long, value_name = "DIR")]
        export_liggghts: Option<PathBuf>,
        /// Steps profiled after the timed ones, each alone with timestamp queries
        /// around every dispatch: GPU time per kernel family (predict, grid, contacts,
        /// bonds, forces, hard solver) and dispatches per step. 0: none; skipped on
        /// the CPU and on adapters without timestamp queries.
        #[arg(long, value_name = "P", default_value_t = 10)]
        profile_steps: u64,
        /// `poured-bed` only: build the bed of about N spheres by tiling the settled
        /// (cached, else poured) bed of N0 spheres side by side, kx × ky copies with
        /// kx·ky = round(N/N0) (`varidem::bench::tile_bed`: the same packing, contacts
        /// and contact history), instead of pouring N spheres.
        #[arg(long, value_name = "N0", value_parser = clap::value_parser!(u64).range(1..))]
        tile_from: Option<u64>,
        /// Solver of the hard-contact workload (`hard-bed`): nbgs (its default, CPU
        /// only), jacobi or colored (both backends).
        #[arg(long, value_enum)]
        hard_solver: Option<HardSolverArg>,
        /// `[simulation] sort_every` of the timed problem (steps; 0: storage never
        /// sorted): the spatial sort of storage (the CPU backend's at set-up and
        /// rebuilds, the GPU's at set-up), for timing it against none. The results are
        /// the same bits either way.
        #[arg(long, value_name = "K")]
        sort_every: Option<u64>,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Plot a run's energy.csv: energy.png (the energy budget: kinetic, rotational,
    /// each potential, total) and momentum.png (linear and angular momentum) against t;
    /// with walls.csv, walls.png (each wall's load against t).
    Plot {
        /// Output directory of a run (holding energy.csv).
        dir: PathBuf,
        /// Where to write the PNGs (created if needed) [default: DIR/plots].
        #[arg(long, value_name = "OUT")]
        out_dir: Option<PathBuf>,
    },
    /// Draw the particles of one frame of a run as shaded spheres (offscreen, on the
    /// GPU; a software adapter such as lavapipe works) into a PNG.
    Render {
        /// Output directory of a run (frames in DIR/vtk/, or final.csv for the last step).
        dir: PathBuf,
        /// Output step of the frame [default: the last].
        #[arg(long, value_name = "N")]
        step: Option<u64>,
        /// PNG file to write [default: DIR/plots/frame_<step>.png].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Per-particle field mapped onto the colormap (viridis, from its minimum to its
        /// maximum over the frame).
        #[arg(long, value_enum, default_value_t = ColorField::Speed)]
        color: ColorField,
        /// Camera direction: auto looks along the axis in which the particles are
        /// thinnest (if clearly thinner), else iso.
        #[arg(long, value_enum, default_value_t = View::Auto)]
        view: View,
        /// Picture width (pixels).
        #[arg(long, value_name = "W", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=8192))]
        width: u32,
        /// Picture height (pixels).
        #[arg(long, value_name = "H", default_value_t = 768, value_parser = clap::value_parser!(u32).range(1..=8192))]
        height: u32,
        /// GPU adapter: a case-insensitive substring of its name, or a backend (vulkan,
        /// metal, dx12, gl); default $VARIDEM_ADAPTER, else the most capable adapter.
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
    },
}

/// Where to run: shared by `run` and `bench`.
#[derive(Debug, Args)]
struct DeviceArgs {
    /// Backend: auto (the GPU if there is a hardware adapter or one is named, else the
    /// CPU), cpu (the f64 reference) or gpu. A GPU that is not available falls back to
    /// the CPU with a warning.
    #[arg(long, value_enum, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// GPU kernel precision; overrides the scene's [simulation] precision [default:
    /// f32]. f64 needs an adapter with SHADER_F64. The CPU backend is always f64.
    #[arg(long, value_enum)]
    precision: Option<Precision>,
    /// GPU adapter: a case-insensitive substring of its name (see `varidem info`), or a
    /// backend (vulkan, metal, dx12, gl); default $VARIDEM_ADAPTER, else the most
    /// capable adapter.
    #[arg(long, value_name = "NAME")]
    adapter: Option<String>,
}

impl DeviceArgs {
    /// Builds the backend for `scene`, warning about options the CPU backend ignores.
    fn backend(&self, scene: &Scene) -> Result<Box<dyn varidem::backend::Backend>> {
        if self.backend == BackendKind::Cpu {
            if self.precision == Some(Precision::F32) {
                log::warn!(
                    "--precision f32 applies to the GPU backend only: the CPU backend is the f64 reference"
                );
            }
            if let Some(a) = &self.adapter {
                log::warn!("--adapter {a} is ignored by the CPU backend");
            }
        }
        let mut options = gpu_options(scene, self.precision, self.adapter.as_deref());
        path_switches().apply(&mut options);
        make_backend(self.backend, scene, &options)
    }

    /// The backend that goes on from `state` of `scene` (as `varidem resume`), with
    /// `--backend gpu` that cannot run an error, as [`DeviceArgs::backend_exact`].
    fn backend_restored(
        &self,
        scene: &Scene,
        state: &varidem::backend::StateSnapshot,
    ) -> Result<Box<dyn varidem::backend::Backend>> {
        let mut options = gpu_options(scene, self.precision, self.adapter.as_deref());
        path_switches().apply(&mut options);
        if self.backend == BackendKind::Gpu {
            return Ok(Box::new(varidem::gpu::GpuBackend::from_snapshot(
                scene.model.clone(),
                state,
                &options,
            )?));
        }
        let checkpoint = Checkpoint {
            scene: scene.clone(),
            state: state.clone(),
            checkpoint_every: None,
            run_id: None,
            vtk: true,
        };
        varidem::select::resume_backend(
            &checkpoint,
            Some(self.backend),
            self.precision,
            self.adapter.as_deref(),
            &path_switches(),
        )
    }

    /// As [`DeviceArgs::backend`], but `--backend gpu` that cannot run is an error, not
    /// a fallback: a benchmark must measure the backend it names.
    fn backend_exact(&self, scene: &Scene) -> Result<Box<dyn varidem::backend::Backend>> {
        if self.backend == BackendKind::Gpu {
            let mut options = gpu_options(scene, self.precision, self.adapter.as_deref());
            path_switches().apply(&mut options);
            return Ok(Box::new(varidem::gpu::GpuBackend::new(scene, &options)?));
        }
        self.backend(scene)
    }
}

/// The GPU kernel-path switches of A/B measurements, from this process's environment
/// (`VARIDEM_GPU_UNFUSED`, `VARIDEM_GPU_MERGE`, `VARIDEM_GPU_INLINE_BONDS`): the only
/// place they are read.
fn path_switches() -> varidem::gpu::PathSwitches {
    varidem::gpu::PathSwitches::from_lookup(|k| std::env::var(k).ok())
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn describe(scene: &Scene) -> String {
    let m = &scene.model;
    let sim = &scene.simulation;
    let length = match sim.duration {
        RunLength::Steps(n) => format!("{n} steps"),
        RunLength::EndTime(t) => format!("{} steps (t_end = {t} s)", sim.steps()),
    };
    let reserved: u64 = m.inserters.iter().map(|i| u64::from(i.capacity)).sum();
    format!(
        "{}{}{}, {}, {}{}, contact {}; {length} of dt = {} s, integrator {}, energy row every {} steps",
        // Counted as `run` counts them: every sphere, a clump's included.
        plural(m.sphere_count(), "particle"),
        if reserved == 0 {
            String::new()
        } else {
            format!(
                " (of which {reserved} reserved by {})",
                match m.inserters.len() {
                    1 => "1 inserter".to_owned(),
                    k => format!("{k} inserters"),
                }
            )
        },
        if m.clumps.is_empty() {
            String::new()
        } else {
            format!(
                " (of which {} in {})",
                m.sphere_count() - m.particles.len(),
                plural(m.clumps.len(), "clump")
            )
        },
        plural(m.bonds.len(), "bond"),
        plural(m.walls.len(), "wall"),
        if m.meshes.is_empty() {
            String::new()
        } else {
            let triangles: usize = m.meshes.iter().map(|w| w.mesh.triangles.len()).sum();
            let meshes = match m.meshes.len() {
                1 => "1 mesh".to_owned(),
                k => format!("{k} meshes"),
            };
            format!(", {meshes} ({})", plural(triangles, "triangle"))
        },
        if m.contact.is_some() { "on" } else { "off" },
        sim.dt,
        sim.integrator,
        sim.output_every,
    )
}

fn run_command(
    scene: Option<&Path>,
    out: &Path,
    output: &OutputOptions,
    steps: Option<u64>,
    device: &DeviceArgs,
) -> Result<()> {
    let mut scene = match scene {
        Some(path) => load_scene(path)?,
        None => {
            log::info!(
                "no scene given: running the built-in torus impact (scenes/torus-impact.toml)"
            );
            default_scene()
        }
    };
    if let Some(steps) = steps {
        scene.simulation.duration = RunLength::Steps(steps);
    }
    // Before a backend is set up (minutes for a large GPU scene).
    varidem::run::check_out_dir(out)?;
    let mut backend = device.backend(&scene)?;
    let summary = run_with(&scene, backend.as_mut(), out, output)?;
    print_summary(&summary);
    Ok(())
}

/// What `varidem resume` was asked for.
struct ResumeArgs<'a> {
    checkpoint: &'a Path,
    out: &'a Path,
    output: OutputOptions,
    backend: Option<BackendKind>,
    precision: Option<Precision>,
    adapter: Option<&'a str>,
}

fn resume_command(a: &ResumeArgs<'_>) -> Result<()> {
    let checkpoint = Checkpoint::read(a.checkpoint)?;
    // Before a backend is set up: `--out` of another run is refused naming both.
    varidem::run::check_same_run(&checkpoint.scene, checkpoint.run_id, a.out).map_err(|e| {
        varidem::Error::Scene(format!(
            "resuming {}: {}",
            a.checkpoint.display(),
            e.to_string().trim_start_matches("scene: ")
        ))
    })?;
    log::info!(
        "resuming {} at step {} of {} (written by the {} backend)",
        a.checkpoint.display(),
        checkpoint.state.step,
        checkpoint.scene.simulation.steps(),
        checkpoint.state.backend_name
    );
    let mut backend = varidem::select::resume_backend(
        &checkpoint,
        a.backend,
        a.precision,
        a.adapter,
        &path_switches(),
    )?;
    // The run goes on as it ran: its identity, its checkpoint interval and (unless
    // `--no-vtk` now) its VTK setting, so a `--no-vtk` run stays one.
    let output = OutputOptions {
        // The run's own interval, none included (0): not the scene's, which the run
        // may have turned off.
        checkpoint_every: (a.output.checkpoint_every)
            .or(Some(checkpoint.checkpoint_every.unwrap_or(0))),
        vtk: a.output.vtk && checkpoint.vtk,
        run_id: checkpoint.run_id,
        ..a.output
    };
    if !checkpoint.vtk && !a.output.vtk {
        log::debug!("the run was started with --no-vtk");
    } else if !checkpoint.vtk {
        log::info!("the run was started with --no-vtk: it goes on without VTK frames");
    }
    let summary = run_with(&checkpoint.scene, backend.as_mut(), a.out, &output)?;
    print_summary(&summary);
    Ok(())
}

/// A time for people: 12 significant digits, then the shortest form (t = steps · dt
/// prints 3 s, not 3.0000000000000004 s).
fn readable(t: f64) -> f64 {
    format!("{t:.11e}").parse().unwrap_or(t)
}

fn print_summary(summary: &RunSummary) {
    out!(
        "{} steps (t = {} s) of {} particles on the {} backend in {:.3} s: {:.3e} particle-steps/s",
        summary.steps,
        readable(summary.time),
        summary.particles,
        summary.backend,
        summary.wall_time.as_secs_f64(),
        summary.particle_steps_per_second
    );
    out!("energy: {}", summary.energy_csv.display());
    out!("final state: {}", summary.final_csv.display());
    if let Some(pvd) = &summary.pvd {
        out!("paraview: {}", pvd.display());
    }
}

/// `bytes` with a binary-prefixed size alongside.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = n as f64;
    let mut unit = "";
    for u in UNITS {
        if x < 1024.0 {
            break;
        }
        x /= 1024.0;
        unit = u;
    }
    if unit.is_empty() {
        format!("{n} bytes")
    } else {
        format!("{n} bytes ({x:.1} {unit})")
    }
}

fn print_adapter(k: usize, a: &AdapterSummary) {
    out!("  [{k}] {}", a.name);
    let rows = [
        ("backend", a.backend.clone()),
        ("device type", format!("{:?}", a.device_type)),
        ("driver", a.driver.clone()),
        (
            "f64 (SHADER_F64)",
            if a.f64 {
                "yes"
            } else {
                "no (f32 kernels only)"
            }
            .to_owned(),
        ),
        (
            "max storage-buffer binding size",
            bytes(a.max_storage_binding),
        ),
        ("max buffer size", bytes(a.max_buffer)),
        (
            "storage buffers per stage",
            a.max_storage_buffers_per_stage.to_string(),
        ),
        (
            "max invocations per workgroup",
            a.max_invocations_per_workgroup.to_string(),
        ),
        (
            "workgroup memory",
            bytes(u64::from(a.max_workgroup_storage)),
        ),
        (
            "meets varidem's minimum",
            if a.shortfalls.is_empty() {
                "yes".to_owned()
            } else {
                format!("no: {}", a.shortfalls.join("; "))
            },
        ),
    ];
    for (key, value) in rows {
        out!("      {:<33}{value}", format!("{key}:"));
    }
}

fn info_command() {
    out!("varidem {}", env!("CARGO_PKG_VERSION"));
    out!(
        "CPU backend: f64 reference, {} thread(s) (rayon; set RAYON_NUM_THREADS to change)",
        rayon::current_num_threads()
    );
    let adapters = list_adapters();
    if adapters.is_empty() {
        out!("no GPU adapter found: the GPU backend falls back to the CPU");
        out!(
            "hint: without a GPU, install Mesa's software Vulkan driver (lavapipe), e.g. apt-get install mesa-vulkan-drivers"
        );
        return;
    }
    out!(
        "GPU adapters: {} (in order of preference; --adapter NAME|BACKEND or ${ADAPTER_ENV} picks another)",
        adapters.len()
    );
    if let Ok(wanted) = std::env::var(ADAPTER_ENV) {
        out!("{ADAPTER_ENV} = {wanted:?}");
    }
    let p = varidem::gpu::limits::PORTABLE;
    out!(
        "varidem's minimum: {} storage buffers per shader stage, {} per storage binding, {} of workgroup memory, {} invocations per workgroup",
        p.storage_buffers_per_stage,
        bytes(p.storage_binding_bytes),
        bytes(u64::from(p.workgroup_bytes)),
        p.invocations_per_workgroup
    );
    match std::env::var(LIMITS_ENV) {
        Ok(v) => match LimitsRequest::parse(&v) {
            Ok(_) => out!("{LIMITS_ENV} = {v:?}: devices are requested with these limits"),
            Err(e) => out!("{e}"),
        },
        Err(_) => out!(
            "devices are requested with the adapter's own limits ({LIMITS_ENV}=minimum requests varidem's minimum)"
        ),
    }
    for (k, a) in adapters.iter().enumerate() {
        print_adapter(k, a);
    }
}

/// `bench --hard-solver`: [`varidem::model::HardSolver`] by its scene name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum HardSolverArg {
    /// Nonlinear block Gauss–Seidel (sequential: CPU only).
    Nbgs,
    /// Damped block Jacobi.
    Jacobi,
    /// Gauss–Seidel over a colouring of the contact graph.
    Colored,
}

impl HardSolverArg {
    fn solver(self) -> varidem::model::HardSolver {
        use varidem::model::HardSolver as S;
        match self {
            Self::Nbgs => S::Nbgs,
            Self::Jacobi => S::Jacobi,
            Self::Colored => S::Colored,
        }
    }
}

/// Generated problems of `bench`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Workload {
    /// The particle-binder block (`bonded_block`; also `block`).
    #[value(alias = "block")]
    BondedBlock,
    /// The granular settling bed (`settling_bed`).
    SettlingBed,
    /// The settling bed on a floor of about `--n` triangles instead of a plane
    /// (`mesh_floor_bed`): the mesh walls' cost against `settling-bed`.
    MeshBed,
    /// A bed of dimers and trimers (`clump_bed`; `--n` counts spheres).
    ClumpBed,
    /// Glass beads in a box of 8 × 8 columns with hard contacts (`glass_bed`; `--n`
    /// sets the height), stepped at 1e-4 s with the impulse-velocity integrator.
    HardBed,
    /// The same glass bed under the Hertz law, stepped at its advised time step
    /// (`varidem check`'s t_col/20): the comparison for `hard-bed`.
    GlassBed,
    /// A random packing of `--n` spheres (radius 1 mm ± 10 %, Hertz–Mindlin with
    /// history) poured into a box with four side walls until its kinetic energy is
    /// 10⁻⁶ of its peak (`varidem::bench::PouredBed`), stepped from there at t_col/20.
    /// The settled bed is poured once on the CPU and cached (`$VARIDEM_CACHE_DIR`, else
    /// `~/.cache/varidem`).
    PouredBed,
}

/// The settled poured bed of `n` spheres, from the cache or poured now (logging the
/// pour's progress).
fn poured_bed(n: usize) -> Result<Checkpoint> {
    let bed = varidem::bench::PouredBed::new(n);
    let dir = varidem::bench::cache_dir(|k| std::env::var(k).ok());
    let path = dir.join(bed.cache_name());
    if !path.exists() {
        log::warn!(
            "pouring the bed of {n} spheres on the CPU (once; cached in {})",
            path.display()
        );
    }
    let mut last = 0.0;
    let (checkpoint, built) = bed.load_or_build(&dir, |t, fraction| {
        if t >= last + 0.05 {
            last = t;
            log::info!("pour: t = {t:.3} s, kinetic energy {fraction:.3e} of its peak");
        }
    })?;
    out!(
        "bed: {} {} (settled at t = {:.3} s, step {})",
        if built {
            "poured and cached in"
        } else {
            "read from"
        },
        path.display(),
        checkpoint.state.step as f64 * checkpoint.state.dt,
        checkpoint.state.step
    );
    Ok(checkpoint)
}

/// The glass bed of `n` beads settled by `settle` steps of hard contacts on the CPU,
/// then given the Hertz law (restitution 0.5) at rest: the bed `hard-bed` times, for
/// the Hertz model at its own time step.
fn settled_glass_bed(n: usize, settle: u64) -> Result<varidem::model::Model> {
    let scene = Scene {
        simulation: SimulationParams {
            dt: HARD_BED_DT,
            duration: RunLength::Steps(settle),
            integrator: IntegratorKind::ImpulseVelocity,
            output_every: settle.max(1),
            precision: None,
            gpu_max_neighbors: None,
            gpu_bucket_capacity: None,
            sort_every: None,
            checkpoint_every: None,
            trapezoidal: Default::default(),
        },
        model: glass_bed(n, true),
    };
    log::info!("settling the glass bed: {settle} hard-contact steps on the CPU");
    let mut b = varidem::cpu::CpuBackend::new(&scene)?;
    varidem::backend::Backend::advance(&mut b, settle)?;
    let mut model = glass_bed(n, false);
    let p = &b.model().particles;
    model.particles.position.clone_from(&p.position);
    model.particles.rotation.clone_from(&p.rotation);
    Ok(model)
}

/// The scene `bench` times: `scene`, or the generated `workload` of `n` particles if
/// `n` is given or there is no scene. `settle`: the hard-contact steps that settle
/// the `glass-bed` workload's bed first (the `hard-bed` warm-up).
fn bench_scene(
    scene: Option<&Path>,
    n: Option<u64>,
    (steps, tile_from): (u64, Option<u64>),
    workload: Workload,
    settle: u64,
) -> Result<(Scene, Option<varidem::backend::StateSnapshot>)> {
    if tile_from.is_some() && workload != Workload::PouredBed {
        return Err(varidem::Error::Scene(
            "--tile-from tiles the poured bed: it needs --workload poured-bed".into(),
        ));
    }
    match (scene, n) {
        (Some(path), None) => Ok((load_scene(path)?, None)),
        (path, n) => {
            if let Some(path) = path {
                log::warn!(
                    "--n is given: timing the generated {workload:?}, not {}",
                    path.display()
                );
            }
            let n = n.map_or(BENCH_DEFAULT_N, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            });
            // The model is refused before the generator allocates it (its particles
            // alone: the block's bonds depend on its shape, so they are left out of this
            // lower bound); the CPU backend checks what it adds when it is set up.
            varidem::memory_check::check(
                &format!("--n {n}: the generated {workload:?}"),
                varidem::memory_check::model_bytes(n as u64, 0),
            )?;
            if let Some(n0) = tile_from {
                let n0 = usize::try_from(n0).unwrap_or(usize::MAX);
                let tiles = varidem::bench::tile_counts(n, n0);
                varidem::memory_check::check(
                    &format!("--n {n} --tile-from {n0}"),
                    varidem::memory_check::model_bytes((tiles.0 * tiles.1 * n0) as u64, 0),
                )?;
                let base = poured_bed(n0)?;
                let tiled = varidem::bench::tile_bed(&base, tiles)?;
                out!(
                    "bed: {} × {} copies of the settled bed of {n0} spheres: {} spheres",
                    tiles.0,
                    tiles.1,
                    tiled.state.position.len()
                );
                let mut scene = tiled.scene;
                scene.simulation.duration = RunLength::Steps(steps);
                scene.simulation.output_every = steps;
                return Ok((scene, Some(tiled.state)));
            }
            if workload == Workload::PouredBed {
                let checkpoint = poured_bed(n)?;
                let mut scene = checkpoint.scene;
                scene.simulation.duration = RunLength::Steps(steps);
                scene.simulation.output_every = steps;
                return Ok((scene, Some(checkpoint.state)));
            }
            let (model, dt, buckets) = match workload {
                Workload::BondedBlock | Workload::PouredBed => (bonded_block(n)?, BENCH_DT, None),
                // Dense bed: more particles share a hashed grid bucket than in the block.
                Workload::SettlingBed => (settling_bed(n), SETTLING_BED_DT, Some(32)),
                Workload::MeshBed => (mesh_floor_bed(n, n), SETTLING_BED_DT, Some(32)),
                Workload::ClumpBed => (clump_bed(n), SETTLING_BED_DT, Some(32)),
                Workload::HardBed => (glass_bed(n, true), HARD_BED_DT, Some(32)),
                Workload::GlassBed => {
                    let model = settled_glass_bed(n, settle)?;
                    let dt = time_step_advice(&model).map_or(1e-7, |a| a.dt_max);
                    (model, dt, Some(32))
                }
            };
            let integrator = if workload == Workload::HardBed {
                IntegratorKind::ImpulseVelocity
            } else {
                IntegratorKind::Variational
            };
            Ok((
                Scene {
                    simulation: SimulationParams {
                        dt,
                        duration: RunLength::Steps(steps),
                        integrator,
                        output_every: steps,
                        precision: None,
                        gpu_max_neighbors: None,
                        gpu_bucket_capacity: buckets,
                        sort_every: None,
                        checkpoint_every: None,
                        trapezoidal: Default::default(),
                    },
                    model,
                },
                None,
            ))
        }
    }
}

/// `bench --export-liggghts DIR`: the bed `bench` would time, written as LIGGGHTS
/// input (in its settled state for `poured-bed`).
fn export_liggghts_command(
    scene: Option<&Path>,
    (n, tile_from): (Option<u64>, Option<u64>),
    workload: Workload,
    dir: &Path,
) -> Result<()> {
    let (scene, state) = bench_scene(scene, n, (1, tile_from), workload, 0)?;
    let state = match state {
        Some(state) => state,
        None => {
            let mut b = varidem::cpu::CpuBackend::new(&scene)?;
            varidem::backend::Backend::checkpoint_state(&mut b)?
        }
    };
    varidem::io::liggghts::write_liggghts(dir, &scene, &state)?;
    out!(
        "wrote {} and {} ({} spheres, dt = {:e} s)",
        dir.join(varidem::io::liggghts::LIGGGHTS_DATA).display(),
        dir.join(varidem::io::liggghts::LIGGGHTS_INPUT).display(),
        state.position.len(),
        state.dt
    );
    Ok(())
}

fn bench_command(
    scene: Option<&Path>,
    n: Option<u64>,
    (steps, warmup): (u64, Option<u64>),
    workload: Workload,
    (profile_steps, hard_solver, tile_from): (u64, Option<HardSolverArg>, Option<u64>),
    sort_every: Option<u64>,
    device: &DeviceArgs,
) -> Result<()> {
    let warmup = warmup.unwrap_or(steps.min(BENCH_WARMUP));
    let (mut scene, state) = bench_scene(scene, n, (steps, tile_from), workload, warmup)?;
    if sort_every.is_some() {
        scene.simulation.sort_every = sort_every;
    }
    if let Some(solver) = hard_solver {
        match scene.model.contact.as_mut().map(|c| &mut c.law) {
            Some(varidem::model::ContactLaw::Hard(h)) => h.solver = solver.solver(),
            _ => {
                return Err(varidem::Error::Scene(
                    "--hard-solver: the timed problem has no hard contacts (--workload hard-bed)"
                        .into(),
                ))
            }
        }
    }
    let particles = scene.model.sphere_count();
    let bonds = scene.model.bonds.len();
    log::info!("setting up {particles} particle(s), {bonds} bond(s)");
    let mut backend = match &state {
        Some(state) => device.backend_restored(&scene, state)?,
        None => device.backend_exact(&scene)?,
    };
    // The glass bed arrives settled: its warm-up was the hard-contact settling.
    let warmup = if workload == Workload::GlassBed && n.is_some() {
        steps.min(BENCH_WARMUP)
    } else {
        warmup
    };
    log::info!(
        "warm-up: {warmup} step(s) on the {} backend",
        backend.name()
    );
    backend.advance(warmup)?;
    backend.take_solver_rows();
    let builds_before = backend.neighbor_builds()?;
    log::info!("timing {steps} step(s)");
    let start = Instant::now();
    backend.advance(steps)?;
    let seconds = start.elapsed().as_secs_f64();
    let builds = backend
        .neighbor_builds()?
        .zip(builds_before)
        .map(|(a, b)| a - b);
    let rate = |count: usize| {
        if seconds > 0.0 {
            count as f64 * steps as f64 / seconds
        } else {
            f64::INFINITY
        }
    };
    out!("backend: {}", backend.name());
    if let Some((sorts, distance)) = backend.storage_order() {
        out!("storage sorts: {sorts}, mean slot distance to a listed neighbour: {distance:.1}");
    }
    if let Some((sorts, moved, seconds)) = backend.sort_time().filter(|&(k, _, _)| k > 0) {
        out!(
            "sorts during the run: {sorts} ({moved} of them moved particles), {:.3} ms each (read-back, order, moves on the device)",
            1e3 * seconds / sorts as f64
        );
    }
    if let Some(path) = backend.kernel_path() {
        out!("kernel path: {path}");
    }
    out!("particles: {particles}");
    out!("bonds: {bonds}");
    out!("steps: {steps} (after {warmup} warm-up)");
    out!("wall time: {seconds:.6} s");
    out!("particle-steps/s: {:.2e}", rate(particles));
    out!("bond-steps/s: {:.2e}", rate(bonds));
    out!("time step: {:e} s", scene.simulation.dt);
    if seconds > 0.0 {
        out!(
            "simulated seconds per wall second: {:.3e}",
            steps as f64 * scene.simulation.dt / seconds
        );
    }
    let rows = backend.take_solver_rows();
    if !rows.is_empty() {
        let sweeps: u64 = rows.iter().map(|r| u64::from(r.sweeps)).sum();
        let unconverged = rows.iter().filter(|r| !r.converged).count();
        let contacts: u64 = rows.iter().map(|r| u64::from(r.contacts)).sum();
        out!(
            "hard-contact sweeps per step: {:.1} (largest {}, {unconverged} of {} steps unconverged), {:.2} solver contacts per particle",
            sweeps as f64 / rows.len() as f64,
            rows.iter().map(|r| r.sweeps).max().unwrap_or(0),
            rows.len(),
            contacts as f64 / rows.len() as f64 / particles.max(1) as f64
        );
    }
    if !scene.model.clumps.is_empty() {
        // Particle-steps count spheres (a clump's included); bodies are the particles
        // and the clumps.
        let bodies = scene.model.particles.len() + scene.model.clumps.len();
        out!("bodies: {bodies}");
        out!("body-steps/s: {:.2e}", rate(bodies));
        out!("sphere-steps/s: {:.2e}", rate(particles));
    }
    if scene.model.contact.is_some() {
        let frame = backend.frame()?;
        let touching: u64 = frame.contact_count.iter().map(|&c| u64::from(c)).sum();
        out!(
            "contacts per particle (walls included): {:.2}",
            touching as f64 / particles.max(1) as f64
        );
        if workload == Workload::PouredBed {
            // LIGGGHTS's contact/atom counts the pairs alone.
            let walls = varidem::bench::wall_contacts(&scene.model, &frame.particles);
            out!(
                "contacts per particle between spheres: {:.4}",
                touching.saturating_sub(walls) as f64 / particles.max(1) as f64
            );
        }
    }
    if workload == Workload::PouredBed {
        // What the peer prints too (bench/peers/liggghts.sh): the physics agree.
        let ke = varidem::bench::kinetic_energy(&backend.particles()?);
        out!("kinetic energy after the timed steps: {ke:.6e} J");
    }
    if let Some(listed) = backend.listed_neighbors()? {
        out!(
            "listed neighbours per particle: {:.2}",
            listed as f64 / particles.max(1) as f64
        );
    }
    if let Some(b) = builds {
        out!("neighbour-list builds during the timed steps: {b}");
    }
    // Last: the profiled steps move the state on past what is printed above.
    if profile_steps > 0 {
        match backend.kernel_profile(profile_steps)? {
            Some(p) => {
                out!(
                    "gpu time per step: {:.3} ms over {} profiled steps ({:.1} % of their wall time, {:.1} dispatches per step)",
                    1e3 * p.gpu_seconds() / p.steps.max(1) as f64,
                    p.steps,
                    if p.wall_seconds > 0.0 {
                        100.0 * p.gpu_seconds() / p.wall_seconds
                    } else {
                        0.0
                    },
                    p.dispatches_per_step()
                );
                for line in p.lines() {
                    out!("gpu time, {line}");
                }
                if p.untimed_dispatches > 0 {
                    out!(
                        "gpu time: {} dispatches beyond the query set were not timed",
                        p.untimed_dispatches
                    );
                }
            }
            None => out!(
                "gpu time per step: not measured ({})",
                if backend.name().starts_with("cpu") {
                    "the CPU backend"
                } else {
                    "the adapter has no timestamp queries inside passes"
                }
            ),
        }
    }
    Ok(())
}

fn plot_command(dir: &Path, out_dir: Option<&Path>) -> Result<()> {
    let plots = varidem::io::plot::plot_run(dir, out_dir)?;
    out!("{} energy rows plotted", plots.rows);
    out!("energy: {}", plots.energy.display());
    out!("momentum: {}", plots.momentum.display());
    if let Some(walls) = &plots.walls {
        out!("wall loads: {}", walls.display());
    }
    Ok(())
}

fn render_command(
    dir: &Path,
    step: Option<u64>,
    out: Option<&Path>,
    options: &RenderOptions,
) -> Result<()> {
    let s = render_run(dir, step, out, options)?;
    let time = s
        .time
        .map_or(String::new(), |t| format!(" (t = {} s)", readable(t)));
    let (field, lo, hi) = s.color;
    out!(
        "step {}{time}: {} particles from {}",
        s.step,
        s.particles,
        s.source.display()
    );
    out!(
        "colour: {} from {lo:.6e} (dark purple) to {hi:.6e} (yellow); view {}; adapter {}",
        field.name(),
        s.view.name(),
        s.adapter
    );
    out!("picture: {}", s.out.display());
    Ok(())
}

/// A progress bar only for a person watching: not with `--quiet`, not when stderr is
/// redirected (logs, CI).
fn show_progress(quiet: bool) -> bool {
    use std::io::IsTerminal;
    !quiet && std::io::stderr().is_terminal()
}

/// A command line clap cannot take: help and version as clap prints them (exit 0);
/// anything else one `error:` line on stderr and exit code 1, as for every other
/// error (README), with clap's tip folded into the line (issue 49, item 9).
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // A bare `varidem`: one line naming the commands, not the whole help.
            use clap::CommandFactory;
            let commands: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .filter(|c| c != "help")
                .collect();
            eprintln!(
                "error: a command is required: {} (see varidem --help)",
                commands.join(", ")
            );
            ExitCode::from(1)
        }
        _ => {
            eprintln!("error: {} (see varidem --help)", usage_line(&e.to_string()));
            ExitCode::from(1)
        }
    }
}

/// clap's error text as one line: its first line, the arguments it lists under it
/// (the missing ones: `<CHECKPOINT>, --out <DIR>`) and its tips, without the usage.
fn usage_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid command line");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:")).collect();
    let named: Vec<&str> = (rest.iter().copied())
        .filter(|l| l.starts_with('<') || l.starts_with('-'))
        .collect();
    let mut line = first.to_owned();
    if !named.is_empty() {
        line = format!("{}: {}", line.trim_end_matches(':'), named.join(", "));
    }
    for t in rest
        .iter()
        .filter(|l| l.starts_with("tip:") || l.starts_with("[possible values"))
    {
        line.push_str("; ");
        line.push_str(t);
    }
    line
}

fn main() -> ExitCode {
    varidem::gpu::context::quiet_window_system_probe();
    // wgpu probes every graphics API when listing adapters; EGL initialisation failing
    // on a machine without a display is expected, not worth an error line.
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("info,wgpu_hal::gles::egl=off"),
    )
    .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let result = match &cli.command {
        Command::Run {
            scene,
            out,
            no_vtk,
            quiet,
            checkpoint_every,
            steps,
            device,
        } => run_command(
            scene.as_deref(),
            out,
            &OutputOptions {
                vtk: !no_vtk,
                checkpoint_every: *checkpoint_every,
                progress: show_progress(*quiet),
                run_id: None,
            },
            *steps,
            device,
        ),
        Command::Resume {
            checkpoint,
            out,
            no_vtk,
            quiet,
            checkpoint_every,
            backend,
            precision,
            adapter,
        } => resume_command(&ResumeArgs {
            checkpoint,
            out,
            output: OutputOptions {
                vtk: !no_vtk,
                checkpoint_every: *checkpoint_every,
                progress: show_progress(*quiet),
                run_id: None,
            },
            backend: *backend,
            precision: *precision,
            adapter: adapter.as_deref(),
        }),
        Command::Check { scene } => load_scene(scene).map(|s| {
            out!("{}: {}", scene.display(), describe(&s));
            for (k, ins) in s.model.inserters.iter().enumerate() {
                let events = ins.events();
                let batch = match ins.batch {
                    varidem::model::Batch::Rate(r) => format!("{r} per second"),
                    varidem::model::Batch::Count(c) => format!("{c} per event"),
                };
                let what = match ins.clump {
                    Some(t) => format!(
                        "clumps {:?} (bounding radius {:e} m), random attitudes",
                        s.model.clump_types[t as usize].name, ins.radius
                    ),
                    None => match &ins.distribution {
                        Some(d) => format!(
                            "radii from {:e} to {:e} m ({})",
                            d.min_radius(),
                            d.max_radius(),
                            match d {
                                varidem::model::sizes::RadiusDistribution::LogNormal { .. } => {
                                    "lognormal".to_owned()
                                }
                                varidem::model::sizes::RadiusDistribution::Table { by, .. } => {
                                    format!("a table by {}", by.name())
                                }
                            }
                        ),
                        None => format!(
                            "radius {:e} m ± {} %",
                            ins.radius,
                            100.0 * ins.radius_jitter
                        ),
                    },
                };
                let capacity = match ins.live_limit {
                    Some(l) => format!("at most {l} in the system at once"),
                    None => format!("capacity {}", ins.capacity),
                };
                out!(
                    "inserter[{k}]: {events} events every {} s from t = {} to {} s, {batch}, {} in all, {capacity}; {what}",
                    readable(ins.interval),
                    readable(ins.start),
                    readable(ins.event_time(events.saturating_sub(1))),
                    ins.total(),
                );
            }
            if let Some(model) = s.model.rolling() {
                // Each material's μ_r (an [[interaction]] may override a pair's).
                let mus: Vec<String> = (s.model.materials.iter())
                    .map(|m| format!("{} {}", m.name, readable(m.rolling_friction)))
                    .collect();
                out!(
                    "rolling resistance: {} (rolling_friction: {})",
                    model.name(),
                    mus.join(", ")
                );
            }
            if s.model.jkr() {
                // Each material's γ, and the reach of a contact in tension (the skin
                // must exceed it: checked when the scene was read).
                let gammas: Vec<String> = (s.model.materials.iter())
                    .map(|m| format!("{} {}", m.name, readable(m.surface_energy)))
                    .collect();
                out!(
                    "cohesion: jkr (surface_energy: {} J/m²); largest pull-off separation {:.3e} m (skin {:.3e} m)",
                    gammas.join(", "),
                    varidem::physics::jkr::largest_reach(&s.model),
                    s.model.contact.map_or(0.0, |c| c.skin)
                );
            }
            if s.model.breakable() {
                // Each strength term's range over the bonds that set it (issue 47).
                let names = ["tension (N)", "shear (N)", "bend (N m)", "twist (N m)"];
                let terms: Vec<String> = (0..4)
                    .filter_map(|t| {
                        let v: Vec<f64> = (s.model.bond_strength.iter())
                            .filter_map(|b| b.values()[t])
                            .collect();
                        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = v.iter().copied().fold(0.0, f64::max);
                        (!v.is_empty()).then(|| {
                            format!("{} {lo:.4e}–{hi:.4e} on {}", names[t], plural(v.len(), "bond"))
                        })
                    })
                    .collect();
                out!("bond strength: {}", terms.join("; "));
            }
            if let Some(a) = time_step_advice(&s.model) {
                out!(
                    "Hertz collision duration (Campello eq. 50) at v_rel = {:.4e} m/s: t_col = {:.4e} s; recommended dt <= t_col/20 = {:.4e} s; the scene's dt = {:.4e} s gives {:.1} steps per collision{}",
                    a.v_rel,
                    a.collision_duration,
                    a.dt_max,
                    s.simulation.dt,
                    a.collision_duration / s.simulation.dt,
                    if s.simulation.dt > a.dt_max { " (TOO LARGE)" } else { "" }
                );
            }
        }),
        Command::Info => {
            info_command();
            Ok(())
        }
        Command::Bench {
            scene,
            n,
            steps,
            warmup,
            workload,
            export_liggghts,
            profile_steps,
            hard_solver,
            tile_from,
            sort_every,
            device,
        } => match export_liggghts {
            Some(dir) => export_liggghts_command(scene.as_deref(), (*n, *tile_from), *workload, dir),
            None => bench_command(
                scene.as_deref(),
                *n,
                (*steps, *warmup),
                *workload,
                (*profile_steps, *hard_solver, *tile_from),
                *sort_every,
                device,
            ),
        },
        Command::Plot { dir, out_dir } => plot_command(dir, out_dir.as_deref()),
        Command::Render {
            dir,
            step,
            out,
            color,
            view,
            width,
            height,
            adapter,
        } => render_command(
            dir,
            *step,
            out.as_deref(),
            &RenderOptions {
                width: *width,
                height: *height,
                color: *color,
                view: *view,
                adapter: adapter.clone(),
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the error's own formatting.
            eprintln!("error: {}", e.to_string().trim().replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}
