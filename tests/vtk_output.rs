//! The ParaView output of `run`: `particles.pvd` and the `vtk/*.vtp` frames, read back
//! with an independent reader (the `vtkio` crate) and checked against the CPU backend
//! stepped alongside, `energy.csv` and `final.csv`.
//!
//! Tolerances: the arrays are `Float64`, so state, force and moment values must come
//! back bit for bit. The bond strain energies sum to `e_bend + e_axial + e_shear` of the
//! `energy.csv` row up to the order of summation: 1e-12 relative. The GPU (f64 kernels)
//! agrees with the CPU to ≤ 1e-10 in positions (the state bound of `gpu_parity.rs`)
//! and ≤ 1e-12 in forces, moments, velocities and rotations, each relative to the
//! largest value of its array (measured: equal forces and velocities, moments 3.3e-16,
//! rotations 7e-20: the f64 kernels differ from the CPU by rounding only).

mod gpu_common;

use std::path::Path;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::{parse_scene, read_energy_csv, read_final_csv};
use varidem::model::Scene;
use varidem::run::run;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, PolyDataPiece, VertexNumbers};

/// A three-particle bonded chain pressed against a wall (particle 0 starts touching
/// it) and falling on a loose fourth particle that touches particle 2; the chain spins
/// so rotations are not trivial. 22 steps, output every 5: frames at 0, 5, …, 20, 22.
const SCENE: &str = r#"
[simulation]
dt = 1e-3
steps = 22
output_every = 5
gravity = [-9.81, 0.0, 0.0]
[binder]
k_bend = 10.0
k_axial = 200.0
k_shear = 200.0
[contact]
law = "binder"
k_pp = 2100.0
max_initial_overlap = 1.0
[[particle]]
position = [0.095, 0.0, 0.0]
velocity = [-0.5, 0.1, 0.0]
angular_velocity = [0.0, 0.0, 3.0]
mass = 1.0
radius = 0.1
[[particle]]
position = [0.295, 0.01, 0.0]
velocity = [-0.5, 0.0, 0.2]
angular_velocity = [1.0, 0.0, 0.0]
mass = 1.0
radius = 0.1
[[particle]]
position = [0.495, 0.0, 0.01]
velocity = [-0.5, 0.0, 0.0]
rotation = [0.1, -0.2, 0.3]
mass = 1.0
radius = 0.1
[[particle]]
position = [0.49, 0.19, 0.0]
mass = 0.5
radius = 0.1
[[bond]]
i = 0
j = 1
[[bond]]
i = 1
j = 2
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
"#;

const FRAME_STEPS: [u64; 6] = [0, 5, 10, 15, 20, 22];

/// `(timestep, file)` of every `<DataSet>` of a `.pvd`, in file order.
fn read_pvd(path: &Path) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("<?xml"), "{text}");
    assert!(text.contains("<VTKFile type=\"Collection\""), "{text}");
    assert!(text.trim_end().ends_with("</VTKFile>"), "{text}");
    let attr = |tag: &str, name: &str| -> String {
        let key = format!(" {name}=\"");
        let start = tag.find(&key).unwrap() + key.len();
        let len = tag[start..].find('"').unwrap();
        tag[start..start + len].to_string()
    };
    text.split("<DataSet")
        .skip(1)
        .map(|tag| {
            let tag = &tag[..tag.find("/>").unwrap()];
            (attr(tag, "timestep").parse().unwrap(), attr(tag, "file"))
        })
        .collect()
}

/// The one inline piece of a `.vtp` file, read by vtkio.
fn read_vtp(path: &Path) -> PolyDataPiece {
    let vtk = vtkio::Vtk::import(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let DataSet::PolyData { mut pieces, .. } = vtk.data else {
        panic!("{}: not PolyData", path.display());
    };
    assert_eq!(pieces.len(), 1);
    match pieces.remove(0) {
        Piece::Inline(p) => *p,
        _ => panic!("{}: piece not inline", path.display()),
    }
}

fn array<'a>(attrs: &'a [Attribute], name: &str) -> (&'a IOBuffer, usize) {
    for a in attrs {
        if let Attribute::DataArray(d) = a {
            if d.name == name {
                return (&d.data, d.num_comp());
            }
        }
    }
    panic!("no array {name}");
}

fn f64s(attrs: &[Attribute], name: &str) -> Vec<f64> {
    let (data, comp) = array(attrs, name);
    assert_eq!(comp, 1, "{name}");
    match data {
        IOBuffer::F64(v) => v.clone(),
        other => panic!("{name}: not Float64 but {:?}", other.scalar_type()),
    }
}

fn i32s(attrs: &[Attribute], name: &str) -> Vec<i32> {
    let (data, comp) = array(attrs, name);
    assert_eq!(comp, 1, "{name}");
    match data {
        IOBuffer::I32(v) => v.clone(),
        other => panic!("{name}: not Int32 but {:?}", other.scalar_type()),
    }
}

fn vec3s_of(data: &IOBuffer, name: &str) -> Vec<DVec3> {
    match data {
        IOBuffer::F64(v) => v
            .chunks_exact(3)
            .map(|c| DVec3::new(c[0], c[1], c[2]))
            .collect(),
        other => panic!("{name}: not Float64 but {:?}", other.scalar_type()),
    }
}

