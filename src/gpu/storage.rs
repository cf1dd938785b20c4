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
//! and scenes with hard contacts or without contacts keep storage in id order, as on
//! the CPU. The set-up sorts storage along the neighbour grid's cells (`[simulation]
//! sort_every` above 0, the default); the GPU does not sort again during a run yet.

use super::GpuOptions;
use crate::model::layout::{shuffled_order, spatial_order, Curve};
use crate::model::{ContactLaw, Layout, Model, DEFAULT_SORT_EVERY};

/// The particles that may move: those before the clumps' spheres, in scenes whose
/// contacts are not hard (0 otherwise).
pub(super) fn sortable(model: &Model) -> usize {
    let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
    if hard || model.contact.is_none() {
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
    // The grid's cell edge (contents.rs, params): every pair the list holds.
    let skin = model.contact.map_or(0.0, |c| c.skin);
    let near = model.near_field.map_or(0.0, |n| n.cutoff);
    let cell = (2.0 * model.particles.max_radius()).max(near) + skin;
    let order = spatial_order(&model.particles.position, sortable, cell, Curve::from_env());
    let moved = order.iter().enumerate().any(|(s, &o)| s as u32 != o);
    moved.then_some(order)
}

/// Stores `device` (a model in id order) in `order` (`order[s]`: the id in slot `s`):
/// its particles, and its bonds' ends as slots. Returns the layout; an `order` that is
/// not a permutation of the particles leaves `device` as it is, in id order.
pub(super) fn store(device: &mut Model, order: &[u32]) -> Layout {
    if order.len() != device.particles.len() {
        return Layout::identity();
    }
    let Some(layout) = Layout::from_ids(order.to_vec()) else {
        return Layout::identity();
    };
    device.particles.permute(order);
    for b in &mut device.bonds {
        b.i = layout.slot(b.i as usize) as u32;
        b.j = layout.slot(b.j as usize) as u32;
    }
    layout
}
