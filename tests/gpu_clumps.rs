//! Clumps on the GPU backend (issue 24, items 4 and 5): the kernels of
//! `shaders/clumps.wgsl` against their CPU twins (`cpu::clumps`), on lavapipe in both
//! precisions.
//!
//! Tolerances:
//! - f64, a pour of 10³ dimers and trimers thrown at each other in a box, 200 steps:
//!   ≤ 1e-9 relative per field (issue 24). The kernels apply the spatial tensors
//!   R J Rᵀ as rotations of body-frame products where the CPU multiplies matrices, and
//!   compose sums in other orders, so the runs differ by rounding (≈ 1e-16) that the
//!   contacts amplify; 1e-9 leaves six orders for that and catches any difference of
//!   formula, which shows at 1e-3 or more.
//! - f32, the same pour over 2000 steps: statistics, not trajectories (f32 rounding
//!   makes trajectories of a dense granular flow diverge): the kinetic-energy history,
//!   the mean height and the packing fraction within 1 % of the CPU's.
//! - a free frictional cluster: momentum and angular momentum conserved to rounding
//!   (f64: 10⁻¹² of their scale, as on the CPU; f32: the Kahan-compensated state keeps
//!   them to 10⁻⁶).
//! - single-sphere clumps with a scalar tensor are spheres: the GPU's clump path gives
//!   the GPU's sphere path to 1e-12 in f64 (the lever of a centred sphere is zero, but
//!   the bodies' sums run in another kernel).

mod common;
mod gpu_common;

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::parse_scene;
use varidem::model::Scene;

const MATERIAL: &str = "[[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\n\
    density = 2500.0\nrestitution = 0.5\nfriction_static = 0.4\n";

/// A dimer and a trimer type with full tensors (those of `tests/clump_cpu.rs`).
const SHAPES: &str = common::CLUMP_SHAPES;

