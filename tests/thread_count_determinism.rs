//! The CPU backend gives bitwise-identical results whatever the number of threads: every
//! kernel writes per-item outputs and every sum runs in a fixed order (bond id,
//! neighbour id), never in thread-completion order.

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::integrators::IntegratorKind;
use varidem::model::generators::bonded_block;

fn run(threads: usize) -> varidem::model::Particles {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        // 8 000 particles: above the sequential threshold, so the rayon path runs.
        let model = bonded_block(8_000).unwrap();
        let mut sim = CpuBackend::from_model(model, IntegratorKind::Variational, 1e-7).unwrap();
        sim.advance(50).unwrap();
        sim.particles().unwrap()
    })
}

#[test]
fn one_two_and_four_threads_agree_bitwise() {
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
}
