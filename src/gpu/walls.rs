//! Plane walls on the GPU (issue 26).
//!
//! * Motion: each wall's pose at every step of a batch, computed on the host exactly as
//!   the CPU backend places its walls (`cpu::walls::WallState::place`), written into
//!   `tables`' wall-pose section by step modulo [`POSE_SLOTS`] before the batch is
//!   submitted. The shaders read them through `wall_at` and `wall_side`
//!   (common/layout.wgsl, common/contact.wgsl).
//! * Loads (`walls.csv`): under the Hertz law the evaluation of the step the host
//!   names (`status[STATUS_LOADS]`, the last step of each `advance`) writes each
//!   particle's wall forces and contact points, which the host sums as the CPU does
//!   (`backend::loads`); under the binder law and hard contacts the host computes them
//!   from the read-back state with the CPU's code.

use glam::DVec3;

use super::contract::{MESH_POSE_VEC4, POSE_SLOTS, POSE_VEC4, STATUS_LOADS};
use super::{bind, GpuBackend};
use crate::backend::loads::{self, LoadPart};
use crate::backend::{Backend, WallLoad};
use crate::error::Result;
use crate::model::{ContactLaw, Wall, FLAG_REMOVED};
use crate::neighbor::MeshCells;
use crate::physics::contact;
use crate::physics::mesh::MeshSurfaces;

impl GpuBackend {
    /// Writes the wall poses of steps `first .. first + POSE_SLOTS` (what one batch of
    /// steps starting at `first` reads), if some wall moves.
    pub(super) fn write_wall_poses(&self, first: u64) {
        if !self.sections.moving_walls {
            return;
        }
        let walls = &self.model.walls;
        let slots = u64::from(POSE_SLOTS);
        let mut records = vec![0.0f64; (slots as usize) * walls.len() * 4 * POSE_VEC4 as usize];
        for step in first..first + slots {
            let slot = (step % slots) as usize;
            let t = self.pose_time(step);
            for (w, rest) in walls.iter().enumerate() {
                let (point, normal, v, omega, axis) = if rest.motion.is_static() {
                    (
                        self.device_point(rest.point, rest.normal),
                        rest.normal,
                        DVec3::ZERO,
                        DVec3::ZERO,
                        DVec3::ZERO,
                    )
                } else {
                    let pose = rest.motion.pose(t);
                    let placed = rest.placed(&pose);
                    (
                        self.device_point(placed.point, placed.normal),
                        placed.normal,
                        pose.velocity,
                        pose.angular_velocity,
                        pose.axis() - self.origin,
                    )
                };
                let at = (slot * walls.len() + w) * 4 * POSE_VEC4 as usize;
                for (k, q) in [point, normal, v, omega, axis].iter().enumerate() {
                    records[at + 4 * k..at + 4 * k + 3].copy_from_slice(&q.to_array());
                }
            }
        }
        let offset = u64::from(self.sections.wall_poses) * 4 * self.real_size() as u64;
        self.ctx.queue.write_buffer(
            &self.buffers[bind::TABLES as usize],
            offset,
            &self.real_bytes(&records),
        );
    }

    /// The time of the walls' pose in slot `step`: the evaluation of step `step`
    /// (`step_begin` has counted it) sees the walls at `step h`; a hard-contact step,
    /// which begins by counting, sees them at its start, `(step − 1) h`, as the CPU
    /// builds its contacts with the walls placed at the step's start.
    fn pose_time(&self, step: u64) -> f64 {
        // The law, not `self.hard` (taken while a hard batch is encoded).
        let at = if matches!(self.model.contact.map(|c| c.law), Some(ContactLaw::Hard(_))) {
            step.saturating_sub(1)
        } else {
            step
        };
        at as f64 * self.dt
    }

