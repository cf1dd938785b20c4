//! Mesh walls on the GPU (issue 26): a pour onto a mesh floor with an inserter, GPU f64
//! against the CPU (item 5's parity test), and the GPU in f32 deterministic with
//! bitwise resumes.

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::inserter::{awake, pour, scene};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;
use varidem::model::Scene;

/// The inserter pour of `common::inserter` with its floor a mesh of 2·8² triangles
/// (beads land on faces, edges and corners), events every 2 ms.
fn mesh_pour() -> Scene {
    mesh_pour_with("", "")
}

/// The vertices and triangles of a square grid of 2·`n`² triangles, side `side`
/// centred on the origin, `place(u, v)` writing the point at in-plane coordinates
/// (u, v) as a TOML array.
fn grid_mesh(n: usize, side: f64, place: impl Fn(f64, f64) -> String) -> (String, String) {
    let mut vertices = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let at = |k: usize| side * (k as f64 / n as f64 - 0.5);
            vertices.push(place(at(i), at(j)));
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
    (vertices.join(", "), triangles.join(", "))
}

/// The `[[mesh]]` "floor": 2·`n`² triangles over z = 0, |x|, |y| ≤ 3 cm.
fn floor_mesh(n: usize) -> String {
    let (vertices, triangles) = grid_mesh(n, 0.06, |x, y| format!("[{x}, {y}, 0.0]"));
    format!(
        "[[mesh]]\nname = \"floor\"\nvertices = [{vertices}]\ntriangles = [{triangles}]\nmaterial = \"glass\"\n"
    )
}

/// [`mesh_pour`] with `motion` added to the floor mesh and `extra` after it.
fn mesh_pour_with(motion: &str, extra: &str) -> Scene {
    let mesh = format!("{}{motion}\n{extra}\n", floor_mesh(8));
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
    assert_eq!(s.model.walls.len(), 4);
    s
}

/// Wall loads of the two backends: the same walls, forces and moments within 1e-12 of
/// the largest component. The contact forces are the CPU's bits, summed in its order
/// (measured: equal in these tests), but a long run can leave the last bit of a
/// moment apart (the drum after 2·10⁴ steps in f64: forces equal, moments 1 ulp; its
/// final.csv bitwise), so the check is rounding, not bits.
fn loads_agree(a: &[varidem::backend::WallLoad], b: &[varidem::backend::WallLoad]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.wall, y.wall);
        for (u, v) in [(x.force, y.force), (x.moment, y.moment)] {
            let scale = u.abs().max_element().max(1e-300);
            assert!(
                (u - v).abs().max_element() <= 1e-12 * scale,
                "{x:?} against {y:?}"
            );
        }
    }
}

/// [`mesh_pour`], GPU f64 against the CPU over 400 steps within 1e-9 of each field's
/// largest value (measured: bitwise), with the same mesh keys and wall loads (the
/// same contact forces summed in the same order: equal).
#[test]
fn pour_onto_a_mesh_with_an_inserter_f64_matches_cpu() {
    let s = mesh_pour();
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
    // walls.csv: the planes' and the mesh's loads, summed in the CPU's order.
    let (la, lb) = (cpu.wall_loads().unwrap(), gpu.wall_loads().unwrap());
    let (la, lb) = (la.unwrap(), lb.unwrap());
    assert_eq!(la.len(), 5);
    assert_eq!(la[4].wall, "floor");
    assert!(
        la[4].force.z < 0.0,
        "the beads press on the floor: {:?}",
        la[4]
    );
    assert_eq!(la, lb);
}

/// [`mesh_pour`] on the GPU in f32: the same run twice gives the same bits, a checkpoint
/// resumes to them (the mesh slots are in it), and the pour lands on the mesh as on
/// the CPU (the same beads awake; mean height within 2 % of the CPU's, a statistic:
/// f32 rounding changes which spot a later bead takes).
#[test]
fn pour_onto_a_mesh_f32_is_deterministic_and_resumes_bitwise() {
    let s = mesh_pour();
    let Some(mut a) = gpu_common::f32_deterministic(&s, "gpu_meshes_f32", 250, 150) else {
        return;
    };
    let end = a.checkpoint_state().unwrap();
    assert!(end
        .contacts
        .as_ref()
        .unwrap()
        .mesh_key
        .iter()
        .any(|&k| k != u32::MAX));
    let mut cpu = CpuBackend::new(&s).unwrap();
    cpu.advance(400).unwrap();
    let (pc, pg) = (cpu.particles().unwrap(), a.particles().unwrap());
    assert_eq!(awake(&pc), awake(&pg));
    let mean_z = |p: &varidem::model::Particles| {
        let up: Vec<f64> = (0..p.len())
            .filter(|&i| p.flags[i] & varidem::model::FLAG_DORMANT == 0)
            .map(|i| p.position[i].z)
            .collect();
        up.iter().sum::<f64>() / up.len() as f64
    };
    let (zc, zg) = (mean_z(&pc), mean_z(&pg));
    eprintln!("mesh floor f32: mean height GPU {zg:.6e}, CPU {zc:.6e}");
    assert!((zg - zc).abs() <= 0.02 * zc, "{zg} against {zc}");
}

