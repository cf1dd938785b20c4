//! Clumps on the CPU backend (issue 24, items 4 and 5): the body–sphere coupling of
//! `cpu::clumps` against the sphere path, the conservation laws and an incline.
//!
//! Tolerances:
//! - single-sphere clumps with a scalar tensor take every path a free sphere takes
//!   (the sphere path of the integrator, the same contact sides and increments, the
//!   load gathered in the same order), so a pour of them equals the pour of spheres
//!   bit for bit;
//! - a free frictional cluster: every contact force acts on both bodies equal and
//!   opposite, and the moments are summed about each body's centre (the gather's
//!   virtual work is exact); the momenta then change only by rounding: 10⁻¹² of the
//!   momentum scale over 4000 steps;
//! - the incline: sliding at g (sin θ − μ cos θ) to 3 % (the contact's compliance and
//!   its settling in the first milliseconds), resting below 10⁻⁶ m.

mod common;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;

const MATERIAL: &str = "[[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\n\
    density = 2500.0\nrestitution = 0.5\nfriction_static = 0.3\n";

/// 27 grains of radius 1 mm on a 3×3×3 lattice (spacing 2.1 mm, jittered by a fixed
/// pattern) above a floor, under gravity.
fn lattice() -> Vec<DVec3> {
    let mut out = Vec::new();
    for k in 0..27 {
        let (i, j, l) = (k % 3, (k / 3) % 3, k / 9);
        let jitter = DVec3::new(
            ((k * 37) % 11) as f64 - 5.0,
            ((k * 53) % 13) as f64 - 6.0,
            0.0,
        ) * 5e-6;
        out.push(
            DVec3::new(i as f64, j as f64, l as f64) * 2.1e-3
                + DVec3::new(0.0, 0.0, 1.05e-3)
                + jitter,
        );
    }
    out
}

fn head() -> String {
    format!(
        "[simulation]\ndt = 1e-5\nsteps = 10\ngravity = [0.0, 0.0, -9.81]\n\
         [contact]\nlaw = \"hertz\"\n{MATERIAL}\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\n"
    )
}

#[test]
fn single_sphere_clumps_are_spheres_bit_for_bit() {
    let r = 1e-3f64;
    let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let j = 0.4 * m * r * r;
    let v = |k: usize| DVec3::new(0.01 * (k % 3) as f64, -0.02, -0.05 * (k % 2) as f64);
    let mut spheres = head();
    let mut clumps = head();
    clumps.push_str(&format!(
        "[[clump_type]]\nname = \"ball\"\nspheres = [{{ position = [0.0, 0.0, 0.0], radius = {r:e} }}]\n\
         material = \"glass\"\nmass = {m:e}\ninertia = [{j:e}, {j:e}, {j:e}]\n"
    ));
    for (k, x) in lattice().into_iter().enumerate() {
        let (x, vk) = (x.to_array(), v(k).to_array());
        spheres.push_str(&format!(
            "[[particle]]\nposition = {x:?}\nvelocity = {vk:?}\nradius = {r:e}\nmass = {m:e}\n\
             inertia = {j:e}\nmaterial = \"glass\"\n"
        ));
        clumps.push_str(&format!(
            "[[clump]]\ntype = \"ball\"\nposition = {x:?}\nvelocity = {vk:?}\n"
        ));
    }
    let mut a = CpuBackend::new(&parse_scene(&spheres).unwrap()).unwrap();
    let mut b = CpuBackend::new(&parse_scene(&clumps).unwrap()).unwrap();
    for _ in 0..20 {
        a.advance(100).unwrap();
        b.advance(100).unwrap();
        let (pa, pb) = (a.particles().unwrap(), b.particles().unwrap());
        assert_eq!(pa.position, pb.position);
        assert_eq!(pa.velocity, pb.velocity);
        assert_eq!(pa.rotation, pb.rotation);
        assert_eq!(pa.angular_velocity, pb.angular_velocity);
    }
    // They touched: the pour is not trivial.
    let contacts: u32 = a.contact_counts().iter().sum();
    assert!(contacts > 20, "{contacts} contacts");
}

