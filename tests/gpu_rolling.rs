//! Rolling resistance (issue 50) on the GPU against the CPU reference (lavapipe in CI):
//! a pour onto a turning mesh tray with a plane closing in, under CDT and EPSD.
//!
//! Tolerance: as tests/gpu_granular.rs, the f64 kernels perform the CPU's operations
//! in the same order, so 1e-9 relative over the run leaves orders of magnitude of room
//! for a driver's FMA contraction; the rolling springs of the snapshot are compared to
//! the same bound (relative to the largest).

mod gpu_common;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::parse_scene;
use varidem::model::Scene;

mod common;

use gpu_common::{per_field, rel};

/// 80 spheres in two materials poured onto a turning two-triangle tray (a mesh) with a
/// plane closing in from the side and a floor plane below the tray's edge, with
/// rolling friction `model` (μ_r 0.3 and 0.2, overridden to 0.25 between the two
/// materials; the plane without a material takes the sphere's).
fn tray(model: &str) -> Scene {
    gpu_common::tray(
        "",
        &format!("rolling_friction = 0.3\nrolling_model = \"{model}\"\n"),
        "rolling_friction = 0.2\nrolling_damping = 0.5\n",
        "[[interaction]]\nmaterials = [\"glass\", \"steel\"]\nrolling_friction = 0.25\n",
    )
}

fn gpu(test: &str, scene: &Scene) -> Option<GpuBackend> {
    gpu_common::backend(scene, Precision::F64, test)
}

/// The tray under CDT and EPSD, 300 steps: the GPU f64 state equals the CPU's to
/// 1e-9 relative, the rolling torques acted (the state differs from the same run
/// without rolling resistance by far more), the loads on the planes and the tray
/// (with the rolling torques' reactions) equal the CPU's to the same bound, and under
/// EPSD the snapshot's rolling springs (pairs, planes, mesh slots) do too.
#[test]
fn rolling_tray_f64_matches_cpu() {
    let plain = {
        let mut scene = tray("cdt");
        for m in &mut scene.model.materials {
            m.rolling_friction = 0.0;
        }
        scene.model.interactions.clear();
        let mut c = CpuBackend::new(&scene).unwrap();
        c.advance(300).unwrap();
        c.particles().unwrap()
    };
    for model in ["cdt", "epsd"] {
        let scene = tray(model);
        let Some(mut g) = gpu("rolling_tray_f64_matches_cpu", &scene) else {
            return;
        };
        let mut c = CpuBackend::new(&scene).unwrap();
        c.advance(300).unwrap();
        g.advance(300).unwrap();
        let cp = c.particles().unwrap();
        let d = per_field(&cp, &g.particles().unwrap());
        let effect = per_field(&plain, &cp);
        eprintln!("{model}: GPU vs CPU {d:?}; with vs without rolling {effect:?}");
        for (k, v) in d.iter().enumerate() {
            assert!(*v <= 1e-9, "{model}: field {k}: {v}");
        }
        assert!(
            effect[3] > 1e-3,
            "{model}: rolling resistance had no effect: {effect:?}"
        );
        let (sc, sg) = (c.checkpoint_state().unwrap(), g.checkpoint_state().unwrap());
        let (cc, cg) = (sc.contacts.unwrap(), sg.contacts.unwrap());
        // The loads on the planes and the tray, rolling torques' reactions included.
        let flat = |l: &[[DVec3; 2]]| l.iter().flatten().copied().collect::<Vec<_>>();
        let dl = rel(&flat(&cc.wall_load), &flat(&cg.wall_load));
        eprintln!("{model}: wall loads GPU vs CPU {dl:e}");
        assert!(dl <= 1e-9, "{model}: wall loads differ by {dl:e}");
        if model == "epsd" {
            let used = |v: &[DVec3]| v.iter().filter(|s| s.length() > 0.0).count();
            eprintln!(
                "epsd rolling springs in use: pairs {}, planes {}, mesh {}",
                used(&cc.roll),
                used(&cc.roll_wall),
                used(&cc.roll_mesh)
            );
            assert!(used(&cc.roll) > 10 && used(&cc.roll_wall) > 0 && used(&cc.roll_mesh) > 0);
            for (name, a, b) in [
                ("pairs", &cc.roll, &cg.roll),
                ("planes", &cc.roll_wall, &cg.roll_wall),
                ("mesh", &cc.roll_mesh, &cg.roll_mesh),
            ] {
                let r = rel(a, b);
                assert!(r <= 1e-9, "epsd {name} rolling springs differ by {r:e}");
            }
        } else {
            assert!(cc.roll.iter().chain(&cg.roll).all(|s| *s == DVec3::ZERO));
        }
    }
}