/// Moving meshes on the GPU: [`mesh_pour`] with the floor rising at 0.1 m/s and
/// turning at (4, 0, 30) rad/s about the origin (it tilts and spins under the beads), and
/// a second mesh at rest, a ramp across the box that beads land on; GPU f64 against the CPU over
/// 400 steps in runs across batch and pose-slot boundaries: within 1e-9 of each field's
/// largest value (measured: bitwise), the same mesh keys and wall loads; in f32, the
/// same run twice and resumed at step 230 give the same bits.
#[test]
fn pour_onto_a_moving_mesh_f64_matches_cpu() {
    let s = mesh_pour_with(
        "velocity = [0.0, 0.0, 0.1]\nangular_velocity = [4.0, 0.0, 30.0]\naxis_point = [0.0, 0.0, 0.0]",
        "[[mesh]]\nname = \"plate\"\nvertices = [[0.006, -0.03, 0.0], [0.006, 0.03, 0.0], [0.025, 0.03, 0.012], [0.025, -0.03, 0.012]]\ntriangles = [[0, 1, 2], [0, 2, 3]]\nmaterial = \"glass\"",
    );
    assert_eq!(s.model.meshes.len(), 2);
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "gpu_moving_meshes_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    for steps in [37u64, 63, 1, 64, 35, 200] {
        cpu.advance(steps).unwrap();
        gpu.advance(steps).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
    let worst = gpu_common::per_field(&a, &b);
    eprintln!("moving mesh floor, GPU f64 against CPU after 400 steps (x, v, α, Ω): {worst:?}");
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    let (sa, sb) = (
        cpu.checkpoint_state().unwrap(),
        gpu.checkpoint_state().unwrap(),
    );
    let (ca, cb) = (sa.contacts.unwrap(), sb.contacts.unwrap());
    assert_eq!(ca.mesh_key, cb.mesh_key);
    // Beads touch both meshes.
    let nt_floor = 2 * 8 * 8;
    assert!(ca
        .mesh_key
        .iter()
        .any(|&k| k != u32::MAX && k / 8 < nt_floor));
    assert!(ca
        .mesh_key
        .iter()
        .any(|&k| k != u32::MAX && k / 8 >= nt_floor));
    let (la, lb) = (cpu.wall_loads().unwrap(), gpu.wall_loads().unwrap());
    let (la, lb) = (la.unwrap(), lb.unwrap());
    assert_eq!((la[5].wall.as_str(), la.len()), ("plate", 6));
    loads_agree(&la, &lb);
    // In f32 the moving-mesh run is deterministic and resumes bitwise (item 2).
    gpu_common::f32_deterministic(&s, "gpu_moving_meshes_f32", 230, 170);
}

/// The binder law on meshes: the torus impact (scenes/torus-impact.toml) with its wall
/// replaced by a mesh of 2·4² triangles in the same plane (the ring meets faces,
/// edges and corners) coming to meet it at 1 m/s and turning slowly about z; GPU f64
/// against the CPU over 200 steps of the impact within 1e-9 (measured: x and v
/// bitwise, α 3.5e-18 and Ω 3.6e-17 of their largest values), and the loads.
#[test]
fn binder_law_on_a_moving_mesh_f64_matches_cpu() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/torus-impact.toml");
    let (vertices, triangles) = grid_mesh(4, 2.4, |y, z| format!("[0.0, {y}, {z}]"));
    let mesh = format!(
        "[[mesh]]\nname = \"plate\"\nvertices = [{vertices}]\ntriangles = [{triangles}]\nvelocity = [1.0, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, 0.05]\naxis_point = [0.0, 0.0, 0.0]\n"
    );
    let text = std::fs::read_to_string(path).unwrap().replace(
        "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]   # the domain is x > 0\n",
        &mesh,
    );
    let s = scene(&text);
    assert_eq!((s.model.walls.len(), s.model.meshes.len()), (0, 1));
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "gpu_meshes_binder_f64") else {
        return;
    };
    let mut cpu = CpuBackend::new(&s).unwrap();
    for n in [30u64, 64, 106] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    let worst = gpu_common::per_field(&a, &b);
    eprintln!("binder torus on a moving mesh, GPU f64 against CPU (x, v, α, Ω): {worst:?}");
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    let (la, lb) = (
        cpu.wall_loads().unwrap().unwrap(),
        gpu.wall_loads().unwrap().unwrap(),
    );
    assert!(la[0].force.x < 0.0, "the ring presses on the plate: {la:?}");
    loads_agree(&la, &lb);
}

