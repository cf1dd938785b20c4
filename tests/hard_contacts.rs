//! Hard contacts (issue 25) on the CPU backend: the `impulse-velocity` step against
//! analytic results (free flight, impact, sliding, rolling), the three solvers against
//! each other, a settling pile, and the scene keys' errors.
//!
//! Run: `cargo test --release --test hard_contacts` (a few seconds).

use glam::DVec3;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;

/// Glass (E = 63 GPa, ρ = 2500 kg/m³), restitution 0, friction `mu`.
fn glass(mu: f64) -> String {
    format!(
        "[[material]]\nname = \"glass\"\nyoung = 63e9\npoisson = 0.2\ndensity = 2500.0\nrestitution = 0.0\nfriction_static = {mu}\n"
    )
}

/// A hard-contact scene: `dt`, gravity, `[contact]` extra keys, μ, then `body`.
fn scene(dt: f64, gravity: DVec3, contact: &str, mu: f64, body: &str) -> String {
    format!(
        "[simulation]\ndt = {dt:e}\nsteps = 1000000\nintegrator = \"impulse-velocity\"\ngravity = [{}, {}, {}]\n\n[contact]\nlaw = \"hard\"\n{contact}\n{}\n{body}",
        gravity.x,
        gravity.y,
        gravity.z,
        glass(mu)
    )
}

fn sphere(x: DVec3, v: DVec3, w: DVec3, r: f64, extra: &str) -> String {
    format!(
        "[[particle]]\nposition = [{:e}, {:e}, {:e}]\nvelocity = [{:e}, {:e}, {:e}]\nangular_velocity = [{:e}, {:e}, {:e}]\nradius = {r:e}\nmaterial = \"glass\"\n{extra}\n",
        x.x, x.y, x.z, v.x, v.y, v.z, w.x, w.y, w.z
    )
}

fn wall(point: DVec3, normal: DVec3) -> String {
    format!(
        "[[wall]]\npoint = [{:e}, {:e}, {:e}]\nnormal = [{:e}, {:e}, {:e}]\n",
        point.x, point.y, point.z, normal.x, normal.y, normal.z
    )
}

/// A floor through `corner` and four side walls around the square of side `width`
/// from it (an open box).
fn box_walls(corner: DVec3, width: f64) -> String {
    let far = corner + DVec3::new(width, width, 0.0);
    [
        (corner, DVec3::Z),
        (corner, DVec3::X),
        (corner, DVec3::Y),
        (far, -DVec3::X),
        (far, -DVec3::Y),
    ]
    .iter()
    .map(|&(p, n)| wall(p, n))
    .collect()
}

/// Seeded uniform numbers in [−½, ½) (a 64-bit LCG: the tests' scenes need no more).
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

