//! Parameters of the hard-contact law (`[contact] law = "hard"`, Preclik, Eibl & Rüde):
//! which friction model the single-contact problem uses, which global solver couples the
//! contacts, and when it stops.

/// The friction model of the single-contact problem (`[contact] friction_model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrictionModel {
    /// The principle of maximum dissipation (the paper's §3.2, Fig. 5):
    /// [`crate::physics::hard::solve_contact`].
    #[default]
    MaxDissipation,
    /// Coulomb's law in De Saxcé–Feng form:
    /// [`crate::physics::hard::solve_contact_coulomb`]. For sphere contacts it gives the
    /// same impulse as maximum dissipation.
    Coulomb,
}

impl FrictionModel {
    /// Every model with its scene name.
    pub const NAMED: [(&'static str, FrictionModel); 2] = [
        ("max-dissipation", Self::MaxDissipation),
        ("coulomb", Self::Coulomb),
    ];

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Self::MaxDissipation => "max-dissipation",
            Self::Coulomb => "coulomb",
        }
    }
}

/// The global solver over the contacts of one step (`[contact] solver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HardSolver {
    /// Nonlinear block Gauss–Seidel in the fixed contact order, the bodies' velocities
    /// updated after every contact (the paper's reference solver).
    #[default]
    Nbgs,
    /// Damped block Jacobi: every contact from the velocities at the start of the sweep,
    /// the impulse moved by `relaxation` of the way to its new value.
    Jacobi,
    /// Gauss–Seidel colour by colour over a deterministic greedy colouring of the
    /// contact graph: the contacts of one colour share no body and run in parallel.
    Colored,
}

impl HardSolver {
    /// Every solver with its scene name.
    pub const NAMED: [(&'static str, HardSolver); 3] = [
        ("nbgs", Self::Nbgs),
        ("jacobi", Self::Jacobi),
        ("colored", Self::Colored),
    ];

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Nbgs => "nbgs",
            Self::Jacobi => "jacobi",
            Self::Colored => "colored",
        }
    }
}

/// What a step whose solver did not reach `tolerance` in `max_sweeps` sweeps does
/// (`[contact] on_nonconvergence`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnNonconvergence {
    /// Keep the last sweep's impulses and go on; `solver.csv` records the step
    /// (`converged = 0`).
    #[default]
    Warn,
    /// Stop the run with an error naming the step.
    Error,
}

/// The hard-contact law's parameters (`[contact]` with `law = "hard"`). Friction
/// coefficients come from the materials (`friction_static`, pair rule and
/// `[[interaction]]` overrides); restitution is 0 (purely inelastic impacts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardContact {
    /// Friction model of the single-contact problem.
    pub friction_model: FrictionModel,
    /// Global solver.
    pub solver: HardSolver,
    /// Most sweeps per step.
    pub max_sweeps: u32,
    /// The solver stops when no contact's update changed its relative velocity by more
    /// than this in a sweep (m/s).
    pub tolerance: f64,
    /// Damping `ω ∈ (0, 1]` of the Jacobi solver (unused by the others).
    pub relaxation: f64,
    /// Error reduction `ε ∈ [0, 1)` of §3.1: a penetration `ξ < 0` is removed at the
    /// speed `ε|ξ|/h`.
    pub error_reduction: f64,
    /// Start each step's solver from the previous step's impulses of the same contacts.
    pub warm_start: bool,
    /// Speculative distance (m): pairs whose gap is below it enter the solver, with
    /// their gap in `b_n`. `None`: each step and pair, the distance the two can close
    /// in one step at their free velocities, `h(|v_i| + |Ω_i|r_i + |v_j| + |Ω_j|r_j)`
    /// (the neighbour list's skin grows to hold the largest). Impulses can make bodies
    /// faster than their free velocities (a push-out at `ε|ξ|/h`, momentum passed down
    /// a chain), so a pair may still overlap within a step; the error reduction then
    /// removes it.
    pub margin: Option<f64>,
    /// What a step that does not converge does.
    pub on_nonconvergence: OnNonconvergence,
}

impl HardContact {
    /// Checks every value against the ranges the scene format allows (for parameters
    /// that do not come from a scene file, such as a checkpoint's): the first one out
    /// of range, named by its key.
    pub fn check(&self) -> Result<(), String> {
        let bad =
            |key: &str, v: f64, range: &str| Err(format!("contact.{key} = {v}: must be {range}"));
        if !(1..=1_000_000).contains(&self.max_sweeps) {
            return bad("max_sweeps", self.max_sweeps.into(), "in 1..=1000000");
        }
        if !(self.tolerance > 0.0 && self.tolerance.is_finite()) {
            return bad("tolerance", self.tolerance, "> 0 and finite");
        }
        if !(self.relaxation > 0.0 && self.relaxation <= 1.0) {
            return bad("relaxation", self.relaxation, "in (0, 1]");
        }
        if !(0.0..1.0).contains(&self.error_reduction) {
            return bad("error_reduction", self.error_reduction, "in [0, 1)");
        }
        if let Some(m) = self.margin {
            if !(m >= 0.0 && m.is_finite()) {
                return bad("margin", m, ">= 0 and finite");
            }
        }
        Ok(())
    }
}

impl Default for HardContact {
    fn default() -> Self {
        Self {
            friction_model: FrictionModel::MaxDissipation,
            solver: HardSolver::Nbgs,
            max_sweeps: 200,
            tolerance: 1e-6,
            relaxation: 0.5,
            error_reduction: 0.2,
            warm_start: true,
            margin: None,
            on_nonconvergence: OnNonconvergence::Warn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a checkpoint could carry out of range is refused by key.
    #[test]
    fn out_of_range_values_are_refused_by_key() {
        assert_eq!(HardContact::default().check(), Ok(()));
        let cases = [
            (
                HardContact {
                    max_sweeps: 0,
                    ..Default::default()
                },
                "max_sweeps",
            ),
            (
                HardContact {
                    tolerance: f64::NAN,
                    ..Default::default()
                },
                "tolerance",
            ),
            (
                HardContact {
                    relaxation: 1.5,
                    ..Default::default()
                },
                "relaxation",
            ),
            (
                HardContact {
                    error_reduction: 1.0,
                    ..Default::default()
                },
                "error_reduction",
            ),
            (
                HardContact {
                    margin: Some(f64::INFINITY),
                    ..Default::default()
                },
                "margin",
            ),
        ];
        for (h, key) in cases {
            let e = h.check().expect_err(key);
            assert!(e.starts_with(&format!("contact.{key} = ")), "{e}");
        }
    }
}
