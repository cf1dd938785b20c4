//! Moving plane walls on the GPU (issue 26): each wall's pose at every step of a batch,
//! computed on the host exactly as the CPU backend places its walls
//! (`cpu::walls::WallState::place`), written into `tables`' wall-pose section by step
//! modulo [`POSE_SLOTS`] before the batch is submitted. The shaders read them through
//! `wall_at` and `wall_side` (common/layout.wgsl, common/contact.wgsl).

use glam::DVec3;

use super::contract::{POSE_SLOTS, POSE_VEC4};
use super::{bind, GpuBackend};

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
            let t = step as f64 * self.dt;
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

    /// A plane's point in device coordinates: as it is in `f64` (origin zero), else its
    /// point nearest the origin (`placement::to_device`'s choice).
    fn device_point(&self, point: DVec3, normal: DVec3) -> DVec3 {
        if self.origin == DVec3::ZERO {
            point
        } else {
            normal * (point - self.origin).dot(normal)
        }
    }
}
