//! The CPU backend's step of Campello's trapezoidal rule: the fixed-point iteration of
//! [`crate::integrators::trapezoidal`], with the backend evaluating the forces at each
//! iterate.

use glam::DVec3;

use super::forces::ForceState;
use super::kernels::integrate::{body, kinematics};
use super::CpuBackend;
use crate::error::Result;
use crate::integrators::{trapezoidal_step, Body, IterateForces, Kinematics};

/// The backend at step `step`, its forces evaluated at each iterate into `forces`.
struct Iterates<'a> {
    backend: &'a mut CpuBackend,
    step: u64,
    /// Particle 0's position at the step's start (the neighbour list's rebuild test
    /// discounts its displacement).
    x0: DVec3,
    /// The last iterate's forces.
    forces: ForceState,
}

impl IterateForces for Iterates<'_> {
    fn evaluate_at(&mut self, iterate: &[Kinematics], increments: &[(DVec3, DVec3)]) -> Result<()> {
        let p = &mut self.backend.model.particles;
        for (i, k) in iterate.iter().enumerate() {
            p.position[i] = k.x;
            p.velocity[i] = k.v;
            p.rotation[i] = k.alpha;
            p.angular_velocity[i] = k.omega;
        }
        if self.backend.model.contact.is_some() {
            // Against the current reference (an iterate may have rebuilt it).
            self.backend.update_neighbors(self.x0);
            self.backend.place_walls(self.step);
        }
        self.backend
            .evaluate_forces(&mut self.forces, self.step, false, Some(increments), None)
    }

    fn force(&self, i: usize) -> (DVec3, DVec3) {
        let f = &self.forces.particles[i];
        (f.force, f.moment)
    }
}

impl CpuBackend {
    /// One step of the `campello-trapezoidal` integrator
    /// ([`crate::integrators::trapezoidal`]). A failing step restores the state it
    /// started from.
    pub(super) fn step_trapezoidal(&mut self) -> Result<()> {
        let step = self.step + 1;
        let n = self.model.particles.len();
        let p = &self.model.particles;
        let start: Vec<Kinematics> = (0..n).map(|i| kinematics(p, i)).collect();
        let f0: Vec<(DVec3, DVec3)> = self
            .forces
            .particles
            .iter()
            .map(|f| (f.force, f.moment))
            .collect();
        let bodies: Vec<Body> = (0..n).map(|i| body(p, i)).collect();
        let (params, h) = (self.trapezoidal, self.dt);
        let mut iterations = self.iterations;
        let forces = std::mem::take(&mut self.spare_forces);
        let x0 = (start.get(self.storage.layout.slot(0)))
            .map(|s| s.x)
            .unwrap_or_default();
        let mut system = Iterates {
            backend: self,
            step,
            x0,
            forces,
        };
        let result = trapezoidal_step(
            &params,
            h,
            step,
            &bodies,
            &start,
            &f0,
            &mut system,
            &mut iterations,
        );
        let forces = system.forces;
        self.iterations = iterations;
        match result {
            Ok(velocities) => {
                self.spare_forces = std::mem::replace(&mut self.forces, forces);
                let p = &mut self.model.particles;
                for (i, (v, w)) in velocities.iter().enumerate() {
                    p.velocity[i] = *v;
                    p.angular_velocity[i] = *w;
                }
                self.step = step;
                Ok(())
            }
            Err(e) => {
                self.spare_forces = forces;
                self.restore_from(&start);
                self.place_walls(self.step);
                Err(e)
            }
        }
    }

    /// Puts every particle back in the state `start`.
    fn restore_from(&mut self, start: &[Kinematics]) {
        let p = &mut self.model.particles;
        for (i, k) in start.iter().enumerate() {
            p.position[i] = k.x;
            p.velocity[i] = k.v;
            p.rotation[i] = k.alpha;
            p.angular_velocity[i] = k.omega;
        }
    }
}
