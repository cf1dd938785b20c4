//! Clumps on the CPU backend (issue 24): the bodies' state and the three passes that
//! couple them to their spheres, named after the GPU kernels they will twin
//! (`docs/gpu-architecture.md`, *Clumps*): `clump_predict` and `clump_pose` (after the
//! particles' predict) and `clump_gather` (after the force evaluation).
//!
//! A clump's spheres are particles appended after the free ones, contiguous per body
//! in the type's order, flagged [`FLAG_MEMBER`] (and held and rotation-locked, so the
//! per-particle integrator leaves them to their body). They carry their body's mass,
//! which the Hertz law's effective mass and damping use; the field acts on the body.

use glam::DVec3;

use crate::backend::StateSnapshot;
use crate::cpu::contact_sides::{SideScratch, Sides};
use crate::cpu::forces::ParticleForce;
use crate::error::{Error, Fault, Result};
use crate::integrators::rigid::{
    angular_momentum, angular_velocity, correct_rigid, predict_rigid, rotational_energy, spin_of,
};
use crate::integrators::{Body, IntegratorKind, Kinematics, StepFault};
use crate::model::{
    ClumpType, Model, Particle, Particles, FLAG_HELD, FLAG_MEMBER, FLAG_NO_ROTATION,
};
use crate::neighbor::NeighborList;
use crate::physics::granular::ContactSide;
use crate::physics::rigid_body::{gather, member_position, member_velocity};

/// The clumps of a run: their types, state and last loads.
#[derive(Clone, Debug, Default)]
pub(in crate::cpu) struct Bodies {
    /// The clump types.
    pub types: Vec<ClumpType>,
    /// Each body's type.
    pub kind: Vec<u32>,
    /// Each body's state: centre of mass, velocity, α and the spin variable
    /// (`integrators::rigid::spin_of`: π for a full tensor, Ω for a scalar one).
    pub state: Vec<Kinematics>,
    /// The state before the current step, restored if it fails.
    pub saved: Vec<Kinematics>,
    /// Each body's first sphere (particle id).
    pub first: Vec<u32>,
    /// Each body's force and spatial moment about its centre of mass at the last
    /// evaluation, the field's included.
    pub load: Vec<(DVec3, DVec3)>,
}

impl Bodies {
    /// Appends every clump's spheres to `model.particles` (posed by its body, moving
    /// with it) and returns the bodies; the model keeps its clump list.
    pub(in crate::cpu) fn expand(model: &mut Model) -> Self {
        let mut b = Self {
            types: model.clump_types.clone(),
            ..Self::default()
        };
        for c in &model.clumps {
            let t = &model.clump_types[c.kind as usize];
            b.kind.push(c.kind);
            b.first.push(model.particles.len() as u32);
            b.state.push(Kinematics {
                x: c.position,
                v: c.velocity,
                alpha: c.rotation,
                omega: spin_of(&t.inertia, c.rotation, c.angular_velocity),
            });
            for s in &t.spheres {
                let x = member_position(c.position, c.rotation, s.offset);
                let mut p = Particle::at_rest(x, t.mass, s.radius);
                p.velocity = member_velocity(c.velocity, c.angular_velocity, x - c.position);
                p.rotation = c.rotation;
                p.angular_velocity = c.angular_velocity;
                p.material = t.material;
                p.hold_position = true;
                p.hold_rotation = true;
                let id = model.particles.push(p) as usize;
                // push() zeroes a held particle's velocities; a sphere moves with its body.
                model.particles.velocity[id] =
                    member_velocity(c.velocity, c.angular_velocity, x - c.position);
                model.particles.angular_velocity[id] = c.angular_velocity;
                model.particles.flags[id] |= FLAG_MEMBER | FLAG_HELD | FLAG_NO_ROTATION;
            }
        }
        b.saved = b.state.clone();
        b.load = vec![(DVec3::ZERO, DVec3::ZERO); b.state.len()];
        b
    }