/// A value in [−1, 1) from a seeded LCG.
fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// `side`³ clumps (dimers and trimers alternating) on a lattice of spacing 3.2 mm in a
/// walled box under gravity, randomly turned, thrown at up to 1 m/s per component
/// and spinning at up to 300 rad/s: many collisions from the first steps; and `side`²
/// free spheres falling onto them.
fn pour(side: usize, integrator: &str) -> Scene {
    let spacing = 3.2e-3;
    let half = 0.5 * spacing * side as f64;
    let mut text = format!(
        "[simulation]\ndt = 4e-6\nsteps = 10\nintegrator = {integrator:?}\n\
         gravity = [0.0, 0.0, -9.81]\n[contact]\nlaw = \"hertz\"\nskin = 2e-4\n\
         max_contacts = 24\nmax_initial_overlap = 0.1\n{MATERIAL}{SHAPES}"
    );
    // A few randomly turned clumps of the outer columns start up to 0.052 of a radius
    // into a side wall: allowed (0.1) rather than moved, so the pour stays the one the
    // tolerances below were measured on.
    for (point, normal) in [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([-half, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([half, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ([0.0, -half, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, half, 0.0], [0.0, -1.0, 0.0]),
    ] {
        text.push_str(&format!(
            "[[wall]]\npoint = {point:?}\nnormal = {normal:?}\nmaterial = \"glass\"\n"
        ));
    }
    // A layer of free spheres above the clumps, falling onto them: the free particles
    // come before the clumps' spheres, so a row chunk can hold both.
    for k in 0..side * side {
        let (i, j) = (k % side, k / side);
        let x = [
            (i as f64 + 0.5) * spacing - half,
            (j as f64 + 0.5) * spacing - half,
            (side as f64 + 0.5) * spacing,
        ];
        text.push_str(&format!(
            "[[particle]]\nposition = {x:?}\nvelocity = [0.0, 0.0, -1.0]\nradius = 1e-3\n\
             material = \"glass\"\n"
        ));
    }
    let mut seed = 7u64;
    for k in 0..side * side * side {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let x = DVec3::new(
            (i as f64 + 0.5) * spacing - half,
            (j as f64 + 0.5) * spacing - half,
            (l as f64 + 0.5) * spacing,
        );
        let mut rnd3 = |s: f64| DVec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * s;
        let alpha = rnd3(1.5);
        let v = rnd3(1.0);
        let w = rnd3(300.0);
        let kind = if k % 2 == 0 { "dimer" } else { "trimer" };
        text.push_str(&common::clump_toml(kind, x, alpha, v, w));
    }
    parse_scene(&text).expect("the pour scene parses")
}

fn gpu(ctx: varidem::gpu::context::GpuContext, scene: &Scene, precision: Precision) -> GpuBackend {
    gpu_with(
        ctx,
        scene,
        GpuOptions {
            precision,
            ..GpuOptions::default()
        },
    )
}

fn gpu_with(
    ctx: varidem::gpu::context::GpuContext,
    scene: &Scene,
    options: GpuOptions,
) -> GpuBackend {
    let s = &scene.simulation;
    GpuBackend::with_context(ctx, scene.model.clone(), s.integrator, s.dt, &options)
        .expect("the GPU runs the clump scene")
}

/// GPU f64 against the CPU on the 10³-clump pour with 100 free spheres, for each map,
/// in several row chunks: every body row (free particles, then centre of mass,
/// velocity, α, Ω of each clump) and every sphere within 1e-9 after 200 steps.
#[test]
fn a_pour_of_a_thousand_clumps_matches_the_cpu_in_f64() {
    for integrator in ["variational", "variational-exact", "symplectic-euler"] {
        let Some(ctx) = gpu_common::context_f64("clump-pour-f64") else {
            return;
        };
        let scene = pour(10, integrator);
        let mut cpu = CpuBackend::new(&scene).unwrap();
        // Row chunks of 1000 particles: the 100 free spheres and the first clumps'
        // spheres share the first chunk.
        let mut gpu = gpu_with(
            ctx,
            &scene,
            GpuOptions {
                precision: Precision::F64,
                max_chunk_particles: Some(1000),
                ..GpuOptions::default()
            },
        );
        assert!(gpu.row_chunk_count() > 1);
        let mut contacts = 0u32;
        for _ in 0..4 {
            cpu.advance(50).unwrap();
            gpu.advance(50).unwrap();
            contacts = contacts.max(cpu.contact_counts().iter().sum());
        }
        let rows = gpu_common::per_field(&cpu.particles().unwrap(), &gpu.particles().unwrap());
        let spheres = gpu_common::per_field(
            &cpu.frame().unwrap().particles,
            &gpu.frame().unwrap().particles,
        );
        let (dc, dg) = (cpu.diagnostics().unwrap(), gpu.diagnostics().unwrap());
        let de = ((dc.e_kin + dc.e_rot) - (dg.e_kin + dg.e_rot)).abs() / (dc.e_kin + dc.e_rot);
        eprintln!(
            "{integrator}: {contacts} contacts at most; bodies {rows:?}, spheres {spheres:?}, kinetic energy {de:.1e}"
        );
        assert!(
            contacts > 200,
            "{integrator}: too few contacts ({contacts}) to test them"
        );
        // The rebuild test runs on the same positions (a clump's spheres where their
        // bodies put them), so the lists are rebuilt at the same steps.
        assert_eq!(
            Some(cpu.neighbor_builds()),
            gpu.neighbor_builds().unwrap(),
            "{integrator}: list builds"
        );
        for (what, d) in [("bodies", rows), ("spheres", spheres)] {
            assert!(d.iter().all(|&e| e <= 1e-9), "{integrator} {what}: {d:?}");
        }
        assert!(de <= 1e-9, "{integrator}: kinetic energy {de:e}");
    }
}

/// The kinetic energy, the mean height of the bodies and the packing fraction: the
/// bodies' volume (mass over density) over the box's floor area times the height of
/// the highest sphere top.
fn statistics(b: &mut dyn Backend, scene: &Scene) -> (f64, f64, f64) {
    let d = b.diagnostics().unwrap();
    let rows = b.particles().unwrap();
    let z = rows.position.iter().map(|x| x.z).sum::<f64>() / rows.len() as f64;
    let spheres = b.frame().unwrap().particles;
    let top = spheres
        .position
        .iter()
        .zip(&spheres.radius)
        .map(|(x, r)| x.z + r)
        .fold(0.0, f64::max);
    let m = &scene.model;
    let volume: f64 = m
        .clumps
        .iter()
        .map(|c| m.clump_types[c.kind as usize].mass / 2500.0)
        .sum();
    let side = 3.2e-3 * 10.0;
    (d.e_kin + d.e_rot, z, volume / (side * side * top))
}

/// GPU f32 against the CPU on the pour over 2000 steps (8 ms, the thrown clumps
/// colliding and falling): the kinetic energy, the mean height and the packing
/// fraction every 200 steps within 1 % (of the initial kinetic energy, of the initial
/// height, of the packing fraction).
#[test]
fn a_pour_of_a_thousand_clumps_is_statistically_the_cpus_in_f32() {
    let Some(ctx) = gpu_common::context_for("clump-pour-f32", Precision::F32) else {
        return;
    };
    let scene = pour(10, "variational");
    let mut cpu = CpuBackend::new(&scene).unwrap();
    let mut gpu = gpu(ctx, &scene, Precision::F32);
    let (e0, z0, phi0) = statistics(&mut cpu, &scene);
    let mut worst = [0.0f64; 3];
    let mut phi = phi0;
    for _ in 0..10 {
        cpu.advance(200).unwrap();
        gpu.advance(200).unwrap();
        let (ec, zc, pc) = statistics(&mut cpu, &scene);
        let (eg, zg, pg) = statistics(&mut gpu, &scene);
        for (w, d) in worst.iter_mut().zip([
            (ec - eg).abs() / e0,
            (zc - zg).abs() / z0,
            (pc - pg).abs() / pc,
        ]) {
            *w = w.max(d);
        }
        phi = pc;
    }
    let (e1, ..) = statistics(&mut cpu, &scene);
    eprintln!(
        "f32 pour: kinetic energy {e0:.3e} → {e1:.3e} J, packing fraction {phi0:.3} → {phi:.3}; \
         worst |ΔE|/E0 = {:.1e}, |Δz|/z0 = {:.1e}, |Δφ|/φ = {:.1e}",
        worst[0], worst[1], worst[2]
    );
    assert!(e1 < 0.9 * e0, "the pour did not dissipate: {e0} → {e1}");
    assert!(worst.iter().all(|&w| w <= 0.01), "{worst:?}");
}

/// 27 clumps thrown inward at each other without gravity or walls: momentum and
/// angular momentum stay at their start to rounding on the GPU.
fn cluster() -> Scene {
    let mut text = format!(
        "[simulation]\ndt = 2e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n{MATERIAL}{SHAPES}"
    );
    let mut seed = 3u64;
    for k in 0..27 {
        let (i, j, l) = (k % 3, (k / 3) % 3, k / 9);
        let x = (DVec3::new(i as f64, j as f64, l as f64) - DVec3::ONE) * 3.4e-3;
        let v = -x * 150.0 + DVec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 0.05;
        let w = DVec3::new((k % 3) as f64, (k % 5) as f64 - 2.0, 1.0) * 30.0;
        let alpha = DVec3::new(0.1 * k as f64, -0.05 * k as f64, 0.3);
        let kind = if k % 2 == 0 { "dimer" } else { "trimer" };
        text.push_str(&common::clump_toml(kind, x, alpha, v, w));
    }
    parse_scene(&text).unwrap()
}

#[test]
fn a_free_frictional_cluster_conserves_momentum_on_the_gpu() {
    for (precision, bound) in [(Precision::F64, 1e-12), (Precision::F32, 1e-6)] {
        let Some(ctx) = gpu_common::context_for("clump-cluster", precision) else {
            continue;
        };
        let scene = cluster();
        let mut b = gpu(ctx, &scene, precision);
        let d0 = b.diagnostics().unwrap();
        let scale_p = 27.0 * 1e-5 * 0.5;
        let scale_l = scale_p * 5e-3;
        let mut touched = 0u32;
        for _ in 0..20 {
            b.advance(100).unwrap();
            touched = touched.max(b.frame().unwrap().contact_count.iter().sum());
        }
        let d = b.diagnostics().unwrap();
        let dp = (d.momentum - d0.momentum).length() / scale_p;
        let dl = (d.angular_momentum - d0.angular_momentum).length() / scale_l;
        eprintln!(
            "{precision} cluster: {touched} contacts at most; |Δp|/p = {dp:.2e}, |ΔL|/L = {dl:.2e}"
        );
        assert!(touched > 10, "{touched}");
        assert!(dp < bound && dl < bound, "{precision}: {dp:e} {dl:e}");
    }
}

/// Frames of a clump scene on the GPU carry every sphere with its body, as the CPU's.
#[test]
fn gpu_frames_carry_each_spheres_body() {
    let Some(ctx) = gpu_common::context_for("clump-frames", Precision::F32) else {
        return;
    };
    let scene = cluster();
    let mut b = gpu(ctx, &scene, Precision::F32);
    let mut c = CpuBackend::new(&scene).unwrap();
    let (fg, fc) = (b.frame().unwrap(), c.frame().unwrap());
    assert_eq!(fg.body_id, fc.body_id);
    // A clump's own spheres overlap but are not contacts (the cluster starts apart).
    assert_eq!(fg.contact_count, fc.contact_count);
    assert_eq!(fg.contact_count.iter().sum::<u32>(), 0);
    assert_eq!(fg.particles.len(), fc.particles.len());
    assert_eq!(b.particles().unwrap().len(), 27);
}

/// One free sphere and two dimers; the second dimer (clump 1, final.csv row 2) leaves
/// the `[domain]` or spins too fast for map (23).
fn failing(extra: &str, spin: f64) -> Scene {
    let text = format!(
        "[simulation]\ndt = 1e-5\nsteps = 10\nintegrator = \"variational-exact\"\n\
         [contact]\nlaw = \"hertz\"\n{MATERIAL}{SHAPES}{extra}\
         [[particle]]\nposition = [0.0, 0.0, 0.02]\nradius = 1e-3\nmaterial = \"glass\"\n\
         [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.0]\n\
         [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.01, 0.0]\nvelocity = [0.0, 20.0, 0.0]\n\
         angular_velocity = [0.0, 0.0, {spin}]\n"
    );
    parse_scene(&text).unwrap()
}

/// A clump's failure names the clump and its final.csv row, the same on both backends
/// (what only the CPU knows, the value, aside).
#[test]
fn clump_faults_name_the_clump_on_both_backends() {
    use varidem::error::{ClumpFault, Error, Fault};
    let domain = "[domain]\nmin = [-0.05, -0.05, -0.05]\nmax = [0.05, 0.0102, 0.05]\n";
    for (scene, want) in [
        (
            failing(domain, 0.0),
            ClumpFault::LeftDomain { position: None },
        ),
        (
            failing("", 2e5),
            ClumpFault::RotationStepTooLarge { value: None },
        ),
    ] {
        let mut cpu = CpuBackend::new(&scene).unwrap();
        let e_cpu = cpu.advance(10).unwrap_err();
        let Some(ctx) = gpu_common::context_for("clump-faults", Precision::F32) else {
            return;
        };
        let mut g = gpu(ctx, &scene, Precision::F32);
        let e_gpu = g.advance(10).unwrap_err();
        for (backend, e) in [("cpu", &e_cpu), ("gpu", &e_gpu)] {
            let Error::Fault {
                fault: Fault::Clump { clump, row, fault },
                ..
            } = e
            else {
                panic!("{backend}: {e}");
            };
            assert_eq!((*clump, *row), (1, 2), "{backend}: {e}");
            assert_eq!(
                std::mem::discriminant(fault),
                std::mem::discriminant(&want),
                "{backend}: {e}"
            );
            assert!(e.to_string().contains("clump 1 (final.csv row 2)"), "{e}");
        }
        let (Error::Fault { step: a, .. }, Error::Fault { step: b, .. }) = (&e_cpu, &e_gpu) else {
            unreachable!()
        };
        assert_eq!(a, b, "{e_cpu} / {e_gpu}");
        eprintln!("cpu: {e_cpu}\ngpu: {e_gpu}");
    }
}

/// 27 grains of radius 1 mm on a jittered 3×3×3 lattice above a floor (those of
/// `tests/clump_cpu.rs`), as spheres or as single-sphere clumps with the same scalar
/// tensor.
fn balls(as_clumps: bool) -> Scene {
    let r = 1e-3f64;
    let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let j = 0.4 * m * r * r;
    let mut text = format!(
        "[simulation]\ndt = 1e-5\nsteps = 10\ngravity = [0.0, 0.0, -9.81]\n\
         [contact]\nlaw = \"hertz\"\n{MATERIAL}\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\n\
         [[clump_type]]\nname = \"ball\"\nspheres = [{{ position = [0.0, 0.0, 0.0], radius = {r:e} }}]\n\
         material = \"glass\"\nmass = {m:e}\ninertia = [{j:e}, {j:e}, {j:e}]\n"
    );
    for k in 0..27 {
        let (i, jj, l) = (k % 3, (k / 3) % 3, k / 9);
        let jitter = DVec3::new(
            ((k * 37) % 11) as f64 - 5.0,
            ((k * 53) % 13) as f64 - 6.0,
            0.0,
        );
        let x = (DVec3::new(i as f64, jj as f64, l as f64) * 2.1e-3
            + DVec3::new(0.0, 0.0, 1.05e-3)
            + jitter * 5e-6)
            .to_array();
        let v = DVec3::new(0.01 * (k % 3) as f64, -0.02, -0.05 * (k % 2) as f64).to_array();
        text.push_str(&if as_clumps {
            format!("[[clump]]\ntype = \"ball\"\nposition = {x:?}\nvelocity = {v:?}\n")
        } else {
            format!(
                "[[particle]]\nposition = {x:?}\nvelocity = {v:?}\nradius = {r:e}\nmass = {m:e}\n\
                 inertia = {j:e}\nmaterial = \"glass\"\n"
            )
        });
    }
    parse_scene(&text).unwrap()
}

/// On the GPU, single-sphere clumps with a scalar tensor are its spheres, bit for bit
/// in both precisions: every operation of the clump kernels on a centred sphere is the
/// sphere path's (the CPU's twin test is `clump_cpu`). In f32 the pose adds the zero
/// lever with the body's Kahan term c, x + (0 − c), which rounds back to x because
/// |c| is at most half an ulp of x, and keeps c.
#[test]
fn single_sphere_clumps_are_spheres_on_the_gpu() {
    for precision in [Precision::F64, Precision::F32] {
        let (Some(c1), Some(c2)) = (
            gpu_common::context_for("clump-balls", precision),
            gpu_common::context_for("clump-balls", precision),
        ) else {
            continue;
        };
        let mut a = gpu(c1, &balls(false), precision);
        let mut b = gpu(c2, &balls(true), precision);
        for _ in 0..10 {
            a.advance(200).unwrap();
            b.advance(200).unwrap();
            let (pa, pb) = (a.particles().unwrap(), b.particles().unwrap());
            assert_eq!(pa.position, pb.position, "{precision}");
            assert_eq!(pa.velocity, pb.velocity, "{precision}");
            assert_eq!(pa.rotation, pb.rotation, "{precision}");
            assert_eq!(pa.angular_velocity, pb.angular_velocity, "{precision}");
        }
        let touching: u32 = a.frame().unwrap().contact_count.iter().sum();
        eprintln!("{precision}: {touching} contacts, equal bit for bit");
        assert!(touching > 20, "{touching}");
    }
}

/// Displacement along the slope of a dimer laid along the fall line of a plane tilted
/// by `theta`, after `t` s, μ = 0.4, on the GPU in `precision`.
fn gpu_incline(theta: f64, t: f64, precision: Precision) -> Option<f64> {
    let (text, x0, down) = common::dimer_incline(theta, 2e-6, MATERIAL);
    let ctx = gpu_common::context_for("clump-incline", precision)?;
    let mut b = gpu(ctx, &parse_scene(&text).unwrap(), precision);
    b.advance((t / 2e-6).round() as u64).unwrap();
    let p = b.particles().unwrap();
    Some((p.position[0] - x0).dot(down))
}

/// The dimer on an incline on the GPU, as `clump_cpu` on the CPU: with μ = 0.4 it
/// slides at g (sin θ − μ cos θ) on a 30° plane (within 3 %: the contact's compliance
/// and its settling in the first milliseconds) and rests on a 15° one (below 1e-6 m,
/// the tangential spring's elastic creep).
#[test]
fn a_dimer_slides_or_rests_on_an_incline_on_the_gpu() {
    let t = 0.02;
    for precision in [Precision::F64, Precision::F32] {
        let steep = 30f64.to_radians();
        let Some(slid) = gpu_incline(steep, t, precision) else {
            continue;
        };
        let want = 0.5 * 9.81 * (steep.sin() - 0.4 * steep.cos()) * t * t;
        let rest = gpu_incline(15f64.to_radians(), t, precision).unwrap_or(0.0);
        eprintln!(
            "{precision}: 30° slid {slid:.4e} m (expected {want:.4e}); 15° moved {rest:.2e} m"
        );
        assert!(
            (slid / want - 1.0).abs() < 0.03,
            "{precision}: {slid} against {want}"
        );
        assert!(rest.abs() < 1e-6, "{precision}: {rest}");
    }
}
