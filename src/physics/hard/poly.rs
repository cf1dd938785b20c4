//! Small complex arithmetic and polynomial roots (only what the quartic of Appendix A needs),
//! and degree-2 trigonometric polynomials.
//!
//! Every operation is `+ − × ÷ √` on fixed-size arrays: no `sin`, `cos`, `atan2`, `hypot`
//! or `powf` (Vulkan has none of them in `f64`) and no allocation, so
//! `shaders/common/hard_solve.wgsl` is the line-by-line twin. Angles are carried as unit
//! complex numbers `u = e^{iα}`.

/// `cos 0.4`, `sin 0.4`: the direction of the Aberth iteration's first starting point
/// (the WGSL twin holds the same literals).
const START: (f64, f64) = (0.9210609940028851, 0.3894183423086505);
/// Below this a modulus counts as zero when dividing by it.
const TINY: f64 = 1e-300;

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
    /// `|z|` as `√(re² + im²)`: the problems are scaled to unit magnitude first, so the
    /// squares neither overflow nor underflow where it matters.
    pub(super) fn abs(self) -> f64 {
        (self.re * self.re + self.im * self.im).sqrt()
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
    /// Whether both parts are finite.
    pub(super) fn is_finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
}

/// `u e^{−iδ}` for a unit `u`, by the Cayley transform `e^{−iδ} ≈ (1 − iδ/2)/(1 + iδ/2)`:
/// exactly unit modulus, angle `−2 atan(δ/2) = −δ + O(δ³)`, so Newton steps in the angle
/// keep converging (to the same root) without a cosine.
pub(super) fn turn(u: Cx, delta: f64) -> Cx {
    let q = 0.25 * delta * delta;
    let w = Cx::new((1.0 - q) / (1.0 + q), -delta / (1.0 + q));
    u.mul(w)
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

/// Both roots of `a z² + b z + c` (`a ≠ 0`) by the stable formula
/// `q = −(b + sign·√(b² − 4ac))/2`, roots `q/a` and `c/q`.
pub(super) fn quadratic_roots(a: Cx, b: Cx, c: Cx) -> [Cx; 2] {
    let disc = b.mul(b).sub(a.mul(c).scale(4.0)).sqrt();
    let s = if b.re * disc.re + b.im * disc.im >= 0.0 {
        b.add(disc)
    } else {
        b.sub(disc)
    };
    let q = s.scale(-0.5);
    if q.abs() == 0.0 {
        [Cx::ZERO, Cx::ZERO]
    } else {
        [q.div(a), c.div(q)]
    }
}

/// The four roots of `p[0] z⁴ + … + p[4]` (`p[0] ≠ 0`) by the Aberth–Ehrlich iteration
/// (simultaneous Newton with repulsion, cubically convergent), each root then polished
/// by Newton on the polynomial.
pub(super) fn quartic_roots(p: [Cx; 5]) -> [Cx; 4] {
    let lead = p[0];
    let mut monic = [Cx::ZERO; 5];
    for k in 0..5 {
        monic[k] = p[k].div(lead);
    }
    // Starting radius: the geometric mean of the root moduli |a₄|^{1/4}, kept ≥ tiny.
    let r0 = monic[4].abs().sqrt().sqrt();
    let r0 = if r0.is_finite() && r0 > TINY { r0 } else { 1.0 };
    // Quarter turns from the direction START, radii 1, 1.01, 1.02, 1.03 times r0.
    let (c, s) = START;
    let dirs = [
        Cx::new(c, s),
        Cx::new(-s, c),
        Cx::new(-c, -s),
        Cx::new(s, -c),
    ];
    let mut z = [Cx::ZERO; 4];
    for k in 0..4 {
        z[k] = dirs[k].scale(r0 * (1.0 + 0.01 * k as f64));
    }
    for _ in 0..200 {
        let mut worst: f64 = 0.0;
        for k in 0..4 {
            let (v, d) = horner(&monic, z[k]);
            if v.abs() == 0.0 {
                continue;
            }
            let w = v.div(d);
            let mut s = Cx::ZERO;
            for j in 0..4 {
                if j != k {
                    let diff = z[k].sub(z[j]);
                    if diff.abs() > 0.0 {
                        s = s.add(Cx::ONE.div(diff));
                    }
                }
            }
            let den = Cx::ONE.sub(w.mul(s));
            let step = if den.abs() > 0.0 { w.div(den) } else { w };
            if step.is_finite() {
                z[k] = z[k].sub(step);
                worst = worst.max(step.abs() / z[k].abs().max(TINY));
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
            if !step.is_finite() || step.abs() > 1e-3 * zk.abs().max(TINY) {
                break;
            }
            *zk = zk.sub(step);
        }
    }
    z
}

/// All complex roots of a polynomial of degree ≤ 4 (coefficients highest degree first,
/// leading coefficient non-zero): closed form for degree ≤ 2, [`quartic_roots`] for 4.
/// Degree 3 never arises here (eq. (8)'s quartic is palindromic-conjugate) and gives
/// no roots.
#[cfg(test)]
pub(super) fn poly_roots(p: &[Cx]) -> Vec<Cx> {
    match p.len() {
        2 => vec![p[1].div(p[0]).scale(-1.0)],
        3 => quadratic_roots(p[0], p[1], p[2]).to_vec(),
        5 => quartic_roots([p[0], p[1], p[2], p[3], p[4]]).to_vec(),
        _ => Vec::new(),
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

/// Up to eight candidate directions `e^{iα}` (two per root of the quartic).
pub(super) struct Dirs {
    pub(super) dir: [Cx; 8],
    pub(super) count: usize,
}

impl Dirs {
    fn push(&mut self, u: Cx) {
        self.dir[self.count] = u;
        self.count += 1;
    }
    /// The directions found.
    pub(super) fn as_slice(&self) -> &[Cx] {
        &self.dir[..self.count]
    }
}

impl Trig2 {
    /// `g` and `dg/dα` at the direction `u = e^{iα}`.
    pub(super) fn eval(&self, u: Cx) -> (f64, f64) {
        let p1 = self.c1.mul(u);
        let p2 = self.c2.mul(u.mul(u));
        (self.c0 + p1.re + p2.re, -p1.im - 2.0 * p2.im)
    }

    /// Candidate roots of `g` as directions `e^{iα}`: those of the roots `y` of the
    /// quartic `C₂y⁴ + C₁y³ + 2c₀y² + C̄₁y + C̄₂ = 0` (`y = e^{iα}`, eq. (8) times `2y²`),
    /// with the degenerate degrees handled (vanishing `C₂`, then `C₁`), each also
    /// polished by Newton on `g(α)` (the rounding of the quartic's roots removed). Roots
    /// off the unit circle yield spurious directions; callers rank candidates by the
    /// objective, so spurious ones are harmless and near-double roots are not lost.
    pub(super) fn root_dirs(&self) -> Dirs {
        let mut out = Dirs {
            dir: [Cx::ZERO; 8],
            count: 0,
        };
        let scale = self.c0.abs().max(self.c1.abs()).max(self.c2.abs());
        if scale == 0.0 || !scale.is_finite() {
            return out;
        }
        let tiny = 1e-14 * scale;
        let c0 = Cx::new(2.0 * self.c0, 0.0);
        let mut roots = [Cx::ZERO; 4];
        let count = if self.c2.abs() > tiny {
            roots = quartic_roots([self.c2, self.c1, c0, self.c1.conj(), self.c2.conj()]);
            4
        } else if self.c1.abs() > tiny {
            // C₂ ≈ 0 (e.g. sphere blocks diag(a, c, c)): y = 0 is a spurious root; divide it out.
            let [r0, r1] = quadratic_roots(self.c1, c0, self.c1.conj());
            roots[0] = r0;
            roots[1] = r1;
            2
        } else {
            // g ≈ c₀ constant: no isolated roots.
            0
        };
        for &r in &roots[..count] {
            let m = r.abs();
            if !r.is_finite() || m == 0.0 {
                continue;
            }
            let u0 = Cx::new(r.re / m, r.im / m);
            out.push(u0);
            let mut u = u0;
            let (mut gv, _) = self.eval(u);
            for _ in 0..30 {
                let (g, dg) = self.eval(u);
                if dg == 0.0 || !dg.is_finite() {
                    break;
                }
                let step = g / dg;
                if !step.is_finite() || step.abs() > 0.5 {
                    break;
                }
                u = turn(u, step);
                gv = g;
                if step.abs() <= 1e-16 {
                    break;
                }
            }
            let (gp, _) = self.eval(u);
            if gp.abs() <= gv.abs() || gp.abs() < 1e-12 * scale {
                out.push(u);
            }
        }
        out
    }
}

/// The `k`-th of 256 directions spread around the circle (the corners of a square's
/// perimeter, 64 per side, normalised): the coarse scan's candidates, without a cosine.
pub(super) fn scan_dir(k: usize) -> Cx {
    let t = (k % 64) as f64 / 32.0 - 1.0;
    let p = match k / 64 {
        0 => Cx::new(1.0, t),
        1 => Cx::new(-t, 1.0),
        2 => Cx::new(-1.0, -t),
        _ => Cx::new(t, -1.0),
    };
    let m = p.abs();
    Cx::new(p.re / m, p.im / m)
}
