//! Rigid bodies with a full inertia tensor: Baker & Gonzalez's maps (23), (25) and (27)
//! generalised from a scalar moment of inertia to a body-frame tensor `J` (issue 24;
//! the derivation is in `docs/physics.md`, *Rigid bodies with a full inertia tensor*).
//!
//! In spatial form, with `I_k = R_k J R_kᵀ` the spatial inertia and `π = I Ω` the
//! spatial angular momentum, the discrete Euler–Lagrange equations of BG eq. (6) with
//! `J_d = ½ tr(J) I − J` (eqs. 14, 17) become
//!
//! * `π_{k+½} = π_k + (h/2) RM_k`,
//! * `h π_{k+½} = 4/(4+|Δα|²) [I_k Δα + ½ Δα × I_k Δα]` for the spatial increment `Δα`
//!   (`R_{k+1} = R(Δα) R_k`),
//! * `π_{k+1} = π_{k+½} + (h/2) RM_{k+1}`.
//!
//! For `J = j I` the cross product vanishes and the second line is BG eq. (15) in
//! spatial form, whose closed form is eq. (23b). For a general `J` it is solved here by
//! Newton's method (map 23), truncated at second order in `h` (map 25:
//! `Δα = hΩ − ½h² I⁻¹(Ω × IΩ)`), or, for map (27), the same truncation after a whole
//! kick. Bodies whose tensor is scalar take the sphere path ([`super::predict`],
//! [`super::correct`]) and keep its bits.
//!
//! The state of such a body keeps its spatial angular momentum `π` in place of `Ω`
//! ([`spin_of`], [`angular_velocity`]): the kicks are then sums, a torque-free body
//! keeps `π` exactly, and the correct half is `π ← π + (h/2) RM_{k+1}`, the tensor form
//! of eq. (25d).

use glam::{DMat3, DVec3};

use super::{correct, predict, Body, IntegratorKind, Kinematics, StepFault};
use crate::math::rodrigues::{self, skew};
pub use crate::model::{principal_moments, Inertia, InertiaError};

/// Newton iterations allowed for map (23)'s rotation increment before it is a fault.
/// Started from the isotropic closed form, it converges quadratically in 3–6
/// iterations for every increment below a quarter turn.
pub const MAX_NEWTON_ITERATIONS: usize = 40;

/// The residual of the rotation equation, `4/(4+|δ|²) [I δ + ½ δ × I δ] − b`.
pub fn rotation_residual(i: DMat3, delta: DVec3, b: DVec3) -> DVec3 {
    let id = i * delta;
    (4.0 / (4.0 + delta.length_squared())) * (id + 0.5 * delta.cross(id)) - b
}

/// Map (23)'s increment: the solution `Δα` of `4/(4+|Δα|²) [I Δα + ½ Δα × I Δα] = h π`
/// (`π` the half-kicked spatial angular momentum, `I` the spatial inertia at `k`,
/// `Ω = I⁻¹π`), by Newton's method from the isotropic closed form
/// `2h/(1+√(1−h²|Ω|²)) Ω` (eq. 23b), iterated until the update is at the rounding of
/// `Δα`.
pub fn exact_increment(h: f64, i: DMat3, pi: DVec3, omega: DVec3) -> Result<DVec3, StepFault> {
    let b = h * pi;
    let q = h * h * omega.length_squared();
    if q.is_nan() || q >= 1.0 {
        return Err(StepFault::RotationDomain(q));
    }
    let mut delta = (2.0 * h / (1.0 + (1.0 - q).sqrt())) * omega;
    for _ in 0..MAX_NEWTON_ITERATIONS {
        let id = i * delta;
        let a = 4.0 / (4.0 + delta.length_squared());
        let y = id + 0.5 * delta.cross(id);
        let g = a * y - b;
        // ∂(a y)/∂δ = a [I + ½(S(δ) I − S(Iδ))] − (a²/2) y δᵀ.
        let jac = (i + (skew(delta) * i - skew(id)) * 0.5) * a - outer(y, delta) * (0.5 * a * a);
        let det = jac.determinant();
        if det == 0.0 || !det.is_finite() {
            break;
        }
        let step = jac.inverse() * g;
        delta -= step;
        if !delta.is_finite() {
            break;
        }
        // Converged when the update is at the rounding of Δα, or (an elongated body,
        // whose last updates stay at cond(I)·ε) when the residual is at the rounding
        // of the right-hand side.
        if step.length() <= 4.0 * f64::EPSILON * delta.length()
            || rotation_residual(i, delta, b).length() <= 8.0 * f64::EPSILON * b.length()
        {
            return Ok(delta);
        }
    }
    let residual = rotation_residual(i, delta, b).length() / b.length().max(f64::MIN_POSITIVE);
    if residual <= 1e-13 {
        return Ok(delta);
    }
    Err(StepFault::NoConvergence(residual))
}