fn vec3s(attrs: &[Attribute], name: &str) -> Vec<DVec3> {
    let (data, comp) = array(attrs, name);
    assert_eq!(comp, 3, "{name}");
    vec3s_of(data, name)
}

fn topology(v: &Option<VertexNumbers>) -> (Vec<u64>, Vec<u64>) {
    match v {
        Some(VertexNumbers::XML {
            connectivity,
            offsets,
        }) => (connectivity.clone(), offsets.clone()),
        other => panic!("unexpected topology {other:?}"),
    }
}

/// Touching contacts by brute force: pairs with |x_i − x_j| < r_i + r_j, plus walls
/// closer than r_i.
fn brute_force_contacts(scene: &Scene, x: &[DVec3]) -> Vec<i32> {
    let r = &scene.model.particles.radius;
    (0..x.len())
        .map(|i| {
            let pairs = (0..x.len())
                .filter(|&j| j != i && x[i].distance(x[j]) < r[i] + r[j])
                .count();
            let walls = scene
                .model
                .walls
                .iter()
                .filter(|w| w.distance(x[i]) < r[i])
                .count();
            (pairs + walls) as i32
        })
        .collect()
}

fn assert_rel(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * a.abs().max(b.abs()),
        "{what}: {a:e} vs {b:e}"
    );
}

/// A CPU run writes one frame per energy row; every array reads back with vtkio and
/// equals the CPU backend's state, forces, bonds and energies at that step.
#[test]
fn cpu_run_writes_frames_that_read_back_exactly() {
    let scene = parse_scene(SCENE).unwrap();
    let n = scene.model.particles.len();
    let bonds = &scene.model.bonds;
    let dir = tempfile::tempdir().unwrap();
    let mut backend = CpuBackend::new(&scene).unwrap();
    let summary = run(&scene, &mut backend, dir.path()).unwrap();
    let pvd_path = dir.path().join("particles.pvd");
    assert_eq!(summary.pvd.as_deref(), Some(pvd_path.as_path()));
    assert!(
        !dir.path().join("particles.pvd.tmp").exists(),
        "the temporary .pvd is renamed"
    );

    // The collection: one data set per energy.csv row, at the row's time.
    let energy = read_energy_csv(&summary.energy_csv).unwrap();
    let steps = energy.column("step").unwrap();
    let times = energy.column("t").unwrap();
    assert_eq!(steps, FRAME_STEPS.map(|s| s as f64));
    let pvd = read_pvd(&pvd_path);
    assert_eq!(pvd.len(), FRAME_STEPS.len());
    for (k, (t, file)) in pvd.iter().enumerate() {
        assert_eq!(file, &format!("vtk/particles_{:08}.vtp", FRAME_STEPS[k]));
        assert_eq!(t.to_bits(), times[k].to_bits(), "time of frame {k}");
    }

    // A reference backend stepped to each output step.
    let mut reference = CpuBackend::new(&scene).unwrap();
    let mut pressed = 0;
    for (k, &step) in FRAME_STEPS.iter().enumerate() {
        reference
            .advance(step - reference.step_count())
            .expect("reference steps");
        let p = reference.particles().unwrap();
        let forces = reference.particle_forces();
        let piece = read_vtp(&dir.path().join(&pvd[k].1));
        let pd = &piece.data.point;
        let cd = &piece.data.cell;
        let what = |name: &str| format!("{name} at step {step}");

        assert_eq!(piece.num_points(), n);
        assert_eq!(
            vec3s_of(&piece.points, "Points"),
            p.position,
            "{}",
            what("points")
        );
        assert_eq!(f64s(pd, "radius"), p.radius, "{}", what("radius"));
        assert_eq!(vec3s(pd, "velocity"), p.velocity, "{}", what("velocity"));
        assert_eq!(
            vec3s(pd, "angular_velocity"),
            p.angular_velocity,
            "{}",
            what("angular_velocity")
        );
        assert_eq!(vec3s(pd, "rotation"), p.rotation, "{}", what("rotation"));
        let f: Vec<DVec3> = forces.iter().map(|f| f.force).collect();
        let m: Vec<DVec3> = forces.iter().map(|f| f.moment).collect();
        assert_eq!(vec3s(pd, "force"), f, "{}", what("force"));
        assert_eq!(vec3s(pd, "moment"), m, "{}", what("moment"));
        assert_eq!(i32s(pd, "id"), (0..n as i32).collect::<Vec<_>>());
        assert_eq!(i32s(pd, "material_id"), vec![0; n]);
        let contacts = i32s(pd, "contact_count");
        assert_eq!(
            contacts,
            brute_force_contacts(&scene, &p.position),
            "{}",
            what("contact_count")
        );
        if p.position[0].x < p.radius[0] {
            assert!(contacts[0] >= 1, "{}", what("particle 0 on the wall"));
            pressed += 1;
        }

        // Topology: a vertex per particle, then a line per bond.
        let (vc, vo) = topology(&piece.verts);
        assert_eq!(vc, (0..n as u64).collect::<Vec<_>>());
        assert_eq!(vo, (1..=n as u64).collect::<Vec<_>>());
        let (lc, lo) = topology(&piece.lines);
        let ends: Vec<u64> = bonds
            .iter()
            .flat_map(|b| [u64::from(b.i), u64::from(b.j)])
            .collect();
        assert_eq!(lc, ends, "{}", what("line connectivity"));
        assert_eq!(lo, vec![2, 4]);

        // Cell data runs over the vertex cells, then the lines.
        let bond_id = i32s(cd, "bond_id");
        assert_eq!(bond_id, [-1, -1, -1, -1, 0, 1]);
        let strain = f64s(cd, "strain_energy");
        assert_eq!(strain.len(), n + bonds.len());
        assert!(strain[..n].iter().all(|&e| e == 0.0));
        assert_eq!(strain[n..], reference.bond_energies());
        let binder: f64 = ["e_bend", "e_axial", "e_shear"]
            .iter()
            .map(|c| energy.column(c).unwrap()[k])
            .sum();
        assert!(binder > 0.0, "{}", what("the bonds are strained"));
        assert_rel(
            strain[n..].iter().sum(),
            binder,
            1e-12,
            &what("bond energy"),
        );
    }
    assert!(pressed >= 1, "particle 0 touches the wall in some frame");

    // The last frame is the final state, bit for bit.
    let last = read_vtp(&dir.path().join(&pvd[FRAME_STEPS.len() - 1].1));
    let rows = read_final_csv(&summary.final_csv).unwrap();
    let points = vec3s_of(&last.points, "Points");
    let velocity = vec3s(&last.data.point, "velocity");
    let rotation = vec3s(&last.data.point, "rotation");
    let omega = vec3s(&last.data.point, "angular_velocity");
    for (i, r) in rows.iter().enumerate() {
        for (a, b) in [
            (points[i], r.position),
            (velocity[i], r.velocity),
            (rotation[i], r.rotation),
            (omega[i], r.angular_velocity),
        ] {
            assert_eq!(
                a.to_array().map(f64::to_bits),
                b.to_array().map(f64::to_bits)
            );
        }
    }
}

