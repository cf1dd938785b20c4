//! The binder particle–particle contact law `U^pp` (Baker & Gonzalez eqs. 56–57) and
//! its particle–wall special case.
//!
//! `U^pp = (2/5) K^pp [1 − |x_i − x_j|/(r_i + r_j)]₊^{5/2}`: the prefactor is 2/5, not
//! the printed 5/2, so that eq. (57) is its gradient (NOTES).

use glam::DVec3;

use crate::model::Wall;

/// Pair law: `Some((U^pp, F_i))` for a touching pair (`|d| < r_i + r_j`), else `None`.
///
/// `F_i = (K^pp/R) s^{3/2} (x_i − x_j)/|x_i − x_j|`, `s = 1 − |d|/R`, `R = r_i + r_j`
/// (eq. 57). Every operation is symmetric under swapping `i` and `j` except the sign of
/// `d`, so `pair(j, i)` returns exactly `−F_i`: the two sides of a pair, computed
/// separately by each particle's gather, cancel bitwise.
#[inline]
pub fn binder_pair(k: f64, x_i: DVec3, x_j: DVec3, r_i: f64, r_j: f64) -> Option<(f64, DVec3)> {
    let d = x_i - x_j;
    let dist2 = d.length_squared();
    let reach = r_i + r_j;
    if dist2 >= reach * reach || dist2.is_nan() {
        return None;
    }
    let dist = dist2.sqrt();
    let s = 1.0 - dist / reach;
    let s32 = s * s.sqrt();
    let energy = 0.4 * k * s * s32;
    if dist == 0.0 {
        // Coincident centres: no direction; scene validation rejects this at t = 0.
        return Some((energy, DVec3::ZERO));
    }
    Some((energy, (k * s32 / (reach * dist)) * d))
}

/// Wall law: the pair law against a zero-diameter particle at the foot of the
/// perpendicular, `R = r`, `|d| = h` the signed distance to the plane. A centre behind
/// the plane (`h < 0`) keeps being pushed out along the normal.
///
/// `Some((U, F))` when `h < r`, else `None`.
#[inline]
pub fn binder_wall(wall: &Wall, x: DVec3, r: f64) -> Option<(f64, DVec3)> {
    let h = wall.distance(x);
    if h >= r || h.is_nan() {
        return None;
    }
    let s = 1.0 - h / r;
    let s32 = s * s.sqrt();
    Some((
        0.4 * wall.stiffness * s * s32,
        (wall.stiffness * s32 / r) * wall.normal,
    ))
}

/// Surface law (mesh walls): the wall law against the nearest point of a surface at
/// `distance` from the centre along the unit `toward` (from the centre to the point),
/// `R = r`: `(U, F)` with `F` along `−toward`. Only for `0 < distance < r`.
#[inline]
pub fn binder_surface(k: f64, distance: f64, toward: DVec3, r: f64) -> (f64, DVec3) {
    let s = 1.0 - distance / r;
    let s32 = s * s.sqrt();
    (0.4 * k * s * s32, -(k * s32 / r) * toward)
}
