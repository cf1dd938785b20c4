//! Rolling resistance of the Hertz law: a torque against the relative rolling of the
//! two bodies, standing in for the shape and surface roughness that spheres lack.
//!
//! Both models of `[[material]] rolling_model` (Ai, Chen, Rotter & Ooi, "Assessment of
//! rolling resistance models in discrete element simulations", Powder Technology 206
//! (2011) 269–282) cap the torque at `μ_r R* f_n` (eq. 5 there), with `R*` the
//! effective radius (`r_a r_b/(r_a + r_b)`, or `r` against a plane or mesh) and `f_n`
//! the Hertz normal force (elastic plus damping, clamped at 0, as the friction cap
//! uses). The relative rolling rotation of the step is the part of `Δα_a − Δα_b` in the
//! contact plane (the increments of the two bodies' rotations, spatial; the part along
//! `n` is twisting, which neither model resists):
//! `Δθ = (Δα_a − Δα_b) − [(Δα_a − Δα_b)·n] n`.
//!
//! * **CDT** (model A, constant directional torque; LIGGGHTS `cdt`):
//!   `M_a = −μ_r R* f_n Δθ/|Δθ|`, zero when `Δθ = 0`. Simple, but the torque does not
//!   vanish as the rolling stops: a body at rest on a slope flips it every step (the
//!   jitter Ai et al. describe).
//! * **EPSD** (model C, elastic–plastic spring–dashpot; LIGGGHTS `epsd2`): a rolling
//!   spring `M_k` of stiffness `k_r = 2.25 k_n μ_r² R*²` (Ai et al. eq. 13, after
//!   Iwashita & Oda) with `k_n = (4/3) E* √(R*δ)` the secant Hertz stiffness
//!   (`f_el/δ`, as LIGGGHTS' `epsd2` takes its `kn`), carried into the current contact
//!   plane like the tangential spring ([`carry_spring`]), then
//!   `M_k ← M_k − k_r Δθ`; while `|M_k| ≤ μ_r R* f_n` a dashpot
//!   `M_d = −η_r 2√(I_r k_r) Δθ/h` adds (eq. 16, `η_r` the fraction of critical
//!   damping, `I_r = [1/(I_a + m_a r_a²) + 1/(I_b + m_b r_b²)]⁻¹` with the moments of
//!   inertia about the contact point, `I = (2/5) m r²` for a sphere: eq. 17), else the
//!   spring is returned to the cap along its direction and no dashpot acts (eq. 15,
//!   full mobilisation). The torque on `a` is `M_k + M_d`.
//!
//! Both are applied as equal and opposite moments (`b` takes exactly `−M_a`) and no
//! force, so the pair conserves linear and angular momentum to rounding (tested). The
//! spring is kept per contact in `a`'s orientation, with the tangential spring
//! (`crate::cpu::contact_history`, GPU history slots, mesh handovers, checkpoints).

use glam::DVec3;

use super::granular::carry_spring;
use crate::model::RollingModel;

/// What [`rolling_torque`] reads of one contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RollingInputs {
    /// Model (CDT or EPSD).
    pub model: RollingModel,
    /// Rolling friction coefficient `μ_r` of the pair.
    pub mu_r: f64,
    /// EPSD damping ratio `η_r` of the pair.
    pub eta_r: f64,
    /// Effective radius `R*` (the lever arm of the cap `μ_r R* f_n`).
    pub r_star: f64,
    /// `E*` of the pair (EPSD's `k_n`).
    pub e_star: f64,
    /// Contact radius `a` ([`crate::physics::granular::ContactResult::contact_radius`]:
    /// `√(R*δ)` under Hertz, JKR's `a(δ)` with cohesion).
    pub contact_radius: f64,
    /// Normal force `f_n ≥ 0` of the Hertz law.
    pub f_n: f64,
    /// Unit normal from `a` to `b`.
    pub n: DVec3,
    /// `Δα_a − Δα_b`, the relative rotation of the step.
    pub dalpha: DVec3,
    /// Rolling moment of inertia `I_r` (EPSD's dashpot).
    pub inertia: f64,
    /// Time step `h` (EPSD's dashpot).
    pub h: f64,
    /// The stored rolling spring `M_k` (EPSD; zero for a new contact).
    pub spring: DVec3,
}

/// Torque on `a` and the new rolling spring (zero under CDT).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RollingResult {
    /// Rolling torque on `a` (N m); `b` takes exactly `−torque`.
    pub torque: DVec3,
    /// Updated rolling spring `M_k` (N m), in the current contact plane.
    pub spring: DVec3,
}

