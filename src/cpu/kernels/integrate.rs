//! Twin of `shaders/integrate.wgsl`: kernel `integrate_predict`, the first half of the
//! step for every particle ([`crate::integrators::predict`], the WGSL `predict_half`),
//! and `integrate_correct`, the second half ([`crate::integrators::correct`], the WGSL
//! `correct_half`), which the CPU runs inside the force gather
//! (`particle_forces`).

use glam::DVec3;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cpu::contact_sides::{stepped_side, stored_side, SideScratch};
use crate::cpu::forces::ParticleForce;
use crate::cpu::parallel::{run_chunks, PredictChunk, MIN_CHUNK};
use crate::cpu::CpuBackend;
use crate::error::{Error, Fault, Result};
use crate::integrators::{self, Body, IntegratorKind, Kinematics, StepFault};
use crate::model::{Particles, FLAG_HELD, FLAG_MEMBER, FLAG_NO_ROTATION, FLAG_REMOVED};
use crate::neighbor::NeighborList;

impl CpuBackend {
    /// Kernel `integrate_predict`: first half of the step for every particle, in place,
    /// in one pass that also keeps the old state in `saved` (so a failing step can be
    /// undone), computes the contact sides of granular models, and runs the neighbour
    /// list's rebuild test at the new positions (relative to `shift`). Returns whether
    /// the list must be rebuilt (always before the first build). A particle whose update
    /// fails is left as it was; the step then restores every particle and reports the
    /// lowest failing id, so the outcome does not depend on the number of threads.
    pub(in crate::cpu) fn integrate_predict(&mut self, step: u64, shift: DVec3) -> Result<bool> {
        let (kind, h) = (self.integrator, self.dt);
        let list = &self.neighbors;
        let reference = list.reference();
        let first_build = reference.len() != self.model.particles.len();
        // Set by any chunk with a particle that moved too far (an OR: the same for
        // any order of chunks).
        let stale = AtomicBool::new(first_build);
        let test = self.model.contact.is_some() && !first_build;
        let forces = &self.forces.particles;
        let drag = self.model.drag.is_some();
        let p = &mut self.model.particles;
        let n = p.len();
        self.saved.resize(n, Kinematics::default());
        // Granular models: the contact sides of the evaluation that follows, computed
        // here from the new state in registers (GranularInputs::sides' bits).
        let sides = &mut self.spare_forces.sides;
        self.spare_forces.sides_ready = self.tables.is_some();
        sides.resize(n, self.tables.is_some(), drag);
        let ctx = PredictContext {
            kind,
            h,
            mass: &p.mass,
            inertia: &p.inertia,
            flags: &p.flags,
            radius: &p.radius,
            material: &p.material,
            forces,
            list,
            reference,
            shift,
            test,
        };
        let mut side_chunks = sides.side.chunks_mut(MIN_CHUNK);
        let mut spin_chunks = sides.spin.chunks_mut(MIN_CHUNK);
        let chunks: Vec<PredictChunk<'_>> = p
            .position
            .chunks_mut(MIN_CHUNK)
            .zip(p.velocity.chunks_mut(MIN_CHUNK))
            .zip(p.rotation.chunks_mut(MIN_CHUNK))
            .zip(p.angular_velocity.chunks_mut(MIN_CHUNK))
            .zip(self.saved.chunks_mut(MIN_CHUNK))
            .enumerate()
            .map(|(c, ((((x, v), a), w), saved))| {
                let lo = c * MIN_CHUNK;
                let side = side_chunks.next().unwrap_or_default();
                let spin = spin_chunks.next().unwrap_or_default();
                (lo, x, v, a, w, saved, side, spin)
            })
            .collect();
        // Every particle is updated and saved (no early exit: the restore needs them
        // all); a chunk reports its lowest failing id.
        let layout = &self.storage.layout;
        let update = |(lo, x, v, alpha, omega, saved, side, spin): PredictChunk<'_>| {
            let mut fault = None;
            let mut moved = false;
            for l in 0..x.len() {
                let i = lo + l;
                let state = (&mut x[l], &mut v[l], &mut alpha[l], &mut omega[l]);
                let out = (&mut saved[l], side.get_mut(l), spin.get_mut(l));
                match ctx.particle(i, state, out) {
                    Ok(m) => moved |= m,
                    Err(e) => {
                        let id = layout.id(i);
                        if fault.as_ref().map_or(true, |&(k, _)| id < k) {
                            fault = Some((id, e));
                        }
                    }
                }
            }
            if moved {
                stale.store(true, Ordering::Relaxed);
            }
            fault
        };
        let fault = run_chunks(chunks, n, update);
        let stale = stale.into_inner();
        if let Some((particle, f)) = fault {
            self.restore();
            return Err(Error::fault(
                step,
                match f {
                    StepFault::RotationDomain(value) => Fault::RotationStepTooLarge {
                        particle,
                        value: Some(value),
                    },
                    StepFault::HalfTurn => Fault::HalfTurn { particle },
                    // Only a full tensor iterates; a sphere's increment is closed-form.
                    StepFault::NoConvergence(r) => Fault::NonFinite {
                        particle,
                        field: Some("the rotation increment"),
                        value: Some(format!("relative residual {r:e}")),
                    },
                },
            ));
        }
        // Particles leaving the domain: an error (the step undone), or removal.
        let Some(d) = self.model.domain else {
            return Ok(stale);
        };
        let p = &mut self.model.particles;
        let layout = &self.storage.layout;
        let leaving: Vec<usize> = layout
            .slots_by_id(layout.id_count(n))
            .filter(|&i| {
                // A clump's spheres leave with their body (checked by the step).
                p.flags[i] & (FLAG_REMOVED | FLAG_MEMBER) == 0 && !d.contains(p.position[i])
            })
            .collect();
        if let (Some(&slot), false) = (leaving.first(), d.remove) {
            let position = p.position[slot].to_array();
            let particle = layout.id(slot);
            self.restore();
            return Err(Error::fault(
                step,
                Fault::LeftDomain {
                    particle,
                    position: Some(position),
                },
            ));
        }
        for i in leaving {
            // Parked where it left with the velocity it left with (its state at exit,
            // `removed.csv`), not spinning, its rotation as before the step (the GPU
            // twin stops before composing). Removal is not undone by a failing step.
            p.flags[i] |= FLAG_REMOVED;
            p.rotation[i] = self.saved[i].alpha;
            p.angular_velocity[i] = DVec3::ZERO;
            if !self.spare_forces.sides.side.is_empty() {
                let s = stored_side(kind, h, p, i, &self.forces.particles[i]);
                self.spare_forces.sides.set(i, s);
            }
            // The run logs a line per output step (`run::Recorder`), not one a particle.
            let id = self.storage.layout.id(i);
            self.exit_steps.insert(id as u32, step);
            log::debug!("step {step}: particle {id} left the domain and was removed");
        }
        Ok(stale)
    }
}

