//! Hard contacts with clumps (issue 25): a body whose contact couples normal and
//! tangential directions, where maximum dissipation and Coulomb differ, and the
//! Painlevé rod of the paper's §4.2 built as a clump.
//!
//! Run: `cargo test --release --test hard_clumps`.

mod common;

use glam::{DMat3, DVec3};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;
use varidem::physics::hard::{
    contact_frame, delassus, solve_contact, solve_contact_coulomb, ContactCase,
};

fn m3(m: DMat3) -> [[f64; 3]; 3] {
    m.transpose().to_cols_array_2d()
}

/// The body row (`x, v, α, Ω`) of clump 0, the scene's only body.
fn body(b: &mut CpuBackend) -> (DVec3, DVec3, DVec3, DVec3) {
    let rows = b.particles().unwrap();
    let k = rows.len() - 1;
    (
        rows.position[k],
        rows.velocity[k],
        rows.rotation[k],
        rows.angular_velocity[k],
    )
}

/// An eccentric dimer (spheres of 10 and 4 mm, glass) tilted so that only its small
/// sphere meets the floor, striking it obliquely while spinning. Its contact block has
/// `A_nt, A_no ≠ 0`, so maximum dissipation and Coulomb give different impulses. After
/// the impact step, the body's change of momentum and of spatial angular momentum is
/// each model's single-contact solution `solve_contact` / `solve_contact_coulomb` for
/// the block and free velocity computed here from the body's state (tolerance 1e-12
/// relative: one contact, solved exactly in two sweeps; only rounding differs), and the
/// two models' impulses differ by more than 1 %.
#[test]
fn an_eccentric_dimer_separates_max_dissipation_from_coulomb() {
    let (h, mu) = (1e-3, 0.5);
    let theta: f64 = 0.9;
    let alpha = 2.0 * (0.5 * theta).tan() * DVec3::new(0.0, 1.0, 0.0);
    let v0 = DVec3::new(1.6, 0.3, -1.0);
    let w0 = DVec3::new(4.0, -9.0, 2.0);
    let mut impulses = Vec::new();
    for model in ["max-dissipation", "coulomb"] {
        // Body x turned by θ about +y points down: the small sphere (at +x) is lowest.
        let text = format!(
            "[simulation]\ndt = {h:e}\nsteps = 10\nintegrator = \"impulse-velocity\"\n\
             gravity = [0.0, 0.0, -9.81]\n\
             [contact]\nlaw = \"hard\"\nfriction_model = \"{model}\"\ntolerance = 1e-14\n\
             [[material]]\nname = \"glass\"\nyoung = 63e9\npoisson = 0.2\ndensity = 2500.0\n\
             restitution = 0.0\nfriction_static = {mu}\n\
             [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
             [[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
             spheres = [{{ position = [-0.008, 0.0, 0.0], radius = 0.01 }}, \
                        {{ position = [0.012, 0.0, 0.0], radius = 0.004 }}]\n\
             [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.1]\nrotation = {:?}\n\
             velocity = {:?}\nangular_velocity = {:?}\n",
            alpha.to_array(),
            v0.to_array(),
            w0.to_array()
        );
        let mut scene = parse_scene(&text).unwrap();
        // Lower the body until its small sphere is 0.4 mm above the floor.
        let t = scene.model.clump_types[0].clone();
        let c = &mut scene.model.clumps[0];
        let small = c.sphere_centres(&t).nth(1).unwrap();
        let large = c.sphere_centres(&t).next().unwrap();
        c.position.z -= small.z - 0.004 - 4e-4;
        let shift = small.z - 0.004 - 4e-4;
        assert!(
            large.z - shift - 0.01 > 0.005,
            "the large sphere stays clear"
        );
        let mut b = CpuBackend::new(&scene).unwrap();
        let (x, v, a, w) = body(&mut b);
        let inv = t.inertia.spatial_inverse(a);
        let pi = t.inertia.spatial(a) * w;
        // The free velocities: gravity only.
        let vs = v + h * DVec3::new(0.0, 0.0, -9.81);
        let ws = inv * pi;
        let xs = x + varidem::math::rodrigues::rotate(a, t.spheres[1].offset);
        let n = DVec3::Z;
        let r = (xs - x) - t.spheres[1].radius * n;
        let gap = xs.z - t.spheres[1].radius;
        let frame = contact_frame(n.to_array());
        let [fn_, ft, fo] = frame.map(DVec3::from_array);
        let u = vs + ws.cross(r);
        let bv = [-u.dot(fn_) - gap / h, -u.dot(ft), -u.dot(fo)];
        let blk = delassus(&[(1.0 / t.mass, m3(inv), r.to_array())], frame);
        assert!(
            blk[0][1].abs() + blk[0][2].abs() > 0.1 * blk[0][0],
            "coupled block {blk:?}"
        );
        let x_expected = if model == "coulomb" {
            solve_contact_coulomb(blk, bv, mu)
        } else {
            solve_contact(blk, bv, mu)
        };
        let (_, case) = varidem::physics::hard::solve_contact_case(blk, bv, mu);
        assert_eq!(case, ContactCase::Sliding, "the impact slides");
        let p_expected = x_expected[0] * fn_ + x_expected[1] * ft + x_expected[2] * fo;

        b.advance(1).unwrap();
        let row = b.take_solver_rows()[0];
        assert_eq!((row.contacts, row.sliding), (1, 1), "{row:?}");
        let (_, v1, a1, w1) = body(&mut b);
        let p = t.mass * (v1 - vs);
        // The row's Ω is I(α_{k+1})⁻¹π': the state's π' is recovered at the new attitude.
        let dl = t.inertia.spatial(a1) * w1 - pi;
        let err = (p - p_expected).length() / p_expected.length();
        let err_l = (dl - r.cross(p_expected)).length() / r.cross(p_expected).length();
        println!("{model}: impulse {:?} (single-contact {:?}), relative differences {err:.1e} / {err_l:.1e}", p.to_array(), p_expected.to_array());
        assert!(err < 1e-12 && err_l < 1e-10, "{model}: {err:e} {err_l:e}");
        impulses.push(p);
    }
    let diff = (impulses[0] - impulses[1]).length() / impulses[0].length();
    println!("max dissipation and Coulomb differ by {diff:.3} of the impulse");
    assert!(diff > 0.01);
}

/// The Painlevé rod of §4.2 as a clump: a rod of mass 1.7 kg and length 0.8 m (two
/// end spheres of radius 1e-7 m, mass and inertia given: `m l²/12` across, `m l²/24`
/// about its axis), its lower end on the floor at angle θ, sliding at v₀ = 2.3 m/s
/// with no normal velocity (b_n = 0, no gravity, ε = 0 and the tip 1e-9 m into the
/// floor so that the gap term is exactly 0). For μ ≥ μ*(θ) = (cos θ + 1/(3 cos θ))/sin θ
/// the step gives the impulsive jam `Λ₀ = (m v₀/8)(3 sin 2θ, 5 + 3 cos 2θ)` (normal,
/// tangential) that stops the tip; for μ below μ* no impulse at all. Both friction
/// models. Tolerance 1e-6 relative: the end sphere's radius moves the contact point
/// off the rod's axis by 1e-7 m (1.3e-7 of l/2); everything else is rounding.
#[test]
fn the_painleve_rod_jams_above_mu_star_and_slides_below() {
    let (m, l, v0, rs) = common::ROD;
    let theta = common::rod_angle();
    let mu_star = common::rod_mu_star(theta);
    for model in ["max-dissipation", "coulomb"] {
        for (mu, jams) in [(1.01 * mu_star, true), (0.99 * mu_star, false)] {
            let text = common::painleve_rod(model, mu, "nbgs");
            let scene = parse_scene(&text).unwrap();
            let mut b = CpuBackend::new(&scene).unwrap();
            let (_, v, a0, _) = body(&mut b);
            b.advance(1).unwrap();
            let row = b.take_solver_rows()[0];
            assert_eq!(row.contacts, 1, "{row:?}");
            let (_, v1, _, w1) = body(&mut b);
            let p = m * (v1 - v);
            // The constraint holds at the step's start attitude (its lever).
            let tip_lever = varidem::math::rodrigues::rotate(a0, DVec3::new(-0.5 * l, 0.0, -rs));
            let tip = v1 + w1.cross(tip_lever);
            if jams {
                let k = m * v0 / 8.0;
                let lambda = DVec3::new(
                    k * (5.0 + 3.0 * (2.0 * theta).cos()),
                    0.0,
                    k * 3.0 * (2.0 * theta).sin(),
                );
                let err = (p - lambda).length() / lambda.length();
                println!("{model}, μ = 1.01μ*: impulse {:?}, Λ₀ {:?}, relative difference {err:.1e}, tip speed after {:.1e} m/s", p.to_array(), lambda.to_array(), tip.length());
                assert!(err < 1e-6, "{model}: {err:e}");
                assert!(tip.length() < 1e-6 * v0);
            } else {
                println!("{model}, μ = 0.99μ*: impulse {:?}", p.to_array());
                assert_eq!(p, DVec3::ZERO, "{model}: no impulse below μ*");
                assert_eq!(row.separating, 1);
            }
        }
    }
}

/// A tumbling eccentric dimer in free flight (no gravity, no contact): the state's
/// spatial angular momentum π is constant to the bit over 2000 steps (the step adds
/// `hτ + Σ r × p`, both zero here) and the linear momentum too, while Ω = I(α)⁻¹π
/// turns with the body (the gyroscopic effect of a full tensor).
#[test]
fn a_free_clump_keeps_its_angular_momentum_exactly() {
    let text = "[simulation]\ndt = 1e-3\nsteps = 10\nintegrator = \"impulse-velocity\"\n\
        [contact]\nlaw = \"hard\"\n\
        [[material]]\nname = \"glass\"\nyoung = 63e9\npoisson = 0.2\ndensity = 2500.0\n\
        restitution = 0.0\nfriction_static = 0.5\n\
        [[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
        spheres = [{ position = [-0.008, 0.0, 0.0], radius = 0.01 }, \
                   { position = [0.012, 0.0, 0.0], radius = 0.004 }]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.0]\n\
        velocity = [0.1, 0.0, 0.0]\nangular_velocity = [3.0, 20.0, -5.0]\n";
    let scene = parse_scene(text).unwrap();
    let mut b = CpuBackend::new(&scene).unwrap();
    let d0 = b.diagnostics().unwrap();
    let (_, _, _, w0) = body(&mut b);
    b.advance(2000).unwrap();
    let d = b.diagnostics().unwrap();
    let (_, _, _, w) = body(&mut b);
    println!(
        "L: {:?} → {:?}; Ω: {:?} → {:?}",
        d0.angular_momentum, d.angular_momentum, w0, w
    );
    assert_eq!(d.momentum, d0.momentum);
    // L = x × mv + π: π is exact; x × mv changes by rounding of x only.
    assert!(
        (d.angular_momentum - d0.angular_momentum).length()
            < 1e-15 * d0.angular_momentum.length().max(1e-12) + 1e-18
    );
    assert!((w - w0).length() > 0.1 * w0.length(), "Ω precesses");
}

/// `solver.csv`'s `max_penetration` measures a clump's sphere, not its body: a dimer at
/// rest (no gravity) with its small sphere 1 mm into the floor is pushed out at
/// `ε|ξ|/h`, so after one step the overlap is `(1 − ε)·1 mm` (to 1e-9 m: the body turns
/// a little, which moves the contact point by O(h²Ω²)).
#[test]
fn a_clump_sphere_penetration_is_reported_and_reduced() {
    let text = "[simulation]\ndt = 1e-3\nsteps = 10\nintegrator = \"impulse-velocity\"\n\
        [contact]\nlaw = \"hard\"\nerror_reduction = 0.25\ntolerance = 1e-14\n\
        max_initial_overlap = 0.5\n\
        [[material]]\nname = \"glass\"\nyoung = 63e9\npoisson = 0.2\ndensity = 2500.0\n\
        restitution = 0.0\nfriction_static = 0.5\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
        [[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
        spheres = [{ position = [0.0, 0.0, 0.02], radius = 0.01 }, \
                   { position = [0.0, 0.0, 0.0], radius = 0.004 }]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.05]\n";
    // Parsed clear of the floor (a scene may not start 1 mm in), then placed.
    let mut scene = parse_scene(text).unwrap();
    // Place the small sphere's centre 3 mm above the floor: 1 mm into it.
    let t = scene.model.clump_types[0].clone();
    let small = scene.model.clumps[0].sphere_centres(&t).nth(1).unwrap();
    scene.model.clumps[0].position.z += 0.003 - small.z;
    let mut b = CpuBackend::new(&scene).unwrap();
    b.advance(1).unwrap();
    let row = b.take_solver_rows()[0];
    println!("{row:?}");
    assert_eq!(row.contacts, 1);
    assert!((row.max_penetration - 0.75e-3).abs() < 1e-9, "{row:?}");
}
