//! Shared set-ups for the physics tests.
#![allow(
    dead_code,
    unreachable_pub,
    reason = "shared by several test crates, each using a part of it"
)]

pub mod bead;
pub mod bundled;
pub mod channel;
pub mod hard_problems;
pub mod inserter;
pub mod overlap;
pub mod pour;
pub mod stream;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::integrators::IntegratorKind;
use varidem::model::generators::Block;
use varidem::model::generators::Ring;
use varidem::model::{BondStiffness, ContactLaw, ContactParams, Model, Particle, ShearForm, Wall};

/// The pendulum of Baker & Gonzalez §3 with m = g = J = 1, ρ₀ = e₃, a = +e₃ (eq. 39 as
/// printed) and the initial conditions of eq. (42).
pub fn pendulum() -> Model {
    let mut m = Model::default();
    let mut p = Particle::at_rest(DVec3::ZERO, 1.0, 0.1);
    p.inertia = 1.0;
    p.hold_position = true;
    p.pendulum_offset = Some(DVec3::Z);
    p.rotation = DVec3::new(0.0, 2.0 * (3.0 * std::f64::consts::PI / 8.0).tan(), 0.0);
    let s = (std::f64::consts::PI / 4.0).sin();
    p.angular_velocity = DVec3::new(1.0, 0.0, 1.0) * 0.4 * s * s;
    m.particles.push(p);
    m.gravity = DVec3::Z;
    m
}

