//! Small complex arithmetic and polynomial roots (only what the quartic of Appendix A needs),
//! and degree-2 trigonometric polynomials.

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cx {
    pub(super) re: f64,
    pub(super) im: f64,
}

impl Cx {
    pub(super) const ZERO: Cx = Cx { re: 0.0, im: 0.0 };
    pub(super) const ONE: Cx = Cx { re: 1.0, im: 0.0 };
    pub(super) fn new(re: f64, im: f64) -> Cx {
        Cx { re, im }
    }
    pub(super) fn polar(r: f64, phi: f64) -> Cx {
        Cx::new(r * phi.cos(), r * phi.sin())
    }
    pub(super) fn add(self, o: Cx) -> Cx {
        Cx::new(self.re + o.re, self.im + o.im)
    }
    pub(super) fn sub(self, o: Cx) -> Cx {
        Cx::new(self.re - o.re, self.im - o.im)
    }
    pub(super) fn mul(self, o: Cx) -> Cx {
        Cx::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
    pub(super) fn scale(self, s: f64) -> Cx {
        Cx::new(self.re * s, self.im * s)
    }
    pub(super) fn conj(self) -> Cx {
        Cx::new(self.re, -self.im)
    }
    pub(super) fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    pub(super) fn arg(self) -> f64 {
        self.im.atan2(self.re)
    }
    pub(super) fn div(self, o: Cx) -> Cx {
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
    pub(super) fn sqrt(self) -> Cx {
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
pub(super) fn horner(p: &[Cx], z: Cx) -> (Cx, Cx) {
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
pub(super) fn poly_roots(p: &[Cx]) -> Vec<Cx> {
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
pub(super) struct Trig2 {
    pub(super) c0: f64,
    pub(super) c1: Cx,
    pub(super) c2: Cx,
}

impl Trig2 {
    pub(super) fn eval(&self, al: f64) -> (f64, f64) {
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
    pub(super) fn root_angles(&self) -> Vec<f64> {
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
