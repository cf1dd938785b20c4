//! The WGSL single-contact solver of hard contacts (`shaders/common/hard_solve.wgsl`,
//! used for clump contacts) against its CPU twin `physics::hard::{solve_contact,
//! solve_contact_coulomb}`, on the random problems of `tests/physics_hard.rs` (SPD blocks
//! with condition numbers up to 1e4 and Delassus blocks of random bodies, every sign
//! case of `b_n`), both friction models, through a small test kernel.
//!
//! Tolerances:
//!
//! * **f64, 1e-10 relative** (`max|x_gpu − x_cpu| / max|x_cpu|`): the issue's bound where
//!   the arithmetic differs. It is the same operations in the same order, but the driver
//!   may contract products and sums into FMAs, so the iterations (Aberth, Newton in the
//!   angle, the Cartesian polish) take rounding-different paths to the same point; the
//!   polish leaves them a few ulps times the problem's conditioning apart.
//! * **f32, statistical**: the problem is rounded to f32 and the CPU solves the rounded
//!   problem in f64. An f32 solve of a problem with condition number κ is good to about
//!   κ·6e-8; the median error must stay below 1e-4 and 99 % of the solves below 1e-2
//!   (κ up to 1e4), and every impulse must be finite. Measured on lavapipe: median
//!   3.7e-8, 99th percentile 9.8e-6; the worst (relative 1.0) is a near-grazing
//!   hyperbolic problem with `b_n = 8e-10‖b‖`, whose impulse (`x_n = 6.4`, from
//!   `b_n/f_r(α)` with `f_r` near its zero) f32 cannot resolve. In f64 (measured): 81 %
//!   of the solves bitwise equal, worst 1.6e-14.

mod common;
mod gpu_common;

use common::hard_problems::{random_b_mu, random_delassus, random_spd, Lcg, M3, V3};
use varidem::gpu::shaders::{header, HARD_SOLVE};
use varidem::gpu::Precision;
use varidem::physics::hard::{solve_contact, solve_contact_coulomb};

/// Reals per problem: A (9, row-major), b (3), μ, friction model (0 maximum dissipation,
/// 1 Coulomb).
const STRIDE: usize = 14;

const KERNEL: &str = r#"
@group(0) @binding(0) var<storage, read> xs: array<real>;
@group(0) @binding(1) var<storage, read_write> ys: array<real>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&xs) / 14u) { return; }
    let k = 14u * i;
    let a = array<vec3<real>, 3>(
        vec3<real>(xs[k], xs[k + 1u], xs[k + 2u]),
        vec3<real>(xs[k + 3u], xs[k + 4u], xs[k + 5u]),
        vec3<real>(xs[k + 6u], xs[k + 7u], xs[k + 8u]));
    let b = vec3<real>(xs[k + 9u], xs[k + 10u], xs[k + 11u]);
    var x = vec3<real>(0.0);
    if (xs[k + 13u] == 0.0) {
        x = solve_contact_md(a, b, xs[k + 12u]);
    } else {
        x = solve_contact_coulomb(a, b, xs[k + 12u]);
    }
    ys[3u * i] = x.x;
    ys[3u * i + 1u] = x.y;
    ys[3u * i + 2u] = x.z;
}
"#;

/// The problems: half SPD blocks (κ up to 1e2 and 1e4 alternately), half Delassus blocks,
/// each with both friction models.
fn problems(n: usize) -> Vec<(M3, V3, f64, bool)> {
    let mut rng = Lcg(0x5eed_0051);
    let mut out = Vec::with_capacity(2 * n);
    for i in 0..n {
        let a = if i % 2 == 0 {
            random_spd(&mut rng, if i % 4 == 0 { 1e2 } else { 1e4 })
        } else {
            random_delassus(&mut rng)
        };
        let (b, mu) = random_b_mu(&mut rng, &a);
        out.push((a, b, mu, false));
        out.push((a, b, mu, true));
    }
    out
}

/// The problems rounded to the precision (a no-op in f64).
fn rounded(p: &[(M3, V3, f64, bool)], precision: Precision) -> Vec<(M3, V3, f64, bool)> {
    let r = |v: f64| match precision {
        Precision::F32 => v as f32 as f64,
        Precision::F64 => v,
    };
    p.iter()
        .map(|(a, b, mu, c)| (a.map(|row| row.map(r)), b.map(r), r(*mu), *c))
        .collect()
}

