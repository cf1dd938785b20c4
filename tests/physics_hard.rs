//! Tests of the analytic single-contact solvers in `varidem::physics::hard`
//! (Preclik, Eibl & Rüde, maximum-dissipation hard contacts; see docs/hard-contacts.md).
//!
//! Everything is deterministic (a 64-bit LCG with fixed seeds). Tolerances:
//!
//! * **Brute force, 1e-10 relative.** The reference solver [`brute_force`] shares no code
//!   and no formula with the library: it solves the same convex problem on the plane of
//!   maximum compression by a Lagrangian method (bisection on the multiplier λ of the
//!   cone constraint `‖y‖ + kᵀy ≤ m`, damped Newton for the inner minimiser), which is
//!   accurate to about `ε·κ` (κ the condition number of the reduced block `Â`). The
//!   impulse must match to `1e-10·‖x_bf‖` and the objective to `1e-10·(½x_bfᵀAx_bf + |x_bfᵀb|)`,
//!   over random blocks with condition numbers up to 1e4 (observed worst 3e-13, so the
//!   bound leaves a margin of about 300).
//! * **Constraints, 1e-12 relative.** Cone `‖x_to‖ ≤ μx_n(1 + 1e-12)`, `x_n ≥ 0`,
//!   `u_n ≥ −1e-12·‖b‖`, `|x_n u_n| ≤ 1e-12·x_n‖b‖` (rounding of `A x − b`).
//! * **Coulomb residual, 1e-14.** The De Saxcé–Feng fixed-point residual with step
//!   `r = 1/max|A_ij|`, relative to `‖x‖ + r‖b‖` (max norms): a few ulps, since `r·u` is
//!   computed to about `ε‖x‖`.
//! * **Sphere blocks, 1e-12.** Coulomb and maximum dissipation agree to `1e-12·‖x‖`.
//! * **Paper values.** Table 1 and §4.2 are compared to the printed digits: a printed
//!   value with `d` decimals must match to half a unit of its last digit.

#![allow(
    clippy::needless_range_loop,
    reason = "dense 3×3 linear algebra reads best with index loops"
)]

use varidem::physics::hard::{
    appendix_a_coefficients, coulomb_residual, coulomb_solutions, delassus,
    grazing_printed_edge_rule, solve_contact, solve_contact_case, solve_contact_coulomb,
    solve_contact_coulomb_case, ContactCase,
};

mod common;

use common::hard_problems::*;

// -------------------------------------------------------------------------------------
// Brute-force reference: Lagrangian bisection on the plane of maximum compression.

