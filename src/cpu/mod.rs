//! The CPU reference backend: `f64`, multi-threaded with rayon, deterministic.
//!
//! One step runs the same kernels the GPU backend dispatches, under the same names:
//! `integrate_predict` (which also forms the contact sides of granular models) →
//! (neighbour-list update) → `bond_forces` → granular pairs → `particle_forces`
//! (gather of bond results through the incidence list, contacts, walls, field), with
//! `integrate_correct` applied to each particle in the gather as soon as its force is
//! complete (one pass over the particles fewer; the same bits). Every reduction runs in
//! a fixed order (bond id, neighbour id), so results do not depend on the number of
//! threads.

mod granular;

pub use granular::{History, PairTables, NO_PARTNER};

use glam::DVec3;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::backend::{Backend, Frame};
use crate::backend::{BackendKind, ContactState, StateSnapshot};
use crate::diagnostics::{self, Diagnostics, Potentials};
use crate::error::{Error, Fault, Result};
use crate::integrators::{self, Body, IntegratorKind, Kinematics, StepFault, Trapezoidal};
use crate::model::Precision;
use crate::model::{
    ContactLaw, Incidence, Model, Particles, Scene, FLAG_HELD, FLAG_NO_ROTATION, FLAG_PENDULUM,
    FLAG_REMOVED,
};
use crate::neighbor::{self, NeighborList};
use crate::physics::{self, contact, field, BondResult};

/// Below this many items a kernel runs on the calling thread: waking the rayon pool
/// costs more than it saves. Results are identical either way (each item is computed
/// independently and written to its own slot).
const PAR_THRESHOLD: usize = 2048;
/// Minimum items per rayon task.
const MIN_CHUNK: usize = 256;

/// Runs `f` for every index on its slot `out[i]`, in place: the CPU analogue of a
/// one-invocation-per-item GPU dispatch.
fn dispatch_into<T: Send>(out: &mut [T], f: impl Fn(usize, &mut T) + Sync + Send) {
    if out.len() < PAR_THRESHOLD {
        for (i, o) in out.iter_mut().enumerate() {
            f(i, o);
        }
    } else {
        out.par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(i, o)| f(i, o));
    }
}

/// A run of particles' force records (with `E`, further outputs of the gather) from
/// index `lo`, and their velocities `v`, `Ω` to correct (empty when not correcting).
type CorrectChunk<'a, E> = (
    usize,
    (&'a mut [ParticleForce], E),
    &'a mut [DVec3],
    &'a mut [DVec3],
);

/// Runs `kernel` on every chunk: in parallel for `n` ≥ [`PAR_THRESHOLD`] items, else on
/// the calling thread (each chunk writes its own slices, so the results are the same).
/// A chunk may report a fault at an item index; the lowest index is returned, so the
/// report does not depend on the number of threads.
fn run_chunks<T: Send, R: Send>(
    chunks: Vec<T>,
    n: usize,
    kernel: impl Fn(T) -> Option<(usize, R)> + Sync + Send,
) -> Option<(usize, R)> {
    if n < PAR_THRESHOLD {
        chunks.into_iter().filter_map(kernel).min_by_key(|f| f.0)
    } else {
        chunks
            .into_par_iter()
            .filter_map(kernel)
            .min_by_key(|f| f.0)
    }
}

/// A run of particles' state fields, saved copies and contact sides (empty for models
/// without granular forces), from index `lo` (`integrate_predict`).
type PredictChunk<'a> = (
    usize,
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [Kinematics],
    &'a mut [granular::SideScratch],
    &'a mut [DVec3],
);

/// Particles `lo..hi` with their half-list contact and near-field slots.
type RowChunk<'a> = (
    usize,
    usize,
    (&'a mut [granular::PairSlot], &'a mut [granular::PairSpring]),
    &'a mut [granular::NearSlot],
);

/// Splits the half-list slots (`pairs`, and `near` when it is not empty) into disjoint
/// runs of `chunk` particles' rows (`half`: row offsets), for a parallel pass that
/// writes each row once.
fn row_chunks<'a>(
    half: &[u32],
    (pairs, springs): (&'a mut [granular::PairSlot], &'a mut [granular::PairSpring]),
    near: &'a mut [granular::NearSlot],
    chunk: usize,
) -> Vec<RowChunk<'a>> {
    let springs = neighbor::row_runs(half, springs, chunk);
    // Without a near field every chunk gets an empty run.
    let mut near = if near.is_empty() {
        Vec::new()
    } else {
        neighbor::row_runs(half, near, chunk)
    }
    .into_iter();
    neighbor::row_runs(half, pairs, chunk)
        .into_iter()
        .zip(springs)
        .map(|((lo, hi, p), (_, _, s))| {
            let n = near.next().map_or(&mut [][..], |(_, _, n)| n);
            (lo, hi, (p, s), n)
        })
        .collect()
}

/// Particles ahead of the gather whose pair slots are prefetched: 4 and 16 measured
/// no better than 8, and prefetching the pair kernel's partner sides gained nothing.
const PREFETCH_AHEAD: usize = 8;

/// Asks the cache for the `lines` cache lines from `items[k]` (nothing when `k` is out
/// of range). The gather reads its pair slots in up to four streams (the particle's
/// row and its lower partners' rows), more than the hardware prefetcher follows among
/// the pass's other streams.
#[inline(always)]
fn prefetch<T>(items: &[T], k: usize, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = items.get(k) {
        let p: *const i8 = (x as *const T).cast();
        for l in 0..lines {
            // SAFETY: a prefetch reads nothing and never faults, whatever the address.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * l));
            }
        }
    }
}

/// Prefetches the pair slots particle `i`'s gather will read.
#[inline]
fn prefetch_slots(list: &NeighborList, pairs: &[granular::PairSlot], i: usize) {
    if let Some(r) = list.offsets.get(i..i + 2) {
        for &s in &list.pair_index[r[0] as usize..r[1] as usize] {
            prefetch(pairs, s as usize, 1);
        }
    }
}

/// What `particle_forces` produces for one particle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ParticleForce {
    /// Total force `F` (N).
    pub force: DVec3,
    /// Total spatial moment `RM` (N m).
    pub moment: DVec3,
    /// Half of each contact pair's energy (J): summed over particles this is `U^pp`.
    pub e_contact: f64,
    /// Wall contact energy (J).
    pub e_wall: f64,
    /// Half of each near-field pair's energy (J).
    pub e_near: f64,
    /// Touching contacts beyond the history capacity (an error when > 0).
    pub overflow: u32,
}

/// Forces, moments and per-particle energies from one force evaluation, with the
/// contact history it produced.
#[derive(Clone, Debug, Default)]
struct ForceState {
    particles: Vec<ParticleForce>,
    /// Per-bond results, in bond order.
    bonds: Vec<Option<BondResult>>,
    /// Wall springs after this evaluation, `N × wall_stride` (empty without granular
    /// forces). The pair springs are in `pairs`.
    wall_spring: Vec<DVec3>,
    /// Scratch: every particle's contact side (granular models).
    sides: granular::Sides,
    /// `sides` holds the sides of the state to evaluate (written by
    /// `integrate_predict`; the evaluation then does not recompute them).
    sides_ready: bool,
    /// Scratch: one contact slot per listed pair (half list), granular models.
    pairs: Vec<granular::PairSlot>,
    /// Pair springs and touching flags after this evaluation, one per listed pair (the
    /// pair history, in the current list's half-list slots).
    springs: Vec<granular::PairSpring>,
    /// Scratch: one near-field slot per listed pair, with a near field.
    near: Vec<granular::NearSlot>,
}

