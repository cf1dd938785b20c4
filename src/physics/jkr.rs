//! The Johnson–Kendall–Roberts (JKR) adhesive contact of two elastic spheres (issue 50,
//! `[contact] cohesion = "jkr"`), and the contact law built on it ([`jkr_core`]).
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

/// The pull-off separation `|δ_c|` of the stiffest-adhering entry of `model`'s pair
/// tables at effective radius `r` (a sphere of radius `r` against a rigid wall bounds
/// every pair of such spheres: `|δ_c|` grows with `R`). 0 without JKR cohesion.
pub fn largest_pull_off_separation(model: &crate::model::Model, r: f64) -> f64 {
    if !model.jkr() {
        return 0.0;
    }
    let t = super::granular::PairTables::new(model);
    (t.pairs.iter().chain(&t.walls).chain(&t.meshes))
        .filter(|pm| pm.gamma > 0.0)
        .map(|pm| -pull_off_overlap(r, pm.e_star, pm.gamma))
        .fold(0.0, f64::max)
}

/// The largest pull-off separation of any sphere `model` has or will insert (its
/// particles, clump spheres and inserters' largest) against any entry of its tables:
/// how far past touching the contacts in tension reach, the mesh search's extra reach
/// (both backends) and the least `[contact] skin`. 0 without JKR cohesion.
pub fn largest_reach(model: &crate::model::Model) -> f64 {
    if !model.jkr() {
        return 0.0;
    }
    let spheres = (model.clump_types.iter()).flat_map(|t| t.spheres.iter().map(|s| s.radius));
    let inserted = model.inserters.iter().map(|i| i.max_radius.max(i.radius));
    let r_max = (spheres.chain(inserted)).fold(model.particles.max_radius(), f64::max);
    largest_pull_off_separation(model, r_max)
}

/// The Hertz–Mindlin law of [`super::granular::hertz_core`] with the JKR normal force,
/// for a pair of surface energy `γ = pm.gamma > 0` at overlap `δ` above its pull-off
/// overlap (negative in tension). As LAMMPS's `granular` `jkr` with `mindlin`:
///
/// * elastic normal force `F_el = F(a)` ([`force`], attractive below the equilibrium
///   overlap) at the contact radius `a = a(δ)` ([`contact_radius`]);
/// * damping `2ξ√(2E*m*a)`, eq. (22) with the contact radius `a` in place of Hertz's
///   `√(r*δ)`; the normal force `f_n = F_el + d δ̇` is not clamped at 0 (the adhesion
///   pulls);
/// * tangential stiffness `k_t = 8G*a` (Mindlin), friction capped at
///   `μ |F_el + 2F_po|` with the pull-off force `F_po = 3πγR*` (the normal load that
///   presses the surfaces, measured from the adhesion's);
/// * energy `U(a)` ([`energy`]).
#[inline]
pub fn jkr_core(c: &super::granular::HertzInputs) -> super::granular::ContactResult {
    let (pm, n, overlap) = (&c.pm, c.n, c.overlap);
    let (r, e, gamma) = (c.g.r_star, pm.e_star, pm.gamma);
    let a = contact_radius(r, e, gamma, overlap);
    let f_el = force(r, e, gamma, a);
    let damp = 2.0 * pm.xi * (2.0 * pm.e_star * c.g.m_star * a).sqrt();
    let approach = c.relative_v.dot(n);
    let f_n = f_el + damp * approach;
    let load = (f_el + 2.0 * pull_off_force(r, gamma)).abs();
    let carried = super::granular::carry_spring(c.spring, n);
    let slip = c.relative_dx
        + super::granular::rotate_minus_identity(c.dalpha_a, c.lever_a * n)
        + super::granular::rotate_minus_identity(c.dalpha_b, c.lever_b * n);
    let ds = slip - slip.dot(n) * n;
    let trial = carried + ds;
    let k_t = 8.0 * pm.g_star * a;
    let trial_len = trial.length();
    let stick = k_t * trial_len <= pm.mu_s * load;
    let (friction, spring) = if stick {
        (-k_t * trial, trial)
    } else {
        let tau = trial / trial_len;
        let f = pm.mu_d * load;
        let spring = if k_t > 0.0 {
            (f / k_t) * tau
        } else {
            glam::DVec3::ZERO
        };
        (-f * tau, spring)
    };
    super::granular::ContactResult {
        force: -f_n * n + friction,
        friction,
        normal: n,
        overlap,
        energy: energy(r, e, gamma, a),
        spring,
        slipping: !stick,
        normal_force: load,
        contact_radius: a,
    }
}

/// Whether a pair of surface energy `gamma` at overlap `overlap` is in contact, given
/// whether it was at the previous evaluation (`touched`): on touching (`δ > 0`), and,
/// once formed, down to the pull-off overlap `δ_c` of effective radius `r` and modulus
/// `e` (the hysteresis). `gamma = 0` is Hertz's `δ > 0`.
#[inline]
pub fn in_contact(r: f64, e: f64, gamma: f64, overlap: f64, touched: bool) -> bool {
    overlap > 0.0 || (touched && gamma > 0.0 && overlap > pull_off_overlap(r, e, gamma))
}

/// A sphere of radius `r` at `x` against plane `wall` under the pair material `pm`:
/// [`crate::physics::granular::wall_overlap`]'s `(n, δ, ℓ)` when in contact, which
/// with a surface energy includes a contact in tension that `held` at the last
/// evaluation ([`in_contact`], effective radius `r`).
#[inline]
pub fn wall_overlap_held(
    wall: &crate::model::Wall,
    x: glam::DVec3,
    r: f64,
    pm: &super::granular::PairMaterial,
    held: bool,
) -> Option<(glam::DVec3, f64, f64)> {
    let h = wall.distance(x);
    let overlap = r - h;
    (!h.is_nan() && in_contact(r, pm.e_star, pm.gamma, overlap, held)).then_some((
        -wall.normal,
        overlap,
        h,
    ))
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
