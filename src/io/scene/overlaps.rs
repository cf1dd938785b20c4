//! Overlaps of unbonded particles at `t = 0`: the check that refuses a scene with
//! contacts whose particles start overlapping by more than the allowed fraction, and the
//! worst overlap that `scene_to_toml` writes back as the allowance.

use glam::DVec3;

use super::checks::scene_error;
use super::clumps::{sphere_list, sphere_name};
use crate::error::Result;
use crate::model::Model;

/// Largest initial overlap of two unbonded particles in a scene with contacts, relative
/// to the smaller radius: more is almost always a placement mistake (and an explosion).
pub(super) const MAX_INITIAL_OVERLAP: f64 = 0.05;

/// Rejects scenes with contacts whose spheres overlap by more than `max_overlap` of
/// the smaller radius at `t = 0` (`[contact] max_initial_overlap`, default
/// [`MAX_INITIAL_OVERLAP`]), naming the first such pair (particles, or clumps and their
/// sphere).
pub(super) fn check_initial_overlaps(model: &Model, max_overlap: f64) -> Result<()> {
    match worst_initial_overlap(model, Some(max_overlap)) {
        Some((ratio, i, j, overlap)) if ratio > max_overlap => {
            let limit = overlap / ratio * max_overlap;
            let (a, b) = (sphere_name(model, i), sphere_name(model, j));
            let what = if model.clumps.is_empty() {
                format!("particles {i} and {j}")
            } else {
                format!("{a} and {b}")
            };
            Err(scene_error(format!(
                "{what} overlap by {overlap:.3e} m at t = 0, more than {max_overlap} of the smaller radius ({limit:.3e} m): move them apart, or raise [contact] max_initial_overlap"
            )))
        }
        _ => Ok(()),
    }
}

/// The largest overlap of two unbonded spheres of different bodies relative to the
/// smaller radius: `(ratio, i, j, overlap)` with `i`, `j` indices of
/// [`sphere_list`] (the particles' ids, then the clumps' spheres), or `None` without
/// overlaps. With `stop_above`, the first pair above it (in that order) is returned at
/// once. The spheres of one clump overlap by design and are not compared.
pub(super) fn worst_initial_overlap(
    model: &Model,
    stop_above: Option<f64>,
) -> Option<(f64, usize, usize, f64)> {
    let spheres = sphere_list(model);
    let position: Vec<DVec3> = spheres.iter().map(|s| s.0).collect();
    let radius: Vec<f64> = spheres.iter().map(|s| s.1).collect();
    let bonded: std::collections::HashSet<(u32, u32)> = model
        .bonds
        .iter()
        .map(|b| (b.i.min(b.j), b.i.max(b.j)))
        .collect();
    let mut list = crate::neighbor::NeighborList::new(0.0);
    // Dormant particles and clumps (an inserter's, all at its region's centre) are not
    // there yet.
    let flags = &model.particles.flags;
    let n = flags.len();
    list.absent = (0..spheres.len())
        .map(|i| {
            if i < n {
                crate::model::is_dormant(flags[i])
            } else {
                model.reserved_clump(spheres[i].2 - n)
            }
        })
        .collect();
    list.build(&position, &radius);
    let mut worst: Option<(f64, usize, usize, f64)> = None;
    for i in 0..spheres.len() {
        for &j in list.of(i) {
            let j = j as usize;
            if j <= i || spheres[i].2 == spheres[j].2 || bonded.contains(&(i as u32, j as u32)) {
                continue;
            }
            let overlap = radius[i] + radius[j] - position[i].distance(position[j]);
            if overlap <= 0.0 {
                continue;
            }
            let ratio = overlap / radius[i].min(radius[j]);
            if stop_above.is_some_and(|limit| ratio > limit) {
                return Some((ratio, i, j, overlap));
            }
            if worst.map_or(true, |w| ratio > w.0) {
                worst = Some((ratio, i, j, overlap));
            }
        }
    }
    worst
}