fn backend(text: &str) -> CpuBackend {
    let scene = parse_scene(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    CpuBackend::new(&scene).unwrap()
}

const G: f64 = 9.81;

/// Free flight: semi-implicit Euler loses exactly `m g² h²/2` per step (NOTES), and the
/// velocity gains exactly `g h`. Tolerance: rounding of `E ≈ m g z` summed over the
/// steps: |E| ≈ 0.1 J at 2e-16 relative against a loss of 5e-7 J is ~1e-10 of the loss; 1e-9.
#[test]
fn free_flight_loses_m_g2_h2_over_2_per_step() {
    let h = 1e-3;
    let g = DVec3::new(0.0, 0.0, -G);
    let body = sphere(
        DVec3::new(0.0, 0.0, 1.0),
        DVec3::new(0.3, 0.0, 1.0),
        DVec3::ZERO,
        0.01,
        "",
    );
    let mut b = backend(&scene(h, g, "", 0.5, &body));
    let m = b.model().particles.mass[0];
    let loss = 0.5 * m * G * G * h * h;
    let mut e0 = b.diagnostics().unwrap().e_total();
    let mut worst = 0f64;
    for _ in 0..200 {
        b.advance(1).unwrap();
        let e = b.diagnostics().unwrap().e_total();
        worst = worst.max(((e0 - e) - loss).abs() / loss);
        e0 = e;
    }
    let v = b.model().particles.velocity[0];
    println!("free flight: worst relative deviation of the per-step loss {worst:.2e}");
    assert!(
        worst < 1e-9,
        "per-step loss deviates by {worst:e} of m g² h²/2"
    );
    assert!((v.z - (1.0 - 200.0 * G * h)).abs() < 1e-12);
}

/// A sphere dropped on a plane stops dead: after the impact step its velocity is zero
/// (purely inelastic) and it rests on the plane, with no penetration (the speculative
/// contact closes the gap exactly). Tolerance 1e-12 m/s and 1e-12 m: rounding.
#[test]
fn a_dropped_sphere_stops_dead_on_the_plane() {
    let h = 1e-3;
    let r = 0.01;
    let body = sphere(DVec3::new(0.0, 0.0, 0.2), DVec3::ZERO, DVec3::ZERO, r, "")
        + &wall(DVec3::ZERO, DVec3::Z);
    let mut b = backend(&scene(h, DVec3::new(0.0, 0.0, -G), "", 0.5, &body));
    let mut impact = None;
    for k in 1..=400 {
        b.advance(1).unwrap();
        let p = &b.model().particles;
        if impact.is_none() && p.velocity[0].z.abs() < 1e-12 {
            impact = Some(k);
        }
        if let Some(k0) = impact {
            assert!(
                p.velocity[0].length() < 1e-12,
                "step {k}: bounced {:?}",
                p.velocity[0]
            );
            assert!(
                (p.position[0].z - r).abs() < 1e-12,
                "step {k}: z = {}",
                p.position[0].z
            );
            assert!(k - k0 < 400);
        }
    }
    let rows = b.take_solver_rows();
    assert_eq!(rows.len(), 400);
    let k0 = impact.expect("the sphere never landed");
    // Free fall from 0.19 m: it lands within the step that covers t = √(2·0.19/g).
    let t = (2.0 * 0.19 / G).sqrt();
    assert!(
        ((k0 as f64) * h - t).abs() < 2.0 * h,
        "landed at step {k0}, t = {t}"
    );
    // `e_dissipated` is the free velocities' kinetic energy less the final one, so
    // ΔE = −½mg²h² − hJ·g − e_dissipated exactly (see the pile test); checked on a
    // second run, step by step, to rounding of E (1e-12 of mgH).
    let mut b2 = backend(&scene(
        h,
        DVec3::new(0.0, 0.0, -G),
        "",
        0.5,
        &(sphere(DVec3::new(0.0, 0.0, 0.2), DVec3::ZERO, DVec3::ZERO, r, "")
            + &wall(DVec3::ZERO, DVec3::Z)),
    ));
    let m2 = b2.model().particles.mass[0];
    let mut e0 = b2.diagnostics().unwrap().e_total();
    for _ in 0..400 {
        let v0 = b2.model().particles.velocity[0];
        b2.advance(1).unwrap();
        let e = b2.diagnostics().unwrap().e_total();
        let v1 = b2.model().particles.velocity[0];
        let g = DVec3::new(0.0, 0.0, -G);
        let j = m2 * (v1 - v0 - h * g);
        let row = b2.take_solver_rows()[0];
        let balance = e - e0 + 0.5 * m2 * G * G * h * h + h * j.dot(g) + row.e_dissipated;
        assert!(
            balance.abs() < 1e-12 * m2 * G * 0.2,
            "step {}: balance {balance:e}",
            row.step
        );
        e0 = e;
    }
    // The speculative contact slows the sphere in the step before it lands and stops it
    // in the landing step: those two steps dissipate its kinetic energy.
    let m = b.model().particles.mass[0];
    let v = G * h * (k0 as f64 - 1.0);
    let two = rows[k0 - 2].e_dissipated + rows[k0 - 1].e_dissipated;
    println!(
        "landed at step {k0}: the last two steps dissipated {two:.6e} J, ½m(g(k−1)h)² = {:.6e} J",
        0.5 * m * v * v
    );
    assert!(rows
        .iter()
        .all(|r| r.converged && r.max_penetration < 1e-12));
}

/// A sphere sliding on a plane with its rotation locked stops after `v₀/(μg)`: each
/// step takes exactly `μ g h` off the speed (the sliding branch gives `λ_t = μλ_n`,
/// `λ_n = m g h`). Tolerance: the stop within one step, the distance
/// `v₀²/(2μg)` within `v₀ h` (the scheme's first-order error).
#[test]
fn a_sliding_sphere_without_rotation_stops_after_v0_over_mu_g() {
    let (h, r, mu, v0) = (1e-3, 0.01, 0.3, 1.5);
    let body = sphere(
        DVec3::new(0.0, 0.0, r),
        DVec3::new(v0, 0.0, 0.0),
        DVec3::ZERO,
        r,
        "hold_rotation = true",
    ) + &wall(DVec3::ZERO, DVec3::Z);
    let mut b = backend(&scene(h, DVec3::new(0.0, 0.0, -G), "", mu, &body));
    let t_stop = v0 / (mu * G);
    let mut stopped = None;
    for k in 1..=1000 {
        b.advance(1).unwrap();
        let v = b.model().particles.velocity[0];
        if stopped.is_none() && v.x.abs() < 1e-12 {
            stopped = Some(k);
        } else if stopped.is_none() {
            let expected = v0 - mu * G * h * k as f64;
            assert!(
                (v.x - expected).abs() < 1e-12,
                "step {k}: v = {} ≠ {expected}",
                v.x
            );
        }
    }
    let k = stopped.expect("never stopped") as f64;
    let x = b.model().particles.position[0].x;
    println!(
        "stopped at t = {:.4} s (v₀/μg = {t_stop:.4}), distance {x:.5} (v₀²/2μg = {:.5})",
        k * h,
        v0 * v0 / (2.0 * mu * G)
    );
    assert!((k * h - t_stop).abs() <= h);
    assert!((x - v0 * v0 / (2.0 * mu * G)).abs() <= v0 * h);
}

/// A sphere on an incline of angle θ (a tilted wall): with `μ ≥ (2/7) tan θ` it rolls
/// at `(5/7) g sin θ`, with less it slides at `g(sin θ − μ cos θ)`. The scheme gives
/// these accelerations exactly each step (the contact's velocity constraint is met
/// exactly), so the tolerance is rounding: 1e-9 relative after 500 steps.
#[test]
fn a_sphere_rolls_or_slides_down_an_incline() {
    let (h, r) = (1e-3, 0.01);
    let theta: f64 = 0.4;
    let normal = DVec3::new(-theta.sin(), 0.0, theta.cos());
    let down = -DVec3::new(theta.cos(), 0.0, theta.sin());
    for (mu, rolls) in [(0.5, true), (0.05, false)] {
        let x = r * normal;
        let body = sphere(x, DVec3::ZERO, DVec3::ZERO, r, "") + &wall(DVec3::ZERO, normal);
        let mut b = backend(&scene(
            h,
            DVec3::new(0.0, 0.0, -G),
            "tolerance = 1e-12",
            mu,
            &body,
        ));
        let steps = 500;
        b.advance(steps).unwrap();
        let p = &b.model().particles;
        let a = p.velocity[0].dot(down) / (steps as f64 * h);
        let expected = if rolls {
            5.0 / 7.0 * G * theta.sin()
        } else {
            G * (theta.sin() - mu * theta.cos())
        };
        let normal_speed = p.velocity[0].dot(normal);
        let gap = (p.position[0]).dot(normal) - r;
        println!("μ = {mu}: a = {a:.12} (expected {expected:.12}), normal speed {normal_speed:.1e}, gap {gap:.1e}");
        assert!(
            (a - expected).abs() < 1e-9 * expected,
            "μ = {mu}: a = {a}, expected {expected}"
        );
        assert!(normal_speed.abs() < 1e-12 && gap.abs() < 1e-12);
        let slip = p.velocity[0] + p.angular_velocity[0].cross(-r * normal);
        if rolls {
            assert!(slip.length() < 1e-12, "rolling without slip: {slip:?}");
        } else {
            assert!(slip.length() > 0.1);
        }
    }
}

/// Momentum is conserved to rounding in a closed frictional cluster: 27 spheres with
/// random velocities and spins colliding without gravity or walls, 300 steps.
/// Tolerance 1e-13 of the total momentum scale Σ m|v| (every impulse is added to one
/// body and subtracted from another).
#[test]
fn momentum_is_conserved_in_a_closed_frictional_cluster() {
    let mut body = String::new();
    let mut rnd = uniform(7);
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                let x = 0.021 * DVec3::new(i as f64, j as f64, k as f64);
                let v = DVec3::new(rnd(), rnd(), rnd()) - 0.2 * (x - DVec3::splat(0.021));
                let w = 50.0 * DVec3::new(rnd(), rnd(), rnd());
                body += &sphere(x, v, w, 0.01, "");
            }
        }
    }
    for solver in ["nbgs", "jacobi", "colored"] {
        let mut b = backend(&scene(
            1e-3,
            DVec3::ZERO,
            &format!("solver = \"{solver}\""),
            0.6,
            &body,
        ));
        let p0 = b.diagnostics().unwrap().momentum;
        let scale: f64 = (0..27)
            .map(|i| b.model().particles.mass[i] * b.model().particles.velocity[i].length())
            .sum();
        b.advance(300).unwrap();
        let rows = b.take_solver_rows();
        let contacts: u32 = rows.iter().map(|r| r.contacts).sum();
        let dp = (b.diagnostics().unwrap().momentum - p0).length() / scale;
        println!("{solver}: |Δp|/Σm|v| = {dp:.2e} over {contacts} contact-steps");
        assert!(
            contacts > 300,
            "{solver}: the cluster hardly touched ({contacts})"
        );
        assert!(dp < 1e-13, "{solver}: momentum drifted by {dp:e}");
    }
}