    /// The rigid body of every particle for the neighbour list: free particles their
    /// own id, a clump's spheres `n + body` (never listed with each other).
    pub(in crate::cpu) fn body_ids(&self, n: usize) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..n as u32).collect();
        for (b, (&first, &kind)) in self.first.iter().zip(&self.kind).enumerate() {
            let count = self.types[kind as usize].spheres.len();
            for id in &mut ids[first as usize..first as usize + count] {
                *id = (n + b) as u32;
            }
        }
        ids
    }

    fn body(&self, b: usize) -> Body {
        let t = &self.types[self.kind[b] as usize];
        Body {
            mass: t.mass,
            inertia: 1.0,
            held: false,
            fixed_rotation: false,
        }
    }

    /// `clump_gather` without the correct half: every body's load from its spheres'
    /// forces (in the type's order) and the field on its mass.
    pub(in crate::cpu) fn gather_loads(
        &mut self,
        p: &Particles,
        forces: &[ParticleForce],
        gravity: DVec3,
    ) {
        for b in 0..self.state.len() {
            let t = &self.types[self.kind[b] as usize];
            let first = self.first[b] as usize;
            let x = self.state[b].x;
            let (f, m) = gather(
                (first..first + t.spheres.len())
                    .map(|i| (p.position[i] - x, forces[i].force, forces[i].moment)),
            );
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
        self.gather_loads(p, forces, gravity);
        for b in 0..self.state.len() {
            let t = &self.types[self.kind[b] as usize];
            let s = self.state[b];
            let (f, m) = self.load[b];
            let (v, spin) = correct_rigid(kind, h, self.body(b), &t.inertia, s.v, s.omega, f, m);
            self.state[b].v = v;
            self.state[b].omega = spin;
            let w = angular_velocity(&t.inertia, s.alpha, spin);
            let first = self.first[b] as usize;
            for i in first..first + t.spheres.len() {
                p.velocity[i] = member_velocity(v, w, p.position[i] - s.x);
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
            let t = &self.types[self.kind[b] as usize];
            let old = self.state[b];
            let (f, m) = self.load[b];
            let k = predict_rigid(kind, h, self.body(b), &t.inertia, old, f, m).map_err(|e| {
                Error::fault(
                    step,
                    match e {
                        StepFault::RotationDomain(value) => Fault::RotationStepTooLarge {
                            particle: self.first[b] as usize,
                            value: Some(value),
                        },
                        StepFault::HalfTurn => Fault::HalfTurn {
                            particle: self.first[b] as usize,
                        },
                        StepFault::NoConvergence(r) => Fault::RotationNoConvergence {
                            body: b,
                            residual: Some(r),
                        },
                    },
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
                let x = member_position(k.x, k.alpha, s.offset);
                let turn = (x - k.x) - (p.position[i] - old.x);
                let dx = dx_body + turn;
                p.position[i] = x;
                p.velocity[i] = member_velocity(k.v, w_half, x - k.x);
                p.rotation[i] = k.alpha;
                p.angular_velocity[i] = w_half;
                if let Some(side) = sides.side.get_mut(i) {
                    *side = SideScratch {
                        side: ContactSide {
                            x,
                            v: member_velocity(v_end, w_end, x - k.x),
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

    /// The output body of every particle (`Frame::body_id`): the free particles their
    /// own id, a clump's spheres `free + body`.
    pub(in crate::cpu) fn sphere_bodies(&self, free: usize) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..free as u32).collect();
        for (b, &kind) in self.kind.iter().enumerate() {
            let count = self.types[kind as usize].spheres.len();
            ids.extend(std::iter::repeat((free + b) as u32).take(count));
        }
        ids
    }

    /// Undoes the current step.
    pub(in crate::cpu) fn restore(&mut self) {
        self.state.clone_from(&self.saved);
    }

    /// Kinetic energies, momenta and field energy of the bodies:
    /// `(½ m v², ½ π·Ω, m v, x × m v + π, −m g·x)` summed in body order.
    pub(in crate::cpu) fn kinematic(&self, gravity: DVec3) -> (f64, f64, DVec3, DVec3, f64) {
        let mut out = (0.0, 0.0, DVec3::ZERO, DVec3::ZERO, 0.0);
        for (b, s) in self.state.iter().enumerate() {
            let t = &self.types[self.kind[b] as usize];
            out.0 += 0.5 * t.mass * s.v.length_squared();
            out.1 += rotational_energy(&t.inertia, s.alpha, s.omega);
            out.2 += t.mass * s.v;
            out.3 += s.x.cross(t.mass * s.v) + angular_momentum(&t.inertia, s.alpha, s.omega);
            out.4 += -t.mass * gravity.dot(s.x);
        }
        out
    }

    /// The output rows of the bodies (one per clump, after the free particles): centre
    /// of mass, velocity, α and spatial Ω, with the body's mass, the mean principal
    /// moment as scalar inertia and the radius of its bounding ball.
    pub(in crate::cpu) fn rows(&self) -> Particles {
        let mut out = Particles::default();
        for (b, s) in self.state.iter().enumerate() {
            let t = &self.types[self.kind[b] as usize];
            let j = t.inertia.body;
            let mut q = Particle::at_rest(s.x, t.mass, t.reach());
            q.velocity = s.v;
            q.rotation = s.alpha;
            q.angular_velocity = angular_velocity(&t.inertia, s.alpha, s.omega);
            q.inertia = (j.x_axis.x + j.y_axis.y + j.z_axis.z) / 3.0;
            q.material = t.material;
            out.push(q);
        }
        out
    }

    /// A checkpoint of a clump scene: not written yet (the bodies' state needs format
    /// 4), an error rather than a file that would resume without them.
    pub(in crate::cpu) fn refuse_checkpoint(&self) -> Result<StateSnapshot> {
        Err(Error::Backend(
            "checkpoints of scenes with clumps are not supported yet (issue 24)".into(),
        ))
    }
}
