//! GPU kernels against the CPU reference on the same inputs (lavapipe in CI).
//!
//! Tolerances: f64 kernels perform the same IEEE operations as the CPU except for the
//! f64 `atan` (our polynomial vs libm, ≤ 2 ulp), possible FMA contraction by the driver
//! and the tree order of the GPU reductions, so states agree to ~1e-15 per step and
//! 1e-10 relative bounds them over the horizons used. f32 kernels carry ~6e-8 relative
//! rounding per operation: 1e-4 over 10³ steps.

mod common;
mod gpu_common;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::error::{Error, Fault};
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::integrators::IntegratorKind;
use varidem::model::{Model, Particles, ShearForm};

fn scene_model(name: &str) -> Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name);
    varidem::io::load_scene(&path).unwrap().model
}

/// Largest difference over particles and fields, relative to each field's largest
/// magnitude.
fn max_rel(a: &Particles, b: &Particles) -> f64 {
    per_field(a, b).into_iter().fold(0.0, f64::max)
}

use gpu_common::per_field;

fn gpu(
    test: &str,
    model: &Model,
    kind: IntegratorKind,
    dt: f64,
    precision: Precision,
) -> Option<GpuBackend> {
    gpu_inline(test, model, kind, dt, precision, None)
}

/// [`gpu`] with the fused steps' bond terms computed in `particle_forces_predict`
/// (`Some(true)`) or by `bond_forces` (`Some(false)`), or the adapter's default.
fn gpu_inline(
    test: &str,
    model: &Model,
    kind: IntegratorKind,
    dt: f64,
    precision: Precision,
    inline_bonds: Option<bool>,
) -> Option<GpuBackend> {
    let ctx = gpu_common::context_for(test, precision)?;
    let opts = GpuOptions {
        precision,
        inline_bonds,
        ..Default::default()
    };
    Some(GpuBackend::with_context(ctx, model.clone(), kind, dt, &opts).unwrap())
}

/// Runs both backends `steps` steps; returns the relative state difference and the
/// relative difference of the total energy.
fn compare(
    test: &str,
    model: &Model,
    kind: IntegratorKind,
    dt: f64,
    steps: u64,
    precision: Precision,
) -> Option<(f64, f64)> {
    let mut g = gpu(test, model, kind, dt, precision)?;
    let mut c = CpuBackend::from_model(model.clone(), kind, dt).unwrap();
    g.advance(steps).unwrap();
    c.advance(steps).unwrap();
    let (pg, pc) = (g.particles().unwrap(), c.particles().unwrap());
    let err = max_rel(&pg, &pc);
    println!("{test}: per field (x, v, α, Ω) {:?}", per_field(&pg, &pc));
    let (dg, dc) = (g.diagnostics().unwrap(), c.diagnostics().unwrap());
    let e_err = (dg.e_total() - dc.e_total()).abs() / dc.e_total().abs().max(1e-300);
    println!(
        "{test} ({precision}, {}): state {err:.3e}, energy {e_err:.3e}",
        g.adapter_name()
    );
    Some((err, e_err))
}

#[test]
fn pendulum_f64_matches_cpu() {
    for kind in IntegratorKind::ALL {
        if let Some((err, e)) = compare(
            "pendulum_f64",
            &common::pendulum(),
            kind,
            1e-3,
            10_000,
            Precision::F64,
        ) {
            assert!(
                err <= 1e-10 && e <= 1e-10,
                "{kind}: state {err:e}, energy {e:e}"
            );
        }
    }
}

#[test]
fn torus_impact_f64_matches_cpu_to_t1() {
    if let Some((err, e)) = compare(
        "torus_impact_f64",
        &scene_model("torus-impact.toml"),
        IntegratorKind::Variational,
        1e-3,
        1_000,
        Precision::F64,
    ) {
        assert!(err <= 1e-10 && e <= 1e-10, "state {err:e}, energy {e:e}");
    }
}