/// One step of a sphere falling onto two touching spheres that rest on a plane (five
/// coupled contacts, μ = 0.3, the falling sphere off their plane, moving sideways and spinning): NBGS in
/// contact order, NBGS in the reversed order (the particles numbered backwards), Jacobi
/// and colored, each run to a residual of 1e-15 m/s, give the same velocities to 1e-12
/// m/s. The problem has a unique solution and every solver converges to it; 1e-12 is
/// what a 1e-15 residual leaves after the conditioning of this small system.
#[test]
fn the_solvers_agree_on_a_sphere_falling_onto_two() {
    let r = 0.01;
    // 0.1 mm above both lower spheres, off their plane by 0.1 r.
    let lift = ((2.0 * r + 1e-4f64).powi(2) - r.powi(2) - (0.1 * r).powi(2)).sqrt();
    let spheres = [
        (DVec3::new(-r, 0.0, r), DVec3::ZERO, DVec3::ZERO),
        (DVec3::new(r, 0.0, r), DVec3::ZERO, DVec3::ZERO),
        (
            DVec3::new(0.0, 0.1 * r, r + lift),
            DVec3::new(0.1, -0.05, -1.5),
            DVec3::new(3.0, -20.0, 7.0),
        ),
    ];
    let run = |solver: &str, reversed: bool| -> Vec<(DVec3, DVec3)> {
        let order: Vec<usize> = if reversed {
            vec![2, 1, 0]
        } else {
            vec![0, 1, 2]
        };
        let mut body: String = order
            .iter()
            .map(|&k| sphere(spheres[k].0, spheres[k].1, spheres[k].2, r, ""))
            .collect();
        body += &wall(DVec3::ZERO, DVec3::Z);
        let keys = format!(
            "solver = \"{solver}\"\ntolerance = 1e-15\nmax_sweeps = 1000000\nwarm_start = false"
        );
        let mut b = backend(&scene(1e-3, DVec3::new(0.0, 0.0, -G), &keys, 0.3, &body));
        b.advance(1).unwrap();
        let rows = b.take_solver_rows();
        assert!(rows[0].converged, "{solver}: {:?}", rows[0]);
        assert_eq!(rows[0].contacts, 5, "{solver}: {:?}", rows[0]);
        // The lower spheres' own contact separates (they are pushed apart).
        assert!(
            rows[0].sticking + rows[0].sliding >= 3,
            "{solver}: {:?}",
            rows[0]
        );
        println!(
            "{solver}{}: {} sweeps, {:?}",
            if reversed { " (reversed)" } else { "" },
            rows[0].sweeps,
            rows[0]
        );
        let p = &b.model().particles;
        let mut out = vec![(DVec3::ZERO, DVec3::ZERO); 3];
        for (id, &k) in order.iter().enumerate() {
            out[k] = (p.velocity[id], p.angular_velocity[id]);
        }
        out
    };
    let reference = run("nbgs", false);
    // The impact reaches both lower spheres.
    assert!(
        reference[0].0.length() > 0.01 && reference[1].0.length() > 0.01,
        "{reference:?}"
    );
    for (solver, reversed) in [
        ("nbgs", true),
        ("jacobi", false),
        ("colored", false),
        ("colored", true),
    ] {
        let other = run(solver, reversed);
        let worst = reference
            .iter()
            .zip(&other)
            .map(|(a, b)| (a.0 - b.0).length().max(r * (a.1 - b.1).length()))
            .fold(0f64, f64::max);
        println!("{solver} reversed={reversed}: worst velocity difference {worst:.2e} m/s");
        assert!(
            worst < 1e-12,
            "{solver} (reversed {reversed}) differs by {worst:e}"
        );
    }
}

