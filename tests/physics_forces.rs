//! Every force and moment is the negative gradient of its energy, checked by central
//! differences: translations `x ↦ x ± εe_k`, spatial rotations `α ↦ α ⊕ (±εe_k)`
//! (moment `RM`) and body rotations `α ↦ (±εe_k) ⊕ α` (moment `M = Rᵀ RM`).
//!
//! ε = 1e-5 and the central difference error is O(ε²·U''') ≈ 1e-10 relative to forces
//! of order one; rounding adds ~1e-16/ε ≈ 1e-11. Tolerance: 1e-7 relative to the
//! largest component (plus 1e-9 absolute), far below any sign or factor error.

use glam::DVec3;
use proptest::prelude::*;
use varidem::math::rodrigues::{compose, from_rotation_vector, rotate_inverse};
use varidem::model::{Bond, BondStiffness, Particle, Particles, ShearForm, Wall};
use varidem::physics::{binder, contact, field};

const EPS: f64 = 1e-5;

fn close(num: DVec3, ana: DVec3) -> bool {
    let scale = num.abs().max_element().max(ana.abs().max_element());
    (num - ana).abs().max_element() <= 1e-7 * scale + 1e-9
}

/// Central-difference gradient of `f` with respect to translating a point.
fn grad_x(f: impl Fn(DVec3) -> f64, x: DVec3) -> DVec3 {
    grad_x_eps(f, x, EPS)
}

/// As [`grad_x`] with step `eps`. Contacts use `eps = 1e-7`: their length scale is the
/// overlap (~0.01), so the truncation error `ε² U'''/6` needs a smaller step.
fn grad_x_eps(f: impl Fn(DVec3) -> f64, x: DVec3, eps: f64) -> DVec3 {
    let mut g = DVec3::ZERO;
    for k in 0..3 {
        let e = DVec3::AXES[k] * eps;
        g[k] = (f(x + e) - f(x - e)) / (2.0 * eps);
    }
    g
}

/// Central-difference gradient under a spatial rotation increment `α ⊕ εe_k`.
fn grad_spatial(f: impl Fn(DVec3) -> f64, a: DVec3) -> DVec3 {
    let mut g = DVec3::ZERO;
    for k in 0..3 {
        let e = DVec3::AXES[k] * EPS;
        g[k] = (f(compose(a, e)) - f(compose(a, -e))) / (2.0 * EPS);
    }
    g
}

/// Central-difference gradient under a body rotation increment `εe_k ⊕ α`.
fn grad_body(f: impl Fn(DVec3) -> f64, a: DVec3) -> DVec3 {
    let mut g = DVec3::ZERO;
    for k in 0..3 {
        let e = DVec3::AXES[k] * EPS;
        g[k] = (f(compose(e, a)) - f(compose(-e, a))) / (2.0 * EPS);
    }
    g
}

fn v3(r: f64) -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-r..r).prop_map(DVec3::from_array)
}

fn rot() -> impl Strategy<Value = DVec3> {
    v3(1.6).prop_map(|t| from_rotation_vector(t).unwrap())
}

/// A bond formed at a random rest configuration, then evaluated at a perturbed one.
#[derive(Debug, Clone)]
struct BondCase {
    bond: Bond,
    xi: DVec3,
    xj: DVec3,
    ai: DVec3,
    aj: DVec3,
}

