//! Granular contact laws of Campello 2015 §3: Hertz normal contact with damping
//! (eqs. 19–23), the Mindlin tangential spring with stick–slip friction and rolling
//! (eqs. 25–39), drag (eq. 15), near-field Mie forces (eq. 17) and the Magnus force
//! (Remark 4), with the sign corrections of NOTES.
//!
//! Every pair is computed in a *canonical* order, the lower particle id first (`a`), and
//! the other side takes the exact negative of `a`'s force, so `f_ab = −f_ba` bitwise and
//! linear momentum is conserved to rounding even though each particle computes its own
//! side of every pair (no scatter, no atomics on the GPU).
//!
//! Kinematics of one step (the same for every integrator): the increments `Δx` and `Δα`
//! of eqs. (25)–(28) are the ones the integrator actually took from the previous state
//! (`Δx = h v`, `Δα` the rotation increment composed onto `α`). The velocities in the
//! damping and drag terms are the half-step velocities of the variational maps carried
//! to the end of the step with the previous forces, `v_{k+½} + h F_k/(2m)` (and `Ω`
//! likewise): `v_{k+½}` itself lags half a step and costs first order in the
//! restitution (README, *Integration with velocity-dependent forces*).

use glam::DVec3;

use crate::model::{Material, Wall};

pub use crate::model::{Drag, NearField};

/// Partner id of an unused contact-history slot (both backends' history rows end with
/// it).
pub const NO_PARTNER: u32 = u32::MAX;

/// Effective properties of a pair of materials (or of a material against a wall).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairMaterial {
    /// `E*` of eq. (20) (Pa).
    pub e_star: f64,
    /// Mindlin's `G* = [(2−ν_i)/G_i + (2−ν_j)/G_j]⁻¹` (Pa): see [`PairMaterial::new`].
    pub g_star: f64,
    /// Damping ratio `ξ ≥ 0` of eq. (22) that gives the pair restitution exactly
    /// ([`damping_ratio_for_restitution`]).
    pub xi: f64,
    /// Pair restitution `e` (the smaller of the two materials').
    pub restitution: f64,
    /// Static friction coefficient `μ_s` (the smaller of the two).
    pub mu_s: f64,
    /// Dynamic friction coefficient `μ_d` (the smaller of the two).
    pub mu_d: f64,
    /// Rolling friction coefficient `μ_r` (the smaller of the two;
    /// [`crate::physics::rolling`]).
    pub mu_r: f64,
    /// EPSD rolling damping ratio `η_r` (the smaller of the two).
    pub eta_r: f64,
    /// JKR surface energy `γ` of the pair (J/m²; [`crate::physics::jkr`]): `√(γ_a γ_b)`,
    /// or the particle's against a wall without a material; 0 without JKR cohesion
    /// ([`crate::model::Model::jkr`]), and the pair then follows the Hertz law.
    pub gamma: f64,
}

impl PairMaterial {
    /// Pair properties of materials `a` and `b`; `b = None` is a rigid body (a wall
    /// without a material: `E, G → ∞`, its restitution and friction those of `a`).
    ///
    /// * `E* = [(1−ν_a²)/E_a + (1−ν_b²)/E_b]⁻¹` (eq. 20).
    /// * `G*`: eq. (38), `G_aG_b/(G_a+G_b)`, is not Mindlin's result (NOTES); varidem uses
    ///   Mindlin's `G* = [(2−ν_a)/G_a + (2−ν_b)/G_b]⁻¹`, as LIGGGHTS and most DEM codes do,
    ///   so that `k_t = 8G*√(r*δ)` (eq. 37) is the Mindlin tangential stiffness. For equal
    ///   materials with ν = 0.25 it is `G/3.5` where eq. (38) gives `G/2`.
    /// * Restitution and friction coefficients of the pair are the smaller of the two
    ///   materials' values (the rule of Chrono and Yade): a soft or slippery partner
    ///   governs.
    pub fn new(a: &Material, b: Option<&Material>) -> Self {
        Self::mix(a, b, true)
    }

