//! Rolling resistance (issue 50, `physics::rolling`) on the CPU reference backend:
//! a sphere rolling on a plane decelerates at the CDT rate, comes to rest under EPSD
//! without CDT's jitter, and a frictional cluster with rolling resistance conserves
//! its momenta to rounding.

mod common;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;

const G: f64 = 9.81;
const R: f64 = 0.01;
const DENSITY: f64 = 2500.0;

/// A 1 cm glass sphere resting on the plane y = 0 at its Hertz overlap under gravity,
/// rolling along x at `v0` without slip, with rolling friction `mu_r` of `model`; the
/// scene text and the overlap.
fn rolling_sphere(v0: f64, mu_r: f64, model: &str, t_end: f64) -> (String, f64) {
    let m = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * R.powi(3);
    let e_star = 1e8 / (1.0 - 0.09);
    let delta = (m * G / (4.0 / 3.0 * R.sqrt() * e_star)).powf(2.0 / 3.0);
    let lever = R - delta;
    let text = format!(
        "[simulation]\ndt = 5e-6\nt_end = {t_end:?}\ngravity = [0.0, -9.81, 0.0]\n\
         [contact]\nlaw = \"hertz\"\n\
         [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = {DENSITY:?}\n\
         restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.5\n\
         rolling_friction = {mu_r:?}\nrolling_model = \"{model}\"\n\
         [[particle]]\nposition = [0.0, {lever:?}, 0.0]\nradius = {R:?}\n\
         velocity = [{v0:?}, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, {:?}]\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n",
        -v0 / lever
    );
    (text, delta)
}

/// CDT (lever arm of the torque `R* = r`, the contact point at `ℓ = r − δ` below the
/// centre): rolling without slip, `m a = F`, `I ω̇ = −ℓF − μ_r r m g`, `a = ℓ ω̇`, so the
/// deceleration is `μ_r r m g ℓ/(I + m ℓ²)`, `(5/7) μ_r g` up to `δ/r ~ 4·10⁻⁴`.
/// Measured from the velocity after 0.2 s (0.5 m/s falling to about 0.36 m/s) within
/// 0.3 %: the settling of the Hertz contact and of the tangential spring at the start
/// are the error. With μ_r = 0 the sphere keeps its speed (to 10⁻⁶ of it).
#[test]
fn cdt_rolling_decelerates_at_five_sevenths_mu_r_g() {
    for (mu_r, model) in [(0.1, "cdt"), (0.05, "cdt"), (0.0, "cdt")] {
        let (text, delta) = rolling_sphere(0.5, mu_r, model, 0.2);
        let scene = parse_scene(&text).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        b.advance(scene.simulation.steps()).unwrap();
        let a = (0.5 - b.model().particles.velocity[0].x) / b.time();
        let m = scene.model.particles.mass[0];
        let inertia = scene.model.particles.inertia[0];
        let lever = R - delta;
        let expect = mu_r * R * m * G * lever / (inertia + m * lever * lever);
        eprintln!(
            "μ_r = {mu_r}: a = {a:.6} m/s², theory {expect:.6}, (5/7)μ_r g = {:.6}",
            5.0 / 7.0 * mu_r * G
        );
        if mu_r == 0.0 {
            assert!(a.abs() < 1e-6 * 0.5 / b.time(), "free rolling slowed: {a}");
        } else {
            assert!(
                (a - expect).abs() / expect < 3e-3,
                "μ_r = {mu_r}: a = {a} vs {expect}"
            );
        }
    }
}