fn bond_case() -> impl Strategy<Value = BondCase> {
    (
        v3(1.0),
        v3(1.0),
        rot(),
        rot(),
        v3(0.3),
        v3(0.3),
        rot(),
        rot(),
    )
        .prop_filter_map("separated", |(x0i, d0, a0i, a0j, dxi, dxj, dai, daj)| {
            let x0j = x0i + d0 + d0.signum() * 0.5;
            let mut p = Particles::default();
            let mut pi = Particle::at_rest(x0i, 1.0, 0.1);
            pi.rotation = a0i;
            let mut pj = Particle::at_rest(x0j, 1.0, 0.1);
            pj.rotation = a0j;
            p.push(pi);
            p.push(pj);
            let bond = Bond::from_current(
                &p,
                0,
                1,
                BondStiffness {
                    bend: 3.0,
                    axial: 50.0,
                    shear: 40.0,
                },
            )
            .ok()?;
            // Perturb the state: strains up to ~0.5 rad and 30 % stretch.
            let ai = compose(a0i, 0.3 * dai);
            let aj = compose(a0j, 0.3 * daj);
            Some(BondCase {
                bond,
                xi: x0i + dxi,
                xj: x0j + dxj,
                ai,
                aj,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn bend_moment_is_gradient(c in bond_case()) {
        let b = &c.bond;
        let u = |ai: DVec3, aj: DVec3| binder::bend(b.k_bend, ai, aj, b.rest_rotation).unwrap().0;
        let (_, m_i) = binder::bend(b.k_bend, c.ai, c.aj, b.rest_rotation).unwrap();
        let m_j = -m_i;
        prop_assert!(close(-grad_spatial(|a| u(a, c.aj), c.ai), m_i));
        prop_assert!(close(-grad_spatial(|a| u(c.ai, a), c.aj), m_j));
        // Body-frame moments M = Rᵀ RM from α ↦ εe ⊕ α.
        prop_assert!(close(-grad_body(|a| u(a, c.aj), c.ai), rotate_inverse(c.ai, m_i)));
        prop_assert!(close(-grad_body(|a| u(c.ai, a), c.aj), rotate_inverse(c.aj, m_j)));
    }

    #[test]
    fn axial_force_is_gradient(c in bond_case()) {
        let b = &c.bond;
        let (_, f_i) = binder::axial(b.k_axial, b.rest_length, c.xi, c.xj);
        prop_assert!(close(-grad_x(|x| binder::axial(b.k_axial, b.rest_length, x, c.xj).0, c.xi), f_i));
        prop_assert!(close(-grad_x(|x| binder::axial(b.k_axial, b.rest_length, c.xi, x).0, c.xj), -f_i));
    }

    #[test]
    fn shear_objective_is_gradient(c in bond_case()) {
        let b = &c.bond;
        let u = |xi, xj, ai, aj| binder::shear_objective(b.k_shear, xi, xj, ai, aj, b.rest_dir_i, b.rest_dir_j).0;
        let (_, f_i, m_i, m_j) = binder::shear_objective(b.k_shear, c.xi, c.xj, c.ai, c.aj, b.rest_dir_i, b.rest_dir_j);
        prop_assert!(close(-grad_x(|x| u(x, c.xj, c.ai, c.aj), c.xi), f_i));
        prop_assert!(close(-grad_x(|x| u(c.xi, x, c.ai, c.aj), c.xj), -f_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, a, c.aj), c.ai), m_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, c.ai, a), c.aj), m_j));
        prop_assert!(close(-grad_body(|a| u(c.xi, c.xj, a, c.aj), c.ai), rotate_inverse(c.ai, m_i)));
        // Objective: total torque about the origin vanishes (angular momentum conserved).
        let torque = c.xi.cross(f_i) + c.xj.cross(-f_i) + m_i + m_j;
        prop_assert!(torque.length() <= 1e-12 * (1.0 + f_i.length() + m_i.length() + m_j.length()) * (1.0 + c.xi.length() + c.xj.length()));
    }

    #[test]
    fn shear_printed_is_gradient(c in bond_case()) {
        let b = &c.bond;
        let u = |xi, xj, ai, aj| binder::shear_printed(b.k_shear, xi, xj, ai, aj, b.rest_dir_i).0;
        let (_, f_i, m_i, m_j) = binder::shear_printed(b.k_shear, c.xi, c.xj, c.ai, c.aj, b.rest_dir_i);
        prop_assert!(close(-grad_x(|x| u(x, c.xj, c.ai, c.aj), c.xi), f_i));
        prop_assert!(close(-grad_x(|x| u(c.xi, x, c.ai, c.aj), c.xj), -f_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, a, c.aj), c.ai), m_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, c.ai, a), c.aj), m_j));
    }

    /// The combined bond kernel sums the three laws consistently.
    #[test]
    fn bond_kernel_is_gradient_of_total(c in bond_case(), printed in any::<bool>()) {
        let b = &c.bond;
        let form = if printed { ShearForm::Printed } else { ShearForm::Objective };
        let u = |xi, xj, ai, aj| {
            let r = binder::bond_forces(b, xi, xj, ai, aj, form).unwrap();
            r.e_bend + r.e_axial + r.e_shear
        };
        let r = binder::bond_forces(b, c.xi, c.xj, c.ai, c.aj, form).unwrap();
        prop_assert!(close(-grad_x(|x| u(x, c.xj, c.ai, c.aj), c.xi), r.force_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, a, c.aj), c.ai), r.moment_i));
        prop_assert!(close(-grad_spatial(|a| u(c.xi, c.xj, c.ai, a), c.aj), r.moment_j));
    }

    #[test]
    fn contact_pair_is_gradient(xi in v3(0.1), xj in v3(0.1), ri in 0.05f64..0.2, rj in 0.05f64..0.2) {
        let k = 2100.0;
        prop_assume!(xi.distance(xj) < 0.95 * (ri + rj) && xi.distance(xj) > 0.02);
        let u = |a: DVec3, b: DVec3| contact::binder_pair(k, a, b, ri, rj).map_or(0.0, |r| r.0);
        let (_, f_i) = contact::binder_pair(k, xi, xj, ri, rj).unwrap();
        prop_assert!(close(-grad_x_eps(|x| u(x, xj), xi, 1e-7), f_i));
        // Bitwise antisymmetry: the two sides of a pair cancel exactly.
        let (_, f_j) = contact::binder_pair(k, xj, xi, rj, ri).unwrap();
        prop_assert_eq!(f_j, -f_i);
    }

    /// Near-field Mie force (Campello eq. 17) is minus the gradient of its potential
    /// with respect to the particle's position, for exponents on both sides of the
    /// λ = 1 (logarithmic) branch; the potential vanishes at the cutoff.
    #[test]
    fn near_field_is_gradient(
        xi in v3(0.1),
        xj in v3(0.1),
        l1 in prop_oneof![Just(1.0), 1.5f64..4.0],
        l2 in prop_oneof![Just(1.0), 4.0f64..8.0],
    ) {
        let nf = varidem::physics::granular::NearField {
            kappa_attractive: 2e-3,
            lambda_attractive: l1,
            kappa_repulsive: 1e-6,
            lambda_repulsive: l2,
            cutoff: 0.3,
        };
        prop_assume!(xi.distance(xj) > 0.05 && xi.distance(xj) < 0.29);
        let u = |x: DVec3| nf.pair(x, xj).map_or(0.0, |r| r.0);
        let (_, f_i) = nf.pair(xi, xj).unwrap();
        // A step of 1e-6: the exponents up to 8 at d ≥ 0.05 make the truncation error
        // of 1e-5 (ε² U'''/6) reach 1e-6 relative. The two terms can nearly cancel
        // (|f| ≪ either term), so the bound, 1e-7, is relative to the larger term's
        // size: the difference quotient's rounding follows the terms, not their sum.
        let g = grad_x_eps(u, xi, 1e-6);
        let d = xi.distance(xj);
        let term = (2e-3 * d.powf(-l1)).max(1e-6 * d.powf(-l2));
        prop_assert!(
            (-g - f_i).abs().max_element() <= 1e-7 * term,
            "{:?} vs {f_i:?} (term {term:e})", -g
        );
        // Attraction pulls i towards j when the repulsion is switched off.
        let attract = varidem::physics::granular::NearField { kappa_repulsive: 0.0, ..nf };
        prop_assert!(attract.pair(xi, xj).unwrap().1.dot(xj - xi) > 0.0);
        // The pair's two sides cancel bitwise, and the potential goes to 0 at the cutoff:
        // 3e-10 inside it, U is the force times that distance (to 10 %, plus rounding).
        prop_assert_eq!(nf.pair(xj, xi).unwrap().1, -f_i);
        let edge = xj + (xi - xj).normalize() * (0.3 - 3e-10);
        let (u_edge, f_edge) = nf.pair(edge, xj).unwrap();
        prop_assert!(
            u_edge.abs() <= 1.1 * f_edge.length() * 3e-10 + 1e-15,
            "U = {u_edge:e} at 3e-10 from the cutoff, |f| = {:e}", f_edge.length()
        );
    }

    #[test]
    fn wall_is_gradient(x in v3(0.1), n in v3(1.0), r in 0.12f64..0.3) {
        prop_assume!(n.length() > 0.1);
        let wall = Wall { point: DVec3::ZERO, normal: n.normalize(), stiffness: 2100.0, material: None, motion: Default::default() };
        prop_assume!(wall.distance(x) < 0.95 * r);
        let u = |y: DVec3| contact::binder_wall(&wall, y, r).map_or(0.0, |q| q.0);
        let (_, f) = contact::binder_wall(&wall, x, r).unwrap();
        prop_assert!(close(-grad_x_eps(u, x, 1e-7), f));
    }

    #[test]
    fn pendulum_is_gradient(x in v3(1.0), a in rot(), g in v3(10.0), rho in v3(1.0)) {
        let u = |y: DVec3, al: DVec3| field::pendulum(2.0, g, y, al, rho).0;
        let (_, f, m) = field::pendulum(2.0, g, x, a, rho);
        prop_assert!(close(-grad_x(|y| u(y, a), x), f));
        prop_assert!(close(-grad_spatial(|al| u(x, al), a), m));
        prop_assert!(close(-grad_body(|al| u(x, al), a), rotate_inverse(a, m)));
        let (_, fg) = field::gravity(2.0, g, x);
        prop_assert!(close(-grad_x(|y| field::gravity(2.0, g, y).0, x), fg));
    }
}