/// The hard-contact pour onto the mesh floor: beads inserted every 50 steps, `solver`,
/// `motion` added to the floor and `extra` after it.
fn hard_pour(solver: &str, motion: &str, extra: &str) -> Scene {
    scene(&hard_pour_text(solver, motion, extra))
}

/// The scene text of [`hard_pour`].
fn hard_pour_text(solver: &str, motion: &str, extra: &str) -> String {
    format!(
        r#"
[simulation]
dt = 1e-4
steps = 150
integrator = "impulse-velocity"
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hard"
solver = "{solver}"

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.0
friction_static = 0.5
friction_dynamic = 0.4

[[inserter]]
box = {{ min = [-0.02, -0.02, 0.0025], max = [0.02, 0.02, 0.02] }}
count = 15
interval = 0.005
radius = 0.002
material = "glass"
velocity = [0.0, 0.0, -0.5]
seed = 1

{}{motion}
{extra}
"#,
        floor_mesh(8)
    )
}

/// GPU f64 against the CPU over 150 steps of `s` (runs of 49, 2, 99): the same counts
/// and flags, 1e-9 of each field's largest value, and the loads (returned; `None`
/// without an adapter).
fn hard_parity(s: &Scene, test: &str) -> Option<Vec<varidem::backend::WallLoad>> {
    let mut gpu = gpu_common::backend(s, Precision::F64, test)?;
    let mut cpu = CpuBackend::new(s).unwrap();
    for n in [49u64, 2, 99] {
        cpu.advance(n).unwrap();
        gpu.advance(n).unwrap();
    }
    let (a, b) = (cpu.particles().unwrap(), gpu.particles().unwrap());
    assert_eq!(cpu.insertion_counts(), gpu.insertion_counts());
    assert!(awake(&a) >= 30, "{}", awake(&a));
    assert_eq!(a.flags, b.flags);
    let worst = gpu_common::per_field(&a, &b);
    eprintln!("{test}: GPU f64 against CPU (x, v, α, Ω): {worst:?}");
    assert!(worst.iter().all(|&d| d <= 1e-9), "{worst:?}");
    // Beads of the first batch rest on the floor: the loads compare something.
    let (la, lb) = (
        cpu.wall_loads().unwrap().unwrap(),
        gpu.wall_loads().unwrap().unwrap(),
    );
    assert!(la.iter().any(|l| l.force.z < 0.0), "{la:?}");
    loads_agree(&la, &lb);
    Some(la)
}

/// Hard contacts on a mesh at rest: beads inserted every 50 steps onto the mesh floor
/// (Jacobi sweeps, then the colored solver), GPU f64 against the CPU over 150 steps
/// within 1e-9 of each field's largest value, the same counts and flags, and the loads.
#[test]
fn hard_contacts_on_a_mesh_f64_match_cpu() {
    for solver in ["jacobi", "colored"] {
        hard_parity(
            &hard_pour(solver, "", ""),
            &format!("gpu_meshes_hard_{solver}_f64"),
        );
    }
}

/// Hard contacts with moving walls: the mesh floor rising at 2 cm/s and turning at
/// 3 rad/s about z, and a plane closing in from the side at 0.5 m/s (its surface
/// velocity enters each contact's relative velocity and margin), GPU f64 against the
/// CPU as [`hard_contacts_on_a_mesh_f64_match_cpu`].
#[test]
fn hard_contacts_with_moving_walls_f64_match_cpu() {
    let s = hard_pour(
        "colored",
        "velocity = [0.0, 0.0, 0.02]\nangular_velocity = [0.0, 0.0, 3.0]\naxis_point = [0.0, 0.0, 0.0]",
        "[[wall]]\npoint = [0.0225, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\nvelocity = [-0.5, 0.0, 0.0]\nmaterial = \"glass\"",
    );
    let loads = hard_parity(&s, "gpu_meshes_hard_moving_f64");
    // The side wall pushes beads (it closes 7.5 mm in).
    assert!(
        loads.as_ref().is_none_or(|l| l[0].force.x > 0.0),
        "{loads:?}"
    );
}