    /// Writes the meshes' poses of steps `first .. first + POSE_SLOTS`, if some mesh
    /// moves: `Motion::pose` at each step's time, as the CPU places its meshes, in
    /// device coordinates (centre and axis point shifted by the origin). A mesh at rest
    /// has the identity with its centre's w 0, which mesh_place reads as "copy".
    pub(super) fn write_mesh_poses(&self, first: u64) {
        if !self.sections.moving_meshes {
            return;
        }
        let meshes = &self.model.meshes;
        let slots = u64::from(POSE_SLOTS);
        let per = 4 * MESH_POSE_VEC4 as usize;
        let mut records = vec![0.0f64; (slots as usize) * meshes.len() * per];
        for step in first..first + slots {
            let slot = (step % slots) as usize;
            let t = self.pose_time(step);
            for (m, mesh) in meshes.iter().enumerate() {
                let moving = !mesh.motion.is_static();
                let pose = mesh.motion.pose(if moving { t } else { 0.0 });
                let r = pose.rotation;
                let at = (slot * meshes.len() + m) * per;
                let vecs = [
                    r.x_axis.extend(0.0),
                    r.y_axis.extend(0.0),
                    r.z_axis.extend(0.0),
                    (pose.center - self.origin).extend(f64::from(u8::from(moving))),
                    pose.translation.extend(0.0),
                    pose.velocity.extend(0.0),
                    pose.angular_velocity.extend(0.0),
                    (pose.axis() - self.origin).extend(0.0),
                ];
                for (k, q) in vecs.iter().enumerate() {
                    records[at + 4 * k..at + 4 * k + 4].copy_from_slice(&q.to_array());
                }
            }
        }
        let offset = u64::from(self.sections.mesh_poses) * 4 * self.real_size() as u64;
        self.ctx.queue.write_buffer(
            &self.buffers[bind::TABLES as usize],
            offset,
            &self.real_bytes(&records),
        );
    }

    /// A plane's point in device coordinates: as it is in `f64` (origin zero), else its
    /// point nearest the origin (`placement::to_device`'s choice).
    fn device_point(&self, point: DVec3, normal: DVec3) -> DVec3 {
        if self.origin == DVec3::ZERO {
            point
        } else {
            normal * (point - self.origin).dot(normal)
        }
    }

    /// Names `step` as the one whose force evaluation records the wall loads.
    pub(super) fn record_loads_at(&mut self, step: u64) {
        if !self.records_loads || self.loads_step == Some(step) {
            return;
        }
        self.ctx.queue.write_buffer(
            &self.buffers[bind::STATUS as usize],
            4 * u64::from(STATUS_LOADS),
            bytemuck::bytes_of(&(step as u32)),
        );
        self.loads_step = Some(step);
    }

    /// The planes now: a moving one placed at the current time, one at rest as it is.
    pub(super) fn planes_now(&self) -> Vec<Wall> {
        let t = self.time();
        self.model
            .walls
            .iter()
            .map(|w| {
                if w.motion.is_static() {
                    *w
                } else {
                    w.placed(&w.motion.pose(t))
                }
            })
            .collect()
    }

    /// The axis point of each plane now, as the CPU takes moments about it (the pose's
    /// when some wall moves).
    fn plane_axes(&self) -> Vec<DVec3> {
        let t = self.time();
        let walls = &self.model.walls;
        let moving = walls.iter().any(|w| !w.motion.is_static());
        walls
            .iter()
            .map(|w| {
                if moving {
                    w.motion.pose(t).axis()
                } else {
                    w.motion.axis_point
                }
            })
            .collect()
    }

    /// The Hertz loads on the planes and then the meshes at the current state,
    /// `[force, moment]` each: those the last force evaluation recorded, or a restored
    /// state's; `None` when there are none for this step.
    pub(super) fn hertz_loads(&self) -> Result<Option<Vec<[DVec3; 2]>>> {
        if let Some((step, l)) = &self.restored_loads {
            if *step == self.steps {
                return Ok(Some(l.clone()));
            }
        }
        if !self.records_loads || self.loads_step != Some(self.steps) {
            return Ok(None);
        }
        let (nw, nm) = (self.model.walls.len(), self.model.meshes.len());
        let nl = nw + nm;
        let axes = self.plane_axes();
        let rs = self.real_size();
        let skip = (2 * self.wall_stride() + 3) * 4 * rs;
        // Records of load_vec4 vec4: force, point (or a mesh's moment sum), and with
        // rolling resistance a plane's rolling-torque reaction.
        let lv = self.load_vec4;
        let raw = self.read_rows(bind::ROW_VEC, skip, lv * nl * 4 * rs)?;
        let n = self.id_count();
        let r = self.reals_from_bytes(&raw, n * nl * 4 * lv);
        let origin = self.origin;
        Ok(Some(loads::chunked_loads(n, &axes, nm, |i, w| {
            let at = (i * nl + w) * 4 * lv;
            (r[at + 3] != 0.0).then(|| {
                let f = DVec3::new(r[at], r[at + 1], r[at + 2]);
                let b = DVec3::new(r[at + 4], r[at + 5], r[at + 6]);
                if w >= nw {
                    // A mesh's sum, its moment about the axis (taken in device
                    // coordinates, where the axis is shifted with the mesh).
                    return LoadPart::Sum([f, b]);
                }
                // Adding a zero origin would turn −0 into +0.
                let q = if origin == DVec3::ZERO { b } else { b + origin };
                let m = if lv > 2 {
                    DVec3::new(r[at + 8], r[at + 9], r[at + 10])
                } else {
                    DVec3::ZERO
                };
                LoadPart::At(q, f, m)
            })
        })))
    }

