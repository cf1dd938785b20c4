//! Which integrator a scene names (`[simulation] integrator`) and the parameters of the
//! implicit one: scene data, below the integrators that implement them
//! ([`crate::integrators`]).

use serde::{Deserialize, Serialize};

/// Which discrete Lagrangian map advances the system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IntegratorKind {
    /// Map (25): second order, velocity-Verlet structure, `Δα = hΩ + h²/(2J) RM`.
    #[default]
    #[serde(rename = "variational")]
    Variational,
    /// Map (23): second order with the exact rotation update
    /// `Δα = 2h/(1+√(1−h²‖w‖²)) w`, `w = Ω + h/(2J) RM`; requires `h²‖w‖² < 1`.
    #[serde(rename = "variational-exact")]
    VariationalExact,
    /// Map (27): first-order symplectic Euler, `v += h F/m`, `x += h v`, `Δα = hΩ_{k+1}`.
    #[serde(rename = "symplectic-euler")]
    SymplecticEuler,
    /// Campello 2015 §4: the implicit generalised trapezoidal rule (eqs. 42, 45, 47) with
    /// weight `φ` (`[simulation] phi`, default ½), solved per step by fixed-point
    /// iteration to the tolerance of eqs. (48)–(49) (`tolerance`, default 10⁻⁴). CPU
    /// reference backend only.
    #[serde(rename = "campello-trapezoidal")]
    CampelloTrapezoidal,
    /// Preclik, Eibl & Rüde §3.1, for hard contacts (`[contact] law = "hard"`):
    /// semi-implicit Euler at the velocity level, `v' = v + h M⁻¹(f + Wλ)` with the
    /// contact impulses `λ` from the global solver, then `x' = x + h v'` and
    /// `α' = α ⊕ hΩ'` (the exact Rodrigues composition, so no normalisation). CPU
    /// reference backend only, for now.
    #[serde(rename = "impulse-velocity")]
    ImpulseVelocity,
}

impl IntegratorKind {
    /// The explicit integrators (every backend runs them), in documentation order.
    pub const ALL: [IntegratorKind; 3] = [
        Self::Variational,
        Self::VariationalExact,
        Self::SymplecticEuler,
    ];

    /// Every integrator a scene may name, the implicit CPU-only one last.
    pub const NAMED: [IntegratorKind; 5] = [
        Self::Variational,
        Self::VariationalExact,
        Self::SymplecticEuler,
        Self::CampelloTrapezoidal,
        Self::ImpulseVelocity,
    ];

    /// The name used in scene files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Variational => "variational",
            Self::VariationalExact => "variational-exact",
            Self::SymplecticEuler => "symplectic-euler",
            Self::CampelloTrapezoidal => "campello-trapezoidal",
            Self::ImpulseVelocity => "impulse-velocity",
        }
    }

    /// Parses a name as written in scene files.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMED.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for IntegratorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parameters of [`IntegratorKind::CampelloTrapezoidal`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trapezoidal {
    /// Weight `φ ∈ [0, 1]` of the end-of-step values (eq. 41): 0 forward Euler, ½ the
    /// trapezoidal rule, 1 backward Euler.
    pub phi: f64,
    /// Convergence tolerance of eqs. (48)–(49) on x, v, Ω and Δα.
    pub tolerance: f64,
    /// Most fixed-point iterations per step before the step fails.
    pub max_iterations: u32,
}

impl Default for Trapezoidal {
    /// φ = ½ and TOL = 10⁻⁴, Campello's values (§5); 100 iterations.
    fn default() -> Self {
        Self {
            phi: 0.5,
            tolerance: 1e-4,
            max_iterations: 100,
        }
    }
}
