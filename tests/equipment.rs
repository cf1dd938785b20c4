//! Equipment on the CPU reference (issue 26): a quasi-2-D silo discharging through
//! slots of three widths follows Beverloo's law, and a rotating drum holds a dynamic
//! angle of repose that grows with its speed. Reduced cases; the documented runs are
//! `examples/beverloo.rs` and `scenes/drum.toml` (docs/physics.md#mesh-walls).

#[path = "common/silo.rs"]
mod silo;

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;

#[test]
fn a_silo_discharges_by_beverloos_law() {
    let d = 2.0 * silo::RADIUS;
    let runs: Vec<silo::Discharge> = [6.0, 8.0, 10.0]
        .iter()
        .map(|k| silo::discharge(0.1, 700, k * d))
        .collect();
    for r in &runs {
        println!(
            "D = {:.1} d: W = {:.4e} kg/s ({} beads in 0.3 s), ρ_b = {:.3} kg/m²",
            r.d_slot / d,
            r.rate,
            r.beads,
            r.bulk
        );
    }
    let (c, k, r2) = silo::fit_beverloo(&runs);
    println!("Beverloo 2-D fit: C = {c:.3}, k = {k:.2}, r² = {r2:.4}");
    // The rate grows with the slot, and W^{2/3} is straight in D (the 3/2 power of
    // the 2-D law). Three widths and ~100–300 beads each leave a few % of noise on
    // each rate, so C and k are checked against wide bounds around the published
    // ranges (2-D silos: C ≈ 0.6–1.0, k ≈ 1–2.5; 3-D: C 0.55–0.65, k 1.3–1.6); the
    // documented run narrows them.
    assert!(runs.windows(2).all(|w| w[1].rate > w[0].rate), "{runs:?}");
    assert!(r2 > 0.97, "W^(2/3) against D: r² = {r2}");
    assert!((0.3..=1.5).contains(&c), "C = {c}");
    assert!((0.0..=3.0).contains(&k), "k = {k}");
}

/// The drum of `scenes/drum.toml` with `count` beads turning at `omega` from 0.3 s:
/// the angle of the free surface at `t_end` (degrees), from the top bead of each
/// 1 cm column within 6 cm of the axis, fitted by a line.
fn drum_angle(omega: f64, count: usize, t_end: f64) -> f64 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/drum.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace("count = 1200", &format!("count = {count}"))
        .replace("t_end = 3.0", &format!("t_end = {t_end:?}"))
        .replace(
            "angular_velocity = [0.0, 2.0, 0.0]",
            &format!("angular_velocity = [0.0, {omega:?}, 0.0]"),
        )
        .replace("start = 0.5", "start = 0.3");
    let scene = varidem::io::parse_scene_in(&text, path.parent().unwrap()).unwrap();
    assert_eq!(scene.model.particles.len(), count);
    let mut b = CpuBackend::new(&scene).unwrap();
    b.advance(scene.simulation.steps()).unwrap();
    surface_angle(&b.model().particles.position)
}

/// The slope angle (degrees, positive rising towards −x) of the top surface of beads
/// at `x`: the highest centre of each 1 cm column within 6 cm of the axis, fitted by a
/// line.
fn surface_angle(x: &[glam::DVec3]) -> f64 {
    let mut top = std::collections::BTreeMap::new();
    for p in x {
        let c = (p.x / 0.01).floor() as i64;
        let e = top.entry(c).or_insert(f64::NEG_INFINITY);
        *e = f64::max(*e, p.z);
    }
    let pts: Vec<(f64, f64)> = top
        .into_iter()
        .map(|(c, z)| ((c as f64 + 0.5) * 0.01, z))
        .filter(|(x, _)| x.abs() < 0.06)
        .collect();
    let n = pts.len() as f64;
    let (mx, mz) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, z)| (a + x / n, b + z / n));
    let slope = pts.iter().map(|(x, z)| (x - mx) * (z - mz)).sum::<f64>()
        / pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum::<f64>();
    -slope.atan().to_degrees()
}

#[test]
fn a_rotating_drum_holds_a_dynamic_angle_of_repose_that_grows_with_speed() {
    let slow = drum_angle(2.0, 600, 1.3);
    let fast = drum_angle(6.0, 600, 1.3);
    println!("drum, 600 beads: {slow:.1}° at 2 rad/s, {fast:.1}° at 6 rad/s");
    // Glass beads (μ = 0.4–0.5) in the rolling regime: 20–40°; faster (Froude 0.37,
    // cascading) is steeper.
    assert!((15.0..=45.0).contains(&slow), "{slow}");
    assert!(fast > slow + 2.0 && fast < 60.0, "{slow} {fast}");
}
