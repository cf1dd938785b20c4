//! Every particle's contact side, gathered once per evaluation: what a pair computation
//! reads of each of its two particles (position, end-of-step velocity, radius,
//! increments, mass, material) in one record of two cache lines.

use glam::DVec3;

use super::forces::ParticleForce;
use super::kernels::integrate::body;
use crate::integrators::{self, Body, IntegratorKind};
use crate::model::{Particles, FLAG_REMOVED};
use crate::physics::granular::ContactSide;

/// What a pair computation reads of one particle, gathered once per evaluation into
/// one record of two cache lines: the distance test of a partner reads only the first
/// (position and radius), a touching partner both.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub(in crate::cpu) struct SideScratch {
    /// The contact side: position, end-of-step velocity, radius, increments.
    pub(in crate::cpu) side: ContactSide,
    /// Mass (kg).
    pub(in crate::cpu) mass: f64,
    /// Material index.
    pub(in crate::cpu) material: u32,
    /// Whether the particle was removed (it takes part in no contact).
    pub(in crate::cpu) removed: bool,
}

const _: () = assert!(std::mem::size_of::<SideScratch>() == 128);

/// Every particle's contact side, computed once per evaluation (each is used by the
/// particle and by each of its partners), and its end-of-step angular velocity for the
/// drag's Magnus term (empty without drag: only the particle itself reads it).
#[derive(Clone, Debug, Default)]
pub(in crate::cpu) struct Sides {
    /// Contact sides, one per particle.
    pub side: Vec<SideScratch>,
    /// End-of-step angular velocities, one per particle with drag, else empty.
    pub spin: Vec<DVec3>,
}

impl Sides {
    /// Sizes the arrays for `n` particles (none without granular forces; spins only
    /// with `drag`).
    pub(in crate::cpu) fn resize(&mut self, n: usize, granular: bool, drag: bool) {
        let n = if granular { n } else { 0 };
        self.side.resize(n, SideScratch::default());
        let spins = if drag { n } else { 0 };
        self.spin.resize(spins, DVec3::ZERO);
    }

    /// Stores particle `i`'s side and end-of-step angular velocity.
    pub(in crate::cpu) fn set(&mut self, i: usize, (side, spin): (SideScratch, DVec3)) {
        self.side[i] = side;
        if let Some(w) = self.spin.get_mut(i) {
            *w = spin;
        }
    }
}

/// A particle's contact side and end-of-step angular velocity after an explicit step
/// that left it at `x` with the half-step velocities `v`, `omega`, taken with the
/// forces `f` (what [`GranularInputs::sides`] computes from the stored state,
/// to the bit; `integrate_predict` calls it while it still holds the new state).
#[expect(
    clippy::too_many_arguments,
    reason = "one contact side's kinematics, as the WGSL twin's arguments"
)]
#[inline]
pub(in crate::cpu) fn stepped_side(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    x: DVec3,
    r: f64,
    material: u32,
    flags: u32,
    v: DVec3,
    omega: DVec3,
    f: &ParticleForce,
) -> (SideScratch, DVec3) {
    let (v_end, w_end) = integrators::correct(kind, h, body, v, omega, f.force, f.moment);
    let (dx, dalpha) = integrators::increments(kind, h, v, omega);
    (
        SideScratch {
            side: ContactSide {
                x,
                v: v_end,
                r,
                dx,
                dalpha,
            },
            mass: body.mass,
            material,
            removed: flags & FLAG_REMOVED != 0,
        },
        w_end,
    )
}

/// [`stepped_side`] of particle `i` from its stored state (position, half-step
/// velocities) after an explicit step taken with the forces `f`.
pub(in crate::cpu) fn stored_side(
    kind: IntegratorKind,
    h: f64,
    p: &Particles,
    i: usize,
    f: &ParticleForce,
) -> (SideScratch, DVec3) {
    stepped_side(
        kind,
        h,
        body(p, i),
        p.position[i],
        p.radius[i],
        p.material[i],
        p.flags[i],
        p.velocity[i],
        p.angular_velocity[i],
        f,
    )
}