    /// Binder-law loads on the meshes from the positions `p` (world frame), as the CPU
    /// sums them (each contact in candidate order into its mesh's load): the meshes
    /// placed now by the CPU's code, candidates from the rest-frame cell grid the
    /// kernels search, mesh by mesh when some moves.
    fn binder_mesh_loads(&self, p: &crate::model::Particles) -> Vec<[DVec3; 2]> {
        let meshes = &self.model.meshes;
        let mut total = vec![[DVec3::ZERO; 2]; meshes.len()];
        if meshes.is_empty() {
            return total;
        }
        let mut surfaces = MeshSurfaces::new(meshes);
        surfaces.place(self.time());
        let cells = MeshCells::new(&MeshSurfaces::new(meshes), p.max_radius());
        let moving = meshes.iter().any(|m| !m.motion.is_static());
        let passes = if moving { meshes.len() } else { 1 };
        let mut list = Vec::new();
        for i in 0..p.len() {
            if p.flags[i] & FLAG_REMOVED != 0 {
                continue;
            }
            let (x, r) = (p.position[i], p.radius[i]);
            for mp in 0..passes {
                let pose = &surfaces.poses[mp];
                let rest = if moving {
                    pose.rotation.transpose() * (x - pose.translation - pose.center) + pose.center
                } else {
                    x
                };
                list.clear();
                list.extend(
                    cells
                        .candidates(rest)
                        .iter()
                        .filter(|&&t| !moving || surfaces.mesh_of[t as usize] as usize == mp),
                );
                surfaces.contacts(&list, x, r, |c| {
                    let k = meshes[c.mesh as usize].stiffness;
                    let (_, f) = contact::binder_surface(k, c.distance, c.normal, r);
                    let axis = surfaces.poses[c.mesh as usize].axis();
                    loads::add_load(&mut total[c.mesh as usize], axis, c.point, -f);
                });
            }
        }
        total
    }

    /// The loads on the planes and meshes at the current state (`None` when the last
    /// force evaluation did not record them).
    pub(super) fn wall_loads_now(&mut self) -> Result<Option<Vec<WallLoad>>> {
        let walls = &self.model.walls;
        let nw = walls.len();
        if nw + self.model.meshes.len() == 0 {
            return Ok(Some(Vec::new()));
        }
        let axes = self.plane_axes();
        let total = match self.model.contact.map(|c| c.law) {
            Some(ContactLaw::Hertz) => match self.hertz_loads()? {
                Some(total) => total,
                None => return Ok(None),
            },
            Some(ContactLaw::Binder { .. }) => {
                let p = self.spheres()?;
                let mut total = loads::binder_plane_loads(&p, &self.planes_now(), &axes);
                total.extend(self.binder_mesh_loads(&p));
                total
            }
            Some(ContactLaw::Hard(_)) => {
                let p = self.spheres()?;
                let impulses: Vec<([u32; 2], DVec3)> = self
                    .hard_impulses()?
                    .iter()
                    .map(|h| (h.key, h.impulse))
                    .collect();
                let planes = self.planes_now();
                let mut total = loads::hard_plane_loads(&p, &planes, &axes, &impulses, self.dt);
                if !self.model.meshes.is_empty() {
                    // The meshes placed now, as the CPU's are at the end of a step.
                    let mut surfaces = MeshSurfaces::new(&self.model.meshes);
                    surfaces.place(self.time());
                    let nw = planes.len();
                    total.extend(loads::hard_mesh_loads(
                        &p, &surfaces, nw, &impulses, self.dt,
                    ));
                }
                total
            }
            None => vec![[DVec3::ZERO; 2]; nw + self.model.meshes.len()],
        };
        // Named as the CPU names them: planes by index, meshes by name.
        let names = (0..nw)
            .map(|w| format!("wall[{w}]"))
            .chain(self.model.meshes.iter().map(|m| m.name.clone()));
        Ok(Some(
            names
                .zip(total)
                .map(|(wall, [force, moment])| WallLoad {
                    wall,
                    force,
                    moment,
                })
                .collect(),
        ))
    }
}
