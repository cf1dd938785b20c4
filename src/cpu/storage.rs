//! Where the CPU backend stores its particles (issue 44): storage slots apart from
//! ids ([`Layout`]), the spatial sort at neighbour-list rebuilds, and the views by id
//! that every boundary reads.
//!
//! The sort moves the particles that are not clumps' spheres (an inserter's reserved
//! ones included); the clumps' spheres (after them) keep their slots for now. Hard
//! contacts are built in id order and keyed by ids, so their scenes sort too, at set-up
//! only (the hard step rebuilds its list without sorting). Whatever the layout, the
//! results are the same bits: each particle sums its contacts in ascending partner id
//! (the neighbour list orders rows by id), a pair is computed by its lower id, and the
//! global sums (energies, momenta, wall loads) and the particle a fault names follow
//! ids.

use std::borrow::Cow;

use super::forces::{wall_stride, ForceState, ParticleForce};
use super::CpuBackend;
use crate::model::layout::{permute_rows, shuffled_order, spatial_order, Curve};
use crate::model::{Incidence, Layout, Model, DEFAULT_SORT_EVERY};

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
        }
    }

    /// Whether a rebuild at `step` sorts.
    pub(super) fn due(&self, step: u64) -> bool {
        self.sort_every > 0 && self.sortable > 1 && step >= self.last_sort + self.sort_every
    }
}

/// Every per-particle array of `f` rearranged by `order` (`nw` wall springs and `nm`
/// mesh slots per particle).
fn permute_forces(f: &mut ForceState, order: &[u32], nw: usize, nm: usize) {
    permute_rows(&mut f.particles, order, 1);
    permute_rows(&mut f.wall_spring, order, nw);
    permute_rows(&mut f.mesh_key, order, nm);
    permute_rows(&mut f.mesh_spring, order, nm);
    permute_rows(&mut f.sides.side, order, 1);
    permute_rows(&mut f.sides.spin, order, 1);
}

impl CpuBackend {
    /// Which id each storage slot holds.
    pub fn layout(&self) -> &Layout {
        &self.storage.layout
    }

    /// Spatial sorts of storage so far.
    pub fn sorts(&self) -> u64 {
        self.storage.sorts
    }

    /// Moves the particle of slot `order[s]` to slot `s` for every `s`, carrying every
    /// per-particle array (state, forces, wall and mesh springs, contact sides, the
    /// saved state, bonds); the neighbour list must be rebuilt next (its rows hold the
    /// old slots), which [`CpuBackend::rebuild_sorted`] does.
    fn permute(&mut self, order: &[u32]) {
        let n = self.model.particles.len();
        debug_assert_eq!(order.len(), n);
        self.model.particles.permute(order);
        let mut new_slot = vec![0u32; n];
        for (s, &o) in order.iter().enumerate() {
            new_slot[o as usize] = s as u32;
        }
        for b in &mut self.model.bonds {
            b.i = new_slot[b.i as usize];
            b.j = new_slot[b.j as usize];
        }
        if !self.model.bonds.is_empty() {
            self.incidence = Incidence::build(n, &self.model.bonds);
        }
        permute_rows(&mut self.saved, order, 1);
        let (nw, nm) = (
            wall_stride(&self.model),
            super::forces::mesh_slots(&self.model),
        );
        permute_forces(&mut self.forces, order, nw, nm);
        permute_forces(&mut self.spare_forces, order, nw, nm);
        self.neighbors.permute(order);
        self.storage.layout = self.storage.layout.reordered(order);
        self.neighbors.id = self.storage.layout.id_table().to_vec();
    }

    /// Rebuilds the neighbour list, first sorting storage along a space-filling curve
    /// when `sort` (the pair springs follow their pairs either way).
    pub(super) fn rebuild_sorted(&mut self, sort: bool, step: u64) {
        if !sort {
            self.rebuild_neighbors();
            return;
        }
        let order = self.spatial_order();
        self.reorder(&order);
        self.storage.last_sort = step;
        self.storage.sorts += 1;
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
        if layout.is_identity() {
            return Cow::Borrowed(&self.model);
        }
        let mut m = self.model.clone();
        m.particles = self.model.particles.to_ids(layout);
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
        if self.storage.layout.is_identity() {
            Cow::Borrowed(f)
        } else {
            Cow::Owned(self.storage.layout.to_ids(f, 1))
        }
    }
}
