//! Particle insertion on the GPU (issue 26 item 3): against the CPU in f64, and
//! deterministic with bitwise resumes in f32.

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::inserter::{awake, pour, scene};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;

/// The GPU in f64 against the CPU over 200 steps of a pour whose inserter fires at
/// steps 0, 100 and 200 (every 2 ms) into a box of planes, within 1e-9 of each field's largest value:
/// both backends place the beads with the same host code from states that agree to
/// rounding, and the f64 kernels follow the CPU's arithmetic (measured: bitwise).
#[test]
fn gpu_f64_matches_cpu_in_a_pour_with_an_inserter() {
    let text = pour(20000.0, 0.004, "").replace("interval = 0.02", "interval = 0.002");
    let s = scene(&text);
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "insertion_gpu_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    // In uneven runs, across the events.
    for n in [37u64, 63, 1, 99] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    // Events of 40 beads 2 ms apart: the region is still crowded by the last batch,
    // so some are skipped (counted), the same ones on both backends.
    let counts = cpu.insertion_counts();
    assert_eq!(awake(&a) as u64, counts[0].inserted);
    assert!(counts[0].inserted >= 100, "{counts:?}");
    assert_eq!(a.flags, b.flags);
    let worst = gpu_common::per_field(&a, &b);
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
}

/// The GPU in f32: the same run twice gives the same bits, and a checkpoint taken
/// between events resumes to the same bits (the woken beads' flags live in the Kahan
/// terms' w there too).
#[test]
fn gpu_f32_insertion_is_deterministic_and_resumes_bitwise() {
    let text = pour(20000.0, 0.004, "").replace("interval = 0.02", "interval = 0.002");
    gpu_common::f32_deterministic(&scene(&text), "insertion_gpu_f32", 150, 150);
}

/// Hard contacts (Jacobi sweeps, on both backends): beads inserted every 50 steps onto a
/// floor, GPU f64 against the CPU over 150 steps within 1e-9 (relative), the same counts,
/// flags and wall loads.
#[test]
fn gpu_f64_matches_cpu_with_hard_contacts() {
    let s = scene(
        r#"
[simulation]
dt = 1e-4
steps = 150
integrator = "impulse-velocity"
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hard"
solver = "jacobi"

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.0
friction_static = 0.5
friction_dynamic = 0.4

[[inserter]]
box = { min = [-0.02, -0.02, 0.0025], max = [0.02, 0.02, 0.02] }
count = 15
interval = 0.005
radius = 0.002
material = "glass"
velocity = [0.0, 0.0, -0.5]
seed = 1

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
"#,
    );
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "insertion_gpu_hard_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    for n in [49u64, 2, 99] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
    assert!(awake(&a) >= 30, "{}", awake(&a));
    assert_eq!(a.flags, b.flags);
    let worst = gpu_common::per_field(&a, &b);
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    // Beads of the first batch are on the floor by now: the loads compare something.
    let loads = cpu.wall_loads().unwrap().unwrap();
    assert!(loads[0].force.z < 0.0, "{loads:?}");
    assert_eq!(Some(loads), gpu.wall_loads().unwrap());
}

/// The dimer pour of tests/insertion.rs with events every 2 ms, from just above the
/// floor (the first dimers land within the test's steps).
fn clump_pour_scene() -> varidem::model::Scene {
    scene(
        &(pour(7500.0, 0.006, "")
            .replace("interval = 0.02", "interval = 0.002")
            .replace(
                "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
                "box = { min = [-0.025, -0.025, 0.003], max = [0.025, 0.025, 0.012] }",
            )
            .replace(
                "radius = 0.002\nradius_jitter = 0.1\nmaterial = \"glass\"\n",
                "clump_type = \"dimer\"\n",
            )
            + "\n[[clump_type]]\nname = \"dimer\"\nspheres = [ { position = [-1.0e-3, 0.0, 0.0], radius = 1.5e-3 }, { position = [1.2e-3, 0.0, 0.0], radius = 1.2e-3 } ]\nmaterial = \"glass\"\n"),
    )
}

/// Clump inserters on the GPU: dimers inserted every 100 steps (at random attitudes),
/// GPU f64 against the CPU over 400 steps in uneven runs: the same counts and flags,
/// bodies within 1e-9 of each field's largest value (clumps agree to rounding, not
/// bits: tests/gpu_clumps.rs); f32: the same run twice and resumed between events
/// give the same bits.
#[test]
fn gpu_inserts_clumps_as_the_cpu() {
    let s = clump_pour_scene();
    assert!(s.model.inserters[0].clump.is_some());
    if let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "insertion_gpu_clumps_f64") {
        let mut cpu = CpuBackend::new(&s).unwrap();
        for n in [37u64, 63, 1, 99, 50, 150] {
            cpu.advance(n).unwrap();
            gpu.advance(n).unwrap();
        }
        assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
        assert_eq!(cpu.insertion_counts()[0].inserted, 60);
        let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
        assert_eq!(a.flags, b.flags);
        assert_eq!(awake(&a), 60);
        // The first dimers are on the floor: contacts are compared too.
        let loads = cpu.wall_loads().unwrap().unwrap();
        assert!(loads[0].force.z < 0.0, "{loads:?}");
        let worst = gpu_common::per_field(&a, &b);
        eprintln!("clump inserter, GPU f64 against CPU (x, v, α, Ω): {worst:?}");
        assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    }
    gpu_common::f32_deterministic(&s, "insertion_gpu_clumps_f32", 150, 100);
}
