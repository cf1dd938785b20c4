//! The falling stream of tests/removal.rs and tests/gpu_removal.rs: beads rained
//! through a removal domain (`[domain] on_exit = "remove"`), and readers of what such a
//! run leaves.

use std::path::Path;

use varidem::io::parse_scene;
use varidem::model::Scene;

/// The domain's lower face: beads leave through it.
pub const FLOOR: f64 = 0.03;

/// An inserter raining 2 mm glass beads at 20 000 beads/s (40 every 2 ms) down at
/// 2 m/s from a slab 5–6 cm up, through a domain whose floor is at 3 cm, for `t_end`
/// seconds. A bead crosses the domain in about 12 ms (600 steps), so about 250 are in it
/// at a time while the stream runs.
pub fn stream(t_end: f64) -> Scene {
    let text = format!(
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
rate = 20000
interval = 0.002
radius = 0.002
radius_jitter = 0.1
material = "glass"
velocity = [0.0, 0.0, -2.0]
seed = 5

[domain]
min = [-0.05, -0.05, {FLOOR}]
max = [0.05, 0.05, 0.07]
on_exit = "remove"
"#
    );
    parse_scene(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// One row of `removed.csv`: step, t, id, x, v.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Removed {
    pub step: u64,
    pub t: f64,
    pub id: u32,
    pub x: [f64; 3],
    pub v: [f64; 3],
}

/// The rows of `DIR/removed.csv`, its header checked.
pub fn removed(dir: &Path) -> Vec<Removed> {
    let text = std::fs::read_to_string(dir.join("removed.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("step,t,id,x,y,z,vx,vy,vz"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 9, "{l}");
            let num = |k: usize| f[k].parse::<f64>().unwrap();
            Removed {
                step: f[0].parse().unwrap(),
                t: num(1),
                id: f[2].parse().unwrap(),
                x: [num(3), num(4), num(5)],
                v: [num(6), num(7), num(8)],
            }
        })
        .collect()
}

/// The ids of `DIR/final.csv`'s rows.
pub fn final_ids(dir: &Path) -> Vec<u32> {
    varidem::io::read_final_csv(&dir.join("final.csv"))
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect()
}
