//! Clumps on the CPU backend (issue 24): the passes that couple bodies
//! ([`crate::integrators::bodies::Bodies`]) to their spheres, named after the GPU
//! kernels they twin (`shaders/clumps.wgsl`): `clump_predict` and `clump_pose` (after
//! the particles' predict) and `clump_gather` (after the force evaluation).

use glam::DVec3;

use crate::backend::BodyState;
use crate::cpu::contact_sides::{SideScratch, Sides};
use crate::cpu::forces::ParticleForce;
use crate::error::{ClumpFault, Error, Result};
use crate::integrators::bodies::Bodies;
use crate::integrators::rigid::{angular_velocity, correct_rigid, predict_rigid};
use crate::integrators::{IntegratorKind, Kinematics, StepFault};
use crate::math::rodrigues::rotate;
use crate::model::Particles;
use crate::neighbor::NeighborList;
use crate::physics::granular::ContactSide;
use crate::physics::rigid_body::{gather, member_velocity};

impl Bodies {
    /// `clump_gather` without the correct half: every body's load from its spheres'
    /// forces (in the type's order) and the field on its mass.
    pub(in crate::cpu) fn gather_loads(&mut self, forces: &[ParticleForce], gravity: DVec3) {
        for b in 0..self.state.len() {
            // A dormant body waits with no load (an inserter sets it on waking).
            if self.dormant[b] {
                continue;
            }
            let t = &self.types[self.kind[b] as usize];
            let first = self.first[b] as usize;
            let alpha = self.state[b].alpha;
            // Each sphere's lever R(α)ρ, as clump_pose placed it.
            let (f, m) = gather(t.spheres.iter().enumerate().map(|(l, s)| {
                let i = first + l;
                (rotate(alpha, s.offset), forces[i].force, forces[i].moment)
            }));
            self.load[b] = (f + t.mass * gravity, m);
        }
    }

    /// `clump_gather`: [`Bodies::gather_loads`], then every body's correct half
    /// (`integrators::rigid::correct_rigid`) with its new load, and its spheres'
    /// velocities and spins set from the body's (the per-particle correct, which holds
    /// them, zeroed them).
    pub(in crate::cpu) fn gather_correct(
        &mut self,
        kind: IntegratorKind,
        h: f64,
        p: &mut Particles,
        forces: &[ParticleForce],
        gravity: DVec3,
    ) {
        self.gather_loads(forces, gravity);
        for b in 0..self.state.len() {
            if self.dormant[b] {
                continue;
            }
            let t = &self.types[self.kind[b] as usize];
            let s = self.state[b];
            let (f, m) = self.load[b];
            let (v, spin) = correct_rigid(kind, h, self.body(b), &t.inertia, s.v, s.omega, f, m);
            self.state[b].v = v;
            self.state[b].omega = spin;
            let w = angular_velocity(&t.inertia, s.alpha, spin);
            let first = self.first[b] as usize;
            for (l, sphere) in t.spheres.iter().enumerate() {
                let i = first + l;
                p.velocity[i] = member_velocity(v, w, rotate(s.alpha, sphere.offset));
                p.angular_velocity[i] = w;
            }
        }
    }

