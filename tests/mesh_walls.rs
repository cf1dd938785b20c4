//! Mesh walls and moving walls on the CPU reference (issue 26): a plane and the same
//! plane as a two-triangle mesh give the same trajectory across the shared diagonal;
//! elastic impacts on a face, an edge and a corner conserve energy and push along the
//! closest-point normal; a turning plate drags a sphere at its surface speed; a
//! moving-mesh run resumes bitwise from a checkpoint.

mod common;

use common::bead::{bead_scene, material, PLANE, SQUARE_MESH};
use glam::DVec3;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;

fn trajectory(text: &str, steps: usize) -> Vec<[DVec3; 4]> {
    let scene = parse_scene(text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    let mut out = Vec::new();
    for _ in 0..steps {
        b.step().unwrap();
        let p = &b.model().particles;
        out.push([
            p.position[0],
            p.velocity[0],
            varidem::math::rodrigues::rotate(
                p.rotation[0],
                DVec3::new(1.0, 2.0, 3.0) / 14f64.sqrt(),
            ),
            p.angular_velocity[0],
        ]);
    }
    out
}

/// The largest difference of each of the four fields between two trajectories.
fn worst_difference(a: &[[DVec3; 4]], b: &[[DVec3; 4]]) -> [f64; 4] {
    let mut worst = [0.0f64; 4];
    for (x, y) in a.iter().zip(b) {
        for k in 0..4 {
            worst[k] = worst[k].max((x[k] - y[k]).length());
        }
    }
    worst
}

/// The sphere crosses `y = x` during the run: it starts at y − x = 0.5 and ends below.
fn crosses(t: &[[DVec3; 4]]) -> bool {
    let d = |x: DVec3| x.y - x.x;
    d(t[0][0]) > 0.0 && d(t[t.len() - 1][0]) < 0.0
}

#[test]
fn a_plane_and_the_same_plane_as_two_triangles_give_one_trajectory() {
    // 3e5 steps of 2 µs: 0.6 s, the bead travels 0.6 m, crossing the diagonal at
    // about t = 0.3 s, and stays in contact (sliding, then rolling).
    let steps = 300_000;
    for law in ["hertz", "binder"] {
        let a = trajectory(&bead_scene(PLANE, law, steps as u64), steps);
        let b = trajectory(&bead_scene(SQUARE_MESH, law, steps as u64), steps);
        assert!(crosses(&a), "{law}: the run crosses the diagonal");
        let worst = worst_difference(&a, &b);
        // The plane's distance (x − p)·n and the triangle's |x − q| round differently
        // (~1e-17 m per evaluation); over 3e5 steps of a contact that does not amplify
        // them (no collisions between bodies) they stay far below 1e-12.
        println!(
            "{law}: worst |Δx| {:.1e} m, |Δv| {:.1e} m/s, |Δα| {:.1e}, |ΔΩ| {:.1e} rad/s",
            worst[0], worst[1], worst[2], worst[3]
        );
        assert!(worst[0] <= 1e-12, "{law}: {worst:?}");
        assert!(worst[1] <= 1e-12, "{law}: {worst:?}");
        // Rotations compared as matrices (α = 2 tan(θ/2) e grows without bound near
        // θ = π, where rounding in α is no error in the rotation).
        assert!(worst[2] <= 1e-12, "{law}: {worst:?}");
        // Ω is ~30 rad/s: relative 1e-12.
        assert!(worst[3] <= 3e-11, "{law}: {worst:?}");
    }
}

/// A tetrahedron-like tent: two triangles meeting at a ridge along x at z = 0.1
/// (a convex edge), with a corner at the ridge's end.
const TENT: &str = r#"
[[mesh]]
name = "tent"
vertices = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 0.0, 0.1], [-1.0, 0.0, 0.1], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]
triangles = [[0, 1, 2], [0, 2, 3], [3, 2, 4], [3, 4, 5]]
"#;

