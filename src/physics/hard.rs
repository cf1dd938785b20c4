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

// ---------------------------------------------------------------------------------------
// Small complex arithmetic (only what the quartic needs).

#[derive(Debug, Clone, Copy, PartialEq)]
struct Cx {
    re: f64,
    im: f64,
}

impl Cx {
    const ZERO: Cx = Cx { re: 0.0, im: 0.0 };
    const ONE: Cx = Cx { re: 1.0, im: 0.0 };
    fn new(re: f64, im: f64) -> Cx {
        Cx { re, im }
    }
    fn polar(r: f64, phi: f64) -> Cx {
        Cx::new(r * phi.cos(), r * phi.sin())
    }
    fn add(self, o: Cx) -> Cx {
        Cx::new(self.re + o.re, self.im + o.im)
    }
    fn sub(self, o: Cx) -> Cx {
        Cx::new(self.re - o.re, self.im - o.im)
    }
    fn mul(self, o: Cx) -> Cx {
        Cx::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
    fn scale(self, s: f64) -> Cx {
        Cx::new(self.re * s, self.im * s)
    }
    fn conj(self) -> Cx {
        Cx::new(self.re, -self.im)
    }
    fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    fn arg(self) -> f64 {
        self.im.atan2(self.re)
    }
    fn div(self, o: Cx) -> Cx {
        // Smith's algorithm: no overflow for large |o|.
        if o.re.abs() >= o.im.abs() {
            let r = o.im / o.re;
            let d = o.re + o.im * r;
            Cx::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
        } else {
            let r = o.re / o.im;
            let d = o.re * r + o.im;
            Cx::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
        }
    }
    fn sqrt(self) -> Cx {
        let r = self.abs();
        if r == 0.0 {
            return Cx::ZERO;
        }
        let re = ((r + self.re.abs()) * 0.5).sqrt();
        if self.re >= 0.0 {
            Cx::new(re, self.im / (2.0 * re))
        } else {
            Cx::new(self.im.abs() / (2.0 * re), re.copysign(self.im))
        }
    }
}

/// Value and derivative of the polynomial `Σ p[k] z^(n−k)` (highest degree first).
fn horner(p: &[Cx], z: Cx) -> (Cx, Cx) {
    let mut v = Cx::ZERO;
    let mut d = Cx::ZERO;
    for &c in p {
        d = d.mul(z).add(v);
        v = v.mul(z).add(c);
    }
    (v, d)
}

/// All complex roots of a polynomial of degree ≤ 4 (coefficients highest degree first,
/// leading coefficient non-zero): closed form for degree ≤ 2, Aberth–Ehrlich iteration
/// otherwise, each root polished by Newton on the original polynomial.
fn poly_roots(p: &[Cx]) -> Vec<Cx> {
    let n = p.len().saturating_sub(1);
    match n {
        0 => Vec::new(),
        1 => vec![p[1].div(p[0]).scale(-1.0)],
        2 => {
            // Stable quadratic formula: q = −(b + sign·√(b² − 4ac))/2, roots q/a and c/q.
            let (a, b, c) = (p[0], p[1], p[2]);
            let disc = b.mul(b).sub(a.mul(c).scale(4.0)).sqrt();
            let s = if b.re * disc.re + b.im * disc.im >= 0.0 {
                b.add(disc)
            } else {
                b.sub(disc)
            };
            let q = s.scale(-0.5);
            if q.abs() == 0.0 {
                vec![Cx::ZERO, Cx::ZERO]
            } else {
                vec![q.div(a), c.div(q)]
            }
        }
        _ => {
            // Aberth–Ehrlich: simultaneous Newton with repulsion, cubically convergent.
            let lead = p[0];
            let monic: Vec<Cx> = p.iter().map(|&c| c.div(lead)).collect();
            // Initial radius: geometric mean of the root moduli |a_n|^{1/n}, kept ≥ tiny.
            let r0 = monic[n].abs().powf(1.0 / n as f64);
            let r0 = if r0.is_finite() && r0 > 1e-300 {
                r0
            } else {
                1.0
            };
            let mut z: Vec<Cx> = (0..n)
                .map(|k| {
                    Cx::polar(
                        r0 * (1.0 + 0.01 * k as f64),
                        0.4 + std::f64::consts::TAU * k as f64 / n as f64,
                    )
                })
                .collect();
            for _ in 0..200 {
                let mut worst: f64 = 0.0;
                for k in 0..n {
                    let (v, d) = horner(&monic, z[k]);
                    if v.abs() == 0.0 {
                        continue;
                    }
                    let w = v.div(d);
                    let mut s = Cx::ZERO;
                    for j in 0..n {
                        if j != k {
                            let diff = z[k].sub(z[j]);
                            if diff.abs() > 0.0 {
                                s = s.add(Cx::ONE.div(diff));
                            }
                        }
                    }
                    let den = Cx::ONE.sub(w.mul(s));
                    let step = if den.abs() > 0.0 { w.div(den) } else { w };
                    if step.re.is_finite() && step.im.is_finite() {
                        z[k] = z[k].sub(step);
                        worst = worst.max(step.abs() / z[k].abs().max(1e-300));
                    }
                }
                if worst <= 1e-15 {
                    break;
                }
            }
            for zk in z.iter_mut() {
                for _ in 0..3 {
                    let (v, d) = horner(&monic, *zk);
                    if d.abs() == 0.0 {
                        break;
                    }
                    let step = v.div(d);
                    if !(step.re.is_finite() && step.im.is_finite())
                        || step.abs() > 1e-3 * zk.abs().max(1e-300)
                    {
                        break;
                    }
                    *zk = zk.sub(step);
                }
            }
            z
        }
    }
}

/// A trigonometric polynomial of degree 2 in the form of eq. (8):
/// `g(α) = c₀ + Re(C₁ e^{iα}) + Re(C₂ e^{2iα}) = c₀ + c₁cos(α + φ₁) + c₂cos(2α + φ₂)`.
#[derive(Debug, Clone, Copy)]
struct Trig2 {
    c0: f64,
    c1: Cx,
    c2: Cx,
}

impl Trig2 {
    fn eval(&self, al: f64) -> (f64, f64) {
        let e1 = Cx::polar(1.0, al);
        let e2 = Cx::polar(1.0, 2.0 * al);
        let p1 = self.c1.mul(e1);
        let p2 = self.c2.mul(e2);
        (self.c0 + p1.re + p2.re, -p1.im - 2.0 * p2.im)
    }