    /// [`PairMaterial::new`]; without `damping`, `ξ` is left 0 (hard contacts need only
    /// the friction coefficients, and `ξ` of a small restitution is costly to solve for).
    fn mix(a: &Material, b: Option<&Material>, damping: bool) -> Self {
        let inv_e = |m: &Material| (1.0 - m.poisson * m.poisson) / m.young;
        let inv_g = |m: &Material| (2.0 - m.poisson) / m.shear_modulus;
        let (e_star, g_star, restitution, mu_s, mu_d) = match b {
            Some(b) => (
                1.0 / (inv_e(a) + inv_e(b)),
                1.0 / (inv_g(a) + inv_g(b)),
                a.restitution.min(b.restitution),
                a.friction_static.min(b.friction_static),
                a.friction_dynamic.min(b.friction_dynamic),
            ),
            None => (
                1.0 / inv_e(a),
                1.0 / inv_g(a),
                a.restitution,
                a.friction_static,
                a.friction_dynamic,
            ),
        };
        let (mu_r, eta_r) = match b {
            Some(b) => (
                a.rolling_friction.min(b.rolling_friction),
                a.rolling_damping.min(b.rolling_damping),
            ),
            None => (a.rolling_friction, a.rolling_damping),
        };
        // Berthelot's rule for the work of adhesion of unlike surfaces,
        // w_ab = √(w_a w_b) (Israelachvili, Intermolecular and Surface Forces, §17).
        let gamma = match b {
            Some(b) => (a.surface_energy * b.surface_energy).sqrt(),
            None => a.surface_energy,
        };
        Self {
            e_star,
            g_star,
            xi: if damping {
                damping_ratio_for_restitution(restitution)
            } else {
                0.0
            },
            restitution,
            mu_s,
            mu_d,
            mu_r,
            eta_r,
            gamma,
        }
    }
}

impl PairMaterial {
    /// Replaces the mixed values by those `it` gives (`[[interaction]]`).
    pub fn apply(&mut self, it: &crate::model::Interaction) {
        if let Some(e) = it.restitution {
            self.restitution = e;
            self.xi = damping_ratio_for_restitution(e);
        }
        if let Some(mu) = it.friction_static {
            self.mu_s = mu;
        }
        if let Some(mu) = it.friction_dynamic {
            self.mu_d = mu;
        }
        if let Some(mu) = it.rolling_friction {
            self.mu_r = mu;
        }
    }
}

/// Material tables of a granular model.
#[derive(Clone, Debug, PartialEq)]
pub struct PairTables {
    /// Number of materials `M`.
    pub materials: usize,
    /// Pair properties `M × M`, `[a * M + b]`.
    pub pairs: Vec<PairMaterial>,
    /// Particle-wall properties `W × M`, `[w * M + m]`.
    pub walls: Vec<PairMaterial>,
    /// Particle-mesh properties, one row of `M` per mesh wall.
    pub meshes: Vec<PairMaterial>,
}

impl PairTables {
    /// The tables of `model`'s materials and walls.
    pub fn new(model: &crate::model::Model) -> Self {
        Self::build(model, true)
    }

    /// The tables of `model` for hard contacts: friction and restitution only (`ξ` = 0).
    pub fn friction(model: &crate::model::Model) -> Self {
        Self::build(model, false)
    }

    fn build(model: &crate::model::Model, damping: bool) -> Self {
        let mats = &model.materials;
        let m = mats.len();
        let mut pairs = Vec::with_capacity(m * m);
        for a in mats {
            for b in mats {
                pairs.push(PairMaterial::mix(a, Some(b), damping));
            }
        }
        // Overrides of the mixing rule for listed pairs of materials.
        let apply = |pm: &mut PairMaterial, a: u32, b: Option<u32>| {
            let Some(b) = b else { return };
            for it in &model.interactions {
                let [x, y] = it.materials;
                if (x, y) == (a, b) || (y, x) == (a, b) {
                    pm.apply(it);
                }
            }
        };
        for a in 0..m {
            for b in 0..m {
                apply(&mut pairs[a * m + b], a as u32, Some(b as u32));
            }
        }
        let rows = |material: Option<u32>, out: &mut Vec<PairMaterial>| {
            let wm = material.map(|k| &mats[k as usize]);
            for (k, a) in mats.iter().enumerate() {
                let mut pm = PairMaterial::mix(a, wm, damping);
                apply(&mut pm, k as u32, material);
                out.push(pm);
            }
        };
        let mut walls = Vec::with_capacity(model.walls.len() * m);
        for w in &model.walls {
            rows(w.material, &mut walls);
        }
        let mut meshes = Vec::with_capacity(model.meshes.len() * m);
        for w in &model.meshes {
            rows(w.material, &mut meshes);
        }
        // Surface energies count only where JKR cohesion is in force.
        if !model.jkr() {
            for pm in pairs.iter_mut().chain(&mut walls).chain(&mut meshes) {
                pm.gamma = 0.0;
            }
        }
        Self {
            materials: m,
            pairs,
            walls,
            meshes,
        }
    }

