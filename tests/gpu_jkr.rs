//! JKR cohesion (issue 50) on the GPU against the CPU reference (lavapipe in CI): a
//! cohesive pour onto a turning mesh tray with a plane closing in, and a pair pulled
//! apart through its break.
//!
//! Tolerance: as tests/gpu_rolling.rs, the f64 kernels perform the CPU's operations in
//! the same order except the cube roots (WGSL has none: `pow` through `exp` and `ln`,
//! the CPU's `cbrt`), a few ulps apart, so 1e-9 relative over the run leaves orders of
//! magnitude of room.

mod gpu_common;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;
use varidem::io::parse_scene;
use varidem::model::Scene;

mod common;

use gpu_common::{per_field, rel};

/// 80 spheres in two materials (γ 0.2 and 0.05 J/m²: √(γ_aγ_b) = 0.1 between them)
/// poured onto a turning two-triangle tray (a mesh) with a plane closing in from the
/// side and a floor plane below the tray's edge, with JKR cohesion and EPSD rolling
/// resistance on one material.
fn tray() -> Scene {
    let mut scene = gpu_common::tray(
        "cohesion = \"jkr\"\n",
        "surface_energy = 0.2\nrolling_friction = 0.3\nrolling_model = \"epsd\"\n",
        "surface_energy = 0.05\n",
        "",
    );
    // Thrown at the tray and at each other, so that contacts form and break.
    let p = &mut scene.model.particles;
    for i in 0..p.len() {
        let s = i as f64;
        p.velocity[i] += 0.3 * DVec3::new(s.sin(), (2.0 * s).cos(), -(s * 0.7).cos().abs());
    }
    scene
}

/// The cohesive tray, 300 steps: the GPU f64 state equals the CPU's to 1e-9
/// relative, cohesion acted (the state differs from the run without it by far more),
/// the loads on the planes and the tray equal the CPU's to the same bound, and the
/// planes' held flags are the CPU's.
#[test]
fn jkr_tray_f64_matches_cpu() {
    let plain = {
        let mut scene = tray();
        for m in &mut scene.model.materials {
            m.surface_energy = 0.0;
        }
        let mut c = CpuBackend::new(&scene).unwrap();
        c.advance(300).unwrap();
        c.particles().unwrap()
    };
    let scene = tray();
    let Some(mut g) = gpu_common::backend(&scene, Precision::F64, "jkr_tray_f64_matches_cpu")
    else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    c.advance(300).unwrap();
    g.advance(300).unwrap();
    let cp = c.particles().unwrap();
    let d = per_field(&cp, &g.particles().unwrap());
    let effect = per_field(&plain, &cp);
    eprintln!("GPU vs CPU {d:?}; with vs without cohesion {effect:?}");
    for (k, v) in d.iter().enumerate() {
        assert!(*v <= 1e-9, "field {k}: {v}");
    }
    assert!(effect[0] > 1e-6, "cohesion had no effect: {effect:?}");
    let (sc, sg) = (c.checkpoint_state().unwrap(), g.checkpoint_state().unwrap());
    let (cc, cg) = (sc.contacts.unwrap(), sg.contacts.unwrap());
    let flat = |l: &[[DVec3; 2]]| l.iter().flatten().copied().collect::<Vec<_>>();
    let dl = rel(&flat(&cc.wall_load), &flat(&cg.wall_load));
    eprintln!(
        "wall loads GPU vs CPU {dl:e}; planes held {}",
        cc.wall_held.iter().filter(|&&f| f != 0).count()
    );
    assert!(dl <= 1e-9, "wall loads differ by {dl:e}");
    assert!(cc.wall_held.iter().any(|&f| f != 0));
    assert_eq!(cc.wall_held, cg.wall_held);
}

/// A pair of 1 mm spheres drawn apart at 1 mm/s through the pull-off separation: the
/// GPU holds the contact in tension and breaks it at the CPU's step (the forces of
/// every step agree to 1e-9 of the pull-off force).
#[test]
fn jkr_pair_breaks_at_the_cpus_step() {
    let text = "[simulation]\ndt = 1e-7\nsteps = 1\n\
         [contact]\nlaw = \"hertz\"\ncohesion = \"jkr\"\n\
         [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = 2500.0\n\
         restitution = 0.7\nfriction_static = 0.5\nsurface_energy = 0.05\n\
         [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.001\nmass = 1.0\ninertia = 1e-6\n\
         velocity = [-0.0005, 0.0, 0.0]\n\
         [[particle]]\nposition = [0.0019999, 0.0, 0.0]\nradius = 0.001\nmass = 1.0\ninertia = 1e-6\n\
         velocity = [0.0005, 0.0, 0.0]\n";
    let scene = parse_scene(text).unwrap();
    let Some(mut g) =
        gpu_common::backend(&scene, Precision::F64, "jkr_pair_breaks_at_the_cpus_step")
    else {
        return;
    };
    let mut c = CpuBackend::new(&scene).unwrap();
    let po = varidem::physics::jkr::pull_off_force(0.0005, 0.05);
    let mut broke = None;
    for step in 0..40 {
        c.advance(100).unwrap();
        g.advance(100).unwrap();
        let fc = c.checkpoint_state().unwrap().contacts.unwrap().force[0];
        let fg = g.checkpoint_state().unwrap().contacts.unwrap().force[0];
        assert!((fc - fg).length() <= 1e-9 * po, "step {step}: {fc} vs {fg}");
        if fc == DVec3::ZERO && broke.is_none() {
            broke = Some(step);
        }
    }
    let step = broke.expect("the pair never let go");
    eprintln!("broke in block {step} of 100 steps");
    assert!(step > 20, "broke at block {step}: not held in tension");
}

/// In f32 the cohesive tray is deterministic: the same run twice, and a run resumed
/// from its checkpoint (held flags included), give the same bits.
#[test]
fn jkr_tray_f32_is_deterministic() {
    gpu_common::f32_deterministic(&tray(), "jkr_tray_f32_is_deterministic", 100, 100);
}