/// A dimer and a trimer type with full tensors.
fn shapes() -> String {
    "[[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [-0.6e-3, 0.0, 0.0], radius = 1e-3 }, \
                { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
     [[clump_type]]\nname = \"trimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [0.0, 0.0, 0.0], radius = 1e-3 }, \
                { position = [1.2e-3, 0.0, 0.0], radius = 0.7e-3 }, \
                { position = [0.0, 1.1e-3, 0.3e-3], radius = 0.6e-3 }]\n"
        .to_owned()
}

#[test]
fn a_free_frictional_cluster_conserves_momentum() {
    let mut text = format!(
        "[simulation]\ndt = 2e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n{MATERIAL}{}",
        shapes()
    );
    for (k, x) in lattice().into_iter().enumerate() {
        let kind = if k % 2 == 0 { "dimer" } else { "trimer" };
        // Spread out by 1.6 and falling inward, spinning.
        let x = 1.6 * (x - DVec3::new(2.1e-3, 2.1e-3, 3.15e-3));
        let v = -x * 150.0;
        let w = DVec3::new((k % 3) as f64, (k % 5) as f64 - 2.0, 1.0) * 30.0;
        let alpha = DVec3::new(0.1 * k as f64, -0.05 * k as f64, 0.3);
        text.push_str(&common::clump_toml(kind, x, alpha, v, w));
    }
    let mut b = CpuBackend::new(&parse_scene(&text).unwrap()).unwrap();
    let d0 = b.diagnostics().unwrap();
    let scale_p = 27.0 * 1e-5 * 0.5;
    let scale_l = scale_p * 5e-3;
    let mut touched = 0u32;
    for _ in 0..40 {
        b.advance(100).unwrap();
        touched = touched.max(b.contact_counts().iter().sum());
    }
    let d = b.diagnostics().unwrap();
    let dp = (d.momentum - d0.momentum).length() / scale_p;
    let dl = (d.angular_momentum - d0.angular_momentum).length() / scale_l;
    eprintln!("cluster: {touched} contacts at most; |Δp|/p = {dp:.2e}, |ΔL|/L = {dl:.2e}");
    assert!(touched > 10, "{touched}");
    assert!(dp < 1e-12 && dl < 1e-12, "{dp:e} {dl:e}");
}

/// Displacement along the slope of a dimer laid along the fall line of a plane tilted
/// by `theta`, after `t` s, with friction μ = 0.3.
fn incline(theta: f64, t: f64) -> f64 {
    let (text, x0, down) = common::dimer_incline(theta, 1e-6, MATERIAL);
    let mut b = CpuBackend::new(&parse_scene(&text).unwrap()).unwrap();
    b.advance((t / 1e-6).round() as u64).unwrap();
    let p = b.particles().unwrap();
    (p.position[0] - x0).dot(down)
}

#[test]
fn a_dimer_slides_down_a_steep_incline_and_rests_on_a_shallow_one() {
    let t = 0.02;
    let steep = 25f64.to_radians();
    let slid = incline(steep, t);
    let want = 0.5 * 9.81 * (steep.sin() - 0.3 * steep.cos()) * t * t;
    eprintln!("25°: slid {slid:.4e} m, expected {want:.4e} m");
    assert!((slid / want - 1.0).abs() < 0.03, "{slid} against {want}");
    let rest = incline(10f64.to_radians(), t);
    eprintln!("10°: moved {rest:.3e} m");
    assert!(rest.abs() < 1e-6, "{rest}");
}

