//! Particle insertion (`[[inserter]]`, issue 26 item 3): the schedule, placements that
//! overlap nothing, skipped particles counted, outputs without the dormant ones,
//! determinism and checkpoints that resume bit for bit (on the GPU: gpu_insertion.rs).

#![allow(missing_docs, reason = "test crate")]

mod common;

use std::path::Path;

use common::inserter::{awake, pour, scene};
use varidem::backend::Backend;
use varidem::checkpoint::Checkpoint;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;
use varidem::model::is_dormant;
use varidem::physics::mesh::MeshSurfaces;

/// The schedule as documented: events at 0, 20, 40 ... ms (the one at t = 0 before the
/// first step), each adding `rate × interval` beads, none early and none late; every
/// bead lands where it overlaps no other bead and no wall.
#[test]
fn events_insert_on_schedule_without_overlap() {
    let s = scene(&pour(2000.0, 0.1, ""));
    // 6 events (0 to 0.1 s) of 40: the capacity is computed from the schedule.
    assert_eq!(s.model.inserters[0].capacity, 240);
    assert_eq!(s.model.particles.len(), 240);
    let mut cpu = CpuBackend::new(&s).unwrap();
    assert_eq!(awake(&cpu.model().particles), 40, "the event at t = 0");
    let walls = s.model.walls.clone();
    for step in 1..=5000u64 {
        let before: Vec<bool> = cpu
            .model()
            .particles
            .flags
            .iter()
            .map(|&f| is_dormant(f))
            .collect();
        cpu.step().unwrap();
        let p = &cpu.model().particles;
        let expected = 40 * (1 + step as usize / 1000);
        assert_eq!(awake(p), expected, "after step {step}");
        // The beads that woke at this step touch nothing.
        for i in (0..p.len()).filter(|&i| before[i] && !is_dormant(p.flags[i])) {
            for w in &walls {
                assert!(
                    w.distance(p.position[i]) >= p.radius[i],
                    "bead {i} in a wall"
                );
            }
            for j in (0..p.len()).filter(|&j| j != i && !is_dormant(p.flags[j])) {
                let gap = p.position[i].distance(p.position[j]) - p.radius[i] - p.radius[j];
                assert!(gap >= 0.0, "bead {i} inserted into bead {j} (gap {gap:e})");
            }
        }
    }
    assert_eq!(cpu.insertion_counts()[0].inserted, 240);
    assert_eq!(cpu.insertion_counts()[0].skipped, 0);
}

/// Outputs hold the inserted beads only: final.csv rows, VTK points and the energy
/// (a dormant bead's weight at its waiting place is not in the field energy).
#[test]
fn outputs_leave_dormant_particles_out() {
    let s = scene(&pour(2000.0, 0.03, ""));
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuBackend::new(&s).unwrap();
    varidem::run::run(&s, &mut cpu, dir.path()).unwrap();
    let rows = varidem::io::read_final_csv(&dir.path().join("final.csv")).unwrap();
    assert_eq!(rows.len(), 80, "two events by t = 0.03 s");
    // The running counts at every output step (every 500 steps, and the last, 1500).
    let counts = std::fs::read_to_string(dir.path().join("inserters.csv")).unwrap();
    let lines: Vec<&str> = counts.lines().collect();
    assert_eq!(lines[0], "step,t,inserter,inserted,skipped");
    assert!(lines[1].starts_with("0,") && lines[1].ends_with(",inserter[0],40,0"));
    assert!(lines[4].starts_with("1500,") && lines[4].ends_with(",inserter[0],80,0"));
    let first = dir
        .path()
        .join(varidem::io::VTK_DIR)
        .join(varidem::io::vtk_writer::frame_file_name(0));
    let vtk = std::fs::read_to_string(first).unwrap();
    assert!(
        vtk.contains("NumberOfPoints=\"40\""),
        "the first frame has the 40 beads of the first event"
    );
    // Field energy at step 0: the 40 awake beads only (they start at rest in height
    // between 5 and 6 cm; all 240 reserved would count 6 times as much).
    let d = cpu.diagnostics().unwrap();
    let p = &cpu.model().particles;
    let expected: f64 = (0..p.len())
        .filter(|&i| !is_dormant(p.flags[i]))
        .map(|i| p.mass[i] * 9.81 * p.position[i].z)
        .sum();
    assert!((d.potentials.field - expected).abs() <= 1e-12 * expected);
}

