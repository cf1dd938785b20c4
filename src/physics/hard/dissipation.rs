//! Maximum dissipation: the branches of Fig. 5 and the public solver.

use super::*;

/// The unit boundary directions of the wedge of the degenerate hyperbola (`b_n = 0`,
/// `A_nn ≤ μ‖c‖`, `c = (A_nt, A_no)`): `α₀ ∓ Δα` of eq. (6)/(9). They make the angle
/// `acos(A_nn / (μ‖c‖))` with `−c`.
pub(super) fn wedge_edges(p: &Prep) -> [[f64; 2]; 2] {
    let c = p.c();
    let nc = (c[0] * c[0] + c[1] * c[1]).sqrt();
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
pub(super) fn ray_min(p: &Prep, e: [f64; 2]) -> ([f64; 2], f64) {
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
pub(super) fn grazing(p: &Prep) -> V3 {
    let c = p.c();
    let nc = (c[0] * c[0] + c[1] * c[1]).sqrt();
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
pub(super) fn sliding(p: &Prep) -> V3 {
    let c = p.c();
    let (mu, bn, ann) = (p.mu, p.b[0], p.ann());
    // The boundary point in the direction u = e^{iα}, or None for α ∉ 𝓘 (eq. (6): the
    // other branch of the hyperbola).
    let point = |u: Cx| -> Option<([f64; 2], f64)> {
        let fr = ann + mu * (c[0] * u.re + c[1] * u.im);
        if fr <= 0.0 {
            return None;
        }
        let r = mu * bn / fr;
        let y = [r * u.re, r * u.im];
        let f = p.reduced_obj(y);
        f.is_finite().then_some((y, f))
    };
    // The first candidate of lowest objective.
    let mut best: Option<([f64; 2], f64)> = None;
    for &u in p.appendix_a().root_dirs().as_slice() {
        if let Some((y, f)) = point(u) {
            if best.map_or(true, |(_, fb)| f < fb) {
                best = Some((y, f));
            }
        }
    }
    if best.is_none() {
        // g ≡ 0 or no valid root: a coarse scan. Reached in the tests only by garbage input
        // of extreme magnitudes (never by the random SPD / Delassus problems).
        for k in 0..256 {
            if let Some((y, f)) = point(scan_dir(k)) {
                if best.map_or(true, |(_, fb)| f < fb) {
                    best = Some((y, f));
                }
            }
        }
    }
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
pub(super) fn kkt_polish(p: &Prep, y: [f64; 2]) -> [f64; 2] {
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
    let r0 = (y[0] * y[0] + y[1] * y[1]).sqrt();
    if r0 == 0.0 {
        return y;
    }
    let nc0 = [y[0] / r0 + k[0], y[1] / r0 + k[1]];
    let g0 = grad(y);
    let lam0 = -(g0[0] * nc0[0] + g0[1] * nc0[1]) / (nc0[0] * nc0[0] + nc0[1] * nc0[1]);
    let anorm = ah[0].abs() + ah[1].abs() + ah[2].abs();
    let sys = |z: V3| -> Option<(V3, M3, f64)> {
        let (y, lam) = ([z[0], z[1]], z[2]);
        let r = (y[0] * y[0] + y[1] * y[1]).sqrt();
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

pub(super) fn solve_prepared(p: &Prep) -> (V3, ContactCase) {
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