/// Maps (25) and (27)'s increment: the rotation equation kept to second order in `h`,
/// `Δα = hΩ − ½h² I⁻¹(Ω × π)` with `π = IΩ` (the gyroscopic term vanishes for a scalar
/// `J`, leaving eqs. 25b and 27b).
pub fn second_order_increment(h: f64, i_inverse: DMat3, pi: DVec3, omega: DVec3) -> DVec3 {
    h * omega - (0.5 * h * h) * (i_inverse * omega.cross(pi))
}

fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// The state's spin variable of a body at attitude `alpha` turning at the spatial
/// angular velocity `omega`: `Ω` itself for a scalar tensor (the sphere path's
/// variable), the spatial angular momentum `π = R J Rᵀ Ω` otherwise.
pub fn spin_of(inertia: &Inertia, alpha: DVec3, omega: DVec3) -> DVec3 {
    match inertia.scalar {
        Some(_) => omega,
        None => inertia.spatial(alpha) * omega,
    }
}

/// The spatial angular velocity `Ω` from the spin variable (see [`spin_of`]).
pub fn angular_velocity(inertia: &Inertia, alpha: DVec3, spin: DVec3) -> DVec3 {
    match inertia.scalar {
        Some(_) => spin,
        None => inertia.spatial_inverse(alpha) * spin,
    }
}

/// The spatial angular momentum `π` about the centre of mass from the spin variable.
pub fn angular_momentum(inertia: &Inertia, _alpha: DVec3, spin: DVec3) -> DVec3 {
    match inertia.scalar {
        Some(j) => j * spin,
        None => spin,
    }
}

/// The kinetic energy of rotation `½ Ω·(R J Rᵀ) Ω = ½ π·Ω` from the spin variable.
pub fn rotational_energy(inertia: &Inertia, alpha: DVec3, spin: DVec3) -> f64 {
    0.5 * angular_momentum(inertia, alpha, spin).dot(angular_velocity(inertia, alpha, spin))
}

/// [`super::predict`] for a body with inertia tensor `inertia`, whose `s.omega` is the
/// spin variable ([`spin_of`]). A scalar tensor is `predict` itself (`body.inertia`
/// replaced by the scalar). Otherwise the translation is that of spheres, and the
/// rotation: `π ← π + c RM` (`c = h/2`, or `h` for map 27), `Ω = I_k⁻¹ π`, `Δα` from
/// [`exact_increment`] (map 23) or [`second_order_increment`], `α ← α ⊕ Δα`; `π` is
/// returned as it is (a torque-free body keeps its momentum exactly).
pub fn predict_rigid(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    inertia: &Inertia,
    s: Kinematics,
    force: DVec3,
    moment: DVec3,
) -> Result<Kinematics, StepFault> {
    if let Some(j) = inertia.scalar {
        return predict(kind, h, Body { inertia: j, ..body }, s, force, moment);
    }
    // The translation and the rotation lock are those of spheres.
    let linear = predict(
        kind,
        h,
        Body {
            inertia: 1.0,
            fixed_rotation: true,
            ..body
        },
        s,
        force,
        DVec3::ZERO,
    )?;
    if body.fixed_rotation {
        return Ok(linear);
    }
    let kick = match kind {
        IntegratorKind::SymplecticEuler => h,
        _ => 0.5 * h,
    };
    let pi = s.omega + kick * moment;
    let i_k_inv = inertia.spatial_inverse(s.alpha);
    let omega = i_k_inv * pi;
    let dalpha = match kind {
        IntegratorKind::VariationalExact => {
            exact_increment(h, inertia.spatial(s.alpha), pi, omega)?
        }
        _ => second_order_increment(h, i_k_inv, pi, omega),
    };
    let alpha = rodrigues::try_compose(s.alpha, dalpha).ok_or(StepFault::HalfTurn)?;
    Ok(Kinematics {
        alpha,
        omega: pi,
        ..linear
    })
}