/// A region too small for a batch: the beads that find no free spot are skipped and
/// counted, and the capacity caps the total (the rest skipped too).
#[test]
fn full_regions_and_capacity_skip_and_count() {
    // A 1 cm cube holds a handful of 4 mm beads, never 40.
    let text = pour(2000.0, 0.04, "").replace(
        "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
        "box = { min = [0.0, 0.0, 0.05], max = [0.01, 0.01, 0.06] }\ncapacity = 30",
    );
    let s = scene(&text);
    assert_eq!(s.model.inserters[0].capacity, 30);
    let mut cpu = CpuBackend::new(&s).unwrap();
    cpu.advance(2000).unwrap();
    let c = cpu.insertion_counts()[0];
    // Three events of 40 asked for 120 beads.
    assert_eq!(c.inserted + c.skipped, 120, "{c:?}");
    assert!(c.inserted >= 1 && c.inserted <= 30, "{c:?}");
    assert!(c.skipped >= 90, "{c:?}");
    assert_eq!(awake(&cpu.model().particles) as u64, c.inserted);
}

/// The same scene twice gives the same bits, and a run stopped at a checkpoint between
/// two events (and one stopped exactly at an event's step) resumes to the same bits as
/// the run that did not stop.
#[test]
fn runs_are_deterministic_and_resume_bitwise() {
    let s = scene(&pour(2000.0, 0.08, ""));
    let straight = |n: u64| {
        let mut b = CpuBackend::new(&s).unwrap();
        b.advance(n).unwrap();
        b.checkpoint_state().unwrap()
    };
    let a = straight(4000);
    assert_eq!(a, straight(4000));
    for stop in [1500u64, 2000] {
        let mut b = CpuBackend::new(&s).unwrap();
        b.advance(stop).unwrap();
        let bytes = Checkpoint::take(&s, &mut b, None).unwrap().to_bytes();
        let back = Checkpoint::from_bytes(&bytes, Path::new("x.vdc")).unwrap();
        assert_eq!(back.state.inserted, b.insertion_counts());
        let mut r = CpuBackend::from_snapshot(back.scene.model.clone(), &back.state).unwrap();
        r.advance(4000 - stop).unwrap();
        assert_eq!(r.checkpoint_state().unwrap(), a, "resumed at step {stop}");
    }
}

/// A disc region (a pipe's outlet): every bead's centre in the disc's plane, within
/// `R − r` of its centre.
#[test]
fn disc_regions_place_in_the_disc() {
    let text = pour(1000.0, 0.02, "").replace(
        "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
        "disc = { center = [0.0, 0.0, 0.05], normal = [0.0, 0.0, -1.0], radius = 0.02 }",
    );
    let s = scene(&text);
    let cpu = CpuBackend::new(&s).unwrap();
    let p = &cpu.model().particles;
    assert_eq!(awake(p), 20);
    for i in (0..p.len()).filter(|&i| !is_dormant(p.flags[i])) {
        let x = p.position[i];
        assert_eq!(x.z, 0.05);
        assert!(x.truncate().length() <= 0.02 - p.radius[i] + 1e-15);
    }
}