/// Minimiser of `Φ(y) = ½yᵀHy − gᵀy + λ(‖y‖ + kᵀy)` (convex; `H` SPD 2×2 `[h00, h01, h11]`).
///
/// With `g' = g − λk`, the minimiser is `0` iff `‖g'‖ ≤ λ`; otherwise `y = (H + sI)⁻¹g'`
/// with `s = λ/‖y‖`, i.e. the root of the increasing function `φ(s) = s‖(H + sI)⁻¹g'‖ = λ`,
/// found by bisection (no derivatives, no starting point).
fn inner_min(h: [f64; 3], g: [f64; 2], k: [f64; 2], lam: f64) -> [f64; 2] {
    let gk = [g[0] - lam * k[0], g[1] - lam * k[1]];
    if gk[0].hypot(gk[1]) <= lam {
        return [0.0, 0.0];
    }
    let y_of = |s: f64| {
        let (a, b, c) = (h[0] + s, h[1], h[2] + s);
        let d = a * c - b * b;
        [(c * gk[0] - b * gk[1]) / d, (a * gk[1] - b * gk[0]) / d]
    };
    let phi = |s: f64| {
        let y = y_of(s);
        s * y[0].hypot(y[1])
    };
    let mut lo = 0.0;
    let mut hi = h[0].abs() + h[1].abs() + h[2].abs();
    while phi(hi) < lam {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..2000 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if phi(mid) < lam {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    y_of(0.5 * (lo + hi))
}

/// Brute-force maximum-dissipation impulse (independent of the library's formulas).
fn brute_force(a: &M3, b: V3, mu: f64) -> V3 {
    let bn = b[0];
    if bn < 0.0 {
        return [0.0; 3];
    }
    let ann = a[0][0];
    if mu == 0.0 {
        return [bn / ann, 0.0, 0.0];
    }
    let x0 = solve3(a, b);
    if x0[0] >= 0.0 && x0[1].hypot(x0[2]) <= mu * x0[0] {
        return x0;
    }
    // Reduced problem in y = x_to: q(y) = ½yᵀÂy − b̂ᵀy, feasible ‖y‖ + kᵀy ≤ m.
    let c = [a[0][1], a[0][2]];
    let h = [
        a[1][1] - c[0] * c[0] / ann,
        a[1][2] - c[0] * c[1] / ann,
        a[2][2] - c[1] * c[1] / ann,
    ];
    let g = [b[1] - c[0] * bn / ann, b[2] - c[1] * bn / ann];
    let k = [mu * c[0] / ann, mu * c[1] / ann];
    let m = mu * bn / ann;
    if bn == 0.0 && k[0].hypot(k[1]) < 1.0 {
        return [0.0; 3]; // feasible set is {0}
    }
    let hviol = |y: [f64; 2]| y[0].hypot(y[1]) + k[0] * y[0] + k[1] * y[1] - m;
    let lift = |y: [f64; 2]| [(bn - c[0] * y[0] - c[1] * y[1]) / ann, y[0], y[1]];
    let mut lo = 0.0;
    let mut hi = (h[0].abs() + h[1].abs() + h[2].abs()) * x0[1].hypot(x0[2]).max(1e-300);
    let mut yhi = inner_min(h, g, k, hi);
    let mut guard = 0;
    while hviol(yhi) > 0.0 && guard < 3000 {
        lo = hi;
        hi *= 2.0;
        yhi = inner_min(h, g, k, hi);
        guard += 1;
    }
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let y = inner_min(h, g, k, mid);
        if hviol(y) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
            yhi = y;
        }
    }
    // Polish. The λ-parametrisation is ill-conditioned when the conic section is tiny
    // compared with ‖x₀‖, the angle θ when the solution is near a hyperbola's asymptote.
    // Candidates: the bisection point, a secant solution of the KKT parallelism
    // `(Hy − g) × (ŷ + k) = 0` along `y(θ) = m/(1 + kᵀe) e`, and Cartesian Newton iterates
    // on the KKT system; the smallest scaled KKT residual wins (convex problem: the KKT
    // point is the global minimiser, and the bisection fixed its basin).
    if m > 0.0 && (yhi[0] != 0.0 || yhi[1] != 0.0) {
        let on_boundary = |th: f64| {
            let e = [th.cos(), th.sin()];
            let rho = m / (1.0 + k[0] * e[0] + k[1] * e[1]);
            [rho * e[0], rho * e[1]]
        };
        let kkt = |th: f64| {
            let y = on_boundary(th);
            let gr = [
                h[0] * y[0] + h[1] * y[1] - g[0],
                h[1] * y[0] + h[2] * y[1] - g[1],
            ];
            let r = y[0].hypot(y[1]);
            let nc = [y[0] / r + k[0], y[1] / r + k[1]];
            gr[0] * nc[1] - gr[1] * nc[0]
        };
        let th_start = yhi[1].atan2(yhi[0]);
        let (mut t0, mut t1) = (th_start, th_start + 1e-7);
        let (mut f0, mut f1) = (kkt(t0), kkt(t1));
        for _ in 0..100 {
            if f1 == f0 {
                break;
            }
            let t2 = t1 - f1 * (t1 - t0) / (f1 - f0);
            if !t2.is_finite() || (t2 - th_start).abs() > 1e-3 {
                break;
            }
            (t0, f0) = (t1, f1);
            t1 = t2;
            f1 = kkt(t1);
            if (t1 - t0).abs() <= 1e-17 {
                break;
            }
        }
        // Choose between the bisection point, the secant point and a Cartesian Newton
        // refinement by the scaled KKT residual (objective differences of boundary points
        // 1e-8 apart are below rounding, so the objective cannot arbitrate).
        let kkt_res = |y: [f64; 2]| -> (f64, f64) {
            let r = y[0].hypot(y[1]);
            if r == 0.0 || !r.is_finite() {
                return (f64::INFINITY, 0.0);
            }
            let nc = [y[0] / r + k[0], y[1] / r + k[1]];
            let gr = [
                h[0] * y[0] + h[1] * y[1] - g[0],
                h[1] * y[0] + h[2] * y[1] - g[1],
            ];
            let lam = (-(gr[0] * nc[0] + gr[1] * nc[1]) / (nc[0] * nc[0] + nc[1] * nc[1])).max(0.0);
            let s1 = (h[0].abs() + h[1].abs() + h[2].abs()) * r + g[0].abs() + g[1].abs();
            let r1 = (gr[0] + lam * nc[0]).abs() + (gr[1] + lam * nc[1]).abs();
            let r2 = (r + k[0] * y[0] + k[1] * y[1] - m).abs() / (r + m);
            (r1 / s1 + r2, lam)
        };
        let mut cands = vec![yhi, on_boundary(t1)];
        // Cartesian Newton on (y, λ) from the better of the two.
        let mut yn = if kkt_res(cands[1]).0 < kkt_res(cands[0]).0 {
            cands[1]
        } else {
            cands[0]
        };
        let mut lam = kkt_res(yn).1;
        for _ in 0..20 {
            let r = yn[0].hypot(yn[1]);
            let e = [yn[0] / r, yn[1] / r];
            let nc = [e[0] + k[0], e[1] + k[1]];
            let gr = [
                h[0] * yn[0] + h[1] * yn[1] - g[0],
                h[1] * yn[0] + h[2] * yn[1] - g[1],
            ];
            let res = [
                gr[0] + lam * nc[0],
                gr[1] + lam * nc[1],
                r + k[0] * yn[0] + k[1] * yn[1] - m,
            ];
            let sl = lam / r;
            let jac = [
                [
                    h[0] + sl * (1.0 - e[0] * e[0]),
                    h[1] - sl * e[0] * e[1],
                    nc[0],
                ],
                [
                    h[1] - sl * e[0] * e[1],
                    h[2] + sl * (1.0 - e[1] * e[1]),
                    nc[1],
                ],
                [nc[0], nc[1], 0.0],
            ];
            let d = solve3(&jac, [-res[0], -res[1], -res[2]]);
            if !d.iter().all(|v| v.is_finite()) {
                break;
            }
            yn = [yn[0] + d[0], yn[1] + d[1]];
            lam += d[2];
            cands.push(yn);
        }
        yhi = cands
            .into_iter()
            .min_by(|p, q| kkt_res(*p).0.total_cmp(&kkt_res(*q).0))
            .unwrap();
    } else if m == 0.0 && (yhi[0] != 0.0 || yhi[1] != 0.0) {
        // Wedge: the bisection's point lies on an edge ray; minimise exactly along it.
        let r = yhi[0].hypot(yhi[1]);
        let e = [yhi[0] / r, yhi[1] / r];
        // Snap the direction onto the exact edge ‖e‖ + kᵀe = 0 nearest to it.
        let nk = k[0].hypot(k[1]);
        let u = [-k[0] / nk, -k[1] / nk];
        let cb = 1.0 / nk;
        let sb = (1.0 - cb * cb).max(0.0).sqrt();
        let side = if u[0] * e[1] - u[1] * e[0] >= 0.0 {
            1.0
        } else {
            -1.0
        };
        let ed = [cb * u[0] - side * sb * u[1], cb * u[1] + side * sb * u[0]];
        let he = [h[0] * ed[0] + h[1] * ed[1], h[1] * ed[0] + h[2] * ed[1]];
        let rr = ((g[0] * ed[0] + g[1] * ed[1]) / (ed[0] * he[0] + ed[1] * he[1])).max(0.0);
        yhi = [rr * ed[0], rr * ed[1]];
    }
    lift(yhi)
}

