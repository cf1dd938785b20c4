//! Moving plane walls on the GPU (issue 26 item 2): against the CPU in f64, and
//! deterministic with bitwise resumes in f32.

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::inserter::{pour, scene};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;
use varidem::model::Scene;

/// The inserter pour into the glass box, but with the +x side wall closing in at
/// 1.5 m/s from step 100 and the floor turning about the y axis through (0, 0, 0)
/// at 2 rad/s: a plane that translates and one that rotates, both dragging the beads
/// (their surface velocity enters the damping and the tangential springs). 350 steps:
/// the beads of the first batch land on the floor by step 150.
fn moving_box() -> Scene {
    let text = pour(20000.0, 0.007, "")
        .replace("interval = 0.02", "interval = 0.002")
        .replace(
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
            "box = { min = [-0.028, -0.02, 0.0025], max = [0.028, 0.02, 0.008] }",
        )
        .replace(
            "point = [0.03, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\nmaterial = \"glass\"",
            "point = [0.03, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\nmaterial = \"glass\"\nvelocity = [-1.5, 0.0, 0.0]\nstart = 0.002",
        )
        .replace(
            "point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"",
            "point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\nangular_velocity = [0.0, 2.0, 0.0]",
        );
    let s = scene(&text);
    assert_eq!(
        s.model
            .walls
            .iter()
            .filter(|w| !w.motion.is_static())
            .count(),
        2
    );
    s
}

/// The GPU in f64 follows the CPU within 1e-9 of each field's largest value over 350 steps (in uneven
/// runs, across batch and pose-slot boundaries): the poses are computed by the same
/// host code and the surface velocity by the same expression.
#[test]
fn moving_walls_f64_match_cpu() {
    let s = moving_box();
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "gpu_walls_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    for n in [1u64, 63, 64, 100, 57, 65] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    // The walls did touch: some bead is within its radius of the turning floor and of
    // the closing side.
    for w in [0, 2] {
        let wall = s.model.walls[w].placed(&s.model.walls[w].motion.pose(cpu.time()));
        assert!(
            (0..a.len()).any(|i| wall.distance(a.position[i]) < a.radius[i]),
            "wall {w}"
        );
    }
    let worst = gpu_common::per_field(&a, &b);
    eprintln!("moving walls, GPU f64 against CPU after 350 steps (x, v, α, Ω): {worst:?}");
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    // walls.csv: the evaluation's contact forces summed as the CPU sums them.
    let (la, lb) = (
        cpu.wall_loads().unwrap().unwrap(),
        gpu.wall_loads().unwrap().unwrap(),
    );
    assert!(la[0].force.z < 0.0 && la[2].force.x > 0.0, "{la:?}");
    assert_eq!(la, lb);
}

/// In f32 the same run twice gives the same bits, and a resume at step 150 too.
#[test]
fn moving_walls_f32_are_deterministic_and_resume_bitwise() {
    gpu_common::f32_deterministic(&moving_box(), "gpu_walls_f32", 150, 200);
}

/// Under the binder law a moving wall is placed at each step (the law does not depend
/// on its velocity): the torus impact with the wall coming to meet the ring at 1 m/s
/// and turning slowly about z, GPU f64 against CPU over 200 steps of the impact.
#[test]
fn moving_walls_under_the_binder_law_f64_match_cpu() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/torus-impact.toml");
    let text = std::fs::read_to_string(path).unwrap().replace(
        "normal = [1.0, 0.0, 0.0]   # the domain is x > 0",
        "normal = [1.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, 0.05]\naxis_point = [0.0, 0.0, 0.0]",
    );
    let s = scene(&text);
    assert!(!s.model.walls[0].motion.is_static());
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "gpu_walls_binder_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    // The gap of 0.05 m closes at 2 m/s in 25 steps: 200 steps of pressing.
    for n in [30u64, 64, 106] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    let wall = s.model.walls[0].placed(&s.model.walls[0].motion.pose(cpu.time()));
    assert!((0..a.len()).any(|i| wall.distance(a.position[i]) < a.radius[i]));
    let worst = gpu_common::per_field(&a, &b);
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    let (la, lb) = (
        cpu.wall_loads().unwrap().unwrap(),
        gpu.wall_loads().unwrap().unwrap(),
    );
    assert!(la[0].force.x < 0.0, "{la:?}");
    assert_eq!(la, lb);
}
