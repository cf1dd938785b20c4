//! The CPU reference backend: `f64`, multi-threaded with rayon, deterministic.
//!
//! One step runs the same kernels the GPU backend dispatches, under the same names
//! (`kernels`, one module per WGSL file; the table is in `src/cpu/kernels/mod.rs`):
//! `integrate_predict` (which also forms the contact sides of granular models) →
//! (neighbour-list update) → `bond_forces` → `granular_pairs` → `particle_forces`
//! (gather of bond results through the incidence list, contacts, walls, field), with `integrate_correct` applied to each particle in
//! the gather as soon as its force is complete (one pass over the particles fewer; the
//! same bits). Every reduction runs in a fixed order (bond id, neighbour id), so results
//! do not depend on the number of threads.
//!
//! Besides the kernels: `parallel` (how a kernel is spread over threads), `forces`
//! (the records one evaluation produces), `contact_sides`, `contact_history` and
//! `pair_batch` (the granular kernels' per-particle scratch, the tangential springs
//! carried between steps, and the SIMD batch of the Hertz–Mindlin law), and
//! `trapezoidal` (the implicit integrator's force evaluations).

mod breakage;
mod clumps;
mod contact_history;
mod contact_sides;
mod forces;
mod hard;
mod kernels;
mod pair_batch;
mod parallel;
mod storage;
mod trapezoidal;
mod walls;

pub use walls::MESH_SLOTS;

pub use crate::physics::granular::PairTables;
pub use contact_history::{History, NO_PARTNER};
pub use forces::ParticleForce;
pub use kernels::storage::permute_slots;

use glam::DVec3;

use crate::backend::{Backend, Frame};
use crate::backend::{BackendKind, ContactState, StateSnapshot};
use crate::diagnostics::{self, Diagnostics};
use crate::error::{Error, Fault, Result};
use crate::integrators::{IntegratorKind, Kinematics, Trapezoidal};
use crate::model::Precision;
use crate::model::{ContactLaw, Incidence, Model, Particles, Scene, FLAG_PENDULUM};
use crate::neighbor;
use crate::neighbor::NeighborList;
use crate::physics::BondResult;
use forces::{granular_model, history_slots, wall_stride, ForceState};

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
    /// The clumps (issue 24), whose spheres are the last particles; `None` without.
    bodies: Option<crate::integrators::bodies::Bodies>,
    /// Particles before the clumps' spheres (every particle without clumps).
    free: usize,
    /// Hard contacts' solver state (`[contact] law = "hard"`); `None` otherwise.
    hard: Option<hard::HardState>,
    /// Moving and mesh walls (issue 26); `None` when every wall is a plane at rest.
    walls: Option<walls::WallState>,
    /// Particle insertion (`[[inserter]]`); `None` without inserters.
    insertion: Option<neighbor::Insertion>,
    /// `varidem check`'s recommended time step for the scene at `t = 0`
    /// ([`time_step_advice`](crate::physics::granular::time_step_advice)), named by
    /// [`Fault::Overlap`].
    dt_advice: Option<f64>,
    /// The smallest radius (clumps' spheres included): with `[contact] max_overlap`, the
    /// overlap below which no pair needs its partner's radius looked up.
    min_radius: f64,
    /// The largest JKR pull-off separation of the model's largest sphere
    /// ([`crate::physics::jkr::largest_pull_off_separation`]): how far past touching
    /// the mesh search looks for contacts in tension (0 without JKR).
    jkr_reach: f64,
    /// Which id each storage slot holds, and the spatial sort's settings.
    storage: storage::Storage,
    /// The step at which each removed particle left the domain, by id
    /// (`removed.csv`).
    exit_steps: std::collections::BTreeMap<u32, u64>,
    /// Bond breakage (issue 47); `None` when no bond can break.
    breakage: Option<breakage::Breakage>,
}

/// Particles plus walls plus mesh feature keys: the bound of a hard-contact key's
/// partner.
fn n_particles_plus_walls(model: &Model, ids: usize) -> usize {
    let triangles: usize = model.meshes.iter().map(|m| m.mesh.triangles.len()).sum();
    ids + model.walls.len() + 8 * triangles
}

impl CpuBackend {
    /// Sets up a run of `scene` and evaluates the forces of the initial state.
    pub fn new(scene: &Scene) -> Result<Self> {
        Self::with_compaction(scene, true)
    }

    /// [`CpuBackend::new`], with storage compaction (issue 44 item 4: an open system
    /// stores only the particles in it) on or off: the results are the same bits
    /// either way (`tests/compaction.rs`), only memory and time differ.
    pub fn with_compaction(scene: &Scene, compact: bool) -> Result<Self> {
        let sim = &scene.simulation;
        let mut backend = Self::set_up_compacting(
            scene.model.clone(),
            sim.integrator,
            sim.dt,
            0,
            None,
            sim.sort_every,
            compact,
        )?;
        backend.trapezoidal = sim.trapezoidal;
        Ok(backend)
    }