/// Placements keep clear of mesh walls: an inserter whose region a tilted mesh plate
/// cuts places every bead at least its radius from every triangle.
#[test]
fn placements_keep_clear_of_meshes() {
    let mesh = r#"
[[mesh]]
name = "plate"
vertices = [[-0.03, -0.03, 0.05], [0.03, -0.03, 0.06], [0.03, 0.03, 0.06], [-0.03, 0.03, 0.05]]
triangles = [[0, 1, 2], [0, 2, 3]]
material = "glass"
"#;
    let s = scene(&pour(3000.0, 0.001, mesh));
    let cpu = CpuBackend::new(&s).unwrap();
    let p = &cpu.model().particles;
    let placed: Vec<usize> = (0..p.len()).filter(|&i| !is_dormant(p.flags[i])).collect();
    assert!(placed.len() >= 30, "{} placed", placed.len());
    let surfaces = MeshSurfaces::new(&s.model.meshes);
    for &i in &placed {
        for t in 0..2 {
            let (q, _) = varidem::math::triangle::closest_point(p.position[i], surfaces.corners(t));
            assert!(
                q.distance(p.position[i]) >= p.radius[i],
                "bead {i} cuts the plate"
            );
        }
    }
}

/// A scene written back to TOML keeps its inserter and reads back to the same model
/// (the reserved beads re-drawn from the seed).
#[test]
fn scenes_with_inserters_round_trip() {
    let s = scene(&pour(2000.0, 0.1, ""));
    let back = scene(&varidem::io::scene_to_toml(&s));
    assert_eq!(back.model, s.model);
}

/// Bad inserters are named errors.
#[test]
fn bad_inserters_are_named_errors() {
    let base = pour(2000.0, 0.1, "");
    let cases = [
        (
            "rate = 2000",
            "count = 5\nrate = 2000",
            "exactly one of rate",
        ),
        ("interval = 0.02\n", "", ""),
        (
            "rate = 2000\ninterval = 0.02",
            "count = 5",
            "inserter[0].interval: missing",
        ),
        (
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
            "",
            "give exactly one region",
        ),
        (
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }",
            "box = { min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.052] }",
            "inserter[0].box.max",
        ),
        ("radius = 0.002", "radius = -1.0", "inserter[0].radius"),
        (
            "seed = 3",
            "seed = 3\nclump_type = \"rod\"",
            "inserter[0].clump_type = \"rod\": unknown clump type",
        ),
        ("seed = 3", "seed = 3\nstart = 1.0", "after the run's end"),
        (
            "seed = 3",
            "seed = 3\ncapacity = 0",
            "inserter[0].capacity = 0",
        ),
        // Too large, not "below 1" (issue 49).
        (
            "seed = 3",
            "seed = 3\ncapacity = 10000000000",
            "inserter[0].capacity = 10000000000: too large",
        ),
        ("seed = 3", "seed = 3\nshape = 1", "unknown field"),
        (
            "seed = 3",
            "seed = 3\n[domain]\nmin = [-0.1, -0.1, 0.0]\nmax = [0.1, 0.1, 0.055]",
            "inserter[0]: its region",
        ),
    ];
    for (from, to, message) in cases {
        if message.is_empty() {
            // Rate without interval is fine (the default interval).
            scene(&base.replace(from, to));
            continue;
        }
        let err = parse_scene(&base.replace(from, to))
            .unwrap_err()
            .to_string();
        assert!(err.contains(message), "{to:?}: {err}");
    }
}

/// Inserted beads that then leave the domain (`on_exit = "remove"`) stay removed in a
/// resumed run, which ends with the bits of the run that did not stop.
#[test]
fn resumes_keep_inserted_beads_that_left_removed() {
    let text = pour(2000.0, 0.08, "")
        .split("[[wall]]")
        .next()
        .unwrap()
        .to_owned()
        + "[domain]\nmin = [-0.05, -0.05, 0.02]\nmax = [0.05, 0.05, 0.1]\non_exit = \"remove\"\n";
    let s = scene(&text);
    let mut a = CpuBackend::new(&s).unwrap();
    a.advance(3000).unwrap();
    let snap = a.checkpoint_state().unwrap();
    assert!(!snap.removed.is_empty(), "some bead has left by step 3000");
    a.advance(1000).unwrap();
    let bytes = Checkpoint::take(
        &s,
        &mut CpuBackend::from_snapshot(s.model.clone(), &snap).unwrap(),
        None,
    )
    .unwrap()
    .to_bytes();
    let back = Checkpoint::from_bytes(&bytes, Path::new("x.vdc")).unwrap();
    let mut r = CpuBackend::from_snapshot(back.scene.model.clone(), &back.state).unwrap();
    r.advance(1000).unwrap();
    assert_eq!(r.checkpoint_state().unwrap(), a.checkpoint_state().unwrap());
}