impl ForceState {
    fn new(n: usize, nb: usize, model: &Model) -> Self {
        let walls = if granular_model(model) {
            n * wall_stride(model)
        } else {
            0
        };
        Self {
            particles: vec![ParticleForce::default(); n],
            bonds: vec![None; nb],
            wall_spring: vec![DVec3::ZERO; walls],
            sides: Default::default(),
            sides_ready: false,
            pairs: Vec::new(),
            springs: Vec::new(),
            near: Vec::new(),
        }
    }
}

/// Contact-history slots per particle: `[contact] max_contacts` under the Hertz law,
/// none otherwise (drag alone has no contacts to remember).
fn history_slots(model: &Model) -> usize {
    match model.contact {
        Some(c) if c.law == ContactLaw::Hertz => c.max_contacts as usize,
        _ => 0,
    }
}

/// Wall springs per particle: one per wall, at least 1 (so rows are never empty).
fn wall_stride(model: &Model) -> usize {
    model.walls.len().max(1)
}

/// Whether `model` needs the granular kernel: the Hertz law, drag or near-field forces.
fn granular_model(model: &Model) -> bool {
    matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz))
        || model.drag.is_some()
        || model.near_field.is_some()
}

/// The CPU reference simulation.
#[derive(Clone, Debug)]
pub struct CpuBackend {
    model: Model,
    integrator: IntegratorKind,
    dt: f64,
    step: u64,
    incidence: Incidence,
    neighbors: NeighborList,
    forces: ForceState,
    spare_forces: ForceState,
    /// Copy of the state before the current step, restored if the step fails.
    saved: Vec<Kinematics>,
    /// Material tables, for granular models.
    tables: Option<PairTables>,
    /// Parameters of the implicit integrator.
    trapezoidal: Trapezoidal,
    /// Fixed-point iterations of the implicit integrator so far (all steps).
    iterations: u64,
    /// No bonds, no binder contacts and no pendulum: `particle_forces` outside the
    /// granular part is the uniform field alone ([`CpuBackend::field_force`]).
    field_only: bool,
}

impl CpuBackend {
    /// Sets up a run of `scene` and evaluates the forces of the initial state.
    pub fn new(scene: &Scene) -> Result<Self> {
        let mut backend = Self::from_model(
            scene.model.clone(),
            scene.simulation.integrator,
            scene.simulation.dt,
        )?;
        backend.trapezoidal = scene.simulation.trapezoidal;
        Ok(backend)
    }

    /// Sets `φ` and the tolerance of the `campello-trapezoidal` integrator (the scene's
    /// `[simulation] phi, tolerance`; [`CpuBackend::new`] takes them from the scene).
    pub fn set_trapezoidal(&mut self, t: Trapezoidal) {
        self.trapezoidal = t;
    }

    /// Fixed-point iterations the `campello-trapezoidal` integrator has taken so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Sets up a run of `model` with integrator `integrator` and time step `dt`.
    pub fn from_model(model: Model, integrator: IntegratorKind, dt: f64) -> Result<Self> {
        Self::set_up(model, integrator, dt, 0)
    }

    /// Restores a run from a checkpoint: `model` (constant properties, bonds with their
    /// rest states, walls, laws) in the state of `snapshot`, at its step, with its
    /// integrator and time step. The neighbour list is built and the forces are
    /// evaluated from that state, which gives the same bits as the run that took the
    /// snapshot (see [`StateSnapshot`]).
    ///
    /// A snapshot of the `f32` GPU backend restores its state exactly (every `f32` is
    /// an `f64`); its Kahan compensation terms have no use in `f64` and are dropped.
    ///
    /// A granular snapshot carries its contact history and forces
    /// ([`ContactState`]): they are restored as stored, and the bond results (which
    /// depend on positions and rotations only) are recomputed.
    pub fn from_snapshot(mut model: Model, snapshot: &StateSnapshot) -> Result<Self> {
        snapshot.apply_to(&mut model.particles)?;
        let mut backend = Self::set_up(model, snapshot.integrator, snapshot.dt, snapshot.step)?;
        if let Some(c) = &snapshot.contacts {
            backend.restore_contacts(c)?;
        } else if granular_model(&backend.model) {
            return Err(Error::Snapshot(
                "the snapshot has no contact state, but the scene has granular contacts".into(),
            ));
        }
        Ok(backend)
    }

    fn restore_contacts(&mut self, c: &ContactState) -> Result<()> {
        let n = self.model.particles.len();
        let (k, w) = (history_slots(&self.model), wall_stride(&self.model));
        if c.slots as usize != k
            || c.partner.len() != n * k
            || c.spring.len() != n * k
            || c.wall_spring.len() != n * w
            || c.force.len() != n
        {
            return Err(Error::Snapshot(format!(
                "the contact state ({} slots × {} entries, {} wall springs) does not fit the scene ({k} slots, {n} particles, {} wall springs)",
                c.slots,
                c.partner.len(),
                c.wall_spring.len(),
                n * w
            )));
        }
        let rows = History {
            slots: k,
            wall_stride: w,
            partner: c.partner.clone(),
            spring: c.spring.clone(),
            wall_spring: Vec::new(),
        };
        rows.to_pairs(&self.neighbors, &mut self.forces.springs);
        self.forces.wall_spring.clone_from(&c.wall_spring);
        for (i, f) in self.forces.particles.iter_mut().enumerate() {
            f.force = c.force[i];
            f.moment = c.moment[i];
            [f.e_contact, f.e_wall, f.e_near] = c.energy[i];
            f.overflow = 0;
        }
        Ok(())
    }

    /// The contact state to store in a snapshot, for granular models.
    fn contact_state(&self) -> Option<ContactState> {
        if !granular_model(&self.model) {
            return None;
        }
        let h = self.history();
        let f = &self.forces.particles;
        Some(ContactState {
            slots: h.slots as u32,
            partner: h.partner,
            spring: h.spring,
            wall_spring: h.wall_spring,
            force: f.iter().map(|f| f.force).collect(),
            moment: f.iter().map(|f| f.moment).collect(),
            energy: f
                .iter()
                .map(|f| [f.e_contact, f.e_wall, f.e_near])
                .collect(),
        })
    }

    /// Contact history after the last step, in the per-particle layout of snapshots
    /// (empty without granular forces).
    pub fn history(&self) -> History {
        if !granular_model(&self.model) {
            return History::default();
        }
        let f = &self.forces;
        History::from_pairs(
            &self.neighbors,
            &f.springs,
            history_slots(&self.model),
            &f.wall_spring,
            wall_stride(&self.model),
        )
    }