    /// Pair properties of materials `a` and `b`.
    #[inline]
    pub fn pair(&self, a: u32, b: u32) -> &PairMaterial {
        &self.pairs[a as usize * self.materials + b as usize]
    }

    /// Properties of material `a` against mesh wall `w`.
    #[inline]
    pub fn mesh(&self, w: usize, a: u32) -> &PairMaterial {
        &self.meshes[w * self.materials + a as usize]
    }

    /// Properties of material `a` against wall `w`.
    #[inline]
    pub fn wall(&self, w: usize, a: u32) -> &PairMaterial {
        &self.walls[w * self.materials + a as usize]
    }
}

/// Restitution of the Hertz contact with the damping of eq. (22), as a function of the
/// damping ratio `ξ ≥ 0` alone.
///
/// With `m δ̈ = −K δ^{3/2} − c δ^{1/4} δ̇`, `K = (4/3)√r* E*`, `c = 2ξ√(2√r* E* m*)`
/// (eqs. 19, 22), the scaling `δ = A u`, `t = √(m/(K√A)) τ` turns the collision into
/// `u'' = −max(0, u^{3/2} + 2√1.5 ξ u^{1/4} u')` whatever the impact speed, masses and
/// moduli: the restitution depends on `ξ` only (Tsuji et al. 1992). The normal force is
/// clamped at zero (no attraction while the spheres separate), here as in the force law.
/// Integrated with RK4 at `Δτ = 2·10⁻⁴` from `u = 0`, `u' = 1` until `u < 0`, with the
/// crossing located by linear interpolation: the result is accurate to about 10⁻⁶.
pub fn restitution_for_damping_ratio(xi: f64) -> f64 {
    let beta = 2.0 * 1.5f64.sqrt() * xi;
    let acc = |u: f64, w: f64| {
        let u = u.max(0.0);
        -(u * u.sqrt() + beta * u.sqrt().sqrt() * w).max(0.0)
    };
    let dt = 2e-4;
    let (mut u, mut w) = (0.0f64, 1.0f64);
    // A collision lasts τ ≈ 3.2 undamped; longer when damped. The bound only guards
    // against a loop that never ends (e → 0 in the limit ξ → ∞).
    for _ in 0..2_000_000 {
        let (k1u, k1w) = (w, acc(u, w));
        let (k2u, k2w) = (
            w + 0.5 * dt * k1w,
            acc(u + 0.5 * dt * k1u, w + 0.5 * dt * k1w),
        );
        let (k3u, k3w) = (
            w + 0.5 * dt * k2w,
            acc(u + 0.5 * dt * k2u, w + 0.5 * dt * k2w),
        );
        let (k4u, k4w) = (w + dt * k3w, acc(u + dt * k3u, w + dt * k3w));
        let un = u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        let wn = w + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        if un < 0.0 && wn < 0.0 {
            // Interpolate the exit speed at u = 0.
            let f = u / (u - un);
            return -(w + f * (wn - w));
        }
        if wn >= 0.0 && un <= 0.0 {
            // Stopped before leaving (fully absorbed).
            return 0.0;
        }
        (u, w) = (un, wn);
    }
    0.0
}