#[test]
fn random_cluster_f64_matches_cpu() {
    for (seed, shear) in [(1, ShearForm::Objective), (2, ShearForm::Printed)] {
        for kind in IntegratorKind::ALL {
            let m = common::random_cluster(seed, shear);
            if let Some((err, e)) =
                compare("random_cluster_f64", &m, kind, 2e-4, 500, Precision::F64)
            {
                assert!(
                    err <= 1e-10 && e <= 1e-10,
                    "{shear:?} {kind}: state {err:e}, energy {e:e}"
                );
            }
        }
    }
}

#[test]
fn f32_matches_cpu_to_1e4() {
    for (name, m, dt) in [
        ("pendulum", common::pendulum(), 1e-3),
        (
            "cluster",
            common::random_cluster(3, ShearForm::Objective),
            2e-4,
        ),
    ] {
        if let Some((err, e)) = compare(
            name,
            &m,
            IntegratorKind::Variational,
            dt,
            1_000,
            Precision::F32,
        ) {
            assert!(
                err <= 1e-4 && e <= 1e-4,
                "{name}: state {err:e}, energy {e:e}"
            );
        }
    }
}

/// The torus impact in f32 through the first contact with the wall (t = 0.1, 10² steps),
/// ≤ 1e-4. Over 10³ steps the stiff, chaotic impact amplifies f32 force rounding to
/// ~2e-3 in the velocities (measured 1.6e-3 at t = 1; f64: 3e-13), so the 10³-step f32
/// check uses the non-chaotic scenes above.
#[test]
fn torus_impact_f32_matches_cpu_through_first_contact() {
    if let Some((err, e)) = compare(
        "torus-impact-f32",
        &scene_model("torus-impact.toml"),
        IntegratorKind::Variational,
        1e-3,
        100,
        Precision::F32,
    ) {
        assert!(err <= 1e-4 && e <= 1e-4, "state {err:e}, energy {e:e}");
    }
}

/// Free torus in f32: momenta conserved to 2e-6 relative over 10⁴ steps. Pair forces
/// cancel bitwise (symmetric formulas, per-bond results added and subtracted); the
/// state updates are compensated (Kahan) in f32, so rounding does not accumulate in v
/// and Ω (measured 2.9e-7 and 6.3e-7). Without compensation the drifts were 6.9e-6
/// and 1.4e-5, so the bound also catches a driver that folds the Kahan terms away.
#[test]
fn free_torus_f32_conserves_momenta() {
    let model = scene_model("torus-free.toml");
    let Some(mut g) = gpu(
        "free_torus_f32",
        &model,
        IntegratorKind::Variational,
        1e-3,
        Precision::F32,
    ) else {
        return;
    };
    let d0 = g.diagnostics().unwrap();
    let (mut dp, mut dl) = (0.0f64, 0.0f64);
    for _ in 0..20 {
        g.advance(500).unwrap();
        let d = g.diagnostics().unwrap();
        dp = dp.max((d.momentum - d0.momentum).length() / d0.momentum.length());
        dl = dl.max(
            (d.angular_momentum - d0.angular_momentum).length() / d0.angular_momentum.length(),
        );
    }
    println!("free torus f32: max relative drift P {dp:.3e}, L {dl:.3e}");
    assert!(dp <= 2e-6 && dl <= 2e-6, "P {dp:e}, L {dl:e}");
}