/// EPSD on the GPU resumed from a snapshot taken at step 150 continues with the bits
/// of the uninterrupted run (the rolling springs of pairs, planes and mesh slots are
/// carried through the snapshot), and so does the CPU across backends' formats.
#[test]
fn epsd_gpu_resume_is_bitwise() {
    let scene = tray("epsd");
    let Some(mut a) = gpu("epsd_gpu_resume_is_bitwise", &scene) else {
        return;
    };
    a.advance(150).unwrap();
    let snap = a.checkpoint_state().unwrap();
    assert!(snap.contacts.as_ref().is_some_and(|c| !c.roll.is_empty()));
    let opts = GpuOptions {
        precision: Precision::F64,
        max_neighbors: Some(32),
        ..Default::default()
    };
    let ctx = gpu_common::context_for("epsd_gpu_resume_is_bitwise", Precision::F64).unwrap();
    let mut b = GpuBackend::restore(ctx, scene.model.clone(), &snap, &opts).unwrap();
    a.advance(150).unwrap();
    b.advance(150).unwrap();
    let (pa, pb) = (a.particles().unwrap(), b.particles().unwrap());
    assert_eq!(pa.position, pb.position);
    assert_eq!(pa.angular_velocity, pb.angular_velocity);
}

/// 27 clumps (dimers and trimers, rolling friction 0.3 under EPSD) thrown inward at
/// each other without gravity or walls: on the GPU in f64 the bodies' momentum and
/// angular momentum stay at their start to 10⁻¹² (the clump cluster's bound in
/// tests/gpu_clumps.rs) and the state equals the CPU's to 1e-9 relative; the rolling
/// torques of the clumps' spheres act on their bodies (the run differs from the one
/// without rolling resistance).
#[test]
fn clumps_with_rolling_resistance_match_the_cpu() {
    let material = "[[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\n\
        density = 2500.0\nrestitution = 0.5\nfriction_static = 0.4\n\
        rolling_friction = 0.3\nrolling_model = \"epsd\"\n";
    let shapes = common::CLUMP_SHAPES;
    let mut text = format!(
        "[simulation]\ndt = 2e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n{material}{shapes}"
    );
    for k in 0..27 {
        let (i, j, l) = (k % 3, (k / 3) % 3, k / 9);
        let x = (DVec3::new(i as f64, j as f64, l as f64) - DVec3::ONE) * 3.4e-3;
        let s = k as f64;
        let v = -x * 150.0 + 0.05 * DVec3::new(s.sin(), (1.7 * s).cos(), (0.3 * s).sin());
        let w = DVec3::new((k % 3) as f64, (k % 5) as f64 - 2.0, 1.0) * 30.0;
        let alpha = DVec3::new(0.1 * s, -0.05 * s, 0.3);
        let kind = if k % 2 == 0 { "dimer" } else { "trimer" };
        text.push_str(&common::clump_toml(kind, x, alpha, v, w));
    }
    let scene = parse_scene(&text).unwrap();
    let Some(mut g) = gpu("clumps_with_rolling_resistance_match_the_cpu", &scene) else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    let mut plain =
        CpuBackend::new(&parse_scene(&text.replace("rolling_friction = 0.3\n", "")).unwrap())
            .unwrap();
    let d0 = g.diagnostics().unwrap();
    for _ in 0..10 {
        g.advance(100).unwrap();
        c.advance(100).unwrap();
    }
    plain.advance(1000).unwrap();
    let d = g.diagnostics().unwrap();
    let scale_p = 27.0 * 1e-5 * 0.5;
    let scale_l = scale_p * 5e-3;
    let dp = (d.momentum - d0.momentum).length() / scale_p;
    let dl = (d.angular_momentum - d0.angular_momentum).length() / scale_l;
    let cp = c.particles().unwrap();
    let diff = per_field(&cp, &g.particles().unwrap());
    let effect = per_field(&plain.particles().unwrap(), &cp);
    eprintln!("clumps with EPSD: |Δp|/p = {dp:.2e}, |ΔL|/L = {dl:.2e}; GPU vs CPU {diff:?}; rolling's effect {effect:?}");
    assert!(dp < 1e-12 && dl < 1e-12, "{dp:e} {dl:e}");
    assert!(diff.iter().all(|&e| e <= 1e-9), "{diff:?}");
    assert!(effect[3] > 1e-3, "{effect:?}");
}