/// The same sphere on a mesh floor (two triangles in the plane y = 0, the sphere
/// rolling across their shared edge and handed over from one to the other): CDT's
/// deceleration is the plane's to 0.3 %, and EPSD brings it to rest as on the plane
/// (its rolling spring handed over with the tangential one).
#[test]
fn rolling_on_a_mesh_floor_is_rolling_on_a_plane() {
    let mesh = "[[mesh]]\nname = \"floor\"\n\
        vertices = [[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]]\n\
        triangles = [[0, 2, 1], [0, 3, 2]]\n";
    // The diagonal x = z of the square: start at x0 before it, rolling along x.
    let on_mesh = |text: String, x0: f64| {
        let i = text.find("[[wall]]").unwrap();
        let text = text[..i].replace("position = [0.0,", &format!("position = [{x0:?},")) + mesh;
        parse_scene(&text).unwrap()
    };
    let (text, delta) = rolling_sphere(0.5, 0.1, "cdt", 0.2);
    let scene = on_mesh(text, -0.02);
    let mut b = CpuBackend::new(&scene).unwrap();
    b.advance(scene.simulation.steps()).unwrap();
    let a = (0.5 - b.model().particles.velocity[0].x) / b.time();
    let (m, inertia) = (
        scene.model.particles.mass[0],
        scene.model.particles.inertia[0],
    );
    let lever = R - delta;
    let expect = 0.1 * R * m * G * lever / (inertia + m * lever * lever);
    eprintln!("mesh floor, CDT: a = {a:.6} m/s², theory {expect:.6}");
    assert!((a - expect).abs() / expect < 3e-3, "a = {a} vs {expect}");
    // It stops after about 70 µm: started 30 µm before the edge.
    let (text, _) = rolling_sphere(0.01, 0.1, "epsd", 0.3);
    let scene = on_mesh(text, -3e-5);
    let mut b = CpuBackend::new(&scene).unwrap();
    b.advance(scene.simulation.steps()).unwrap();
    let p = &b.model().particles;
    let (w, v) = (p.angular_velocity[0].length(), p.velocity[0].length());
    eprintln!(
        "mesh floor, EPSD at rest: |ω| = {w:.2e}, |v| = {v:.2e}, x = {:.2e}",
        p.position[0].x
    );
    assert!(w < 1e-6 && v < 1e-8, "|ω| = {w}, |v| = {v}");
    assert!(
        p.position[0].x > 0.0,
        "the sphere crossed the edge: x = {}",
        p.position[0].x
    );
}