    /// Brings the neighbour list up to date for the current positions (the rebuild test
    /// discounting particle 0's displacement from `x0`, [`NeighborList::shift`]); on a
    /// rebuild the pair springs of the current forces move to the new list's slots.
    fn update_neighbors(&mut self, x0: DVec3) {
        let shift = self.neighbors.shift(x0);
        let p = &self.model.particles;
        if self.neighbors.is_stale(&p.position, shift) {
            self.rebuild_neighbors();
        }
    }

    /// Rebuilds the neighbour list at the current positions, moving the pair springs
    /// of the current forces to the new list's slots.
    fn rebuild_neighbors(&mut self) {
        let p = &self.model.particles;
        let old = self.tables.is_some().then(|| self.neighbors.clone());
        self.neighbors.build(&p.position, &p.radius);
        if let Some(old) = old {
            let springs = std::mem::take(&mut self.forces.springs);
            granular::remap_springs(&old, &springs, &self.neighbors, &mut self.forces.springs);
        }
    }

    /// The least host memory the backend allocates besides the model (bytes), from the
    /// arrays `CpuBackend::set_up` and the first evaluation create: per particle two
    /// force records and the saved state; with contacts, the neighbour list's reference
    /// positions and offsets; for granular models the contact sides and two copies of
    /// the history rows and wall springs; per bond two results and the incidence
    /// entries. Neighbour rows and pair slots, which depend on the packing, are left
    /// out, so this is a lower bound.
    pub fn min_host_bytes(model: &Model) -> u64 {
        let size = std::mem::size_of::<DVec3>();
        let mut per_particle =
            2 * std::mem::size_of::<ParticleForce>() + std::mem::size_of::<Kinematics>();
        if model.contact.is_some() {
            per_particle += size + 4;
        }
        if granular_model(model) {
            let walls = model.walls.len().max(1);
            per_particle += std::mem::size_of::<granular::SideScratch>() + 2 * walls * size;
        }
        let per_bond = 2 * std::mem::size_of::<Option<BondResult>>() + 8;
        (model.particles.len() as u64)
            .saturating_mul(per_particle as u64)
            .saturating_add((model.bonds.len() as u64).saturating_mul(per_bond as u64))
    }

    /// Builds the backend at step `step` and evaluates the forces of the model's state.
    fn set_up(model: Model, integrator: IntegratorKind, dt: f64, step: u64) -> Result<Self> {
        let n = model.particles.len();
        let nb = model.bonds.len();
        crate::memory_check::check(
            &format!("the CPU backend for {n} particles and {nb} bonds"),
            Self::min_host_bytes(&model),
        )?;
        let incidence = Incidence::build(n, &model.bonds);
        let skin = model.contact.map_or(0.0, |c| c.skin);
        let tables = granular_model(&model).then(|| PairTables::new(&model));
        let mut neighbors = NeighborList::new(skin);
        neighbors.min_reach = model.near_field.map_or(0.0, |nf| nf.cutoff);
        let mut backend = Self {
            forces: ForceState::new(n, nb, &model),
            spare_forces: ForceState::new(n, nb, &model),
            model,
            integrator,
            dt,
            step,
            incidence,
            neighbors,
            saved: Vec::with_capacity(n),
            tables,
            trapezoidal: Trapezoidal::default(),
            iterations: 0,
            field_only: false,
        };
        let p = &backend.model.particles;
        backend.field_only = backend.model.bonds.is_empty()
            && !matches!(
                backend.model.contact.map(|c| c.law),
                Some(ContactLaw::Binder { .. })
            )
            && p.flags.iter().all(|&f| f & FLAG_PENDULUM == 0);
        if backend.model.contact.is_some() {
            backend.neighbors.build(
                &backend.model.particles.position,
                &backend.model.particles.radius,
            );
        }
        let mut f = std::mem::take(&mut backend.spare_forces);
        backend.evaluate_forces(&mut f, step, true, None, None)?;
        backend.forces = f;
        backend.spare_forces = ForceState::new(n, nb, &backend.model);
        Ok(backend)
    }

    /// The model with the current state.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Force, moment and contact energies of every particle at the current state.
    pub fn particle_forces(&self) -> &[ParticleForce] {
        &self.forces.particles
    }

