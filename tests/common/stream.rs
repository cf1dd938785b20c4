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
    parse_scene(&stream_text(t_end)).unwrap_or_else(|e| panic!("{e}"))
}

/// The scene text of [`stream`].
pub fn stream_text(t_end: f64) -> String {
    // The inserter pour's material and inserter, faster and without its box.
    let pour = super::inserter::pour(20000.0, t_end, "")
        .replace("interval = 0.02\n", "interval = 0.002\n")
        .replace("velocity = [0.0, 0.0, -0.5]", "velocity = [0.0, 0.0, -2.0]");
    let text = pour.split("[[wall]]").next().unwrap().to_owned()
        + &format!(
            "[domain]\nmin = [-0.05, -0.05, {FLOOR}]\nmax = [0.05, 0.05, 0.07]\non_exit = \"remove\"\n"
        );
    assert!(text.contains("interval = 0.002\n") && text.contains("-2.0]"));
    text
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

/// [`stream`] whose inserter has `capacity = limit`: with removal, at most `limit` of
/// its beads in the domain at once.
pub fn capped_stream(t_end: f64, limit: u32) -> Scene {
    let text = stream_text(t_end).replace("seed = 3\n", &format!("seed = 3\ncapacity = {limit}\n"));
    assert!(text.contains("capacity = "));
    parse_scene(&text).unwrap_or_else(|e| panic!("{e}"))
}
