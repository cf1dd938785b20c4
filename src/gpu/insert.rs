//! Particle insertion on the GPU (`[[inserter]]`): between batches of steps, at each
//! event's step, the state is read back, the host places the batch with the CPU
//! backend's code (`neighbor::Insertion`) and the placed particles' state, flags and
//! field force are written in place. The list is rebuilt at the next step.

use glam::DVec3;

use super::buffers::Field;
use super::{bind, contract, GpuBackend, STATUS_REBUILD};
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
        let (placed, woken) = match &mut self.insertion {
            Some(ins) => {
                let placed = ins.insert(self.steps, &particles);
                let woken = ins.woken(&placed);
                (placed, woken)
            }
            None => return Ok(()),
        };
        for q in placed.iter().filter(|q| q.clump) {
            self.wake_body(q);
        }
        if !woken.is_empty() {
            self.wake(&woken, &particles)?;
        }
        Ok(())
    }

    /// Writes clump `q.id`'s body record at its placed state (no spin, the field's load:
    /// it touches nothing; its f32 position's rounding in the Kahan term, as a restore
    /// writes it), and marks it awake in the host's copy.
    fn wake_body(&mut self, q: &Placed) {
        let g = self.model.gravity;
        let Some(bodies) = &mut self.bodies else {
            return;
        };
        let b = q.id as usize;
        bodies.wake(b, q.position, q.velocity, q.rotation, g);
        let mass = bodies.types[bodies.kind[b] as usize].mass;
        let mut r = [DVec3::ZERO; contract::CLUMP_RECORD as usize];
        let x = q.position - self.origin;
        r[contract::CLUMP_X as usize] = x;
        if self.precision == crate::model::Precision::F32 {
            r[contract::CLUMP_CX as usize] = x.as_vec3().as_dvec3() - x;
        }
        r[contract::CLUMP_V as usize] = q.velocity;
        r[contract::CLUMP_A as usize] = q.rotation;
        r[contract::CLUMP_A_OLD as usize] = q.rotation;
        r[contract::CLUMP_F as usize] = mass * g;
        let flat: Vec<f64> = r.iter().flat_map(|v| v.extend(0.0).to_array()).collect();
        let at = (u64::from(self.sections.clump_state)
            + u64::from(contract::CLUMP_RECORD) * b as u64)
            * 4
            * self.real_size() as u64;
        self.ctx.queue.write_buffer(
            &self.buffers[bind::BODY as usize],
            at,
            &self.real_bytes(&flat),
        );
    }

    /// Writes the `placed` particles' state (no spin; a free particle the field's
    /// force, a clump's sphere none of its own: they touch nothing) and clears their
    /// dormancy; `particles` is the state they were placed in (its flags are the
    /// device's). The next step rebuilds the list.
    fn wake(&mut self, placed: &[Placed], particles: &Particles) -> Result<()> {
        let g = self.model.gravity;
        let n = self.n as usize;
        for p in placed {
            let i = p.id as usize;
            // The device stores it in its slot (issue 44); the model by id. Compacted
            // storage holds every sphere of the next event (`restore_storage`).
            let Some(s) = self.layout.try_slot(i, n) else {
                return Err(crate::error::Error::Backend(format!(
                    "step {}: particle {i}, placed by an inserter, has no storage slot",
                    self.steps
                )));
            };
            let device = p.position - self.origin;
            let member = particles.flags[i] & crate::model::FLAG_MEMBER != 0;
            self.write_at(Field::Pos, s, device);
            self.write_at(Field::Vel, s, p.velocity);
            self.write_at(Field::Omega, s, DVec3::ZERO);
            self.write_at(Field::Rot, s, p.rotation);
            let force = if member {
                DVec3::ZERO
            } else {
                particles.mass[i] * g
            };
            self.write_at(Field::Force, s, force);
            self.write_at(Field::Moment, s, DVec3::ZERO);
            let flags = particles.flags[i] & !(FLAG_DORMANT | FLAG_REMOVED);
            // f32 builds keep a copy of the flags in the w of the position's Kahan term
            // (`flags_with`, `set_flags` in layout.wgsl), beside the zero terms.
            if self.precision == crate::model::Precision::F32 {
                let (binding, offset, _) = self.field_place(Field::PosKahan);
                let at = offset + (s * 4 * self.real_size()) as u64;
                self.ctx.queue.write_buffer(
                    &self.buffers[binding as usize],
                    at,
                    &self.real_bytes(&[0.0, 0.0, 0.0, f64::from(flags)]),
                );
            }
            self.ctx.queue.write_buffer(
                &self.buffers[bind::PARTICLE_FLAGS as usize],
                4 * s as u64,
                bytemuck::bytes_of(&flags),
            );
            self.model.particles.flags[i] = flags;
        }
        self.ctx.queue.write_buffer(
            &self.buffers[bind::STATUS as usize],
            4 * STATUS_REBUILD as u64,
            bytemuck::bytes_of(&1u32),
        );
        Ok(())
    }

    /// Uploads the value of `field` of the particle in slot `i` (the xyz of vec4
    /// fields, whose `w` is left as it is), rounded to the kernel precision.
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