/// A pour of clumps: dimers from a box at 1500/s onto the glass floor, events every
/// 10 ms, `extra` appended.
fn clump_pour(extra: &str) -> String {
    pour(1500.0, 0.03, extra)
        .replace("interval = 0.02", "interval = 0.01")
        .replace("radius = 0.002\nradius_jitter = 0.1\nmaterial = \"glass\"\n", "clump_type = \"dimer\"\n")
        + "\n[[clump_type]]\nname = \"dimer\"\nspheres = [ { position = [-1.0e-3, 0.0, 0.0], radius = 1.5e-3 }, { position = [1.2e-3, 0.0, 0.0], radius = 1.2e-3 } ]\nmaterial = \"glass\"\n"
}

/// The spheres of the awake clumps of a CPU run: (body, centre, radius).
fn clump_spheres(cpu: &CpuBackend) -> Vec<(usize, glam::DVec3, f64)> {
    let p = &cpu.model().particles;
    let m = cpu.model();
    let mut next = p.len()
        - m.clumps
            .iter()
            .map(|c| m.clump_types[c.kind as usize].spheres.len())
            .sum::<usize>();
    let mut out = Vec::new();
    for (b, c) in m.clumps.iter().enumerate() {
        for _ in &m.clump_types[c.kind as usize].spheres {
            if !is_dormant(p.flags[next]) {
                out.push((b, p.position[next], p.radius[next]));
            }
            next += 1;
        }
    }
    out
}

/// `clump_type` inserts clumps (issue 26, item 3): reserved dormant bodies take their
/// place at each event at a uniformly random attitude where none of their spheres
/// overlaps another clump's or a wall; dormant ones are in no output row or energy;
/// the same run twice, and resumed between events, gives the same bits.
#[test]
fn clump_inserters_insert_clumps_without_overlap() {
    let s = scene(&clump_pour(""));
    let ins = &s.model.inserters[0];
    // 4 events (0 to 0.03 s) of 15 dimers.
    assert_eq!((ins.clump, ins.capacity), (Some(0), 60));
    assert_eq!((s.model.clumps.len(), s.model.particles.len()), (60, 0));
    let mut cpu = CpuBackend::new(&s).unwrap();
    assert_eq!(
        clump_spheres(&cpu).len(),
        30,
        "the event at t = 0: 15 dimers"
    );
    let walls = s.model.walls.clone();
    let dt = s.simulation.dt;
    for event in 1..=3u64 {
        let before = clump_spheres(&cpu);
        let step = (event as f64 * 0.01 / dt).round() as u64;
        cpu.advance(step - cpu.step_count()).unwrap();
        let after = clump_spheres(&cpu);
        assert_eq!(
            after.len(),
            30 * (event as usize + 1),
            "after event {event}"
        );
        // The new clumps' spheres touch nothing of another body, nor a wall.
        let old: std::collections::HashSet<usize> = before.iter().map(|s| s.0).collect();
        for &(b, x, r) in after.iter().filter(|s| !old.contains(&s.0)) {
            for w in &walls {
                assert!(w.distance(x) >= r, "clump {b} in a wall");
            }
            for &(c, y, q) in after.iter().filter(|s| s.0 != b) {
                let gap = x.distance(y) - r - q;
                assert!(
                    gap >= 0.0,
                    "clump {b} inserted into clump {c} (gap {gap:e})"
                );
            }
        }
    }
    assert_eq!(cpu.insertion_counts()[0].inserted, 60);
    // Attitudes vary; output rows are the 60 inserted bodies.
    let rows = cpu.particles().unwrap();
    let alphas: Vec<glam::DVec3> = rows.rotation.clone();
    assert_eq!(awake(&rows), 60);
    assert!(alphas.windows(2).all(|w| w[0] != w[1]));
    // Runs are deterministic and resume bitwise from a checkpoint between events.
    let run = |steps: u64| {
        let mut b = CpuBackend::new(&s).unwrap();
        b.advance(steps).unwrap();
        b
    };
    let mut a = run(700);
    let bytes = Checkpoint::take(&s, &mut a, None).unwrap().to_bytes();
    a.advance(1000).unwrap();
    let end = a.checkpoint_state().unwrap();
    assert_eq!(run(1700).checkpoint_state().unwrap(), end);
    let back = Checkpoint::from_bytes(&bytes, Path::new("x.vdc")).unwrap();
    assert_eq!(back.scene.model, s.model);
    let mut r = CpuBackend::from_snapshot(back.scene.model.clone(), &back.state).unwrap();
    r.advance(1000).unwrap();
    assert_eq!(r.checkpoint_state().unwrap(), end);
}

