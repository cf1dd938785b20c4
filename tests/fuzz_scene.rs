//! The scene parser never panics: arbitrary text, and valid scenes with random edits
//! (bytes replaced, lines dropped or duplicated, numbers swapped for extreme values and
//! vectors of the wrong length), must give either a scene or an error. And one
//! validation path (issue 49): an edited scene the parser (`varidem check`) accepts is
//! one `run` starts: its set-up and first steps fail, if at all, only with a fault of
//! the run, never with a refusal of the scene that `check` did not give.

use proptest::prelude::*;
use std::path::Path;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene_in;
use varidem::model::RunLength;
use varidem::run::{run_with, OutputOptions};
use varidem::Error;

const SCENES: [&str; 12] = [
    include_str!("../scenes/torus-impact.toml"),
    include_str!("../scenes/torus-free.toml"),
    include_str!("../scenes/pendulum.toml"),
    include_str!("../scenes/block-impact.toml"),
    include_str!("../scenes/spinning-sphere.toml"),
    include_str!("../scenes/three-spheres.toml"),
    include_str!("../scenes/container.toml"),
    include_str!("../scenes/clump-pour.toml"),
    include_str!("../scenes/hard-pile.toml"),
    include_str!("../scenes/painleve-rod.toml"),
    include_str!("../scenes/hopper.toml"),
    include_str!("../scenes/drum.toml"),
];

/// Values that stress validation: non-finite, huge, negative, zero, wrong types, and
/// vectors and index lists of the wrong length.
const NASTY: [&str; 19] = [
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "0",
    "-1",
    "1e-320",
    "\"x\"",
    "[]",
    "[1.0]",
    "[nan, 0.0, 0.0]",
    "18446744073709551616",
    "-9223372036854775809",
    "[1.0, 2.0, 3.0, 4.0]",
    "[0.0, 0.0]",
    "[[0, 1, 2, 3]]",
    "[[0, 1, 2], [2, 1, 0]]",
    "1e160",
];

/// The scenes' own directory: mesh files are read relative to it.
fn scenes_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes"))
}

fn parse_no_panic(text: &str) {
    let r = std::panic::catch_unwind(|| {
        let _ = parse_scene_in(text, scenes_dir());
    });
    assert!(r.is_ok(), "parse_scene panicked on:\n{text}");
}

/// Whether `e` is a failure of the run itself (a fault found while stepping), not a
/// refusal of its scene.
fn during_run(e: &Error) -> bool {
    match e {
        Error::RunFailed { .. } | Error::BlowUp { .. } | Error::NotConverged { .. } => true,
        Error::Fault { step, .. } => *step > 0,
        _ => false,
    }
}

/// An accepted scene starts: the CPU backend is set up and two steps run (or fail with a
/// fault of the run). Scenes of over 20 000 spheres are only parsed (the set-up would
/// make the test slow, not more thorough).
fn accepted_scene_starts(text: &str) -> Result<(), String> {
    let Ok(mut scene) = parse_scene_in(text, scenes_dir()) else {
        return Ok(());
    };
    if scene.model.sphere_count() > 20_000 {
        return Ok(());
    }
    scene.simulation.duration = RunLength::Steps(2);
    scene.simulation.output_every = 1;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let started = std::panic::catch_unwind(|| {
        let mut backend = CpuBackend::new(&scene)?;
        let options = OutputOptions {
            vtk: false,
            ..OutputOptions::default()
        };
        run_with(&scene, &mut backend, tmp.path(), &options).map(|_| ())
    });
    match started {
        Err(_) => Err(format!("the run panicked on:\n{text}")),
        Ok(Err(e)) if !during_run(&e) => Err(format!(
            "`check` accepted a scene that `run` refuses: {e}\n{text}"
        )),
        Ok(_) => Ok(()),
    }
}