/// f32 (issue 50's "f32 deterministic"): the EPSD tray run twice on the GPU in f32
/// gives the same bits, and so does a resume from a snapshot at step 150
/// (`gpu_common::f32_deterministic`); it stays within the f32 pour's statistical bound
/// of the CPU (positions to 10⁻³ of the largest: 300 steps of a dense pour, where
/// rounding differences grow but stay far below a radius).
#[test]
fn rolling_f32_is_deterministic() {
    let scene = tray("epsd");
    let Some(mut g) =
        gpu_common::f32_deterministic(&scene, "rolling_f32_is_deterministic", 150, 150)
    else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    c.advance(300).unwrap();
    let d = per_field(&c.particles().unwrap(), &g.particles().unwrap());
    eprintln!("f32 vs CPU f64: {d:?}");
    assert!(d[0] < 1e-3, "{d:?}");
}

/// EPSD with an inserter (the GPU re-sets its storage up as particles arrive, carrying
/// the contact state through its snapshot): 3000 steps of beads rained every 10 ms
/// into a box of planes, the GPU f64 state within 1e-9 of the CPU's and the same
/// insertions, with rolling springs in use on pairs and planes.
#[test]
fn epsd_with_an_inserter_matches_the_cpu() {
    let text = common::inserter::pour(5000.0, 0.06, "")
        .replace("interval = 0.02", "interval = 0.01")
        .replace(
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
            "box = { min = [-0.02, -0.02, 0.005], max = [0.02, 0.02, 0.015] }",
        )
        .replace(
            "friction_dynamic = 0.4\n",
            "friction_dynamic = 0.4\nrolling_friction = 0.3\nrolling_model = \"epsd\"\n",
        );
    let scene = common::inserter::scene(&text);
    assert_eq!(
        scene.model.rolling(),
        Some(varidem::model::RollingModel::Epsd)
    );
    let Some(mut g) = gpu("epsd_with_an_inserter_matches_the_cpu", &scene) else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    for n in [1000u64, 999, 1001] {
        c.advance(n).unwrap();
        g.advance(n).unwrap();
    }
    let (a, b) = (c.particles().unwrap(), g.particles().unwrap());
    assert_eq!(a.flags, b.flags);
    assert_eq!(c.insertion_counts(), g.insertion_counts());
    let d = per_field(&a, &b);
    let cc = c.checkpoint_state().unwrap().contacts.unwrap();
    let used = |v: &[DVec3]| v.iter().filter(|s| s.length() > 0.0).count();
    eprintln!(
        "inserter with EPSD: {:?} inserted; GPU vs CPU {d:?}; rolling springs in use: pairs {}, planes {}",
        c.insertion_counts(),
        used(&cc.roll),
        used(&cc.roll_wall)
    );
    assert!(used(&cc.roll) > 10 && used(&cc.roll_wall) > 10);
    assert!(d.iter().all(|&e| e <= 1e-9), "{d:?}");
}