/// Item 5's first check on the GPU (f64): the bead of tests/mesh_walls.rs on a plane
/// and on the same plane as two triangles, started 1 cm from their shared diagonal so
/// that it crosses it within 3000 steps (sliding and spinning across the edge, where
/// its spring is handed from one face to the other), Hertz and binder laws: after 6000
/// steps the two runs agree within the CPU test's bounds (x, v 1e-12; Ω 3e-11), and
/// each equals the CPU's run of its floor to rounding.
#[test]
fn a_plane_and_two_triangles_give_one_trajectory_on_the_gpu() {
    use common::bead::{bead_scene, PLANE, SQUARE_MESH};
    let steps = 6000;
    for law in ["hertz", "binder"] {
        let run = |floor: &str| {
            let text = bead_scene(floor, law, steps).replace(
                "position = [-0.3, 0.2, 0.0199]",
                "position = [0.0, 0.01, 0.0199]",
            );
            let s = scene(&text);
            let mut gpu = gpu_common::backend(&s, Precision::F64, "gpu_meshes_bead_f64")?;
            gpu.advance(steps).unwrap();
            let mut cpu = CpuBackend::new(&s).unwrap();
            cpu.advance(steps).unwrap();
            let (g, c) = (gpu.particles().unwrap(), cpu.particles().unwrap());
            let worst = gpu_common::per_field(&g, &c);
            assert!(worst.iter().all(|&d| d <= 1e-9), "{law} {floor}: {worst:?}");
            Some(g)
        };
        let (Some(a), Some(b)) = (run(PLANE), run(SQUARE_MESH)) else {
            return;
        };
        // It crossed y = x (from y − x = 0.01).
        assert!(
            a.position[0].y - a.position[0].x < 0.0,
            "{law}: {:?}",
            a.position[0]
        );
        let d = [
            (a.position[0] - b.position[0]).length(),
            (a.velocity[0] - b.velocity[0]).length(),
            (a.angular_velocity[0] - b.angular_velocity[0]).length(),
        ];
        eprintln!("{law} on the GPU, plane against two triangles: |Δx|, |Δv|, |ΔΩ| = {d:?}");
        assert!(
            d[0] <= 1e-12 && d[1] <= 1e-12 && d[2] <= 3e-11,
            "{law}: {d:?}"
        );
    }
}

/// The GPU's mesh cell grid is built once, reaching twice the largest radius beyond it
/// in hard-contact scenes: beads thrown at the floor at 30 m/s (2 mm beads, h = 0.1 ms,
/// so the margin needs a skin of 4h·30 m/s = 12 mm > 4 mm) stop the run with the
/// named fault rather than missing triangles; the CPU, whose mesh lists grow, runs on.
#[test]
fn hard_contacts_faster_than_the_mesh_grid_reaches_are_a_named_fault() {
    let fast = scene(&hard_pour_text("jacobi", "", "").replace(
        "velocity = [0.0, 0.0, -0.5]",
        "velocity = [0.0, 0.0, -30.0]",
    ));
    let Some(mut gpu) = gpu_common::backend(&fast, Precision::F64, "gpu_meshes_hard_fast") else {
        return;
    };
    let e = gpu.advance(150).unwrap_err();
    assert!(
        matches!(
            &e,
            varidem::Error::Fault {
                fault: varidem::error::Fault::HardMarginBeyondMeshGrid { .. },
                ..
            }
        ),
        "{e}"
    );
    eprintln!("{e}");
    let mut cpu = CpuBackend::new(&fast).unwrap();
    cpu.advance(150).unwrap();
}

/// Issue 49, item 11, on a mesh: the beads of `tests/failure.rs` falling onto a mesh
/// floor with a time step ~100 collision durations long stop at step 1 with the CPU's
/// overlap fault, naming the lowest landing bead and `mesh[1]`, in f64 and f32.
#[test]
fn an_overlap_with_a_mesh_is_the_cpus_fault_on_the_gpu() {
    use common::overlap::{onto, FIRST_LANDING, MESH};
    use varidem::error::{Contacted, Error, Fault};
    let s = varidem::io::parse_scene(&onto(MESH)).unwrap();
    let cpu = CpuBackend::new(&s)
        .and_then(|mut c| c.advance(20))
        .unwrap_err();
    for precision in [Precision::F64, Precision::F32] {
        let Some(mut gpu) = gpu_common::backend(&s, precision, "gpu_meshes_overlap") else {
            return;
        };
        let err = gpu.advance(20).unwrap_err();
        eprintln!("{precision:?}: gpu: {err}\ncpu: {cpu}");
        let named = |e: &Error| match e {
            Error::Fault {
                step,
                fault:
                    Fault::Overlap {
                        particle,
                        other,
                        limit,
                        dt,
                        recommended_dt,
                        ..
                    },
            } => Some((*step, *particle, *other, *limit, *dt, *recommended_dt)),
            _ => None,
        };
        let g = named(&err).unwrap_or_else(|| panic!("not an overlap fault: {err}"));
        assert_eq!(Some(g), named(&cpu));
        assert_eq!((g.0, g.1, g.2), (1, FIRST_LANDING, Contacted::Mesh(1)));
    }
}
