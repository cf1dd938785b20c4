//! Rescaled Rodrigues rotation vectors (Baker & Gonzalez §2, Campello 2015 §2).
//!
//! A rotation of angle `θ = |θ|` about the unit axis `n` is represented by
//! `α = 2 tan(θ/2) n` (eq. 3: `α = tan(|θ|/2)/(|θ|/2) θ`). The rotation matrix is
//! rational in `α` (eq. 4) and two rotations compose without trigonometry (eq. 5).
//!
//! Conventions (see `shared/NOTES.md`):
//! * `R(α₁ ⊕ α₂) = R(α₂) R(α₁)`: the right operand acts *after* the left one, in the
//!   inertial frame. Hence `α_{k+1} = α_k ⊕ Δα_k` applies the spatial increment `Δα_k`.
//! * `α` is singular at `θ = π` (|α| → ∞). Only increments must stay small; the total
//!   rotation may grow large. Composition is undefined when `α₁·α₂ = 4` (the composed
//!   rotation is a half turn); [`try_compose`] reports it instead of dividing by zero.

use glam::{DMat3, DVec3};

/// Skew-symmetric matrix `S(a)` with `S(a) v = a × v`.
#[inline]
pub fn skew(a: DVec3) -> DMat3 {
    DMat3::from_cols(
        DVec3::new(0.0, a.z, -a.y),
        DVec3::new(-a.z, 0.0, a.x),
        DVec3::new(a.y, -a.x, 0.0),
    )
}

/// Rotation matrix of a rescaled Rodrigues vector, eq. (4):
/// `R(α) = I + 4/(4+|α|²) [S(α) + ½ S(α)²]`.
///
/// The factor is `4/(4+|α|²)` (Campello's eqs. 10 and 27 print `4/(1+α²)`, see NOTES).
#[inline]
pub fn rotation_matrix(alpha: DVec3) -> DMat3 {
    let s = skew(alpha);
    let c = 4.0 / (4.0 + alpha.length_squared());
    DMat3::IDENTITY + (s + 0.5 * (s * s)) * c
}

/// `R(α) v` without forming the matrix: `v + 4/(4+|α|²) [α×v + ½ α×(α×v)]`.
#[inline]
pub fn rotate(alpha: DVec3, v: DVec3) -> DVec3 {
    let c = 4.0 / (4.0 + alpha.length_squared());
    let av = alpha.cross(v);
    v + c * (av + 0.5 * alpha.cross(av))
}

/// `R(α)ᵀ v`, the inverse rotation applied to `v` (R(−α) = R(α)ᵀ).
#[inline]
pub fn rotate_inverse(alpha: DVec3, v: DVec3) -> DVec3 {
    rotate(-alpha, v)
}

/// Relative tolerance below which `4 − α₁·α₂` is treated as zero by [`try_compose`].
///
/// Near the singularity the composed vector has magnitude ≈ `8/|4 − α₁·α₂|`; once the
/// denominator is within a few hundred ulps of the terms that form it, the result has no
/// significant digits left.
pub const COMPOSE_SINGULAR_TOL: f64 = 1e-13;

/// Composition of eq. (5): `α₁ ⊕ α₂ = 4/(4 − α₁·α₂) [α₁ + α₂ − ½ α₁×α₂]`, so that
/// `R(α₁ ⊕ α₂) = R(α₂) R(α₁)`.
///
/// Unchecked: returns non-finite components at the half-turn singularity. Use
/// [`try_compose`] where the inputs are not known to be safe.
#[inline]
pub fn compose(a1: DVec3, a2: DVec3) -> DVec3 {
    let c = 4.0 / (4.0 - a1.dot(a2));
    c * (a1 + a2 - 0.5 * a1.cross(a2))
}

/// Checked composition: `None` when `|4 − α₁·α₂| ≤ tol (4 + |α₁·α₂|)` with
/// [`COMPOSE_SINGULAR_TOL`], i.e. when the composed rotation is (numerically) a half
/// turn, which the parameterization cannot represent.
#[inline]
pub fn try_compose(a1: DVec3, a2: DVec3) -> Option<DVec3> {
    let d = a1.dot(a2);
    let den = 4.0 - d;
    if den.abs() <= COMPOSE_SINGULAR_TOL * (4.0 + d.abs()) || den.is_nan() {
        return None;
    }
    Some((4.0 / den) * (a1 + a2 - 0.5 * a1.cross(a2)))
}

