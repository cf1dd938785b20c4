//! Where the GPU backend stores its particles (issue 44): storage slots apart from ids,
//! as on the CPU backend ([`Layout`], `src/cpu/storage.rs`).
//!
//! The device holds the particles in the layout's order; the host's model stays in id
//! order, and every boundary (read-backs, uploads, insertion, faults) goes through the
//! layout. The kernels speak ids through the `O_ID` and `O_SLOT` sections of
//! `particle_flags` (`id_of`, `slot_of` in `shaders/common/layout.wgsl`): neighbour rows
//! ascend by partner id, a pair belongs to its lower id, contact histories are keyed by
//! partner id, the diagnostics' tree sums leaves in id order and faults name ids. So a
//! run gives the same bits whatever the order its particles are stored in
//! (`tests/gpu_storage_order.rs`). Only the particles before the clumps' spheres move,
//! and scenes without contacts keep storage in id order, as on the CPU; hard contacts
//! are laid out and keyed by id (`shaders/hard.wgsl`), so their scenes sort too. The set-up sorts storage along the neighbour grid's cells (`[simulation]
//! sort_every` above 0, the default), and the run sorts again every `sort_every`
//! steps on the device (`src/gpu/sort.rs`).
//!
//! Compaction (open systems, `model::layout::compacts`): the device stores the
//! particles in the system (removed ones with bonds too) and the reserved ones that the
//! next insertion events will place, ahead of them, and no others: a run is sized by
//! its live count, not by every sphere its inserters will ever place. When the next
//! event's spheres are not all stored, the backend takes a snapshot and sets up again
//! from it in a new layout (`GpuBackend::restore_storage`): the removed particles
//! leave, the next reserved ones come in, and the slot count doubles if the live ones
//! need it. A restore continues a run bit for bit (checkpoints rely on it), so the
//! results are those of full storage (`tests/gpu_compaction.rs`). The ids not stored
//! are read from the host's model by id (reserved ones as the scene has them, removed
//! ones as they left).

use std::collections::BTreeMap;

use super::{GpuBackend, GpuOptions};
use crate::backend::Backend;
use crate::error::Result;
use crate::model::layout::{bonded_ids, out_of_system, shuffled_order, spatial_order, Curve};
use crate::model::{Layout, Model, DEFAULT_SORT_EVERY};
use crate::neighbor::Insertion;

/// A compacted run's slot count is a multiple of this: it changes (and the kernels,
/// whose section offsets follow it, are compiled again) only when the live particles
/// outgrow it.
const SLOT_STEP: usize = 256;

/// A compacted run's storage state (issue 44).
#[derive(Clone, Debug)]
pub(super) struct Compaction {
    /// The scene's model, by id, as the run was set up from (a new layout is set up
    /// from it and a snapshot).
    pub scene: Model,
    /// The run's options.
    pub options: GpuOptions,
    /// Slots the device holds: the most the run has needed, never fewer.
    pub slots: usize,
    /// The exit steps of the removed particles that are no longer stored, by id.
    pub exit_steps: BTreeMap<u32, u64>,
    /// New layouts set up during the run.
    pub restores: u64,
    /// The `f32` snapshot rows (9 Kahan terms, 3 device coordinates) of the removed
    /// particles that are no longer stored, by id, as the snapshot they left storage
    /// at had them (their state is frozen since).
    pub archive: BTreeMap<u32, ([f32; 9], [f32; 3])>,
}

