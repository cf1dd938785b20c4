//! The Johnson–Kendall–Roberts (JKR) adhesive contact of two elastic spheres (issue 50,
//! `[contact] cohesion = "jkr"`; the laws only: the kernels do not call them yet).
//!
//! Johnson, Kendall & Roberts, Proc. R. Soc. Lond. A 324 (1971) 301. With effective
//! radius `R`, modulus `E*` and surface energy `γ` (J/m²; the work of adhesion is
//! `w = 2γ`, as in LAMMPS's `jkr`), the contact radius `a` sets both the overlap and the
//! force:
//!
//! * `δ(a) = a²/R − 2√(πγa/E*)` (the Hertz indentation less the adhesive neck's),
//! * `F(a) = 4E*a³/(3R) − 4√(πγE*a³)` (repulsive positive; `√(8πwE*a³)` with `w = 2γ`),
//! * `U(a) = 8E*a⁵/(15R²) − (4/3)√(4πγE*) a^{7/2}/R + 2πγa²`, the energy whose
//!   derivative along the overlap is the force (`dU/dδ = F`, integrated from `a = 0`;
//!   `(8/15)E*√R δ^{5/2}`, the Hertz energy, at `γ = 0`).
//!
//! Under a controlled force the contact lets go at the force's minimum, `a³ = 9πγR²/(4E*)`,
//! with the pull-off force `F = −3πγR` ([`pull_off_force`]). DEM controls the overlap:
//! the contact holds past that point, the attraction falling, down to the least overlap
//! `δ_c` of the curve (`dδ/da = 0`: `a_c³ = πγR²/(4E*)`, [`pull_off_overlap`]), where it
//! breaks. It forms again only on touching (`δ = 0`, where `a` jumps to
//! `a_0 = (4πγR²/E*)^{1/3}`): the hysteresis that dissipates energy in every adhesive
//! collision.

/// The contact radius `a` at overlap `δ ≥ δ_c` on the stable branch (`a ≥ a_c`), for
/// effective radius `r`, modulus `e` and surface energy `gamma`: the largest root of
/// `δ = a²/R − 2√(πγa/E*)`, a quartic in `√a` solved in closed form (Ferrari; the form
/// LAMMPS's `jkr` uses). Within rounding of `δ_c`, where the two branches meet, the
/// square roots are clamped at 0.
pub fn contact_radius(r: f64, e: f64, gamma: f64, delta: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let dr = delta * r;
    let r2 = r * r;
    let t0 = gamma * gamma * r2 * r2 * e;
    let t1 = 27.0 * pi * pi * t0;
    let t2 = 8.0 * dr * dr * dr * e * e * e;
    let t3 = 4.0 * dr * dr * e;
    let s1 = (t0 * (t1 + 2.0 * t2)).max(0.0);
    let t4 = (t1 + t2 + 3.0 * 3f64.sqrt() * pi * s1.sqrt()).cbrt();
    let t5 = t3 / t4 + t4 / e;
    let t6 = (2.0 * dr + t5).max(0.0).sqrt();
    let s3 = (4.0 * dr - t5 + 6.0 * 6f64.sqrt() * gamma * pi * r2 / (e * t6)).max(0.0);
    (t6 + s3.sqrt()) / 6f64.sqrt()
}

/// The overlap `δ(a) = a²/R − 2√(πγa/E*)` of contact radius `a`.
pub fn overlap(r: f64, e: f64, gamma: f64, a: f64) -> f64 {
    a * a / r - 2.0 * (std::f64::consts::PI * gamma * a / e).sqrt()
}

/// The normal force `F(a) = 4E*a³/(3R) − 4√(πγE*a³)` (positive: repulsive).
pub fn force(r: f64, e: f64, gamma: f64, a: f64) -> f64 {
    (4.0 / 3.0) * e * a * a * a / r - 4.0 * (std::f64::consts::PI * gamma * e * a * a * a).sqrt()
}

/// The contact's energy `U(a)` (module doc), zero at `a = 0`.
pub fn energy(r: f64, e: f64, gamma: f64, a: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let a2 = a * a;
    (8.0 / 15.0) * e * a2 * a2 * a / (r * r)
        - (4.0 / 3.0) * (4.0 * pi * gamma * e).sqrt() * a2 * a.sqrt() * a / r
        + 2.0 * pi * gamma * a2
}

/// The pull-off force `3πγR` (the largest attraction, at `a³ = 9πγR²/(4E*)`).
pub fn pull_off_force(r: f64, gamma: f64) -> f64 {
    3.0 * std::f64::consts::PI * gamma * r
}