/// The contact energy at touching is zero and its force continuous (C¹ at contact onset).
#[test]
fn contact_vanishes_smoothly_at_touch() {
    let (ri, rj) = (0.1, 0.15);
    let x = DVec3::new(ri + rj - 1e-12, 0.0, 0.0);
    let (e, f) = contact::binder_pair(2100.0, DVec3::ZERO, x, ri, rj).unwrap();
    assert!(e < 1e-25 && f.length() < 1e-12);
    assert!(contact::binder_pair(2100.0, DVec3::ZERO, x * 1.001, ri, rj).is_none());
}

/// An unstrained bond (at its rest state, whatever the rest orientation) has no energy,
/// force or moment.
#[test]
fn rest_state_is_unstrained() {
    let mut p = Particles::default();
    let mut a = Particle::at_rest(DVec3::new(0.1, 0.2, 0.3), 1.0, 0.1);
    a.rotation = from_rotation_vector(DVec3::new(0.4, -1.2, 2.0)).unwrap();
    let mut b = Particle::at_rest(DVec3::new(0.5, -0.1, 0.4), 1.0, 0.1);
    b.rotation = from_rotation_vector(DVec3::new(-2.5, 0.3, 0.1)).unwrap();
    p.push(a);
    p.push(b);
    let bond = Bond::from_current(
        &p,
        0,
        1,
        BondStiffness {
            bend: 10.0,
            axial: 200.0,
            shear: 200.0,
        },
    )
    .unwrap();
    for form in [ShearForm::Objective, ShearForm::Printed] {
        let r = binder::bond_forces(
            &bond,
            p.position[0],
            p.position[1],
            p.rotation[0],
            p.rotation[1],
            form,
        )
        .unwrap();
        let e = r.e_bend + r.e_axial + r.e_shear;
        if form == ShearForm::Objective {
            assert!(e < 1e-26, "{form:?}: {e}");
            assert!(
                r.force_i.length() < 1e-12
                    && r.moment_i.length() < 1e-12
                    && r.moment_j.length() < 1e-12
            );
        } else {
            // The printed form is only unstrained at rest when R₀ = I (it is not objective).
            assert!(r.e_bend < 1e-26 && r.e_axial < 1e-26);
        }
    }
}
