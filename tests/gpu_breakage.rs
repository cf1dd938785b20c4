//! Bond breakage (issue 47) on the GPU against the CPU reference (lavapipe in CI): the
//! block's impact with bonds weak enough that hundreds break, in f64 (the same bonds
//! break at the same steps, in one bond chunk and in many), in f32 (deterministic, and
//! resumed from a checkpoint taken after breaks), and a bond pulled to its break,
//! resumed at the very step of the break.
//!
//! Tolerance of the loads: the f64 kernels perform the CPU's operations in the same
//! order but for the bending strain's arctangent (WGSL's own), a few ulps apart; over
//! the run the states stay within 10⁻¹⁰ relative (tests/gpu_parity.rs), so the loads at
//! each break are compared to 10⁻¹¹ of the largest (measured 2·10⁻¹⁴), and the breaks themselves (step,
//! bond, ends) exactly.

mod common;
mod gpu_common;

use varidem::backend::{Backend, BondBreak};
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::parse_scene;
use varidem::model::Scene;

/// `scenes/block-impact.toml` cut to a 6³ block and `steps` steps with `extra`
/// `[binder]` keys (tests/bond_breakage.rs has the same scene).
fn impact(steps: u64, extra: &str) -> Scene {
    let text = format!(
        "[simulation]\ndt = 5e-4\nsteps = {steps}\noutput_every = 10\n\
         [binder]\nk_bend = 10.0\nk_axial = 200.0\nk_shear = 200.0\n{extra}\n\
         [contact]\nlaw = \"binder\"\nk_pp = 2100.0\n\
         [[block]]\norigin = [0.1075, 0.0, 0.0]\ncounts = [6, 6, 6]\nspacing = 0.105\n\
         radius = 0.05\nradius_jitter = 0.05\ndensity = 1000.0\nvelocity = [-1.0, 0.0, 0.0]\n\
         bond_cutoff = 0.11\nseed = 2026\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n"
    );
    parse_scene(&text).unwrap()
}

const WEAK: &str =
    "break_tension = 10.0\nbreak_shear = 4.0\nbreak_bend = 0.2\nbreak_scatter = 0.3\n";

/// The breaks `a` and `b` name the same bonds at the same steps, and their loads and
/// energies agree to `tol` of the largest.
fn same_breaks(a: &[BondBreak], b: &[BondBreak], tol: f64, what: &str) {
    let key = |x: &BondBreak| (x.step, x.bond, x.i, x.j);
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>(),
        "{what}: the breaks differ"
    );
    let v = |x: &BondBreak| {
        let l = x.loads;
        [l.tension, l.shear, l.bend, l.twist, x.energy]
    };
    let scale = a.iter().flat_map(v).fold(0.0f64, |m, x| m.max(x.abs()));
    let worst = a
        .iter()
        .zip(b)
        .flat_map(|(x, y)| v(x).into_iter().zip(v(y)).map(|(p, q)| (p - q).abs()))
        .fold(0.0f64, f64::max);
    println!(
        "{what}: {} breaks, loads and energies within {:.2e} of the largest",
        a.len(),
        worst / scale
    );
    for (x, y) in a.iter().zip(b) {
        for (p, q) in v(x).into_iter().zip(v(y)) {
            assert!(
                (p - q).abs() <= tol * scale,
                "{what}: bond {} at step {}: {p} vs {q}",
                x.bond,
                x.step
            );
        }
    }
}