/// The least overlap `δ_c < 0` at which a contact still holds (module doc): `δ(a_c)`
/// with `a_c = (πγR²/(4E*))^{1/3}`, which is `−(3/4)(π²w²R/E*²)^{1/3}` with
/// `w = 2γ`.
pub fn pull_off_overlap(r: f64, e: f64, gamma: f64) -> f64 {
    let a_c = (std::f64::consts::PI * gamma * r * r / (4.0 * e)).cbrt();
    overlap(r, e, gamma, a_c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Glass beads of 1 mm and γ = 0.05 J/m² (a cohesive powder), and a stiff, weakly
    /// adhesive pair.
    const CASES: [(f64, f64, f64); 3] = [(5e-4, 3.5e7, 0.05), (1e-3, 1e9, 0.01), (2e-5, 1e8, 0.2)];

    /// `a(δ)` inverts `δ(a)` on the stable branch from just above `δ_c` to ten times the
    /// touching contact's Hertz overlap, to 10⁻⁹ of `|δ_c|` (the closed form's
    /// cancellations near `δ_c` are the error).
    #[test]
    fn contact_radius_inverts_the_overlap() {
        for (r, e, g) in CASES {
            let dc = pull_off_overlap(r, e, g);
            let a_c = (PI * g * r * r / (4.0 * e)).cbrt();
            for k in 0..=200 {
                let delta = dc * (1.0 - 1e-6) + (k as f64 / 200.0).powi(2) * 11.0 * dc.abs();
                let a = contact_radius(r, e, g, delta);
                assert!(
                    a >= a_c * (1.0 - 1e-3),
                    "a {a} below a_c {a_c} at δ {delta}"
                );
                let back = overlap(r, e, g, a);
                assert!(
                    (back - delta).abs() < 1e-9 * dc.abs(),
                    "δ {delta}: a {a} gives {back}"
                );
            }
        }
    }

    /// The closed values: `δ_c = −(3/4)(π²w²R/E*²)^{1/3}` (`w = 2γ`); at touching
    /// (`δ = 0`) the radius is `a_0 = (4πγR²/E*)^{1/3}`; the largest attraction along the curve is
    /// the pull-off force `3πγR`, at `a³ = 9πγR²/(4E*)`.
    #[test]
    fn pull_off_force_and_overlap() {
        for (r, e, g) in CASES {
            let dc = pull_off_overlap(r, e, g);
            let want = -0.75 * (PI * PI * 4.0 * g * g * r / (e * e)).cbrt();
            assert!((dc - want).abs() < 1e-12 * want.abs(), "{dc} vs {want}");
            let a0 = contact_radius(r, e, g, 0.0);
            let want0 = (4.0 * PI * g * r * r / e).cbrt();
            assert!((a0 - want0).abs() < 1e-9 * want0, "{a0} vs {want0}");
            let f_min = (0..=10000)
                .map(|k| dc + (k as f64 / 10000.0) * dc.abs())
                .map(|d| force(r, e, g, contact_radius(r, e, g, d)))
                .fold(f64::INFINITY, f64::min);
            let po = pull_off_force(r, g);
            assert!((f_min + po).abs() < 1e-6 * po, "min force {f_min} vs −{po}");
        }
    }

    /// `F = dU/dδ` along the curve (central differences in `a`, the chain rule through
    /// `δ(a)`), to 10⁻⁶ of the force scale `3πγR + |F|`; and `γ = 0` is Hertz.
    #[test]
    fn force_is_the_derivative_of_the_energy() {
        for (r, e, g) in CASES {
            let dc = pull_off_overlap(r, e, g);
            for k in 1..50 {
                let a = contact_radius(r, e, g, dc + k as f64 * 0.2 * dc.abs());
                let h = 1e-5 * a;
                let du = energy(r, e, g, a + h) - energy(r, e, g, a - h);
                let dd = overlap(r, e, g, a + h) - overlap(r, e, g, a - h);
                let f = force(r, e, g, a);
                let scale = pull_off_force(r, g) + f.abs();
                assert!(
                    (du / dd - f).abs() < 1e-6 * scale,
                    "a {a}: {} vs {f}",
                    du / dd
                );
            }
            let delta = 1e-6 * r;
            let a = contact_radius(r, e, 0.0, delta);
            let hertz = (4.0 / 3.0) * e * r.sqrt() * delta.powf(1.5);
            assert!((force(r, e, 0.0, a) - hertz).abs() < 1e-12 * hertz);
            let u = (8.0 / 15.0) * e * r.sqrt() * delta.powf(2.5);
            assert!((energy(r, e, 0.0, a) - u).abs() < 1e-12 * u);
        }
    }
}