/// The fused step (`particle_forces_predict`: one step's correct half and the next
/// step's predict in one pass, then `commit_pos`) computes the bits of the separate
/// kernels: one advance of 60 steps (59 fused) and 60 advances of one step (none
/// fused) end in the same state, Kahan terms included, and the same energies (which
/// fused steps do not store), for every GPU integrator in both precisions, with the
/// fused steps' bond terms from `bond_forces` and computed inline by
/// `particle_forces_predict`, and for both shear forms.
#[test]
fn fused_steps_equal_single_steps() {
    // Binder contacts on (random_cluster), and the printed shear's other bond law.
    let models = [
        common::random_cluster(4, ShearForm::Objective),
        common::random_cluster(5, ShearForm::Printed),
    ];
    for (m, model) in models.iter().enumerate() {
        for precision in [Precision::F32, Precision::F64] {
            // Every integrator on the objective shear; the printed one only changes the
            // bond law.
            let kinds: &[IntegratorKind] = if m == 0 {
                &IntegratorKind::ALL
            } else {
                &[IntegratorKind::Variational]
            };
            for &kind in kinds {
                // Bond terms from bond_forces, then computed by the particle kernel.
                for inline in [false, true] {
                    let Some(mut fused) =
                        gpu_inline("fused_steps", model, kind, 2e-4, precision, Some(inline))
                    else {
                        continue;
                    };
                    let mut single = gpu("fused_steps", model, kind, 2e-4, precision).unwrap();
                    fused.advance(60).unwrap();
                    for _ in 0..60 {
                        single.advance(1).unwrap();
                    }
                    let (a, b) = (
                        fused.checkpoint_state().unwrap(),
                        single.checkpoint_state().unwrap(),
                    );
                    assert_eq!(a.step, 60);
                    assert!(
                        a == b,
                        "model {m}, {precision} {kind}, inline bonds {inline}: fused and single steps differ"
                    );
                    // Energies are stored by the last step only (every step when not fused).
                    assert_eq!(fused.diagnostics().unwrap(), single.diagnostics().unwrap());
                }
            }
        }
    }
}

/// Bonds between particles that started unrotated (the random cluster, the block) are
/// uploaded as compact records (`CompactBonds`: 28 B instead of 60 B in f32), which
/// unpack to the full records' values: runs with and without them end in the same bits,
/// with the fused steps' bond terms from `bond_forces` and computed inline.
#[test]
fn compact_bond_records_give_the_same_bits() {
    let model = common::random_cluster(4, ShearForm::Objective);
    assert!(varidem::gpu::layout::CompactBonds::<f32>::new(&model.bonds).is_some());
    for precision in [Precision::F32, Precision::F64] {
        for inline_bonds in [false, true] {
            let mut runs = Vec::new();
            for compact_bonds in [true, false] {
                let Some(ctx) = gpu_common::context_for("compact_bonds", precision) else {
                    break;
                };
                let opts = GpuOptions {
                    precision,
                    inline_bonds: Some(inline_bonds),
                    compact_bonds: Some(compact_bonds),
                    ..Default::default()
                };
                let mut g = GpuBackend::with_context(
                    ctx,
                    model.clone(),
                    IntegratorKind::Variational,
                    2e-4,
                    &opts,
                )
                .unwrap();
                // `bench` prints the path it took.
                let path = g.kernel_path().unwrap();
                for (on, yes, no) in [
                    (compact_bonds, "compact bond records", "full bond records"),
                    (
                        inline_bonds,
                        "bond terms inline",
                        "bond terms from bond_forces",
                    ),
                ] {
                    assert!(path.contains(if on { yes } else { no }), "{path}");
                }
                g.advance(60).unwrap();
                runs.push((g.checkpoint_state().unwrap(), g.diagnostics().unwrap()));
            }
            if runs.is_empty() {
                continue;
            }
            assert!(
                runs[0] == runs[1],
                "{precision}, inline bonds {inline_bonds}: compact and full records differ"
            );
        }
    }
}

