//! Where the CPU backend stores its particles (issue 44): storage slots apart from
//! ids ([`Layout`]), the spatial sort at neighbour-list rebuilds, compaction (open
//! systems), and the views by id that every boundary reads.
//!
//! Compaction: in a scene with `[[inserter]]`s or `[domain] on_exit = "remove"` (no
//! clumps, any integrator but the trapezoidal one), storage holds only the particles
//! in the system. A reserved particle takes a slot when its inserter places it, and a
//! removed one (without bonds, whose other ends it still pulls) leaves storage at the
//! next neighbour-list rebuild. What is not stored lives in an archive by id: the
//! reserved particles' constants and the removed ones' state at exit, about 150 bytes
//! an id against the kilobytes of a stored particle's force records, contact history
//! and list rows (`docs/performance.md`). The bits do not change: a removed particle
//! takes part in no contact and no sum, so leaving the lists changes nothing but memory
//! and time.
//!
//! The sort moves the particles that are not clumps' spheres (an inserter's reserved
//! ones included); the clumps' spheres (after them) keep their slots for now. Hard
//! contacts are built in id order and keyed by ids, so their scenes sort too, at set-up
//! and at the hard step's rebuilds (which then take the solver's bodies again). Whatever the layout, the
//! results are the same bits: each particle sums its contacts in ascending partner id
//! (the neighbour list orders rows by id), a pair is computed by its lower id, and the
//! global sums (energies, momenta, wall loads) and the particle a fault names follow
//! ids.

use std::borrow::Cow;

use super::forces::{wall_stride, ForceState, ParticleForce};
use super::CpuBackend;
pub(super) use crate::model::layout::compacts;
use crate::model::layout::{
    bonded_ids, gather_rows, out_of_system, shuffled_order, spatial_order, Curve, NOT_STORED,
};
use crate::model::{Incidence, Layout, Model, Particles, DEFAULT_SORT_EVERY, FLAG_REMOVED};

/// The storage settings of a run.
#[derive(Clone, Debug)]
pub(super) struct Storage {
    /// Which id each slot holds.
    pub(super) layout: Layout,
    /// Sort at a rebuild at least this many steps after the last sort (0: never).
    pub(super) sort_every: u64,
    /// The step of the last sort (or of the set-up).
    pub(super) last_sort: u64,
    /// Slots `0..sortable` may move (the particles before the clumps' spheres).
    pub(super) sortable: usize,
    /// Sorts so far.
    pub(super) sorts: u64,
    /// The curve storage is sorted along.
    pub(super) curve: Curve,
    /// Compaction: every particle by id, the state of those not stored (reserved ones
    /// not inserted yet, removed ones as they left); `None` when every id keeps a slot.
    pub(super) archive: Option<Particles>,
    /// Particles that have left storage so far (compaction).
    pub(super) dropped: u64,
}

/// Compacts `model` (by id) in place: only the particles in the system keep slots, in
/// id order, and the bonds' ends become slots. Returns the archive (the particles by
/// id, as they were) and the layout.
pub(super) fn compact_model(model: &mut Model) -> (Particles, Layout) {
    let n = model.particles.len();
    let bonded = bonded_ids(model);
    let flags = &model.particles.flags;
    let keep: Vec<u32> = (0..n as u32)
        .filter(|&i| !out_of_system(flags[i as usize], bonded[i as usize]))
        .collect();
    let archive = model.particles.clone();
    let layout = Layout::from_stored(keep.clone(), n).expect("ascending distinct ids");
    model.particles.gather(&keep);
    for b in &mut model.bonds {
        b.i = layout.slot(b.i as usize) as u32;
        b.j = layout.slot(b.j as usize) as u32;
    }
    (archive, layout)
}

impl Storage {
    /// The settings for `model` (`free`: its particles before the clumps' spheres) from
    /// `sort_every` (`None`: [`DEFAULT_SORT_EVERY`]), starting at `step`.
    pub(super) fn new(model: &Model, free: usize, sort_every: Option<u64>, step: u64) -> Self {
        let sortable = if model.contact.is_none() { 0 } else { free };
        Self {
            layout: Layout::identity(),
            sort_every: sort_every.unwrap_or(DEFAULT_SORT_EVERY),
            last_sort: step,
            sortable,
            sorts: 0,
            curve: Curve::from_env(),
            archive: None,
            dropped: 0,
        }
    }