/// Before its first event a clump inserter's bodies are nowhere: no row, no energy.
#[test]
fn dormant_clumps_are_in_no_output() {
    let s = scene(&clump_pour("start = 0.01\n"));
    let mut cpu = CpuBackend::new(&s).unwrap();
    cpu.advance(10).unwrap();
    let d = cpu.diagnostics().unwrap();
    assert_eq!(awake(&cpu.particles().unwrap()), 0);
    assert_eq!(
        (d.e_kin, d.e_rot, d.potentials.field),
        (0.0, 0.0, 0.0),
        "{d:?}"
    );
    // The scene written back has the inserter, not its reserved clumps (which it
    // reserves again). Clump types round-trip to rounding (their spheres are written
    // in the frame they were given in), so the inserters and clumps are compared.
    let back = scene(&varidem::io::scene_to_toml(&s));
    assert_eq!(back.model.inserters, s.model.inserters);
    assert_eq!(back.model.clumps, s.model.clumps);
}

/// Sphere keys with a clump type are named errors.
#[test]
fn clump_inserters_refuse_sphere_keys() {
    for (key, value) in [
        ("radius", "0.001"),
        ("density", "2000.0"),
        ("material", "\"glass\""),
    ] {
        let text = clump_pour("").replace("seed = 3", &format!("seed = 3\n{key} = {value}"));
        let err = parse_scene(&text).unwrap_err().to_string();
        assert!(
            err.contains(&format!("inserter[0].{key}: belongs to the clump type")),
            "{err}"
        );
    }
}

/// Clump inserters under hard contacts (impulse-velocity): the inserted dimers fall
/// (the dormant ones wait where they are), resting on the floor by the end.
#[test]
fn clump_inserters_under_hard_contacts() {
    let text = clump_pour("")
        .replace("law = \"hertz\"", "law = \"hard\"")
        .replace("dt = 2e-5", "dt = 1e-4\nintegrator = \"impulse-velocity\"")
        .replace("restitution = 0.3", "restitution = 0.0");
    let s = scene(&text);
    let mut cpu = CpuBackend::new(&s).unwrap();
    // The first batch falls 5 cm at 0.5 m/s and more in 0.06 s.
    cpu.advance(1000).unwrap();
    let rows = cpu.particles().unwrap();
    assert_eq!(awake(&rows), 60);
    let lowest = (0..rows.len())
        .filter(|&i| !is_dormant(rows.flags[i]))
        .map(|i| rows.position[i].z)
        .fold(f64::INFINITY, f64::min);
    assert!(
        lowest < 0.01,
        "the first dimers fell to the floor: {lowest}"
    );
    assert!(
        lowest > 0.0,
        "and rest on it (hard contacts keep them out): {lowest}"
    );
}
