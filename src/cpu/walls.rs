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

use crate::backend::loads::{self, add_load};
use crate::backend::WallLoad;
use crate::model::{ContactLaw, Model, Pose, Wall, FLAG_REMOVED};
use crate::neighbor::MeshList;
use crate::physics::contact;
use crate::physics::granular::ContactSide;
use crate::physics::mesh::{MeshContact, MeshSurfaces};

pub use crate::physics::mesh::MESH_SLOTS;

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

    /// Whether there are meshes and none moves: their candidate lists are then rebuilt
    /// with the pair list (`CpuBackend::rebuild_neighbors`), whose unshifted rebuild
    /// test (no particle has moved `(skin − reserve)/2`) keeps them valid.
    pub(in crate::cpu) fn static_meshes(&self) -> bool {
        !self.surfaces.triangles.is_empty() && !self.surfaces.moving()
    }

    /// Rebuilds the mesh candidate lists if there are meshes.
    pub(in crate::cpu) fn rebuild_list(&mut self, position: &[DVec3], radius: &[f64]) {
        if !self.surfaces.triangles.is_empty() {
            self.list.build(&self.surfaces, position, radius);
        }
    }

    /// Brings the mesh candidate lists up to date: moving meshes test the particles'
    /// and the vertices' displacements; meshes at rest are built once here and then
    /// with the pair list.
    pub(in crate::cpu) fn update_list(&mut self, position: &[DVec3], radius: &[f64]) {
        if self.surfaces.triangles.is_empty() {
            return;
        }
        if self.surfaces.moving() || self.list.offsets.len() != position.len() + 1 {
            self.list.update(&self.surfaces, position, radius);
        }
    }

    /// The largest surface speed a moving plane or mesh has at any of `position`
    /// (`|v| + |ω| d`, `d` the distance from its axis); 0 when none moves.
    pub(in crate::cpu) fn max_surface_speed(&self, position: &[DVec3]) -> f64 {
        let poses = self.plane_poses.iter().chain(&self.surfaces.poses);
        let mut speed = 0f64;
        for pose in poses.filter(|p| !p.is_rest()) {
            let w = pose.angular_velocity.length();
            let reach = if w > 0.0 {
                position
                    .iter()
                    .map(|x| (*x - pose.axis()).length())
                    .fold(0.0, f64::max)
            } else {
                0.0
            };
            speed = speed.max(pose.velocity.length() + w * reach);
        }
        speed
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
        keep: impl Fn(&MeshContact) -> bool,
        out: &mut [Option<MeshContact>; MESH_SLOTS],
    ) -> usize {
        let mut count = 0;
        self.surfaces.contacts(self.list.of(i), x, reach, |c| {
            if !keep(&c) {
                return;
            }
            if let Some(slot) = out.get_mut(count) {
                *slot = Some(c);
            }
            count += 1;
        });
        count
    }
}

impl crate::cpu::CpuBackend {
    /// The axis point of plane `w` now.
    fn plane_axis_now(&self, w: usize) -> DVec3 {
        match &self.walls {
            Some(ws) => ws.plane_poses[w].axis(),
            None => self.model.walls[w].motion.axis_point,
        }
    }

    /// The loads on every plane then mesh at the current state ([`WallLoad`]): under
    /// Hertz the sums the last evaluation made (per chunk, added in chunk order);
    /// under the binder law recomputed from the positions (the law depends on nothing
    /// else); under hard contacts the last step's impulses over `h` (those kept for
    /// the warm start), applied at the contact points at the end of the step.
    pub(in crate::cpu) fn compute_wall_loads(&self) -> Vec<WallLoad> {
        let m = &self.model;
        let nw = m.walls.len();
        let nl = nw + m.meshes.len();
        let mut total = vec![[DVec3::ZERO; 2]; nl];
        let p = &m.particles;
        let axes: Vec<DVec3> = (0..nw).map(|w| self.plane_axis_now(w)).collect();
        match m.contact.map(|c| c.law) {
            Some(ContactLaw::Hertz) if nl > 0 => {
                for chunk in self.forces.wall_loads.chunks(nl) {
                    for (t, c) in total.iter_mut().zip(chunk) {
                        t[0] += c[0];
                        t[1] += c[1];
                    }
                }
            }
            Some(ContactLaw::Binder { .. }) => {
                // Planes as the GPU computes them (backend::loads), then meshes, in id
                // order whatever the storage.
                let layout = &self.storage.layout;
                let by_id = self.particles_by_id();
                let planes = loads::binder_plane_loads(&by_id, &m.walls, &axes);
                total[..nw].copy_from_slice(&planes);
                for i in layout.slots_by_id(layout.id_count(p.len())) {
                    if p.flags[i] & FLAG_REMOVED != 0 {
                        continue;
                    }
                    let (x, r) = (p.position[i], p.radius[i]);
                    if let Some(ws) = &self.walls {
                        ws.surfaces.contacts(ws.list.of(i), x, r, |c| {
                            let k = m.meshes[c.mesh as usize].stiffness;
                            let (_, f) = contact::binder_surface(k, c.distance, c.normal, r);
                            let axis = ws.surfaces.poses[c.mesh as usize].axis();
                            add_load(&mut total[nw + c.mesh as usize], axis, c.point, -f);
                        });
                    }
                }
            }
            Some(ContactLaw::Hard(_)) => {
                // The step's impulses as kept for the warm start (world frame: the
                // same bits after a resume), at the contact points now.
                if let Some(h) = &self.hard {
                    // Planes as the GPU computes them (backend::loads), then mesh
                    // features by their triangle's mesh; the keys are ids.
                    // Every id's row (stored or archived): the keys count walls
                    // from the ids.
                    let by_id = self.particles_by_id();
                    let p = &*by_id;
                    let planes = loads::hard_plane_loads(p, &m.walls, &axes, &h.warm, self.dt);
                    total[..nw].copy_from_slice(&planes);
                    if let Some(ws) = &self.walls {
                        let meshes = loads::hard_mesh_loads(p, &ws.surfaces, nw, &h.warm, self.dt);
                        total[nw..].copy_from_slice(&meshes);
                    }
                }
            }
            _ => {}
        }
        let names = (0..nw)
            .map(|w| format!("wall[{w}]"))
            .chain(m.meshes.iter().map(|w| w.name.clone()));
        names
            .zip(total)
            .map(|(wall, [force, moment])| WallLoad {
                wall,
                force,
                moment,
            })
            .collect()
    }
}