#[derive(Default, Debug)]
struct Stats {
    n: usize,
    by_case: [usize; 5],
    worst_x: f64,
    worst_obj: f64,
    worst_cone: f64,
    worst_un: f64,
    worst_compl: f64,
}

fn case_index(c: ContactCase) -> usize {
    match c {
        ContactCase::Separating => 0,
        ContactCase::Frictionless => 1,
        ContactCase::Sticking => 2,
        ContactCase::Grazing => 3,
        ContactCase::Sliding => 4,
    }
}

fn check_against_brute(st: &mut Stats, a: &M3, b: V3, mu: f64) {
    let (x, case) = solve_contact_case(*a, b, mu);
    let xb = brute_force(a, b, mu);
    st.n += 1;
    st.by_case[case_index(case)] += 1;
    let nx = maxabs(xb);
    let ex = if nx == 0.0 {
        maxabs(x)
    } else {
        maxabs(sub(x, xb)) / nx
    };
    let oscale = 0.5 * dot(xb, matvec(a, xb)) + dot(xb, b).abs();
    let eo = if oscale == 0.0 {
        (objective(a, b, x) - objective(a, b, xb)).abs()
    } else {
        (objective(a, b, x) - objective(a, b, xb)).abs() / oscale
    };
    // Constraints.
    let u = velocity(a, b, x);
    let nb = maxabs(b);
    let cone = (x[1].hypot(x[2]) - mu * x[0]).max(0.0) / maxabs(x).max(1e-300);
    let cone = cone.max((-x[0]).max(0.0) / maxabs(x).max(1e-300));
    let un = (-u[0]).max(0.0) / nb.max(1e-300);
    let compl = (x[0] * u[0]).abs() / (x[0].abs() * nb).max(1e-300);
    st.worst_x = st.worst_x.max(ex);
    st.worst_obj = st.worst_obj.max(eo);
    st.worst_cone = st.worst_cone.max(cone);
    st.worst_un = st.worst_un.max(un);
    st.worst_compl = st.worst_compl.max(compl);
    assert!(
        ex <= 1e-10 && eo <= 1e-10,
        "mismatch ({case:?}): ex {ex:e} eo {eo:e}\nA = {a:?}\nb = {b:?}\nmu = {mu}\nx = {x:?}\nbf = {xb:?}"
    );
    assert!(
        cone <= 1e-12 && un <= 1e-12 && compl <= 1e-12,
        "constraints ({case:?}): cone {cone:e} un {un:e} compl {compl:e}\nA = {a:?}\nb = {b:?}\nmu = {mu}\nx = {x:?}"
    );
}

#[test]
fn random_spd_blocks_match_brute_force() {
    let mut rng = Lcg(0x5eed_0001);
    let mut st = Stats::default();
    for i in 0..4000 {
        let kappa = if i % 2 == 0 { 1e2 } else { 1e4 };
        let a = random_spd(&mut rng, kappa);
        let (b, mu) = random_b_mu(&mut rng, &a);
        check_against_brute(&mut st, &a, b, mu);
    }
    println!("random SPD: {st:?}");
    assert!(st.by_case.iter().all(|&c| c > 50), "{st:?}");
}

