//! GPU step throughput (particle-steps per second, shown by criterion as elements/s) of
//! the bonded lattice block, in f32 and f64, on the preferred adapter (lavapipe when the
//! machine has no GPU). Reports and skips when there is no adapter.

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use varidem::backend::Backend;
use varidem::gpu::context::GpuContext;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::integrators::IntegratorKind;
use varidem::model::generators::bonded_block;

/// Steps per measured iteration (one submission of many steps, then one status read).
const STEPS: u64 = 10;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("gpu_step");
    group.sample_size(10);
    for precision in [Precision::F32, Precision::F64] {
        for n in [10_000usize, 100_000] {
            let ctx = match GpuContext::new(None) {
                Ok(ctx) => ctx,
                Err(e) => {
                    eprintln!("gpu_step: skipped, no GPU adapter: {e}");
                    return;
                }
            };
            let name = ctx.summary.name.clone();
            let model = bonded_block(n).expect("block");
            let n = model.particles.len();
            let opts = GpuOptions {
                precision,
                ..Default::default()
            };
            let mut sim = match GpuBackend::with_context(
                ctx,
                model,
                IntegratorKind::Variational,
                1e-7,
                &opts,
            ) {
                Ok(sim) => sim,
                Err(e) => {
                    eprintln!("gpu_step: skipped {precision} on {name}: {e}");
                    continue;
                }
            };
            group.throughput(Throughput::Elements(n as u64 * STEPS));
            group.bench_function(
                BenchmarkId::new(format!("bonded_block_{precision}"), n),
                |b| b.iter(|| sim.advance(STEPS).expect("step")),
            );
        }
    }
    group.finish();
}

/// Holds the criterion group, whose generated function has no doc comment.
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