    /// Candidate roots of `g` in `α`: the arguments of the roots of the quartic
    /// `C₂y⁴ + C₁y³ + 2c₀y² + C̄₁y + C̄₂ = 0` (`y = e^{iα}`, eq. (8) times `2y²`), with the
    /// degenerate degrees handled (vanishing `C₂`, then `C₁`), each polished by Newton on
    /// `g(α)`. Roots off the unit circle yield spurious angles; callers rank candidates by
    /// the objective, so spurious angles are harmless and near-double roots are not lost.
    fn root_angles(&self) -> Vec<f64> {
        let scale = self.c0.abs().max(self.c1.abs()).max(self.c2.abs());
        if scale == 0.0 || !scale.is_finite() {
            return Vec::new();
        }
        let tiny = 1e-14 * scale;
        let c0 = Cx::new(2.0 * self.c0, 0.0);
        let roots = if self.c2.abs() > tiny {
            poly_roots(&[self.c2, self.c1, c0, self.c1.conj(), self.c2.conj()])
        } else if self.c1.abs() > tiny {
            // C₂ ≈ 0 (e.g. sphere blocks diag(a, c, c)): y = 0 is a spurious root; divide it out.
            poly_roots(&[self.c1, c0, self.c1.conj()])
        } else {
            // g ≈ c₀ constant: no isolated roots.
            Vec::new()
        };
        let mut out = Vec::with_capacity(2 * roots.len());
        for r in roots {
            if !(r.re.is_finite() && r.im.is_finite()) || r.abs() == 0.0 {
                continue;
            }
            let a0 = r.arg();
            out.push(a0);
            // Newton polish on g(α) itself (rounding of the quartic's roots is removed here).
            let mut al = a0;
            let (mut gv, _) = self.eval(al);
            for _ in 0..30 {
                let (g, dg) = self.eval(al);
                if dg == 0.0 || !dg.is_finite() {
                    break;
                }
                let step = g / dg;
                if !step.is_finite() || step.abs() > 0.5 {
                    break;
                }
                al -= step;
                gv = g;
                if step.abs() <= 1e-16 * al.abs().max(1.0) {
                    break;
                }
            }
            let (gp, _) = self.eval(al);
            if gp.abs() <= gv.abs() || gp.abs() < 1e-12 * scale {
                out.push(al);
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Problem preparation: validation, symmetrisation, scaling, Schur complement.

/// A validated, scaled problem (`|A_ij| ≤ 1`, `|b_i| ≤ 1`); the true impulse is
/// `x_scaled · x_scale`.
struct Prep {
    a: M3,
    b: V3,
    mu: f64,
    x_scale: f64,
    /// Schur complement `Â` (§3.2) of `A_nn` in `A`: `[[tt, to], [to, oo]]`.
    ah: [f64; 3],
    /// `b̂ = b_to − A_nn⁻¹ (A_nt, A_no) b_n`.
    bh: [f64; 2],
}

impl Prep {
    fn new(a: M3, b: V3, mu: f64) -> Option<Prep> {
        if !mu.is_finite() || mu < 0.0 {
            return None;
        }
        let mut s: M3 = [[0.0; 3]; 3];
        let mut sa: f64 = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                s[i][j] = 0.5 * a[i][j] + 0.5 * a[j][i];
                if !s[i][j].is_finite() {
                    return None;
                }
                sa = sa.max(s[i][j].abs());
            }
        }
        let mut sb: f64 = 0.0;
        for &v in &b {
            if !v.is_finite() {
                return None;
            }
            sb = sb.max(v.abs());
        }
        if sa == 0.0 {
            return None;
        }
        let sb = if sb == 0.0 { 1.0 } else { sb };
        for row in s.iter_mut() {
            for v in row.iter_mut() {
                *v /= sa;
            }
        }
        let b = [b[0] / sb, b[1] / sb, b[2] / sb];
        let ann = s[0][0];
        if ann <= 0.0 {
            return None;
        }
        let (ant, ano) = (s[0][1], s[0][2]);
        let ah = [
            s[1][1] - ant * ant / ann,
            s[1][2] - ant * ano / ann,
            s[2][2] - ano * ano / ann,
        ];
        let det = ah[0] * ah[2] - ah[1] * ah[1];
        if ah[0] <= 0.0 || ah[2] <= 0.0 || det <= 0.0 || !det.is_finite() {
            return None;
        }
        let bh = [b[1] - ant * b[0] / ann, b[2] - ano * b[0] / ann];
        Some(Prep {
            a: s,
            b,
            mu,
            x_scale: sb / sa,
            ah,
            bh,
        })
    }

    fn ann(&self) -> f64 {
        self.a[0][0]
    }
    fn c(&self) -> [f64; 2] {
        [self.a[0][1], self.a[0][2]]
    }

    /// Reduced objective `½ yᵀÂy − yᵀb̂` on the plane of maximum compression (§3.2).
    fn reduced_obj(&self, y: [f64; 2]) -> f64 {
        let ay = [
            self.ah[0] * y[0] + self.ah[1] * y[1],
            self.ah[1] * y[0] + self.ah[2] * y[1],
        ];
        0.5 * (y[0] * ay[0] + y[1] * ay[1]) - (y[0] * self.bh[0] + y[1] * self.bh[1])
    }

    /// Lift a tangential impulse on the plane of maximum compression to 3-D (§3.2):
    /// `x_n = A_nn⁻¹(b_n − A_nt x_t − A_no x_o)`.
    fn lift(&self, y: [f64; 2]) -> V3 {
        let c = self.c();
        [
            (self.b[0] - c[0] * y[0] - c[1] * y[1]) / self.ann(),
            y[0],
            y[1],
        ]
    }

    /// Unconstrained minimiser `x₀ = A⁻¹b` via the Schur complement.
    fn x0(&self) -> V3 {
        let det = self.ah[0] * self.ah[2] - self.ah[1] * self.ah[1];
        let y = [
            (self.ah[2] * self.bh[0] - self.ah[1] * self.bh[1]) / det,
            (self.ah[0] * self.bh[1] - self.ah[1] * self.bh[0]) / det,
        ];
        self.lift(y)
    }

    fn in_cone(&self, x: V3) -> bool {
        x[0] >= 0.0 && x[1].hypot(x[2]) <= self.mu * x[0]
    }

    fn unscale(&self, x: V3) -> V3 {
        [
            x[0] * self.x_scale,
            x[1] * self.x_scale,
            x[2] * self.x_scale,
        ]
    }

    /// Appendix A coefficients of eq. (8) for the scaled problem.
    fn appendix_a(&self) -> Trig2 {
        let (ann, ant, ano) = (self.a[0][0], self.a[0][1], self.a[0][2]);
        let (att, ato, aoo) = (self.a[1][1], self.a[1][2], self.a[2][2]);
        let (bn, bt, bo) = (self.b[0], self.b[1], self.b[2]);
        let mu = self.mu;
        let mu2 = mu * mu;
        let c0 = 1.5 * mu * ann * (ano * bt - ant * bo);
        // φ₁ = atan2(Y₁, X₁): c₁ e^{iφ₁} = X₁ + iY₁ (the printed c₁ is |X₁ + iY₁|).
        let y1 = mu2 * ((ano * ato - ant * aoo) * bn - ano * ano * bt + ant * ano * bo)
            - ann * ann * bt
            + ann * ant * bn;
        let x1 = mu2 * ((ant * ato - ano * att) * bn + ant * ano * bt - ant * ant * bo)
            - ann * ann * bo
            + ann * ano * bn;
        // φ₂ = atan2(Y₂, X₂): c₂ e^{iφ₂} = μ A_nn (X₂ + iY₂) / 2.
        let y2 = (att - aoo) * bn - ant * bt + ano * bo;
        let x2 = 2.0 * ato * bn - ano * bt - ant * bo;
        Trig2 {
            c0,
            c1: Cx::new(x1, y1),
            c2: Cx::new(x2, y2).scale(0.5 * mu * ann),
        }
    }
}

/// Solve the 3×3 system `m z = r` by Gaussian elimination with partial pivoting.
fn solve3(m: M3, r: V3) -> Option<V3> {
    let mut a = [[0.0; 4]; 3];
    for i in 0..3 {
        a[i][..3].copy_from_slice(&m[i]);
        a[i][3] = r[i];
    }
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        a.swap(col, piv);
        if a[col][col] == 0.0 || !a[col][col].is_finite() {
            return None;
        }
        let pivot = a[col];
        for row in a.iter_mut().skip(col + 1) {
            let f = row[col] / pivot[col];
            for (dst, src) in row[col..].iter_mut().zip(&pivot[col..]) {
                *dst -= f * src;
            }
        }
    }
    let mut z = [0.0; 3];
    for i in (0..3).rev() {
        let mut acc = a[i][3];
        for k in i + 1..3 {
            acc -= a[i][k] * z[k];
        }
        z[i] = acc / a[i][i];
    }
    z.iter().all(|v| v.is_finite()).then_some(z)
}

/// Newton polish of a 3-unknown system: `sys(z)` returns the residual, its Jacobian and
/// a scaled residual norm. A step is kept only if it at least halves the scaled norm, so
/// the result is never worse than the start and rounding noise at the floor (where the
/// Jacobian may be ill-conditioned, e.g. a tiny slip velocity) does not move the point.
fn newton_polish(mut z: V3, sys: impl Fn(V3) -> Option<(V3, M3, f64)>) -> V3 {
    let Some((mut r, mut j, mut norm)) = sys(z) else {
        return z;
    };
    for _ in 0..12 {
        if norm == 0.0 {
            break;
        }
        let Some(d) = solve3(j, [-r[0], -r[1], -r[2]]) else {
            break;
        };
        let zn = [z[0] + d[0], z[1] + d[1], z[2] + d[2]];
        match sys(zn) {
            Some((rn, jn, nn)) if nn < 0.5 * norm => {
                z = zn;
                (r, j, norm) = (rn, jn, nn);
            }
            _ => break,
        }
    }
    z
}

// ---------------------------------------------------------------------------------------
// Maximum dissipation.

/// The unit boundary directions of the wedge of the degenerate hyperbola (`b_n = 0`,
/// `A_nn ≤ μ‖c‖`, `c = (A_nt, A_no)`): `α₀ ∓ Δα` of eq. (6)/(9). They make the angle
/// `acos(A_nn / (μ‖c‖))` with `−c`.
fn wedge_edges(p: &Prep) -> [[f64; 2]; 2] {
    let c = p.c();
    let nc = c[0].hypot(c[1]);
    let u = [-c[0] / nc, -c[1] / nc]; // −ĉ: the degenerate parabola's ray (corrected sign)
    let ju = [-u[1], u[0]];
    let cb = (p.ann() / (p.mu * nc)).min(1.0);
    let sb = (1.0 - cb * cb).max(0.0).sqrt();
    [
        [cb * u[0] - sb * ju[0], cb * u[1] - sb * ju[1]],
        [cb * u[0] + sb * ju[0], cb * u[1] + sb * ju[1]],
    ]
}

/// Minimiser of the reduced objective along the ray `r e`, `r ≥ 0` (eq. (9)).
fn ray_min(p: &Prep, e: [f64; 2]) -> ([f64; 2], f64) {
    let ae = [
        p.ah[0] * e[0] + p.ah[1] * e[1],
        p.ah[1] * e[0] + p.ah[2] * e[1],
    ];
    let q = e[0] * ae[0] + e[1] * ae[1];
    let r = ((e[0] * p.bh[0] + e[1] * p.bh[1]) / q).max(0.0);
    let y = [r * e[0], r * e[1]];
    (y, p.reduced_obj(y))
}

/// The `b_n = 0`, `x₀ ∉ cone` branch: `0` under `P2`, else the better of the two edges.
fn grazing(p: &Prep) -> V3 {
    let c = p.c();
    let nc = c[0].hypot(c[1]);
    if p.ann() > p.mu * nc {
        // P2: degenerate ellipse, the conic section is the single point 0.
        return [0.0; 3];
    }
    // Degenerate parabola / hyperbola: minimise along both edges, keep the lower
    // objective (the printed eq. (9) side test is not the A-metric projection).
    let [e1, e2] = wedge_edges(p);
    let (y1, f1) = ray_min(p, e1);
    let (y2, f2) = ray_min(p, e2);
    p.lift(if f2 < f1 { y2 } else { y1 })
}

/// The dynamic branch (`b_n > 0`, `μ > 0`, `x₀ ∉ cone`): minimise
/// `f_obj(α) = ½γᵀÂγ − γᵀb̂` along the conic section's boundary
/// `γ(α) = r̄(α)(cos α, sin α)`, `r̄ = μ b_n / f_r(α)`, `f_r = A_nn + μ(A_nt cos α + A_no sin α)`,
/// over the stationary points of eq. (7), i.e. the roots of eq. (8); the best root is then
/// refined in Cartesian coordinates by [`kkt_polish`].
fn sliding(p: &Prep) -> V3 {
    let c = p.c();
    let (mu, bn, ann) = (p.mu, p.b[0], p.ann());
    let point = |al: f64| -> Option<([f64; 2], f64)> {
        let (s, co) = al.sin_cos();
        let fr = ann + mu * (c[0] * co + c[1] * s);
        if fr <= 0.0 {
            return None; // α ∉ 𝓘 (eq. (6)): the other branch of the hyperbola
        }
        let r = mu * bn / fr;
        let y = [r * co, r * s];
        let f = p.reduced_obj(y);
        f.is_finite().then_some((y, f))
    };
    let pick = |angles: &mut dyn Iterator<Item = f64>| -> Option<([f64; 2], f64)> {
        let mut best: Option<([f64; 2], f64)> = None;
        for (y, f) in angles.filter_map(point) {
            if best.map_or(true, |(_, fb)| f < fb) {
                best = Some((y, f));
            }
        }
        best
    };
    let best = pick(&mut p.appendix_a().root_angles().into_iter()).or_else(|| {
        // g ≡ 0 or no valid root: a coarse scan. Reached in the tests only by garbage input
        // of extreme magnitudes (never by the random SPD / Delassus problems).
        pick(&mut (0..256).map(|k| std::f64::consts::TAU * k as f64 / 256.0))
    });
    match best {
        Some((y, _)) => p.lift(kkt_polish(p, y)),
        None => [0.0; 3],
    }
}

/// Cartesian Newton polish of the KKT system of the dynamic branch,
/// `Ây − b̂ + λ(ŷ + k) = 0`, `‖y‖ + kᵀy = m` (`k = μ(A_nt, A_no)/A_nn`, `m = μb_n/A_nn`).
///
/// Near an asymptote of a hyperbolic conic section (`f_r(α) → 0`) the angle α is an
/// ill-conditioned coordinate: a rounding of α moves `y = r̄(α)e(α)` by `ε·μ‖c‖/f_r` relative.
/// The root of eq. (8) is therefore refined in `(y, λ)`, where the problem is well conditioned.
fn kkt_polish(p: &Prep, y: [f64; 2]) -> [f64; 2] {
    let c = p.c();
    let ann = p.ann();
    let k = [p.mu * c[0] / ann, p.mu * c[1] / ann];
    let m = p.mu * p.b[0] / ann;
    let ah = p.ah;
    let bh = p.bh;
    let grad = |y: [f64; 2]| {
        [
            ah[0] * y[0] + ah[1] * y[1] - bh[0],
            ah[1] * y[0] + ah[2] * y[1] - bh[1],
        ]
    };
    let r0 = y[0].hypot(y[1]);
    if r0 == 0.0 {
        return y;
    }
    let nc0 = [y[0] / r0 + k[0], y[1] / r0 + k[1]];
    let g0 = grad(y);
    let lam0 = -(g0[0] * nc0[0] + g0[1] * nc0[1]) / (nc0[0] * nc0[0] + nc0[1] * nc0[1]);
    let anorm = ah[0].abs() + ah[1].abs() + ah[2].abs();
    let sys = |z: V3| -> Option<(V3, M3, f64)> {
        let (y, lam) = ([z[0], z[1]], z[2]);
        let r = y[0].hypot(y[1]);
        if r == 0.0 || !r.is_finite() || lam.is_nan() || lam < 0.0 {
            return None;
        }
        let e = [y[0] / r, y[1] / r];
        let nc = [e[0] + k[0], e[1] + k[1]];
        let g = grad(y);
        let res = [
            g[0] + lam * nc[0],
            g[1] + lam * nc[1],
            r + k[0] * y[0] + k[1] * y[1] - m,
        ];
        let s = lam / r;
        let jac = [
            [
                ah[0] + s * (1.0 - e[0] * e[0]),
                ah[1] - s * e[0] * e[1],
                nc[0],
            ],
            [
                ah[1] - s * e[0] * e[1],
                ah[2] + s * (1.0 - e[1] * e[1]),
                nc[1],
            ],
            [nc[0], nc[1], 0.0],
        ];
        let s1 = anorm * r + bh[0].abs() + bh[1].abs() + lam * (nc[0].abs() + nc[1].abs());
        let s2 = r + (k[0] * y[0]).abs() + (k[1] * y[1]).abs() + m;
        let norm = (res[0].abs() + res[1].abs()) / s1 + res[2].abs() / s2;
        norm.is_finite().then_some((res, jac, norm))
    };
    if lam0.is_nan() || lam0 < 0.0 {
        return y;
    }
    let z = newton_polish([y[0], y[1], lam0], sys);
    [z[0], z[1]]
}

fn solve_prepared(p: &Prep) -> (V3, ContactCase) {
    let bn = p.b[0];
    if bn < 0.0 {
        return ([0.0; 3], ContactCase::Separating);
    }
    if p.mu == 0.0 {
        return ([bn / p.ann(), 0.0, 0.0], ContactCase::Frictionless);
    }
    // P1 before the b_n = 0 branch (NOTES; otherwise the §4.2 paradox yields 0).
    let x0 = p.x0();
    if p.in_cone(x0) {
        return (x0, ContactCase::Sticking);
    }
    if bn == 0.0 {
        return (grazing(p), ContactCase::Grazing);
    }
    (sliding(p), ContactCase::Sliding)
}

/// Maximum-dissipation impulse and the branch of Fig. 5 that produced it.
///
/// See [`solve_contact`]. Invalid input (non-finite values, `μ < 0`, `A` not positive
/// definite) yields `([0, 0, 0], ContactCase::Separating)`.
pub fn solve_contact_case(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> ([f64; 3], ContactCase) {
    match Prep::new(a, b, mu) {
        Some(p) => {
            let (x, case) = solve_prepared(&p);
            (p.unscale(x), case)
        }
        None => ([0.0; 3], ContactCase::Separating),
    }
}

/// Maximum-dissipation single-contact impulse (Preclik, Eibl & Rüde, eq. (5), Fig. 5).
///
/// Branches, in order: `b_n < 0` → `0`; `μ = 0` → `(b_n/A_nn, 0, 0)`; `P1` (`x₀ = A⁻¹b` in
/// the cone) → `x₀`; `b_n = 0` → `0` under `P2`, else the better edge of eq. (9); otherwise
/// the boundary minimiser from the quartic of Appendix A. The impulse is exact to rounding
/// (see `docs/hard-contacts.md` for the measured errors). `A` is read as `½(A + Aᵀ)`;
/// invalid input returns `[0, 0, 0]`.
pub fn solve_contact(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> [f64; 3] {
    solve_contact_case(a, b, mu).0
}

/// The literal printed eq. (9) for the `b_n = 0` wedge (edge `α₀ − Δα` iff
/// `(A_no, −A_nt)ᵀx₀,to ≥ 0`, else `α₀ + Δα`), for comparison with the corrected rule.
///
/// Returns `None` unless the problem is in that branch (valid input, `μ > 0`, `b_n = 0`,
/// `x₀` outside the cone, `A_nn ≤ μ‖(A_nt, A_no)‖`). Not used by the solvers.
pub fn grazing_printed_edge_rule(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> Option<[f64; 3]> {
    let p = Prep::new(a, b, mu)?;
    let c = p.c();
    let x0 = p.x0();
    if p.mu == 0.0 || p.b[0] != 0.0 || p.in_cone(x0) || p.ann() > p.mu * c[0].hypot(c[1]) {
        return None;
    }
    // α₀ = atan2(A_no, A_nt), Δα = acos(−A_nn / (μ‖c‖)) (eq. (6)).
    let al0 = c[1].atan2(c[0]);
    let dal = (-p.ann() / (p.mu * c[0].hypot(c[1])))
        .clamp(-1.0, 1.0)
        .acos();
    let al = if c[1] * x0[1] - c[0] * x0[2] >= 0.0 {
        al0 - dal
    } else {
        al0 + dal
    };
    let (y, _) = ray_min(&p, [al.cos(), al.sin()]);
    Some(p.unscale(p.lift(y)))
}

/// The trigonometric coefficients of eq. (8) from Appendix A, for the problem as given
/// (no scaling): `[c₀, X₁, Y₁, Re C₂, Im C₂]` with `c₁e^{iφ₁} = X₁ + iY₁` and
/// `C₂ = c₂e^{iφ₂} = μA_nn(X₂ + iY₂)/2`, so that
/// `g(α) = c₀ + X₁cos α − Y₁sin α + Re C₂ cos 2α − Im C₂ sin 2α`
/// has the sign of `f_obj′(α)` wherever `f_r(α) > 0` and `b_n > 0`. Exposed for tests.
pub fn appendix_a_coefficients(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> [f64; 5] {
    let p = Prep {
        a,
        b,
        mu,
        x_scale: 1.0,
        ah: [0.0; 3],
        bh: [0.0; 2],
    };
    let t = p.appendix_a();
    [t.c0, t.c1.re, t.c1.im, t.c2.re, t.c2.im]
}

// ---------------------------------------------------------------------------------------
// Coulomb (De Saxcé–Feng) variant.

/// Coulomb sliding solutions `x = x_n (1, −μ cos θ, −μ sin θ)`, `u_n = 0`,
/// `u_to = s (cos θ, sin θ)` with `s > 0`, `x_n = b_n / (A_nn − μ cᵀe) > 0`: the
/// parallelism `e⊥ᵀu_to = 0`, multiplied by `A_nn − μcᵀe`, is again a degree-2
/// trigonometric polynomial (the polynomial approach of Bonnefon et al. cited in §4.1),
/// solved with the same quartic machinery.
fn coulomb_sliding(p: &Prep) -> Vec<V3> {
    let (ann, ant, ano) = (p.a[0][0], p.a[0][1], p.a[0][2]);
    let (att, ato, aoo) = (p.a[1][1], p.a[1][2], p.a[2][2]);
    let (bn, bt, bo) = (p.b[0], p.b[1], p.b[2]);
    let mu = p.mu;
    if mu == 0.0 || bn == 0.0 {
        return Vec::new();
    }
    // h(θ) = b_n e⊥ᵀ(c − μA₂e) − (A_nn − μcᵀe) e⊥ᵀb_to, e = (cos θ, sin θ), e⊥ = (−sin θ, cos θ).
    let k0 = 0.5 * mu * (ant * bo - ano * bt);
    let k1c = bn * ano - ann * bo;
    let k1s = -bn * ant + ann * bt;
    let k2c = -mu * bn * ato + 0.5 * mu * (ant * bo + ano * bt);
    let k2s = -0.5 * mu * bn * (aoo - att) + 0.5 * mu * (ano * bo - ant * bt);
    let h = Trig2 {
        c0: k0,
        c1: Cx::new(k1c, -k1s),
        c2: Cx::new(k2c, -k2s),
    };
    let mut sols: Vec<(f64, V3)> = Vec::new();
    for th in h.root_angles() {
        let (s, co) = th.sin_cos();
        let d = ann - mu * (ant * co + ano * s);
        let xn = bn / d;
        if !(xn > 0.0 && xn.is_finite()) {
            continue;
        }
        let raw = [xn, -mu * xn * co, -mu * xn * s];
        // Keep the polished impulse if it is still a genuine sliding solution (on the cone,
        // u_to ≠ 0 along e); Newton could otherwise drift towards u = 0.
        let valid = |x: &V3| {
            let u = residual_velocity(&p.a, &p.b, x);
            let r = x[1].hypot(x[2]);
            let an = p.a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            let scale = an * (x[0].abs() + r) + p.b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let along = -(u[1] * x[1] + u[2] * x[2]) / r;
            let across = (u[1] * x[2] - u[2] * x[1]) / r;
            x[0] > 0.0
                && (r - mu * x[0]).abs() <= 1e-9 * r
                && along > 0.0
                && across.abs() <= 1e-8 * scale
        };
        let polished = coulomb_polish(p, raw);
        let x = if valid(&polished) {
            polished
        } else if valid(&raw) {
            raw
        } else {
            continue;
        };
        // Distinct roots can polish to the same solution: deduplicate on the impulse.
        let nx = x[0].abs() + x[1].abs() + x[2].abs();
        if sols.iter().all(|(_, y)| {
            (x[0] - y[0]).abs() + (x[1] - y[1]).abs() + (x[2] - y[2]).abs() > 1e-9 * nx
        }) {
            sols.push((th, x));
        }
    }
    sols.into_iter().map(|(_, x)| x).collect()
}

/// Cartesian Newton polish of a Coulomb sliding solution: `a_nᵀx = b_n`,
/// `‖u_to‖ x_to + μ x_n u_to = 0` (the angle θ is ill-conditioned near `A_nn = μcᵀe`).
fn coulomb_polish(p: &Prep, x: V3) -> V3 {
    let a = p.a;
    let b = p.b;
    let mu = p.mu;
    let sys = |x: V3| -> Option<(V3, M3, f64)> {
        let u = residual_velocity(&a, &b, &x);
        let w = u[1].hypot(u[2]);
        if w == 0.0 || !w.is_finite() || x[0].is_nan() || x[0] <= 0.0 {
            return None;
        }
        let uh = [u[1] / w, u[2] / w];
        let res = [
            u[0],
            w * x[1] + mu * x[0] * u[1],
            w * x[2] + mu * x[0] * u[2],
        ];
        let mut jac = [[0.0; 3]; 3];
        jac[0] = a[0];
        for i in 0..2 {
            for j in 0..3 {
                // d(w x_to,i)/dx_j = x_to,i (ûᵀ B)_j + w δ; d(μ x_n u_i)/dx_j = μ u_i δ_j0 + μ x_n B_ij
                let dw = uh[0] * a[1][j] + uh[1] * a[2][j];
                let mut v = x[1 + i] * dw + mu * x[0] * a[1 + i][j];
                if j == 1 + i {
                    v += w;
                }
                if j == 0 {
                    v += mu * u[1 + i];
                }
                jac[1 + i][j] = v;
            }
        }
        let nx = x[0].abs() + x[1].abs() + x[2].abs();
        let an = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        let nb = b[0].abs() + b[1].abs() + b[2].abs();
        let norm =
            (res[0].abs() + (res[1].abs() + res[2].abs()) / (nx * (1.0 + mu))) / (an * nx + nb);
        norm.is_finite().then_some((res, jac, norm))
    };
    newton_polish(x, sys)
}

fn residual_velocity(a: &M3, b: &V3, x: &V3) -> V3 {
    let mut u = [0.0; 3];
    for i in 0..3 {
        u[i] = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2] - b[i];
    }
    u
}

fn objective(a: &M3, b: &V3, x: &V3) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let ax = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2];
        f += x[i] * (0.5 * ax - b[i]);
    }
    f
}

/// Every Coulomb solution the analytic enumeration finds: `0` when `b_n ≤ 0`, the sticking
/// impulse `x₀` when it lies in the cone, and each sliding solution (`b_n ≠ 0`). Order:
/// zero, sticking, then sliding by increasing objective. Empty for invalid input.
///
/// For `b_n = 0` the sliding solutions with `A_nn = μcᵀe` (a continuum, as in the §4.2
/// edge case `μ = μ*`) are not enumerated.
pub fn coulomb_solutions(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> Vec<[f64; 3]> {
    let Some(p) = Prep::new(a, b, mu) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if p.b[0] <= 0.0 {
        out.push([0.0; 3]);
    }
    if p.mu == 0.0 {
        if p.b[0] >= 0.0 {
            out.push([p.b[0] / p.ann(), 0.0, 0.0]);
        }
    } else {
        let x0 = p.x0();
        if p.in_cone(x0) && p.b[0] >= 0.0 && x0 != [0.0; 3] {
            out.push(x0);
        }
        let mut sl = coulomb_sliding(&p);
        sl.sort_by(|x, y| objective(&p.a, &p.b, x).total_cmp(&objective(&p.a, &p.b, y)));
        out.extend(sl);
    }
    out.into_iter().map(|x| p.unscale(x)).collect()
}

/// Coulomb impulse and branch: the same branch order as [`solve_contact_case`]
/// (separating, frictionless, sticking, `b_n = 0` → `0`), and in the sliding branch the
/// Coulomb sliding solution with the lowest objective (Coulomb solutions need not be
/// unique, §4.1). If no sliding solution is found the maximum-dissipation impulse is
/// returned (in the tests this happens only for garbage input of extreme magnitudes).
pub fn solve_contact_coulomb_case(
    a: [[f64; 3]; 3],
    b: [f64; 3],
    mu: f64,
) -> ([f64; 3], ContactCase) {
    let Some(p) = Prep::new(a, b, mu) else {
        return ([0.0; 3], ContactCase::Separating);
    };
    let bn = p.b[0];
    if bn < 0.0 {
        return ([0.0; 3], ContactCase::Separating);
    }
    if p.mu == 0.0 {
        return (
            p.unscale([bn / p.ann(), 0.0, 0.0]),
            ContactCase::Frictionless,
        );
    }
    let x0 = p.x0();
    if p.in_cone(x0) {
        return (p.unscale(x0), ContactCase::Sticking);
    }
    if bn == 0.0 {
        // x = 0 is a Coulomb solution (u = −b, u_n = 0); it is also the P2 answer.
        return ([0.0; 3], ContactCase::Grazing);
    }
    let sl = coulomb_sliding(&p);
    let best = sl
        .into_iter()
        .min_by(|x, y| objective(&p.a, &p.b, x).total_cmp(&objective(&p.a, &p.b, y)));
    let x = best.unwrap_or_else(|| sliding(&p));
    (p.unscale(x), ContactCase::Sliding)
}

/// Coulomb-friction single-contact impulse: a solution of the De Saxcé–Feng fixed point
/// `x = proj_K(x − r(u + μ‖u_to‖ e_n))`, `u = A x − b`, `K` the friction cone (any `r > 0`).
///
/// Computed analytically (branches of [`solve_contact_coulomb_case`]); for sphere blocks
/// `diag(a, c, c)` it equals [`solve_contact`]. Invalid input returns `[0, 0, 0]`.
pub fn solve_contact_coulomb(a: [[f64; 3]; 3], b: [f64; 3], mu: f64) -> [f64; 3] {
    solve_contact_coulomb_case(a, b, mu).0
}

/// Projection onto the friction cone `{‖x_to‖ ≤ μ x_n}`.
pub fn project_cone(x: [f64; 3], mu: f64) -> [f64; 3] {
    let r = x[1].hypot(x[2]);
    if r <= mu * x[0] {
        return x;
    }
    if mu * r <= -x[0] {
        return [0.0; 3];
    }
    let xn = (x[0] + mu * r) / (1.0 + mu * mu);
    if r == 0.0 {
        return [xn.max(0.0), 0.0, 0.0];
    }
    let k = mu * xn / r;
    [xn, k * x[1], k * x[2]]
}

/// De Saxcé–Feng residual `‖x − proj_K(x − r(u + μ‖u_to‖e_n))‖∞` with `r = 1/max|A_ij|`,
/// relative to `‖x‖∞ + r‖b‖∞`: zero exactly at Coulomb solutions, a few ulps at rounded ones.
pub fn coulomb_residual(a: [[f64; 3]; 3], b: [f64; 3], mu: f64, x: [f64; 3]) -> f64 {
    let u = residual_velocity(&a, &b, &x);
    let r = 1.0 / a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let w = [
        x[0] - r * (u[0] + mu * u[1].hypot(u[2])),
        x[1] - r * u[1],
        x[2] - r * u[2],
    ];
    let pw = project_cone(w, mu);
    let d = [x[0] - pw[0], x[1] - pw[1], x[2] - pw[2]];
    let nb = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let nx = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let den = nx + r * nb;
    let num = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if den == 0.0 {
        num
    } else {
        num / den
    }
}

/// One body's share of a contact for [`delassus`]: `(m⁻¹, I⁻¹ in the world frame,
/// r = contact point − centre of mass)`; a static body is `(0, [[0; 3]; 3], r)`.
pub type DelassusBody = (f64, [[f64; 3]; 3], [f64; 3]);

/// Delassus block of one contact in the contact frame:
/// `A = Qᵀ [Σ_k (m_k⁻¹ E + S(r_k)ᵀ I_k⁻¹ S(r_k))] Q`, where `Q = [n t o]` has the frame
/// vectors as columns (`frame = [n, t, o]`), `S(r)v = r × v`, and each body is given as
/// `(m⁻¹, I⁻¹ (world frame), r = contact point − centre of mass)`. A static body is `(0, 0, ·)`.
pub fn delassus(bodies: &[DelassusBody], frame: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut w = [[0.0; 3]; 3];
    for &(inv_m, inv_i, r) in bodies {
        let s = [[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]];
        for i in 0..3 {
            w[i][i] += inv_m;
            for j in 0..3 {
                // (Sᵀ I⁻¹ S)_ij = Σ_kl S_ki I⁻¹_kl S_lj
                let mut acc = 0.0;
                for k in 0..3 {
                    for l in 0..3 {
                        acc += s[k][i] * inv_i[k][l] * s[l][j];
                    }
                }
                w[i][j] += acc;
            }
        }
    }
    let mut a = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let mut acc = 0.0;
            for k in 0..3 {
                for l in 0..3 {
                    acc += frame[i][k] * w[k][l] * frame[j][l];
                }
            }
            a[i][j] = acc;
        }
    }
    a
}

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
