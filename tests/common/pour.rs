//! The settling pour of the statistical GPU-against-CPU test and the statistics it
//! compares (shared by tests/gpu_granular.rs and tests/pour_spread.rs).

use varidem::backend::Backend;
use varidem::io::parse_scene;
use varidem::model::{Particles, Scene};

/// Bounds of [`differences`]' three statistics in the f32-against-f64 comparison:
/// kinetic energy pointwise while above half its peak (relative), kinetic energy at
/// every output (relative to the peak), packing fraction (relative).
pub const BOUNDS: [f64; 3] = [0.01, 0.02, 0.01];

/// A 10³-particle pour into a 0.1 m box, 1 s (10⁴ steps): 1000 grains of 5 mm (±10 %)
/// dropped from up to 0.35 m settle into a bed about 0.1 m high.
pub fn settling_pour() -> Scene {
    let text = "[simulation]\ndt = 1e-4\nsteps = 10000\ngravity = [0.0, 0.0, -9.81]\n\
        [contact]\nlaw = \"hertz\"\nskin = 0.001\nmax_contacts = 16\n\
        [[material]]\nname = \"grain\"\nyoung = 1e6\npoisson = 0.3\ndensity = 2500.0\n\
        restitution = 0.3\nfriction_static = 0.5\n\
        [[cloud]]\nmin = [0.0, 0.0, 0.01]\nmax = [0.1, 0.1, 0.35]\ncount = 1000\nradius = 0.005\n\
        radius_jitter = 0.1\nseed = 9\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n\
        [[wall]]\npoint = [0.1, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n\
        [[wall]]\npoint = [0.0, 0.1, 0.0]\nnormal = [0.0, -1.0, 0.0]\n";
    parse_scene(text).unwrap()
}

/// What the statistical comparison of [`settling_pour`] looks at: the kinetic energy
/// (translational and rotational) every 200 steps, and the final state.
pub struct Settled {
    /// Kinetic energy every 200 steps.
    pub ke: Vec<f64>,
    /// The final state.
    pub last: Particles,
}

pub fn settle(b: &mut dyn Backend) -> Settled {
    let mut ke = Vec::new();
    for _ in 0..50 {
        b.advance(200).unwrap();
        let d = b.diagnostics().unwrap();
        ke.push(d.e_kin + d.e_rot);
    }
    Settled {
        ke,
        last: b.particles().unwrap(),
    }
}

/// Packing fraction of the bed in the 0.1 m × 0.1 m box from the grains' mean height:
/// in a bed of uniform packing φ and height H the volume-weighted mean height of the
/// grains is H/2, so φ = V / (A · 2 z̄). It averages over every grain; the top of the
/// highest grain, used before, is one grain's position.
pub fn packing(p: &Particles) -> f64 {
    let volume = |i: usize| 4.0 / 3.0 * std::f64::consts::PI * p.radius[i].powi(3);
    let v: f64 = (0..p.len()).map(volume).sum();
    let z = (0..p.len())
        .map(|i| volume(i) * p.position[i].z)
        .sum::<f64>()
        / v;
    v / (0.1 * 0.1 * 2.0 * z)
}

/// How far `b` is from the reference `a`: the kinetic energy pointwise (relative) while
/// the reference's is at least half its peak (the fall and the first impact), the
/// kinetic energy at every output relative to the peak, and the packing fraction
/// (relative).
pub fn differences(a: &Settled, b: &Settled) -> [f64; 3] {
    let peak = a.ke.iter().copied().fold(0.0, f64::max);
    let pairs = || a.ke.iter().zip(&b.ke);
    let pointwise = pairs()
        .filter(|(x, _)| **x >= 0.5 * peak)
        .map(|(x, y)| (x - y).abs() / x)
        .fold(0.0, f64::max);
    let history = pairs()
        .map(|(x, y)| (x - y).abs() / peak)
        .fold(0.0, f64::max);
    let (pa, pb) = (packing(&a.last), packing(&b.last));
    [pointwise, history, (pa - pb).abs() / pa]
}
