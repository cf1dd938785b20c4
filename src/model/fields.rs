//! Parameters of the granular body and pair fields: drag with the Magnus force, and the
//! near-field Mie interaction. Their laws are in [`crate::physics::granular`].

use glam::DVec3;

/// Parameters of the near-field (generalised Mie) force of eq. (17); the force and its
/// potential are `NearField::pair` in [`crate::physics::granular`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NearField {
    /// `κ₁`: attractive strength.
    pub kappa_attractive: f64,
    /// `λ₁`: attractive exponent.
    pub lambda_attractive: f64,
    /// `κ₂`: repulsive strength.
    pub kappa_repulsive: f64,
    /// `λ₂`: repulsive exponent.
    pub lambda_repulsive: f64,
    /// Centre distance beyond which the force is zero (m).
    pub cutoff: f64,
}

/// Parameters of the drag of eq. (15) and the Magnus force of Remark 4; the force is
/// `Drag::force` in [`crate::physics::granular`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Drag {
    /// `c_fluid` (N s/m).
    pub coefficient: f64,
    /// `v_fluid` (m/s).
    pub fluid_velocity: DVec3,
    /// Magnus constant `S` (N s²/m... per rad): `f = S Ω × v`; 0 for none.
    pub magnus: f64,
}