fn impact(position: DVec3, velocity: DVec3, dt: f64) -> (f64, f64, DVec3) {
    let text = format!(
        r#"
[simulation]
dt = {dt:?}
steps = 1
[contact]
law = "hertz"
skin = 0.002
{}
[[particle]]
position = {:?}
velocity = {:?}
radius = 0.02
material = "glass"
{TENT}
"#,
        material(1.0),
        position.to_array(),
        velocity.to_array()
    );
    let scene = parse_scene(&text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    let energy = |b: &CpuBackend| {
        let p = &b.model().particles;
        let f = &b.particle_forces()[0];
        0.5 * p.mass[0] * p.velocity[0].length_squared()
            + 0.5 * p.inertia[0] * p.angular_velocity[0].length_squared()
            + f.e_wall
    };
    let e0 = energy(&b);
    let mut worst = 0.0f64;
    let mut touched = false;
    // Until the bead has left again (the contact lasts 1.4 ms at 1 m/s: eq. 24's
    // t_col for this bead on a rigid wall).
    for _ in 0..(4e-3 / dt) as usize {
        b.step().unwrap();
        let e = energy(&b);
        worst = worst.max((e - e0).abs() / e0);
        let f = b.particle_forces()[0];
        if f.e_wall > 0.0 {
            touched = true;
        } else if touched {
            break;
        }
    }
    assert!(touched, "the bead at {position} hits the tent");
    let v = b.model().particles.velocity[0];
    let e1 = energy(&b);
    (worst, (e1 - e0).abs() / e0, v)
}

#[test]
fn elastic_impacts_on_a_face_an_edge_and_a_corner_conserve_energy_along_the_normal() {
    let v = 1.0;
    let n_face = DVec3::new(0.0, -0.1, 1.0).normalize();
    let d = DVec3::new(1.0, 0.0, 1.0).normalize();
    let cases = [
        // Face: onto the sloped face y < 0 along its normal.
        ("face", DVec3::new(0.0, -0.5, 0.05), n_face),
        // Edge: straight down onto the ridge (its closest point is on the edge).
        ("edge", DVec3::new(0.0, 0.0, 0.1), DVec3::Z),
        // Corner: along the outward diagonal at the ridge's end (x > 1 is off the mesh).
        ("corner", DVec3::new(1.0, 0.0, 0.1), d),
    ];
    for (what, q, n) in cases {
        let mut errors = Vec::new();
        for dt in [2e-6, 1e-6] {
            let (during, after, out) = impact(q + 0.0201 * n, -v * n, dt);
            println!(
                "{what}, dt {dt:e}: |ΔE|/E worst {during:.2e}, after {after:.2e}, v out {out}"
            );
            // Frictionless along the normal: it leaves along +n at the same speed.
            assert!((out - v * n).length() < 1e-6 * v, "{what}: {out}");
            errors.push(during);
        }
        // Störmer–Verlet: the energy error during the contact is second order.
        let order = (errors[0] / errors[1]).log2();
        assert!(
            (order - 2.0).abs() < 0.2,
            "{what}: order {order:.2} ({errors:?})"
        );
    }
}

/// A bead at rest on a plate that moves at `V` along x (a plane or a two-triangle
/// mesh), under gravity.
fn plate_scene(floor: &str) -> String {
    format!(
        r#"
[simulation]
dt = 1e-5
steps = 1
gravity = [0.0, 0.0, -9.81]
[contact]
law = "hertz"
skin = 0.002
{}
[[particle]]
position = [0.0, 0.0, 0.02]
radius = 0.02
material = "glass"
{floor}
"#,
        material(0.5)
    )
}

#[test]
fn a_sliding_plate_drags_a_bead_to_rolling_at_two_sevenths_of_its_speed() {
    let speed = 0.2;
    let motion = format!("velocity = [{speed:?}, 0.0, 0.0]\n");
    for floor in [format!("{PLANE}{motion}"), format!("{SQUARE_MESH}{motion}")] {
        let scene = parse_scene(&plate_scene(&floor)).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        // Sliding lasts 2V/(7 μ_d g) = 19 ms; then the bead rolls, and the undamped
        // Mindlin spring, released at μ_d f_n when the slip stops, rings at
        // √(k_t/(2m/7)) ≈ 1.9e3 rad/s with a velocity amplitude μ_d g/ω ≈ 1.5e-3 m/s
        // (0.8 % of V). Averaged over 0.05 s (15 periods) from t = 0.05 s:
        let (mut v, mut contact) = (DVec3::ZERO, DVec3::ZERO);
        let samples = 5_000;
        for k in 0..2 * samples {
            b.step().unwrap();
            if k >= samples {
                let p = &b.model().particles;
                let (vk, w, r) = (p.velocity[0], p.angular_velocity[0], p.radius[0]);
                v += vk / samples as f64;
                // The contact point (at −r ẑ) moves with the plate: v + Ω × (−r ẑ) = V x̂.
                contact += (vk + w.cross(-r * DVec3::Z)) / samples as f64;
            }
        }
        println!("plate: mean v {v}, mean contact point {contact}");
        // Angular momentum about the contact line gives v = 2V/7 for a solid sphere;
        // what the average leaves of the ringing is ~1e-4 of V.
        assert!(
            (contact - speed * DVec3::X).length() < 1e-3 * speed,
            "{contact}"
        );
        assert!((v.x - 2.0 * speed / 7.0).abs() < 1e-3 * speed, "{v}");
    }
}

#[test]
fn a_turning_plate_drags_a_bead_at_its_surface_speed() {
    let omega = 2.0;
    let floor = format!("{SQUARE_MESH}angular_velocity = [0.0, 0.0, {omega:?}]\n");
    let text = plate_scene(&floor).replace("[0.0, 0.0, 0.02]", "[0.3, 0.0, 0.02]");
    let scene = parse_scene(&text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    // Past the slip (as on the sliding plate), averaged over 0.05 s of the ringing.
    let samples = 5_000;
    let (mut slip, mut surface_speed, mut speed) = (DVec3::ZERO, 0.0, 0.0);
    for k in 0..3 * samples {
        b.step().unwrap();
        if k >= 2 * samples {
            let p = &b.model().particles;
            let (x, v, w, r) = (
                p.position[0],
                p.velocity[0],
                p.angular_velocity[0],
                p.radius[0],
            );
            let q = x - r * DVec3::Z;
            let surface = DVec3::new(0.0, 0.0, omega).cross(q);
            slip += (v + w.cross(q - x) - surface) / samples as f64;
            surface_speed += surface.length() / samples as f64;
            speed += v.length() / samples as f64;
        }
    }
    println!("turntable: mean slip {slip}, plate speed {surface_speed}, bead speed {speed}");
    // Rolling without slip on the turntable: the contact point moves with the plate
    // (the bead itself circles at 2/7 of the plate's rate; only the no-slip condition
    // is checked here).
    assert!(
        slip.length() < 2e-3 * surface_speed,
        "{slip} vs {surface_speed}"
    );
    assert!(speed > 0.1 * surface_speed, "the bead is dragged along");
}

/// A bead at rest on a floor at 0.3 m from the origin: the floor (plane or mesh)
/// carries its weight, and its moment about the origin is x × F.
#[test]
fn walls_csv_carries_the_weight_of_a_resting_bead() {
    let dir = tempfile::tempdir().unwrap();
    for (law, floor) in [
        ("hertz", PLANE),
        ("hertz", SQUARE_MESH),
        ("binder", PLANE),
        ("binder", SQUARE_MESH),
    ] {
        let contact = match law {
            "hertz" => "[contact]\nlaw = \"hertz\"\nskin = 0.002\n".to_owned() + &material(0.1),
            _ => "[contact]\nlaw = \"binder\"\nk_pp = 50.0\nskin = 0.002\n".to_owned(),
        };
        let bead = if law == "hertz" {
            "material = \"glass\""
        } else {
            "mass = 0.01"
        };
        // The binder law has no damping: start the bead at its equilibrium overlap
        // (K s^{3/2} = m g r, s = (m g r/K)^{2/3}) so it stays at rest.
        let z = if law == "hertz" {
            0.0199
        } else {
            0.02 * (1.0 - (0.01 * 9.81 * 0.02 / 50.0f64).powf(2.0 / 3.0))
        };
        let text = format!(
            "[simulation]\ndt = 1e-5\nsteps = 20000\noutput_every = 10000\ngravity = [0.0, 0.0, -9.81]\n\
             {contact}\n[[particle]]\nposition = [0.3, 0.0, {z:?}]\nradius = 0.02\n{bead}\n{floor}"
        );
        let scene = parse_scene(&text).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        let out = dir
            .path()
            .join(format!("{law}-{}", scene.model.meshes.len()));
        varidem::run::run(&scene, &mut b, &out).unwrap();
        let csv = std::fs::read_to_string(out.join("walls.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("step,t,wall,fx,fy,fz,mx,my,mz"));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(
            rows.len(),
            3,
            "{law}: rows at steps 0, 10000, 20000:\n{csv}"
        );
        let last = &rows[2];
        assert_eq!(last[0], "20000");
        let name = if scene.model.meshes.is_empty() {
            "wall[0]"
        } else {
            "floor"
        };
        assert_eq!(last[2], name);
        let v: Vec<f64> = last[3..].iter().map(|x| x.parse().unwrap()).collect();
        let weight = b.model().particles.mass[0] * 9.81;
        println!("{law} {name}: F = ({:.3e}, {:.3e}, {:.6e}), M = ({:.3e}, {:.6e}, {:.3e}), weight {weight:.6e}", v[0], v[1], v[2], v[3], v[4], v[5]);
        // At rest after 0.2 s (Hertz: damped to rest; binder: started at rest): the
        // floor carries the weight, to 1e-6 of it (what remains of the settling).
        assert!((v[2] + weight).abs() < 1e-6 * weight, "{law} {name}: {v:?}");
        assert!(v[0].abs() < 1e-9 * weight && v[1].abs() < 1e-9 * weight);
        // Moment about the origin of −m g ẑ at (0.3, 0, 0): (0, 0.3 m g, 0).
        assert!(
            (v[4] - 0.3 * weight).abs() < 1e-6 * weight,
            "{law} {name}: {v:?}"
        );
    }
}

/// Hard contacts: the floor's load is the contact impulse over the step, the weight.
#[test]
fn walls_csv_of_hard_contacts_is_the_impulse_over_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 200\noutput_every = 100\ngravity = [0.0, 0.0, -9.81]\n\
         integrator = \"impulse-velocity\"\n[contact]\nlaw = \"hard\"\n{}\n\
         [[particle]]\nposition = [0.3, 0.0, 0.02]\nradius = 0.02\nmaterial = \"glass\"\n{PLANE}",
        material(0.0)
    );
    let scene = parse_scene(&text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    let out = dir.path().join("hard");
    varidem::run::run(&scene, &mut b, &out).unwrap();
    let csv = std::fs::read_to_string(out.join("walls.csv")).unwrap();
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .skip(3)
        .map(|x| x.parse().unwrap())
        .collect();
    let weight = b.model().particles.mass[0] * 9.81;
    println!("hard: {last:?}, weight {weight}");
    // The resting bead's impulse is m g h each step, to the solver's tolerance.
    assert!((last[2] + weight).abs() < 1e-6 * weight, "{last:?}");
    assert!((last[4] - 0.3 * weight).abs() < 1e-6 * weight, "{last:?}");
}

/// A hard-contact bead (restitution 0) on a floor: `floor` with extra keys.
fn hard_bead(floor: &str, steps: u64) -> String {
    format!(
        "[simulation]\ndt = 1e-4\nsteps = {steps}\ngravity = [0.0, 0.0, -9.81]\n\
         integrator = \"impulse-velocity\"\n[contact]\nlaw = \"hard\"\n{}\n\
         [[particle]]\nposition = [-0.3, 0.2, 0.0201]\nvelocity = [0.8, -0.9, 0.0]\n\
         angular_velocity = [30.0, 10.0, 5.0]\nradius = 0.02\nmaterial = \"glass\"\n{floor}",
        material(0.0)
    )
}

#[test]
fn hard_contacts_on_a_plane_and_on_two_triangles_agree() {
    let steps = 6000;
    let a = trajectory(&hard_bead(PLANE, steps), steps as usize);
    let b = trajectory(&hard_bead(SQUARE_MESH, steps), steps as usize);
    assert!(crosses(&a), "the run crosses the diagonal");
    let worst = worst_difference(&a, &b);
    println!(
        "hard: worst |Δx| {:.1e} m, |Δv| {:.1e} m/s, rotation {:.1e}, |ΔΩ| {:.1e} rad/s",
        worst[0], worst[1], worst[2], worst[3]
    );
    // Rounding of the plane's and the triangle's distance, as under Hertz.
    assert!(
        worst[0] <= 1e-12 && worst[1] <= 1e-12 && worst[2] <= 1e-12,
        "{worst:?}"
    );
    assert!(worst[3] <= 3e-11, "{worst:?}");
}

#[test]
fn a_sliding_plate_drags_a_hard_contact_bead_to_two_sevenths() {
    let speed = 0.2;
    let motion = format!("velocity = [{speed:?}, 0.0, 0.0]\n");
    for floor in [format!("{PLANE}{motion}"), format!("{SQUARE_MESH}{motion}")] {
        let text = hard_bead(&floor, 1).replace(
            "velocity = [0.8, -0.9, 0.0]\nangular_velocity = [30.0, 10.0, 5.0]",
            "velocity = [0.0, 0.0, 0.0]",
        );
        let text = text.replace("[-0.3, 0.2, 0.0201]", "[0.0, 0.0, 0.02]");
        let scene = parse_scene(&text).unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        // Hard contacts take μ_s = 0.4: sliding lasts 2V/(7 μ_s g) = 15 ms; 0.1 s
        // is well past it.
        for _ in 0..1000 {
            b.step().unwrap();
        }
        let p = &b.model().particles;
        let (v, w, r) = (p.velocity[0], p.angular_velocity[0], p.radius[0]);
        let contact = v + w.cross(-r * DVec3::Z);
        println!("hard plate: v {v}, contact point {contact}");
        // Hard friction sticks exactly once the slip stops (no spring to ring).
        assert!(
            (contact - speed * DVec3::X).length() < 1e-6 * speed,
            "{contact}"
        );
        assert!((v.x - 2.0 * speed / 7.0).abs() < 1e-6 * speed, "{v}");
    }
}

/// Issue 49, item 4: a floor read from an STL whose two triangles meet at corners one
/// `f32` step apart (an exporter's rounding) carries a bead resting on the seam once:
/// the corners weld, the seam is one edge and one contact. The control, the same
/// triangles with a real gap of 1.4e-5 m between their diagonals (far above the welding
/// tolerance, 2.8e-6 m here), carries it twice (a contact on each edge, the second
/// slightly further): what the unwelded seam did.
#[test]
fn a_seam_one_f32_step_apart_carries_a_resting_bead_once() {
    let dir = tempfile::tempdir().unwrap();
    let tri = |c: [[f32; 3]; 3]| stl_io::Triangle {
        normal: stl_io::Normal::new([0.0, 0.0, 1.0]),
        vertices: c.map(stl_io::Vertex::new),
    };
    // The square [-1, 1]² split along y = x; the second triangle's copies of the
    // diagonal's corners are moved by `shift`.
    let floor = |name: &str, shift: [[f32; 2]; 2]| {
        let [a, b] = shift;
        let t = [
            tri([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0]]),
            tri([[a[0], a[1], 0.0], [b[0], b[1], 0.0], [-1.0, 1.0, 0.0]]),
        ];
        let mut file = std::fs::File::create(dir.path().join(name)).unwrap();
        stl_io::write_stl(&mut file, t.iter()).unwrap();
    };
    floor(
        "seam.stl",
        // One f32 step toward zero each (one less in the bits).
        [
            [f32::from_bits((-1.0f32).to_bits() - 1), -1.0],
            [1.0, f32::from_bits(1.0f32.to_bits() - 1)],
        ],
    );
    let d = 1e-5f32;
    floor("gap.stl", [[-1.0 - d, -1.0 + d], [1.0 - d, 1.0 + d]]);
    // A binder bead at its equilibrium overlap over the seam, at (0.3, 0.3).
    let z = 0.02 * (1.0 - (0.01 * 9.81 * 0.02 / 50.0f64).powf(2.0 / 3.0));
    let weight = 0.01 * 9.81;
    for (file, vertices, loads, within) in [("seam.stl", 4, 1.0, 1e-3), ("gap.stl", 6, 2.0, 1e-2)] {
        let text = format!(
            "[simulation]\ndt = 1e-5\nsteps = 1\noutput_every = 1\ngravity = [0.0, 0.0, -9.81]\n\
             [contact]\nlaw = \"binder\"\nk_pp = 50.0\nskin = 0.002\n\
             [[particle]]\nposition = [0.3, 0.3, {z:?}]\nradius = 0.02\nmass = 0.01\n\
             [[mesh]]\nfile = \"{file}\"\n"
        );
        let path = dir.path().join(format!("{file}.toml"));
        std::fs::write(&path, text).unwrap();
        let scene = varidem::io::load_scene(&path).unwrap();
        assert_eq!(
            scene.model.meshes[0].mesh.vertices.len(),
            vertices,
            "{file}"
        );
        let mut b = CpuBackend::new(&scene).unwrap();
        let out = dir.path().join(file.replace(".stl", ""));
        varidem::run::run(&scene, &mut b, &out).unwrap();
        let csv = std::fs::read_to_string(out.join("walls.csv")).unwrap();
        let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(first[0], "0");
        let fz: f64 = first[5].parse().unwrap();
        println!("{file}: fz = {fz:.6e}, weight {weight:.6e}");
        assert!(
            (fz + loads * weight).abs() < within * weight,
            "{file}: fz = {fz}, {loads} × the weight {weight} expected"
        );
    }
}