#[test]
fn random_delassus_blocks_match_brute_force() {
    let mut rng = Lcg(0x5eed_0002);
    let mut st = Stats::default();
    for _ in 0..4000 {
        let a = random_delassus(&mut rng);
        let (b, mu) = random_b_mu(&mut rng, &a);
        check_against_brute(&mut st, &a, b, mu);
    }
    println!("random Delassus: {st:?}");
    assert!(st.by_case.iter().all(|&c| c > 50), "{st:?}");
}

/// Every Coulomb solution returned satisfies the De Saxcé–Feng fixed point to 1e-14, and the
/// chosen Coulomb impulse is never more dissipative than the maximum-dissipation impulse.
#[test]
fn coulomb_solutions_are_fixed_points() {
    let mut rng = Lcg(0x5eed_0003);
    let mut worst: f64 = 0.0;
    let mut n_sliding = 0;
    let mut n_multi = 0;
    let mut n_differ = 0;
    let mut worst_gap: f64 = 0.0;
    for i in 0..3000 {
        let a = if i % 2 == 0 {
            random_spd(&mut rng, 1e3)
        } else {
            random_delassus(&mut rng)
        };
        let (b, mu) = random_b_mu(&mut rng, &a);
        let (x, case) = solve_contact_coulomb_case(a, b, mu);
        let r = coulomb_residual(a, b, mu, x);
        worst = worst.max(r);
        assert!(
            r <= 1e-14,
            "residual {r:e}: A {a:?} b {b:?} mu {mu} x {x:?}"
        );
        let all = coulomb_solutions(a, b, mu);
        for s in &all {
            let r = coulomb_residual(a, b, mu, *s);
            worst = worst.max(r);
            assert!(
                r <= 1e-14,
                "residual {r:e}: A {a:?} b {b:?} mu {mu} x {s:?}"
            );
        }
        if case == ContactCase::Sliding {
            n_sliding += 1;
            assert!(!all.is_empty(), "no sliding Coulomb solution found");
            if all.len() > 1 {
                n_multi += 1;
            }
            let xm = solve_contact(a, b, mu);
            let (fc, fm) = (objective(&a, b, x), objective(&a, b, xm));
            let sc = 0.5 * dot(xm, matvec(&a, xm)) + dot(xm, b).abs();
            // Coulomb sliding solutions lie on the same conic section: never below the minimum.
            assert!(fc >= fm - 1e-12 * sc, "Coulomb below max-diss: {fc} {fm}");
            if maxabs(sub(x, xm)) > 1e-8 * maxabs(xm) {
                n_differ += 1;
                worst_gap = worst_gap.max((fc - fm) / sc);
            }
        }
    }
    println!(
        "Coulomb: worst residual {worst:e}, sliding {n_sliding}, multiple solutions {n_multi}, \
         differs from max-diss {n_differ}, worst relative objective gap {worst_gap:e}"
    );
    assert!(n_sliding > 500 && n_differ > 100);
}

/// Sphere-like blocks diag(a, c, c) (any rotation about n): Coulomb == maximum dissipation.
#[test]
fn sphere_blocks_coulomb_equals_max_dissipation() {
    let mut rng = Lcg(0x5eed_0004);
    let mut worst: f64 = 0.0;
    let mut sliding = 0;
    for _ in 0..3000 {
        let an = rng.log_range(1e-2, 1e2);
        let c = an * rng.log_range(0.2, 5.0);
        let a = [[an, 0.0, 0.0], [0.0, c, 0.0], [0.0, 0.0, c]];
        let (b, mu) = random_b_mu(&mut rng, &a);
        let (xm, case) = solve_contact_case(a, b, mu);
        let xc = solve_contact_coulomb(a, b, mu);
        if case == ContactCase::Sliding {
            sliding += 1;
        }
        let e = maxabs(sub(xm, xc)) / maxabs(xm).max(1e-300);
        let e = if maxabs(xm) == 0.0 { maxabs(xc) } else { e };
        worst = worst.max(e);
        assert!(
            e <= 1e-12,
            "sphere block: {xm:?} vs {xc:?} (a {a:?} b {b:?} mu {mu})"
        );
        // Closed form in the sliding case: x_to = μ (b_n/a) b_to/‖b_to‖.
        if case == ContactCase::Sliding {
            let k = mu * b[0] / an / b[1].hypot(b[2]);
            let want = [b[0] / an, k * b[1], k * b[2]];
            assert!(maxabs(sub(xm, want)) <= 1e-14 * maxabs(want));
        }
    }
    println!("sphere blocks: worst |x_C − x_MD|/|x| = {worst:e}, sliding {sliding}");
    assert!(sliding > 500);
}

