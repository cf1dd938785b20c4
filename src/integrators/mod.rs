//! Time integrators of Baker & Gonzalez §2, as per-particle update rules.
//!
//! Every scheme is split into a *predict* half (before the new forces are known) and a
//! *correct* half (after), so one force evaluation per step serves both halves: the
//! forces computed at the end of step k are reused at the start of step k+1. The CPU
//! backend and the GPU kernel `integrate.wgsl` implement exactly these functions.

use glam::DVec3;

use crate::math::rodrigues;

pub use crate::model::{IntegratorKind, Trapezoidal};

pub mod bodies;
pub mod rigid;
pub mod trapezoidal;
pub use trapezoidal::{trapezoidal_step, IterateForces};

/// Why a particle's predict half failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepFault {
    /// Map (23) needs `h²‖Ω + h RM/(2J)‖² < 1`; this is the value found.
    RotationDomain(f64),
    /// `α·Δα` is (numerically) 4: the new attitude is a half turn away from
    /// representability (eq. 5 singular).
    HalfTurn,
    /// A body with a full inertia tensor: Newton's iteration for map (23)'s rotation
    /// increment did not converge ([`rigid::exact_increment`]); the relative residual
    /// it stopped at.
    NoConvergence(f64),
}

/// Per-particle kinematic state `(x, v, α, Ω)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Kinematics {
    /// Position.
    pub x: DVec3,
    /// Velocity (after predict: the half-step velocity for the variational maps).
    pub v: DVec3,
    /// Rodrigues rotation vector.
    pub alpha: DVec3,
    /// Spatial angular velocity (after predict: the half-step value for maps 23/25).
    pub omega: DVec3,
}

/// Constant per-particle data the update needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Mass.
    pub mass: f64,
    /// Scalar moment of inertia.
    pub inertia: f64,
    /// Position held fixed.
    pub held: bool,
    /// Rotation locked: `Ω = 0` and `α` constant.
    pub fixed_rotation: bool,
}

/// First half of a step: from `(x_k, v_k, α_k, Ω_k)` and the forces `F_k`, `RM_k` to
/// `x_{k+1}`, `α_{k+1}` and the intermediate velocities.
///
/// * maps (23)/(25): `v ← v + h F/(2m)`, `x ← x + h v`, `Ω ← Ω + h RM/(2J)`,
///   `Δα = hΩ` (25) or `2h/(1+√(1−h²|Ω|²)) Ω` (23), `α ← α ⊕ Δα`.
///   Algebraically identical to eqs. (23a/b), (25a/b).
/// * map (27): `v ← v + h F/m`, `Ω ← Ω + h RM/J`, `x ← x + h v`, `Δα = hΩ`.
#[inline]
pub fn predict(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    s: Kinematics,
    force: DVec3,
    moment: DVec3,
) -> Result<Kinematics, StepFault> {
    let (kick_v, kick_w) = match kind {
        IntegratorKind::SymplecticEuler => (h / body.mass, h / body.inertia),
        _ => (0.5 * h / body.mass, 0.5 * h / body.inertia),
    };
    let (x, v) = if body.held {
        (s.x, DVec3::ZERO)
    } else {
        let v = s.v + kick_v * force;
        (s.x + h * v, v)
    };
    if body.fixed_rotation {
        return Ok(Kinematics {
            x,
            v,
            alpha: s.alpha,
            omega: DVec3::ZERO,
        });
    }
    let omega = s.omega + kick_w * moment;
    let dalpha = match kind {
        IntegratorKind::VariationalExact => {
            let q = h * h * omega.length_squared();
            if q >= 1.0 || q.is_nan() {
                return Err(StepFault::RotationDomain(q));
            }
            (2.0 * h / (1.0 + (1.0 - q).sqrt())) * omega
        }
        _ => h * omega,
    };
    let alpha = rodrigues::try_compose(s.alpha, dalpha).ok_or(StepFault::HalfTurn)?;
    Ok(Kinematics { x, v, alpha, omega })
}

/// Second half of a step with the new forces `F_{k+1}`, `RM_{k+1}`:
/// `v ← v + h F/(2m)`, `Ω ← Ω + h RM/(2J)` for maps (23)/(25) (eqs. 25c/d);
/// nothing for map (27).
#[inline]
pub fn correct(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    v: DVec3,
    omega: DVec3,
    force: DVec3,
    moment: DVec3,
) -> (DVec3, DVec3) {
    match kind {
        IntegratorKind::SymplecticEuler | IntegratorKind::CampelloTrapezoidal => (v, omega),
        _ => {
            let v = if body.held {
                DVec3::ZERO
            } else {
                v + (0.5 * h / body.mass) * force
            };
            let omega = if body.fixed_rotation {
                DVec3::ZERO
            } else {
                omega + (0.5 * h / body.inertia) * moment
            };
            (v, omega)
        }
    }
}

/// The increments `(Δx, Δα)` that [`predict`] took, from the velocities it left
/// (`x_{k+1} = x_k + h v`, `α_{k+1} = α_k ⊕ Δα`): the step's displacement and rotation
/// that the tangential contact spring integrates (Campello eqs. 25–29). Recomputing
/// them from `v` and `Ω` costs nothing and needs no extra storage on either backend.
#[inline]
pub fn increments(kind: IntegratorKind, h: f64, v: DVec3, omega: DVec3) -> (DVec3, DVec3) {
    let dalpha = match kind {
        IntegratorKind::VariationalExact => {
            let q = h * h * omega.length_squared();
            // predict() has checked q < 1 for this Ω.
            (2.0 * h / (1.0 + (1.0 - q).max(0.0).sqrt())) * omega
        }
        _ => h * omega,
    };
    (h * v, dalpha)
}