/// The GPU's impulses of `problems` in `precision`.
fn gpu_solve(
    ctx: &varidem::gpu::context::GpuContext,
    precision: Precision,
    problems: &[(M3, V3, f64, bool)],
) -> Vec<V3> {
    let mut input = Vec::with_capacity(STRIDE * problems.len());
    for (a, b, mu, coulomb) in problems {
        input.extend(a.iter().flatten());
        input.extend(b);
        input.push(*mu);
        input.push(if *coulomb { 1.0 } else { 0.0 });
    }
    let (bytes, size): (Vec<u8>, usize) = match precision {
        Precision::F64 => (bytemuck::cast_slice(&input).to_vec(), 8),
        Precision::F32 => {
            let v: Vec<f32> = input.iter().map(|&x| x as f32).collect();
            (bytemuck::cast_slice(&v).to_vec(), 4)
        }
    };
    let src = format!("{}{}{}", header(precision), HARD_SOLVE.1, KERNEL);
    let groups = problems.len().div_ceil(64) as u32;
    let raw = gpu_common::run_kernel(ctx, &src, &bytes, 3 * problems.len() * size, groups);
    let reals: Vec<f64> = match precision {
        Precision::F64 => bytemuck::pod_collect_to_vec(&raw),
        Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(&raw)
            .into_iter()
            .map(f64::from)
            .collect(),
    };
    reals.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// Relative error of each GPU impulse against the CPU's (`max|Δx| / max|x_cpu|`; the
/// absolute error when the CPU's impulse is 0).
fn errors(problems: &[(M3, V3, f64, bool)], gpu: &[V3]) -> (Vec<f64>, usize) {
    let mut err = Vec::with_capacity(problems.len());
    let mut same = 0;
    for ((a, b, mu, coulomb), g) in problems.iter().zip(gpu) {
        let c = if *coulomb {
            solve_contact_coulomb(*a, *b, *mu)
        } else {
            solve_contact(*a, *b, *mu)
        };
        same += usize::from(c == *g);
        let scale = c.iter().fold(0f64, |m, v| m.max(v.abs()));
        let d = (0..3).fold(0f64, |m, k| m.max((g[k] - c[k]).abs()));
        assert!(
            g.iter().all(|v| v.is_finite()),
            "non-finite impulse {g:?} for A = {a:?}, b = {b:?}, mu = {mu}"
        );
        err.push(if scale > 0.0 { d / scale } else { d });
    }
    (err, same)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn wgsl_solver_matches_cpu_f64() {
    let Some(ctx) = gpu_common::context_for("wgsl_solver_matches_cpu_f64", Precision::F64) else {
        return;
    };
    let p = problems(2500);
    let gpu = gpu_solve(&ctx, Precision::F64, &p);
    let (err, same) = errors(&p, &gpu);
    let (worst, at) = err.iter().enumerate().fold(
        (0f64, 0),
        |(w, i), (k, &e)| if e > w { (e, k) } else { (w, i) },
    );
    println!(
        "f64: {} solves, {same} bitwise equal, worst relative difference {worst:e} (problem {at}: {:?})",
        p.len(),
        p[at]
    );
    assert!(worst <= 1e-10, "worst {worst:e} at {:?}", p[at]);
}

#[test]
fn wgsl_solver_statistics_f32() {
    let Some(ctx) = gpu_common::context_for("wgsl_solver_statistics_f32", Precision::F32) else {
        return;
    };
    let p = rounded(&problems(2500), Precision::F32);
    let gpu = gpu_solve(&ctx, Precision::F32, &p);
    let (mut err, _) = errors(&p, &gpu);
    let at = (0..err.len()).fold(0, |w, k| if err[k] > err[w] { k } else { w });
    println!(
        "f32: worst problem {at}: {:?}, GPU {:?}, CPU (f64) {:?}",
        p[at],
        gpu[at],
        if p[at].3 {
            solve_contact_coulomb(p[at].0, p[at].1, p[at].2)
        } else {
            solve_contact(p[at].0, p[at].1, p[at].2)
        }
    );
    err.sort_by(f64::total_cmp);
    let (median, p99, worst) = (
        quantile(&err, 0.5),
        quantile(&err, 0.99),
        err[err.len() - 1],
    );
    println!("f32: median {median:e}, 99th percentile {p99:e}, worst {worst:e}");
    assert!(
        median <= 1e-4 && p99 <= 1e-2,
        "median {median:e}, 99 % {p99:e}"
    );
}
