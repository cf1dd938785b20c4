//! The CPU backend gives bitwise-identical results whatever the number of threads: every
//! kernel writes per-item outputs and every sum runs in a fixed order (bond id,
//! neighbour id), never in thread-completion order.

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::integrators::IntegratorKind;
use varidem::model::generators::bonded_block;

/// `f` run on a pool of `threads` threads.
fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn run(threads: usize) -> varidem::model::Particles {
    in_pool(threads, || {
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

/// The granular kernels (pairs once per listed pair, then a gather per particle) split
/// their work among however many threads there are: a Hertz–Mindlin bed with history
/// gives the same bits with 1, 2 and 4 threads, state and contact history.
#[test]
fn granular_bed_agrees_bitwise_across_thread_counts() {
    use varidem::model::generators::settling_bed;
    let run = |threads: usize| {
        in_pool(threads, || {
            // 30 000 particles: well above the sequential threshold.
            let model = settling_bed(30_000);
            let dt = varidem::model::generators::SETTLING_BED_DT;
            let mut sim = CpuBackend::from_model(model, IntegratorKind::Variational, dt).unwrap();
            sim.advance(20).unwrap();
            (sim.particles().unwrap(), sim.history())
        })
    };
    let one = run(1);
    assert!(one.1.partner.iter().filter(|&&p| p != u32::MAX).count() > 50_000);
    assert!(one == run(2), "2 threads differ from 1");
    assert!(one == run(4), "4 threads differ from 1");
}

/// The hard-contact solvers compute a Jacobi sweep's and a colour's contact updates on
/// several threads (each reads velocities no other update of the batch changes) and
/// apply them in contact order: the settling bed's overlapping lattice under hard
/// contacts (about 5 penetrating contacts per particle, each pushed apart by ε) gives
/// the same bits with 1, 2 and 4 threads, for `jacobi` and `colored`.
#[test]
fn hard_contact_solvers_agree_bitwise_across_thread_counts() {
    use varidem::model::generators::settling_bed;
    use varidem::model::{ContactLaw, HardContact, HardSolver};
    for solver in [HardSolver::Jacobi, HardSolver::Colored] {
        let run = |threads: usize| {
            in_pool(threads, || {
                let mut model = settling_bed(30_000);
                for m in &mut model.materials {
                    m.restitution = 0.0;
                }
                let c = model.contact.as_mut().unwrap();
                c.law = ContactLaw::Hard(HardContact {
                    solver,
                    max_sweeps: 30,
                    ..HardContact::default()
                });
                let mut sim =
                    CpuBackend::from_model(model, IntegratorKind::ImpulseVelocity, 1e-4).unwrap();
                sim.advance(2).unwrap();
                let rows = sim.take_solver_rows();
                (sim.particles().unwrap(), rows)
            })
        };
        let one = run(1);
        assert!(one.1[0].contacts > 80_000, "{:?}", one.1[0]);
        assert!(one == run(2), "{solver:?}: 2 threads differ from 1");
        assert!(one == run(4), "{solver:?}: 4 threads differ from 1");
    }
}