/// The ids a compacted run of `model` (by id, in the state of step `step`: flags say
/// which are in the system) stores, ascending, and the slot count: the particles in the
/// system (removed ones with bonds too), then reserved ones in the order `insertion`
/// will place them, the whole next event at least, up to the slot count. That is at
/// least `slots`, and at least 1.5 times what the live particles and the next event
/// need, rounded up to a multiple of 256: the reserved ones fill the rest, so that a
/// stream of events sets up again only every few events.
pub(super) fn stored_ids(
    model: &Model,
    insertion: Option<&Insertion>,
    step: u64,
    slots: usize,
) -> (Vec<u32>, usize) {
    let bonded = bonded_ids(model);
    let flags = &model.particles.flags;
    let mut ids: Vec<u32> = (0..flags.len() as u32)
        .filter(|&i| !out_of_system(flags[i as usize], bonded[i as usize]))
        .collect();
    let live = ids.len();
    let next = insertion.map_or(0, |ins| ins.upcoming(step, 0).len());
    let slots = slots
        .max((3 * (live + next) / 2).div_ceil(SLOT_STEP) * SLOT_STEP)
        .min(flags.len());
    if let Some(ins) = insertion {
        let ahead = ins.upcoming(step, slots.saturating_sub(live));
        let room = slots.saturating_sub(live).max(next);
        ids.extend(
            ahead
                .iter()
                .take(room)
                .filter(|&&i| crate::model::is_dormant(flags[i as usize])),
        );
    }
    ids.sort_unstable();
    ids.dedup();
    let slots = slots.max(ids.len());
    (ids, slots)
}

/// The order a compacted run stores `stored` (ids of `device`, a model by id) in
/// (`order[s]`: the id in slot `s`): along the neighbour grid's cells as
/// [`set_up_order`] sorts, a seeded shuffle when `options.shuffle_storage` asks for
/// one, or ascending ids when `options.sort_every` is 0.
pub(super) fn compacted_order(device: &Model, stored: &[u32], options: &GpuOptions) -> Vec<u32> {
    if let Some(seed) = options.shuffle_storage {
        let o = shuffled_order(stored.len(), stored.len(), seed);
        return o.iter().map(|&k| stored[k as usize]).collect();
    }
    if options.sort_every.unwrap_or(DEFAULT_SORT_EVERY) == 0 {
        return stored.to_vec();
    }
    let position: Vec<glam::DVec3> = (stored.iter())
        .map(|&i| device.particles.position[i as usize])
        .collect();
    let o = spatial_order(
        &position,
        stored.len(),
        cell_edge(device),
        Curve::from_env(),
    );
    o.iter().map(|&k| stored[k as usize]).collect()
}

/// The neighbour grid's cell edge (contents.rs, params): every pair the list holds.
pub(super) fn cell_edge(model: &Model) -> f64 {
    let skin = model.contact.map_or(0.0, |c| c.skin);
    let near = model.near_field.map_or(0.0, |n| n.cutoff);
    (2.0 * model.particles.max_radius()).max(near) + skin
}

/// Stores the ids `order` of `device` (a model by id) in slots `0..order.len()` (all of
/// them: a permutation; some: compacted storage, the others nowhere): its particles,
/// and its bonds' ends as slots (a bonded particle is always stored). Returns the
/// layout; an `order` that repeats an id or names none of the model leaves `device` as
/// it is, in id order.
pub(super) fn store(device: &mut Model, order: &[u32]) -> Layout {
    let ids = device.particles.len();
    let Some(layout) = Layout::from_stored(order.to_vec(), ids) else {
        return Layout::identity();
    };
    device.particles.gather(order);
    for b in &mut device.bonds {
        b.i = layout.slot(b.i as usize) as u32;
        b.j = layout.slot(b.j as usize) as u32;
    }
    layout
}

/// The particles that may move: those before the clumps' spheres, in scenes with
/// contacts (0 otherwise). Hard contacts are keyed and laid out by id
/// (`shaders/hard.wgsl`), so their scenes sort too.
pub(super) fn sortable(model: &Model) -> usize {
    if model.contact.is_none() {
        return 0;
    }
    let spheres: usize = (model.clumps.iter())
        .map(|c| model.clump_types[c.kind as usize].spheres.len())
        .sum();
    model.particles.len().saturating_sub(spheres)
}