/// Bonds between particles that started with different orientations keep the full
/// record (rest directions per end, rest rotation c₀): a cluster bonded after random
/// rotations matches the CPU to 1e-10 in f64 (the random cluster's tolerance), with the
/// fused steps' bond terms from `bond_forces` and computed inline.
#[test]
fn rotated_cluster_f64_matches_cpu() {
    let mut m = common::random_cluster(6, ShearForm::Objective);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for a in m.particles.rotation.iter_mut() {
        *a = DVec3::new(
            rng.random_range(-0.8..0.8),
            rng.random_range(-0.8..0.8),
            rng.random_range(-0.8..0.8),
        );
    }
    m.bonds = m
        .bonds
        .iter()
        .map(|b| varidem::model::Bond::from_current(&m.particles, b.i, b.j, b.stiffness()).unwrap())
        .collect();
    assert!(varidem::gpu::layout::CompactBonds::<f64>::new(&m.bonds).is_none());
    for inline_bonds in [false, true] {
        let kind = IntegratorKind::Variational;
        let Some(mut g) = gpu_inline(
            "rotated_cluster",
            &m,
            kind,
            2e-4,
            Precision::F64,
            Some(inline_bonds),
        ) else {
            return;
        };
        let mut c = CpuBackend::from_model(m.clone(), kind, 2e-4).unwrap();
        g.advance(500).unwrap();
        c.advance(500).unwrap();
        let err = max_rel(&g.particles().unwrap(), &c.particles().unwrap());
        let (dg, dc) = (g.diagnostics().unwrap(), c.diagnostics().unwrap());
        let e = (dg.e_total() - dc.e_total()).abs() / dc.e_total().abs();
        println!("rotated cluster (inline bonds {inline_bonds}): state {err:.3e}, energy {e:.3e}");
        assert!(err <= 1e-10 && e <= 1e-10, "state {err:e}, energy {e:e}");
        // The bonds bend, so the rest rotation c₀ enters the compared energy.
        assert!(dc.potentials.bend > 0.0);
    }
}

/// A bond whose relative rotation reaches a half turn stops the run naming the bond
/// and the step, whether `bond_forces` computes it or the fused particle kernel does
/// (inline bond terms), in both precisions, at the step the CPU names. Two particles
/// bonded along x at rest spin about x in opposite senses at 2048 rad/s with h = 2⁻¹⁰
/// (no moments: the bending stiffness is zero and a rotation about the bond axis
/// leaves the shear terms at rest), so after step 1 they are at α = ±2x̂, exactly a
/// half turn apart.
#[test]
fn bond_half_turn_is_reported_in_both_bond_paths() {
    let mut m = Model::default();
    for k in 0..2 {
        let mut p =
            varidem::model::Particle::at_rest(DVec3::new(0.1 * k as f64, 0.0, 0.0), 1.0, 0.05);
        p.angular_velocity = DVec3::new(if k == 0 { 2048.0 } else { -2048.0 }, 0.0, 0.0);
        m.particles.push(p);
    }
    let k = varidem::model::BondStiffness {
        bend: 0.0,
        axial: 1.0,
        shear: 1.0,
    };
    m.bonds
        .push(varidem::model::Bond::from_current(&m.particles, 0, 1, k).unwrap());
    let dt = 1.0 / 1024.0;
    let kind = IntegratorKind::Variational;
    let mut cpu = CpuBackend::from_model(m.clone(), kind, dt).unwrap();
    let cpu_err = cpu.advance(3).unwrap_err();
    let half_turn = Fault::BondHalfTurn {
        bond: 0,
        i: 0,
        j: 1,
    };
    let expected = |e: &Error| matches!(e, Error::Fault { step: 1, fault } if *fault == half_turn);
    assert!(expected(&cpu_err), "{cpu_err}");
    for precision in [Precision::F64, Precision::F32] {
        for inline_bonds in [false, true] {
            let Some(mut g) = gpu_inline(
                "bond_half_turn",
                &m,
                kind,
                dt,
                precision,
                Some(inline_bonds),
            ) else {
                continue;
            };
            let inline_path = g.kernel_path().unwrap().contains("bond terms inline");
            assert_eq!(inline_path, inline_bonds);
            let err = g.advance(3).unwrap_err();
            assert!(
                expected(&err),
                "{precision}, inline bonds {inline_bonds}: {err} (CPU: {cpu_err})"
            );
            assert!(err.to_string().contains("bond 0 (0, 1)"), "{err}");
        }
    }
}

