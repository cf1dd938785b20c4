//! A quasi-2-D flat-bottomed silo discharging through a slot (issue 26, Beverloo's
//! law), shared by `tests/equipment.rs` (a reduced case) and
//! `examples/beverloo.rs` (the documented run).
//!
//! One layer of glass beads (d = 4 mm, ±5 %) between two planes a bead apart, a silo
//! `width` wide, the floor a mesh of two strips with a slot of width `D` in the middle,
//! shut by a gate (a plane) that drops away at [`OPEN`]. Beads that fall 6 cm below
//! the floor leave the `[domain]` and are removed. The discharge rate is the slope of
//! the count of beads below the floor over [`WINDOW`] after the flow has started.

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::model::FLAG_REMOVED;

/// Bead radius (m).
pub(crate) const RADIUS: f64 = 0.002;
/// Time the gate opens (s): the beads have settled.
pub(crate) const OPEN: f64 = 0.45;
/// The window of the rate fit after the gate opens (s): the first 0.1 s is the start
/// of the flow.
pub(crate) const WINDOW: (f64, f64) = (0.1, 0.4);

/// The scene of a silo `width` wide holding `count` beads with a slot of width `d_slot`.
pub(crate) fn scene(width: f64, count: usize, d_slot: f64) -> String {
    let (w, s) = (0.5 * width, 0.5 * d_slot);
    let r_max = RADIUS * 1.05;
    let face = r_max + 1e-4;
    // Fill at a 2-D packing of 0.35 (random addition jams at 0.55).
    let height =
        count as f64 * std::f64::consts::PI * RADIUS * RADIUS / 0.35 / (width - 2.0 * r_max);
    format!(
        r#"
[simulation]
dt = 2e-5
t_end = {t_end:?}
output_every = 5000
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hertz"
skin = 4e-4

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.3
friction_static = 0.5
friction_dynamic = 0.5

[[cloud]]
min = [{x0:?}, {yc0:?}, {z0:?}]
max = [{x1:?}, {yc1:?}, {z1:?}]
count = {count}
radius = {RADIUS:?}
radius_jitter = 0.05
material = "glass"
seed = 3

[[wall]]
point = [0.0, {yf:?}, 0.0]
normal = [0.0, -1.0, 0.0]
[[wall]]
point = [0.0, {yb:?}, 0.0]
normal = [0.0, 1.0, 0.0]
[[wall]]
point = [{wl:?}, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
[[wall]]
point = [{wr:?}, 0.0, 0.0]
normal = [-1.0, 0.0, 0.0]
[[wall]]                # the gate
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
velocity = [0.0, 0.0, -5.0]
start = {OPEN:?}

[[mesh]]                # the floor: two strips either side of the slot
name = "floor"
vertices = [[{wl:?}, -0.01, 0.0], [{sl:?}, -0.01, 0.0], [{sl:?}, 0.01, 0.0], [{wl:?}, 0.01, 0.0],
            [{sr:?}, -0.01, 0.0], [{wr:?}, -0.01, 0.0], [{wr:?}, 0.01, 0.0], [{sr:?}, 0.01, 0.0]]
triangles = [[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]]

[domain]
min = [-1.0, -1.0, -0.06]
max = [1.0, 1.0, 2.0]
on_exit = "remove"
"#,
        t_end = OPEN + WINDOW.1,
        // The cloud's box holds whole spheres: centres within 1e-5 m of y = 0.
        x0 = -w,
        x1 = w,
        yc0 = -r_max - 1e-5,
        yc1 = r_max + 1e-5,
        z0 = 0.0,
        z1 = 2.0 * r_max + height,
        yf = face,
        yb = -face,
        wl = -w,
        wr = w,
        sl = -s,
        sr = s,
    )
}

/// What a discharge measured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Discharge {
    /// Slot width (m).
    pub(crate) d_slot: f64,
    /// Mass flow rate (kg/s).
    pub(crate) rate: f64,
    /// Bulk density of the settled bed before the gate opens (kg/m², per unit area of
    /// the silo's plane).
    pub(crate) bulk: f64,
    /// Beads discharged in the window.
    pub(crate) beads: usize,
}

/// Runs the silo and measures its discharge.
pub(crate) fn discharge(width: f64, count: usize, d_slot: f64) -> Discharge {
    let scene = varidem::io::parse_scene(&scene(width, count, d_slot)).unwrap();
    let dt = scene.simulation.dt;
    let mut b = CpuBackend::new(&scene).unwrap();
    let steps = |t: f64| (t / dt).round() as u64;
    let advance_to = |b: &mut CpuBackend, step: u64| {
        let k = step.saturating_sub(b.step_count());
        b.advance(k).unwrap();
    };
    let below = |b: &CpuBackend| {
        let p = &b.model().particles;
        (0..p.len())
            .filter(|&i| p.flags[i] & FLAG_REMOVED != 0 || p.position[i].z < -RADIUS)
            .count()
    };
    // Just before the gate opens: the bed's bulk density, its mass over the area under
    // its mean top surface (the highest bead centre of each of 10 columns, plus r).
    advance_to(&mut b, steps(OPEN - 0.01));
    let p = &b.model().particles;
    let mass: f64 = p.mass.iter().sum();
    let columns = 10;
    let mut top = vec![0f64; columns];
    for x in &p.position {
        let c = (((x.x / width) + 0.5) * columns as f64).clamp(0.0, columns as f64 - 1.0);
        let k = c as usize;
        top[k] = top[k].max(x.z + RADIUS);
    }
    let height = top.iter().sum::<f64>() / columns as f64;
    let bulk = mass / (width * height);
    let m_bead = mass / p.len() as f64;
    // Counts every 0.01 s through the window, and their least-squares slope.
    let mut samples = Vec::new();
    let mut t = OPEN + WINDOW.0;
    while t <= OPEN + WINDOW.1 + 1e-9 {
        advance_to(&mut b, steps(t));
        samples.push((t, below(&b) as f64));
        t += 0.01;
    }
    let n = samples.len() as f64;
    let (mt, mc) = samples
        .iter()
        .fold((0.0, 0.0), |(a, c), (t, k)| (a + t / n, c + k / n));
    let slope = samples
        .iter()
        .map(|(t, k)| (t - mt) * (k - mc))
        .sum::<f64>()
        / samples
            .iter()
            .map(|(t, _)| (t - mt) * (t - mt))
            .sum::<f64>();
    Discharge {
        d_slot,
        rate: slope * m_bead,
        bulk,
        beads: (samples[samples.len() - 1].1 - samples[0].1) as usize,
    }
}

/// Beverloo's 2-D law `W = C ρ_b √g (D − k d)^{3/2}` fitted to discharges: `W^{2/3}`
/// is linear in `D`, slope `(C ρ_b √g)^{2/3}` and root `k d`. Returns `(C, k, r²)`
/// with `ρ_b` the mean bulk density.
pub(crate) fn fit_beverloo(runs: &[Discharge]) -> (f64, f64, f64) {
    let n = runs.len() as f64;
    let xs: Vec<f64> = runs.iter().map(|r| r.d_slot).collect();
    let ys: Vec<f64> = runs.iter().map(|r| r.rate.powf(2.0 / 3.0)).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let bulk = runs.iter().map(|r| r.bulk).sum::<f64>() / n;
    let c = slope.powf(1.5) / (bulk * 9.81f64.sqrt());
    let k = -intercept / slope / (2.0 * RADIUS);
    (c, k, sxy * sxy / (sxx * syy))
}
