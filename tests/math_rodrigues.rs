//! Property tests of the rescaled Rodrigues rotation vector (Baker & Gonzalez eqs. 3–5,
//! 45) against unit quaternions and the matrix exponential on random rotations.
//!
//! Tolerance 1e-13 absolute on matrices (entries ≤ 1) and relative on vectors: each
//! formula is a handful of flops with condition number O(1) away from the half turn,
//! so errors are a few ulps; rotations are drawn with |θ| ≤ 0.9π (|α| ≤ 25) to stay
//! out of the singular neighbourhood where α itself is ill-conditioned. Two checks use
//! 1e-12: against the test's own matrix exponential (a truncated series whose error,
//! not the formula's, sets the bound) and against `from_quaternion`, whose α = 2q/q₀
//! divides by q₀ ≥ cos(0.45π) ≈ 0.16 and so amplifies the quaternion's rounding.

use glam::{DMat3, DQuat, DVec3};
use proptest::prelude::*;
use varidem::math::rodrigues::{self, *};

const TOL: f64 = 1e-13;

fn rotvec() -> impl Strategy<Value = DVec3> {
    (
        -1.0f64..1.0,
        -1.0f64..1.0,
        -1.0f64..1.0,
        0.0f64..0.9 * std::f64::consts::PI,
    )
        .prop_filter_map("nonzero axis", |(x, y, z, t)| {
            let n = DVec3::new(x, y, z);
            (n.length() > 1e-3).then(|| n.normalize() * t)
        })
}

fn quat(theta: DVec3) -> DQuat {
    DQuat::from_scaled_axis(theta)
}

/// exp(S(θ)) by its Taylor series (40 terms: converges to rounding for |θ| < π).
fn expm(theta: DVec3) -> DMat3 {
    let s = skew(theta);
    let mut term = DMat3::IDENTITY;
    let mut sum = DMat3::IDENTITY;
    for k in 1..40 {
        term = term * s * (1.0 / k as f64);
        sum += term;
    }
    sum
}

fn mat_close(a: DMat3, b: DMat3, tol: f64) -> bool {
    (0..3).all(|c| (a.col(c) - b.col(c)).abs().max_element() <= tol)
}

fn vec_close(a: DVec3, b: DVec3, tol: f64) -> bool {
    (a - b).length() <= tol * (1.0 + a.length().max(b.length()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Eq. (4) equals the quaternion rotation matrix and the matrix exponential of eq. (3).
    #[test]
    fn matrix_matches_quaternion_and_exponential(t in rotvec()) {
        let a = from_rotation_vector(t).unwrap();
        let r = rotation_matrix(a);
        prop_assert!(mat_close(r, DMat3::from_quat(quat(t)), TOL));
        prop_assert!(mat_close(r, expm(t), 1e-12));
        // And R is orthogonal with det 1.
        prop_assert!(mat_close(r * r.transpose(), DMat3::IDENTITY, TOL));
        prop_assert!((r.determinant() - 1.0).abs() < TOL);
    }

    /// `rotate` is `R(α) v`, and `rotate_inverse` its transpose.
    #[test]
    fn rotate_matches_matrix(t in rotvec(), v in prop::array::uniform3(-10.0f64..10.0)) {
        let a = from_rotation_vector(t).unwrap();
        let v = DVec3::from_array(v);
        prop_assert!(vec_close(rotate(a, v), rotation_matrix(a) * v, TOL));
        prop_assert!(vec_close(rotate_inverse(a, v), rotation_matrix(a).transpose() * v, TOL));
    }

    /// Eq. (5): R(α₁ ⊕ α₂) = R(α₂) R(α₁) (α₂ acts after α₁), as quaternion q₂ q₁.
    #[test]
    fn composition_is_left_multiplication(t1 in rotvec(), t2 in rotvec()) {
        let (a1, a2) = (from_rotation_vector(t1).unwrap(), from_rotation_vector(t2).unwrap());
        let q = quat(t2) * quat(t1);
        // Skip compositions within 0.05 rad of the half turn, where α is ill-conditioned.
        prop_assume!(q.w.abs() > 0.025);
        let c = try_compose(a1, a2).unwrap();
        let expect = rodrigues::from_quaternion(q).unwrap();
        prop_assert!(vec_close(c, expect, 1e-12 * (1.0 + 1.0 / q.w.abs())));
        prop_assert!(mat_close(rotation_matrix(c), rotation_matrix(a2) * rotation_matrix(a1), 1e-12));
    }

    /// Inverse: α ⊕ (−α) = 0 and R(−α) = R(α)ᵀ.
    #[test]
    fn inverse_undoes(t in rotvec()) {
        let a = from_rotation_vector(t).unwrap();
        prop_assert!(compose(a, inverse(a)).length() <= TOL * (1.0 + a.length()));
        prop_assert!(mat_close(rotation_matrix(inverse(a)), rotation_matrix(a).transpose(), TOL));
    }

    /// Eq. (3) and its inverse round-trip, and the angle is 2 atan(|α|/2) = |θ|.
    #[test]
    fn rotation_vector_round_trip(t in rotvec()) {
        let a = from_rotation_vector(t).unwrap();
        prop_assert!(vec_close(to_rotation_vector(a), t, TOL));
        prop_assert!((angle(a) - t.length()).abs() <= TOL);
        let q = quat(t);
        prop_assert!(vec_close(a, rodrigues::from_quaternion(q).unwrap(), 1e-12));
    }

    /// Eq. (45) per NOTES: (−α_i) ⊕ α_j is the Rodrigues vector of R_j R_iᵀ.
    #[test]
    fn relative_rotation_is_rj_ri_t(ti in rotvec(), tj in rotvec()) {
        let (ai, aj) = (from_rotation_vector(ti).unwrap(), from_rotation_vector(tj).unwrap());
        let q = quat(tj) * quat(ti).conjugate();
        prop_assume!(q.w.abs() > 0.025);
        let rel = relative(ai, aj).unwrap();
        prop_assert!(mat_close(rotation_matrix(rel), rotation_matrix(aj) * rotation_matrix(ai).transpose(), 1e-12));
    }

    /// Small angles: the series branches agree with the closed forms.
    #[test]
    fn small_angles(t in prop::array::uniform3(-1e-4f64..1e-4)) {
        let t = DVec3::from_array(t);
        let a = from_rotation_vector(t).unwrap();
        prop_assert!(vec_close(to_rotation_vector(a), t, 1e-15));
        prop_assert!(mat_close(rotation_matrix(a), DMat3::from_quat(quat(t)), 1e-15));
    }
}

/// Angles beyond π wrap; the half turn itself is reported, not returned as garbage.
#[test]
fn singular_half_turn_reported() {
    assert!(from_rotation_vector(DVec3::new(std::f64::consts::PI, 0.0, 0.0)).is_none());
    let a = DVec3::new(0.0, 2.0, 0.0); // quarter turn about y: a ⊕ a is a half turn
    assert!(try_compose(a, a).is_none());
    let t = DVec3::new(0.0, 0.0, 1.5 * std::f64::consts::PI); // = −π/2 about z
    let a = from_rotation_vector(t).unwrap();
    assert!((a - DVec3::new(0.0, 0.0, -2.0)).length() < 1e-14);
}
