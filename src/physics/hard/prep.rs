//! Problem preparation (validation, symmetrisation, scaling, Schur complement) and the
//! small dense linear algebra the solvers share.

use super::*;

/// A validated, scaled problem (`|A_ij| ≤ 1`, `|b_i| ≤ 1`); the true impulse is
/// `x_scaled · x_scale`.
pub(super) struct Prep {
    pub(super) a: M3,
    pub(super) b: V3,
    pub(super) mu: f64,
    pub(super) x_scale: f64,
    /// Schur complement `Â` (§3.2) of `A_nn` in `A`: `[[tt, to], [to, oo]]`.
    pub(super) ah: [f64; 3],
    /// `b̂ = b_to − A_nn⁻¹ (A_nt, A_no) b_n`.
    pub(super) bh: [f64; 2],
}

impl Prep {
    pub(super) fn new(a: M3, b: V3, mu: f64) -> Option<Prep> {
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

    pub(super) fn ann(&self) -> f64 {
        self.a[0][0]
    }
    pub(super) fn c(&self) -> [f64; 2] {
        [self.a[0][1], self.a[0][2]]
    }

    /// Reduced objective `½ yᵀÂy − yᵀb̂` on the plane of maximum compression (§3.2).
    pub(super) fn reduced_obj(&self, y: [f64; 2]) -> f64 {
        let ay = [
            self.ah[0] * y[0] + self.ah[1] * y[1],
            self.ah[1] * y[0] + self.ah[2] * y[1],
        ];
        0.5 * (y[0] * ay[0] + y[1] * ay[1]) - (y[0] * self.bh[0] + y[1] * self.bh[1])
    }

    /// Lift a tangential impulse on the plane of maximum compression to 3-D (§3.2):
    /// `x_n = A_nn⁻¹(b_n − A_nt x_t − A_no x_o)`.
    pub(super) fn lift(&self, y: [f64; 2]) -> V3 {
        let c = self.c();
        [
            (self.b[0] - c[0] * y[0] - c[1] * y[1]) / self.ann(),
            y[0],
            y[1],
        ]
    }

    /// Unconstrained minimiser `x₀ = A⁻¹b` via the Schur complement.
    pub(super) fn x0(&self) -> V3 {
        let det = self.ah[0] * self.ah[2] - self.ah[1] * self.ah[1];
        let y = [
            (self.ah[2] * self.bh[0] - self.ah[1] * self.bh[1]) / det,
            (self.ah[0] * self.bh[1] - self.ah[1] * self.bh[0]) / det,
        ];
        self.lift(y)
    }

    pub(super) fn in_cone(&self, x: V3) -> bool {
        x[0] >= 0.0 && (x[1] * x[1] + x[2] * x[2]).sqrt() <= self.mu * x[0]
    }

    pub(super) fn unscale(&self, x: V3) -> V3 {
        [
            x[0] * self.x_scale,
            x[1] * self.x_scale,
            x[2] * self.x_scale,
        ]
    }

    /// Appendix A coefficients of eq. (8) for the scaled problem.
    pub(super) fn appendix_a(&self) -> Trig2 {
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
pub(super) fn solve3(m: M3, r: V3) -> Option<V3> {
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
pub(super) fn newton_polish(mut z: V3, sys: impl Fn(V3) -> Option<(V3, M3, f64)>) -> V3 {
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
