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
//!   makes trajectories of a dense granular flow diverge): the kinetic-energy history
//!   and the centre-of-mass height within 1 % of the CPU's.
//! - a free frictional cluster: momentum and angular momentum conserved to rounding
//!   (f64: 10⁻¹² of their scale, as on the CPU; f32: the Kahan-compensated state keeps
//!   them to 10⁻⁶).
//! - single-sphere clumps with a scalar tensor are spheres: the GPU's clump path gives
//!   the GPU's sphere path to 1e-12 in f64 (the lever of a centred sphere is zero, but
//!   the bodies' sums run in another kernel).

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
const SHAPES: &str = "[[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [-0.6e-3, 0.0, 0.0], radius = 1e-3 }, \
                { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
     [[clump_type]]\nname = \"trimer\"\nmaterial = \"glass\"\n\
     spheres = [{ position = [0.0, 0.0, 0.0], radius = 1e-3 }, \
                { position = [1.2e-3, 0.0, 0.0], radius = 0.7e-3 }, \
                { position = [0.0, 1.1e-3, 0.3e-3], radius = 0.6e-3 }]\n";

/// A value in [−1, 1) from a seeded LCG.
fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// `side`³ clumps (dimers and trimers alternating) on a lattice of spacing 3.2 mm in a
/// walled box under gravity, randomly turned, thrown at up to 1 m/s per component
/// and spinning at up to 300 rad/s: many collisions from the first steps.
fn pour(side: usize, integrator: &str) -> Scene {
    let spacing = 3.2e-3;
    let half = 0.5 * spacing * side as f64;
    let mut text = format!(
        "[simulation]\ndt = 4e-6\nsteps = 10\nintegrator = {integrator:?}\n\
         gravity = [0.0, 0.0, -9.81]\n[contact]\nlaw = \"hertz\"\nskin = 2e-4\n\
         max_contacts = 24\n{MATERIAL}{SHAPES}"
    );
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
        text.push_str(&format!(
            "[[clump]]\ntype = {kind:?}\nposition = {:?}\nrotation = {:?}\nvelocity = {:?}\nangular_velocity = {:?}\n",
            x.to_array(),
            alpha.to_array(),
            v.to_array(),
            w.to_array()
        ));
    }
    parse_scene(&text).expect("the pour scene parses")
}

fn gpu(ctx: varidem::gpu::context::GpuContext, scene: &Scene, precision: Precision) -> GpuBackend {
    let s = &scene.simulation;
    GpuBackend::with_context(
        ctx,
        scene.model.clone(),
        s.integrator,
        s.dt,
        &GpuOptions {
            precision,
            ..GpuOptions::default()
        },
    )
    .expect("the GPU runs the clump scene")
}

/// GPU f64 against the CPU on the 10³-clump pour, for each map: every body row
/// (centre of mass, velocity, α, Ω) and every sphere within 1e-9 after 200 steps.
#[test]
fn a_pour_of_a_thousand_clumps_matches_the_cpu_in_f64() {
    for integrator in ["variational", "variational-exact", "symplectic-euler"] {
        let Some(ctx) = gpu_common::context_f64("clump-pour-f64") else {
            return;
        };
        let scene = pour(10, integrator);
        let mut cpu = CpuBackend::new(&scene).unwrap();
        let mut gpu = gpu(ctx, &scene, Precision::F64);
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
        for (what, d) in [("bodies", rows), ("spheres", spheres)] {
            assert!(d.iter().all(|&e| e <= 1e-9), "{integrator} {what}: {d:?}");
        }
        assert!(de <= 1e-9, "{integrator}: kinetic energy {de:e}");
    }
}

/// The kinetic energy and the mean height of the bodies.
fn statistics(b: &mut dyn Backend) -> (f64, f64) {
    let d = b.diagnostics().unwrap();
    let rows = b.particles().unwrap();
    let z = rows.position.iter().map(|x| x.z).sum::<f64>() / rows.len() as f64;
    (d.e_kin + d.e_rot, z)
}

/// GPU f32 against the CPU on the pour over 2000 steps (8 ms, the thrown clumps
/// colliding and falling): the kinetic energy at every 200 steps and the mean height
/// within 1 % (of the initial kinetic energy, and of the initial height).
#[test]
fn a_pour_of_a_thousand_clumps_is_statistically_the_cpus_in_f32() {
    let Some(ctx) = gpu_common::context_for("clump-pour-f32", Precision::F32) else {
        return;
    };
    let scene = pour(10, "variational");
    let mut cpu = CpuBackend::new(&scene).unwrap();
    let mut gpu = gpu(ctx, &scene, Precision::F32);
    let (e0, z0) = statistics(&mut cpu);
    let (mut worst_e, mut worst_z) = (0.0f64, 0.0f64);
    for _ in 0..10 {
        cpu.advance(200).unwrap();
        gpu.advance(200).unwrap();
        let (ec, zc) = statistics(&mut cpu);
        let (eg, zg) = statistics(&mut gpu);
        worst_e = worst_e.max((ec - eg).abs() / e0);
        worst_z = worst_z.max((zc - zg).abs() / z0);
    }
    let (e1, _) = statistics(&mut cpu);
    eprintln!(
        "f32 pour: kinetic energy {e0:.3e} → {e1:.3e} J; worst |ΔE|/E0 = {worst_e:.1e}, |Δz|/z0 = {worst_z:.1e}"
    );
    assert!(e1 < 0.9 * e0, "the pour did not dissipate: {e0} → {e1}");
    assert!(
        worst_e <= 0.01 && worst_z <= 0.01,
        "{worst_e:e} {worst_z:e}"
    );
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
        text.push_str(&format!(
            "[[clump]]\ntype = {kind:?}\nposition = {:?}\nrotation = {:?}\nvelocity = {:?}\nangular_velocity = {:?}\n",
            x.to_array(),
            alpha.to_array(),
            v.to_array(),
            w.to_array()
        ));
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
