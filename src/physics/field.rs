//! Uniform acceleration fields: gravity, and the pendulum of Baker & Gonzalez §3.

use glam::DVec3;

use crate::math::rodrigues;

/// Uniform field on a particle's centre: `U = −m a·x`, `F = m a`.
#[inline]
pub fn gravity(m: f64, a: DVec3, x: DVec3) -> (f64, DVec3) {
    (-m * a.dot(x), m * a)
}

/// Field acting at the body point `x + R ρ₀` (pendulum, eq. 39 generalised):
/// `U = −m a·(x + R ρ₀)`, `F = m a`, spatial moment `RM = m (R ρ₀) × a`.
///
/// With `a = +g e₃` and `ρ₀ = e₃` this is eq. (39) as printed; its moment replaces the
/// frame-mixed eq. (40) (NOTES).
#[inline]
pub fn pendulum(m: f64, a: DVec3, x: DVec3, alpha: DVec3, rho0: DVec3) -> (f64, DVec3, DVec3) {
    let rho = rodrigues::rotate(alpha, rho0);
    (-m * a.dot(x + rho), m * a, m * rho.cross(a))
}