/// Two identical GPU runs give bitwise-identical final.csv (no float atomics; the
/// neighbour lists are sorted whatever order the bucket atomics produced).
#[test]
fn gpu_runs_are_bitwise_reproducible() {
    let model = common::random_cluster(4, ShearForm::Objective);
    let dir = tempfile::tempdir().unwrap();
    for precision in [Precision::F32, Precision::F64] {
        let mut files = Vec::new();
        for run in 0..2 {
            let Some(mut g) = gpu(
                "reproducible",
                &model,
                IntegratorKind::Variational,
                2e-4,
                precision,
            ) else {
                break;
            };
            g.advance(300).unwrap();
            let path = dir.path().join(format!("final-{precision}-{run}.csv"));
            varidem::io::write_final_csv(&path, &g.particles().unwrap()).unwrap();
            files.push(std::fs::read(&path).unwrap());
        }
        if let [a, b] = files.as_slice() {
            assert_eq!(a, b, "{precision}: runs differ");
        }
    }
}

/// Kernels bond_forces + particle_forces (+ grid) at one random state: every force and
/// moment against the CPU twin, and the GPU neighbour lists equal the CPU's.
#[test]
fn force_kernels_match_cpu_on_random_state() {
    for (seed, shear) in [(10, ShearForm::Objective), (11, ShearForm::Printed)] {
        let mut m = common::random_cluster(seed, shear);
        // Perturb positions and rotations after bonding: strained bonds, overlaps.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for i in 0..m.particles.len() {
            m.particles.position[i] += DVec3::new(
                rng.random_range(-0.02..0.02),
                rng.random_range(-0.02..0.02),
                rng.random_range(-0.02..0.02),
            );
            m.particles.rotation[i] = DVec3::new(
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            );
        }
        let Some(g) = gpu(
            "force_kernels",
            &m,
            IntegratorKind::Variational,
            1e-4,
            Precision::F64,
        ) else {
            return;
        };
        let c = CpuBackend::from_model(m.clone(), IntegratorKind::Variational, 1e-4).unwrap();
        let (gf, gm) = g.forces().unwrap();
        let scale_f = c
            .particle_forces()
            .iter()
            .map(|p| p.force.length())
            .fold(0.0, f64::max);
        let scale_m = c
            .particle_forces()
            .iter()
            .map(|p| p.moment.length())
            .fold(0.0, f64::max);
        for (i, p) in c.particle_forces().iter().enumerate() {
            assert!(
                (gf[i] - p.force).length() <= 1e-13 * scale_f,
                "particle {i}: force {} vs {}",
                gf[i],
                p.force
            );
            assert!(
                (gm[i] - p.moment).length() <= 1e-13 * scale_m,
                "particle {i}: moment {} vs {}",
                gm[i],
                p.moment
            );
        }
        let lists = g.neighbor_lists().unwrap();
        for (i, l) in lists.iter().enumerate() {
            assert_eq!(
                l.as_slice(),
                c.neighbor_list(i),
                "particle {i}: neighbour lists differ"
            );
        }
    }
}

/// The f32 neighbour lists equal the CPU's: the f64 check above needs `SHADER_F64`,
/// which OpenGL adapters lack, and the list build is where Mesa's GL path (llvmpipe GL
/// 4.5, Mesa 22.3) once differed: its insertion sort lost shifted entries (a partner
/// replaced by particle 0), so the torus blew up there and not on Vulkan. Run under
/// `WGPU_BACKEND=gl` to check an OpenGL adapter.
#[test]
fn f32_neighbor_lists_match_cpu() {
    let mut models = vec![scene_model("torus-impact.toml")];
    models.extend([10, 11].map(|seed| common::random_cluster(seed, ShearForm::Objective)));
    for (k, m) in models.into_iter().enumerate() {
        let Some(g) = gpu(
            "f32_neighbor_lists",
            &m,
            IntegratorKind::Variational,
            1e-4,
            Precision::F32,
        ) else {
            return;
        };
        let c = CpuBackend::from_model(m, IntegratorKind::Variational, 1e-4).unwrap();
        let lists = g.neighbor_lists().unwrap();
        assert!(
            lists.iter().any(|l| l.len() > 1),
            "model {k}: no list to sort"
        );
        for (i, l) in lists.iter().enumerate() {
            assert_eq!(
                l.as_slice(),
                c.neighbor_list(i),
                "model {k}, particle {i}: neighbour lists differ"
            );
        }
    }
}

