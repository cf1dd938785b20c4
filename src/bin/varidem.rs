//! `varidem`: run or check a scene from the command line.
//!
//! ```text
//! varidem run [SCENE] [--out DIR] [--backend cpu]   # no SCENE: the built-in torus impact
//! varidem check SCENE                               # parse and validate, print counts
//! ```
//!
//! Errors print one line `error: ...` to stderr and exit with code 1.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use varidem::backend::BackendKind;
use varidem::io::{default_scene, load_scene};
use varidem::model::{Duration, Scene};
use varidem::run::{make_backend, run};
use varidem::Result;

/// Discrete element simulation of granular materials and particle-binder composites.
#[derive(Debug, Parser)]
#[command(name = "varidem", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene, writing energy.csv and final.csv into the output directory.
    Run {
        /// Scene file (TOML). Without it, the built-in torus impact (Baker & Gonzalez
        /// §4.1, scenes/torus-impact.toml) runs.
        scene: Option<PathBuf>,
        /// Output directory (created if needed).
        #[arg(long, value_name = "DIR", default_value = "out")]
        out: PathBuf,
        /// Backend to run on.
        #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
        backend: BackendKind,
    },
    /// Load and validate a scene, and print what it contains.
    Check {
        /// Scene file (TOML).
        scene: PathBuf,
    },
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
        Duration::Steps(n) => format!("{n} steps"),
        Duration::EndTime(t) => format!("{} steps (t_end = {t} s)", sim.steps()),
    };
    format!(
        "{}, {}, {}, contact {}; {length} of dt = {} s, integrator {}, energy row every {} steps",
        plural(m.particles.len(), "particle"),
        plural(m.bonds.len(), "bond"),
        plural(m.walls.len(), "wall"),
        if m.contact.is_some() { "on" } else { "off" },
        sim.dt,
        sim.integrator,
        sim.output_every,
    )
}

fn run_command(scene: Option<&Path>, out: &Path, backend: BackendKind) -> Result<()> {
    let scene = match scene {
        Some(path) => load_scene(path)?,
        None => {
            log::info!(
                "no scene given: running the built-in torus impact (scenes/torus-impact.toml)"
            );
            default_scene()
        }
    };
    let mut backend = make_backend(backend, &scene)?;
    let summary = run(&scene, backend.as_mut(), out)?;
    println!(
        "{} steps (t = {} s) of {} particles on the {} backend in {:.3} s: {:.3e} particle-steps/s",
        summary.steps,
        summary.time,
        summary.particles,
        summary.backend,
        summary.wall_time.as_secs_f64(),
        summary.particle_steps_per_second
    );
    println!("energy: {}", summary.energy_csv.display());
    println!("final state: {}", summary.final_csv.display());
    Ok(())
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run {
            scene,
            out,
            backend,
        } => run_command(scene.as_deref(), out, *backend),
        Command::Check { scene } => load_scene(scene).map(|s| {
            println!("{}: {}", scene.display(), describe(&s));
        }),
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
