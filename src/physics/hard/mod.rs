//! Analytic single-contact hard-contact solver with maximum-dissipation friction
//! (Preclik, Eibl & Rüde, "maximum dissipation hard contacts", §3.2, Fig. 5, eqs. (5)–(9),
//! Appendix A), plus the Coulomb (De Saxcé–Feng) variant of the same impact problem.
//!
//! # Conventions
//!
//! The contact frame is `(n, t, o)`. `a` is the 3×3 symmetric positive-definite Delassus
//! block of the contact in that frame, `b` the *negated* relative contact velocity the
//! contact would have without its own reaction (`b_n > 0`: approaching). The impulse is
//! `x = (x_n, x_t, x_o)` and the post-impulse relative velocity `u = A x − b`.
//!
//! The maximum-dissipation problem (eq. (5), with restitution 0) is
//!
//! ```text
//! x* = argmin ½ xᵀA x − xᵀb   s.t.  ‖x_to‖ ≤ μ x_n,  0 ≤ u_n ⊥ x_n ≥ 0,  a_nᵀx ≥ 0,
//! ```
//!
//! with `a_n = (A_nn, A_nt, A_no)` (so `u_n = a_nᵀx − b_n`). For `b_n < 0` only `x = 0`
//! is admissible; for `b_n ≥ 0` the admissible set is the conic section "plane of maximum
//! compression `a_nᵀx = b_n` ∩ friction cone". That set is convex and the objective strictly
//! convex, so the minimiser is unique: `x₀ = A⁻¹b` when it lies in the cone, else a point of
//! the conic section's boundary.
//!
//! # Corrections to the printed paper (see `docs/hard-contacts.md`)
//!
//! * Fig. 5: the cone test `P1` of `x₀ = A⁻¹b` comes *before* the `b_n = 0` branch.
//! * Eq. (9): the printed edge choice can pick the wrong asymptote when `Â` is anisotropic;
//!   both edges are evaluated and the lower objective kept.
//! * The degenerate parabola's ray is `−(A_nt, A_no)`, not `+(A_nt, A_no)`.
//! * Appendix A: `c₁e^{iφ₁} = X₁ + iY₁`, `c₂e^{iφ₂} = μA_nn(X₂ + iY₂)/2` with `X, Y` the
//!   printed `atan2` arguments; the quartic's leading coefficient can vanish.
//!
//! # Numerics
//!
//! The dynamic branch finds the roots of eq. (8) through its quartic (Aberth–Ehrlich
//! iteration, closed form for the degenerate degree 2), polishes each angle by Newton on
//! eq. (8), keeps the admissible angle with the lowest objective, and finally refines that
//! point by Newton on the KKT system in Cartesian coordinates: near an asymptote of a
//! hyperbolic conic section the angle is an ill-conditioned coordinate (relative error
//! `ε·μ‖(A_nt, A_no)‖/f_r(α)`), the Cartesian point is not. Inputs are scaled to unit
//! magnitude first.
//!
//! # Invalid input
//!
//! Every public solver returns the zero impulse (reported as [`ContactCase::Separating`])
//! when an input is non-finite, `μ < 0`, or `A` (its symmetric part `½(A + Aᵀ)`, which is
//! what the solvers read) is not positive definite. No input panics; the impulse is finite
//! whenever the input magnitudes are moderate (non-zero entries within about 1e±100 —
//! entries spanning beyond the f64 range can overflow after scaling).

/// A 3×3 matrix in row-major `[row][column]` order.
type M3 = [[f64; 3]; 3];
/// A 3-vector.
type V3 = [f64; 3];

/// Which branch of the structogram (Fig. 5) produced the impulse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactCase {
    /// `b_n < 0`: the contact separates, `x = 0` (also returned for invalid input).
    Separating,
    /// `μ = 0`, `b_n ≥ 0`: `x = (b_n / A_nn, 0, 0)`.
    Frictionless,
    /// `P1`: the unconstrained minimiser `x₀ = A⁻¹b` lies in the friction cone, `x = x₀`.
    Sticking,
    /// `b_n = 0` and `x₀` outside the cone: the degenerate conic section (point, ray or
    /// wedge of eq. (9)); `x = 0` when `P2` (`A_nn > μ‖(A_nt, A_no)‖`) holds.
    Grazing,
    /// `b_n > 0`, `μ > 0`, `x₀` outside the cone: dynamic (sliding) impulse on the conic
    /// section's boundary, from the roots of the quartic of eq. (8) / Appendix A.
    Sliding,
}

// One job per file: `prep` validates and scales a problem (and holds the small linear
// algebra), `poly` finds the quartic's roots, `dissipation` is Fig. 5, `coulomb` the
// Coulomb variant, `delassus` builds a contact's block.
mod coulomb;
mod delassus;
mod dissipation;
mod poly;
mod prep;
mod sphere;

pub use coulomb::{
    coulomb_residual, coulomb_solutions, project_cone, solve_contact_coulomb,
    solve_contact_coulomb_case,
};
pub use delassus::{delassus, DelassusBody};
pub use dissipation::{
    appendix_a_coefficients, grazing_printed_edge_rule, solve_contact, solve_contact_case,
};
pub use sphere::{contact_frame, solve_sphere_contact};

// The siblings' shared helpers, for each other (`use super::*`) and the tests.
use {dissipation::*, poly::*, prep::*};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartic_roots_of_known_polynomial() {
        // (y − 1)(y + 2)(y − i)(y + 0.5i)
        let r = [
            Cx::new(1.0, 0.0),
            Cx::new(-2.0, 0.0),
            Cx::new(0.0, 1.0),
            Cx::new(0.0, -0.5),
        ];
        let mut p = vec![Cx::ONE];
        for &z in &r {
            let mut q = vec![Cx::ZERO; p.len() + 1];
            for (k, &c) in p.iter().enumerate() {
                q[k] = q[k].add(c);
                q[k + 1] = q[k + 1].sub(c.mul(z));
            }
            p = q;
        }
        let roots = poly_roots(&p);
        for z in r {
            assert!(
                roots.iter().any(|w| w.sub(z).abs() < 1e-13),
                "{z:?} {roots:?}"
            );
        }
    }

    #[test]
    fn sphere_block_degenerate_quartic() {
        let a = [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]];
        let (x, case) = solve_contact_case(a, [1.0, 5.0, -2.0], 0.3);
        assert_eq!(case, ContactCase::Sliding);
        let k = 0.3 * 0.5 / 29f64.sqrt();
        let want = [0.5, 5.0 * k, -2.0 * k];
        for i in 0..3 {
            assert!((x[i] - want[i]).abs() < 1e-15, "{x:?} {want:?}");
        }
    }

    #[test]
    fn invalid_input_returns_zero() {
        let a = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let nan = f64::NAN;
        assert_eq!(solve_contact(a, [nan, 1.0, 0.0], 0.5), [0.0; 3]);
        assert_eq!(solve_contact(a, [1.0, 1.0, 0.0], -0.5), [0.0; 3]);
        assert_eq!(solve_contact(a, [1.0, 1.0, 0.0], f64::INFINITY), [0.0; 3]);
        let neg = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert_eq!(solve_contact(neg, [1.0, 1.0, 0.0], 0.5), [0.0; 3]);
        assert_eq!(solve_contact([[0.0; 3]; 3], [1.0, 1.0, 0.0], 0.5), [0.0; 3]);
        assert_eq!(solve_contact_coulomb(neg, [1.0, 1.0, 0.0], 0.5), [0.0; 3]);
    }
}