/// Inverse rotation: `R(−α) = R(α)ᵀ`, and `α ⊕ (−α) = 0`.
#[inline]
pub fn inverse(alpha: DVec3) -> DVec3 {
    -alpha
}

/// Rotation angle `|θ| = 2 atan(|α|/2)` in `[0, π)`.
#[inline]
pub fn angle(alpha: DVec3) -> f64 {
    2.0 * (0.5 * alpha.length()).atan()
}

/// Euler rotation vector `θ` from `α` (inverse of eq. 3): `θ = 2 atan(|α|/2)/|α| α`.
///
/// Uses the series `1 − |α|²/12 + |α|⁴/80` below `|α| = 1e-4`, where it is exact to
/// rounding, to avoid `0/0`.
#[inline]
pub fn to_rotation_vector(alpha: DVec3) -> DVec3 {
    alpha * theta_over_alpha(alpha.length())
}

/// The scalar `2 atan(a/2)/a` with its series at small `a`.
#[inline]
pub fn theta_over_alpha(a: f64) -> f64 {
    if a < 1e-4 {
        let a2 = a * a;
        1.0 - a2 / 12.0 + a2 * a2 / 80.0
    } else {
        2.0 * (0.5 * a).atan() / a
    }
}

/// Rescaled Rodrigues vector from the Euler rotation vector, eq. (3):
/// `α = tan(|θ|/2)/(|θ|/2) θ`. Returns `None` when `|θ| ≥ π` modulo `2π` lands on the
/// singular half turn; angles above π are first wrapped into `(−π, π)`.
pub fn from_rotation_vector(theta: DVec3) -> Option<DVec3> {
    let t = theta.length();
    if t == 0.0 {
        return Some(DVec3::ZERO);
    }
    // Wrap the angle into (-π, π]: a rotation by t about n equals one by t - 2π about n.
    let tau = std::f64::consts::TAU;
    let wrapped = t - tau * ((t + std::f64::consts::PI) / tau).floor();
    let half = 0.5 * wrapped;
    if (half.abs() - std::f64::consts::FRAC_PI_2).abs() < 1e-12 {
        return None;
    }
    let n = theta / t;
    if half.abs() < 1e-4 {
        let h2 = half * half;
        // tan(h)/h = 1 + h²/3 + 2h⁴/15
        return Some(n * wrapped * (1.0 + h2 / 3.0 + 2.0 * h2 * h2 / 15.0));
    }
    Some(n * 2.0 * half.tan())
}

/// Rodrigues vector of the relative rotation `R_j R_iᵀ`, eq. (45): `(−α_i) ⊕ α_j`.
///
/// NOTES: the print says `R_i R_jᵀ`; with the convention `R(α₁⊕α₂) = R(α₂)R(α₁)` the
/// composition is `R_j R_iᵀ`. `None` at the half-turn singularity.
#[inline]
pub fn relative(alpha_i: DVec3, alpha_j: DVec3) -> Option<DVec3> {
    try_compose(-alpha_i, alpha_j)
}

/// Rodrigues vector of a rotation matrix (via its quaternion, Shepperd's method).
///
/// `None` for a half turn. Used by tests and scene set-up, never in a time step.
pub fn from_matrix(r: DMat3) -> Option<DVec3> {
    let q = glam::DQuat::from_mat3(&r);
    from_quaternion(q)
}

/// Rodrigues vector of a unit quaternion `q = (cos θ/2, sin θ/2 n)`: `α = 2 q_v / q_w`.
pub fn from_quaternion(q: glam::DQuat) -> Option<DVec3> {
    if q.w.abs() < 1e-300 {
        return None;
    }
    Some(2.0 * DVec3::new(q.x, q.y, q.z) / q.w)
}

/// Unit quaternion of a Rodrigues vector: `q ∝ (1, α/2)`.
pub fn to_quaternion(alpha: DVec3) -> glam::DQuat {
    let h = 0.5 * alpha;
    glam::DQuat::from_xyzw(h.x, h.y, h.z, 1.0).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_with_zero_is_exact() {
        let a = DVec3::new(0.3, -1.7, 2.9);
        assert_eq!(compose(a, DVec3::ZERO), a);
        assert_eq!(compose(DVec3::ZERO, a), a);
    }

    #[test]
    fn half_turn_is_reported() {
        let a = DVec3::new(2.0, 0.0, 0.0); // 90° about x
        assert!(try_compose(a, a).is_none());
        assert!(try_compose(a, 0.5 * a).is_some());
    }
}