    /// Binder result of every bond at the current state, in bond order (forces, moments
    /// and the energies `U^m`, `U^a`, `U^s`).
    pub fn bond_results(&self) -> impl ExactSizeIterator<Item = BondResult> + '_ {
        self.forces.bonds.iter().map(|r| r.unwrap_or_default())
    }

    /// Strain energy `U^m + U^a + U^s` of every bond at the current state (J), in bond
    /// order.
    pub fn bond_energies(&self) -> Vec<f64> {
        self.bond_results()
            .map(|r| r.e_bend + r.e_axial + r.e_shear)
            .collect()
    }

    /// Touching contacts of every particle at the current state, walls included (see
    /// [`Frame::contact_count`]); all zero without contacts.
    pub fn contact_counts(&self) -> Vec<u32> {
        let p = &self.model.particles;
        if self.model.contact.is_none() {
            return vec![0; p.len()];
        }
        neighbor::contact_counts(&self.neighbors, &p.position, &p.radius, &self.model.walls)
    }

    /// Neighbours of particle `i` in the current contact list (ascending ids).
    pub fn neighbor_list(&self, i: usize) -> &[u32] {
        if self.model.contact.is_some() {
            self.neighbors.of(i)
        } else {
            &[]
        }
    }

    /// Number of neighbour-list rebuilds so far.
    pub fn neighbor_builds(&self) -> u64 {
        self.neighbors.builds
    }

    /// Time step (s).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Advances one step.
    pub fn step(&mut self) -> Result<()> {
        if self.integrator == IntegratorKind::CampelloTrapezoidal {
            return self.step_trapezoidal();
        }
        let step = self.step + 1;
        // Particle 0's position before the step: the rebuild test discounts its
        // displacement (NeighborList::shift), as the GPU's check_skin does.
        let x0 = self.model.particles.position.first().copied();
        let shift = self.neighbors.shift(x0.unwrap_or_default());
        // Predict also runs the rebuild test (NeighborList::is_stale's, particle by
        // particle, while it holds the new positions): one pass fewer.
        let stale = self.integrate_predict(step, shift)?;
        if self.model.contact.is_some() && stale {
            self.rebuild_neighbors();
        }
        let mut f = std::mem::take(&mut self.spare_forces);
        // Kernel `integrate_correct` runs inside the force gather, on each particle as
        // soon as its force is complete: the velocities are lent to it (nothing in the
        // evaluation reads them: the contact sides were computed by integrate_predict).
        let p = &mut self.model.particles;
        let mut v = std::mem::take(&mut p.velocity);
        let mut w = std::mem::take(&mut p.angular_velocity);
        let result = self.evaluate_forces(&mut f, step, false, None, Some((&mut v, &mut w)));
        let p = &mut self.model.particles;
        (p.velocity, p.angular_velocity) = (v, w);
        if let Err(e) = result {
            self.spare_forces = f;
            self.restore();
            return Err(e);
        }
        self.spare_forces = std::mem::replace(&mut self.forces, f);
        self.step = step;
        Ok(())
    }

    /// One step of Campello's generalised trapezoidal rule (§4, Algorithm 1), solved by
    /// fixed-point iteration. From `(x₀, v₀, α₀, Ω₀)` and the forces `F₀, M₀`:
    ///
    /// 1. guess `v¹ = v₀ + h F₀/m`, `Ω¹ = Ω₀ + h M₀/J` (forward Euler);
    /// 2. for iterate `K`: `x^K = x₀ + h[φv^K + (1−φ)v₀]`,
    ///    `Δα^K = h[φΩ^K + (1−φ)Ω₀]` (eq. 45), `α^K = α₀ ⊕ Δα^K` (eq. 47); forces
    ///    `F^K, M^K` at that state, with `Δx = x^K − x₀`, `Δα^K` as the contact
    ///    increments and `v^K` in the damping (eq. 46);
    ///    `v^{K+1} = v₀ + (h/m)[φF^K + (1−φ)F₀]`, likewise `Ω^{K+1}` (eq. 42);
    /// 3. stop when the normalised changes of eqs. (48)–(49) of x, v, Ω and Δα are all
    ///    below the tolerance; the step ends at `(x^K, α^K)`, where the forces were
    ///    evaluated (so forces, history and positions agree), with `v^{K+1}, Ω^{K+1}`.
    ///
    /// The iteration is Jacobi (every particle from iterate K), not the Gauss–Seidel
    /// sweep of Remark 5: it converges a little slower but is parallel and gives the same
    /// bits for any thread count.
    fn step_trapezoidal(&mut self) -> Result<()> {
        let step = self.step + 1;
        let (h, phi) = (self.dt, self.trapezoidal.phi);
        let n = self.model.particles.len();
        let p = &self.model.particles;
        let start: Vec<Kinematics> = (0..n).map(|i| kinematics(p, i)).collect();
        let f0: Vec<(DVec3, DVec3)> = self
            .forces
            .particles
            .iter()
            .map(|f| (f.force, f.moment))
            .collect();
        let bodies: Vec<Body> = (0..n).map(|i| body(p, i)).collect();
        let kick = |b: &Body, s: &Kinematics, f: DVec3, m: DVec3| -> (DVec3, DVec3) {
            let v = if b.held {
                DVec3::ZERO
            } else {
                s.v + (h / b.mass) * f
            };
            let w = if b.fixed_rotation {
                DVec3::ZERO
            } else {
                s.omega + (h / b.inertia) * m
            };
            (v, w)
        };
        // Iterate K's velocities.
        let mut vel: Vec<(DVec3, DVec3)> = (0..n)
            .map(|i| kick(&bodies[i], &start[i], f0[i].0, f0[i].1))
            .collect();
        let mut inc = vec![(DVec3::ZERO, DVec3::ZERO); n];
        let tol = self.trapezoidal.tolerance;
        for iteration in 1..=self.trapezoidal.max_iterations {
            self.iterations += 1;
            // State of iterate K.
            let p = &mut self.model.particles;
            for i in 0..n {
                let s = &start[i];
                let (v, w) = vel[i];
                let dx = h * (phi * v + (1.0 - phi) * s.v);
                let da = h * (phi * w + (1.0 - phi) * s.omega);
                let alpha = if bodies[i].fixed_rotation {
                    s.alpha
                } else {
                    match crate::math::rodrigues::try_compose(s.alpha, da) {
                        Some(a) => a,
                        None => {
                            self.restore_from(&start);
                            return Err(Error::fault(step, Fault::HalfTurn { particle: i }));
                        }
                    }
                };
                p.position[i] = s.x + dx;
                p.velocity[i] = v;
                p.rotation[i] = alpha;
                p.angular_velocity[i] = w;
                inc[i] = (dx, da);
            }
            if self.model.contact.is_some() {
                // Against the current reference (an iterate may have rebuilt it).
                self.update_neighbors(start.first().map(|s| s.x).unwrap_or_default());
            }
            let mut f = std::mem::take(&mut self.spare_forces);
            if let Err(e) = self.evaluate_forces(&mut f, step, false, Some(&inc), None) {
                self.spare_forces = f;
                self.restore_from(&start);
                return Err(e);
            }
            // Iterate K + 1.
            let next: Vec<(DVec3, DVec3)> = (0..n)
                .map(|i| {
                    let (fk, mk) = (f.particles[i].force, f.particles[i].moment);
                    let fa = phi * fk + (1.0 - phi) * f0[i].0;
                    let ma = phi * mk + (1.0 - phi) * f0[i].1;
                    kick(&bodies[i], &start[i], fa, ma)
                })
                .collect();
            // Eqs. (48)-(49): Σ|a^{K+1} − a^K| / Σ|a^{K+1} − a(t)|, or / Σ|a^{K+1}|.
            let err = |new: &dyn Fn(usize) -> DVec3,
                       old: &dyn Fn(usize) -> DVec3,
                       at_t: &dyn Fn(usize) -> DVec3| {
                let (mut num, mut den, mut norm) = (0.0, 0.0, 0.0);
                for i in 0..n {
                    num += (new(i) - old(i)).length();
                    den += (new(i) - at_t(i)).length();
                    norm += new(i).length();
                }
                if num == 0.0 {
                    0.0
                } else if den > 1e-12 * norm {
                    num / den
                } else if norm > 0.0 {
                    num / norm
                } else {
                    0.0
                }
            };
            let dx_next = |i: usize| h * (phi * next[i].0 + (1.0 - phi) * start[i].v);
            let da_next = |i: usize| h * (phi * next[i].1 + (1.0 - phi) * start[i].omega);
            let errors = [
                err(
                    &|i| start[i].x + dx_next(i),
                    &|i| start[i].x + inc[i].0,
                    &|i| start[i].x,
                ),
                err(&|i| next[i].0, &|i| vel[i].0, &|i| start[i].v),
                err(&|i| next[i].1, &|i| vel[i].1, &|i| start[i].omega),
                err(&da_next, &|i| inc[i].1, &|_| DVec3::ZERO),
            ];
            vel = next;
            let worst = errors.iter().copied().fold(0.0, f64::max);
            if worst < tol {
                self.spare_forces = std::mem::replace(&mut self.forces, f);
                let p = &mut self.model.particles;
                for (i, (v, w)) in vel.iter().enumerate() {
                    p.velocity[i] = *v;
                    p.angular_velocity[i] = *w;
                }
                self.step = step;
                return Ok(());
            }
            self.spare_forces = f;
            if iteration == self.trapezoidal.max_iterations {
                self.restore_from(&start);
                return Err(Error::NotConverged {
                    step,
                    iterations: iteration,
                    error: worst,
                    tolerance: tol,
                });
            }
        }
        unreachable!("the loop returns on its last iteration")
    }

    fn restore_from(&mut self, start: &[Kinematics]) {
        let p = &mut self.model.particles;
        for (i, k) in start.iter().enumerate() {
            p.position[i] = k.x;
            p.velocity[i] = k.v;
            p.rotation[i] = k.alpha;
            p.angular_velocity[i] = k.omega;
        }
    }

    /// Kernel `integrate_predict`: first half of the step for every particle, in place,
    /// in one pass that also keeps the old state in `saved` (so a failing step can be
    /// undone), computes the contact sides of granular models, and runs the neighbour
    /// list's rebuild test at the new positions (relative to `shift`). Returns whether
    /// the list must be rebuilt (always before the first build). A particle whose update
    /// fails is left as it was; the step then restores every particle and reports the
    /// lowest failing id, so the outcome does not depend on the number of threads.
    fn integrate_predict(&mut self, step: u64, shift: DVec3) -> Result<bool> {
        let (kind, h) = (self.integrator, self.dt);
        let list = &self.neighbors;
        let reference = list.reference();
        let first_build = reference.len() != self.model.particles.len();
        // Set by any chunk with a particle that moved too far (an OR: the same for
        // any order of chunks).
        let stale = AtomicBool::new(first_build);
        let test = self.model.contact.is_some() && !first_build;
        let forces = &self.forces.particles;
        let drag = self.model.drag.is_some();
        let p = &mut self.model.particles;
        let n = p.len();
        self.saved.resize(n, Kinematics::default());
        // Granular models: the contact sides of the evaluation that follows, computed
        // here from the new state in registers (GranularInputs::sides' bits).
        let sides = &mut self.spare_forces.sides;
        self.spare_forces.sides_ready = self.tables.is_some();
        sides.resize(n, self.tables.is_some(), drag);
        let ctx = PredictContext {
            kind,
            h,
            mass: &p.mass,
            inertia: &p.inertia,
            flags: &p.flags,
            radius: &p.radius,
            material: &p.material,
            forces,
            list,
            reference,
            shift,
            test,
        };
        let mut side_chunks = sides.side.chunks_mut(MIN_CHUNK);
        let mut spin_chunks = sides.spin.chunks_mut(MIN_CHUNK);
        let chunks: Vec<PredictChunk<'_>> = p
            .position
            .chunks_mut(MIN_CHUNK)
            .zip(p.velocity.chunks_mut(MIN_CHUNK))
            .zip(p.rotation.chunks_mut(MIN_CHUNK))
            .zip(p.angular_velocity.chunks_mut(MIN_CHUNK))
            .zip(self.saved.chunks_mut(MIN_CHUNK))
            .enumerate()
            .map(|(c, ((((x, v), a), w), saved))| {
                let lo = c * MIN_CHUNK;
                let side = side_chunks.next().unwrap_or_default();
                let spin = spin_chunks.next().unwrap_or_default();
                (lo, x, v, a, w, saved, side, spin)
            })
            .collect();
        // Every particle is updated and saved (no early exit: the restore needs them
        // all); a chunk reports its lowest failing particle.
        let update = |(lo, x, v, alpha, omega, saved, side, spin): PredictChunk<'_>| {
            let mut fault = None;
            let mut moved = false;
            for l in 0..x.len() {
                let i = lo + l;
                let state = (&mut x[l], &mut v[l], &mut alpha[l], &mut omega[l]);
                let out = (&mut saved[l], side.get_mut(l), spin.get_mut(l));
                match ctx.particle(i, state, out) {
                    Ok(m) => moved |= m,
                    Err(e) => fault = fault.or(Some((i, e))),
                }
            }
            if moved {
                stale.store(true, Ordering::Relaxed);
            }
            fault
        };
        let fault = run_chunks(chunks, n, update);
        let stale = stale.into_inner();
        if let Some((particle, f)) = fault {
            self.restore();
            return Err(Error::fault(
                step,
                match f {
                    StepFault::RotationDomain(value) => Fault::RotationStepTooLarge {
                        particle,
                        value: Some(value),
                    },
                    StepFault::HalfTurn => Fault::HalfTurn { particle },
                },
            ));
        }
        // Particles leaving the domain: an error (the step undone), or removal.
        let Some(d) = self.model.domain else {
            return Ok(stale);
        };
        let p = &mut self.model.particles;
        let leaving: Vec<usize> = (0..n)
            .filter(|&i| p.flags[i] & FLAG_REMOVED == 0 && !d.contains(p.position[i]))
            .collect();
        if let (Some(&particle), false) = (leaving.first(), d.remove) {
            let position = p.position[particle].to_array();
            self.restore();
            return Err(Error::fault(
                step,
                Fault::LeftDomain {
                    particle,
                    position: Some(position),
                },
            ));
        }
        for i in leaving {
            // Parked where it left, at rest, its rotation as before the step (the GPU
            // twin stops before composing). Removal is not undone by a failing step.
            p.flags[i] |= FLAG_REMOVED;
            p.rotation[i] = self.saved[i].alpha;
            p.velocity[i] = DVec3::ZERO;
            p.angular_velocity[i] = DVec3::ZERO;
            if !self.spare_forces.sides.side.is_empty() {
                let s = granular::stored_side(kind, h, p, i, &self.forces.particles[i]);
                self.spare_forces.sides.set(i, s);
            }
            log::info!("step {step}: particle {i} left the domain and was removed");
        }
        Ok(stale)
    }

    fn restore(&mut self) {
        let p = &mut self.model.particles;
        for (i, k) in self.saved.iter().enumerate() {
            p.position[i] = k.x;
            p.velocity[i] = k.v;
            p.rotation[i] = k.alpha;
            p.angular_velocity[i] = k.omega;
        }
    }

    /// Evaluates every force of the current state into `out`; `first`: no step has
    /// been taken yet (zero increments for the contact springs).
    ///
    /// `increments`: the step's `(Δx, Δα)` per particle when the integrator gives them
    /// explicitly (the implicit one); `None` derives them from the velocities.
    ///
    /// `correct`: the particles' velocities `v`, `Ω` (lent by an explicit step, whose
    /// model holds none meanwhile), to which kernel `integrate_correct` is applied as
    /// each particle's force is complete.
    fn evaluate_forces(
        &self,
        out: &mut ForceState,
        step: u64,
        first: bool,
        increments: Option<&[(DVec3, DVec3)]>,
        correct: Option<(&mut [DVec3], &mut [DVec3])>,
    ) -> Result<()> {
        self.bond_forces(&mut out.bonds, step)?;
        let bonds = &out.bonds;
        let (kind, h) = (self.integrator, self.dt);
        let p = &self.model.particles;
        // integrate_correct of particle i with its new force.
        let correct_one = |i: usize, f: &ParticleForce, v: &mut DVec3, w: &mut DVec3| {
            let b = body_of(&p.mass, &p.inertia, &p.flags, i);
            (*v, *w) = integrators::correct(kind, h, b, *v, *w, f.force, f.moment);
        };
        let (v, w) = correct.unwrap_or_default();
        let (mut v_chunks, mut w_chunks) = (v.chunks_mut(MIN_CHUNK), w.chunks_mut(MIN_CHUNK));
        let Some(tables) = &self.tables else {
            let chunks: Vec<_> = out
                .particles
                .chunks_mut(MIN_CHUNK)
                .enumerate()
                .map(|(c, f)| {
                    let (v, w) = (v_chunks.next(), w_chunks.next());
                    (
                        c * MIN_CHUNK,
                        (f, ()),
                        v.unwrap_or_default(),
                        w.unwrap_or_default(),
                    )
                })
                .collect();
            let kernel = |(lo, (f, ()), v, w): CorrectChunk<'_, ()>| {
                for (l, f) in f.iter_mut().enumerate() {
                    *f = self.particle_force(bonds, lo + l);
                    if let (Some(v), Some(w)) = (v.get_mut(l), w.get_mut(l)) {
                        correct_one(lo + l, f, v, w);
                    }
                }
                None::<(usize, ())>
            };
            run_chunks(chunks, p.len(), kernel);
            return Ok(());
        };
        let inputs = granular::GranularInputs {
            model: &self.model,
            tables,
            old_springs: &self.forces.springs,
            old_walls: &self.forces.wall_spring,
            wall_stride: wall_stride(&self.model),
            slots: history_slots(&self.model),
            kind: self.integrator,
            h: self.dt,
            increments,
            first,
            old_forces: &self.forces.particles,
        };
        if !std::mem::take(&mut out.sides_ready) || increments.is_some() || first {
            inputs.sides(&mut out.sides);
        }
        let sides = &out.sides;
        // Kernel `granular_pairs`: each listed pair once, by its lower id.
        let list = &self.neighbors;
        let contacts = self.model.contact.is_some();
        let n_pairs = if contacts { list.pairs() } else { 0 };
        out.pairs.resize(n_pairs, granular::PairSlot::default());
        out.springs.resize(n_pairs, granular::PairSpring::default());
        out.near.resize(
            if self.model.near_field.is_some() {
                n_pairs
            } else {
                0
            },
            granular::NearSlot::default(),
        );
        if n_pairs > 0 {
            let half = &list.half_offsets;
            let slots = (&mut out.pairs[..], &mut out.springs[..]);
            let chunks = row_chunks(half, slots, &mut out.near, MIN_CHUNK);
            let pass = |(lo, hi, pairs, near): RowChunk<'_>| {
                inputs.pairs(lo..hi, list, pairs, near, &sides.side);
            };
            if self.model.particles.len() < PAR_THRESHOLD {
                chunks.into_iter().for_each(pass);
            } else {
                chunks.into_par_iter().for_each(pass);
            }
        }
        let (pairs, near) = (&out.pairs, &out.near);
        let nw = wall_stride(&self.model);
        let chunks: Vec<_> = out
            .particles
            .chunks_mut(MIN_CHUNK)
            .zip(out.wall_spring.chunks_mut(MIN_CHUNK * nw))
            .enumerate()
            .map(|(c, (f, walls))| {
                let (v, w) = (v_chunks.next(), w_chunks.next());
                (
                    c * MIN_CHUNK,
                    (f, walls),
                    v.unwrap_or_default(),
                    w.unwrap_or_default(),
                )
            })
            .collect();
        // Each chunk reports its first particle with more touching contacts than slots
        // (an error; the lowest over all chunks is named).
        let kernel = |(lo, (f, walls), v, w): CorrectChunk<'_, &mut [DVec3]>| {
            let mut overflow = None;
            for (l, f) in f.iter_mut().enumerate() {
                let i = lo + l;
                if contacts {
                    prefetch_slots(list, pairs, i + PREFETCH_AHEAD);
                }
                let mut pf = self.particle_force(bonds, i);
                let (neighbors, slots) = if contacts {
                    let r = list.offsets[i] as usize..list.offsets[i + 1] as usize;
                    (&list.neighbors[r.clone()], &list.pair_index[r])
                } else {
                    (&[][..], &[][..])
                };
                let wall_spring = &mut walls[l * nw..(l + 1) * nw];
                let g = inputs.particle(i, neighbors, slots, pairs, near, wall_spring, sides);
                pf.force += g.force;
                pf.moment += g.moment;
                pf.e_contact += g.e_contact;
                pf.e_wall += g.e_wall;
                pf.e_near = g.e_near;
                pf.overflow = g.overflow;
                *f = pf;
                if f.overflow > 0 && overflow.is_none() {
                    overflow = Some((i, f.overflow));
                }
                if let (Some(v), Some(w)) = (v.get_mut(l), w.get_mut(l)) {
                    correct_one(i, f, v, w);
                }
            }
            overflow
        };
        if let Some((particle, over)) = run_chunks(chunks, p.len(), kernel) {
            return Err(Error::fault(
                step,
                Fault::ContactOverflow {
                    particle,
                    contacts: Some(history_slots(&self.model) + over as usize),
                    capacity: history_slots(&self.model),
                },
            ));
        }
        Ok(())
    }

    /// Kernel `bond_forces`: one [`BondResult`] per bond.
    fn bond_forces(&self, out: &mut [Option<BondResult>], step: u64) -> Result<()> {
        let p = &self.model.particles;
        let shear = self.model.shear;
        let bonds = &self.model.bonds;
        // Each chunk reports its first bond past a half turn; the lowest is named.
        let chunks: Vec<_> = out
            .chunks_mut(MIN_CHUNK)
            .enumerate()
            .map(|(c, r)| (c * MIN_CHUNK, r))
            .collect();
        let kernel = |(lo, r): (usize, &mut [Option<BondResult>])| {
            let mut fault = None;
            for (l, o) in r.iter_mut().enumerate() {
                let b = &bonds[lo + l];
                let (i, j) = (b.i as usize, b.j as usize);
                *o = physics::bond_forces(
                    b,
                    p.position[i],
                    p.position[j],
                    p.rotation[i],
                    p.rotation[j],
                    shear,
                );
                if o.is_none() && fault.is_none() {
                    fault = Some((lo + l, ()));
                }
            }
            fault
        };
        match run_chunks(chunks, bonds.len(), kernel) {
            Some((bond, ())) => {
                let b = &bonds[bond];
                Err(Error::fault(
                    step,
                    Fault::BondHalfTurn {
                        bond,
                        i: b.i,
                        j: b.j,
                    },
                ))
            }
            None => Ok(()),
        }
    }

    /// Kernel `particle_forces` for particle `i`: the gather of bond results (CSR
    /// incidence, ascending bond id), contacts (neighbour list, ascending id), walls
    /// and the field. Scenes without bonds, binder contacts or pendulums have only the
    /// field ([`CpuBackend::field_force`], the same bits).
    #[inline]
    fn particle_force(&self, bonds: &[Option<BondResult>], i: usize) -> ParticleForce {
        if self.field_only {
            return self.field_force(i);
        }
        self.particle_force_general(bonds, i)
    }

    /// [`CpuBackend::particle_force`] of any scene.
    fn particle_force_general(&self, bonds: &[Option<BondResult>], i: usize) -> ParticleForce {
        let m = &self.model;
        let p = &m.particles;
        let inc = &self.incidence;
        let mut force = DVec3::ZERO;
        let mut moment = DVec3::ZERO;
        for &e in &inc.entries[inc.offsets[i] as usize..inc.offsets[i + 1] as usize] {
            let Some(r) = &bonds[(e >> 1) as usize] else {
                continue;
            };
            if e & 1 == 0 {
                force += r.force_i;
                moment += r.moment_i;
            } else {
                force -= r.force_i;
                moment += r.moment_j;
            }
        }
        let (x, rad) = (p.position[i], p.radius[i]);
        let mut e_contact = 0.0;
        let mut e_wall = 0.0;
        let removed = |k: usize| p.flags[k] & FLAG_REMOVED != 0;
        if let Some(ContactLaw::Binder { k_pp }) = m.contact.map(|c| c.law).filter(|_| !removed(i))
        {
            for &j in self.neighbors.of(i) {
                let j = j as usize;
                if removed(j) {
                    continue;
                }
                if let Some((e, fi)) =
                    contact::binder_pair(k_pp, x, p.position[j], rad, p.radius[j])
                {
                    e_contact += 0.5 * e;
                    force += fi;
                }
            }
            for w in &m.walls {
                if let Some((e, fw)) = contact::binder_wall(w, x, rad) {
                    e_wall += e;
                    force += fw;
                }
            }
        }
        if p.flags[i] & FLAG_PENDULUM != 0 {
            let (_, ff, mf) =
                field::pendulum(p.mass[i], m.gravity, x, p.rotation[i], p.pendulum_offset[i]);
            force += ff;
            moment += mf;
        } else {
            force += field::gravity(p.mass[i], m.gravity, x).1;
        }
        ParticleForce {
            force,
            moment,
            e_contact,
            e_wall,
            e_near: 0.0,
            overflow: 0,
        }
    }

    /// [`CpuBackend::particle_force_general`] of a particle that has no bonds, no binder
    /// contacts and no pendulum: the uniform field, with the same operations (its
    /// bits).
    #[inline]
    fn field_force(&self, i: usize) -> ParticleForce {
        let p = &self.model.particles;
        let g = field::gravity(p.mass[i], self.model.gravity, p.position[i]).1;
        ParticleForce {
            force: DVec3::ZERO + g,
            ..ParticleForce::default()
        }
    }

    fn potentials(&self) -> Potentials {
        let mut pot = Potentials::default();
        for r in self.forces.bonds.iter().flatten() {
            pot.bend += r.e_bend;
            pot.axial += r.e_axial;
            pot.shear += r.e_shear;
        }
        for f in &self.forces.particles {
            pot.contact += f.e_contact;
            pot.wall += f.e_wall;
            pot.near_field += f.e_near;
        }
        pot
    }

    /// Checks every state value is finite; names the first particle that is not.
    pub fn check_finite(&self) -> Result<()> {
        let p = &self.model.particles;
        let fields: [(&'static str, &Vec<DVec3>); 4] = [
            ("position", &p.position),
            ("velocity", &p.velocity),
            ("rotation", &p.rotation),
            ("angular_velocity", &p.angular_velocity),
        ];
        for i in 0..p.len() {
            for (name, v) in &fields {
                if !v[i].is_finite() {
                    return Err(Error::fault(
                        self.step,
                        Fault::NonFinite {
                            particle: i,
                            field: Some(name),
                            value: Some(format!("{:?}", v[i].to_array())),
                        },
                    ));
                }
            }
        }
        Ok(())
    }
}