/// Frames name each sphere's body: a clump's spheres share their clump's `final.csv`
/// row, in the `.vtp` frames too (`body_id`, read back by the renderer).
#[test]
fn frames_carry_each_spheres_body() {
    let mut text = format!(
        "[simulation]\ndt = 1e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n{MATERIAL}{}\
         [[particle]]\nposition = [0.0, 0.0, 0.1]\nradius = 1e-3\nmaterial = \"glass\"\n",
        shapes()
    );
    text.push_str("[[clump]]\ntype = \"trimer\"\nposition = [0.0, 0.0, 0.0]\n");
    text.push_str("[[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.05]\n");
    let text = text.replace(
        "type = \"dimer\"\nposition = [0.0, 0.0, 0.05]\n",
        "type = \"dimer\"\nposition = [0.0, 0.0, 0.05]\nvelocity = [1.0, 0.0, 0.0]\n\
         angular_velocity = [0.0, 0.0, 10.0]\n",
    );
    let mut b = CpuBackend::new(&parse_scene(&text).unwrap()).unwrap();
    b.advance(3).unwrap();
    let frame = b.frame().unwrap();
    assert_eq!(frame.body_id, [0, 1, 1, 1, 2, 2]);
    // The dimer's spheres move with it: v + Ω × (x_s − x), spin Ω (no field, no
    // contact: the body's v and Ω are unchanged).
    let rows = b.particles().unwrap();
    let (x, v, w) = (rows.position[2], rows.velocity[2], rows.angular_velocity[2]);
    for s in 4..6 {
        let p = &frame.particles;
        let want = v + w.cross(p.position[s] - x);
        assert!(
            (p.velocity[s] - want).length() < 1e-12,
            "{s}: {}",
            p.velocity[s]
        );
        assert_eq!(p.angular_velocity[s], w);
        assert!(
            p.velocity[s].y.abs() > 1e-3,
            "the spin shows in the spheres' velocities"
        );
    }
    assert_eq!(
        b.particles().unwrap().len(),
        3,
        "one final.csv row per body"
    );
    let dir = std::env::temp_dir().join(format!("varidem-clump-vtp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.vtp");
    varidem::io::vtk_writer::write_vtp(&path, &frame, &[]).unwrap();
    let back = varidem::io::vtk_reader::ParticleFrame::from_vtp(&path).unwrap();
    assert_eq!(back.body_id, [0, 1, 1, 1, 2, 2]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `bench --workload clump-bed`'s generator: about N spheres in dimers that press on
/// their neighbours from the first step (a bed, not a cloud): more than 2 contacts per
/// sphere, and overlaps small enough that the bed does not blow apart (the largest
/// speed after 200 steps stays below 0.5 m/s; it starts at ≤ 0.09 m/s).
#[test]
fn the_clump_bed_touches_from_the_first_step() {
    let model = varidem::model::generators::clump_bed(2000);
    assert_eq!(model.clumps.len(), 1000);
    let scene = varidem::model::Scene {
        simulation: varidem::model::SimulationParams {
            dt: varidem::model::generators::SETTLING_BED_DT,
            duration: varidem::model::RunLength::Steps(200),
            integrator: varidem::integrators::IntegratorKind::Variational,
            output_every: 200,
            precision: None,
            gpu_max_neighbors: None,
            gpu_bucket_capacity: None,
            sort_every: None,
            checkpoint_every: None,
            trapezoidal: Default::default(),
        },
        model,
    };
    let mut b = CpuBackend::new(&scene).unwrap();
    let per_sphere = |b: &CpuBackend| b.contact_counts().iter().sum::<u32>() as f64 / 2000.0;
    let start = per_sphere(&b);
    b.advance(200).unwrap();
    let v_max = b
        .particles()
        .unwrap()
        .velocity
        .iter()
        .map(|v| v.length())
        .fold(0.0, f64::max);
    eprintln!("clump bed: {start:.2} contacts per sphere, v_max {v_max:.3} m/s after 200 steps");
    assert!(start > 2.0, "{start}");
    assert!(v_max < 0.5, "{v_max}");
}