/// The rolling moment of inertia `I_r` of two spheres (module doc, Ai et al. eq. 17):
/// each sphere's `(7/5) m r²` about its contact point, combined in series; a plane or
/// mesh (`m_b = ∞`) leaves `a`'s alone.
#[inline]
pub fn rolling_inertia(m_a: f64, r_a: f64, m_b: f64, r_b: f64) -> f64 {
    (7.0 / 5.0) / (1.0 / (m_a * r_a * r_a) + 1.0 / (m_b * r_b * r_b))
}

/// The rolling moment of inertia of a sphere of mass `m` and radius `r` against a
/// plane or mesh: its own `(7/5) m r²` about the contact point ([`rolling_inertia`]
/// with `m_b = ∞`).
#[inline]
pub fn wall_rolling_inertia(m: f64, r: f64) -> f64 {
    (7.0 / 5.0) * (m * r * r)
}

/// The rolling torque of one contact (module doc). Branches only on the model and on
/// whether the spring holds, like its WGSL twin.
#[inline]
pub fn rolling_torque(c: &RollingInputs) -> RollingResult {
    let n = c.n;
    let dtheta = c.dalpha - c.dalpha.dot(n) * n;
    let cap = c.mu_r * c.r_star * c.f_n;
    match c.model {
        RollingModel::Cdt => {
            let len = dtheta.length();
            let torque = if len > 0.0 {
                -(cap / len) * dtheta
            } else {
                DVec3::ZERO
            };
            RollingResult {
                torque,
                spring: DVec3::ZERO,
            }
        }
        RollingModel::Epsd => {
            let k_n = (4.0 / 3.0) * c.e_star * c.contact_radius;
            let k_r = 2.25 * k_n * c.mu_r * c.mu_r * c.r_star * c.r_star;
            let trial = carry_spring(c.spring, n) - k_r * dtheta;
            let len = trial.length();
            if len <= cap {
                let damping = c.eta_r * 2.0 * (c.inertia * k_r).sqrt();
                RollingResult {
                    torque: trial - (damping / c.h) * dtheta,
                    spring: trial,
                }
            } else {
                let spring = (cap / len) * trial;
                RollingResult {
                    torque: spring,
                    spring,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(model: RollingModel, dalpha: DVec3, spring: DVec3) -> RollingInputs {
        RollingInputs {
            model,
            mu_r: 0.1,
            eta_r: 0.3,
            r_star: 1e-3,
            e_star: 1e8,
            contact_radius: (1e-6f64 * 1e-3).sqrt(),
            f_n: 2.0,
            n: DVec3::Z,
            dalpha,
            inertia: 1e-9,
            h: 1e-6,
            spring,
        }
    }

    /// CDT: the cap `μ_r R* f_n` against the rolling, nothing for twisting or rest.
    #[test]
    fn cdt_is_the_cap_against_rolling() {
        let r = rolling_torque(&inputs(
            RollingModel::Cdt,
            DVec3::new(3e-4, 0.0, 5.0),
            DVec3::ZERO,
        ));
        assert_eq!(r.torque, DVec3::new(-0.1 * 1e-3 * 2.0, 0.0, 0.0));
        let twist = rolling_torque(&inputs(RollingModel::Cdt, DVec3::Z, DVec3::ZERO));
        assert_eq!(twist.torque, DVec3::ZERO);
    }

    /// EPSD: below the cap the spring is `−k_r Δθ` plus its dashpot; a rotation far
    /// past the cap leaves the spring at the cap, without dashpot.
    #[test]
    fn epsd_spring_and_cap() {
        let c = inputs(RollingModel::Epsd, DVec3::new(1e-9, 0.0, 0.0), DVec3::ZERO);
        let k_n = (4.0 / 3.0) * c.e_star * c.contact_radius;
        let k_r = 2.25 * k_n * 0.01 * 1e-6;
        let r = rolling_torque(&c);
        assert!((r.spring.x + k_r * 1e-9).abs() < 1e-12 * k_r * 1e-9);
        let d = 0.3 * 2.0 * (1e-9 * k_r).sqrt() / 1e-6 * 1e-9;
        assert!((r.torque.x - (r.spring.x - d)).abs() < 1e-12 * d);
        let far = rolling_torque(&inputs(
            RollingModel::Epsd,
            DVec3::new(0.0, 10.0, 0.0),
            DVec3::ZERO,
        ));
        let cap = 0.1 * 1e-3 * 2.0;
        assert!((far.torque.length() - cap).abs() < 1e-12 * cap);
        assert!(far.torque.y < 0.0 && far.torque == far.spring);
    }
}
