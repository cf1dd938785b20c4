//! Mesh walls on the GPU (issue 26): a pour onto a mesh floor with an inserter, GPU f64
//! against the CPU (item 5's parity test).

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::inserter::{awake, pour, scene};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;

/// The inserter pour of `common::inserter` with its floor a mesh of 2·8² triangles
/// (beads land on faces, edges and corners), events every 2 ms; GPU f64 against the
/// CPU over 400 steps within 1e-9 of each field's largest value.
#[test]
fn pour_onto_a_mesh_with_an_inserter_f64_matches_cpu() {
    let n = 8;
    let mut vertices = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (
                -0.03 + 0.06 * i as f64 / n as f64,
                -0.03 + 0.06 * j as f64 / n as f64,
            );
            vertices.push(format!("[{x}, {y}, 0.0]"));
        }
    }
    let mut triangles = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            let (b, c, d) = (a + 1, a + n + 1, a + n + 2);
            triangles.push(format!("[{a}, {b}, {d}]"));
            triangles.push(format!("[{a}, {d}, {c}]"));
        }
    }
    let mesh = format!(
        "[[mesh]]\nname = \"floor\"\nvertices = [{}]\ntriangles = [{}]\nmaterial = \"glass\"\n",
        vertices.join(", "),
        triangles.join(", ")
    );
    let text = pour(20000.0, 0.008, &mesh)
        .replace("interval = 0.02", "interval = 0.002")
        .replace(
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
            "box = { min = [-0.025, -0.025, 0.0025], max = [0.025, 0.025, 0.012] }",
        )
        .replacen(
            "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\n",
            "",
            1,
        );
    let s = scene(&text);
    assert_eq!(s.model.meshes.len(), 1);
    assert_eq!(s.model.walls.len(), 4);
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "gpu_meshes_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    for steps in [37u64, 63, 1, 99, 200] {
        cpu.advance(steps).unwrap();
        gpu.advance(steps).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
    assert!(awake(&a) >= 100, "{}", awake(&a));
    // Beads rest on the mesh: some centre is within its radius of the floor.
    assert!((0..a.len())
        .any(|i| a.flags[i] & varidem::model::FLAG_DORMANT == 0 && a.position[i].z < a.radius[i]));
    let worst = gpu_common::per_field(&a, &b);
    eprintln!("mesh floor, GPU f64 against CPU after 400 steps (x, v, α, Ω): {worst:?}");
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    // The mesh history too.
    let (sa, sb) = (
        cpu.checkpoint_state().unwrap(),
        gpu.checkpoint_state().unwrap(),
    );
    let (ca, cb) = (sa.contacts.unwrap(), sb.contacts.unwrap());
    assert_eq!(ca.mesh_key, cb.mesh_key);
    assert!(ca.mesh_key.iter().any(|&k| k != u32::MAX));
}
