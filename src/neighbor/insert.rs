//! Particle insertion at run time (`[[inserter]]`, issue 26): at each event, the
//! reserved particles next in line are placed at random spots of the inserter's region
//! where they overlap no particle, plane or mesh, and wake up.
//!
//! Both backends call the same code with the state they hold, so insertion is the same
//! on both. Every event draws its random numbers from its own ChaCha stream (the seed
//! and the event's index), so a resumed run needs only the counts of inserted and
//! skipped particles ([`InsertCount`], in the checkpoint) to go on as if it had not
//! stopped. A particle that finds no free spot in [`Inserter::attempts`] tries is
//! skipped, counted and reported; its reserved particle waits for the next event.

use std::collections::HashMap;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::integrators::bodies::Bodies;
use crate::math::rodrigues::rotate;
use crate::math::triangle::closest_point;
use crate::model::{
    ClumpType, Inserter, Model, Particles, Region, Wall, FLAG_DORMANT, FLAG_REMOVED,
};
use crate::physics::mesh::MeshSurfaces;

/// What one inserter has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InsertCount {
    /// Particles inserted (the reserved particles `first .. first + inserted` are
    /// awake).
    pub inserted: u64,
    /// Particles that found no free spot, or no reserved particle left.
    pub skipped: u64,
}

/// One particle or clump an event inserts: its id and initial state (no spin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    /// The reserved particle's id, or with `clump`, the reserved clump's index in
    /// `Model::clumps`.
    pub id: u32,
    /// Centre (m): a clump's centre of mass.
    pub position: DVec3,
    /// Velocity (m/s).
    pub velocity: DVec3,
    /// Attitude α: a clump's, uniformly random; zero for a sphere.
    pub rotation: DVec3,
    /// A clump, not a particle.
    pub clump: bool,
}

/// The clumps of a run as insertion needs them: their types, and each clump's type
/// and first sphere (particle id; a model's clumps are expanded into spheres after its
/// particles, `integrators::bodies::Bodies::expand`).
#[derive(Clone, Debug, Default)]
struct ClumpSpheres {
    types: Vec<ClumpType>,
    kind: Vec<u32>,
    first: Vec<u32>,
}

impl ClumpSpheres {
    /// Those of `model`, its clumps already expanded into its particles.
    fn new(model: &Model) -> Self {
        let kind: Vec<u32> = model.clumps.iter().map(|c| c.kind).collect();
        let count = |k: u32| model.clump_types[k as usize].spheres.len() as u32;
        let members: u32 = kind.iter().map(|&k| count(k)).sum();
        let mut next = (model.particles.len() as u32).saturating_sub(members);
        let first = kind
            .iter()
            .map(|&k| {
                let f = next;
                next += count(k);
                f
            })
            .collect();
        Self {
            types: model.clump_types.clone(),
            kind,
            first,
        }
    }

    /// Clump `c`'s spheres: particle ids and offsets with radii.
    fn spheres(&self, c: usize) -> impl Iterator<Item = (usize, DVec3, f64)> + '_ {
        let t = &self.types[self.kind[c] as usize];
        let first = self.first[c] as usize;
        t.spheres
            .iter()
            .enumerate()
            .map(move |(l, s)| (first + l, s.offset, s.radius))
    }
}

/// A uniformly random attitude from three uniform numbers in `[0, 1)` (Shoemake's
/// unit quaternion), as a rescaled Rodrigues vector.
fn random_attitude(u: [f64; 3]) -> DVec3 {
    let tau = std::f64::consts::TAU;
    let (a, b) = ((1.0 - u[0]).sqrt(), u[0].sqrt());
    let q = glam::DQuat::from_xyzw(
        a * (tau * u[1]).sin(),
        a * (tau * u[1]).cos(),
        b * (tau * u[2]).sin(),
        b * (tau * u[2]).cos(),
    );
    // q and −q are the same turn: take w ≥ 0, a turn of at most π.
    let q = if q.w < 0.0 { -q } else { q };
    crate::math::rodrigues::from_quaternion(q).unwrap_or_default()
}