/// Fig. 5 order: P1 (x₀ = A⁻¹b in the cone) is tested before the b_n = 0 branch.
#[test]
fn static_test_precedes_grazing_branch() {
    // A coupled block; choose x₀ in the cone with a_nᵀx₀ = 0, then b = A x₀ has b_n = 0.
    let a = [[1.0, -0.6, 0.2], [-0.6, 1.5, 0.1], [0.2, 0.1, 0.8]];
    let x0 = [1.0, 1.9, 0.7]; // a_nᵀx₀ = 1 − 1.14 + 0.14 = 0
    let b = matvec(&a, x0);
    assert!(b[0].abs() < 1e-15);
    let b = [0.0, b[1], b[2]];
    let mu = 2.5; // ‖(1.9, 0.7)‖ = 2.02 ≤ 2.5
    let (x, case) = solve_contact_case(a, b, mu);
    assert_eq!(case, ContactCase::Sticking);
    assert!(maxabs(sub(x, x0)) < 1e-14, "{x:?}");
    // With μ below the cone test, the same problem is the degenerate (b_n = 0) branch.
    let (x, case) = solve_contact_case(a, b, 1.0);
    assert_eq!(case, ContactCase::Grazing);
    let xb = brute_force(&a, b, 1.0);
    assert!(
        maxabs(sub(x, xb)) <= 1e-12 * maxabs(xb).max(1e-300),
        "{x:?} {xb:?}"
    );
}

/// Appendix A: `g(α) = c₀ + c₁cos(α + φ₁) + c₂cos(2α + φ₂)` with `c₁e^{iφ₁} = X₁ + iY₁` and
/// `c₂e^{iφ₂} = μA_nn(X₂ + iY₂)/2` equals `f_obj′(α) f_r(α)³ / (μ b_n)` (checked by central
/// differences of an independent evaluation of `f_obj`).
#[test]
fn appendix_a_coefficients_are_the_scaled_derivative() {
    let mut rng = Lcg(0x5eed_0005);
    let mut worst: f64 = 0.0;
    for _ in 0..300 {
        let a = random_spd(&mut rng, 10.0);
        let b = [rng.range(0.1, 1.0), rng.normal(), rng.normal()];
        let mu = rng.range(0.1, 1.5);
        let [c0, x1, y1, x2, y2] = appendix_a_coefficients(a, b, mu);
        let g = |al: f64| {
            c0 + x1 * al.cos() - y1 * al.sin() + x2 * (2.0 * al).cos() - y2 * (2.0 * al).sin()
        };
        let fr = |al: f64| a[0][0] + mu * (a[0][1] * al.cos() + a[0][2] * al.sin());
        // f_obj on the cone surface, evaluated in 3-D.
        let f = |al: f64| {
            let r = mu * b[0] / fr(al);
            let y = [r * al.cos(), r * al.sin()];
            let x = [
                (b[0] - a[0][1] * y[0] - a[0][2] * y[1]) / a[0][0],
                y[0],
                y[1],
            ];
            objective(&a, b, x)
        };
        for k in 0..16 {
            let al = std::f64::consts::TAU * (k as f64 + 0.37) / 16.0;
            if fr(al) < 0.2 * a[0][0] {
                continue;
            }
            let h = 1e-5;
            let df = (f(al + h) - f(al - h)) / (2.0 * h);
            let want = df * fr(al).powi(3) / (mu * b[0]);
            let scale = x1.hypot(y1) + x2.hypot(y2) + c0.abs();
            let e = (g(al) - want).abs() / scale;
            worst = worst.max(e);
            assert!(e < 1e-6, "g {} vs {want}", g(al));
        }
    }
    println!("Appendix A: worst |g − f′f_r³/(μb_n)| / scale = {worst:e}");
}

// -------------------------------------------------------------------------------------
// §4.1, Table 1.

/// Half a unit of the last printed digit of `printed` (given with `decimals` decimals).
fn assert_printed(name: &str, got: f64, printed: f64, decimals: i32) {
    let tol = 0.5 * 10f64.powi(-decimals) + 1e-12;
    assert!(
        (got - printed).abs() <= tol,
        "{name}: computed {got:.6} vs printed {printed} (± {tol:e})"
    );
}

/// The academic problem of §4.1: six point masses on rods, contact at `+d_x e_x`.
/// `normalise_t` = false is the paper's (un-normalised) `t = n × e_x`.
fn table1_problem(normalise_t: bool) -> (M3, V3, f64) {
    let (dx, dy, dz) = (10.0, 1.0, 1.0);
    let (mx, my, mz) = (0.03, 65.0, 50.0);
    let mu = 3.7;
    let nh = [0.25, 0.36, -0.9];
    let nn = norm(nh);
    let n = [nh[0] / nn, nh[1] / nn, nh[2] / nn];
    let mut t = cross(n, [1.0, 0.0, 0.0]);
    if normalise_t {
        let tn = norm(t);
        t = [t[0] / tn, t[1] / tn, t[2] / tn];
    }
    let o = cross(n, t);
    let inertia = [
        2.0 * (my * dy * dy + mz * dz * dz),
        2.0 * (mx * dx * dx + mz * dz * dz),
        2.0 * (mx * dx * dx + my * dy * dy),
    ];
    let inv_i = [
        [1.0 / inertia[0], 0.0, 0.0],
        [0.0, 1.0 / inertia[1], 0.0],
        [0.0, 0.0, 1.0 / inertia[2]],
    ];
    let inv_m = 1.0 / (2.0 * (mx + my + mz));
    let frame = [n, t, o];
    let a = delassus(&[(inv_m, inv_i, [dx, 0.0, 0.0])], frame);
    let v = [0.06, 0.7, 0.23];
    let b = [dot(n, v), dot(t, v), dot(o, v)];
    (a, b, mu)
}

