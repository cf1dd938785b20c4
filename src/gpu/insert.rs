//! Particle insertion on the GPU (`[[inserter]]`): between batches of steps, at each
//! event's step, the state is read back, the host places the batch with the CPU
//! backend's code (`neighbor::Insertion`) and the placed particles' state, flags and
//! field force are written in place. The list is rebuilt at the next step.

use glam::DVec3;

use super::buffers::Field;
use super::{bind, GpuBackend, STATUS_REBUILD};
use crate::error::Result;
use crate::model::{Particles, FLAG_DORMANT, FLAG_REMOVED};
use crate::neighbor::Placed;

impl GpuBackend {
    /// Runs the insertion events due at the end of the current step, if any.
    pub(super) fn insert_due(&mut self) -> Result<()> {
        let due = self
            .insertion
            .as_ref()
            .is_some_and(|ins| ins.due(self.steps));
        if !due {
            return Ok(());
        }
        let particles = self.spheres()?;
        let placed = match &mut self.insertion {
            Some(ins) => ins.insert(self.steps, &particles),
            None => return Ok(()),
        };
        if !placed.is_empty() {
            self.wake(&placed, &particles);
        }
        Ok(())
    }

    /// Writes the `placed` particles' state (at rest in rotation, the field's force:
    /// they touch nothing) and clears their dormancy; `particles` is the state they were
    /// placed in (its flags are the device's). The next step rebuilds the list.
    fn wake(&mut self, placed: &[Placed], particles: &Particles) {
        let g = self.model.gravity;
        for p in placed {
            let i = p.id as usize;
            let device = p.position - self.origin;
            self.write_at(Field::Pos, i, device);
            self.write_at(Field::Vel, i, p.velocity);
            self.write_at(Field::Omega, i, DVec3::ZERO);
            self.write_at(Field::Rot, i, DVec3::ZERO);
            self.write_at(Field::Force, i, particles.mass[i] * g);
            self.write_at(Field::Moment, i, DVec3::ZERO);
            let flags = particles.flags[i] & !(FLAG_DORMANT | FLAG_REMOVED);
            // f32 builds keep a copy of the flags in the w of the position's Kahan term
            // (`flags_with`, `set_flags` in layout.wgsl), beside the zero terms.
            if self.precision == crate::model::Precision::F32 {
                let (binding, offset, _) = self.field_place(Field::PosKahan);
                let at = offset + (i * 4 * self.real_size()) as u64;
                self.ctx.queue.write_buffer(
                    &self.buffers[binding as usize],
                    at,
                    &self.real_bytes(&[0.0, 0.0, 0.0, f64::from(flags)]),
                );
            }
            self.ctx.queue.write_buffer(
                &self.buffers[bind::PARTICLE_FLAGS as usize],
                4 * i as u64,
                bytemuck::bytes_of(&flags),
            );
            self.model.particles.flags[i] = flags;
        }
        self.ctx.queue.write_buffer(
            &self.buffers[bind::STATUS as usize],
            4 * STATUS_REBUILD as u64,
            bytemuck::bytes_of(&1u32),
        );
    }

    /// Uploads particle `i`'s value of `field` (the xyz of vec4 fields, whose `w` is
    /// left as it is), rounded to the kernel precision.
    fn write_at(&self, field: Field, i: usize, v: DVec3) {
        let (binding, offset, stride) = self.field_place(field);
        let at = offset + (i * stride * self.real_size()) as u64;
        self.ctx.queue.write_buffer(
            &self.buffers[binding as usize],
            at,
            &self.real_bytes(&v.to_array()),
        );
    }
}