    /// Whether a rebuild at `step` sorts.
    pub(super) fn due(&self, step: u64) -> bool {
        self.sort_every > 0 && self.sortable > 1 && step >= self.last_sort + self.sort_every
    }
}

/// Every per-particle array of `f` (`n` slots) gathered by `order` (`nw` wall springs
/// and `nm` mesh slots per particle).
fn permute_forces(f: &mut ForceState, order: &[u32], nw: usize, nm: usize, n: usize) {
    gather_rows(&mut f.particles, order, 1, n);
    gather_rows(&mut f.wall_spring, order, nw, n);
    gather_rows(&mut f.mesh_key, order, nm, n);
    gather_rows(&mut f.mesh_spring, order, nm, n);
    gather_rows(&mut f.wall_roll, order, nw, n);
    gather_rows(&mut f.mesh_roll, order, nm, n);
    gather_rows(&mut f.wall_held, order, nw, n);
    gather_rows(&mut f.sides.side, order, 1, n);
    gather_rows(&mut f.sides.spin, order, 1, n);
}

/// Every per-particle array of `f` grown to `n` slots: the new ones without force,
/// springs or mesh contacts.
/// Wall springs exist for granular models only (`granular`), as in `ForceState::new`.
/// Rolling springs exist with rolling resistance only (`rolling`).
fn grow_forces(
    f: &mut ForceState,
    n: usize,
    (nw, nm): (usize, usize),
    granular: bool,
    rolling: bool,
) {
    f.particles.resize(n, ParticleForce::default());
    if granular {
        f.wall_spring.resize(n * nw, glam::DVec3::ZERO);
    }
    f.mesh_key
        .resize(n * nm, crate::physics::granular::NO_PARTNER);
    f.mesh_spring.resize(n * nm, glam::DVec3::ZERO);
    if !f.wall_held.is_empty() {
        f.wall_held.resize(n * nw, 0);
    }
    if rolling {
        f.wall_roll.resize(n * nw, glam::DVec3::ZERO);
        f.mesh_roll.resize(n * nm, glam::DVec3::ZERO);
    }
}

impl CpuBackend {
    /// Which id each storage slot holds.
    pub fn layout(&self) -> &Layout {
        &self.storage.layout
    }

    /// Particles stored: the slots of storage (with compaction, those in the system).
    pub fn stored(&self) -> usize {
        self.model.particles.len()
    }

    /// Particles that have left storage so far (compaction; see the module docs).
    pub fn dropped(&self) -> u64 {
        self.storage.dropped
    }

    /// Spatial sorts of storage so far.
    pub fn sorts(&self) -> u64 {
        self.storage.sorts
    }

    /// Moves the particle of slot `order[s]` to slot `s` for every `s`, carrying every
    /// per-particle array (state, forces, wall and mesh springs, contact sides, the
    /// saved state, bonds); the slots `order` leaves out leave storage (compaction:
    /// their state goes to the archive). The neighbour list must be rebuilt next (its
    /// rows hold the old slots), which [`CpuBackend::rebuild_sorted`] does.
    fn permute(&mut self, order: &[u32]) {
        let n = self.model.particles.len();
        let layout = &self.storage.layout;
        if order.len() < n {
            let mut kept = vec![false; n];
            for &o in order {
                kept[o as usize] = true;
            }
            if let Some(archive) = &mut self.storage.archive {
                for s in (0..n).filter(|&s| !kept[s]) {
                    archive.set_row(layout.id(s), &self.model.particles, s);
                    self.storage.dropped += 1;
                }
            }
        }
        self.model.particles.gather(order);
        let mut new_slot = vec![NOT_STORED; n];
        for (s, &o) in order.iter().enumerate() {
            new_slot[o as usize] = s as u32;
        }
        for b in &mut self.model.bonds {
            b.i = new_slot[b.i as usize];
            b.j = new_slot[b.j as usize];
        }
        if !self.model.bonds.is_empty() || order.len() != n {
            self.incidence = Incidence::build(order.len(), &self.model.bonds);
        }
        gather_rows(&mut self.saved, order, 1, n);
        let (nw, nm) = (
            wall_stride(&self.model),
            super::forces::mesh_slots(&self.model),
        );
        permute_forces(&mut self.forces, order, nw, nm, n);
        permute_forces(&mut self.spare_forces, order, nw, nm, n);
        self.neighbors.gather(order, n);
        self.storage.layout = self.storage.layout.kept(order, n);
        self.neighbors.id = self.storage.layout.id_table().to_vec();
        if self.storage.archive.is_some() {
            // Compacted storage holds no clumps: every stored particle is free.
            self.free = order.len();
            if self.model.contact.is_some() {
                self.storage.sortable = order.len();
            }
        }
    }

