//! The loads particles put on walls (`walls.csv`), as both backends sum them:
//! the same arithmetic in the same order, so that the GPU in `f64`, from contact forces
//! equal to the CPU's, gives the CPU's bits.

use glam::DVec3;

use crate::model::{Particles, Wall, FLAG_REMOVED};
use crate::physics::contact;
use crate::physics::mesh::MeshSurfaces;

/// Particles per chunk of the Hertz load sums: a chunk's contributions are added in
/// particle order, then the chunks' sums in chunk order (the CPU backend sums them in
/// its force gather, whose chunks are this long).
pub const LOAD_CHUNK: usize = 256;

/// Adds force `f` on a wall, applied at `q`, to its load `[force, moment about axis]`.
#[inline]
pub fn add_load(load: &mut [DVec3; 2], axis: DVec3, q: DVec3, f: DVec3) {
    load[0] += f;
    load[1] += (q - axis).cross(f);
}

/// [`add_load`] of a contact whose moment on the wall has a part `m` besides the
/// force's (a rolling torque's reaction): the contact's moment `(q − axis) × f + m` is
/// formed first and added as one term, so a sum over contacts does not depend on
/// whether they join it one by one or after a per-particle sum (storage order). `m`
/// zero is [`add_load`] itself.
#[inline]
pub fn add_load_with_moment(load: &mut [DVec3; 2], axis: DVec3, q: DVec3, f: DVec3, m: DVec3) {
    load[0] += f;
    let arm = (q - axis).cross(f);
    load[1] += if m != DVec3::ZERO { arm + m } else { arm };
}

/// One particle's part of a wall's Hertz load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadPart {
    /// Its one contact with a plane: the contact point, the force on the plane and the
    /// reaction of the contact's rolling torque (added to the force's moment before
    /// the sum, [`add_load_with_moment`], as `granular_sum` adds it).
    At(DVec3, DVec3, DVec3),
    /// Its contacts with a mesh, summed as [`add_load`] sums them: `[force, moment]`.
    Sum([DVec3; 2]),
}

/// Hertz loads on the `axes.len()` planes and then `meshes` meshes of `n` particles
/// from their parts: `contribution(i, w)` is particle `i`'s part of wall `w`'s load, if
/// they touch. Summed per [`LOAD_CHUNK`] as the CPU does.
pub fn chunked_loads(
    n: usize,
    axes: &[DVec3],
    meshes: usize,
    contribution: impl Fn(usize, usize) -> Option<LoadPart>,
) -> Vec<[DVec3; 2]> {
    let mut total = vec![[DVec3::ZERO; 2]; axes.len() + meshes];
    let mut chunk = total.clone();
    for first in (0..n).step_by(LOAD_CHUNK) {
        chunk.fill([DVec3::ZERO; 2]);
        for i in first..(first + LOAD_CHUNK).min(n) {
            for (w, load) in chunk.iter_mut().enumerate() {
                match contribution(i, w) {
                    Some(LoadPart::At(q, f, m)) => add_load_with_moment(load, axes[w], q, f, m),
                    Some(LoadPart::Sum([f, m])) => {
                        load[0] += f;
                        load[1] += m;
                    }
                    None => {}
                }
            }
        }
        for (t, c) in total.iter_mut().zip(&chunk) {
            t[0] += c[0];
            t[1] += c[1];
        }
    }
    total
}

/// Binder-law loads on the planes `walls` (placed now, moments about `axes`), from the
/// positions: the law depends on nothing else. Removed particles touch nothing.
pub fn binder_plane_loads(p: &Particles, walls: &[Wall], axes: &[DVec3]) -> Vec<[DVec3; 2]> {
    let mut total = vec![[DVec3::ZERO; 2]; walls.len()];
    for i in 0..p.len() {
        if p.flags[i] & FLAG_REMOVED != 0 {
            continue;
        }
        let (x, r) = (p.position[i], p.radius[i]);
        for (w, wall) in walls.iter().enumerate() {
            if let Some((_, f)) = contact::binder_wall(wall, x, r) {
                let q = x - wall.distance(x) * wall.normal;
                add_load(&mut total[w], axes[w], q, -f);
            }
        }
    }
    total
}

/// Hard-contact loads on the planes `walls` (moments about `axes`) from the last step's
/// impulses `[i, partner]` → impulse on the partner (partners `n + w` are planes; others
/// are skipped), over the step `h`, applied at the contact points now.
pub fn hard_plane_loads<'a>(
    p: &Particles,
    walls: &[Wall],
    axes: &[DVec3],
    impulses: impl IntoIterator<Item = &'a ([u32; 2], DVec3)>,
    h: f64,
) -> Vec<[DVec3; 2]> {
    let n = p.len();
    let mut total = vec![[DVec3::ZERO; 2]; walls.len()];
    for &([i, j], impulse) in impulses {
        let (i, j) = (i as usize, j as usize);
        if j < n || j - n >= walls.len() {
            continue;
        }
        let w = j - n;
        let q = p.position[i] - p.radius[i] * walls[w].normal;
        add_load(&mut total[w], axes[w], q, -impulse / h);
    }
    total
}

/// Hard-contact loads on the meshes of `surfaces` (placed now) from the last step's
/// impulses `[i, partner]` → impulse on the partner (partners `n + walls + key` are
/// mesh features; others are skipped), over the step `h`, applied at the contact
/// points now (the particle's surface towards the feature).
pub fn hard_mesh_loads<'a>(
    p: &Particles,
    surfaces: &MeshSurfaces,
    walls: usize,
    impulses: impl IntoIterator<Item = &'a ([u32; 2], DVec3)>,
    h: f64,
) -> Vec<[DVec3; 2]> {
    let n = p.len();
    let mut total = vec![[DVec3::ZERO; 2]; surfaces.poses.len()];
    for &([i, j], impulse) in impulses {
        let (i, j) = (i as usize, j as usize);
        if j < n + walls {
            continue;
        }
        let x = p.position[i];
        let key = (j - n - walls) as u32;
        let mesh = surfaces.mesh_of[(key / 8) as usize] as usize;
        // `nn` from the wall to the particle.
        let nn = (x - surfaces.feature_point(key, x)).normalize_or_zero();
        let q = x - p.radius[i] * nn;
        add_load(
            &mut total[mesh],
            surfaces.poses[mesh].axis(),
            q,
            -impulse / h,
        );
    }
    total
}