/// The torus of §4.1: 80 particles, D_t = 3, m = J = 1, K^m = 10, K^a = K^s = 200,
/// K^pp = 2100, in the x–y plane. With `wall`, the ring moves at v₀ = 1 towards a wall
/// at x = 0 with an initial gap of 0.05.
pub fn torus(wall: bool, random: bool) -> Model {
    let mut m = Model::default();
    let mut ring = Ring {
        count: 80,
        diameter: 3.0,
        center: DVec3::ZERO,
        axis: DVec3::Z,
        mass: 1.0,
        inertia: Some(1.0),
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        bond: true,
        random_velocity: 0.0,
        random_angular_velocity: 0.0,
        seed: 42,
    };
    if wall {
        ring.center = DVec3::new(1.5 + ring.particle_radius() + 0.05, 0.0, 0.0);
        ring.velocity = DVec3::new(-1.0, 0.0, 0.0);
    }
    if random {
        ring.random_velocity = 0.1;
        ring.random_angular_velocity = 0.5;
    }
    ring.add_to(
        &mut m,
        BondStiffness {
            bend: 10.0,
            axial: 200.0,
            shear: 200.0,
        },
    )
    .unwrap();
    m.shear = ShearForm::Objective;
    m.contact = Some(ContactParams {
        max_contacts: 16,
        law: ContactLaw::Binder { k_pp: 2100.0 },
        skin: 0.1 * ring.particle_radius(),
        max_overlap: varidem::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
    if wall {
        m.walls.push(Wall {
            point: DVec3::ZERO,
            normal: DVec3::X,
            stiffness: 2100.0,
            material: None,
            motion: Default::default(),
        });
    }
    m
}

/// Runs `steps` steps, calling `each` with the backend after every step (and at step 0).
pub fn run_with(
    model: &Model,
    kind: IntegratorKind,
    dt: f64,
    steps: u64,
    mut each: impl FnMut(&mut CpuBackend),
) -> CpuBackend {
    let mut b = CpuBackend::from_model(model.clone(), kind, dt).unwrap();
    each(&mut b);
    for _ in 0..steps {
        b.step().unwrap();
        each(&mut b);
    }
    b.check_finite().unwrap();
    let _ = b.diagnostics().unwrap();
    b
}

/// Least-squares slope of log(err) against log(h).
pub fn loglog_slope(h: &[f64], err: &[f64]) -> f64 {
    let xs: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let ys: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// A seeded random bonded cluster: a 5×4×3 jittered block with random velocities and
/// spins, objective or printed shear, contacts, a wall and gravity.
pub fn random_cluster(seed: u64, shear: ShearForm) -> Model {
    let mut m = Model::default();
    Block {
        origin: DVec3::new(0.3, -0.2, 0.1),
        counts: [5, 4, 3],
        spacing: 0.1,
        radius: 0.05,
        radius_jitter: 0.05,
        density: 1000.0,
        velocity: DVec3::ZERO,
        bond_cutoff: 0.15,
        seed,
        material: 0,
        hold_rotation: false,
        cylinder: None,
    }
    .add_to(
        &mut m,
        BondStiffness {
            bend: 0.01,
            axial: 2.0,
            shear: 1.0,
        },
    )
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..m.particles.len() {
        m.particles.velocity[i] = DVec3::new(
            rng.random_range(-0.3..0.3),
            rng.random_range(-0.3..0.3),
            rng.random_range(-0.3..0.3),
        );
        m.particles.angular_velocity[i] = DVec3::new(
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
    }
    m.shear = shear;
    m.gravity = DVec3::new(0.0, 0.0, -9.81);
    m.contact = Some(ContactParams {
        max_contacts: 16,
        law: ContactLaw::Binder { k_pp: 50.0 },
        skin: 0.01,
        max_overlap: varidem::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
    m.walls.push(Wall {
        point: DVec3::ZERO,
        normal: DVec3::Z,
        stiffness: 50.0,
        material: None,
        motion: Default::default(),
    });
    m
}

/// 100 frictional, damped spheres (±10 % radii) shot at the centre of their cloud with
/// random spins, so that many contacts form, slip and stick (the momentum tests of
/// both backends).
pub fn frictional_cluster() -> varidem::model::Scene {
    let text = "[simulation]\ndt = 4e-6\nsteps = 10000\n\
        [contact]\nlaw = \"hertz\"\n\
        [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = 2500.0\n\
        restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n\
        [[cloud]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.06, 0.06, 0.06]\ncount = 100\nradius = 0.005\n\
        radius_jitter = 0.1\nseed = 3\n";
    let mut scene = varidem::io::parse_scene(text).unwrap();
    let p = &mut scene.model.particles;
    let c = DVec3::splat(0.03);
    for i in 0..p.len() {
        let s = i as f64;
        p.velocity[i] = (c - p.position[i]) * 20.0 + DVec3::new(s.sin(), s.cos(), (2.0 * s).sin());
        p.angular_velocity[i] = DVec3::new((3.0 * s).cos(), (5.0 * s).sin(), s.cos()) * 100.0;
    }
    scene
}

/// `m` moved by `d`: particles, walls and the domain (bonds' rest states are relative).
pub fn translate(m: &mut Model, d: DVec3) {
    for x in &mut m.particles.position {
        *x += d;
    }
    for w in &mut m.walls {
        w.point += d;
    }
    for c in &mut m.clumps {
        c.position += d;
    }
    if let Some(dom) = &mut m.domain {
        dom.min += d;
        dom.max += d;
    }
}

/// A dimer of two 1 mm spheres laid along the fall line of a plane through the origin
/// tilted by `theta` about y, resting on it, in the scene's only material `material`
/// (a `[[material]]` named "glass"), stepped at `dt` under gravity (issue 24's incline):
/// the scene text, the dimer's start and the unit vector down the slope.
pub fn dimer_incline(theta: f64, dt: f64, material: &str) -> (String, DVec3, DVec3) {
    let (s, c) = theta.sin_cos();
    let n = DVec3::new(-s, 0.0, c);
    let down = DVec3::new(-c, 0.0, -s);
    // The dimer's axis (body x) along the fall line: a turn by θ about y.
    let alpha = 2.0 * (0.5 * theta).tan() * DVec3::new(0.0, -1.0, 0.0);
    let x0 = n * 1.0e-3;
    let text = format!(
        "[simulation]\ndt = {dt:e}\nsteps = 10\ngravity = [0.0, 0.0, -9.81]\n\
         [contact]\nlaw = \"hertz\"\n{material}\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = {:?}\nmaterial = \"glass\"\n\
         [[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
         spheres = [{{ position = [-1e-3, 0.0, 0.0], radius = 1e-3 }}, \
                    {{ position = [1e-3, 0.0, 0.0], radius = 1e-3 }}]\n\
         [[clump]]\ntype = \"dimer\"\nposition = {:?}\nrotation = {:?}\n",
        n.to_array(),
        x0.to_array(),
        alpha.to_array()
    );
    (text, x0, down)
}

/// A `[[clump]]` of type `kind` with its centre of mass `x`, attitude `alpha`, velocity
/// `v` and spatial angular velocity `w`, as scene text.
pub fn clump_toml(kind: &str, x: DVec3, alpha: DVec3, v: DVec3, w: DVec3) -> String {
    format!(
        "[[clump]]\ntype = {kind:?}\nposition = {:?}\nrotation = {:?}\nvelocity = {:?}\nangular_velocity = {:?}\n",
        x.to_array(),
        alpha.to_array(),
        v.to_array(),
        w.to_array()
    )
}

/// The Painlevé rod of Preclik, Eibl & Rüde §4.2 as a clump (`tests/hard_clumps.rs`):
/// mass [`ROD`]`.0`, length `.1`, end spheres of radius `.3`, its lower end on the floor
/// at θ = ½ acos(−3/5) sliding at `.2` with no normal velocity, no gravity, ε = 0, under
/// `friction_model`, `mu` and `solver`.
pub fn painleve_rod(friction_model: &str, mu: f64, solver: &str) -> String {
    let (m, l, v0, rs) = ROD;
    let theta = rod_angle();
    let (s, c) = theta.sin_cos();
    // Body x (the rod's axis) turned to (cos θ, 0, sin θ); the tip 1e-9 m into the
    // floor, so that the gap term is exactly 0.
    let alpha = 2.0 * (0.5 * theta).tan() * DVec3::new(0.0, -1.0, 0.0);
    let centre = DVec3::new(0.5 * l * c, 0.0, 0.5 * l * s + rs - 1e-9);
    format!(
        "[simulation]\ndt = 1e-3\nsteps = 10\nintegrator = \"impulse-velocity\"\n\
         [contact]\nlaw = \"hard\"\nfriction_model = \"{friction_model}\"\nsolver = \"{solver}\"\n\
         error_reduction = 0.0\ntolerance = 1e-14\nmax_sweeps = 10\n\
         [[material]]\nname = \"rod\"\nyoung = 2e11\npoisson = 0.3\ndensity = 7800.0\n\
         restitution = 0.0\nfriction_static = {mu}\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
         [[clump_type]]\nname = \"rod\"\nmaterial = \"rod\"\nmass = {m}\n\
         inertia = [{}, {}, {}]\n\
         spheres = [{{ position = [{}, 0.0, 0.0], radius = {rs:e} }}, \
                    {{ position = [{}, 0.0, 0.0], radius = {rs:e} }}]\n\
         [[clump]]\ntype = \"rod\"\nposition = {:?}\nrotation = {:?}\n\
         velocity = [{}, 0.0, 0.0]\n",
        m * l * l / 24.0,
        m * l * l / 12.0,
        m * l * l / 12.0,
        -0.5 * l,
        0.5 * l,
        centre.to_array(),
        alpha.to_array(),
        -v0
    )
}

/// The Painlevé rod's mass (kg), length (m), sliding speed (m/s) and end-sphere radius (m).
pub const ROD: (f64, f64, f64, f64) = (1.7, 0.8, 2.3, 1e-7);

/// The rod's angle θ = ½ acos(−3/5), where μ* is smallest (4/3).
pub fn rod_angle() -> f64 {
    0.5 * (-0.6f64).acos()
}

/// μ*(θ) = (cos θ + 1/(3 cos θ))/sin θ: the rod jams at or above it.
pub fn rod_mu_star(theta: f64) -> f64 {
    let (s, c) = theta.sin_cos();
    (c + 1.0 / (3.0 * c)) / s
}

/// A dimer and a trimer clump type of material "glass", with full tensors (the GPU
/// clump tests' and the rolling clumps').
pub const CLUMP_SHAPES: &str = "[[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [-0.6e-3, 0.0, 0.0], radius = 1e-3 }, \
                { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
     [[clump_type]]\nname = \"trimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [0.0, 0.0, 0.0], radius = 1e-3 }, \
                { position = [1.2e-3, 0.0, 0.0], radius = 0.7e-3 }, \
                { position = [0.0, 1.1e-3, 0.3e-3], radius = 0.6e-3 }]\n";

/// The slope of a settled heap (degrees) and its height: the surface `H(ρ)` (the
/// highest sphere top in rings of width 2 mm about the vertical axis through the
/// heap's centre of mass), fitted by least squares over the flanks: the rings where it
/// lies above one and a half bead diameters (the single layer around the heap) and
/// below 90 % of the heap's height (its rounded top).
pub fn heap_angle(p: &varidem::model::Particles) -> (f64, f64) {
    let n = p.len() as f64;
    let c = p.position.iter().fold(glam::DVec3::ZERO, |a, x| a + *x) / n;
    let ring = 0.002;
    let mut top = Vec::<f64>::new();
    for (x, r) in p.position.iter().zip(&p.radius) {
        let rho = ((x.x - c.x).powi(2) + (x.y - c.y).powi(2)).sqrt();
        let k = (rho / ring) as usize;
        if top.len() <= k {
            top.resize(k + 1, 0.0);
        }
        top[k] = top[k].max(x.z + r);
    }
    let height = top.iter().copied().fold(0.0, f64::max);
    let pts: Vec<(f64, f64)> = (top.iter().enumerate())
        .filter(|(_, &h)| h > 0.003 && h < 0.9 * height)
        .map(|(k, &h)| ((k as f64 + 0.5) * ring, h))
        .collect();
    let m = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mx, my) = (sx / m, sy / m);
    let (sxy, sxx) = pts.iter().fold((0.0, 0.0), |a, p| {
        (a.0 + (p.0 - mx) * (p.1 - my), a.1 + (p.0 - mx).powi(2))
    });
    ((-sxy / sxx).atan().to_degrees(), height)
}

/// Runs `scene` (a heap pour) to its end on the CPU backend and measures the heap
/// ([`heap_angle`]): its slope (degrees), height (m) and fastest bead's speed (m/s),
/// printed under `label`.
pub fn settled_heap(scene: &varidem::model::Scene, label: &str) -> (f64, f64, f64) {
    let mut b = CpuBackend::new(scene).unwrap();
    b.advance(scene.simulation.steps()).unwrap();
    let p = b.model().particles.clone();
    let (angle, height) = heap_angle(&p);
    let fastest = p.velocity.iter().map(|v| v.length()).fold(0.0, f64::max);
    eprintln!(
        "{label}: heap slope {angle:.1}°, height {:.1} mm, fastest bead {fastest:.1e} m/s",
        height * 1e3
    );
    (angle, height, fastest)
}

/// A bond pulled until it breaks (issue 47): two unit spheres 1 m apart, the first held,
/// the second leaving at 1 m/s along the bond (K^a = 100 J alone, T_c = 9.99 N against a
/// peak tension of 10 N), h = 10⁻⁴ s: the bond breaks at step 1527.
pub fn pulled_bond(steps: u64, output_every: u64) -> varidem::model::Scene {
    let text = format!(
        "[simulation]\ndt = 1e-4\nsteps = {steps}\noutput_every = {output_every}\n\
         [binder]\nk_bend = 0.0\nk_axial = 100.0\nk_shear = 0.0\nbreak_tension = 9.99\n\
         [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\ninertia = 1.0\n\
         hold_position = true\nhold_rotation = true\n\
         [[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\ninertia = 1.0\n\
         velocity = [1.0, 0.0, 0.0]\n\
         [[bond]]\ni = 0\nj = 1\n"
    );
    varidem::io::parse_scene(&text).unwrap()
}