    /// Sets `[simulation] sort_every` ([`CpuBackend::new`] takes it from the scene;
    /// `None`: the default). Results do not depend on it.
    pub fn set_sort_every(&mut self, sort_every: Option<u64>) {
        self.storage.sort_every = sort_every.unwrap_or(crate::model::DEFAULT_SORT_EVERY);
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
        Self::set_up(model, integrator, dt, 0, None, None)
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
    pub fn from_snapshot(model: Model, snapshot: &StateSnapshot) -> Result<Self> {
        Self::from_snapshot_sorted(model, snapshot, None)
    }

    /// [`CpuBackend::from_snapshot`] with `[simulation] sort_every` (`None`: the
    /// default).
    pub fn from_snapshot_sorted(
        model: Model,
        snapshot: &StateSnapshot,
        sort_every: Option<u64>,
    ) -> Result<Self> {
        let mut backend = Self::set_up(
            model,
            snapshot.integrator,
            snapshot.dt,
            snapshot.step,
            Some(snapshot),
            sort_every,
        )?;
        if let Some(b) = &mut backend.bodies {
            b.restore_snapshot(&snapshot.bodies)?;
        } else if !snapshot.bodies.is_empty() {
            return Err(Error::Snapshot(format!(
                "the snapshot has {} clumps but the scene has none",
                snapshot.bodies.len()
            )));
        }
        let n_ids = backend.id_count();
        if let Some(h) = &mut backend.hard {
            let n = n_ids;
            h.restore(
                &snapshot.hard_impulses,
                n,
                n_particles_plus_walls(&backend.model, n),
            )?;
        } else if !snapshot.hard_impulses.is_empty() {
            return Err(Error::Snapshot(
                "the snapshot has hard-contact impulses but the scene has no hard contacts".into(),
            ));
        }
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
        let (k, w) = (history_slots(&self.model), wall_stride(&self.model));
        let ms = forces::mesh_slots(&self.model);
        if c.slots as usize != k {
            return Err(Error::Snapshot(format!(
                "the contact state has {} history slots per particle, the scene {k}",
                c.slots
            )));
        }
        c.check_rows(self.id_count(), w, ms)?;
        let rolling = self.model.rolling().is_some();
        let rows = History {
            slots: k,
            wall_stride: w,
            ids: c.ids.clone(),
            partner: c.partner.clone(),
            spring: c.spring.clone(),
            wall_spring: Vec::new(),
            // A state without rolling springs (none were kept, or an older format)
            // starts every rolling spring at zero.
            roll: match (rolling, c.roll.is_empty()) {
                (true, true) => vec![DVec3::ZERO; c.spring.len()],
                (true, false) => c.roll.clone(),
                (false, _) => Vec::new(),
            },
            wall_roll: Vec::new(),
            wall_held: Vec::new(),
        };
        let layout = &self.storage.layout;
        let f = &mut self.forces;
        rows.to_pairs(&self.neighbors, layout, (&mut f.springs, &mut f.rolls));
        // Slot by slot: a particle without a row has no springs and no load.
        let n = self.model.particles.len();
        f.wall_spring = vec![DVec3::ZERO; n * w];
        f.mesh_key = vec![NO_PARTNER; n * ms];
        f.mesh_spring = vec![DVec3::ZERO; n * ms];
        let roll_len = |k: usize| if rolling { k } else { 0 };
        f.wall_roll = vec![DVec3::ZERO; roll_len(n * w)];
        f.mesh_roll = vec![DVec3::ZERO; roll_len(n * ms)];
        // A state without the flags (an older format) starts every wall contact apart.
        let jkr = self.model.jkr();
        f.wall_held = vec![0; if jkr { n * w } else { 0 }];
        let has_held = jkr && !c.wall_held.is_empty();
        let has_mesh = !c.mesh_key.is_empty();
        let has_roll = rolling && !c.roll.is_empty();
        for (s, pf) in f.particles.iter_mut().enumerate() {
            *pf = ParticleForce::default();
            let Some(r) = c.row(layout.id(s) as u32) else {
                continue;
            };
            f.wall_spring[s * w..(s + 1) * w].copy_from_slice(&c.wall_spring[r * w..(r + 1) * w]);
            if has_roll {
                f.wall_roll[s * w..(s + 1) * w].copy_from_slice(&c.roll_wall[r * w..(r + 1) * w]);
            }
            if has_held {
                f.wall_held[s * w..(s + 1) * w].copy_from_slice(&c.wall_held[r * w..(r + 1) * w]);
            }
            if has_mesh {
                f.mesh_key[s * ms..(s + 1) * ms].copy_from_slice(&c.mesh_key[r * ms..(r + 1) * ms]);
                f.mesh_spring[s * ms..(s + 1) * ms]
                    .copy_from_slice(&c.mesh_spring[r * ms..(r + 1) * ms]);
                if has_roll {
                    f.mesh_roll[s * ms..(s + 1) * ms]
                        .copy_from_slice(&c.roll_mesh[r * ms..(r + 1) * ms]);
                }
            }
            pf.force = c.force[r];
            pf.moment = c.moment[r];
            [pf.e_contact, pf.e_wall, pf.e_near] = c.energy[r];
        }
        // The loads as totals in the first chunk (the sum over chunks adds zeros).
        let nl = self.model.walls.len() + self.model.meshes.len();
        if !c.wall_load.is_empty() && c.wall_load.len() != nl {
            return Err(Error::Snapshot(format!(
                "the contact state has loads of {} walls, but the scene has {nl}",
                c.wall_load.len()
            )));
        }
        f.wall_loads.fill([DVec3::ZERO; 2]);
        if let Some(first) = f.wall_loads.get_mut(..c.wall_load.len()) {
            first.copy_from_slice(&c.wall_load);
        }
        Ok(())
    }

    /// The particles in the system (neither reserved nor removed) with their slots,
    /// ascending by id: the rows of a snapshot's contact state.
    fn rows_in_system(&self) -> Vec<(u32, usize)> {
        let flags = &self.model.particles.flags;
        (self.storage.layout.ids_and_slots(flags.len()))
            .filter(|&(_, s)| crate::backend::in_system(flags[s]))
            .map(|(i, s)| (i as u32, s))
            .collect()
    }

    /// The contact state to store in a snapshot, for granular models: a row for each
    /// particle in the system.
    fn contact_state(&self) -> Option<ContactState> {
        if !granular_model(&self.model) {
            return None;
        }
        let rows = self.rows_in_system();
        let h = self.history_of(&rows);
        let f = &self.forces;
        let ms = forces::mesh_slots(&self.model);
        let mesh = |s: usize| s * ms..(s + 1) * ms;
        let pf = |s: usize| &f.particles[s];
        Some(ContactState {
            slots: h.slots as u32,
            ids: h.ids,
            partner: h.partner,
            spring: h.spring,
            wall_spring: h.wall_spring,
            force: rows.iter().map(|&(_, s)| pf(s).force).collect(),
            moment: rows.iter().map(|&(_, s)| pf(s).moment).collect(),
            energy: (rows.iter())
                .map(|&(_, s)| [pf(s).e_contact, pf(s).e_wall, pf(s).e_near])
                .collect(),
            mesh_key: (rows.iter())
                .flat_map(|&(_, s)| f.mesh_key.get(mesh(s)).unwrap_or_default().iter().copied())
                .collect(),
            mesh_spring: (rows.iter())
                .flat_map(|&(_, s)| {
                    f.mesh_spring
                        .get(mesh(s))
                        .unwrap_or_default()
                        .iter()
                        .copied()
                })
                .collect(),
            wall_load: self
                .compute_wall_loads()
                .iter()
                .map(|l| [l.force, l.moment])
                .collect(),
            roll: h.roll,
            roll_wall: h.wall_roll,
            wall_held: h.wall_held,
            roll_mesh: (rows.iter())
                .flat_map(|&(_, s)| f.mesh_roll.get(mesh(s)).unwrap_or_default().iter().copied())
                .collect(),
        })
    }

    /// Contact history after the last step, in the per-particle layout of snapshots: a
    /// row for each particle in the system, by id (empty without granular forces).
    pub fn history(&self) -> History {
        if !granular_model(&self.model) {
            return History::default();
        }
        self.history_of(&self.rows_in_system())
    }

    /// The contact history of the particles `rows` (id and slot, ascending by id).
    fn history_of(&self, rows: &[(u32, usize)]) -> History {
        let f = &self.forces;
        History::from_pairs(
            &self.neighbors,
            (&f.springs, &f.rolls),
            history_slots(&self.model),
            (
                &f.wall_spring,
                &f.wall_roll,
                &f.wall_held,
                wall_stride(&self.model),
            ),
            &self.storage.layout,
            rows,
        )
    }

    /// Brings the neighbour list up to date for the current positions (the rebuild test
    /// discounting particle 0's displacement from `x0`, [`NeighborList::shift`]); on a
    /// rebuild the pair springs of the current forces move to the new list's slots.
    fn update_neighbors(&mut self, x0: DVec3) {
        let shift = self.list_shift(x0);
        let p = &self.model.particles;
        if self.neighbors.is_stale(&p.position, shift) {
            self.rebuild_neighbors();
        }
    }

    /// The position of particle 0 (by id, wherever it is stored), whose displacement the
    /// rebuild test discounts; `None` without particles.
    fn reference_position(&self) -> Option<DVec3> {
        let s0 = self.storage.layout.slot(0);
        self.model.particles.position.get(s0).copied()
    }

    /// The common displacement the rebuild test discounts: particle 0's
    /// ([`NeighborList::shift`]), or none with meshes at rest, whose candidate lists
    /// are rebuilt with the pair list and hold while no particle has moved `skin/2`
    /// from where it was (a translation of the whole bed moves it towards the mesh).
    fn list_shift(&self, x0: DVec3) -> DVec3 {
        match &self.walls {
            Some(ws) if ws.static_meshes() => DVec3::ZERO,
            _ => self.neighbors.shift(x0, self.storage.layout.slot(0)),
        }
    }

    /// Rebuilds the neighbour list at the current positions, moving the pair springs
    /// of the current forces to the new list's slots (and the mesh candidate lists).
    fn rebuild_neighbors(&mut self) {
        let old = self.tables.is_some().then(|| self.neighbors.clone());
        self.rebuild_list_from(old, &[]);
    }

    /// Rebuilds the lists after a permutation `moved` of storage (empty: none; see
    /// [`contact_history::remap_springs`]), the pair springs moving from `old`'s slots.
    fn rebuild_list_from(&mut self, old: Option<NeighborList>, moved: &[u32]) {
        let p = &self.model.particles;
        if let Some(ws) = &mut self.walls {
            ws.rebuild_list(&p.position, &p.radius);
        }
        self.neighbors.build(&p.position, &p.radius);
        if let Some(old) = old {
            let springs = std::mem::take(&mut self.forces.springs);
            contact_history::remap_springs(
                &old,
                &springs,
                &self.neighbors,
                moved,
                &mut self.forces.springs,
                |c| c.flags != 0,
            );
            if !self.forces.rolls.is_empty() {
                let rolls = std::mem::take(&mut self.forces.rolls);
                let f = &mut self.forces.rolls;
                contact_history::remap_springs(&old, &rolls, &self.neighbors, moved, f, |_| true);
            }
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
            per_particle += std::mem::size_of::<contact_sides::SideScratch>() + 2 * walls * size;
        }
        let per_bond = 2 * std::mem::size_of::<Option<BondResult>>() + 8;
        (model.particles.len() as u64)
            .saturating_mul(per_particle as u64)
            .saturating_add((model.bonds.len() as u64).saturating_mul(per_bond as u64))
    }

    /// Builds the backend at step `step` and evaluates the forces of the model's state,
    /// the particles' (clump spheres' included) replaced by `snapshot`'s when given.
    fn set_up(
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        step: u64,
        snapshot: Option<&StateSnapshot>,
        sort_every: Option<u64>,
    ) -> Result<Self> {
        Self::set_up_compacting(model, integrator, dt, step, snapshot, sort_every, true)
    }

    /// [`CpuBackend::set_up`], compacting storage where the scene allows it
    /// (`storage::compacts`) when `compact`.
    fn set_up_compacting(
        mut model: Model,
        integrator: IntegratorKind,
        dt: f64,
        step: u64,
        snapshot: Option<&StateSnapshot>,
        sort_every: Option<u64>,
        compact: bool,
    ) -> Result<Self> {
        let free = model.particles.len();
        // The bonds by id, before storage names them by slot.
        let mut breakage = breakage::Breakage::new(&model);
        if let Some(b) = &mut breakage {
            b.restore(&model, snapshot.map_or(&[], |s| s.broken.as_slice()))?;
        } else if let Some(s) = snapshot {
            crate::backend::check_breaks(&model, &s.broken)?;
        }
        // From the scene as `varidem check` reads it: before the clumps are expanded
        // and a snapshot's state is applied.
        let dt_advice = crate::physics::granular::time_step_advice(&model).map(|a| a.dt_max);
        if model.breakable() && integrator == IntegratorKind::CampelloTrapezoidal {
            return Err(Error::Backend(
                "bonds with break_* strengths break at an explicit step's force evaluation; the campello-trapezoidal integrator evaluates trial states".into(),
            ));
        }
        let hard_law = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
        if hard_law != (integrator == IntegratorKind::ImpulseVelocity) {
            return Err(Error::Backend(
                "hard contacts ([contact] law = \"hard\") and the impulse-velocity integrator go together".into(),
            ));
        }
        let mut bodies = if model.clumps.is_empty() {
            None
        } else {
            if integrator == IntegratorKind::CampelloTrapezoidal {
                return Err(Error::Backend(
                    "the campello-trapezoidal integrator does not run clumps; use variational, variational-exact or symplectic-euler".into(),
                ));
            }
            if model.domain.is_some_and(|d| d.remove) {
                return Err(Error::Backend(
                    "[domain] on_exit = \"remove\" is not supported for clumps yet; use \"error\""
                        .into(),
                ));
            }
            Some(crate::integrators::bodies::Bodies::expand(&mut model))
        };
        if let Some(s) = snapshot {
            s.apply_to(&mut model.particles)?;
        }
        let insertion = neighbor::Insertion::set_up(
            &mut model,
            dt,
            step,
            snapshot.map(|s| (s.inserted.as_slice(), s.removed.as_slice())),
        )
        .map_err(Error::Snapshot)?;
        if let Some(b) = &mut bodies {
            neighbor::wake_bodies(insertion.as_ref(), b, &mut model);
        }
        // Open systems store only the particles in the system (issue 44 item 4).
        let ids = model.particles.len();
        let compacted = (compact && storage::compacts(&model, integrator))
            .then(|| storage::compact_model(&mut model));
        let n = model.particles.len();
        // Compacted storage holds no clumps: every stored particle is free.
        let free = if compacted.is_some() { n } else { free };
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
        let mut storage = storage::Storage::new(&model, free, sort_every, step);
        if let Some((archive, layout)) = compacted {
            if model.contact.is_some() {
                storage.sortable = n;
            }
            storage.archive = Some(archive);
            storage.layout = layout;
        }
        // Removals of a checkpoint without their steps (format 11 and older) are dated
        // at its step: they are before it, so no resumed run lists them again.
        let exit_steps = snapshot.map_or_else(Default::default, |s| {
            let step_of = |k: usize| s.exit_steps.get(k).copied().unwrap_or(s.step);
            (s.removed.iter().enumerate())
                .map(|(k, &id)| (id, step_of(k)))
                .collect()
        });
        let mut backend = Self {
            forces: ForceState::new(n, nb, &model, ids),
            spare_forces: ForceState::new(n, nb, &model, ids),
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
            bodies,
            free,
            hard: None,
            walls: None,
            insertion,
            dt_advice,
            min_radius: 0.0,
            jkr_reach: 0.0,
            storage,
            exit_steps,
            breakage,
        };
        backend.hard = hard::HardState::new(&backend.model);
        backend.walls = walls::WallState::new(&backend.model, dt, 0.0);
        if n_particles_plus_walls(&backend.model, ids) > u32::MAX as usize {
            return Err(Error::Backend(format!(
                "{} particles, walls and mesh features (8 per triangle) do not fit the 32-bit contact keys",
                n_particles_plus_walls(&backend.model, ids)
            )));
        }
        if let Some(b) = &backend.bodies {
            backend.neighbors.body = b.body_ids(n);
        }
        backend.neighbors.id = backend.storage.layout.id_table().to_vec();
        backend.mark_absent();
        let p = &backend.model.particles;
        backend.min_radius = p.radius.iter().copied().fold(f64::INFINITY, f64::min);
        backend.jkr_reach = crate::physics::jkr::largest_reach(&backend.model);
        backend.field_only = backend.model.bonds.is_empty()
            && !matches!(
                backend.model.contact.map(|c| c.law),
                Some(ContactLaw::Binder { .. })
            )
            && p.flags.iter().all(|&f| f & FLAG_PENDULUM == 0);
        if backend.model.contact.is_some() {
            // The set-up's build is a rebuild: storage starts in space order.
            backend.sort_at_set_up();
            backend.neighbors.build(
                &backend.model.particles.position,
                &backend.model.particles.radius,
            );
        }
        backend.place_walls(step);
        let mut f = std::mem::take(&mut backend.spare_forces);
        backend.evaluate_forces(&mut f, step, true, None, None)?;
        backend.record_breaks(&f, step);
        if let Some(b) = &mut backend.bodies {
            b.gather_loads(&f.particles, backend.model.gravity);
        }
        backend.forces = f;
        backend.spare_forces = ForceState::new(n, nb, &backend.model, ids);
        Ok(backend)
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
    /// [`Frame::contact_count`]), by id; all zero without contacts.
    pub fn contact_counts(&self) -> Vec<u32> {
        let counts = self.contact_counts_by_slot();
        self.storage.layout.to_ids_filled(&counts, 1, 0)
    }

    fn contact_counts_by_slot(&self) -> Vec<u32> {
        let p = &self.model.particles;
        if self.model.contact.is_none() {
            return vec![0; p.len()];
        }
        let mut counts =
            neighbor::contact_counts(&self.neighbors, &p.position, &p.radius, &self.model.walls);
        if let Some(ws) = &self.walls {
            for (i, c) in counts.iter_mut().enumerate() {
                ws.surfaces
                    .contacts(ws.list.of(i), p.position[i], p.radius[i], |_| *c += 1);
            }
        }
        counts
    }

    /// Neighbours of particle `i` in the current contact list (their ids, ascending).
    pub fn neighbor_list(&self, i: usize) -> Vec<u32> {
        if self.model.contact.is_none() {
            return Vec::new();
        }
        let layout = &self.storage.layout;
        let Some(s) = layout.try_slot(i, self.model.particles.len()) else {
            return Vec::new();
        };
        let row = self.neighbors.of(s);
        row.iter().map(|&j| layout.id(j as usize) as u32).collect()
    }

    /// Number of neighbour-list rebuilds so far.
    pub fn neighbor_builds(&self) -> u64 {
        self.neighbors.builds
    }

    /// Time step (s).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Advances one step, then runs the insertion events due at its end.
    pub fn step(&mut self) -> Result<()> {
        match self.integrator {
            IntegratorKind::CampelloTrapezoidal => self.step_trapezoidal()?,
            IntegratorKind::ImpulseVelocity => self.step_hard()?,
            _ => self.step_explicit()?,
        }
        self.insert_due();
        Ok(())
    }

    /// The neighbour list's absent particles: those out of the system, dormant or
    /// removed (none without inserters or removal), as the GPU's `grid_insert` and
    /// `neighbor_build` leave them out: a removed particle, frozen where it left, takes
    /// part in no contact, and a pile of them at an outlet would only fill the rows.
    pub(super) fn mark_absent(&mut self) {
        if self.insertion.is_some() || self.model.domain.is_some_and(|d| d.remove) {
            let flags = &self.model.particles.flags;
            self.neighbors.absent = flags
                .iter()
                .map(|&f| !crate::backend::in_system(f))
                .collect();
        }
    }

    /// Runs the insertion events due at the end of the current step: the placed
    /// particles wake with the field's force (they touch nothing), and the neighbour
    /// lists are rebuilt with them.
    fn insert_due(&mut self) {
        let Some(ins) = &mut self.insertion else {
            return;
        };
        if !ins.due(self.step) {
            return;
        }
        // The inserter speaks ids: it names the placed particles by id, and reads the
        // reserved ones' radii by id (the particles it must miss in any order).
        let layout = &self.storage.layout;
        let p = &self.model.particles;
        // The flags of id `i`: its slot's, or the archive's when it is not stored.
        let archive = self.storage.archive.as_ref();
        let flags = |i: u32| match layout.try_slot(i as usize, p.len()) {
            Some(s) => p.flags[s],
            None => archive.map_or(0, |a| a.flags[i as usize]),
        };
        let removed = |ids: std::ops::Range<u32>| {
            ids.filter(|&i| flags(i) & crate::model::FLAG_REMOVED != 0)
                .count() as u64
        };
        let placed = match archive {
            Some(archive) => ins.insert_with(self.step, p, |i| archive.radius[i], removed),
            None => ins.insert_with(self.step, p, |i| p.radius[layout.slot(i)], removed),
        };
        if placed.is_empty() {
            return;
        }
        if self.storage.archive.is_some() {
            let ids: Vec<u32> = ins.woken(&placed).iter().map(|q| q.id).collect();
            self.store_inserted(&ids);
        }
        let Some(ins) = &self.insertion else {
            return;
        };
        let layout = &self.storage.layout;
        let p = &mut self.model.particles;
        ins.wake_in(&placed, p, |i| layout.slot(i));
        let g = self.model.gravity;
        for q in &placed {
            if q.clump {
                // The body at its place and attitude, no spin, with the field's load;
                // its spheres carry no force of their own yet.
                if let Some(b) = &mut self.bodies {
                    b.wake(q.id as usize, q.position, q.velocity, q.rotation, g);
                }
                for w in ins.woken(std::slice::from_ref(q)) {
                    self.forces.particles[layout.slot(w.id as usize)] = ParticleForce::default();
                }
                continue;
            }
            let i = layout.slot(q.id as usize);
            self.forces.particles[i] = ParticleForce {
                force: p.mass[i] * g,
                ..ParticleForce::default()
            };
        }
        self.mark_absent();
        if self.model.contact.is_some() {
            // A rebuild: with compaction, the removed particles leave storage too.
            self.rebuild_sorted(false, self.step);
        }
    }

    /// One step of the explicit integrators.
    fn step_explicit(&mut self) -> Result<()> {
        let step = self.step + 1;
        // Particle 0's position before the step: the rebuild test discounts its
        // displacement (NeighborList::shift), as the GPU's check_skin does.
        let x0 = self.reference_position();
        let shift = self.list_shift(x0.unwrap_or_default());
        // Predict also runs the rebuild test (NeighborList::is_stale's, particle by
        // particle, while it holds the new positions): one pass fewer.
        let mut stale = self.integrate_predict(step, shift)?;
        if let Some(b) = &mut self.bodies {
            let test = self.model.contact.is_some()
                && self.neighbors.reference().len() == self.model.particles.len();
            let moved = b.predict_pose(
                self.integrator,
                self.dt,
                step,
                &mut self.model.particles,
                &mut self.spare_forces.sides,
                &self.neighbors,
                shift,
                test,
            );
            match moved {
                Ok(m) => stale |= m,
                Err(e) => {
                    b.restore();
                    self.restore();
                    return Err(e);
                }
            }
            if let Some(d) = self.model.domain {
                if let Some(k) = b.state.iter().position(|s| !d.contains(s.x)) {
                    let position = b.state[k].x.to_array();
                    let fault = b.fault(
                        k,
                        crate::error::ClumpFault::LeftDomain {
                            position: Some(position),
                        },
                    );
                    b.restore();
                    self.restore();
                    return Err(Error::fault(step, fault));
                }
            }
        }
        if self.model.contact.is_some() && stale {
            self.rebuild_sorted(self.storage.due(step), step);
        }
        self.place_walls(step);
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
            if let Some(b) = &mut self.bodies {
                b.restore();
            }
            self.restore();
            return Err(e);
        }
        if let Some(b) = &mut self.bodies {
            b.gather_correct(
                self.integrator,
                self.dt,
                &mut self.model.particles,
                &f.particles,
                self.model.gravity,
            );
        }
        self.record_breaks(&f, step);
        self.spare_forces = std::mem::replace(&mut self.forces, f);
        self.step = step;
        Ok(())
    }

    /// Records the bonds the completed evaluation `f` of `step` found broken.
    fn record_breaks(&mut self, f: &ForceState, step: u64) {
        if let Some(b) = &mut self.breakage {
            b.record(step, &f.breaks.new);
        }
    }

    fn restore(&mut self) {
        let p = &mut self.model.particles;
        for (i, k) in self.saved.iter().enumerate() {
            p.position[i] = k.x;
            p.velocity[i] = k.v;
            p.rotation[i] = k.alpha;
            p.angular_velocity[i] = k.omega;
        }
        self.place_walls(self.step);
    }

    /// Places moving walls and meshes at step `step` and brings the mesh candidate
    /// lists up to date for the current positions.
    fn place_walls(&mut self, step: u64) {
        if let Some(ws) = &mut self.walls {
            ws.place(&mut self.model.walls, step);
            let p = &self.model.particles;
            ws.update_list(&p.position, &p.radius);
        }
    }

    /// Checks every state value is finite; names the lowest id that is not.
    pub fn check_finite(&self) -> Result<()> {
        let p = &self.model.particles;
        let fields: [(&'static str, &Vec<DVec3>); 4] = [
            ("position", &p.position),
            ("velocity", &p.velocity),
            ("rotation", &p.rotation),
            ("angular_velocity", &p.angular_velocity),
        ];
        for (id, i) in self.storage.layout.ids_and_slots(p.len()) {
            for (name, v) in &fields {
                if !v[i].is_finite() {
                    return Err(Error::fault(
                        self.step,
                        Fault::NonFinite {
                            particle: id,
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

    fn storage_order(&self) -> Option<(u64, f64)> {
        let list = &self.neighbors;
        let entries = list.neighbors.len();
        let mut total = 0u64;
        for p in 0..list.offsets.len().saturating_sub(1) {
            total += list
                .of(p)
                .iter()
                .map(|&j| (j as i64 - p as i64).unsigned_abs())
                .sum::<u64>();
        }
        Some((self.storage.sorts, total as f64 / entries.max(1) as f64))
    }

    fn insertion_counts(&self) -> Vec<crate::neighbor::InsertCount> {
        self.insertion
            .as_ref()
            .map_or_else(Vec::new, |i| i.counts.clone())
    }

    fn name(&self) -> String {
        "cpu".into()
    }

    fn step_count(&self) -> u64 {
        self.step
    }

    fn wall_loads(&mut self) -> Result<Option<Vec<crate::backend::WallLoad>>> {
        Ok(Some(self.compute_wall_loads()))
    }

    fn take_solver_rows(&mut self) -> Vec<crate::backend::SolverRow> {
        self.hard
            .as_mut()
            .map_or_else(Vec::new, |h| std::mem::take(&mut h.rows))
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
        let removed = crate::model::removed_ids(&self.field_by_id(|p| &p.flags));
        let exit_steps = (removed.iter())
            .map(|id| self.exit_steps.get(id).copied().unwrap_or(self.step))
            .collect();
        Ok(StateSnapshot {
            backend: BackendKind::Cpu,
            backend_name: self.name(),
            precision: Precision::F64,
            step: self.step,
            integrator: self.integrator,
            dt: self.dt,
            position: self.field_by_id(|p| &p.position),
            velocity: self.field_by_id(|p| &p.velocity),
            rotation: self.field_by_id(|p| &p.rotation),
            angular_velocity: self.field_by_id(|p| &p.angular_velocity),
            compensation: Vec::new(),
            origin: DVec3::ZERO,
            device_position: Vec::new(),
            contacts: self.contact_state(),
            removed,
            exit_steps,
            inserted: self
                .insertion
                .as_ref()
                .map_or_else(Vec::new, |i| i.counts.clone()),
            bodies: self.bodies.as_ref().map_or_else(Vec::new, |b| b.snapshot()),
            body_compensation: Vec::new(),
            body_device_position: Vec::new(),
            broken: self
                .breakage
                .as_ref()
                .map_or_else(Vec::new, |b| b.log.clone()),
            hard_impulses: self.hard.as_ref().map_or_else(Vec::new, |h| {
                h.warm
                    .iter()
                    .map(|&(key, impulse)| crate::backend::HardImpulse { key, impulse })
                    .collect()
            }),
        })
    }

    fn bond_breaks(&mut self, after: u64) -> Result<Vec<crate::backend::BondBreak>> {
        Ok(self.breakage.as_ref().map_or_else(Vec::new, |b| {
            let from = b.log.partition_point(|x| x.step <= after);
            b.log[from..].to_vec()
        }))
    }

    fn exits(&mut self, after: u64) -> Result<Vec<crate::backend::Exit>> {
        let p = &self.model.particles;
        let layout = &self.storage.layout;
        let archive = self.storage.archive.as_ref();
        let mut exits: Vec<crate::backend::Exit> = (self.exit_steps.iter())
            .filter(|&(_, &step)| step > after)
            .filter_map(|(&id, &step)| {
                // Stored until the next rebuild, archived after.
                let (q, i) = match layout.try_slot(id as usize, p.len()) {
                    Some(i) => (p, i),
                    None => (archive?, id as usize),
                };
                Some(crate::backend::Exit {
                    step,
                    id,
                    position: q.position[i],
                    velocity: q.velocity[i],
                })
            })
            .collect();
        exits.sort_by_key(|e| (e.step, e.id));
        Ok(exits)
    }

    fn diagnostics(&mut self) -> Result<Diagnostics> {
        // Summed in id order, whatever the storage.
        let by_id = self.particles_by_id();
        let particles = &*by_id;
        let (mut e_kin, mut e_rot, mut momentum, mut angular_momentum, mut e_field) =
            diagnostics::kinematic(particles, self.model.gravity);
        if let Some(b) = &self.bodies {
            // The spheres count in their bodies (diagnostics::kinematic skips them).
            let (k, r, p, l, f) = b.kinematic(self.model.gravity);
            (e_kin, e_rot, momentum, angular_momentum, e_field) = (
                e_kin + k,
                e_rot + r,
                momentum + p,
                angular_momentum + l,
                e_field + f,
            );
        }
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
            e_broken: self
                .breakage
                .as_ref()
                .map_or(0.0, |b| crate::backend::broken_energy(&b.log)),
        })
    }

    /// One row per body: the free particles, then one per clump
    /// (centre of mass, velocity, α and spatial Ω).
    fn particles(&mut self) -> Result<Particles> {
        let by_id = self.particles_by_id().into_owned();
        let Some(b) = &self.bodies else {
            return Ok(by_id);
        };
        let mut out = by_id;
        out.truncate(self.free);
        out.extend(&b.rows());
        Ok(out)
    }

    fn particles_in_system(&mut self) -> Result<(Vec<u32>, Particles)> {
        // Compacted storage holds every particle in the system (and no clump).
        if self.bodies.is_some() || self.storage.archive.is_none() {
            return Ok(self.particles()?.in_system());
        }
        let rows = self.rows_in_system();
        let slots: Vec<usize> = rows.iter().map(|&(_, s)| s).collect();
        Ok((
            rows.iter().map(|&(i, _)| i).collect(),
            self.model.particles.select(&slots),
        ))
    }

    fn frame(&mut self) -> Result<Frame> {
        let f = self.particle_forces();
        let particles = self.particles_by_id().into_owned();
        let mut force: Vec<DVec3> = f.iter().map(|f| f.force).collect();
        let mut moment: Vec<DVec3> = f.iter().map(|f| f.moment).collect();
        crate::backend::unload_out_of_system(&particles.flags, &mut force, &mut moment);
        Ok(Frame {
            step: self.step,
            time: self.time(),
            particles,
            force,
            moment,
            contact_count: self.contact_counts(),
            bond_energy: self.bond_energies(),
            bond_broken: self.breakage.as_ref().map_or_else(Vec::new, |b| {
                b.checks.iter().map(|c| c.broken_at <= self.step).collect()
            }),
            body_id: self
                .bodies
                .as_ref()
                .map_or_else(Vec::new, |b| b.sphere_bodies(self.free)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FLAG_REMOVED;

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
        // The storage as the set-up sorted it, kept (no later sort): the list here
        // orders its rows by the same ids.
        b.set_sort_every(Some(0));
        let p = &b.model.particles;
        let mut list = NeighborList::new(skin);
        list.id = b.neighbors.id.clone();
        list.build(&p.position, &p.radius);
        let builds = b.neighbor_builds() - list.builds;
        for step in 0..400 {
            let s0 = b.storage.layout.slot(0);
            let x0 = b.model.particles.position[s0];
            b.step().unwrap();
            let p = &b.model.particles;
            list.update(&p.position, &p.radius, list.shift(x0, s0));
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