#[inline]
fn body(p: &Particles, i: usize) -> Body {
    body_of(&p.mass, &p.inertia, &p.flags, i)
}

/// What kernel `integrate_predict` ([`CpuBackend::integrate_predict`]) reads besides a
/// particle's own state. (Running it inside the previous step's force gather, right
/// after each particle's correct, as the GPU's fused steps do, gave the same bits but
/// ran 0.92× as fast on the CPU: README, *What bounds the CPU step*.)
struct PredictContext<'a> {
    kind: IntegratorKind,
    h: f64,
    mass: &'a [f64],
    inertia: &'a [f64],
    flags: &'a [u32],
    radius: &'a [f64],
    material: &'a [u32],
    /// The forces the step is taken with (the last evaluation's).
    forces: &'a [ParticleForce],
    list: &'a NeighborList,
    /// Positions at the list's last build, for the rebuild test.
    reference: &'a [DVec3],
    /// Particle 0's displacement since the build ([`NeighborList::shift`]).
    shift: DVec3,
    /// Whether to run the rebuild test.
    test: bool,
}

impl PredictContext<'_> {
    /// Predicts particle `i` with its forces: saves its state into `saved`, updates
    /// `(x, v, α, Ω)` and, for granular models, stores its contact side and spin for the
    /// next evaluation. `Ok(moved)`: whether it moved far enough to make the neighbour
    /// list stale; on a fault its state is left as it was.
    #[inline(always)]
    fn particle(
        &self,
        i: usize,
        (x, v, alpha, omega): (&mut DVec3, &mut DVec3, &mut DVec3, &mut DVec3),
        (saved, side, spin): (
            &mut Kinematics,
            Option<&mut granular::SideScratch>,
            Option<&mut DVec3>,
        ),
    ) -> std::result::Result<bool, StepFault> {
        let old = Kinematics {
            x: *x,
            v: *v,
            alpha: *alpha,
            omega: *omega,
        };
        *saved = old;
        let f = &self.forces[i];
        let body = body_of(self.mass, self.inertia, self.flags, i);
        let k = integrators::predict(self.kind, self.h, body, old, f.force, f.moment)?;
        (*x, *v, *alpha, *omega) = (k.x, k.v, k.alpha, k.omega);
        let moved = self.test && self.list.moved(k.x, self.reference[i], self.shift);
        if let Some(s) = side {
            let (s_new, w_new) = granular::stepped_side(
                self.kind,
                self.h,
                body,
                k.x,
                self.radius[i],
                self.material[i],
                self.flags[i],
                k.v,
                k.omega,
                f,
            );
            *s = s_new;
            if let Some(w) = spin {
                *w = w_new;
            }
        }
        Ok(moved)
    }
}

