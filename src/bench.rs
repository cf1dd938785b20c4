//! Benchmark workloads that take more than a generator (issue 27): the poured bed, a
//! random packing built the way users build one (spheres rained into a box under
//! gravity until they rest) by the CPU backend once, and kept as a checkpoint in a
//! cache directory so that every later benchmark starts from the same settled state.

use std::path::{Path, PathBuf};

use crate::backend::Backend;
use crate::checkpoint::Checkpoint;
use crate::cpu::CpuBackend;
use crate::error::{Error, Result};
use crate::model::generators::loose_box_bed;
use crate::model::{IntegratorKind, Particles, RunLength, Scene, SimulationParams};

/// Environment variable naming the cache directory of settled beds (default
/// `$XDG_CACHE_HOME/varidem`, else `$HOME/.cache/varidem`, else `varidem-cache`).
pub const CACHE_ENV: &str = "VARIDEM_CACHE_DIR";

/// Version of the poured bed's recipe: part of the cache key, raised whenever the
/// generator or the settling changes, so that a stale cache is never timed.
pub const POURED_BED_VERSION: u32 = 1;

/// The poured bed of `n` spheres: the generator's parameters (the cache key) and how it
/// is settled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PouredBed {
    /// Spheres.
    pub n: usize,
    /// Seed of the loose arrangement ([`loose_box_bed`]).
    pub seed: u64,
    /// Settled when the kinetic energy (translational and rotational) is at most this
    /// fraction of its peak during the pour.
    pub settled_fraction: f64,
    /// Steps between two kinetic-energy checks.
    pub check_every: u64,
    /// Longest pour, in simulated seconds: a bed still moving then is an error.
    pub max_time: f64,
}

impl PouredBed {
    /// The bed of `n` spheres with the benchmark's parameters: seed 27, settled at
    /// 10⁻⁶ of the peak kinetic energy, checked every 200 steps, within 5 s.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            seed: 27,
            settled_fraction: 1e-6,
            check_every: 200,
            max_time: 5.0,
        }
    }

    /// The loose bed as a scene, stepped at the time step `varidem check` advises for it
    /// (t_col/20 for a collision at the speed of a fall from the top of the box), with
    /// the variational integrator.
    pub fn loose_scene(&self) -> Result<Scene> {
        let model = loose_box_bed(self.n, self.seed);
        let dt = crate::physics::granular::time_step_advice(&model)
            .map(|a| a.dt_max)
            .ok_or_else(|| Error::Scene("the poured bed has no particles".into()))?;
        let steps = (self.max_time / dt).ceil() as u64;
        Ok(Scene {
            simulation: SimulationParams {
                dt,
                duration: RunLength::Steps(steps),
                integrator: IntegratorKind::Variational,
                output_every: steps,
                precision: None,
                gpu_max_neighbors: None,
                gpu_bucket_capacity: Some(32),
                trapezoidal: Default::default(),
            },
            model,
        })
    }

    /// The cache file's name: every parameter of the recipe is in it.
    pub fn cache_name(&self) -> String {
        format!(
            "poured-bed-n{}-seed{}-ke{:e}-v{}.ckpt",
            self.n, self.seed, self.settled_fraction, POURED_BED_VERSION
        )
    }

    /// Pours the bed on the CPU backend until it has settled, calling `progress` with
    /// the time and the kinetic energy's fraction of its peak at each check; returns the
    /// checkpoint of the settled state.
    pub fn settle(&self, mut progress: impl FnMut(f64, f64)) -> Result<Checkpoint> {
        let scene = self.loose_scene()?;
        let mut backend = CpuBackend::new(&scene)?;
        let mut peak = 0.0f64;
        loop {
            backend.advance(self.check_every)?;
            let ke = kinetic_energy(&backend.particles()?);
            peak = peak.max(ke);
            let fraction = if peak > 0.0 { ke / peak } else { 0.0 };
            progress(backend.time(), fraction);
            // The peak comes with the first layers' landing; a bed still falling has
            // not reached it, so the fraction is only tested past it.
            if ke < peak && fraction <= self.settled_fraction {
                return Checkpoint::take(&scene, &mut backend, None);
            }
            if backend.time() >= self.max_time {
                return Err(Error::Backend(format!(
                    "the poured bed of {} spheres has not settled after {} s: its kinetic energy is {fraction:.3e} of its peak (settled at {:e})",
                    self.n, self.max_time, self.settled_fraction
                )));
            }
        }
    }

    /// The settled bed: read from `cache_dir` if it is there, else poured
    /// ([`PouredBed::settle`]) and written there. Returns the checkpoint and whether
    /// it was built now.
    pub fn load_or_build(
        &self,
        cache_dir: &Path,
        progress: impl FnMut(f64, f64),
    ) -> Result<(Checkpoint, bool)> {
        let path = cache_dir.join(self.cache_name());
        if path.exists() {
            return Ok((Checkpoint::read(&path)?, false));
        }
        let checkpoint = self.settle(progress)?;
        checkpoint.write(&path)?;
        Ok((checkpoint, true))
    }
}

/// Total kinetic energy of the particles, translational and rotational (J).
pub fn kinetic_energy(p: &Particles) -> f64 {
    (0..p.len())
        .map(|i| {
            0.5 * p.mass[i] * p.velocity[i].length_squared()
                + 0.5 * p.inertia[i] * p.angular_velocity[i].length_squared()
        })
        .sum()
}

/// The cache directory of settled beds: `$VARIDEM_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/varidem`, else `$HOME/.cache/varidem`, else `varidem-cache` in the
/// working directory; `lookup` reads the environment.
pub fn cache_dir(lookup: impl Fn(&str) -> Option<String>) -> PathBuf {
    let set = |k: &str| lookup(k).filter(|v| !v.is_empty());
    if let Some(dir) = set(CACHE_ENV) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = set("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("varidem");
    }
    if let Some(home) = set("HOME") {
        return PathBuf::from(home).join(".cache").join("varidem");
    }
    PathBuf::from("varidem-cache")
}

/// Sphere–plane contacts of `p` with the planes of `model` (a plane closer to a
/// centre than its radius): what `Frame::contact_count` holds beyond the pairs.
pub fn wall_contacts(model: &crate::model::Model, p: &Particles) -> u64 {
    (0..p.len())
        .map(|i| {
            model
                .walls
                .iter()
                .filter(|w| (p.position[i] - w.point).dot(w.normal) < p.radius[i])
                .count() as u64
        })
        .sum()
}