/// The GPU backend (f64 kernels) writes the same frames as the CPU, positions within
/// 1e-10.
#[test]
fn gpu_run_writes_the_same_frames_as_the_cpu() {
    let Some(ctx) = gpu_common::context_f64("gpu_run_writes_the_same_frames_as_the_cpu") else {
        return;
    };
    let scene = parse_scene(SCENE).unwrap();
    let sim = &scene.simulation;
    let options = GpuOptions {
        precision: Precision::F64,
        ..GpuOptions::default()
    };
    let mut gpu =
        GpuBackend::with_context(ctx, scene.model.clone(), sim.integrator, sim.dt, &options)
            .unwrap();
    let mut cpu = CpuBackend::new(&scene).unwrap();
    let (gdir, cdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(&scene, &mut gpu, gdir.path()).unwrap();
    run(&scene, &mut cpu, cdir.path()).unwrap();
    let gpvd = read_pvd(&gdir.path().join("particles.pvd"));
    let cpvd = read_pvd(&cdir.path().join("particles.pvd"));
    assert_eq!(gpvd, cpvd, "same frames at the same times");
    assert_eq!(gpvd.len(), FRAME_STEPS.len());
    for (file, _) in gpvd.iter().map(|(t, f)| (f, t)) {
        let g = read_vtp(&gdir.path().join(file));
        let c = read_vtp(&cdir.path().join(file));
        let (gx, cx) = (vec3s_of(&g.points, "Points"), vec3s_of(&c.points, "Points"));
        for (a, b) in gx.iter().zip(&cx) {
            assert!(
                (*a - *b).abs().max_element() <= 1e-10 * b.abs().max_element().max(1.0),
                "{file}: {a} vs {b}"
            );
        }
        let scale = |v: &[DVec3]| v.iter().map(|x| x.length()).fold(1e-300, f64::max);
        for name in ["force", "moment", "velocity", "rotation"] {
            let (gv, cv) = (vec3s(&g.data.point, name), vec3s(&c.data.point, name));
            let s = scale(&cv);
            for (a, b) in gv.iter().zip(&cv) {
                assert!((*a - *b).length() <= 1e-12 * s, "{file} {name}: {a} vs {b}");
            }
        }
        assert_eq!(
            i32s(&g.data.point, "contact_count"),
            i32s(&c.data.point, "contact_count"),
            "{file}"
        );
        let (ge, ce) = (
            f64s(&g.data.cell, "strain_energy"),
            f64s(&c.data.cell, "strain_energy"),
        );
        let s = ce.iter().copied().fold(1e-300, f64::max);
        for (a, b) in ge.iter().zip(&ce) {
            assert!(
                (a - b).abs() <= 1e-9 * s,
                "{file} strain_energy: {a} vs {b}"
            );
        }
        let (gl, cl) = (topology(&g.lines), topology(&c.lines));
        assert_eq!(gl, cl, "{file}");
    }
}
