//! Moving walls and mesh walls on the CPU backend (issue 26): the planes and meshes
//! placed at the time of each force evaluation, the mesh candidate lists, and each
//! particle's mesh contacts with their history.
//!
//! A mesh contact's tangential spring lives in one of the particle's
//! [`MESH_SLOTS`] slots, keyed by the feature it touches (`physics::mesh`). A contact
//! on a feature the particle did not touch before takes over the spring of a contact
//! it no longer has on a feature sharing a vertex with it (the first such in slot
//! order), so a sphere sliding across a shared edge keeps its history.

use glam::DVec3;

use crate::model::{Model, Pose, Wall};
use crate::neighbor::MeshList;
use crate::physics::granular::{ContactSide, NO_PARTNER};
use crate::physics::mesh::{MeshContact, MeshSurfaces};

/// Mesh contacts one particle may have at once (faces of a concave corner, say); more
/// is an error naming the particle.
pub const MESH_SLOTS: usize = 8;

/// The walls of a model that move or are meshes, placed at one time.
#[derive(Clone, Debug)]
pub(in crate::cpu) struct WallState {
    /// The planes at rest (the model's `walls` hold them placed).
    rest_planes: Vec<Wall>,
    /// Each plane's pose now.
    pub(in crate::cpu) plane_poses: Vec<Pose>,
    /// The meshes, placed.
    pub(in crate::cpu) surfaces: MeshSurfaces,
    /// Candidate triangles per particle.
    pub(in crate::cpu) list: MeshList,
    /// The time step, for the walls' increments `h v`.
    h: f64,
}

impl WallState {
    /// The state of `model`'s walls (`None` when every plane stands still and there is
    /// no mesh); the mesh list gets the contact skin, of which `reserve` is kept for
    /// speculative hard contacts.
    pub(in crate::cpu) fn new(model: &Model, h: f64, reserve: f64) -> Option<Self> {
        if model.meshes.is_empty() && model.walls.iter().all(|w| w.motion.is_static()) {
            return None;
        }
        let skin = model.contact.map_or(0.0, |c| c.skin);
        Some(Self {
            rest_planes: model.walls.clone(),
            plane_poses: model.walls.iter().map(|w| w.motion.pose(0.0)).collect(),
            surfaces: MeshSurfaces::new(&model.meshes),
            list: MeshList::new(skin, reserve),
            h,
        })
    }

    /// Places the planes (into `walls`) and the meshes at step `step`.
    pub(in crate::cpu) fn place(&mut self, walls: &mut [Wall], step: u64) {
        let t = step as f64 * self.h;
        for ((w, rest), pose) in walls
            .iter_mut()
            .zip(&self.rest_planes)
            .zip(&mut self.plane_poses)
        {
            if !rest.motion.is_static() {
                *pose = rest.motion.pose(t);
                *w = rest.placed(pose);
            }
        }
        self.surfaces.place(t);
    }

    /// Rebuilds the mesh candidate lists if the particles or meshes moved too far.
    pub(in crate::cpu) fn update_list(&mut self, position: &[DVec3], radius: &[f64]) {
        if self.surfaces.triangles.is_empty() {
            return;
        }
        self.list.update(&self.surfaces, position, radius);
    }

    /// The wall side of a contact at `q` on a body at `pose` (at rest: all zero, the
    /// bits of a static wall).
    #[inline]
    pub(in crate::cpu) fn side(&self, pose: &Pose, q: DVec3, first: bool) -> ContactSide {
        if pose.velocity == DVec3::ZERO && pose.angular_velocity == DVec3::ZERO {
            return ContactSide::default();
        }
        let v = pose.surface_velocity(q);
        ContactSide {
            x: q,
            v,
            r: 0.0,
            dx: if first { DVec3::ZERO } else { self.h * v },
            dalpha: if first {
                DVec3::ZERO
            } else {
                self.h * pose.angular_velocity
            },
        }
    }

    /// The contacts of a sphere at `x` (particle `i`) nearer than `reach`, in candidate
    /// order, into `out` (at most [`MESH_SLOTS`]); returns how many there were in all.
    pub(in crate::cpu) fn mesh_contacts(
        &self,
        i: usize,
        x: DVec3,
        reach: f64,
        out: &mut [Option<MeshContact>; MESH_SLOTS],
    ) -> usize {
        let mut count = 0;
        self.surfaces.contacts(self.list.of(i), x, reach, |c| {
            if let Some(slot) = out.get_mut(count) {
                *slot = Some(c);
            }
            count += 1;
        });
        count
    }
}

/// The springs the contacts `now` start from, given the particle's previous slots
/// (`old_keys`, `old_springs`): a feature touched before keeps its spring; a new one
/// takes over the spring of a vanished contact on an adjacent feature (the first in
/// slot order, each at most once); otherwise zero.
pub(in crate::cpu) fn carried_springs(
    surfaces: &MeshSurfaces,
    now: &[Option<MeshContact>],
    old_keys: &[u32],
    old_springs: &[DVec3],
) -> [DVec3; MESH_SLOTS] {
    let mut out = [DVec3::ZERO; MESH_SLOTS];
    let mut taken = [false; MESH_SLOTS];
    let keys_now = |k: u32| now.iter().flatten().any(|c| c.key == k);
    // Exact matches first, so a handover never takes a spring that continues.
    let mut matched = [false; MESH_SLOTS];
    for (a, c) in now.iter().enumerate() {
        let Some(c) = c else { continue };
        if let Some(s) = old_keys.iter().position(|&k| k == c.key) {
            out[a] = old_springs[s];
            taken[s] = true;
            matched[a] = true;
        }
    }
    for (a, c) in now.iter().enumerate() {
        let Some(c) = c else { continue };
        if matched[a] {
            continue;
        }
        let from = old_keys.iter().enumerate().position(|(s, &k)| {
            k != NO_PARTNER && !taken[s] && !keys_now(k) && surfaces.adjacent(k, c.key)
        });
        if let Some(s) = from {
            out[a] = old_springs[s];
            taken[s] = true;
        }
    }
    out
}