    /// `clump_predict` and `clump_pose`: every body's predict half with its last load,
    /// then its spheres posed (position, velocity, α, Ω) with their contact sides for
    /// the next evaluation and the neighbour list's rebuild test. Returns whether a
    /// sphere moved far enough to make the list stale; the lowest failing body is an
    /// error (the caller restores the step).
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's context, as the kernel's bindings"
    )]
    pub(in crate::cpu) fn predict_pose(
        &mut self,
        kind: IntegratorKind,
        h: f64,
        step: u64,
        p: &mut Particles,
        sides: &mut Sides,
        list: &NeighborList,
        shift: DVec3,
        test: bool,
    ) -> Result<bool> {
        self.saved.clone_from(&self.state);
        let reference = list.reference();
        let mut moved = false;
        for b in 0..self.state.len() {
            // A dormant body stands still, its spheres out of every list.
            if self.dormant[b] {
                continue;
            }
            let t = &self.types[self.kind[b] as usize];
            let old = self.state[b];
            let (f, m) = self.load[b];
            let k = predict_rigid(kind, h, self.body(b), &t.inertia, old, f, m).map_err(|e| {
                Error::fault(
                    step,
                    self.fault(
                        b,
                        match e {
                            StepFault::RotationDomain(value) => {
                                ClumpFault::RotationStepTooLarge { value: Some(value) }
                            }
                            StepFault::HalfTurn => ClumpFault::HalfTurn,
                            StepFault::NoConvergence(r) => {
                                ClumpFault::NoConvergence { residual: Some(r) }
                            }
                        },
                    ),
                )
            })?;
            self.state[b] = k;
            // The contact sides: the body's velocities carried to the end of the step
            // with its last load (the correct half), at each sphere.
            let (v_end, spin_end) =
                correct_rigid(kind, h, self.body(b), &t.inertia, k.v, k.omega, f, m);
            let w_half = angular_velocity(&t.inertia, k.alpha, k.omega);
            let w_end = angular_velocity(&t.inertia, k.alpha, spin_end);
            // The step's increments, as a sphere's (integrators::increments) plus the
            // turn of the lever: a body of one centred sphere with a scalar tensor gives
            // a free sphere's bits.
            let (dx_body, dalpha) = match t.inertia.scalar {
                Some(_) => crate::integrators::increments(kind, h, k.v, k.omega),
                None => (
                    h * k.v,
                    crate::math::rodrigues::relative(old.alpha, k.alpha).unwrap_or_default(),
                ),
            };
            let first = self.first[b] as usize;
            for (l, s) in t.spheres.iter().enumerate() {
                let i = first + l;
                // The lever R(α)ρ and its turn over the step, R(α_{k+1})ρ − R(α_k)ρ.
                let lever = rotate(k.alpha, s.offset);
                let dx = dx_body + (lever - rotate(old.alpha, s.offset));
                let x = k.x + lever;
                p.position[i] = x;
                p.velocity[i] = member_velocity(k.v, w_half, lever);
                p.rotation[i] = k.alpha;
                p.angular_velocity[i] = w_half;
                if let Some(side) = sides.side.get_mut(i) {
                    *side = SideScratch {
                        side: ContactSide {
                            x,
                            v: member_velocity(v_end, w_end, lever),
                            r: s.radius,
                            dx,
                            dalpha,
                        },
                        mass: t.mass,
                        material: t.material,
                        removed: false,
                    };
                }
                if let Some(w) = sides.spin.get_mut(i) {
                    *w = w_end;
                }
                moved |= test && list.moved(x, reference[i], shift);
            }
        }
        Ok(moved)
    }

    /// The bodies' state for a checkpoint.
    pub(in crate::cpu) fn snapshot(&self) -> Vec<BodyState> {
        self.state
            .iter()
            .zip(&self.load)
            .map(|(s, &(force, moment))| BodyState {
                x: s.x,
                v: s.v,
                alpha: s.alpha,
                spin: s.omega,
                force,
                moment,
            })
            .collect()
    }

    /// Restores the bodies' state and loads of a checkpoint (its spheres are restored
    /// with the particles).
    pub(in crate::cpu) fn restore_snapshot(&mut self, bodies: &[BodyState]) -> Result<()> {
        if bodies.len() != self.state.len() {
            return Err(Error::Snapshot(format!(
                "the snapshot has {} clumps but the scene has {}",
                bodies.len(),
                self.state.len()
            )));
        }
        for (b, s) in bodies.iter().enumerate() {
            self.state[b] = Kinematics {
                x: s.x,
                v: s.v,
                alpha: s.alpha,
                omega: s.spin,
            };
            self.load[b] = (s.force, s.moment);
        }
        self.saved.clone_from(&self.state);
        Ok(())
    }
}
