//! The inserter pour of tests/insertion.rs and tests/gpu_insertion.rs.

use varidem::io::parse_scene;
use varidem::model::{is_dormant, Particles, Scene};

/// A box of five glass planes, 6 × 6 cm, with an inserter raining beads of 2 mm ± 10 %
/// from a slab 5–6 cm up at `rate` beads/s in events every 20 ms, for `t_end` seconds.
/// `extra` is appended (a mesh, other keys).
pub fn pour(rate: f64, t_end: f64, extra: &str) -> String {
    format!(
        r#"
[simulation]
dt = 2e-5
t_end = {t_end}
output_every = 500
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hertz"

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.3
friction_static = 0.5
friction_dynamic = 0.4

[[inserter]]
box = {{ min = [-0.02, -0.02, 0.05], max = [0.02, 0.02, 0.06] }}
rate = {rate}
interval = 0.02
radius = 0.002
radius_jitter = 0.1
material = "glass"
velocity = [0.0, 0.0, -0.5]
seed = 3
{extra}
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
[[wall]]
point = [-0.03, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
material = "glass"
[[wall]]
point = [0.03, 0.0, 0.0]
normal = [-1.0, 0.0, 0.0]
material = "glass"
[[wall]]
point = [0.0, -0.03, 0.0]
normal = [0.0, 1.0, 0.0]
material = "glass"
[[wall]]
point = [0.0, 0.03, 0.0]
normal = [0.0, -1.0, 0.0]
material = "glass"
"#
    )
}

/// The scene of `text`, or a panic with its error.
pub fn scene(text: &str) -> Scene {
    parse_scene(text).unwrap_or_else(|e| panic!("{e}"))
}

/// Particles not dormant.
pub fn awake(p: &Particles) -> usize {
    p.flags.iter().filter(|&&f| !is_dormant(f)).count()
}