proptest! {
    // 400 cases unless PROPTEST_CASES says otherwise (with_cases alone would override
    // the variable).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
    ))]

    #[test]
    fn arbitrary_text(text in "\\PC{0,400}") {
        parse_no_panic(&text);
    }

    #[test]
    fn edited_scenes(which in 0usize..SCENES.len(), edits in prop::collection::vec((0usize..10_000, 0usize..4, 0usize..NASTY.len()), 1..6)) {
        let mut lines: Vec<String> = SCENES[which].lines().map(str::to_string).collect();
        for (pos, kind, nasty) in edits {
            if lines.is_empty() { break; }
            let at = pos % lines.len();
            match kind {
                0 => { lines.remove(at); }
                1 => { let l = lines[at].clone(); lines.insert(at, l); }
                2 => {
                    // Replace the value of a `key = value` line.
                    if let Some(eq) = lines[at].find('=') {
                        lines[at] = format!("{}= {}", &lines[at][..eq], NASTY[nasty]);
                    }
                }
                _ => {
                    // Overwrite one character.
                    let mut chars: Vec<char> = lines[at].chars().collect();
                    if !chars.is_empty() {
                        let c = pos % chars.len();
                        chars[c] = ['[', ']', '=', '"', '#', '0', '-', '.'][nasty % 8];
                        lines[at] = chars.into_iter().collect();
                    }
                }
            }
        }
        let text = lines.join("\n");
        parse_no_panic(&text);
        if let Err(e) = accepted_scene_starts(&text) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// A coordinate of a fuzzed mesh vertex: mostly ordinary, sometimes extreme.
fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => -2.0f64..2.0,
        1 => prop::sample::select(vec![0.0, 1e-300, -1e-300, 1e300, f64::MIN_POSITIVE, 1.0 + f64::EPSILON]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
    ))]

    /// Mesh topology: inline meshes of random vertices (repeated, nearly repeated,
    /// collinear, extreme) and random triangles (indices out of range, repeated
    /// corners, duplicates in any order) under two beads. The loader refuses or accepts
    /// without a panic, and an accepted mesh runs.
    #[test]
    fn random_mesh_topology(
        vertices in prop::collection::vec((coordinate(), coordinate(), coordinate()), 0..9),
        copies in prop::collection::vec((0usize..9, 0u32..3), 0..3),
        triangles in prop::collection::vec((0u32..10, 0u32..10, 0u32..10), 0..8),
    ) {
        let mut v: Vec<[f64; 3]> = vertices.iter().map(|&(x, y, z)| [x, y, z - 3.0]).collect();
        // Near copies of vertices: exact, one f32 step and one f64 step off.
        for (k, how) in copies {
            if let Some(&c) = v.get(k % v.len().max(1)) {
                let e = match how { 0 => 0.0, 1 => f64::from(f32::EPSILON), _ => f64::EPSILON };
                v.push([c[0] * (1.0 + e), c[1], c[2]]);
            }
        }
        let fmt = |x: f64| format!("{x:?}");
        let vertices: Vec<String> = v.iter().map(|c| format!("[{}, {}, {}]", fmt(c[0]), fmt(c[1]), fmt(c[2]))).collect();
        let triangles: Vec<String> = triangles.iter().map(|(a, b, c)| format!("[{a}, {b}, {c}]")).collect();
        let text = format!(
            "[simulation]\ndt = 1e-4\nsteps = 2\ngravity = [0.0, 0.0, -9.81]\n\
             [contact]\nlaw = \"hertz\"\n\
             [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\nrestitution = 0.5\nfriction_static = 0.4\n\
             [[particle]]\nposition = [0.0, 0.0, 0.5]\nradius = 0.1\nmaterial = \"glass\"\n\
             [[particle]]\nposition = [0.5, 0.0, 0.5]\nradius = 0.1\nmaterial = \"glass\"\n\
             [[mesh]]\nvertices = [{}]\ntriangles = [{}]\n",
            vertices.join(", "),
            triangles.join(", ")
        );
        parse_no_panic(&text);
        if let Err(e) = accepted_scene_starts(&text) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// A case the fuzzer found: a `[[cloud]]` radius of 1e-320 (denormal) made the cell
/// index of the placement grid saturate, and stepping to the adjacent cell overflowed
/// (a panic in builds with overflow checks). The scene is now refused before the
/// spheres are placed (their mass is 0), naming the radius; the generator itself no
/// longer overflows either (tested below).
#[test]
fn denormal_cloud_radius_does_not_panic() {
    let text = SCENES[6].replace("radius = 0.1\n", "radius = 1e-320\n");
    assert_ne!(
        text, SCENES[6],
        "the container scene's cloud radius line moved"
    );
    parse_no_panic(&text);
    let err = parse_scene_in(&text, scenes_dir()).unwrap_err().to_string();
    assert!(err.contains("cloud[0].radius = 1e-320"), "{err}");
}

/// The cloud generator called directly (not through a scene, which refuses the radius)
/// with a denormal radius: its grid's saturated cell indices wrap instead of
/// overflowing, and the spheres are placed.
#[test]
fn cloud_generator_with_denormal_radius_does_not_overflow() {
    use glam::DVec3;
    let cloud = varidem::model::generators::Cloud {
        min: DVec3::ZERO,
        max: DVec3::ONE,
        count: 10,
        radius: 1e-320,
        radius_jitter: 0.0,
        distribution: None,
        density: 1.0,
        velocity: DVec3::ZERO,
        material: 0,
        hold_rotation: false,
        seed: 3,
        clump: None,
    };
    let mut model = varidem::model::Model::default();
    cloud.add_to(&mut model).unwrap();
    assert_eq!(model.particles.len(), 10);
}