#[test]
fn table1_academic_problem() {
    let (a, b, mu) = table1_problem(false);
    let tn = norm(cross(
        {
            let nh = [0.25, 0.36, -0.9];
            let nn = norm(nh);
            [nh[0] / nn, nh[1] / nn, nh[2] / nn]
        },
        [1.0, 0.0, 0.0],
    ));
    println!("|n × e_x| = {tn:.10}");
    println!("A = {a:?}\nb = {b:?}");
    // Maximally dissipative solution: x* ≈ (1.6, −1.1, −5.8), u ≈ (0, −0.057, 0.034), −0.634.
    let (x, case) = solve_contact_case(a, b, mu);
    let u = velocity(&a, b, x);
    let f = objective(&a, b, x);
    println!("x* = {x:?}\nu* = {u:?}\nf* = {f}");
    assert_eq!(case, ContactCase::Sliding);
    let xb = brute_force(&a, b, mu);
    assert!(
        maxabs(sub(x, xb)) <= 1e-12 * maxabs(xb),
        "{x:?} vs brute {xb:?}"
    );
    for (i, (&p, d)) in [1.6, -1.1, -5.8].iter().zip([1, 1, 1]).enumerate() {
        assert_printed(&format!("x*[{i}]"), x[i], p, d);
    }
    assert!(u[0].abs() < 1e-14);
    assert_printed("u*_t", u[1], -0.057, 3);
    assert_printed("u*_o", u[2], 0.034, 3);
    assert_printed("f*", f, -0.634, 3);

    // The three dynamic Coulomb solutions, ordered by objective −0.631, −0.393, −0.252.
    let sols = coulomb_solutions(a, b, mu);
    for s in &sols {
        println!(
            "Coulomb x = {s:?}, u = {:?}, f = {}",
            velocity(&a, b, *s),
            objective(&a, b, *s)
        );
    }
    assert_eq!(sols.len(), 3, "{sols:?}");
    // (x, decimals of x, u, decimals of u, objective) as printed.
    type Row = (V3, [i32; 3], V3, [i32; 3], f64);
    let printed: [Row; 3] = [
        (
            [1.56, -0.99, -5.7],
            [2, 2, 1],
            [0.0, 0.0061, 0.035],
            [0, 4, 3],
            -0.631,
        ),
        (
            [0.29, -0.89, -0.62],
            [2, 2, 2],
            [0.0, 0.082, 0.057],
            [0, 3, 3],
            -0.393,
        ),
        (
            [0.12, -0.44, -0.065],
            [2, 2, 3],
            [0.0, 0.40, 0.060],
            [0, 2, 3],
            -0.252,
        ),
    ];
    for (s, (px, dx, pu, du, pf)) in sols.iter().zip(printed) {
        let us = velocity(&a, b, *s);
        for i in 0..3 {
            assert_printed(&format!("x_C[{i}]"), s[i], px[i], dx[i]);
        }
        assert!(us[0].abs() < 1e-14);
        for i in 1..3 {
            assert_printed(&format!("u_C[{i}]"), us[i], pu[i], du[i]);
        }
        assert_printed("f_C", objective(&a, b, *s), pf, 3);
        assert!(coulomb_residual(a, b, mu, *s) <= 1e-14);
        // Each Coulomb solution is less dissipative than x*.
        assert!(objective(&a, b, *s) > f);
    }
    // The chosen Coulomb impulse is the most dissipative Coulomb solution.
    assert!(maxabs(sub(solve_contact_coulomb(a, b, mu), sols[0])) == 0.0);

    // With an orthonormal frame the printed numbers do not come out.
    let (an, bn, _) = table1_problem(true);
    let xn = solve_contact(an, bn, mu);
    let fnorm = objective(&an, bn, xn);
    println!("orthonormal frame: x* = {xn:?}, f* = {fnorm}");
    assert!((fnorm - -0.634).abs() > 0.005 || (xn[2] - -5.8).abs() > 0.05);
}

// -------------------------------------------------------------------------------------
// §4.2, Painlevé.

/// The rod problem of §4.2 in the contact frame (n, t, o) = (e_y, e_x, e_z), built from
/// the rigid-body formulas: `(A, b)` with `b = (0, v₀, 0)` (grazing, sliding in −x).
fn painleve(theta: f64, m: f64, l: f64, v0: f64) -> (M3, V3) {
    let ax = [theta.cos(), theta.sin(), 0.0];
    // Slender rod: I⁻¹ = 12/(m l²) (E − a aᵀ) (infinite moment about its axis).
    let k = 12.0 / (m * l * l);
    let mut inv_i = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            inv_i[i][j] = k * (if i == j { 1.0 } else { 0.0 } - ax[i] * ax[j]);
        }
    }
    let r = [-0.5 * l * ax[0], -0.5 * l * ax[1], 0.0]; // lower tip − centre of mass
    let frame = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let a = delassus(&[(1.0 / m, inv_i, r)], frame);
    (a, [0.0, v0, 0.0])
}