/// The insertion state of a run: the inserters, their counts, and the walls and
/// meshes placements are tested against.
#[derive(Clone, Debug)]
pub struct Insertion {
    inserters: Vec<Inserter>,
    /// Counts per inserter.
    pub counts: Vec<InsertCount>,
    walls: Vec<Wall>,
    surfaces: Option<MeshSurfaces>,
    clumps: ClumpSpheres,
    dt: f64,
    /// What the set-up event inserted (a new run's event at its first step), for the
    /// backend to set the inserted clumps' bodies.
    pub initial: Vec<Placed>,
}

impl Insertion {
    /// The insertion state of `model`'s inserters at the start of a run with time step
    /// `dt`; `None` without inserters.
    pub fn new(model: &Model, dt: f64) -> Option<Self> {
        (!model.inserters.is_empty()).then(|| Self {
            inserters: model.inserters.clone(),
            counts: vec![InsertCount::default(); model.inserters.len()],
            walls: model.walls.clone(),
            surfaces: (!model.meshes.is_empty()).then(|| MeshSurfaces::new(&model.meshes)),
            clumps: ClumpSpheres::new(model),
            dt,
            initial: Vec::new(),
        })
    }

    /// The insertion state of a run of `model` set up at step `step` (`None` without
    /// inserters): a restored run's (`restored`: its counts and removed particles) wakes
    /// the particles its counts say were inserted; a new run's events at `step` happen
    /// now, before the first force evaluation.
    pub fn set_up(
        model: &mut Model,
        dt: f64,
        step: u64,
        restored: Option<(&[InsertCount], &[u32])>,
    ) -> Result<Option<Self>, String> {
        let Some(mut ins) = Self::new(model, dt) else {
            return Ok(None);
        };
        match restored {
            Some((counts, removed)) => ins.restore(counts, removed, &mut model.particles)?,
            None if ins.due(step) => {
                let placed = ins.insert(step, &model.particles);
                ins.wake(&placed, &mut model.particles);
                ins.initial = placed;
            }
            None => {}
        }
        Ok(Some(ins))
    }

    /// Sets the counts of a restored run and wakes the particles they say were
    /// inserted in `particles` (a model's, all reserved ones dormant), those among
    /// `removed` (ids that left the domain since) staying removed. A count beyond an
    /// inserter's capacity is an error naming it.
    fn restore(
        &mut self,
        counts: &[InsertCount],
        removed: &[u32],
        particles: &mut Particles,
    ) -> Result<(), String> {
        if counts.len() != self.inserters.len() {
            return Err(format!(
                "{} insertion counts for {} inserters",
                counts.len(),
                self.inserters.len()
            ));
        }
        for (q, (ins, c)) in self.inserters.iter().zip(counts).enumerate() {
            if c.inserted > u64::from(ins.capacity) {
                return Err(format!(
                    "inserter[{q}]: {} inserted, more than its capacity {}",
                    c.inserted, ins.capacity
                ));
            }
            for k in ins.first as usize..ins.first as usize + c.inserted as usize {
                if ins.clump.is_some() {
                    for (i, _, _) in self.clumps.spheres(k) {
                        particles.flags[i] &= !(FLAG_DORMANT | FLAG_REMOVED);
                    }
                } else {
                    particles.flags[k] &= !(FLAG_DORMANT | FLAG_REMOVED);
                }
            }
        }
        for &i in removed {
            particles.flags[i as usize] |= FLAG_REMOVED;
        }
        self.counts = counts.to_vec();
        Ok(())
    }

    /// Whether an event happens at the end of step `step` (at step 0: before the
    /// first step).
    pub fn due(&self, step: u64) -> bool {
        self.inserters.iter().any(|ins| {
            let before = if step == 0 {
                0
            } else {
                ins.events_by(step - 1, self.dt)
            };
            ins.events_by(step, self.dt) > before
        })
    }

    /// The first step after `step` at whose end an event happens.
    pub fn next_event(&self, step: u64) -> Option<u64> {
        self.inserters
            .iter()
            .filter_map(|ins| {
                let k = ins.events_by(step, self.dt);
                (k < ins.events()).then(|| ins.event_step(k, self.dt))
            })
            .min()
    }

