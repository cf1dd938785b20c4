//! Campello's generalised trapezoidal rule (§4, Algorithm 1), solved by fixed-point
//! iteration, for any system that can evaluate its forces at an iterate
//! ([`IterateForces`]; the CPU backend is one).
//!
//! From `(x₀, v₀, α₀, Ω₀)` and the forces `F₀, M₀`:
//!
//! 1. guess `v¹ = v₀ + h F₀/m`, `Ω¹ = Ω₀ + h M₀/J` (forward Euler);
//! 2. for iterate `K`: `x^K = x₀ + h[φv^K + (1−φ)v₀]`, `Δα^K = h[φΩ^K + (1−φ)Ω₀]`
//!    (eq. 45), `α^K = α₀ ⊕ Δα^K` (eq. 47); forces `F^K, M^K` at that state, with
//!    `Δx = x^K − x₀`, `Δα^K` as the contact increments and `v^K` in the damping
//!    (eq. 46); `v^{K+1} = v₀ + (h/m)[φF^K + (1−φ)F₀]`, likewise `Ω^{K+1}` (eq. 42);
//! 3. stop when the normalised changes of eqs. (48)–(49) of x, v, Ω and Δα are all
//!    below the tolerance; the step ends at `(x^K, α^K)`, where the forces were
//!    evaluated (so forces, history and positions agree), with `v^{K+1}, Ω^{K+1}`.
//!
//! The iteration is Jacobi (every particle from iterate K), not the Gauss–Seidel sweep
//! of Remark 5: it converges a little slower but is parallel and gives the same bits
//! for any thread count.

use glam::DVec3;

use super::{Body, Kinematics, Trapezoidal};
use crate::error::{Error, Fault, Result};
use crate::math::rodrigues;

/// A system whose forces the fixed-point iteration evaluates at each iterate.
pub trait IterateForces {
    /// Puts the system in the state `iterate` (one [`Kinematics`] per body), reached
    /// from the step's start by the increments `(Δx, Δα)` of `increments`, and
    /// evaluates its forces there. An error fails the step.
    fn evaluate_at(&mut self, iterate: &[Kinematics], increments: &[(DVec3, DVec3)]) -> Result<()>;
    /// Force and spatial moment on body `i` from the last [`IterateForces::evaluate_at`].
    fn force(&self, i: usize) -> (DVec3, DVec3);
}

/// Eqs. (48)–(49): `Σ|a^{K+1} − a^K| / Σ|a^{K+1} − a(t)|`, or `/ Σ|a^{K+1}|` when the
/// step changed `a` by (almost) nothing.
fn normalised_change(
    n: usize,
    new: &dyn Fn(usize) -> DVec3,
    old: &dyn Fn(usize) -> DVec3,
    at_t: &dyn Fn(usize) -> DVec3,
) -> f64 {
    let (mut num, mut den, mut norm) = (0.0, 0.0, 0.0);
    for i in 0..n {
        num += (new(i) - old(i)).length();
        den += (new(i) - at_t(i)).length();
        norm += new(i).length();
    }
    if num == 0.0 {
        0.0
    } else if den > 1e-12 * norm {
        num / den
    } else if norm > 0.0 {
        num / norm
    } else {
        0.0
    }
}

/// One step `step` of size `h` of the trapezoidal rule with `params`, from the state
/// `start` and its forces `f0` (force, moment per body) of `bodies`. Returns the
/// end-of-step velocities `(v^{K+1}, Ω^{K+1})`; the system is left at the converged
/// iterate `(x^K, α^K)` with its forces. `iterations` counts the fixed-point
/// iterations taken. On an error (a half turn, a failed evaluation, no convergence in
/// `params.max_iterations`) the caller restores `start`.
#[expect(
    clippy::too_many_arguments,
    reason = "the step's parameters, its starting state and the system, as Algorithm 1 lists them"
)]
pub fn trapezoidal_step(
    params: &Trapezoidal,
    h: f64,
    step: u64,
    bodies: &[Body],
    start: &[Kinematics],
    f0: &[(DVec3, DVec3)],
    system: &mut impl IterateForces,
    iterations: &mut u64,
) -> Result<Vec<(DVec3, DVec3)>> {
    let phi = params.phi;
    let n = start.len();
    let kick = |b: &Body, s: &Kinematics, f: DVec3, m: DVec3| -> (DVec3, DVec3) {
        let v = if b.held {
            DVec3::ZERO
        } else {
            s.v + (h / b.mass) * f
        };
        let w = if b.fixed_rotation {
            DVec3::ZERO
        } else {
            s.omega + (h / b.inertia) * m
        };
        (v, w)
    };
    // Iterate K's velocities.
    let mut vel: Vec<(DVec3, DVec3)> = (0..n)
        .map(|i| kick(&bodies[i], &start[i], f0[i].0, f0[i].1))
        .collect();
    let mut inc = vec![(DVec3::ZERO, DVec3::ZERO); n];
    let mut iterate = vec![Kinematics::default(); n];
    let tol = params.tolerance;
    for iteration in 1..=params.max_iterations {
        *iterations += 1;
        // State of iterate K.
        for i in 0..n {
            let s = &start[i];
            let (v, w) = vel[i];
            let dx = h * (phi * v + (1.0 - phi) * s.v);
            let da = h * (phi * w + (1.0 - phi) * s.omega);
            let alpha = if bodies[i].fixed_rotation {
                s.alpha
            } else {
                rodrigues::try_compose(s.alpha, da)
                    .ok_or_else(|| Error::fault(step, Fault::HalfTurn { particle: i }))?
            };
            iterate[i] = Kinematics {
                x: s.x + dx,
                v,
                alpha,
                omega: w,
            };
            inc[i] = (dx, da);
        }
        system.evaluate_at(&iterate, &inc)?;
        // Iterate K + 1.
        let next: Vec<(DVec3, DVec3)> = (0..n)
            .map(|i| {
                let (fk, mk) = system.force(i);
                let fa = phi * fk + (1.0 - phi) * f0[i].0;
                let ma = phi * mk + (1.0 - phi) * f0[i].1;
                kick(&bodies[i], &start[i], fa, ma)
            })
            .collect();
        let dx_next = |i: usize| h * (phi * next[i].0 + (1.0 - phi) * start[i].v);
        let da_next = |i: usize| h * (phi * next[i].1 + (1.0 - phi) * start[i].omega);
        let errors = [
            normalised_change(
                n,
                &|i| start[i].x + dx_next(i),
                &|i| start[i].x + inc[i].0,
                &|i| start[i].x,
            ),
            normalised_change(n, &|i| next[i].0, &|i| vel[i].0, &|i| start[i].v),
            normalised_change(n, &|i| next[i].1, &|i| vel[i].1, &|i| start[i].omega),
            normalised_change(n, &da_next, &|i| inc[i].1, &|_| DVec3::ZERO),
        ];
        vel = next;
        let worst = errors.iter().copied().fold(0.0, f64::max);
        if worst < tol {
            return Ok(vel);
        }
        if iteration == params.max_iterations {
            return Err(Error::NotConverged {
                step,
                iterations: iteration,
                error: worst,
                tolerance: tol,
            });
        }
    }
    // Reached only with `params.max_iterations == 0`: no iterate, nothing converged.
    Err(Error::NotConverged {
        step,
        iterations: 0,
        error: f64::INFINITY,
        tolerance: tol,
    })
}