fn mu_star(theta: f64) -> f64 {
    (theta.cos() + 1.0 / (3.0 * theta.cos())) / theta.sin()
}

#[test]
fn painleve_paradox() {
    let (m, l, v0) = (1.7, 0.8, 2.3);
    let th = 0.5 * (-0.6f64).acos();
    // μ* is minimal, 4/3, at θ = ½ acos(−3/5).
    assert!((mu_star(th) - 4.0 / 3.0).abs() < 1e-15);
    let mut best = (f64::INFINITY, 0.0);
    for k in 1..200_000 {
        let t = std::f64::consts::FRAC_PI_2 * k as f64 / 200_000.0;
        if mu_star(t) < best.0 {
            best = (mu_star(t), t);
        }
    }
    println!(
        "min μ* = {:.12} at θ = {:.8} (½acos(−3/5) = {th:.8})",
        best.0, best.1
    );
    assert!((best.0 - 4.0 / 3.0).abs() < 1e-9 && (best.1 - th).abs() < 1e-5);

    for &theta in &[th, 0.3, 0.7, 1.2] {
        let (a, b) = painleve(theta, m, l, v0);
        let (s, c) = theta.sin_cos();
        // In-plane block as printed (world order x, y ↔ contact order t, n).
        assert!((a[0][0] - (1.0 + 3.0 * c * c) / m).abs() < 1e-14);
        assert!((a[1][1] - (1.0 + 3.0 * s * s) / m).abs() < 1e-14);
        assert!((a[0][1] - -3.0 * s * c / m).abs() < 1e-14);
        // A_oo = 4/m_a, not the printed (1 + 3(cos²θ − sin²θ)²)/m_a.
        assert!((a[2][2] - 4.0 / m).abs() < 1e-14);
        let printed_aoo = (1.0 + 3.0 * (c * c - s * s).powi(2)) / m;
        if theta == th {
            println!(
                "A_oo = {} (4/m), printed expression gives {printed_aoo}",
                a[2][2]
            );
            assert!((a[2][2] - printed_aoo).abs() > 0.5);
        }
        // Acceleration coefficient nᵀA(μ, 1, 0) (world) = (1 + 3cosθ(cosθ − μ sinθ))/m_a
        // changes sign at μ*.
        let ms = mu_star(theta);
        let coef = |mu: f64| a[0][0] + mu * a[0][1];
        assert!((coef(0.9) - (1.0 + 3.0 * c * (c - 0.9 * s)) / m).abs() < 1e-14);
        assert!(coef(ms).abs() < 1e-14 && coef(ms * 1.01) < 0.0 && coef(ms * 0.99) > 0.0);
        // Λ₀ = m v₀/8 (5 + 3cos2θ, 3 sin2θ, 0) (t, n order) = A⁻¹b.
        let lam0 = [
            m * v0 / 8.0 * 3.0 * (2.0 * theta).sin(),
            m * v0 / 8.0 * (5.0 + 3.0 * (2.0 * theta).cos()),
            0.0,
        ];
        // μ ≥ μ*: the sticking impulse Λ₀ (P1 before the b_n = 0 branch), both models.
        for mu in [ms * (1.0 + 1e-9), ms * 1.5, 3.0 * ms] {
            let (x, case) = solve_contact_case(a, b, mu);
            assert_eq!(case, ContactCase::Sticking, "θ {theta} μ {mu}");
            assert!(
                maxabs(sub(x, lam0)) < 1e-13 * maxabs(lam0),
                "{x:?} {lam0:?}"
            );
            assert!(maxabs(velocity(&a, b, x)) < 1e-13 * v0);
            let xc = solve_contact_coulomb(a, b, mu);
            assert!(maxabs(sub(xc, lam0)) < 1e-13 * maxabs(lam0));
        }
        // μ < μ*: P2 holds, the impulse is zero (both models).
        for mu in [ms * (1.0 - 1e-9), 0.5 * ms, 0.05] {
            let (x, case) = solve_contact_case(a, b, mu);
            assert_eq!(case, ContactCase::Grazing, "θ {theta} μ {mu}");
            assert_eq!(x, [0.0; 3]);
            assert!(a[0][0] > mu * a[0][1].abs());
            assert_eq!(solve_contact_coulomb(a, b, mu), [0.0; 3]);
        }
        if theta == th {
            // Λ₀ = m v₀ (0.3, 0.4, 0) at θ*: ‖Λ₀,to‖/Λ₀,n = 4/3 = μ*.
            let (x, _) = solve_contact_case(a, b, 4.0 / 3.0 + 1e-12);
            println!(
                "θ* Λ₀ = {x:?} = m v₀ × {:?}",
                [x[0] / (m * v0), x[1] / (m * v0)]
            );
            assert!((x[0] - 0.3 * m * v0).abs() < 1e-13 && (x[1] - 0.4 * m * v0).abs() < 1e-13);
        }
    }
}