    /// Compaction: the slots to keep (in slot order) when some stored particles are
    /// removed and may leave storage; `None` otherwise.
    fn kept_slots(&self) -> Option<Vec<u32>> {
        self.storage.archive.as_ref()?;
        let p = &self.model.particles;
        let offsets = &self.incidence.offsets;
        let bonded = |s: usize| {
            offsets
                .get(s + 1)
                .zip(offsets.get(s))
                .is_some_and(|(b, a)| b > a)
        };
        let leaves = |s: usize| p.flags[s] & FLAG_REMOVED != 0 && !bonded(s);
        if !(0..p.len()).any(leaves) {
            return None;
        }
        Some(
            (0..p.len() as u32)
                .filter(|&s| !leaves(s as usize))
                .collect(),
        )
    }

    /// Compaction: stores the particles of ids `ids` (an inserter's, just placed: not
    /// stored yet) after the others, from the archive, with empty force records. The
    /// neighbour list must be rebuilt next.
    pub(super) fn store_inserted(&mut self, ids: &[u32]) {
        let Some(archive) = &self.storage.archive else {
            return;
        };
        let n = self.model.particles.len();
        let fresh: Vec<u32> = (ids.iter().copied())
            .filter(|&i| self.storage.layout.try_slot(i as usize, n).is_none())
            .collect();
        if fresh.is_empty() {
            return;
        }
        for &i in &fresh {
            self.model.particles.push_row(archive, i as usize);
        }
        self.storage.layout = self.storage.layout.appended(&fresh, n);
        self.neighbors.id = self.storage.layout.id_table().to_vec();
        let m = self.model.particles.len();
        let (nw, nm) = (
            wall_stride(&self.model),
            super::forces::mesh_slots(&self.model),
        );
        let granular = super::forces::granular_model(&self.model);
        let rolling = self.model.rolling().is_some();
        grow_forces(&mut self.forces, m, (nw, nm), granular, rolling);
        grow_forces(&mut self.spare_forces, m, (nw, nm), granular, rolling);
        self.incidence = Incidence::build(m, &self.model.bonds);
        // Compacted storage holds no clumps: every stored particle is free.
        self.free = m;
        if self.model.contact.is_some() {
            self.storage.sortable = m;
        }
    }

