//! A rigid body's inertia tensor about its centre of mass, in its body frame: checked
//! when a scene is built (symmetric, positive definite, principal moments a mass
//! distribution can have) and used by the integrator of `integrators::rigid`.

use glam::{DMat3, DVec3};

use crate::math::rodrigues;

/// A body-frame inertia tensor `J` (symmetric positive definite, about the centre of
/// mass) with its inverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inertia {
    /// `J` in the body frame (kg m²).
    pub body: DMat3,
    /// `J⁻¹`.
    pub body_inverse: DMat3,
    /// `Some(j)` when `J = j I` exactly: the body takes the sphere path.
    pub scalar: Option<f64>,
}

/// Why an inertia tensor was refused.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum InertiaError {
    /// Not symmetric.
    #[error("the inertia tensor is not symmetric")]
    NotSymmetric,
    /// An eigenvalue is not positive (or not finite).
    #[error("the inertia tensor is not positive definite (principal moments {0:?})")]
    NotPositiveDefinite([f64; 3]),
    /// The principal moments violate the triangle inequality `J₁ ≤ J₂ + J₃` (no mass
    /// distribution has them).
    #[error("the principal moments {0:?} violate the triangle inequality (each must be at most the sum of the other two)")]
    TriangleInequality([f64; 3]),
}

impl Inertia {
    /// The tensor `j` (body frame), checked: symmetric, positive definite, with
    /// principal moments that a mass distribution can have.
    pub fn new(j: DMat3) -> Result<Self, InertiaError> {
        // Symmetric to 1e-12 of its scale (checked below), then made exactly so.
        let given = j;
        let j = (given + given.transpose()) * 0.5;
        let scale = j.to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let sym = (given - given.transpose())
            .to_cols_array()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        if sym.is_nan() || sym > 1e-12 * scale {
            return Err(InertiaError::NotSymmetric);
        }
        let p = principal_moments(j);
        if !p.iter().all(|v| v.is_finite() && *v > 0.0) {
            return Err(InertiaError::NotPositiveDefinite(p));
        }
        // Relative slack for the rounding of the eigenvalues (a thin rod or flat disc
        // meets the inequality with equality).
        let slack = 1e-9 * (p[0] + p[1] + p[2]);
        if p[0] > p[1] + p[2] + slack || p[1] > p[0] + p[2] + slack || p[2] > p[0] + p[1] + slack {
            return Err(InertiaError::TriangleInequality(p));
        }
        let d = j.to_cols_array();
        let diagonal = d[1] == 0.0 && d[2] == 0.0 && d[5] == 0.0;
        let scalar = (diagonal && d[0] == d[4] && d[0] == d[8]).then_some(d[0]);
        Ok(Self {
            body: j,
            body_inverse: j.inverse(),
            scalar,
        })
    }

    /// The diagonal tensor `diag(j)` (principal body axes).
    pub fn principal(j: DVec3) -> Result<Self, InertiaError> {
        Self::new(DMat3::from_diagonal(j))
    }

    /// The spatial inertia `R(α) J R(α)ᵀ`.
    pub fn spatial(&self, alpha: DVec3) -> DMat3 {
        let r = rodrigues::rotation_matrix(alpha);
        r * self.body * r.transpose()
    }

    /// The spatial inverse inertia `R(α) J⁻¹ R(α)ᵀ`.
    pub fn spatial_inverse(&self, alpha: DVec3) -> DMat3 {
        let r = rodrigues::rotation_matrix(alpha);
        r * self.body_inverse * r.transpose()
    }
}

/// Principal moments of a symmetric 3×3 tensor, ascending (closed-form eigenvalues of a
/// symmetric matrix, trigonometric method).
pub fn principal_moments(j: DMat3) -> [f64; 3] {
    let a = j.to_cols_array_2d();
    let p1 = a[0][1].powi(2) + a[0][2].powi(2) + a[1][2].powi(2);
    let q = (a[0][0] + a[1][1] + a[2][2]) / 3.0;
    if p1 == 0.0 {
        let mut d = [a[0][0], a[1][1], a[2][2]];
        d.sort_by(f64::total_cmp);
        return d;
    }
    let p2 = (a[0][0] - q).powi(2) + (a[1][1] - q).powi(2) + (a[2][2] - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    let b = (j - DMat3::from_diagonal(DVec3::splat(q))) * (1.0 / p);
    let r = (0.5 * b.determinant()).clamp(-1.0, 1.0);
    let phi = r.acos() / 3.0;
    let e1 = q + 2.0 * p * phi.cos();
    let e3 = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    let e2 = 3.0 * q - e1 - e3;
    let mut d = [e1, e2, e3];
    d.sort_by(f64::total_cmp);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_moments_of_a_rotated_tensor() {
        let q = rodrigues::rotation_matrix(DVec3::new(0.3, -0.7, 0.2));
        let j = q * DMat3::from_diagonal(DVec3::new(1.0, 2.0, 3.0)) * q.transpose();
        let p = principal_moments(j);
        for (a, b) in p.iter().zip([1.0, 2.0, 3.0]) {
            assert!((a - b).abs() < 1e-13, "{p:?}");
        }
    }

    #[test]
    fn bad_tensors_are_refused() {
        assert_eq!(
            Inertia::principal(DVec3::new(1.0, 1.0, 3.0)).unwrap_err(),
            InertiaError::TriangleInequality([1.0, 1.0, 3.0])
        );
        assert!(matches!(
            Inertia::principal(DVec3::new(1.0, -1.0, 1.0)),
            Err(InertiaError::NotPositiveDefinite(_))
        ));
        let mut j = DMat3::from_diagonal(DVec3::new(1.0, 2.0, 2.5));
        j.x_axis.y = 0.1;
        assert_eq!(Inertia::new(j).unwrap_err(), InertiaError::NotSymmetric);
        // A flat disc meets the inequality with equality.
        assert!(Inertia::principal(DVec3::new(1.0, 1.0, 2.0)).is_ok());
        assert_eq!(
            Inertia::principal(DVec3::splat(0.4)).unwrap().scalar,
            Some(0.4)
        );
    }
}
