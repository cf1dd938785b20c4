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
use glam::DVec3;

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
                sort_every: None,
                checkpoint_every: None,
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

/// Tile counts `(kx, ky)` for a bed of about `n` spheres made of copies of a bed of
/// `n0`: `kx · ky = max(1, round(n / n0))`, as near a square as the product allows
/// (`ky` its largest divisor up to its square root).
pub fn tile_counts(n: usize, n0: usize) -> (usize, usize) {
    let t = ((n as f64 / n0.max(1) as f64).round() as usize).max(1);
    let ky = (1..=t)
        .take_while(|k| k * k <= t)
        .filter(|k| t % k == 0)
        .last()
        .unwrap_or(1);
    (t / ky, ky)
}

/// A larger bed from a settled poured bed (issue 43: a 10⁶ bed cannot be poured on
/// the machine that times it): `kx × ky` copies of `checkpoint`'s settled bed side by
/// side in x and y, in one box about `kx` and `ky` times as wide (the floor and the
/// walls at x = 0 and y = 0 kept, the far walls moved out). Copies stand apart by the
/// deepest overlaps of the bed's spheres with the side walls (a few µm for the poured
/// bed), so that no spheres across a seam overlap.
/// Every copy keeps its state (positions, velocities, rotations, forces, tangential
/// springs with partners renumbered), so the packing fraction, the height and the
/// contacts are the bed's. Spheres are numbered copy by copy (x fastest), each copy in
/// the bed's order. At the seams, spheres that leaned on a side wall now face the next
/// copy's spheres across that gap: their springs against the walls that moved away
/// are dropped, and their first step's stored forces still hold the wall's push, so
/// the seams close again during the warm-up. Tiling `(1, 1)` gives the checkpoint back unchanged.
///
/// Only the poured bed's kind of state is tiled: the CPU backend's, with no clumps,
/// inserters, meshes or hard contacts.
pub fn tile_bed(checkpoint: &Checkpoint, (kx, ky): (usize, usize)) -> Result<Checkpoint> {
    let refuse = |what: &str| Err(Error::Scene(format!("tiling a bed: {what}")));
    let (scene, state) = (&checkpoint.scene, &checkpoint.state);
    let model = &scene.model;
    if !state.compensation.is_empty() || !state.device_position.is_empty() {
        return refuse("only an f64 state can be tiled (this one is a GPU f32 state)");
    }
    if !model.clumps.is_empty() || !model.inserters.is_empty() || !model.meshes.is_empty() {
        return refuse("a bed with clumps, inserters or meshes cannot be tiled");
    }
    if !state.hard_impulses.is_empty() || !state.bodies.is_empty() {
        return refuse("a hard-contact or clump state cannot be tiled");
    }
    if kx == 0 || ky == 0 {
        return refuse("the tile counts must be at least 1");
    }
    let far = |axis: DVec3| {
        model
            .walls
            .iter()
            .position(|w| w.normal.abs_diff_eq(-axis, 1e-12) && w.motion == Default::default())
    };
    let (Some(fx), Some(fy)) = (far(DVec3::X), far(DVec3::Y)) else {
        return refuse(
            "the bed has no still far side walls (normals -x and -y) to set the copies' spacing",
        );
    };
    let near = |axis: DVec3| {
        model
            .walls
            .iter()
            .position(|w| w.normal.abs_diff_eq(axis, 1e-12))
    };
    let (nx, ny) = (near(DVec3::X), near(DVec3::Y));
    let (wx, wy) = (model.walls[fx].point.x, model.walls[fy].point.y);
    let n = model.particles.len();
    state.check_len(n)?;
    let (px, py) = (wx, wy);
    let copies = kx * ky;
    let shifts: Vec<(usize, usize, DVec3)> = (0..ky)
        .flat_map(|j| (0..kx).map(move |i| (i, j, DVec3::new(i as f64 * px, j as f64 * py, 0.0))))
        .collect();
    // Odd copies are mirrored (x → W − x in odd columns, y → W − y in odd rows), so
    // that across every seam a sphere that leaned on the side wall meets its own mirror
    // image head on, not a random neighbour: the pair's overlap is twice the wall's.
    let mirror = |i: usize, j: usize| {
        DVec3::new(
            if i % 2 == 1 { -1.0 } else { 1.0 },
            if j % 2 == 1 { -1.0 } else { 1.0 },
            1.0,
        )
    };
    let place = |i: usize, j: usize, x: DVec3| {
        let m = mirror(i, j);
        let base = DVec3::new(
            if m.x < 0.0 { wx } else { 0.0 },
            if m.y < 0.0 { wy } else { 0.0 },
            0.0,
        );
        base + m * x + DVec3::new(i as f64 * px, j as f64 * py, 0.0)
    };
    // A polar vector (velocity) flips with the mirror; an axial one (rotation, Ω)
    // keeps the mirrored component and flips the other two.
    let polar = |i: usize, j: usize, v: DVec3| mirror(i, j) * v;
    let axial = |i: usize, j: usize, v: DVec3| {
        let m = mirror(i, j);
        m.x * m.y * m * v
    };
    // The bed's wall whose contacts land on world wall `w` for copy (i, j): a side of
    // a copy is a real wall only at the box's edge, and a mirrored copy's near and far
    // sides are the bed's far and near walls.
    let source = |i: usize, j: usize, w: usize| -> Option<usize> {
        let side = |k: usize, count: usize, near: Option<usize>, far: usize| {
            let (lo, hi) = if k % 2 == 1 {
                (Some(far), near)
            } else {
                (near, Some(far))
            };
            if Some(w) == near {
                if k == 0 {
                    lo
                } else {
                    None
                }
            } else if k + 1 == count {
                hi
            } else {
                None
            }
        };
        if Some(w) == nx || w == fx {
            side(i, kx, nx, fx)
        } else if Some(w) == ny || w == fy {
            side(j, ky, ny, fy)
        } else {
            Some(w)
        }
    };
    let tile = |v: &[DVec3], f: &dyn Fn(usize, usize, DVec3) -> DVec3| -> Vec<DVec3> {
        shifts
            .iter()
            .flat_map(|&(i, j, _)| v.iter().map(move |&x| f(i, j, x)))
            .collect()
    };

    let mut out = checkpoint.clone();
    let mut particles = crate::model::Particles::default();
    for &(i, j, _) in &shifts {
        let mut copy = model.particles.clone();
        for x in &mut copy.position {
            *x = place(i, j, *x);
        }
        for v in &mut copy.velocity {
            *v = polar(i, j, *v);
        }
        for a in copy.rotation.iter_mut().chain(&mut copy.angular_velocity) {
            *a = axial(i, j, *a);
        }
        particles.extend(&copy);
    }
    out.scene.model.particles = particles;
    out.scene.model.walls[fx].point.x = (kx - 1) as f64 * px + wx;
    out.scene.model.walls[fy].point.y = (ky - 1) as f64 * py + wy;

    let s = &mut out.state;
    s.position = tile(&state.position, &place);
    s.velocity = tile(&state.velocity, &polar);
    s.rotation = tile(&state.rotation, &axial);
    s.angular_velocity = tile(&state.angular_velocity, &axial);
    s.removed = (0..copies)
        .flat_map(|c| state.removed.iter().map(move |&i| i + (c * n) as u32))
        .collect();
    if let Some(c) = &state.contacts {
        let walls = model.walls.len();
        let slots = c.slots as usize;
        let no = crate::physics::granular::NO_PARTNER;
        let mut t = c.clone();
        let rows = c.ids.len();
        t.ids = (0..copies)
            .flat_map(|k| c.ids.iter().map(move |&i| i + (k * n) as u32))
            .collect();
        t.partner = (0..copies)
            .flat_map(|k| {
                c.partner
                    .iter()
                    .map(move |&p| if p == no { no } else { p + (k * n) as u32 })
            })
            .collect();
        t.spring = tile(&c.spring, &polar);
        debug_assert_eq!(t.partner.len(), copies * rows * slots);
        // A copy keeps its springs against the walls still beside it: world wall `w`
        // of copy (i, j) holds the spring of the bed's wall `source(i, j, w)`.
        t.wall_spring = shifts
            .iter()
            .flat_map(|&(i, j, _)| {
                (0..rows).flat_map(move |p| {
                    (0..walls).map(move |w| {
                        source(i, j, w)
                            .map_or(DVec3::ZERO, |b| polar(i, j, c.wall_spring[p * walls + b]))
                    })
                })
            })
            .collect();
        t.force = tile(&c.force, &polar);
        t.moment = tile(&c.moment, &axial);
        t.energy = (0..copies).flat_map(|_| c.energy.iter().copied()).collect();
        t.mesh_key = (0..copies)
            .flat_map(|_| c.mesh_key.iter().copied())
            .collect();
        t.mesh_spring = tile(&c.mesh_spring, &polar);
        // Each wall's load from the copies still beside it, moments about the origin:
        // a copy's contact points are `place`d, so its moment is the mirrored one plus
        // that of its force at the image of the bed's origin.
        t.wall_load = (0..c.wall_load.len())
            .map(|w| {
                shifts
                    .iter()
                    .fold([DVec3::ZERO; 2], |[af, am], &(i, j, _)| {
                        match source(i, j, w) {
                            Some(b) if b < c.wall_load.len() => {
                                let [f, m] = c.wall_load[b];
                                let f = polar(i, j, f);
                                [
                                    af + f,
                                    am + axial(i, j, m) + place(i, j, DVec3::ZERO).cross(f),
                                ]
                            }
                            _ => [af, am],
                        }
                    })
            })
            .collect();
        s.contacts = Some(t);
    }
    Ok(out)
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
