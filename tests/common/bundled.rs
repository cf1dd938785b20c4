//! The bundled scenes (`scenes/`) as tests use them: cut to a number of steps, and
//! edited as text (each edit must apply) where a test needs them to reach some state
//! sooner (tests/storage_order.rs, tests/gpu_storage_order.rs).

use std::path::Path;

use varidem::model::{RunLength, Scene};

/// `scenes/NAME` with each `(from, to)` of `edits` replaced (each must be found),
/// `append` added at the end, cut to `steps` steps with an output every `every`.
pub fn edited(name: &str, edits: &[(&str, &str)], append: &str, steps: u64, every: u64) -> Scene {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut text = std::fs::read_to_string(dir.join(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name}: no `{from}` to edit");
        text = text.replace(from, to);
    }
    text.push_str(append);
    let mut s = varidem::io::scene::parse_scene_in(&text, &dir)
        .unwrap_or_else(|e| panic!("{name} edited: {e}"));
    s.simulation.duration = RunLength::Steps(steps);
    s.simulation.output_every = every;
    s
}

/// `scenes/NAME` as it is, cut to `steps` steps with an output every `every`.
pub fn cut(name: &str, steps: u64, every: u64) -> Scene {
    edited(name, &[], "", steps, every)
}

/// The clump pour with a cloud of 120 free spheres (radius 0.7 mm) thrown down at
/// `speed` m/s onto its clumps from 8–10 cm up.
pub fn clump_pour_with_free_spheres(speed: f64, steps: u64, every: u64) -> Scene {
    let cloud = format!(
        "\n[[cloud]]\nmin = [-0.01, -0.01, 0.08]\nmax = [0.01, 0.01, 0.1]\ncount = 120\n\
         radius = 7e-4\nmaterial = \"glass\"\nvelocity = [0.0, 0.0, {}]\nseed = 3\n",
        -speed
    );
    edited("clump-pour.toml", &[], &cloud, steps, every)
}
