//! Overlaps of unbonded particles at `t = 0`: the check that refuses a scene with
//! contacts whose particles start overlapping by more than the allowed fraction, and the
//! worst overlap that `scene_to_toml` writes back as the allowance.

use glam::DVec3;

use super::checks::scene_error;
use super::clumps::{sphere_list, sphere_name};
use crate::error::Result;
use crate::model::Model;
use crate::neighbor::MeshList;
use crate::physics::mesh::MeshSurfaces;

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

/// Rejects scenes whose spheres (particles and clumps' spheres, not those an inserter
/// has yet to insert) start overlapping a plane wall or a mesh by more than
/// `max_overlap` of their radius, or lie behind a plane (issue 49: a particle wholly
/// behind a plane started with 5.2·10³ J of wall energy). The planes and meshes are
/// placed at t = 0, and mesh contacts are found as the backends find them
/// ([`MeshSurfaces::contacts`] over the [`MeshList`] candidates).
pub(super) fn check_initial_wall_overlaps(model: &Model, max_overlap: f64) -> Result<()> {
    if model.walls.is_empty() && model.meshes.is_empty() {
        return Ok(());
    }
    let spheres = sphere_list(model);
    let n = model.particles.len();
    let present = |s: usize| {
        if s < n {
            !crate::model::is_dormant(model.particles.flags[s])
        } else {
            !model.reserved_clump(spheres[s].2 - n)
        }
    };
    let refuse = |s: usize, what: String, overlap: f64, r: f64| {
        Err(scene_error(format!(
            "{} overlaps {what} by {overlap:.3e} m at t = 0, more than {max_overlap} of its radius ({:.3e} m): move it out, or raise [contact] max_initial_overlap",
            sphere_name(model, s),
            max_overlap * r
        )))
    };
    // An overlap of exactly the allowance (0.1 − 0.095 against 0.05 × 0.1) passes
    // whatever the rounding.
    let allowed = |r: f64| max_overlap * r * (1.0 + 1e-9);
    for (k, wall) in model.walls.iter().enumerate() {
        let wall = wall.placed(&wall.motion.pose(0.0));
        for (s, &(x, r, _)) in spheres.iter().enumerate() {
            let d = wall.distance(x);
            let overlap = r - d;
            if !present(s) || overlap <= allowed(r) {
                continue;
            }
            if d <= -r {
                return Err(scene_error(format!(
                    "{} lies wholly behind wall[{k}] at t = 0 (its centre {d:.3e} m from the plane, radius {r:.3e} m): a plane wall holds spheres on the side its normal points to",
                    sphere_name(model, s)
                )));
            }
            return refuse(s, format!("wall[{k}]"), overlap, r);
        }
    }
    if model.meshes.is_empty() {
        return Ok(());
    }
    let mut surfaces = MeshSurfaces::new(&model.meshes);
    surfaces.place(0.0);
    let position: Vec<DVec3> = spheres.iter().map(|s| s.0).collect();
    let radius: Vec<f64> = spheres.iter().map(|s| s.1).collect();
    let mut list = MeshList::new(0.0, 0.0);
    list.build(&surfaces, &position, &radius);
    for s in (0..spheres.len()).filter(|&s| present(s)) {
        let r = radius[s];
        let mut worst: Option<(f64, u32)> = None;
        surfaces.contacts(list.of(s), position[s], r, |c| {
            let overlap = r - c.distance;
            if worst.map_or(true, |w| overlap > w.0) {
                worst = Some((overlap, c.mesh));
            }
        });
        if let Some((overlap, m)) = worst.filter(|w| w.0 > allowed(r)) {
            let name = &model.meshes[m as usize].name;
            return refuse(s, format!("mesh[{m}] ({name})"), overlap, r);
        }
    }
    Ok(())
}
