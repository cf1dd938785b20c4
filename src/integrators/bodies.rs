//! The clumps of a run as rigid bodies (issue 24): their types, state and last loads,
//! and what every backend does with them outside the step (expanding a model's clumps
//! into spheres, output rows, energies and momenta). The step's passes that couple
//! bodies to spheres are the backends' (`cpu::clumps`, `shaders/clumps.wgsl`).
//!
//! A clump's spheres are particles appended after the free ones, contiguous per body
//! in the type's order, flagged [`FLAG_MEMBER`] (and held and rotation-locked, so the
//! per-particle integrator leaves them to their body). They carry their body's mass,
//! which the Hertz law's effective mass and damping use; the field acts on the body.

use glam::DVec3;

use crate::error::{ClumpFault, Fault};
use crate::integrators::rigid::{angular_momentum, angular_velocity, rotational_energy, spin_of};
use crate::integrators::{Body, Kinematics};
use crate::model::{
    ClumpType, Model, Particle, Particles, FLAG_DORMANT, FLAG_HELD, FLAG_MEMBER, FLAG_NO_ROTATION,
    FLAG_REMOVED,
};
use crate::physics::rigid_body::{member_position, member_velocity};

/// The clumps of a run: their types, state and last loads.
#[derive(Clone, Debug, Default)]
pub struct Bodies {
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
    /// Each body is dormant: reserved by an inserter and not inserted yet (its spheres
    /// are flagged [`FLAG_DORMANT`] and removed). A dormant body stands still, has no
    /// load and counts in no energy or output row.
    pub dormant: Vec<bool>,
}

impl Bodies {
    /// The step fault `fault` of body `b`, named by its index and its `final.csv` row
    /// (after the free particles, which precede the first body's spheres).
    pub fn fault(&self, b: usize, fault: ClumpFault) -> Fault {
        let free = self.first.first().map_or(0, |&f| f as usize);
        Fault::Clump {
            clump: b,
            row: free + b,
            fault,
        }
    }

    /// Appends every clump's spheres to `model.particles` (posed by its body, moving
    /// with it) and returns the bodies; the model keeps its clump list.
    pub fn expand(model: &mut Model) -> Self {
        let mut b = Self {
            types: model.clump_types.clone(),
            ..Self::default()
        };
        for (k, c) in model.clumps.iter().enumerate() {
            let t = &model.clump_types[c.kind as usize];
            let dormant = model.reserved_clump(k);
            b.dormant.push(dormant);
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
                if dormant {
                    model.particles.flags[id] |= FLAG_DORMANT | FLAG_REMOVED;
                }
            }
        }
        b.saved = b.state.clone();
        b.load = vec![(DVec3::ZERO, DVec3::ZERO); b.state.len()];
        b
    }

    /// The rigid body of every particle for the neighbour list: free particles their
    /// own id, a clump's spheres `n + body` (never listed with each other).
    pub fn body_ids(&self, n: usize) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..n as u32).collect();
        for (b, (&first, &kind)) in self.first.iter().zip(&self.kind).enumerate() {
            let count = self.types[kind as usize].spheres.len();
            for id in &mut ids[first as usize..first as usize + count] {
                *id = (n + b) as u32;
            }
        }
        ids
    }

    /// The translational body of body `b` for the integrators (its tensor apart).
    pub fn body(&self, b: usize) -> Body {
        let t = &self.types[self.kind[b] as usize];
        Body {
            mass: t.mass,
            inertia: 1.0,
            held: false,
            fixed_rotation: false,
        }
    }

    /// The output body of every particle (`Frame::body_id`): the free particles their
    /// own id, a clump's spheres `free + body`.
    pub fn sphere_bodies(&self, free: usize) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..free as u32).collect();
        for (b, &kind) in self.kind.iter().enumerate() {
            let count = self.types[kind as usize].spheres.len();
            ids.extend(std::iter::repeat((free + b) as u32).take(count));
        }
        ids
    }

    /// Wakes dormant body `b` at `x` with velocity `v`, attitude `alpha` and no spin,
    /// with the field's load `m g` (it touches nothing yet).
    pub fn wake(&mut self, b: usize, x: DVec3, v: DVec3, alpha: DVec3, gravity: DVec3) {
        let t = &self.types[self.kind[b] as usize];
        self.state[b] = Kinematics {
            x,
            v,
            alpha,
            omega: DVec3::ZERO,
        };
        self.saved[b] = self.state[b];
        self.load[b] = (t.mass * gravity, DVec3::ZERO);
        self.dormant[b] = false;
    }

    /// Sets each body's dormancy from its first sphere's flags in `p` (after a restore
    /// woke the inserted ones).
    pub fn sync_dormant(&mut self, p: &Particles) {
        for (d, &first) in self.dormant.iter_mut().zip(&self.first) {
            *d = p
                .flags
                .get(first as usize)
                .is_some_and(|&f| f & FLAG_DORMANT != 0);
        }
    }

    /// Undoes the current step.
    pub fn restore(&mut self) {
        self.state.clone_from(&self.saved);
    }

    /// Kinetic energies, momenta and field energy of the bodies:
    /// `(½ m v², ½ π·Ω, m v, x × m v + π, −m g·x)` summed in body order.
    pub fn kinematic(&self, gravity: DVec3) -> (f64, f64, DVec3, DVec3, f64) {
        let mut out = (0.0, 0.0, DVec3::ZERO, DVec3::ZERO, 0.0);
        for (b, s) in self.state.iter().enumerate() {
            if self.dormant[b] {
                continue;
            }
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
    pub fn rows(&self) -> Particles {
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
            let id = out.push(q) as usize;
            // Not inserted yet: no final.csv row (as a dormant particle).
            if self.dormant[b] {
                out.flags[id] |= FLAG_DORMANT | FLAG_REMOVED;
            }
        }
        out
    }
}