#[inline]
pub(in crate::cpu) fn body(p: &Particles, i: usize) -> Body {
    body_of(&p.mass, &p.inertia, &p.flags, i)
}

/// What kernel `integrate_predict` ([`CpuBackend::integrate_predict`]) reads besides a
/// particle's own state. (Running it inside the previous step's force gather, right
/// after each particle's correct, as the GPU's fused steps do, gave the same bits but
/// ran 0.92× as fast on the CPU: README, *What bounds the CPU step*.)
pub(in crate::cpu) struct PredictContext<'a> {
    kind: IntegratorKind,
    h: f64,
    mass: &'a [f64],
    inertia: &'a [f64],
    flags: &'a [u32],
    radius: &'a [f64],
    material: &'a [u32],
    /// The forces the step is taken with (the last evaluation's).
    forces: &'a [ParticleForce],
    list: &'a NeighborList,
    /// Positions at the list's last build, for the rebuild test.
    reference: &'a [DVec3],
    /// Particle 0's displacement since the build ([`NeighborList::shift`]).
    shift: DVec3,
    /// Whether to run the rebuild test.
    test: bool,
}

impl PredictContext<'_> {
    /// Predicts particle `i` with its forces: saves its state into `saved`, updates
    /// `(x, v, α, Ω)` and, for granular models, stores its contact side and spin for the
    /// next evaluation. `Ok(moved)`: whether it moved far enough to make the neighbour
    /// list stale; on a fault its state is left as it was.
    #[inline(always)]
    pub(in crate::cpu) fn particle(
        &self,
        i: usize,
        (x, v, alpha, omega): (&mut DVec3, &mut DVec3, &mut DVec3, &mut DVec3),
        (saved, side, spin): (
            &mut Kinematics,
            Option<&mut SideScratch>,
            Option<&mut DVec3>,
        ),
    ) -> std::result::Result<bool, StepFault> {
        let old = Kinematics {
            x: *x,
            v: *v,
            alpha: *alpha,
            omega: *omega,
        };
        *saved = old;
        let f = &self.forces[i];
        let body = body_of(self.mass, self.inertia, self.flags, i);
        // A removed particle stays as it left, its exit velocity kept (the GPU's
        // integrate_predict returns before it).
        let k = if self.flags[i] & FLAG_REMOVED != 0 {
            old
        } else {
            integrators::predict(self.kind, self.h, body, old, f.force, f.moment)?
        };
        (*x, *v, *alpha, *omega) = (k.x, k.v, k.alpha, k.omega);
        // A clump's sphere is held here and tested where its body puts it
        // (cpu::clumps::predict_pose), as on the GPU (clump_pose).
        let moved = self.test
            && self.flags[i] & FLAG_MEMBER == 0
            && self.list.moved(k.x, self.reference[i], self.shift);
        if let Some(s) = side {
            let (s_new, w_new) = stepped_side(
                self.kind,
                self.h,
                body,
                k.x,
                self.radius[i],
                self.material[i],
                self.flags[i],
                k.v,
                k.omega,
                f,
            );
            *s = s_new;
            if let Some(w) = spin {
                *w = w_new;
            }
        }
        Ok(moved)
    }
}

/// Kernel `integrate_correct` of one particle: the second half of its step with its
/// new force `f` ([`integrators::correct`], the WGSL `correct_half`), on its velocities
/// `v`, `Ω` in place.
#[inline]
pub(in crate::cpu) fn integrate_correct(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    f: &ParticleForce,
    v: &mut DVec3,
    w: &mut DVec3,
) {
    (*v, *w) = integrators::correct(kind, h, body, *v, *w, f.force, f.moment);
}

/// [`Body`] of particle `i` from the fields it needs (borrowed apart from the state).
#[inline]
pub(in crate::cpu) fn body_of(mass: &[f64], inertia: &[f64], flags: &[u32], i: usize) -> Body {
    Body {
        mass: mass[i],
        inertia: inertia[i],
        held: flags[i] & (FLAG_HELD | FLAG_REMOVED) != 0,
        fixed_rotation: flags[i] & (FLAG_NO_ROTATION | FLAG_REMOVED) != 0,
    }
}

#[inline]
pub(in crate::cpu) fn kinematics(p: &Particles, i: usize) -> Kinematics {
    Kinematics {
        x: p.position[i],
        v: p.velocity[i],
        alpha: p.rotation[i],
        omega: p.angular_velocity[i],
    }
}
