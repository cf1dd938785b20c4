//! Clump scenes (issue 24) on the backends: the CPU couples bodies to their spheres
//! (`tests/clump_cpu.rs`); the GPU does not yet, so it refuses a clump scene at set-up
//! with an error that says so, rather than running its spheres as loose particles or
//! dropping them (and `run` falls back to the CPU).

mod gpu_common;

use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::parse_scene;

const SCENE: &str = "[simulation]\ndt = 1e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n\
    [[material]]\nname = \"glass\"\nyoung = 6e10\npoisson = 0.2\ndensity = 2500.0\n\
    restitution = 0.5\nfriction_static = 0.4\n\
    [[clump_type]]\nname = \"dimer\"\n\
    spheres = [{ position = [-0.5e-3, 0.0, 0.0], radius = 1e-3 }, \
               { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
    [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.01]\n";

#[test]
fn the_gpu_refuses_clumps_until_it_couples_them() {
    let scene = parse_scene(SCENE).unwrap();
    assert!(CpuBackend::new(&scene).is_ok());
    let Some(ctx) = gpu_common::context_for("clump-scene-refused", Precision::F32) else {
        return;
    };
    let s = &scene.simulation;
    let Err(e) = GpuBackend::with_context(
        ctx,
        scene.model.clone(),
        s.integrator,
        s.dt,
        &GpuOptions::default(),
    ) else {
        panic!("the GPU ran a clump scene");
    };
    assert!(
        e.to_string()
            .contains("the GPU backend does not run clumps yet"),
        "{e}"
    );
}