/// Bond sets larger than one storage binding are split into chunks (here forced to 7
/// bonds per chunk, so the cluster's bonds span many chunks): the chunked gather sums in
/// the same order, so the run still matches the CPU. The particles' neighbour rows are
/// split too (7 particles per row chunk), through the binder contact law.
#[test]
fn chunked_bonds_match_cpu() {
    let m = common::random_cluster(5, ShearForm::Objective);
    let Some(ctx) = gpu_common::context_f64("chunked_bonds") else {
        return;
    };
    let opts = GpuOptions {
        precision: Precision::F64,
        max_chunk_bonds: Some(7),
        max_chunk_particles: Some(7),
        ..Default::default()
    };
    let mut g =
        GpuBackend::with_context(ctx, m.clone(), IntegratorKind::Variational, 2e-4, &opts).unwrap();
    let mut c = CpuBackend::from_model(m, IntegratorKind::Variational, 2e-4).unwrap();
    g.advance(300).unwrap();
    c.advance(300).unwrap();
    let err = max_rel(&g.particles().unwrap(), &c.particles().unwrap());
    let (dg, dc) = (g.diagnostics().unwrap(), c.diagnostics().unwrap());
    println!(
        "chunked: state {err:.3e}, bend energy gpu {} cpu {}",
        dg.potentials.bend, dc.potentials.bend
    );
    assert!(err <= 1e-10, "{err:e}");
    assert!((dg.potentials.bend - dc.potentials.bend).abs() <= 1e-12 * dc.potentials.bend.abs());
    assert!((dg.e_total() - dc.e_total()).abs() <= 1e-12 * dc.e_total().abs());
}

/// Kernel reduce_partials/reduce_final against the CPU diagnostics on a random state.
#[test]
fn reduce_kernels_match_cpu() {
    let m = common::random_cluster(12, ShearForm::Objective);
    let Some(mut g) = gpu(
        "reduce",
        &m,
        IntegratorKind::Variational,
        1e-4,
        Precision::F64,
    ) else {
        return;
    };
    let mut c = CpuBackend::from_model(m, IntegratorKind::Variational, 1e-4).unwrap();
    let (dg, dc) = (g.diagnostics().unwrap(), c.diagnostics().unwrap());
    let pairs = [
        ("e_kin", dg.e_kin, dc.e_kin),
        ("e_rot", dg.e_rot, dc.e_rot),
        ("bend", dg.potentials.bend, dc.potentials.bend),
        ("axial", dg.potentials.axial, dc.potentials.axial),
        ("shear", dg.potentials.shear, dc.potentials.shear),
        ("contact", dg.potentials.contact, dc.potentials.contact),
        ("wall", dg.potentials.wall, dc.potentials.wall),
        ("field", dg.potentials.field, dc.potentials.field),
    ];
    for (name, a, b) in pairs {
        assert!(
            (a - b).abs() <= 1e-13 * b.abs().max(1e-300),
            "{name}: gpu {a} cpu {b}"
        );
    }
    assert!((dg.momentum - dc.momentum).length() <= 1e-13 * dc.momentum.length());
    assert!(
        (dg.angular_momentum - dc.angular_momentum).length()
            <= 1e-13 * dc.angular_momentum.length()
    );
}

/// Map (23) out of its domain on the GPU: a clear error naming the step and particle.
#[test]
fn gpu_reports_rotation_domain_error() {
    let mut m = common::pendulum();
    m.particles.angular_velocity[0] = DVec3::new(0.0, 0.0, 30.0);
    let Some(mut g) = gpu(
        "domain_error",
        &m,
        IntegratorKind::VariationalExact,
        0.05,
        Precision::F64,
    ) else {
        return;
    };
    let err = g.advance(3).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Fault {
                step: 1,
                fault: Fault::RotationStepTooLarge { particle: 0, .. }
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("map (23)"), "{err}");
}