    /// The reserved ids the events after step `step` may place, in the order they come
    /// (event step, then inserter): every id of the next event, then of the later ones
    /// while fewer than `budget` ids are listed. An event places the next ids of its
    /// inserter's range (`first + inserted`, ...; skipped spheres take none), at most its
    /// batch and never past its capacity. A compacting backend (issue 44) keeps these
    /// stored ahead of their events. Spheres only: a clump inserter's ids are bodies.
    pub fn upcoming(&self, step: u64, budget: usize) -> Vec<u32> {
        // Per inserter: its next event and the next id it would take.
        let mut next: Vec<(u64, u64)> = (self.inserters.iter().zip(&self.counts))
            .map(|(ins, c)| (ins.events_by(step, self.dt), c.inserted))
            .collect();
        let mut ids = Vec::new();
        let mut first_step = None;
        loop {
            let due = (self.inserters.iter().zip(&next))
                .filter(|(ins, &(k, _))| k < ins.events())
                .map(|(ins, &(k, _))| ins.event_step(k, self.dt))
                .min();
            let Some(at) = due else { break };
            let full = (self.inserters.iter().zip(&next))
                .all(|(ins, &(_, taken))| taken >= u64::from(ins.capacity));
            if full {
                break;
            }
            if first_step.is_some_and(|f| f != at) && ids.len() >= budget {
                break;
            }
            first_step.get_or_insert(at);
            for (ins, (k, taken)) in self.inserters.iter().zip(next.iter_mut()) {
                if *k < ins.events() && ins.event_step(*k, self.dt) == at {
                    let end = (*taken + ins.batch_size(*k)).min(u64::from(ins.capacity));
                    ids.extend((*taken..end).map(|t| ins.first + t as u32));
                    *taken = end.max(*taken);
                    *k += 1;
                }
            }
        }
        ids
    }

    /// Runs the events due at the end of step `step` on the state `particles` (flags
    /// as on the device: removals and dormancy), returning the particles to wake, in
    /// inserter then id order. The counts are updated; skipped particles are logged.
    pub fn insert(&mut self, step: u64, particles: &Particles) -> Vec<Placed> {
        let removed = |ids: std::ops::Range<u32>| {
            (particles.flags[ids.start as usize..ids.end as usize].iter())
                .filter(|&&f| f & FLAG_REMOVED != 0)
                .count() as u64
        };
        self.insert_with(step, particles, |i| particles.radius[i], removed)
    }