/// The damping ratio `ξ` of eq. (22) that gives restitution `e` in a Hertz collision
/// (inverse of [`restitution_for_damping_ratio`], by bisection to 10⁻¹⁰ in `ξ`).
///
/// Campello's `ξ = −ln e/√(π² + ln² e)` (§3.4) holds for a linear spring; with Hertz it
/// misses the requested restitution by several per cent (NOTES), so varidem solves for
/// the `ξ` that delivers it. `e ≥ 1` gives 0; `e` is clamped below at 10⁻³.
pub fn damping_ratio_for_restitution(e: f64) -> f64 {
    if e >= 1.0 || e.is_nan() {
        return 0.0;
    }
    let e = e.max(1e-3);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while restitution_for_damping_ratio(hi) > e && hi < 1e3 {
        lo = hi;
        hi *= 2.0;
    }
    while hi - lo > 1e-10 * hi.max(1e-3) {
        let mid = 0.5 * (lo + hi);
        if restitution_for_damping_ratio(mid) > e {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Hertz collision duration of eq. (50): `2.87 [m*²/(r* E*² v)]^{1/5}` for relative
/// normal speed `v` (s).
pub fn collision_duration(m_star: f64, r_star: f64, e_star: f64, v_rel: f64) -> f64 {
    2.87 * (m_star * m_star / (r_star * e_star * e_star * v_rel)).powf(0.2)
}

/// Pair-dependent inputs of [`hertz_contact`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactGeometry {
    /// Effective radius `r*` (eq. 20; `r` for a wall).
    pub r_star: f64,
    /// Effective mass `m*` (eq. 23; `m` for a wall).
    pub m_star: f64,
}

/// One side of a contact, as seen by the canonical particle `a` (lower id).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactResult {
    /// Force on `a` (N); `b` receives exactly `−force`.
    pub force: DVec3,
    /// Tangential (friction) part of `force` (N).
    pub friction: DVec3,
    /// Unit normal from `a` to `b`.
    pub normal: DVec3,
    /// Overlap `δ > 0` (m).
    pub overlap: f64,
    /// Elastic Hertz energy `(8/15)√r* E* δ^{5/2}` (J), whose δ-derivative is the
    /// elastic part of eq. (19).
    pub energy: f64,
    /// Updated tangential spring `s` (eq. 36), in the current tangent plane, in `a`'s
    /// orientation (the slip of `a`'s contact point relative to `b`'s).
    pub spring: DVec3,
    /// Whether the contact slipped this step (eq. 32 violated).
    pub slipping: bool,
    /// Normal load `f_n ≥ 0` (N) that caps the friction and the rolling torque: the
    /// normal force under Hertz, `|F_el + 2F_po|` under JKR ([`crate::physics::jkr`]).
    pub normal_force: f64,
    /// Contact radius `a` (m): `√(r*δ)` under Hertz, JKR's `a(δ)`
    /// ([`crate::physics::jkr::contact_radius`]); the stiffnesses scale with it.
    pub contact_radius: f64,
}

impl ContactResult {
    /// Moment on `a` about its centre: `ℓ_a n × f_t` (eq. 39) with lever arm
    /// `ℓ_a = r_a − δ/2`.
    #[inline]
    pub fn moment_a(&self, r_a: f64) -> DVec3 {
        (r_a - 0.5 * self.overlap) * self.normal.cross(self.friction)
    }

    /// Moment on `b` about its centre: `ℓ_b (−n) × (−f_t) = ℓ_b n × f_t`.
    #[inline]
    pub fn moment_b(&self, r_b: f64) -> DVec3 {
        (r_b - 0.5 * self.overlap) * self.normal.cross(self.friction)
    }
}

/// Per-particle inputs of [`hertz_contact`] for one side of the pair.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactSide {
    /// Centre `x` (m).
    pub x: DVec3,
    /// Velocity `v` at the force evaluation (m/s), for damping.
    pub v: DVec3,
    /// Radius `r` (m).
    pub r: f64,
    /// Translation increment `Δx` of this step (eq. 25).
    pub dx: DVec3,
    /// Rotation increment `Δα` of this step (spatial, `R_{k+1} = R(Δα) R_k`).
    pub dalpha: DVec3,
}

/// `(R(α) − I) v = c [α × v + ½ α × (α × v)]`, `c = 4/(4 + |α|²)` (NOTES form of
/// eq. 27): the displacement of a body-attached vector under the increment `α`.
#[inline]
pub fn rotate_minus_identity(alpha: DVec3, v: DVec3) -> DVec3 {
    let c = 4.0 / (4.0 + alpha.length_squared());
    let av = alpha.cross(v);
    c * (av + 0.5 * alpha.cross(av))
}

/// Carries a stored spring `s` into the tangent plane of normal `n`: the normal part is
/// removed and the length restored, a rotation of `s` with the contact frame (exact
/// for rotations about any axis in the old plane, and first-order otherwise).
#[inline]
pub fn carry_spring(s: DVec3, n: DVec3) -> DVec3 {
    let len2 = s.length_squared();
    if len2 == 0.0 {
        return s;
    }
    let t = s - s.dot(n) * n;
    let tl2 = t.length_squared();
    if tl2 == 0.0 {
        return DVec3::ZERO;
    }
    t * (len2 / tl2).sqrt()
}

