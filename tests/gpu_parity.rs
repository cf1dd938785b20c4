//! GPU kernels against the CPU reference on the same inputs.

mod common;
mod gpu_common;

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::integrators::IntegratorKind;
use varidem::model::Model;

fn max_rel(a: &varidem::model::Particles, b: &varidem::model::Particles) -> f64 {
    let mut worst = 0.0f64;
    for (name, x, y) in [
        ("position", &a.position, &b.position),
        ("velocity", &a.velocity, &b.velocity),
        ("rotation", &a.rotation, &b.rotation),
        ("angular_velocity", &a.angular_velocity, &b.angular_velocity),
    ] {
        let scale = x.iter().map(|v| v.length()).fold(0.0, f64::max).max(1e-300);
        let err = x
            .iter()
            .zip(y)
            .map(|(u, v)| (*u - *v).length())
            .fold(0.0, f64::max)
            / scale;
        let _ = name;
        worst = worst.max(err);
    }
    worst
}

fn compare(
    test: &str,
    model: &Model,
    kind: IntegratorKind,
    dt: f64,
    steps: u64,
    precision: Precision,
) -> Option<f64> {
    let ctx = gpu_common::context(test)?;
    let opts = GpuOptions {
        precision,
        ..Default::default()
    };
    let mut gpu = GpuBackend::with_context(ctx, model.clone(), kind, dt, &opts).unwrap();
    let mut cpu = CpuBackend::from_model(model.clone(), kind, dt).unwrap();
    gpu.advance(steps).unwrap();
    cpu.advance(steps).unwrap();
    let err = max_rel(&gpu.particles().unwrap(), &cpu.particles().unwrap());
    let dg = gpu.diagnostics().unwrap();
    let dc = cpu.diagnostics().unwrap();
    println!(
        "{test}: max relative state difference {err:.3e}; energy gpu {:.15e} cpu {:.15e}",
        dg.e_total(),
        dc.e_total()
    );
    Some(err)
}

#[test]
fn pendulum_f64_matches_cpu() {
    if let Some(err) = compare(
        "pendulum_f64_matches_cpu",
        &common::pendulum(),
        IntegratorKind::Variational,
        1e-3,
        10_000,
        Precision::F64,
    ) {
        assert!(err <= 1e-10, "{err:e}");
    }
}