/// A pile of 20 spheres dropped into a box (floor and four sides, μ = 0.5), 1000 steps
/// of 1 ms with each solver.
///
/// * Energy. With `E = ½vᵀMv − Σ m g·x`, `v* = v + hg` and the impulses `λ` (`J_k`
///   the one body `k` receives), a step changes the energy by exactly
///   `ΔE = −½h²Σm|g|² − hΣ_k J_k·g + ½λᵀ(u* + u')`, `u* = Wᵀv*, u'` the contacts'
///   free and final relative velocities. The first term is semi-implicit Euler's loss,
///   the second the work of the supporting impulses against gravity over the step; the
///   last is ≤ 0 for an exact solve: `λᵀu' ≤ 0` (complementarity, friction opposing
///   the sliding velocity) and `λᵀu* = λᵀu' − λᵀAλ`. Only where ε separates a
///   penetration `ξ < 0` (at most `½m(εξ/h)²` per contact). A residual `r` (the largest
///   change of a contact's velocity its local solve makes) leaves each impulse off its
///   solution by at most `r/A_nn ≤ r m` and each velocity by about `r` in each
///   direction, so the work `λᵀu'` may be off by `r m Σ_j|u'_j| + √3 r Σ_j|λ_j|`, with
///   `Σ_j|u'_j| ≤ 12 Σ_k(|v'_k| + R|Ω'_k|)` and `Σ_j|λ_j| ≤ 12(1 + μ)Σ_k|J_k|` (12
///   contacts at most per sphere).
///   The test checks `ΔE + ½h²Σm|g|² + hΣJ_k·g` against the sum of the two bounds at
///   every step.
/// * Penetration. Only the residual (`h r` per step) and the gap's curvature within a
///   step (`h²|u_t|²/(2R)`) can leave an overlap, and ε removes `ε` of it each step;
///   the bound checked is 1e-3 of the radius.
/// * Rest: the translational kinetic energy after the last step is below 1e-7 of
///   `M g H`. What stays is free rolling and spin about the vertical of spheres on the
///   floor: a point contact without rolling or torsional resistance (the paper's model
///   has neither) cannot stop them; their speed is ~1e-3 m/s here.
#[test]
fn a_pile_of_twenty_spheres_settles_without_gaining_energy() {
    let (r, h, mu, eps) = (0.01, 1e-3, 0.5, 0.2);
    let mut body = String::new();
    let mut rnd = uniform(11);
    for k in 0..20 {
        let (i, j, l) = (k % 2, (k / 2) % 2, k / 4);
        let x = DVec3::new(
            -0.011 + 0.022 * i as f64 + 0.002 * rnd(),
            -0.011 + 0.022 * j as f64 + 0.002 * rnd(),
            0.015 + 0.025 * l as f64,
        );
        body += &sphere(
            x,
            DVec3::new(0.1 * rnd(), 0.1 * rnd(), 0.0),
            DVec3::ZERO,
            r,
            "",
        );
    }
    body += &box_walls(DVec3::new(-0.025, -0.025, 0.0), 0.05);
    for solver in ["nbgs", "jacobi", "colored"] {
        let keys = format!(
            "solver = \"{solver}\"\nerror_reduction = {eps}\ntolerance = 1e-6\nmax_sweeps = 5000"
        );
        let mut b = backend(&scene(h, DVec3::new(0.0, 0.0, -G), &keys, mu, &body));
        let m = b.model().particles.mass[0];
        let e_scale = 20.0 * m * G * 0.12;
        let mut e0 = b.diagnostics().unwrap().e_total();
        let (mut worst_rise, mut worst_pen, mut sweeps, mut unconverged) = (0f64, 0f64, 0u64, 0);
        let mut pen_before = 0f64;
        for step in 1..=1000 {
            let v0: Vec<DVec3> = b.model().particles.velocity.clone();
            b.advance(1).unwrap();
            let row = b.take_solver_rows()[0];
            let e = b.diagnostics().unwrap().e_total();
            let p = &b.model().particles;
            let g = DVec3::new(0.0, 0.0, -G);
            let impulse: Vec<DVec3> = (0..20)
                .map(|k| p.mass[k] * (p.velocity[k] - v0[k] - h * g))
                .collect();
            let lifted: f64 = impulse.iter().map(|j| h * j.dot(g)).sum();
            let total: f64 = impulse.iter().map(|j| j.length()).sum();
            let speeds: f64 = (0..20)
                .map(|k| p.velocity[k].length() + r * p.angular_velocity[k].length())
                .sum();
            let tol_term = row.residual * 12.0 * (m * speeds + 3f64.sqrt() * (1.0 + mu) * total);
            let eps_term = row.contacts as f64 * 0.5 * m * (eps * pen_before / h).powi(2);
            let rise = e - e0 + 0.5 * 20.0 * m * G * G * h * h + lifted;
            // The identity behind the bound: rise = −e_dissipated exactly.
            assert!(
                (rise + row.e_dissipated).abs() < 1e-13 * e_scale,
                "{solver} step {step}: e_dissipated {} against the energy balance {rise:e}",
                row.e_dissipated
            );
            assert!(
                rise <= tol_term + eps_term + 1e-15 * e_scale,
                "{solver} step {step}: energy rose by {rise:e} > {tol_term:e} + {eps_term:e} ({row:?})"
            );
            worst_rise = worst_rise.max(rise);
            worst_pen = worst_pen.max(row.max_penetration);
            pen_before = row.max_penetration;
            sweeps += row.sweeps as u64;
            unconverged += u32::from(!row.converged);
            e0 = e;
        }
        let d = b.diagnostics().unwrap();
        let ke = d.e_kin;
        println!(
            "{solver}: largest energy rise {worst_rise:.2e} J (scale {e_scale:.2e}), largest penetration {worst_pen:.2e} m, {:.1} sweeps/step, {unconverged} unconverged steps, final translational KE {ke:.2e} J, rotational {:.2e} J",
            sweeps as f64 / 1000.0,
            d.e_rot
        );
        assert!(worst_pen < 1e-3 * r, "{solver}: penetration {worst_pen:e}");
        assert!(ke < 1e-7 * e_scale, "{solver}: still moving, KE = {ke:e}");
    }
}

