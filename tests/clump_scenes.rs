//! Clump scenes (issue 24) on the backends. The scene format, the mass properties and
//! the full-tensor integrator are in; the body–sphere coupling of the backends is not,
//! so each backend refuses a clump scene at set-up with an error that says so, rather
//! than running its spheres as loose particles or dropping them.

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
fn both_backends_refuse_clumps_until_they_couple_them() {
    let scene = parse_scene(SCENE).unwrap();
    let Err(e) = CpuBackend::new(&scene) else {
        panic!("the CPU ran a clump scene");
    };
    assert!(
        e.to_string()
            .contains("the CPU backend does not run clumps yet"),
        "{e}"
    );
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