    /// [`Insertion::insert`] on particles stored in any order (or only some of them:
    /// those in the system), the reserved particle of id `i` having radius
    /// `radius(i)`: which spots are free does not depend on the order. `removed(ids)`
    /// counts the particles of `ids` (inserted ones) that have left the system, for the
    /// inserters with a live limit ([`Inserter::live_limit`]).
    pub fn insert_with(
        &mut self,
        step: u64,
        particles: &Particles,
        radius: impl Fn(usize) -> f64,
        removed: impl Fn(std::ops::Range<u32>) -> u64,
    ) -> Vec<Placed> {
        let t = step as f64 * self.dt;
        let walls: Vec<Wall> = self
            .walls
            .iter()
            .map(|w| w.placed(&w.motion.pose(t)))
            .collect();
        if let Some(s) = &mut self.surfaces {
            s.place(t);
        }
        let mut placed = Vec::new();
        for q in 0..self.inserters.len() {
            let ins = &self.inserters[q];
            let first = if step == 0 {
                0
            } else {
                ins.events_by(step - 1, self.dt)
            };
            let last = ins.events_by(step, self.dt);
            if first == last {
                continue;
            }
            let mut free = FreeSpace::new(ins, particles, &walls, self.surfaces.as_ref());
            let clumps = &self.clumps;
            // Its particles in the system now, for a live limit.
            let inserted = self.counts[q].inserted;
            let mut live = match ins.live_limit {
                Some(_) => inserted - removed(ins.first..ins.first + inserted as u32),
                None => 0,
            };
            let limit = ins.live_limit.map_or(u64::MAX, u64::from);
            for k in first..last {
                let count = &mut self.counts[q];
                let (wanted, before) = (ins.batch_size(k), placed.len());
                // Stream 0 is the seed's; event k draws from stream k + 1.
                let mut rng = ChaCha8Rng::seed_from_u64(ins.seed);
                rng.set_stream(k + 1);
                let mut skipped = 0;
                for l in 0..wanted {
                    if count.inserted >= u64::from(ins.capacity) || live >= limit {
                        skipped += 1;
                        continue;
                    }
                    let id = ins.first + count.inserted as u32;
                    let spot = if ins.clump.is_some() {
                        // A clump: its centre where its bounding ball fits the region,
                        // at a random attitude; every sphere free.
                        let spheres = |x: DVec3, a: DVec3| {
                            clumps
                                .spheres(id as usize)
                                .map(move |(_, o, s)| (x + rotate(a, o), s))
                        };
                        (0..ins.attempts)
                            .map(|_| {
                                let x = ins.region.sample(ins.radius, rng.random());
                                (x, random_attitude(rng.random()))
                            })
                            .find(|&(x, a)| spheres(x, a).all(|(y, s)| free.is_free(y, s)))
                            .map(|(x, a)| {
                                for (y, s) in spheres(x, a) {
                                    free.add(y, s);
                                }
                                (x, a)
                            })
                    } else if let Region::Grid { .. } = ins.region {
                        // A grid: the l-th sphere of the event on site l, if free.
                        let r = radius(id as usize);
                        let x = ins.region.site(l);
                        free.is_free(x, r).then(|| {
                            free.add(x, r);
                            (x, DVec3::ZERO)
                        })
                    } else {
                        let r = radius(id as usize);
                        (0..ins.attempts)
                            .map(|_| ins.region.sample(r, rng.random()))
                            .find(|&x| free.is_free(x, r))
                            .map(|x| {
                                free.add(x, r);
                                (x, DVec3::ZERO)
                            })
                    };
                    match spot {
                        Some((x, a)) => {
                            let mut velocity = ins.velocity;
                            if ins.velocity_perturbation != DVec3::ZERO {
                                let u: [f64; 3] = rng.random();
                                let u = DVec3::from_array(u);
                                velocity += ins.velocity_perturbation * (2.0 * u - DVec3::ONE);
                            }
                            placed.push(Placed {
                                id,
                                position: x,
                                velocity,
                                rotation: a,
                                clump: ins.clump.is_some(),
                            });
                            count.inserted += 1;
                            live += 1;
                        }
                        None => skipped += 1,
                    }
                }
                count.skipped += skipped;
                // A live limit binding is the inserter working as asked: not a warning.
                let limited = live >= limit && count.inserted < u64::from(ins.capacity);
                // A grid site still held by the last layer is the inflow at work (the
                // end-of-run total reports it).
                let grid = matches!(ins.region, Region::Grid { .. });
                if skipped > 0 && grid && !limited {
                    log::debug!(
                        "inserter[{q}] at step {step}: {skipped} of {wanted} grid sites taken, skipped"
                    );
                } else if skipped > 0 && limited {
                    log::debug!(
                        "inserter[{q}] at step {step}: {skipped} of {wanted} skipped, its capacity of {limit} particles in the system reached"
                    );
                } else if skipped > 0 {
                    log::warn!(
                        "inserter[{q}] at step {step} (t = {t:.6e} s): {} of {wanted} particles inserted, {skipped} skipped ({})",
                        placed.len() - before,
                        if count.inserted >= u64::from(ins.capacity) {
                            "its capacity is used up"
                        } else if live >= limit {
                            "its capacity of particles in the system is reached"
                        } else {
                            "no free spot in the region"
                        }
                    );
                }
            }
        }
        placed
    }
}

impl Insertion {
    /// The particles `placed` wakes, with their state: a particle itself; a clump its
    /// spheres, at `x + R(α)ρ`, moving with the body (no spin).
    pub fn woken(&self, placed: &[Placed]) -> Vec<Placed> {
        let mut out = Vec::new();
        for p in placed {
            if p.clump {
                for (i, o, _) in self.clumps.spheres(p.id as usize) {
                    out.push(Placed {
                        id: i as u32,
                        position: p.position + rotate(p.rotation, o),
                        clump: false,
                        ..*p
                    });
                }
            } else {
                out.push(*p);
            }
        }
        out
    }

    /// Wakes the `placed` particles and clumps' spheres in `particles`: their state,
    /// and no longer dormant.
    pub fn wake(&self, placed: &[Placed], particles: &mut Particles) {
        self.wake_in(placed, particles, |i| i);
    }

