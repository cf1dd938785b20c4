//! The single-contact problem of two spheres (or a sphere and a wall) in closed form,
//! and the contact frame both backends build from a normal.
//!
//! For sphere contacts the lever arms are parallel to `n`, so the Delassus block is
//! `diag(a, c, c)` with `a = Σ m⁻¹`, `c = Σ (m⁻¹ + r² J⁻¹)`: the plane of maximum
//! compression is `x_n = b_n/a`, and the minimiser of `½c‖x_to‖² − x_toᵀb_to` on the
//! disk `‖x_to‖ ≤ μx_n` is the projection of `b_to/c` onto it. Maximum dissipation and
//! Coulomb give the same impulse (NOTES; `tests/physics_hard.rs` checks it against
//! [`super::solve_contact`] and [`super::solve_contact_coulomb`]).

use super::ContactCase;

/// Impulse of a sphere contact with the block `diag(a, c, c)` (`a, c > 0`), the
/// negated free relative velocity `b` (contact frame, `b_n > 0` approaching) and the
/// friction coefficient `mu ≥ 0`; the branch of Fig. 5 it took.
///
/// * `b_n ≤ 0`: `0` (separating; at `b_n = 0` the point of `P2`, which always holds
///   here since `A_nt = A_no = 0`).
/// * `‖b_to‖/c ≤ μ b_n/a`: `A⁻¹b` (sticking; `Frictionless` when `μ = 0` or
///   `b_to = 0` with `μ = 0`).
/// * else `x_n = b_n/a`, `x_to = μ x_n b_to/‖b_to‖` (sliding).
#[inline]
pub fn solve_sphere_contact(a: f64, c: f64, b: [f64; 3], mu: f64) -> ([f64; 3], ContactCase) {
    let [bn, bt, bo] = b;
    if bn <= 0.0 || !(bn.is_finite() && bt.is_finite() && bo.is_finite()) {
        return ([0.0; 3], ContactCase::Separating);
    }
    let xn = bn / a;
    if mu == 0.0 {
        return ([xn, 0.0, 0.0], ContactCase::Frictionless);
    }
    let (xt, xo) = (bt / c, bo / c);
    let norm = (xt * xt + xo * xo).sqrt();
    let limit = mu * xn;
    if norm <= limit {
        return ([xn, xt, xo], ContactCase::Sticking);
    }
    let s = limit / norm;
    ([xn, s * xt, s * xo], ContactCase::Sliding)
}

/// An orthonormal frame `[n, t, o]` completing the unit normal `n` (right-handed,
/// `o = n × t`), by the branch-free construction of Duff et al. (2017), "Building an
/// orthonormal basis, revisited": continuous except at `n_z = 0⁻`/`0⁺`, cheap, and the
/// same operations on every backend.
#[inline]
pub fn contact_frame(n: [f64; 3]) -> [[f64; 3]; 3] {
    let sign = 1f64.copysign(n[2]);
    let a = -1.0 / (sign + n[2]);
    let b = n[0] * n[1] * a;
    let t = [1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]];
    let o = [b, sign + n[1] * n[1] * a, -n[1]];
    [n, t, o]
}
