//! CPU reference step throughput (particle-steps per second, shown by criterion as
//! elements/s): the torus of Baker & Gonzalez §4.1, bonded lattice blocks of 10⁴ and
//! 10⁵ particles, and the granular settling bed (Hertz–Mindlin with history) of 10⁴;
//! and the cost of a neighbour-list rebuild of a 10⁵-sphere bed with and without the
//! spatial sort of storage that precedes it every `sort_every` steps (issue 44).

use criterion::{criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use varidem::cpu::CpuBackend;
use varidem::integrators::IntegratorKind;
use varidem::model::generators::{bonded_block, settling_bed, SETTLING_BED_DT};

/// Steps per measured iteration.
const STEPS: u64 = 10;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_step");
    group.sample_size(10);

    let torus = varidem::io::default_scene();
    let n = torus.model.particles.len();
    group.throughput(Throughput::Elements(n as u64 * STEPS));
    group.bench_function(BenchmarkId::new("torus", n), |b| {
        let mut sim = CpuBackend::new(&torus).expect("torus scene");
        b.iter(|| {
            for _ in 0..STEPS {
                sim.step().expect("step");
            }
        })
    });

    for n in [10_000usize, 100_000] {
        let model = bonded_block(n).expect("block");
        let n = model.particles.len();
        // dt = 1e-7 s: ω h ≈ 0.25 for the stiffest mode (contacts at the 5 % jitter
        // overlaps, ω ≈ 2.3e6 rad/s), so thousands of benchmark steps stay stable.
        let mut sim =
            CpuBackend::from_model(model, IntegratorKind::Variational, 1e-7).expect("block");
        group.throughput(Throughput::Elements(n as u64 * STEPS));
        group.bench_function(BenchmarkId::new("bonded_block", n), |b| {
            b.iter(|| {
                for _ in 0..STEPS {
                    sim.step().expect("step");
                }
            })
        });
    }
    // The granular bed. Every iteration starts from the same state, 10 steps in (what
    // `varidem bench` times): stepped on, the bed's lattice overlaps relax and it loosens
    // from ~5.5 to ~2 contacts per particle within a few thousand steps, which would
    // time a different, cheaper problem as criterion iterates.
    let model = settling_bed(10_000);
    let n = model.particles.len();
    let mut start = CpuBackend::from_model(model, IntegratorKind::Variational, SETTLING_BED_DT)
        .expect("settling bed");
    for _ in 0..10 {
        start.step().expect("step");
    }
    group.throughput(Throughput::Elements(n as u64 * STEPS));
    group.bench_function(BenchmarkId::new("settling_bed", n), |b| {
        b.iter_batched_ref(
            || start.clone(),
            |sim| {
                for _ in 0..STEPS {
                    sim.step().expect("step");
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();

    // A rebuild of the 10⁵ bed's list (its storage shuffled first, as a poured bed's
    // input order scatters it), plain and after the spatial sort.
    let mut group = c.benchmark_group("cpu_rebuild");
    group.sample_size(10);
    let model = settling_bed(100_000);
    let n = model.particles.len();
    let mut sim = CpuBackend::from_model(model, IntegratorKind::Variational, SETTLING_BED_DT)
        .expect("settling bed");
    sim.set_sort_every(Some(0));
    sim.shuffle_storage(1);
    group.throughput(Throughput::Elements(n as u64));
    for sort in [false, true] {
        let name = if sort { "sorted" } else { "plain" };
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| sim.rebuild_now(sort))
        });
    }
    group.finish();
}

// The macro generates an undocumented public function.
/// Holds the criterion group, whose generated function has no doc comment.
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