/// GPU f64, in one bond chunk and in chunks of 7 bonds, breaks the bonds the CPU
/// breaks at the same steps (hundreds of them over 400 steps), its state and
/// `e_broken` agree to 10⁻⁹, and strengths set but never reached give the bits of the
/// run without them.
#[test]
fn impact_f64_breaks_the_cpus_bonds() {
    let scene = impact(400, WEAK);
    let mut c = CpuBackend::new(&scene).unwrap();
    c.advance(400).unwrap();
    let cpu = c.bond_breaks(0).unwrap();
    assert!(cpu.len() >= 50, "{} bonds broke", cpu.len());
    for chunk in [None, Some(7)] {
        let what = format!("chunks of {chunk:?} bonds");
        let Some(ctx) = gpu_common::context_f64("impact_f64_breaks_the_cpus_bonds") else {
            return;
        };
        let options = GpuOptions {
            precision: Precision::F64,
            max_chunk_bonds: chunk,
            ..GpuOptions::default()
        };
        let mut g = GpuBackend::with_context(
            ctx,
            scene.model.clone(),
            scene.simulation.integrator,
            scene.simulation.dt,
            &options,
        )
        .unwrap();
        // In pieces, as a run with outputs advances.
        for _ in 0..8 {
            g.advance(50).unwrap();
        }
        let gpu = g.bond_breaks(0).unwrap();
        same_breaks(&cpu, &gpu, 1e-11, &what);
        let err = gpu_common::per_field(&c.particles().unwrap(), &g.particles().unwrap());
        assert!(err.iter().all(|&e| e <= 1e-9), "{what}: state {err:?}");
        let (dc, dg) = (c.diagnostics().unwrap(), g.diagnostics().unwrap());
        assert!(
            (dc.e_broken - dg.e_broken).abs() <= 1e-9 * dc.e_broken,
            "{what}: e_broken {} vs {}",
            dc.e_broken,
            dg.e_broken
        );
        let broken = g.frame().unwrap().bond_broken;
        assert_eq!(broken.iter().filter(|&&b| b).count(), cpu.len());
    }
    // Never reached: the bits of the unbreakable block.
    let plain = impact(100, "");
    let strong = impact(100, "break_tension = 1e30\n");
    let run = |s: &Scene| {
        let mut g = gpu_common::backend(s, Precision::F64, "strengths_never_reached").unwrap();
        g.advance(100).unwrap();
        (g.particles().unwrap(), g.diagnostics().unwrap().csv_row())
    };
    assert_eq!(run(&plain), run(&strong));
}

/// GPU f32: the same run twice gives the same bits, and so does a run resumed from a
/// checkpoint taken after bonds broke (their break steps and records restored).
#[test]
fn impact_f32_breaks_deterministically() {
    let scene = impact(300, WEAK);
    let Some(mut g) = gpu_common::f32_deterministic(&scene, "impact_f32_breaks", 200, 100) else {
        return;
    };
    let broken = g.bond_breaks(0).unwrap();
    assert!(broken.len() >= 50, "{} bonds broke", broken.len());
    assert!(broken.iter().any(|b| b.step < 200) && broken.iter().any(|b| b.step > 200));
}

/// A bond pulled to its break (at step 1527), restored on the GPU in f64 at that very
/// step from the CPU's checkpoint: the restored set-up evaluation unloads it as the
/// step did, and the run ends on the CPU's bits.
#[test]
fn restored_at_the_break_step_f64() {
    let scene = common::pulled_bond(2000, 100);
    let mut c = CpuBackend::new(&scene).unwrap();
    c.advance(1527).unwrap();
    let snap = c.checkpoint_state().unwrap();
    assert_eq!(snap.broken.len(), 1);
    assert_eq!(snap.broken[0].step, 1527);
    c.advance(473).unwrap();
    let Some(ctx) = gpu_common::context_f64("restored_at_the_break_step_f64") else {
        return;
    };
    let options = GpuOptions {
        precision: Precision::F64,
        ..GpuOptions::default()
    };
    let mut g = GpuBackend::restore(ctx, scene.model.clone(), &snap, &options).unwrap();
    g.advance(473).unwrap();
    assert_eq!(g.particles().unwrap(), c.particles().unwrap());
    assert_eq!(g.bond_breaks(0).unwrap(), c.bond_breaks(0).unwrap());
    assert_eq!(
        g.diagnostics().unwrap().csv_row(),
        c.diagnostics().unwrap().csv_row()
    );
}