/// Every `[contact]` key of the hard law is read, and what hard contacts cannot mean is
/// an error naming the key.
#[test]
fn hard_contact_keys_and_their_errors() {
    let ball = sphere(
        DVec3::new(0.0, 0.0, 0.1),
        DVec3::ZERO,
        DVec3::ZERO,
        0.01,
        "",
    );
    let keys = "friction_model = \"coulomb\"\nsolver = \"colored\"\nmax_sweeps = 17\ntolerance = 1e-5\nrelaxation = 0.7\nerror_reduction = 0.1\nwarm_start = false\nmargin = 0.002\non_nonconvergence = \"error\"";
    let s = parse_scene(&scene(1e-3, DVec3::ZERO, keys, 0.4, &ball)).unwrap();
    let Some(varidem::model::ContactLaw::Hard(h)) = s.model.contact.map(|c| c.law) else {
        panic!("not hard: {:?}", s.model.contact)
    };
    use varidem::model::{FrictionModel, HardSolver, OnNonconvergence};
    assert_eq!(h.friction_model, FrictionModel::Coulomb);
    assert_eq!(h.solver, HardSolver::Colored);
    assert_eq!((h.max_sweeps, h.tolerance, h.relaxation), (17, 1e-5, 0.7));
    assert_eq!(
        (h.error_reduction, h.warm_start, h.margin),
        (0.1, false, Some(0.002))
    );
    assert_eq!(h.on_nonconvergence, OnNonconvergence::Error);
    // The written scene reads back the same.
    let again = parse_scene(&varidem::io::scene_to_toml(&s)).unwrap();
    assert_eq!(again.model.contact, s.model.contact);

    let fails = |text: String, needle: &str| {
        let e = parse_scene(&text).expect_err(needle).to_string();
        assert!(e.contains(needle), "expected {needle:?} in: {e}");
    };
    let hard = |keys: &str, mu: f64, body: &str| scene(1e-3, DVec3::ZERO, keys, mu, body);
    fails(
        hard("solver = \"sor\"", 0.4, &ball),
        "contact.solver = \"sor\"",
    );
    fails(
        hard("friction_model = \"x\"", 0.4, &ball),
        "contact.friction_model",
    );
    fails(
        hard("relaxation = 1.5", 0.4, &ball),
        "contact.relaxation = 1.5",
    );
    fails(
        hard("error_reduction = 1.0", 0.4, &ball),
        "contact.error_reduction = 1",
    );
    fails(hard("tolerance = 0.0", 0.4, &ball), "contact.tolerance");
    fails(hard("max_sweeps = 0", 0.4, &ball), "contact.max_sweeps");
    fails(hard("margin = -1.0", 0.4, &ball), "contact.margin");
    fails(
        hard("on_nonconvergence = \"stop\"", 0.4, &ball),
        "contact.on_nonconvergence",
    );
    fails(hard("k_pp = 1.0", 0.4, &ball), "contact.k_pp");
    fails(
        hard("", 0.4, &ball).replace("restitution = 0.0", "restitution = 0.5"),
        "material[0].restitution = 0.5: hard contacts are purely inelastic",
    );
    fails(
        hard("", 0.4, &ball)
            + "[[interaction]]\nmaterials = [\"glass\", \"glass\"]\nrestitution = 0.3\n",
        "interaction[0].restitution = 0.3",
    );
    fails(
        hard("", 0.4, &ball)
            + "[near_field]\nkappa_attractive = 1e-6\nlambda_attractive = 1e-3\nkappa_repulsive = 1e-6\nlambda_repulsive = 1e-4\ncutoff = 0.03\n",
        "near_field",
    );
    fails(
        hard(
            "",
            0.4,
            &(ball.clone()
                + &sphere(
                    DVec3::new(0.02, 0.0, 0.1),
                    DVec3::ZERO,
                    DVec3::ZERO,
                    0.01,
                    "",
                )),
        ) + "[[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n",
        "bonds",
    );
    fails(
        hard("", 0.4, &ball).replace(
            "integrator = \"impulse-velocity\"",
            "integrator = \"variational\"",
        ),
        "contact.law = \"hard\": hard contacts need [simulation] integrator = \"impulse-velocity\"",
    );
    fails(
        hard("", 0.4, &ball).replace("law = \"hard\"", "law = \"hertz\""),
        "simulation.integrator = \"impulse-velocity\"",
    );
    fails(
        hard("solver = \"nbgs\"", 0.4, &ball)
            .replace("law = \"hard\"", "law = \"hertz\"")
            .replace(
                "integrator = \"impulse-velocity\"",
                "integrator = \"variational\"",
            ),
        "contact.solver: only the \"hard\" law uses it",
    );
}