/// The Hertz–Mindlin contact of Campello §3.4–3.6 between `a` and `b` (or a wall) with
/// overlap `δ > 0` along the unit normal `n` from `a` to `b` (with JKR cohesion, a
/// pair with a surface energy follows [`crate::physics::jkr::jkr_core`] instead, at
/// any `δ` above its pull-off overlap).
///
/// * Normal (eqs. 19, 22 with NOTES' signs): magnitude
///   `f_n = (4/3)√r* E* δ^{3/2} + 2ξ√(2√r* E* m*) δ^{1/4} δ̇`, `δ̇ = (v_a − v_b)·n` the
///   approach rate, clamped at `f_n ≥ 0`; the force on `a` is `−f_n n`.
/// * Tangential (eqs. 28–37): the stored spring is carried into the current plane; the
///   slip increment is the relative displacement of the two contact points,
///   `Δs = P_π[Δx_a − Δx_b + (ℓ_a (R(Δα_a) − I) + ℓ_b (R(Δα_b) − I)) n]`, i.e. eq. (29)
///   `Δx − Δr` with eq. (28) `Δr = ℓ (I − Q_Δ) n` for each particle (the second with
///   `−n`). Rolling without slip gives `Δs = 0`. The trial force `−k_t s` with
///   `k_t = 8G*√(r*δ)` (eq. 37; NOTES' sign) is returned to `μ_d f_n` along `s` when it
///   exceeds `μ_s f_n` (eqs. 32–36).
/// * Lever arms `ℓ = r − δ/2` put both contact points at the centre of the overlap,
///   so the pair's moments and forces conserve angular momentum exactly; eq. (28)'s `r`
///   differs by `δ/2` (`δ/r ~ 10⁻³` in practice). For a wall, `ℓ_a = r − δ` (the
///   contact point is on the plane) and `b` has no motion.
#[expect(
    clippy::too_many_arguments,
    reason = "the law of eq. (28) takes both bodies' kinematics, as its WGSL twin does; a struct would differ from the shader"
)]
#[inline(always)]
pub fn hertz_contact(
    pm: &PairMaterial,
    g: ContactGeometry,
    n: DVec3,
    overlap: f64,
    lever_a: f64,
    lever_b: f64,
    a: &ContactSide,
    b: &ContactSide,
    spring: DVec3,
) -> ContactResult {
    contact_core(&HertzInputs {
        pm: *pm,
        g,
        n,
        overlap,
        lever_a,
        lever_b,
        relative_v: a.v - b.v,
        relative_dx: a.dx - b.dx,
        dalpha_a: a.dalpha,
        dalpha_b: b.dalpha,
        spring,
    })
}

/// What [`hertz_core`] reads of a contact: [`hertz_contact`]'s arguments with the two
/// sides reduced to the differences the law uses (`v_a − v_b`, `Δx_a − Δx_b`, computed
/// as [`hertz_contact`] computes them) and the two rotation increments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HertzInputs {
    /// Pair material.
    pub pm: PairMaterial,
    /// Effective radius and mass.
    pub g: ContactGeometry,
    /// Unit normal from `a` to `b`.
    pub n: DVec3,
    /// Overlap `δ > 0`.
    pub overlap: f64,
    /// Lever arm of `a`.
    pub lever_a: f64,
    /// Lever arm of `b`.
    pub lever_b: f64,
    /// `v_a − v_b`.
    pub relative_v: DVec3,
    /// `Δx_a − Δx_b`.
    pub relative_dx: DVec3,
    /// `Δα_a`.
    pub dalpha_a: DVec3,
    /// `Δα_b`.
    pub dalpha_b: DVec3,
    /// The stored spring.
    pub spring: DVec3,
}