// -------------------------------------------------------------------------------------
// Eq. (9): the printed edge rule vs both edges.

/// A fixed problem where the printed eq. (9) rule picks the wrong asymptote: the printed
/// rule's impulse has a higher objective than the corrected one, which matches brute force.
#[test]
fn printed_eq9_edge_rule_can_pick_the_wrong_edge() {
    let mut rng = Lcg(0x5eed_0006);
    let mut tried = 0;
    let mut wrong = 0;
    let mut example = None;
    while tried < 4000 {
        let a = if tried % 2 == 0 {
            random_spd(&mut rng, 1e3)
        } else {
            random_delassus(&mut rng)
        };
        let mu = rng.range(0.2, 1.5);
        let b = [0.0, rng.normal(), rng.normal()];
        let Some(xp) = grazing_printed_edge_rule(a, b, mu) else {
            continue;
        };
        tried += 1;
        let x = solve_contact(a, b, mu);
        let xb = brute_force(&a, b, mu);
        let sc = 0.5 * dot(xb, matvec(&a, xb)) + dot(xb, b).abs();
        assert!(maxabs(sub(x, xb)) <= 1e-10 * maxabs(xb).max(1e-300));
        let (fp, f) = (objective(&a, b, xp), objective(&a, b, x));
        assert!(
            fp >= f - 1e-10 * sc,
            "A {a:?} b {b:?} mu {mu} xp {xp:?} fp {fp} x {x:?} f {f} xb {xb:?}"
        );
        if fp > f + 1e-9 * sc {
            wrong += 1;
            if example.is_none() {
                example = Some((a, b, mu, xp, fp, x, f));
            }
        }
    }
    println!("eq. (9): printed rule suboptimal in {wrong} of {tried} wedge problems");
    let (a, b, mu, xp, fp, x, f) = example.expect("no counter-example found");
    println!("example: A = {a:?}\n b = {b:?}\n mu = {mu}\n printed x = {xp:?} f = {fp}\n both edges x = {x:?} f = {f}");
    assert!(wrong > 0);

    // The first counter-example of the search, fixed: the printed side test selects the
    // edge on which the objective increases (r* = 0, x = 0, objective 0), while the other
    // edge reaches −2.8197e-4; brute force agrees with the corrected rule.
    let a = [
        [621.9109250829092, 587.1244850751963, 358.4823364508033],
        [587.1244850751963, 1190.1648478776303, -362.3097474259741],
        [358.4823364508033, -362.3097474259741, 1027.1470389891758],
    ];
    let b = [0.0, 1.2645873036965598, -0.8583408524912673];
    let mu = 1.2587926089566395;
    let xp = grazing_printed_edge_rule(a, b, mu).unwrap();
    let (x, case) = solve_contact_case(a, b, mu);
    assert_eq!(case, ContactCase::Grazing);
    assert_eq!(xp, [0.0; 3]);
    let xb = brute_force(&a, b, mu);
    assert!(maxabs(sub(x, xb)) <= 1e-12 * maxabs(xb));
    assert!((objective(&a, b, x) - -2.8196563430149237e-4).abs() < 1e-15);
    // x lies on the wedge edge: cone constraint active, u_n = 0.
    assert!((x[1].hypot(x[2]) - mu * x[0]).abs() < 1e-15);
    assert!(velocity(&a, b, x)[0].abs() < 1e-15);
}

/// No panics and finite output on garbage input (non-finite, non-SPD, extreme scales).
#[test]
fn garbage_input_never_panics() {
    let mut rng = Lcg(0x5eed_0007);
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1e-300,
        1e300,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for _ in 0..20_000 {
        let pick = |rng: &mut Lcg| {
            if rng.f() < 0.3 {
                specials[(rng.next_u64() % specials.len() as u64) as usize]
            } else {
                rng.normal() * rng.log_range(1e-6, 1e6)
            }
        };
        let mut a = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] = pick(&mut rng);
            }
        }
        let b = [pick(&mut rng), pick(&mut rng), pick(&mut rng)];
        let mu = pick(&mut rng).abs();
        let x = solve_contact(a, b, mu);
        let xc = solve_contact_coulomb(a, b, mu);
        let _ = coulomb_solutions(a, b, mu);
        let finite_in = a.iter().flatten().all(|v| v.is_finite())
            && b.iter().all(|v| v.is_finite())
            && mu.is_finite();
        if !finite_in {
            assert_eq!(x, [0.0; 3]);
            assert_eq!(xc, [0.0; 3]);
        }
        // Finite whenever every non-zero input magnitude lies in [1e-100, 1e100] (entries
        // spanning more than the f64 range can overflow after scaling; documented).
        let moderate = a
            .iter()
            .flatten()
            .chain(b.iter())
            .chain(std::iter::once(&mu))
            .all(|v| *v == 0.0 || (v.abs() >= 1e-100 && v.abs() <= 1e100));
        if finite_in && moderate {
            assert!(x.iter().all(|v| v.is_finite()), "{a:?} {b:?} {mu} -> {x:?}");
        }
    }
}
