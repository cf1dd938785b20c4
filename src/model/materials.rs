//! Materials of granular particles and walls (Campello 2015 §3.4–3.5).

/// Elastic and frictional properties of a material (`[[material]]` in a scene).
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// Name used by particles and walls (`material = "glass"`).
    pub name: String,
    /// Young's modulus `E` (Pa).
    pub young: f64,
    /// Poisson's ratio `ν`, in (−1, 0.5].
    pub poisson: f64,
    /// Shear modulus `G` (Pa); defaults to the isotropic `E/(2(1+ν))`.
    pub shear_modulus: f64,
    /// Density `ρ` (kg/m³): particles of this material get `m = (4/3)πρr³` and
    /// `J = (2/5) m r²` unless they give their own.
    pub density: f64,
    /// Coefficient of restitution `e` in [0, 1] of a normal collision.
    pub restitution: f64,
    /// Static friction coefficient `μ_s ≥ 0` (eq. 32).
    pub friction_static: f64,
    /// Dynamic friction coefficient `μ_d`, `0 ≤ μ_d ≤ μ_s` (eq. 33).
    pub friction_dynamic: f64,
    /// Rolling friction coefficient `μ_r ≥ 0` (dimensionless, `[[material]]
    /// rolling_friction`): the largest rolling torque of a contact is `μ_r R* f_n`
    /// ([`crate::physics::rolling`]); 0 rolls freely.
    pub rolling_friction: f64,
    /// Damping ratio `η_r ≥ 0` of the EPSD rolling dashpot (`[[material]]
    /// rolling_damping`, a fraction of the critical `2√(I_r k_r)`); unused by CDT.
    pub rolling_damping: f64,
    /// Surface energy `γ ≥ 0` (J/m², `[[material]] surface_energy`) of JKR adhesion
    /// (`[contact] cohesion = "jkr"`): the work of adhesion of two such surfaces is
    /// `2γ`; a pair of materials takes `√(γ_a γ_b)` ([`crate::physics::jkr`]).
    pub surface_energy: f64,
}

/// Default [`Material::rolling_damping`].
pub const DEFAULT_ROLLING_DAMPING: f64 = 0.3;

impl Material {
    /// Mass of a sphere of radius `r` of this material.
    pub fn sphere_mass(&self, r: f64) -> f64 {
        4.0 / 3.0 * std::f64::consts::PI * self.density * r * r * r
    }
}

/// Pair values that replace the mixing rule for one pair of materials
/// (`[[interaction]]` in a scene), as the per-pair tables of LIGGGHTS do: e.g. grains
/// with μ = 0.1 among themselves but 0.25 against the container (Campello §5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Interaction {
    /// The two material indices (either order; equal for a material with itself).
    pub materials: [u32; 2],
    /// Restitution of the pair, if overridden.
    pub restitution: Option<f64>,
    /// Static friction of the pair, if overridden.
    pub friction_static: Option<f64>,
    /// Dynamic friction of the pair, if overridden.
    pub friction_dynamic: Option<f64>,
    /// Rolling friction of the pair, if overridden.
    pub rolling_friction: Option<f64>,
}