/// The order the set-up stores `model`'s particles in (`order[s]`: the id in slot `s`),
/// or `None` for id order: a seeded random one when `options.shuffle_storage` asks
/// for it, else along the neighbour grid's cells (as the CPU backend's set-up sorts)
/// unless `options.sort_every` is 0.
pub(super) fn set_up_order(model: &Model, options: &GpuOptions) -> Option<Vec<u32>> {
    let sortable = sortable(model);
    if sortable < 2 {
        return None;
    }
    if let Some(seed) = options.shuffle_storage {
        return Some(shuffled_order(model.particles.len(), sortable, seed));
    }
    if options.sort_every.unwrap_or(DEFAULT_SORT_EVERY) == 0 {
        return None;
    }
    let order = spatial_order(
        &model.particles.position,
        sortable,
        cell_edge(model),
        Curve::from_env(),
    );
    let moved = order.iter().enumerate().any(|(s, &o)| s as u32 != o);
    moved.then_some(order)
}

impl GpuBackend {
    /// Compacted storage: sets up a new layout from a snapshot when the next insertion
    /// event's spheres are not all stored (see the module's notes); nothing otherwise.
    /// The run goes on with the same bits (a restore continues a run exactly).
    pub(super) fn restore_storage(&mut self) -> Result<()> {
        let (Some(c), Some(ins)) = (&self.compaction, &self.insertion) else {
            return Ok(());
        };
        let n = self.n as usize;
        let next = ins.upcoming(self.steps, 0);
        if next
            .iter()
            .all(|&i| self.layout.try_slot(i as usize, n).is_some())
        {
            return Ok(());
        }
        let (scene, options, slots, restores) =
            (c.scene.clone(), c.options.clone(), c.slots, c.restores + 1);
        let snapshot = self.checkpoint_state()?;
        let mut next = Self::restore_with(self.ctx.clone(), scene, &snapshot, &options, slots)?;
        if let Some(c) = &mut next.compaction {
            c.restores = restores;
        }
        // The new layout is sorted at its set-up; the count and time of the sorts
        // during the run go on.
        if let (Some(old), Some(new)) = (&self.sorting, &mut next.sorting) {
            new.sorts = old.sorts;
            new.attempts = old.attempts;
            new.seconds = old.seconds;
        }
        log::debug!(
            "step {}: storage set up again ({} slots for {} ids)",
            self.steps,
            next.n,
            next.id_count()
        );
        *self = next;
        Ok(())
    }

    /// Gives the rows of particles out of the system in `s` (this backend's snapshot)
    /// the values that do not depend on storage: a reserved particle's as the scene has
    /// it (no Kahan terms, its device coordinates rounded from them), a removed one
    /// that is not stored those it had when it left storage. So a snapshot is the same
    /// whether such a particle is stored or not (compaction, `f32` resumes).
    pub(super) fn canonical_out_of_system(&self, s: &mut crate::backend::StateSnapshot) {
        let p = &self.model.particles;
        let n = p.len();
        let f32_rows = s.compensation.len() == 9 * n && s.device_position.len() == 3 * n;
        for i in 0..n.min(s.position.len()) {
            if crate::model::is_dormant(p.flags[i]) {
                s.position[i] = p.position[i];
                s.velocity[i] = p.velocity[i];
                s.rotation[i] = p.rotation[i];
                s.angular_velocity[i] = p.angular_velocity[i];
                if f32_rows {
                    s.compensation[9 * i..9 * i + 9].fill(0.0);
                    let d = p.position[i] - self.origin;
                    s.device_position[3 * i..3 * i + 3]
                        .copy_from_slice(&[d.x as f32, d.y as f32, d.z as f32]);
                }
            }
        }
        if let (Some(c), true) = (&self.compaction, f32_rows) {
            for (&i, (k, d)) in &c.archive {
                let i = i as usize;
                s.compensation[9 * i..9 * i + 9].copy_from_slice(k);
                s.device_position[3 * i..3 * i + 3].copy_from_slice(d);
            }
        }
    }

    /// Storage slots and new layouts set up so far (compacted storage; `None` when
    /// every id is stored).
    pub fn compacted_storage(&self) -> Option<(usize, u64)> {
        self.compaction
            .as_ref()
            .map(|c| (self.n as usize, c.restores))
    }
}