/// [`Body`] of particle `i` from the fields it needs (borrowed apart from the state).
#[inline]
fn body_of(mass: &[f64], inertia: &[f64], flags: &[u32], i: usize) -> Body {
    Body {
        mass: mass[i],
        inertia: inertia[i],
        held: flags[i] & (FLAG_HELD | FLAG_REMOVED) != 0,
        fixed_rotation: flags[i] & (FLAG_NO_ROTATION | FLAG_REMOVED) != 0,
    }
}

#[inline]
fn kinematics(p: &Particles, i: usize) -> Kinematics {
    Kinematics {
        x: p.position[i],
        v: p.velocity[i],
        alpha: p.rotation[i],
        omega: p.angular_velocity[i],
    }
}

impl Backend for CpuBackend {
    fn neighbor_builds(&mut self) -> Result<Option<u64>> {
        Ok(self
            .model
            .contact
            .is_some()
            .then_some(self.neighbors.builds))
    }

    fn listed_neighbors(&mut self) -> Result<Option<u64>> {
        Ok(self.model.contact.is_some().then(|| {
            (0..self.model.particles.len())
                .map(|i| self.neighbors.of(i).len() as u64)
                .sum()
        }))
    }

    fn name(&self) -> String {
        "cpu".into()
    }

    fn step_count(&self) -> u64 {
        self.step
    }