/// Largest `|ω|` and `|v|` of the sphere over the last `window` steps of a run
/// started at 1 cm/s that stops after about 14 ms.
fn rest_jitter(model: &str) -> (f64, f64) {
    let (text, _) = rolling_sphere(0.01, 0.1, model, 0.3);
    let scene = parse_scene(&text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    let steps = scene.simulation.steps();
    let window = 10_000;
    b.advance(steps - window).unwrap();
    let (mut w, mut v) = (0.0f64, 0.0f64);
    for k in 0..window / 10 {
        b.advance(10).unwrap();
        if k % 250 == 0 {
            let p = &b.model().particles;
            eprintln!(
                "{model} t = {:.4}: v = {:.3e}, ω = {:.3e}",
                b.time(),
                p.velocity[0].x,
                p.angular_velocity[0].z
            );
        }
        w = w.max(b.model().particles.angular_velocity[0].length());
        v = v.max(b.model().particles.velocity[0].x.abs());
    }
    (w, v)
}

/// Ai et al. (2011) §4: the constant torque of CDT does not vanish when the rolling
/// stops, so a sphere at rest flips its spin every few steps (`|ω| ~ M h/I`, 3·10⁻⁴
/// rad/s here); the EPSD spring holds it. The spring's oscillation when the sphere
/// stops (about 0.3 rad/s, `ω_r = √(k_r/I_r) ≈ 200 rad/s`) decays at
/// `η_r ω_r ≈ 60 s⁻¹` (η_r = 0.3, the default): over the last 50 ms of a 0.3 s run
/// that stopped near 14 ms, EPSD's largest |ω| is below 10⁻⁶ rad/s and a thousandth of
/// CDT's, and the sphere stays where it stopped (|v| < 10⁻⁸ m/s).
#[test]
fn epsd_comes_to_rest_without_cdt_jitter() {
    let (w_cdt, v_cdt) = rest_jitter("cdt");
    let (w_epsd, v_epsd) = rest_jitter("epsd");
    eprintln!("at rest: CDT |ω| ≤ {w_cdt:.3e}, |v| ≤ {v_cdt:.3e}; EPSD |ω| ≤ {w_epsd:.3e}, |v| ≤ {v_epsd:.3e}");
    assert!(w_cdt > 1e-5, "CDT should jitter: {w_cdt}");
    assert!(
        w_epsd < 1e-6 && w_epsd < 1e-3 * w_cdt,
        "EPSD jitters: {w_epsd} vs CDT {w_cdt}"
    );
    assert!(v_epsd < 1e-8, "EPSD creeps: {v_epsd}");
}

/// Momenta of the 100-sphere frictional cluster (`common::frictional_cluster`) with
/// rolling resistance, both models: the rolling torques are equal and opposite and
/// apply no force, so linear and angular momentum are conserved to rounding, with the
/// tolerances of the cluster without rolling (tests/granular.rs). The rolling torques
/// act: the run ends in another state than without them.
#[test]
fn frictional_cluster_with_rolling_conserves_momenta() {
    let plain = {
        let mut b = CpuBackend::new(&common::frictional_cluster()).unwrap();
        b.advance(3000).unwrap();
        b.model().particles.angular_velocity.clone()
    };
    for model in [
        varidem::model::RollingModel::Cdt,
        varidem::model::RollingModel::Epsd,
    ] {
        let mut scene = common::frictional_cluster();
        scene.model.materials[0].rolling_friction = 0.3;
        if let Some(c) = &mut scene.model.contact {
            c.rolling = model;
        }
        let mut b = CpuBackend::new(&scene).unwrap();
        let d0 = b.diagnostics().unwrap();
        b.advance(3000).unwrap();
        let d1 = b.diagnostics().unwrap();
        let p = &b.model().particles;
        let p_scale: f64 = (p.mass.iter().zip(&scene.model.particles.velocity))
            .map(|(m, v)| m * v.length())
            .sum();
        let dp = (d1.momentum - d0.momentum).length() / p_scale;
        let dl =
            (d1.angular_momentum - d0.angular_momentum).length() / d0.angular_momentum.length();
        let changed = (p.angular_velocity.iter().zip(&plain))
            .map(|(a, b)| (*a - *b).length())
            .fold(0.0, f64::max);
        eprintln!(
            "{model:?}: ΔP/P = {dp:.2e}, ΔL/L = {dl:.2e}, max |Δω| vs no rolling {changed:.3e}"
        );
        assert!(dp < 1e-13, "{model:?}: linear momentum drift {dp}");
        assert!(dl < 1e-11, "{model:?}: angular momentum drift {dl}");
        assert!(changed > 1.0, "{model:?}: rolling resistance had no effect");
    }
}

/// Every integrator of the Hertz law with rolling resistance (both models): the
/// explicit maps conserve linear momentum to rounding (the torques are equal and
/// opposite and apply no force) and, being variational or symplectic with equal and
/// opposite moments, angular momentum to the cluster test's bound; the implicit
/// trapezoidal rule conserves linear momentum to the same bound and its angular
/// momentum to the fixed-point tolerance (10⁻⁴ relative per step, measured below
/// 10⁻⁶ over the run). Its EPSD springs come from the iterates' increments. CDT's
/// torque jumps where the rolling reverses, on which the trapezoidal rule's fixed-point
/// iteration cycles (measured: no convergence at step 40 of this cluster), so that
/// pairing is a named scene error.
#[test]
fn every_integrator_runs_rolling_resistance() {
    use varidem::model::{IntegratorKind, RollingModel};
    for kind in [
        IntegratorKind::Variational,
        IntegratorKind::VariationalExact,
        IntegratorKind::SymplecticEuler,
        IntegratorKind::CampelloTrapezoidal,
    ] {
        for model in [RollingModel::Cdt, RollingModel::Epsd] {
            if kind == IntegratorKind::CampelloTrapezoidal && model == RollingModel::Cdt {
                continue;
            }
            let mut scene = common::frictional_cluster();
            scene.model.materials[0].rolling_friction = 0.3;
            if let Some(c) = &mut scene.model.contact {
                c.rolling = model;
            }
            scene.simulation.integrator = kind;
            let mut b = CpuBackend::new(&scene).unwrap();
            let d0 = b.diagnostics().unwrap();
            b.advance(1000).unwrap();
            let d1 = b.diagnostics().unwrap();
            let p = &scene.model.particles;
            let p_scale: f64 = (p.mass.iter().zip(&p.velocity))
                .map(|(m, v)| m * v.length())
                .sum();
            let dp = (d1.momentum - d0.momentum).length() / p_scale;
            let dl =
                (d1.angular_momentum - d0.angular_momentum).length() / d0.angular_momentum.length();
            eprintln!("{kind:?} {model:?}: ΔP/P = {dp:.2e}, ΔL/L = {dl:.2e}");
            assert!(dp < 1e-13, "{kind:?} {model:?}: linear momentum drift {dp}");
            let bound = if kind == IntegratorKind::CampelloTrapezoidal {
                1e-6
            } else {
                1e-11
            };
            assert!(
                dl < bound,
                "{kind:?} {model:?}: angular momentum drift {dl}"
            );
        }
    }
}

/// CDT with the implicit trapezoidal rule is refused when the scene is read, naming
/// the integrator and the way out.
#[test]
fn cdt_under_the_trapezoidal_rule_is_a_named_error() {
    let (text, _) = rolling_sphere(0.5, 0.1, "cdt", 0.01);
    let text = text.replace(
        "[simulation]\n",
        "[simulation]\nintegrator = \"campello-trapezoidal\"\n",
    );
    let e = parse_scene(&text).unwrap_err().to_string();
    assert!(
        e.contains("simulation.integrator = \"campello-trapezoidal\"")
            && e.contains("rolling_model = \"epsd\""),
        "{e}"
    );
    parse_scene(&text.replace("\"cdt\"", "\"epsd\"")).unwrap();
}

/// `scenes/rolling-heap.toml` (1500 beads in a sleeve on a rough floor, the sleeve
/// opened once they settle, EPSD) at μ_r = 0.1, 0.2 and 0.4: the heap's slope rises
/// with μ_r, each step by more than 2° (measured 9.8°, 14.0°, 17.2°), and the heap is
/// at rest at the end (no bead faster than 1 mm/s; twisting, which rolling resistance
/// does not resist, may go on). At μ_r = 0 no heap forms: smooth spheres roll away on
/// the frictional floor for ever (measured: a single layer 3.5 mm high still moving
/// after 1 s). The three runs go in parallel, one thread each (1500 beads are below
/// the backend's threshold for threads of its own).
#[test]
fn heap_angle_rises_with_rolling_friction() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/rolling-heap.toml");
    let run = |mu_r: f64| {
        let mut scene = varidem::io::load_scene(&path).unwrap();
        scene.model.materials[0].rolling_friction = mu_r;
        let (angle, _, fastest) = common::settled_heap(&scene, &format!("μ_r = {mu_r}"));
        assert!(fastest < 1e-3, "μ_r = {mu_r}: not at rest ({fastest} m/s)");
        angle
    };
    let angles: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = [0.1, 0.2, 0.4].map(|mu| s.spawn(move || run(mu))).into();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        angles[1] > angles[0] + 2.0 && angles[2] > angles[1] + 2.0,
        "{angles:?}"
    );
}

