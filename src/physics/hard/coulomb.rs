//! The Coulomb (De Saxcé–Feng) variant of the single-contact problem.

use super::*;

/// Coulomb sliding solutions (at most eight) and how many were found.
pub(super) struct Slides {
    pub(super) x: [V3; 8],
    pub(super) count: usize,
}

/// Coulomb sliding solutions `x = x_n (1, −μ cos θ, −μ sin θ)`, `u_n = 0`,
/// `u_to = s (cos θ, sin θ)` with `s > 0`, `x_n = b_n / (A_nn − μ cᵀe) > 0`: the
/// parallelism `e⊥ᵀu_to = 0`, multiplied by `A_nn − μcᵀe`, is again a degree-2
/// trigonometric polynomial (the polynomial approach of Bonnefon et al. cited in §4.1),
/// solved with the same quartic machinery. In the order of the candidate directions.
pub(super) fn coulomb_sliding(p: &Prep) -> Slides {
    let mut out = Slides {
        x: [[0.0; 3]; 8],
        count: 0,
    };
    let (ann, ant, ano) = (p.a[0][0], p.a[0][1], p.a[0][2]);
    let (att, ato, aoo) = (p.a[1][1], p.a[1][2], p.a[2][2]);
    let (bn, bt, bo) = (p.b[0], p.b[1], p.b[2]);
    let mu = p.mu;
    if mu == 0.0 || bn == 0.0 {
        return out;
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
    let an = p.a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let nb = p.b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // A genuine sliding solution: on the cone, u_to ≠ 0 along −x_to (Newton could
    // otherwise drift towards u = 0).
    let valid = |x: &V3| {
        let u = residual_velocity(&p.a, &p.b, x);
        let r = (x[1] * x[1] + x[2] * x[2]).sqrt();
        let scale = an * (x[0].abs() + r) + nb;
        let along = -(u[1] * x[1] + u[2] * x[2]) / r;
        let across = (u[1] * x[2] - u[2] * x[1]) / r;
        x[0] > 0.0
            && (r - mu * x[0]).abs() <= 1e-9 * r
            && along > 0.0
            && across.abs() <= 1e-8 * scale
    };
    for &e in h.root_dirs().as_slice() {
        let (co, s) = (e.re, e.im);
        let d = ann - mu * (ant * co + ano * s);
        let xn = bn / d;
        if !(xn > 0.0 && xn.is_finite()) {
            continue;
        }
        let raw = [xn, -mu * xn * co, -mu * xn * s];
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
        let mut fresh = true;
        for y in &out.x[..out.count] {
            if (x[0] - y[0]).abs() + (x[1] - y[1]).abs() + (x[2] - y[2]).abs() <= 1e-9 * nx {
                fresh = false;
            }
        }
        if fresh {
            out.x[out.count] = x;
            out.count += 1;
        }
    }
    out
}

/// Cartesian Newton polish of a Coulomb sliding solution: `a_nᵀx = b_n`,
/// `‖u_to‖ x_to + μ x_n u_to = 0` (the angle θ is ill-conditioned near `A_nn = μcᵀe`).
pub(super) fn coulomb_polish(p: &Prep, x: V3) -> V3 {
    let a = p.a;
    let b = p.b;
    let mu = p.mu;
    let sys = |x: V3| -> Option<(V3, M3, f64)> {
        let u = residual_velocity(&a, &b, &x);
        let w = (u[1] * u[1] + u[2] * u[2]).sqrt();
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

pub(super) fn residual_velocity(a: &M3, b: &V3, x: &V3) -> V3 {
    let mut u = [0.0; 3];
    for i in 0..3 {
        u[i] = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2] - b[i];
    }
    u
}

pub(super) fn objective(a: &M3, b: &V3, x: &V3) -> f64 {
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
        let found = coulomb_sliding(&p);
        let mut sl = found.x[..found.count].to_vec();
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
    // The first sliding solution of lowest objective.
    let sl = coulomb_sliding(&p);
    let mut best: Option<(V3, f64)> = None;
    for x in &sl.x[..sl.count] {
        let f = objective(&p.a, &p.b, x);
        if best.map_or(true, |(_, fb)| f < fb) {
            best = Some((*x, f));
        }
    }
    let x = match best {
        Some((x, _)) => x,
        None => sliding(&p),
    };
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

/// Projection onto the friction cone `{‖x_to‖ ≤ μ x_n}`. `‖x_to‖` is `√(x_t² + x_o²)`
/// rather than `hypot` (inputs here are impulses of moderate size): the same
/// operations as its twin `project_cone` in `shaders/hard.wgsl`, which projects the
/// warm starts on the GPU.
pub fn project_cone(x: [f64; 3], mu: f64) -> [f64; 3] {
    let r = (x[1] * x[1] + x[2] * x[2]).sqrt();
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