    fn time(&self) -> f64 {
        self.step as f64 * self.dt
    }

    fn advance(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.step()?;
        }
        self.check_finite()
    }

    /// A failed step is undone (the state is that of the last completed step), except
    /// for non-finite values, which are found after the fact.
    fn state_after_error_is_good(&self, error: &Error) -> bool {
        !matches!(
            error,
            Error::Fault {
                fault: Fault::NonFinite { .. },
                ..
            } | Error::BlowUp { .. }
        )
    }

    fn checkpoint_state(&mut self) -> Result<StateSnapshot> {
        let p = &self.model.particles;
        Ok(StateSnapshot {
            backend: BackendKind::Cpu,
            backend_name: self.name(),
            precision: Precision::F64,
            step: self.step,
            integrator: self.integrator,
            dt: self.dt,
            position: p.position.clone(),
            velocity: p.velocity.clone(),
            rotation: p.rotation.clone(),
            angular_velocity: p.angular_velocity.clone(),
            compensation: Vec::new(),
            contacts: self.contact_state(),
            removed: crate::model::removed_ids(&p.flags),
        })
    }

    fn diagnostics(&mut self) -> Result<Diagnostics> {
        let (e_kin, e_rot, momentum, angular_momentum, e_field) =
            diagnostics::kinematic(&self.model.particles, self.model.gravity);
        let mut potentials = self.potentials();
        potentials.field = e_field;
        Ok(Diagnostics {
            step: self.step,
            time: self.time(),
            e_kin,
            e_rot,
            potentials,
            momentum,
            angular_momentum,
        })
    }

    fn particles(&mut self) -> Result<Particles> {
        Ok(self.model.particles.clone())
    }

    fn frame(&mut self) -> Result<Frame> {
        let f = &self.forces.particles;
        Ok(Frame {
            step: self.step,
            time: self.time(),
            particles: self.model.particles.clone(),
            force: f.iter().map(|f| f.force).collect(),
            moment: f.iter().map(|f| f.moment).collect(),
            contact_count: self.contact_counts(),
            bond_energy: self.bond_energies(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes a vector has allocated (its capacity: `saved` is reserved at set-up and
    /// filled by the first step).
    fn bytes<T>(v: &Vec<T>) -> u64 {
        (v.capacity() * std::mem::size_of::<T>()) as u64
    }

    /// The granular gather's shortcut for scenes without bonds, binder contacts or
    /// pendulums gives the bits of the general per-particle kernel, for every particle
    /// of a bed (removed ones too, and with a `−0.0` gravity component, which `0 + g`
    /// turns into `+0.0` in both); scenes with bonds or a pendulum do not take it.
    #[test]
    fn field_shortcut_matches_particle_force() {
        use crate::model::generators::{bonded_block, settling_bed};
        let mut bed = settling_bed(500);
        bed.gravity = DVec3::new(-0.0, 0.0, -9.81);
        bed.particles.flags[7] |= FLAG_REMOVED;
        let b = CpuBackend::from_model(bed, IntegratorKind::Variational, 1e-6).unwrap();
        assert!(b.field_only);
        for i in 0..b.model.particles.len() {
            let bonds = &b.forces.bonds;
            let (fast, full) = (b.field_force(i), b.particle_force_general(bonds, i));
            let bits = |f: &ParticleForce| {
                let mut v: Vec<u64> = [f.force, f.moment]
                    .iter()
                    .flat_map(|x| x.to_array().map(f64::to_bits))
                    .collect();
                v.extend([f.e_contact, f.e_wall, f.e_near].map(f64::to_bits));
                v.push(u64::from(f.overflow));
                v
            };
            assert_eq!(bits(&fast), bits(&full), "particle {i}");
        }
        let block = bonded_block(200).unwrap();
        let b = CpuBackend::from_model(block, IntegratorKind::Variational, 1e-7).unwrap();
        assert!(!b.field_only);
        let mut pendulum = settling_bed(100);
        pendulum.particles.flags[3] |= FLAG_PENDULUM;
        let b = CpuBackend::from_model(pendulum, IntegratorKind::Variational, 1e-6).unwrap();
        assert!(!b.field_only);
    }

    /// The rebuild test that `integrate_predict` runs particle by particle makes the
    /// decisions of [`NeighborList::update`] at the same positions: a bed thrown apart
    /// (velocities of 0.5 m/s, so the list goes stale every few dozen steps) rebuilds
    /// at the same steps as a list updated after each step with the shifted test, and
    /// the two lists are equal throughout.
    #[test]
    fn predict_rebuild_test_matches_is_stale() {
        let mut model = crate::model::generators::settling_bed(3000);
        for v in model.particles.velocity.iter_mut() {
            *v *= 10.0;
        }
        let skin = model.contact.map(|c| c.skin).unwrap();
        let dt = crate::model::generators::SETTLING_BED_DT;
        let mut b = CpuBackend::from_model(model, IntegratorKind::Variational, dt).unwrap();
        let p = &b.model.particles;
        let mut list = NeighborList::new(skin);
        list.build(&p.position, &p.radius);
        let builds = b.neighbor_builds() - list.builds;
        for step in 0..400 {
            let x0 = b.model.particles.position[0];
            b.step().unwrap();
            let p = &b.model.particles;
            list.update(&p.position, &p.radius, list.shift(x0));
            assert_eq!(b.neighbor_builds(), builds + list.builds, "step {step}");
            assert_eq!(b.neighbors.neighbors, list.neighbors, "step {step}");
        }
        assert!(
            list.builds >= 5,
            "{} builds: the test is vacuous",
            list.builds
        );
    }

    /// [`CpuBackend::min_host_bytes`] is a lower bound of what the backend holds once
    /// set up (its refusal may never turn away a problem that fits), and not a loose
    /// one: the arrays it counts are most of it, for a granular bed, a bonded block and
    /// a model without contacts.
    #[test]
    fn min_host_bytes_is_a_lower_bound_of_the_arrays_held() {
        let mut free = crate::model::generators::bonded_block(500).unwrap();
        free.contact = None;
        for model in [
            crate::model::generators::settling_bed(3000),
            crate::model::generators::bonded_block(3000).unwrap(),
            free,
        ] {
            let estimate = CpuBackend::min_host_bytes(&model);
            let b = CpuBackend::from_model(model, IntegratorKind::Variational, 1e-7).unwrap();
            let mut held = bytes(&b.saved) + bytes(&b.incidence.entries);
            held += bytes(&b.neighbors.offsets) + bytes(&b.neighbors.neighbors);
            held += bytes(&b.neighbors.pair_index) + bytes(&b.neighbors.half_offsets);
            // The reference positions are private to the list: n of them with contacts.
            if b.model.contact.is_some() {
                held += (b.model.particles.len() * std::mem::size_of::<DVec3>()) as u64;
            }
            for f in [&b.forces, &b.spare_forces] {
                held += bytes(&f.particles)
                    + bytes(&f.bonds)
                    + bytes(&f.sides.side)
                    + bytes(&f.sides.spin);
                held += bytes(&f.pairs) + bytes(&f.springs) + bytes(&f.near);
                held += bytes(&f.wall_spring);
            }
            assert!(
                estimate <= held && 2 * estimate > held,
                "estimate {estimate} B, held {held} B"
            );
        }
    }
}