/// [`hertz_contact`] without branches: both outcomes of every test are computed and
/// the one the test picks is kept, so a loop over many contacts compiles to SIMD
/// (the CPU backend's batched pair kernel). The operations and their order are those
/// of the branching form, so the result is the same to the bit (the unused outcome may
/// hold NaN or ∞, which is never selected).
#[inline(always)]
pub fn hertz_core(c: &HertzInputs) -> ContactResult {
    let (pm, n, overlap) = (&c.pm, c.n, c.overlap);
    let sqrt_rd = (c.g.r_star * overlap).sqrt();
    // Elastic Hertz: (4/3) E* √r* δ^{3/2} = (4/3) E* √(r*δ) δ.
    let f_el = (4.0 / 3.0) * pm.e_star * sqrt_rd * overlap;
    // Eq. (22): d* = 2ξ √(2 √r* E* m*) δ^{1/4} = 2ξ √(2 E* m* √(r*δ)).
    let damp = 2.0 * pm.xi * (2.0 * pm.e_star * c.g.m_star * sqrt_rd).sqrt();
    let approach = c.relative_v.dot(n);
    let f_n = (f_el + damp * approach).max(0.0);

    // carry_spring, both outcomes.
    let s = c.spring;
    let len2 = s.length_squared();
    let t = s - s.dot(n) * n;
    let tl2 = t.length_squared();
    let scaled = t * (len2 / tl2).sqrt();
    let carried = select3(len2 == 0.0, s, select3(tl2 == 0.0, DVec3::ZERO, scaled));

    let slip = c.relative_dx
        + rotate_minus_identity(c.dalpha_a, c.lever_a * n)
        + rotate_minus_identity(c.dalpha_b, c.lever_b * n);
    let ds = slip - slip.dot(n) * n;
    let trial = carried + ds;
    let k_t = 8.0 * pm.g_star * sqrt_rd;
    let trial_len = trial.length();
    let f_trial = k_t * trial_len;
    let stick = f_trial <= pm.mu_s * f_n;
    // Return mapping (eqs. 33–36): slide at μ_d f_n along the trial direction and keep
    // the spring that carries exactly that force.
    let tau = trial / trial_len;
    let f = pm.mu_d * f_n;
    let slide_spring = select3(k_t > 0.0, (f / k_t) * tau, DVec3::ZERO);
    let friction = select3(stick, -k_t * trial, -f * tau);
    let new_spring = select3(stick, trial, slide_spring);
    let energy = (8.0 / 15.0) * pm.e_star * sqrt_rd * overlap * overlap;
    ContactResult {
        force: -f_n * n + friction,
        friction,
        normal: n,
        overlap,
        energy,
        spring: new_spring,
        slipping: !stick,
        normal_force: f_n,
        contact_radius: sqrt_rd,
    }
}

/// The contact law of a pair: JKR ([`crate::physics::jkr::jkr_core`]) where the pair
/// has a surface energy, [`hertz_core`] otherwise; the branching form of the laws that
/// [`hertz_contact`] and the batched pair kernel under JKR call.
#[inline(always)]
pub fn contact_core(c: &HertzInputs) -> ContactResult {
    if c.pm.gamma > 0.0 {
        crate::physics::jkr::jkr_core(c)
    } else {
        hertz_core(c)
    }
}

/// `if c { a } else { b }` per component, written so that it compiles to a blend.
#[inline(always)]
fn select3(c: bool, a: DVec3, b: DVec3) -> DVec3 {
    DVec3::new(
        if c { a.x } else { b.x },
        if c { a.y } else { b.y },
        if c { a.z } else { b.z },
    )
}

/// Geometry of the pair `(a, b)`: `Some((n, δ))` with `n` from `a` to `b` when they
/// overlap, else `None`.
#[inline]
pub fn pair_overlap(xa: DVec3, xb: DVec3, ra: f64, rb: f64) -> Option<(DVec3, f64)> {
    let d = xb - xa;
    let dist2 = d.length_squared();
    let reach = ra + rb;
    if dist2 >= reach * reach || dist2.is_nan() || dist2 == 0.0 {
        return None;
    }
    let dist = dist2.sqrt();
    Some((d / dist, reach - dist))
}

/// Geometry of a particle against a wall: `Some((n, δ, ℓ))` with `n = −normal` (from the
/// particle to the plane), overlap `δ = r − h` and lever arm `ℓ = h` (the contact point
/// is on the plane) when `h < r`.
#[inline]
pub fn wall_overlap(wall: &Wall, x: DVec3, r: f64) -> Option<(DVec3, f64, f64)> {
    let h = wall.distance(x);
    if h >= r || h.is_nan() {
        return None;
    }
    Some((-wall.normal, r - h, h))
}

impl NearField {
    /// Potential of one exponent term `κ d^{−λ}` integrated from `d` to the cutoff, so
    /// that the force is its negative gradient and the energy is zero at the cutoff.
    fn term_energy(kappa: f64, lambda: f64, d: f64, cut: f64) -> f64 {
        // −∫_d^cut κ s^{−λ} ds, attractive sign convention handled by the caller.
        if (lambda - 1.0).abs() < 1e-12 {
            kappa * (cut / d).ln()
        } else {
            kappa * (cut.powf(1.0 - lambda) - d.powf(1.0 - lambda)) / (1.0 - lambda)
        }
    }