/// `on_nonconvergence = "error"` stops the run at the first step whose solver stops at
/// `max_sweeps` above the tolerance, naming it; `solver.csv` keeps the rows of the
/// steps before it, and `final.csv` their state. With the default ("warn") the same
/// run completes and records the steps with `converged = 0`.
#[test]
fn nonconvergence_stops_the_run_naming_the_step() {
    let mut body = String::new();
    for k in 0..6 {
        let x = DVec3::new(0.0005 * (k % 2) as f64, 0.0, 0.0105 + 0.0201 * k as f64);
        body += &sphere(x, DVec3::ZERO, DVec3::ZERO, 0.01, "");
    }
    body += &wall(DVec3::ZERO, DVec3::Z);
    for (keys, fails) in [("on_nonconvergence = \"error\"", true), ("", false)] {
        let keys = format!("max_sweeps = 3\ntolerance = 1e-12\n{keys}");
        let text = scene(1e-3, DVec3::new(0.0, 0.0, -G), &keys, 0.4, &body)
            .replace("steps = 1000000", "steps = 100");
        let scene = parse_scene(&text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut b = CpuBackend::new(&scene).unwrap();
        let out = varidem::run::run_with(&scene, &mut b, dir.path(), &Default::default());
        let csv = std::fs::read_to_string(dir.path().join("solver.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some(varidem::backend::SolverRow::CSV_HEADER));
        let rows: Vec<Vec<f64>> = lines
            .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
            .collect();
        if fails {
            let e = out.expect_err("the run should stop").to_string();
            let first_bad = rows.len() as u64 + 1;
            println!("{e}");
            assert!(
                e.starts_with(&format!(
                    "step {first_bad}, the hard-contact solver did not converge"
                )),
                "{e}"
            );
            assert!(rows.iter().all(|r| r[3] == 1.0));
            assert!(dir.path().join("final.csv").is_file());
        } else {
            out.unwrap();
            assert_eq!(rows.len(), 100);
            let unconverged = rows.iter().filter(|r| r[3] == 0.0).count();
            println!("warn: {unconverged} of 100 steps unconverged");
            assert!(unconverged > 0 && rows.iter().all(|r| r[1] <= 3.0));
        }
    }
}

/// How many sweeps Gauss–Seidel needs as a pile grows (NOTES: the load must travel down
/// every contact chain). A body-centred stack of equal glass beads, touching exactly,
/// 4 × 4 beads per layer in a box, at rest under gravity: the first step (cold start)
/// must find the whole static load, to 1e-8 m/s (1e-5 of the free velocity gh).
///
/// * Frictionless (a convex problem with a unique solution): NBGS and colored converge
///   for 2 to 16 layers within 1000 sweeps.
/// * μ = 0.5: from 2 to 4 layers the count grows more than fivefold (measured: 82 to
///   921 for NBGS); at 8 layers NBGS does not reach 1e-9 m/s in 10⁶ sweeps (the
///   residual stalls near 3e-6 m/s), which docs/hard-contacts.md reports.
#[test]
fn sweeps_grow_with_pile_height() {
    let (r, h, side) = (1e-3f64, 1e-4, 4usize);
    let spacing = 2.1e-3f64;
    let dz = ((2.0 * r).powi(2) - 0.5 * spacing * spacing).sqrt();
    let stack = |layers: usize| {
        let mut body = String::new();
        for l in 0..layers {
            let shift = if l % 2 == 1 { 0.5 } else { 0.0 };
            for k in 0..side * side {
                let x = DVec3::new(
                    ((k % side) as f64 + 0.5 + shift) * spacing,
                    ((k / side) as f64 + 0.5 + shift) * spacing,
                    r + l as f64 * dz,
                );
                body += &sphere(x, DVec3::ZERO, DVec3::ZERO, r, "");
            }
        }
        body += &box_walls(DVec3::ZERO, (side as f64 + 0.5) * spacing);
        body
    };
    let sweeps = |layers: usize, solver: &str, mu: f64| {
        let keys =
            format!("solver = \"{solver}\"\ntolerance = 1e-8\nmax_sweeps = 100000\nmargin = 1e-5");
        let mut b = backend(&scene(
            h,
            DVec3::new(0.0, 0.0, -G),
            &keys,
            mu,
            &stack(layers),
        ));
        b.advance(1).unwrap();
        let s = b.take_solver_rows()[0];
        println!(
            "μ = {mu}, {layers} layers, {solver}: {} sweeps, {} contacts, converged {}",
            s.sweeps, s.contacts, s.converged
        );
        assert!(s.converged, "{solver}, {layers} layers, μ = {mu}: {s:?}");
        s.sweeps
    };
    for layers in [2, 4, 8, 16] {
        for solver in ["nbgs", "colored"] {
            assert!(sweeps(layers, solver, 0.0) < 1000);
        }
    }
    let (two, four) = (sweeps(2, "nbgs", 0.5), sweeps(4, "nbgs", 0.5));
    assert!(four > 5 * two, "frictional sweeps {two} → {four}");
}

/// `[drag]` with hard contacts acts in the free velocities (explicit, at the step's
/// start): `v' = v + h(g + c(v_f − v)/m)`, whose fixed point is the terminal velocity
/// `v_f + m g/c` exactly. A sphere falling through a fluid that moves sideways (the
/// floor far below) reaches it to 1e-12 m/s after 3000 steps (hc/m = 0.019: the error
/// shrinks by 0.981 a step, to 1e-25 of the start).
#[test]
fn drag_brings_a_falling_sphere_to_its_terminal_velocity() {
    let (h, r, c) = (1e-3, 0.01, 0.2);
    let vf = DVec3::new(0.01, 0.0, 0.0);
    let body = sphere(
        DVec3::new(0.0, 0.0, 1.0),
        DVec3::ZERO,
        DVec3::ZERO,
        r,
        "hold_rotation = true",
    ) + &wall(DVec3::new(0.0, 0.0, -100.0), DVec3::Z)
        + &format!(
            "[drag]\ncoefficient = {c}\nfluid_velocity = [{}, 0.0, 0.0]\n",
            vf.x
        );
    let mut b = backend(&scene(h, DVec3::new(0.0, 0.0, -G), "", 0.5, &body));
    let m = b.model().particles.mass[0];
    let terminal = vf + m * DVec3::new(0.0, 0.0, -G) / c;
    b.advance(3000).unwrap();
    let v = b.model().particles.velocity[0];
    println!("v = {v:?}, terminal {terminal:?}");
    assert!((v - terminal).length() < 1e-12, "{v:?} vs {terminal:?}");
    assert!(b.take_solver_rows().iter().all(|r| r.contacts == 0));
}