/// [`super::correct`] for a body with inertia tensor `inertia` (`omega` its spin
/// variable): `π ← π + (h/2) RM` for maps (23)/(25), nothing for (27); a scalar tensor
/// is `correct` itself.
#[expect(
    clippy::too_many_arguments,
    reason = "correct's arguments and the body's tensor"
)]
pub fn correct_rigid(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    inertia: &Inertia,
    v: DVec3,
    omega: DVec3,
    force: DVec3,
    moment: DVec3,
) -> (DVec3, DVec3) {
    let j = inertia.scalar.unwrap_or(1.0);
    correct(
        kind,
        h,
        Body { inertia: j, ..body },
        v,
        omega,
        force,
        moment,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton solves the rotation equation to rounding for random tensors and spins,
    /// and with a scalar tensor returns the closed form of eq. (23b) (its start value)
    /// to rounding.
    #[test]
    fn exact_increment_solves_the_rotation_equation() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..500 {
            let q = rodrigues::rotation_matrix(DVec3::new(rnd(), rnd(), rnd()) * 2.0);
            let p = DVec3::new(1.0 + rnd().abs(), 1.0 + rnd().abs(), 1.0 + rnd().abs());
            let i = q * DMat3::from_diagonal(p) * q.transpose();
            let omega = DVec3::new(rnd(), rnd(), rnd()) * 3.0;
            let h = 0.2 * rnd().abs() + 1e-3;
            let d = exact_increment(h, i, i * omega, omega).unwrap();
            let b = h * (i * omega);
            let r = rotation_residual(i, d, b).length() / b.length();
            assert!(r < 1e-14, "relative residual {r:e}");
        }
        // Elongated bodies (a rod: moments 1, r, r up to r = 100), where the last
        // Newton updates stay at cond(I)·ε: converged, not a fault.
        for ratio in [5.0, 30.0, 100.0] {
            for _ in 0..500 {
                let q = rodrigues::rotation_matrix(DVec3::new(rnd(), rnd(), rnd()) * 2.0);
                let i = q * DMat3::from_diagonal(DVec3::new(1.0, ratio, ratio)) * q.transpose();
                let omega = DVec3::new(rnd(), rnd(), rnd()) * 3.0;
                let h = 0.05 * rnd().abs() + 1e-3;
                let d = exact_increment(h, i, i * omega, omega).unwrap();
                let b = h * (i * omega);
                let r = rotation_residual(i, d, b).length() / b.length();
                assert!(r < 1e-13, "ratio {ratio}: relative residual {r:e}");
            }
        }
        let i = DMat3::from_diagonal(DVec3::splat(0.7));
        let omega = DVec3::new(1.0, -2.0, 0.5);
        let h = 0.1;
        let q = h * h * omega.length_squared();
        let closed = (2.0 * h / (1.0 + (1.0 - q).sqrt())) * omega;
        let d = exact_increment(h, i, i * omega, omega).unwrap();
        assert!((d - closed).length() < 1e-15 * closed.length());
    }
}