    /// `Some((U, f_i))` for centres closer than the cutoff: `f_i = (κ₁ d^{−λ₁} −
    /// κ₂ d^{−λ₂}) n_ij` with `n_ij` from `i` to `j` (eq. 17), and the potential
    /// `U(d) = ∫_d^{cut} (κ₁ s^{−λ₁} − κ₂ s^{−λ₂}) ds` whose gradient it is (the
    /// attractive part is positive along `n_ij`, so `U` is negative for pure attraction).
    pub fn pair(&self, xi: DVec3, xj: DVec3) -> Option<(f64, DVec3)> {
        let d = xj - xi;
        let dist = d.length();
        if dist >= self.cutoff || dist == 0.0 || dist.is_nan() {
            return None;
        }
        let n = d / dist;
        let mag = self.kappa_attractive * dist.powf(-self.lambda_attractive)
            - self.kappa_repulsive * dist.powf(-self.lambda_repulsive);
        let u = -Self::term_energy(
            self.kappa_attractive,
            self.lambda_attractive,
            dist,
            self.cutoff,
        ) + Self::term_energy(
            self.kappa_repulsive,
            self.lambda_repulsive,
            dist,
            self.cutoff,
        );
        Some((u, mag * n))
    }
}

impl Drag {
    /// `−c (v − v_fluid) + S Ω × v`.
    #[inline]
    pub fn force(&self, v: DVec3, omega: DVec3) -> DVec3 {
        -self.coefficient * (v - self.fluid_velocity) + self.magnus * omega.cross(v)
    }
}

/// The time-step estimate of Campello eq. (50) for a granular scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStepAdvice {
    /// Relative normal speed assumed for a typical collision (m/s).
    pub v_rel: f64,
    /// Shortest Hertz collision duration among the scene's material pairs and walls,
    /// for its smallest particles (s).
    pub collision_duration: f64,
    /// Recommended largest time step, `collision_duration / 20` (s).
    pub dt_max: f64,
}

/// Eq. (50) for `model` under the Hertz law (`None` otherwise, or without particles).
///
/// The relative speed is the larger of twice the fastest particle's speed (a head-on
/// collision of two such) and the fastest speed plus the speed of a fall from the
/// highest particle onto a wall facing the field (or down to a mesh's lowest point),
/// `√(2|g|H)`. The duration is taken for the smallest particle of each material,
/// against each material and each wall and mesh:
/// `t ∝ (m*²/r*)^{1/5} ∝ r`, so small particles collide fastest. A clump's spheres
/// count with their body's mass and the speed bound `|v| + |Ω| reach` (issue 24). An
/// inserter's spheres count with their insertion velocity, from the highest point of
/// its region. A moving wall or mesh adds its fastest surface speed to the relative
/// speed: `|v| + |ω| d`, `d` the distance from its axis point to the farthest sphere
/// centre (a plane) or vertex (a mesh), as it stands at `t = 0`.
pub fn time_step_advice(model: &crate::model::Model) -> Option<TimeStepAdvice> {
    time_step_advice_at(model, None)
}