    /// [`Insertion::wake`] of particles stored apart from their ids: id `i` in slot
    /// `slot(i)` ([`crate::model::Layout`]).
    pub fn wake_in(
        &self,
        placed: &[Placed],
        particles: &mut Particles,
        slot: impl Fn(usize) -> usize,
    ) {
        for p in self.woken(placed) {
            let i = slot(p.id as usize);
            particles.position[i] = p.position;
            particles.velocity[i] = p.velocity;
            particles.rotation[i] = p.rotation;
            particles.angular_velocity[i] = DVec3::ZERO;
            particles.flags[i] &= !(FLAG_DORMANT | FLAG_REMOVED);
        }
    }
}

/// What an inserter's region may collide with: the particles, planes and mesh
/// triangles near it, with a hash grid over the particles.
struct FreeSpace<'a> {
    cell: f64,
    grid: HashMap<[i64; 3], Vec<(DVec3, f64)>>,
    walls: &'a [Wall],
    triangles: Vec<[DVec3; 3]>,
}

impl<'a> FreeSpace<'a> {
    fn new(
        ins: &Inserter,
        particles: &Particles,
        walls: &'a [Wall],
        surfaces: Option<&MeshSurfaces>,
    ) -> Self {
        let r_ins = ins.max_radius;
        let awake = |i: usize| particles.flags[i] & FLAG_REMOVED == 0;
        let r_other = (0..particles.len())
            .filter(|&i| awake(i))
            .map(|i| particles.radius[i])
            .fold(r_ins, f64::max);
        let (lo, hi) = ins.region.bounds(r_ins);
        let near = |x: DVec3, r: f64| {
            let pad = DVec3::splat(r + r_ins);
            x.cmpge(lo - pad).all() && x.cmple(hi + pad).all()
        };
        let mut space = Self {
            cell: r_ins + r_other,
            grid: HashMap::new(),
            walls,
            triangles: Vec::new(),
        };
        for i in (0..particles.len()).filter(|&i| awake(i)) {
            let (x, r) = (particles.position[i], particles.radius[i]);
            if near(x, r) {
                space.add(x, r);
            }
        }
        if let Some(s) = surfaces {
            let pad = DVec3::splat(r_ins);
            space.triangles = (0..s.triangles.len() as u32)
                .map(|t| s.corners(t))
                .filter(|c| {
                    let (a, b) = (c[0].min(c[1]).min(c[2]), c[0].max(c[1]).max(c[2]));
                    a.cmple(hi + pad).all() && b.cmpge(lo - pad).all()
                })
                .collect();
        }
        space
    }

    fn key(&self, x: DVec3) -> [i64; 3] {
        (x / self.cell).floor().as_i64vec3().to_array()
    }

    fn add(&mut self, x: DVec3, r: f64) {
        let k = self.key(x);
        self.grid.entry(k).or_default().push((x, r));
    }

    /// Whether a sphere at `x` of radius `r` touches nothing: every particle at least
    /// `r + r_j` away, every plane at least `r` on its inner side, every triangle at
    /// least `r` away.
    fn is_free(&self, x: DVec3, r: f64) -> bool {
        if self.walls.iter().any(|w| w.distance(x) < r) {
            return false;
        }
        if self
            .triangles
            .iter()
            .any(|&c| closest_point(x, c).0.distance_squared(x) < r * r)
        {
            return false;
        }
        let k = self.key(x);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let c = [k[0] + dx, k[1] + dy, k[2] + dz];
                    if let Some(v) = self.grid.get(&c) {
                        if v.iter()
                            .any(|&(y, s)| y.distance_squared(x) < (r + s) * (r + s))
                        {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}

/// The bodies of the clumps `insertion` inserted when the run was set up, in `bodies`
/// (every backend's host copy) and in `model`'s clump list (what a backend uploads):
/// dormancy from the spheres' flags (a restore woke the inserted ones), and the set-up
/// event's clumps at their places.
pub fn wake_bodies(insertion: Option<&Insertion>, bodies: &mut Bodies, model: &mut Model) {
    bodies.sync_dormant(&model.particles);
    for q in insertion
        .iter()
        .flat_map(|ins| &ins.initial)
        .filter(|q| q.clump)
    {
        bodies.wake(
            q.id as usize,
            q.position,
            q.velocity,
            q.rotation,
            model.gravity,
        );
        let c = &mut model.clumps[q.id as usize];
        c.position = q.position;
        c.velocity = q.velocity;
        c.rotation = q.rotation;
        c.angular_velocity = DVec3::ZERO;
    }
}
