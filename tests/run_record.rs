//! `DIR/run.toml` records the version, the backend and the full resolved scene; its
//! scene part parses back to the scene that ran.

use varidem::cpu::CpuBackend;
use varidem::io::{load_scene, parse_scene};
use varidem::model::RunLength;

#[test]
fn run_record_reproduces_the_scene() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/torus-impact.toml");
    let mut scene = load_scene(&path).unwrap();
    scene.simulation.duration = RunLength::Steps(20);
    scene.simulation.output_every = 10;
    let dir = tempfile::tempdir().unwrap();
    let mut backend = CpuBackend::new(&scene).unwrap();
    varidem::run::run(&scene, &mut backend, dir.path()).unwrap();
    let text = std::fs::read_to_string(dir.path().join("run.toml")).unwrap();
    assert!(
        text.contains(&format!(
            "varidem_version = \"{}\"",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    assert!(text.contains("backend = \"cpu\""), "{text}");
    // Drop the [run] table: the rest is a scene file equal to the one that ran.
    let scene_part: String = text.split_once("\n\n").unwrap().1.to_string();
    assert_eq!(parse_scene(&scene_part).unwrap(), scene);
}