    /// The particles by id: every id's row, stored or archived.
    pub(super) fn particles_by_id(&self) -> Cow<'_, Particles> {
        let layout = &self.storage.layout;
        let p = &self.model.particles;
        match &self.storage.archive {
            _ if layout.is_identity() && self.storage.archive.is_none() => Cow::Borrowed(p),
            Some(archive) => {
                let mut out = archive.clone();
                for (s, i) in (0..p.len()).map(|s| (s, layout.id(s))) {
                    out.set_row(i, p, s);
                }
                Cow::Owned(out)
            }
            None => Cow::Owned(p.to_ids(layout)),
        }
    }

    /// One per-particle array by id (`field` of a particle table): the stored
    /// particles' values from storage, the others' from the archive. What a snapshot
    /// takes, without copying the archive's other arrays.
    pub(super) fn field_by_id<T: Clone>(&self, field: impl Fn(&Particles) -> &Vec<T>) -> Vec<T> {
        let p = &self.model.particles;
        let layout = &self.storage.layout;
        match &self.storage.archive {
            None => layout.to_ids(field(p), 1),
            Some(archive) => {
                let mut out = field(archive).clone();
                for (s, v) in field(p).iter().enumerate() {
                    out[layout.id(s)] = v.clone();
                }
                out
            }
        }
    }

    /// The ids the run knows: stored or not.
    pub(super) fn id_count(&self) -> usize {
        self.storage
            .archive
            .as_ref()
            .map_or(self.model.particles.len(), |a| a.len())
    }

    /// Rebuilds the neighbour list, first sorting storage along a space-filling curve
    /// when `sort` (the pair springs follow their pairs either way).
    /// (With compaction, the removed particles leave storage at every rebuild.)
    pub(super) fn rebuild_sorted(&mut self, sort: bool, step: u64) {
        self.mark_absent();
        let kept = self.kept_slots();
        if !sort && kept.is_none() {
            self.rebuild_neighbors();
            return;
        }
        let mut order = if sort {
            self.spatial_order()
        } else {
            (0..self.model.particles.len() as u32).collect()
        };
        if let Some(kept) = kept {
            let mut keep = vec![false; self.model.particles.len()];
            for s in kept {
                keep[s as usize] = true;
            }
            order.retain(|&s| keep[s as usize]);
        }
        self.reorder(&order);
        if sort {
            self.storage.last_sort = step;
            self.storage.sorts += 1;
        }
    }

    /// A neighbour-list rebuild now, after a spatial sort of storage when `sort`: what
    /// a rebuild costs with and without the sort (`benches/cpu_step.rs` times both).
    /// The results of the run do not change.
    pub fn rebuild_now(&mut self, sort: bool) {
        if self.model.contact.is_none() {
            return;
        }
        let step = self.step;
        self.rebuild_sorted(sort && self.storage.sortable > 1, step);
    }

    /// The set-up's spatial sort (sorting on, before the first list is built: there are
    /// no pair springs yet; a restored history is read by id afterwards).
    pub(super) fn sort_at_set_up(&mut self) {
        if self.storage.sort_every > 0 && self.storage.sortable > 1 {
            let order = self.spatial_order();
            self.permute(&order);
            self.storage.sorts += 1;
        }
    }

    /// The order of a spatial sort now: cells of the neighbour grid's edge
    /// (`2 r_max + skin`, or the near-field reach), along the curve
    /// `VARIDEM_SORT_CURVE` names (default: cells in z, y, x order).
    fn spatial_order(&self) -> Vec<u32> {
        let p = &self.model.particles;
        let r_max = p.radius.iter().copied().fold(0.0, f64::max);
        let list = &self.neighbors;
        let cell = (2.0 * r_max).max(list.min_reach) + list.skin;
        spatial_order(&p.position, self.storage.sortable, cell, self.storage.curve)
    }

    /// Moves the particle of slot `order[s]` to slot `s` and rebuilds the neighbour
    /// list, the pair springs following their pairs.
    fn reorder(&mut self, order: &[u32]) {
        let old = self.tables.is_some().then(|| self.neighbors.clone());
        self.permute(order);
        self.rebuild_list_from(old, order);
    }

    /// Stores the particles in a seeded random order (the sortable ones, as a sort
    /// would move them) and rebuilds the neighbour list: the same run continues with
    /// the same results, which is what the storage-independence tests check
    /// (`tests/storage_order.rs`).
    pub fn shuffle_storage(&mut self, seed: u64) {
        let n = self.model.particles.len();
        let order = shuffled_order(n, self.storage.sortable, seed);
        if self.model.contact.is_some() {
            self.reorder(&order);
        } else {
            self.permute(&order);
        }
    }

    /// The model with its particle arrays and bonds by id.
    pub fn model(&self) -> Cow<'_, Model> {
        let layout = &self.storage.layout;
        if layout.is_identity() && self.storage.archive.is_none() {
            return Cow::Borrowed(&self.model);
        }
        let mut m = self.model.clone();
        m.particles = self.particles_by_id().into_owned();
        for b in &mut m.bonds {
            b.i = layout.id(b.i as usize) as u32;
            b.j = layout.id(b.j as usize) as u32;
        }
        Cow::Owned(m)
    }

    /// Force, moment and contact energies of every particle at the current state, by
    /// id.
    pub fn particle_forces(&self) -> Cow<'_, [ParticleForce]> {
        let f = &self.forces.particles;
        let layout = &self.storage.layout;
        if layout.is_identity() {
            Cow::Borrowed(f)
        } else {
            Cow::Owned(layout.to_ids_filled(f, 1, ParticleForce::default()))
        }
    }
}
