//! Clump kinematics and force reduction (issue 24): a constituent sphere's centre and
//! velocity from its body's pose and motion, and a body's force and moment about its
//! centre of mass from its spheres'. Both backends couple clumps to their spheres with
//! these functions: the spheres carry the contacts, the body the dynamics.

use glam::DVec3;

use crate::math::rodrigues;

/// The centre of a sphere at body-frame offset `offset` (from the centre of mass) of a
/// body at `x` with attitude `alpha`: `x + R(α) offset`.
#[inline]
pub fn member_position(x: DVec3, alpha: DVec3, offset: DVec3) -> DVec3 {
    x + rodrigues::rotate(alpha, offset)
}

/// The velocity of the body's material point at lever arm `lever` (its position less
/// the centre of mass) for a body moving at `v` and turning at the spatial angular
/// velocity `omega`: `v + Ω × lever`.
#[inline]
pub fn member_velocity(v: DVec3, omega: DVec3, lever: DVec3) -> DVec3 {
    v + omega.cross(lever)
}

/// The force and the spatial moment about the centre of mass of the loads on a body's
/// spheres, each `(lever, force, moment)` with the force acting at the sphere's centre
/// (`lever` from the centre of mass) and `moment` the sphere's own moment:
/// `(Σ F_s, Σ lever_s × F_s + M_s)`, summed in the order given (both backends give the
/// spheres in the type's order, so the sums are the same bits).
#[inline]
pub fn gather(loads: impl IntoIterator<Item = (DVec3, DVec3, DVec3)>) -> (DVec3, DVec3) {
    loads
        .into_iter()
        .fold((DVec3::ZERO, DVec3::ZERO), |(f, m), (lever, fs, ms)| {
            (f + fs, m + (lever.cross(fs) + ms))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    fn v3(seed: &mut u64) -> DVec3 {
        DVec3::new(lcg(seed), lcg(seed), lcg(seed))
    }

    /// The member velocity is the time derivative of the member position under the
    /// body's motion (x + t v, α ⊕ tΩ): central differences agree to O(h²).
    #[test]
    fn member_velocity_is_the_rate_of_the_member_position() {
        let mut seed = 3;
        for _ in 0..200 {
            let (x, alpha, offset) = (v3(&mut seed), v3(&mut seed), v3(&mut seed));
            let (v, omega) = (v3(&mut seed), 2.0 * v3(&mut seed));
            let h = 1e-5;
            let at =
                |t: f64| member_position(x + t * v, rodrigues::compose(alpha, t * omega), offset);
            let rate = (at(h) - at(-h)) / (2.0 * h);
            let lever = rodrigues::rotate(alpha, offset);
            let want = member_velocity(v, omega, lever);
            assert!(
                (rate - want).length() < 1e-8 * (1.0 + want.length()),
                "{rate} {want}"
            );
        }
    }

    /// Virtual work: for any rigid virtual motion (δx, δθ), the spheres' loads do the
    /// work of the gathered force and moment, Σ F_s·(δx + δθ × r_s) + M_s·δθ =
    /// F·δx + M·δθ (to rounding).
    #[test]
    fn gathered_loads_do_the_same_virtual_work() {
        let mut seed = 11;
        for _ in 0..200 {
            let loads: Vec<(DVec3, DVec3, DVec3)> = (0..5)
                .map(|_| (v3(&mut seed), v3(&mut seed), v3(&mut seed)))
                .collect();
            let (dx, dtheta) = (v3(&mut seed), v3(&mut seed));
            let spheres: f64 = loads
                .iter()
                .map(|&(r, f, m)| f.dot(dx + dtheta.cross(r)) + m.dot(dtheta))
                .sum();
            let (f, m) = gather(loads.iter().copied());
            let body = f.dot(dx) + m.dot(dtheta);
            assert!((spheres - body).abs() < 1e-13, "{spheres} {body}");
        }
    }

    /// A couple (equal and opposite forces at two spheres) gathers to no force and a
    /// pure moment r × F; one sphere's load at the centre of mass is passed through.
    #[test]
    fn a_couple_gathers_to_a_pure_moment() {
        let f = DVec3::new(0.0, 2.0, 0.0);
        let r = DVec3::new(1.5, 0.0, 0.0);
        let (force, moment) = gather([(r, f, DVec3::ZERO), (-r, -f, DVec3::ZERO)]);
        assert_eq!(force, DVec3::ZERO);
        assert_eq!(moment, DVec3::new(0.0, 0.0, 6.0));
        let m = DVec3::new(0.1, 0.2, 0.3);
        assert_eq!(gather([(DVec3::ZERO, f, m)]), (f, m));
    }
}