/// Results do not depend on storage (issue 44's contract) with rolling springs in the
/// history: the EPSD pour of `scenes/rolling-heap.toml`, cut to 15000 steps, stored in
/// id order (`sort_every = 0`) and sorted along space every 20 steps gives the same
/// bits (the pairs' rolling springs move with their slots at each sort, the walls'
/// with their particles).
#[test]
fn rolling_results_do_not_depend_on_storage_order() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/rolling-heap.toml");
    let run = |sort_every: u64| {
        let mut scene = varidem::io::load_scene(&path).unwrap();
        scene.simulation.sort_every = Some(sort_every);
        let mut b = CpuBackend::new(&scene).unwrap();
        b.advance(15_000).unwrap();
        let roll = b.checkpoint_state().unwrap().contacts.unwrap().roll;
        (b.particles().unwrap(), roll)
    };
    let (a, ra) = run(0);
    let (b, rb) = run(20);
    assert!(ra.iter().filter(|s| s.length() > 0.0).count() > 100);
    assert_eq!(a.position, b.position);
    assert_eq!(a.angular_velocity, b.angular_velocity);
    assert_eq!(ra, rb);
}

/// The loads of `walls.csv` take the rolling torques' reaction: for the sphere rolling
/// on a plane (CDT, 0.1 s in) and across the mesh floor, the load's moment about the
/// wall's axis point and the contact's moment on the sphere about the same point sum
/// to zero, `M_load + (x − c) × f_c + M_sphere = 0` (`f_c` the contact force, the
/// sphere's force less its weight), to 10⁻¹² of the rolling torque `μ_r r f_n`.
/// Without the reaction the sum would be that torque.
#[test]
fn wall_loads_take_the_rolling_torques_reaction() {
    let mesh = "[[mesh]]\nname = \"floor\"\n\
        vertices = [[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]]\n\
        triangles = [[0, 2, 1], [0, 3, 2]]\n";
    let (plane, _) = rolling_sphere(0.5, 0.1, "cdt", 0.1);
    let i = plane.find("[[wall]]").unwrap();
    let on_mesh = plane[..i].to_string() + mesh;
    for (what, text) in [("plane", plane.clone()), ("mesh", on_mesh)] {
        let scene = parse_scene(&text).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        b.advance(scene.simulation.steps()).unwrap();
        let load = b.checkpoint_state().unwrap().contacts.unwrap().wall_load[0];
        let axis = match scene.model.walls.first() {
            Some(w) => w.motion.axis_point,
            None => scene.model.meshes[0].motion.axis_point,
        };
        let p = &b.model().particles;
        let f = b.particle_forces()[0];
        let f_c = f.force - p.mass[0] * DVec3::new(0.0, -G, 0.0);
        let balance = load[1] + (p.position[0] - axis).cross(f_c) + f.moment;
        let torque = 0.1 * R * f_c.y;
        eprintln!("{what}: moment balance {balance:?}, rolling torque {torque:.3e}");
        assert!(balance.length() < 1e-12 * torque, "{what}: {balance:?}");
    }
}