/// [`time_step_advice`] at the relative impact speed `v_rel` when given (`[simulation]
/// auto_dt_velocity`), the scene's estimate otherwise.
pub fn time_step_advice_at(
    model: &crate::model::Model,
    v_rel: Option<f64>,
) -> Option<TimeStepAdvice> {
    use crate::model::ContactLaw;
    if !matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz)) {
        return None;
    }
    let p = &model.particles;
    // Every sphere: (centre, radius, mass, material, speed).
    // (An inserter's reserved particles wait elsewhere: its spheres are added below.)
    let mut spheres: Vec<(DVec3, f64, f64, u32, f64)> = (0..p.len())
        .filter(|&i| !crate::model::is_dormant(p.flags[i]))
        .map(|i| {
            let material = p.material.get(i).copied().unwrap_or(0);
            (
                p.position[i],
                p.radius[i],
                p.mass[i],
                material,
                p.velocity[i].length(),
            )
        })
        .collect();
    // An inserter's spheres: its smallest (which collides fastest), at the region's
    // highest corner (against the field), with its velocity.
    for ins in &model.inserters {
        let (lo, hi) = ins.region.bounds(0.0);
        let up = -model.gravity;
        let top = DVec3::select(up.cmpge(DVec3::ZERO), hi, lo);
        // A clump inserter: each sphere of its type, with the body's mass (as the
        // clumps' below; its reserved clumps wait at rest and are not counted there).
        if let Some(t) = ins.clump.and_then(|k| model.clump_types.get(k as usize)) {
            for sphere in &t.spheres {
                spheres.push((
                    top,
                    sphere.radius,
                    t.mass,
                    t.material,
                    ins.velocity.length(),
                ));
            }
            continue;
        }
        let r = ins.radius * (1.0 - ins.radius_jitter);
        let mass = ins.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        spheres.push((top, r, mass, ins.material, ins.velocity.length()));
    }
    for (k, c) in model.clumps.iter().enumerate() {
        if model.reserved_clump(k) {
            continue;
        }
        let t = &model.clump_types[c.kind as usize];
        let speed = c.velocity.length() + c.angular_velocity.length() * t.reach();
        for (x, s) in c.sphere_centres(t).zip(&t.spheres) {
            spheres.push((x, s.radius, t.mass, t.material, speed));
        }
    }
    let v_max = spheres.iter().map(|s| s.4).fold(0.0, f64::max);
    let g = model.gravity.length();
    let mut fall: f64 = 0.0;
    if g > 0.0 {
        let down = model.gravity / g;
        for w in model.walls.iter().filter(|w| w.normal.dot(down) < 0.0) {
            for &(x, r, ..) in &spheres {
                let h = (w.distance(x) - r).max(0.0) * (-w.normal.dot(down));
                fall = fall.max(h);
            }
        }
        // A mesh: a fall down to its lowest point (a bound: the sphere may land higher).
        for m in &model.meshes {
            let low = m
                .mesh
                .vertices
                .iter()
                .map(|v| v.dot(down))
                .fold(f64::NEG_INFINITY, f64::max);
            for &(x, r, ..) in &spheres {
                fall = fall.max((low - x.dot(down) - r).max(0.0));
            }
        }
    }
    // The fastest surface of a moving wall or mesh (at its speed while it moves).
    let reach = |axis: DVec3, points: &mut dyn Iterator<Item = DVec3>| {
        points.map(|x| (x - axis).length()).fold(0.0, f64::max)
    };
    let plane_speeds = model.walls.iter().map(|w| {
        let m = &w.motion;
        let d = reach(m.axis_point, &mut spheres.iter().map(|s| s.0));
        m.velocity.length() + m.angular_velocity.length() * d
    });
    let mesh_speeds = model.meshes.iter().map(|w| {
        let m = &w.motion;
        let d = reach(m.axis_point, &mut w.mesh.vertices.iter().copied());
        m.velocity.length() + m.angular_velocity.length() * d
    });
    let v_wall = plane_speeds.chain(mesh_speeds).fold(0.0, f64::max);
    let v_rel = v_rel.unwrap_or((2.0 * v_max).max(v_max + (2.0 * g * fall).sqrt()) + v_wall);
    if v_rel.is_nan() || v_rel <= 0.0 || spheres.is_empty() {
        return None;
    }
    // Smallest particle (radius, mass) of each material.
    let nm = model.materials.len().max(1);
    let mut smallest: Vec<Option<(f64, f64)>> = vec![None; nm];
    for &(_, r, m, material, _) in &spheres {
        let k = (material as usize).min(nm - 1);
        if smallest[k].map_or(true, |(q, _)| r < q) {
            smallest[k] = Some((r, m));
        }
    }
    let mut t_min = f64::INFINITY;
    for (a, sa) in smallest.iter().enumerate() {
        let Some((ra, ma)) = *sa else { continue };
        let Some(mat_a) = model.materials.get(a) else {
            continue;
        };
        for (b, sb) in smallest.iter().enumerate() {
            let Some((rb, mb)) = *sb else { continue };
            let mat_b = &model.materials[b];
            let pm = PairMaterial::new(mat_a, Some(mat_b));
            let t = collision_duration(ma * mb / (ma + mb), ra * rb / (ra + rb), pm.e_star, v_rel);
            t_min = t_min.min(t);
        }
        let walls = model.walls.iter().map(|w| w.material);
        for material in walls.chain(model.meshes.iter().map(|m| m.material)) {
            let pm = PairMaterial::new(mat_a, material.map(|k| &model.materials[k as usize]));
            t_min = t_min.min(collision_duration(ma, ra, pm.e_star, v_rel));
        }
    }
    t_min.is_finite().then_some(TimeStepAdvice {
        v_rel,
        collision_duration: t_min,
        dt_max: t_min / 20.0,
    })
}
