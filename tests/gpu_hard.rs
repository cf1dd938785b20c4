//! Hard contacts on the GPU backend (issue 25): the kernels of `shaders/hard.wgsl`
//! against their CPU twins (`cpu::hard`, `cpu::kernels::hard`), on lavapipe.
//!
//! Tolerances:
//! - f64, `jacobi` and `colored` on a 10³-sphere glass bed with speculative contacts,
//!   walls and friction: ≤ 1e-10 relative per field (the bound). The kernels
//!   do the CPU's arithmetic in the CPU's order (the same contacts in the same order,
//!   each body's sums in ascending contact order, the same colouring), except the
//!   warm start's cone projection (`sqrt` for `hypot`) and the energy sums of
//!   `e_dissipated` (a tree) and what the driver contracts into FMAs, so the runs agree
//!   to rounding (1e-13 after 10 steps here); sweeps and contacts of `solver.csv` must
//!   be equal, and the branch counts may differ by the few contacts that sit on a
//!   branch boundary (`b_n ≈ 0`, the cone's edge), which rounding moves either way.
//! - f32: the same bed over more steps: statistics (mean height, kinetic energy,
//!   sweeps per step) within a few per cent, not trajectories.
//! - the same run twice on one adapter: bitwise (no float atomics).
//!
//! Run: `cargo test --release --test gpu_hard` (lavapipe: about a minute).

mod gpu_common;

use varidem::backend::{Backend, SolverRow};
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::integrators::IntegratorKind;
use varidem::model::generators::{glass_bed, HARD_BED_DT};
use varidem::model::{ContactLaw, HardSolver, Model, RunLength, Scene, SimulationParams};

/// The glass bed of `varidem bench --workload hard-bed` with `n` beads and `solver`.
fn bed(n: usize, solver: HardSolver) -> Scene {
    let mut model: Model = glass_bed(n, true);
    if let Some(c) = &mut model.contact {
        if let ContactLaw::Hard(h) = &mut c.law {
            h.solver = solver;
        }
    }
    Scene {
        simulation: SimulationParams {
            dt: HARD_BED_DT,
            duration: RunLength::Steps(1000),
            integrator: IntegratorKind::ImpulseVelocity,
            output_every: 1000,
            precision: None,
            gpu_max_neighbors: None,
            gpu_bucket_capacity: None,
            trapezoidal: Default::default(),
        },
        model,
    }
}

fn gpu(scene: &Scene, precision: Precision, test: &str) -> Option<GpuBackend> {
    let ctx = gpu_common::context_for(test, precision)?;
    let options = GpuOptions {
        precision,
        ..GpuOptions::default()
    };
    Some(
        GpuBackend::with_context(
            ctx,
            scene.model.clone(),
            scene.simulation.integrator,
            scene.simulation.dt,
            &options,
        )
        .unwrap_or_else(|e| panic!("{test}: {e}")),
    )
}

/// Largest difference between two fields, relative to the larger field's magnitude.
fn rel(a: &[glam::DVec3], b: &[glam::DVec3]) -> f64 {
    let scale = a
        .iter()
        .chain(b)
        .fold(0f64, |m, v| m.max(v.abs().max_element()))
        .max(f64::MIN_POSITIVE);
    a.iter()
        .zip(b)
        .fold(0f64, |m, (x, y)| m.max((*x - *y).abs().max_element()))
        / scale
}

fn compare_rows(cpu: &[SolverRow], gpu: &[SolverRow], what: &str) {
    assert_eq!(cpu.len(), gpu.len(), "{what}: rows");
    for (c, g) in cpu.iter().zip(gpu) {
        assert_eq!(
            (c.step, c.sweeps, c.converged, c.contacts),
            (g.step, g.sweeps, g.converged, g.contacts),
            "{what}: {c:?} vs {g:?}"
        );
        // A contact on a branch boundary (b_n ≈ 0, or an impulse within 1e-9 of the
        // cone's edge, where Jacobi's damped steps from edge to edge leave many sliding
        // contacts) may fall on either side with rounding: at most 0.5 % of the
        // contacts (each flip counts twice).
        let flips = c.sticking.abs_diff(g.sticking)
            + c.sliding.abs_diff(g.sliding)
            + c.separating.abs_diff(g.separating);
        assert!(
            flips <= 2 * (c.contacts / 200 + 2),
            "{what}: branch counts {c:?} vs {g:?}"
        );
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * a.abs().max(b.abs()).max(1e-300);
        assert!(
            close(c.residual, g.residual) || c.residual.max(g.residual) < 1e-14,
            "{what}: residual {c:?} vs {g:?}"
        );
        assert!(
            (c.max_penetration - g.max_penetration).abs() <= 1e-15,
            "{what}: penetration {c:?} vs {g:?}"
        );
        assert!(
            (c.e_dissipated - g.e_dissipated).abs() <= 1e-10 * c.e_dissipated.abs() + 1e-18,
            "{what}: e_dissipated {c:?} vs {g:?}"
        );
    }
}

/// The f64 GPU run against the CPU, step by step.
fn parity_f64(solver: HardSolver, n: usize, steps: u64) {
    let test = format!("gpu_hard parity_f64 {solver:?}");
    let scene = bed(n, solver);
    let Some(mut g) = gpu(&scene, Precision::F64, &test) else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    let mut worst = 0f64;
    for block in 0..steps / 10 {
        c.advance(10).unwrap();
        g.advance(10).unwrap();
        let (pc, pg) = (c.particles().unwrap(), g.particles().unwrap());
        let d = [
            rel(&pc.position, &pg.position),
            rel(&pc.velocity, &pg.velocity),
            rel(&pc.rotation, &pg.rotation),
            rel(&pc.angular_velocity, &pg.angular_velocity),
        ];
        let rows = (c.take_solver_rows(), g.take_solver_rows());
        println!(
            "{test}: step {}: differences {:?}; sweeps {:?}",
            (block + 1) * 10,
            d.map(|x| format!("{x:.2e}")),
            rows.1.iter().map(|r| r.sweeps).collect::<Vec<_>>()
        );
        compare_rows(&rows.0, &rows.1, &test);
        for x in d {
            worst = worst.max(x);
        }
        assert!(d.iter().all(|&x| x <= 1e-10), "{test}: {d:?}");
    }
    println!("{test}: worst relative difference {worst:.2e}");
}

#[test]
fn jacobi_f64_matches_the_cpu() {
    parity_f64(HardSolver::Jacobi, 1000, 30);
}

#[test]
fn colored_f64_matches_the_cpu() {
    parity_f64(HardSolver::Colored, 1000, 30);
}
