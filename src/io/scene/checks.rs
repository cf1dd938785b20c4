//! Value checks: each names the key, the value and the allowed range. Also the checks
//! that look values up (material names) or combine them (sphere sizes, the particle
//! count).

use glam::DVec3;

use super::schema::Vec3;
use crate::error::{Error, Result};
use crate::model::Material;

pub(super) fn scene_error(msg: impl Into<String>) -> Error {
    Error::Scene(msg.into())
}

pub(super) fn fmt_vec(v: Vec3) -> String {
    format!("[{}, {}, {}]", v[0], v[1], v[2])
}

/// A user's string as an error echoes it: quoted, at most [`MAX_ECHO`] characters, the
/// rest elided with its length, so a pasted megabyte does not flood the terminal
/// (issue 49).
pub(super) fn shown(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_ECHO {
        return format!("{s:?}");
    }
    let head: String = s.chars().take(MAX_ECHO).collect();
    format!("{head:?}… ({n} characters)")
}

/// The most characters of a value an error echoes.
pub(super) const MAX_ECHO: usize = 200;

pub(super) fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

pub(super) fn positive(key: &str, v: f64) -> Result<f64> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(scene_error(format!("{key} = {v}: must be > 0 and finite")))
    }
}

pub(super) fn non_negative(key: &str, v: f64) -> Result<f64> {
    if v >= 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(scene_error(format!("{key} = {v}: must be >= 0 and finite")))
    }
}

/// A random amplitude `a` (uniform samples in `[−a, a]`): non-negative, and small enough
/// that the width `2a` of the interval is finite (the sampler needs it).
pub(super) fn amplitude(key: &str, v: f64) -> Result<f64> {
    let a = non_negative(key, v)?;
    if (2.0 * a).is_finite() {
        Ok(a)
    } else {
        Err(scene_error(format!(
            "{key} = {v:e}: too large (the interval [−a, a] must have a finite width)"
        )))
    }
}

pub(super) fn finite_vec(key: &str, v: Vec3) -> Result<DVec3> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(DVec3::from_array(v))
    } else {
        Err(scene_error(format!(
            "{key} = {}: every component must be finite",
            fmt_vec(v)
        )))
    }
}

/// A direction: finite and not zero. One whose length overflows (`[1e300, 1e300, 0]`)
/// is a direction all the same, returned divided by its largest component so that its
/// length is finite (issue 49: it was called zero).
pub(super) fn nonzero_vec(key: &str, v: Vec3, why: &str) -> Result<DVec3> {
    let d = finite_vec(key, v)?;
    let len = d.length();
    if len > 0.0 && len.is_finite() {
        Ok(d)
    } else if len.is_infinite() {
        Ok(d / d.abs().max_element())
    } else {
        Err(scene_error(format!(
            "{key} = {}: must be a non-zero vector ({why})",
            fmt_vec(v)
        )))
    }
}

pub(super) fn positive_int(key: &str, v: i64) -> Result<u64> {
    u64::try_from(v)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| scene_error(format!("{key} = {v}: must be >= 1")))
}

/// An integer in `1..=max`, as a `u32`.
pub(super) fn int_in(key: &str, v: i64, max: u32) -> Result<u32> {
    u32::try_from(v)
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| scene_error(format!("{key} = {v}: must be in 1..={max}")))
}

pub(super) fn seed(key: &str, v: i64) -> Result<u64> {
    u64::try_from(v).map_err(|_| scene_error(format!("{key} = {v}: must be >= 0")))
}

/// `n` scaled to unit length, leaving vectors that are already unit (to rounding) as
/// they are, so that normalising twice gives the same bits as once.
pub(super) fn unit(n: DVec3) -> DVec3 {
    let len = n.length();
    if (len - 1.0).abs() <= 4.0 * f64::EPSILON {
        n
    } else {
        n / len
    }
}

/// The index of material `name` given at `key`.
pub(super) fn material_index(key: &str, name: &str, materials: &[Material]) -> Result<u32> {
    materials
        .iter()
        .position(|m| m.name == name)
        .map(|i| i as u32)
        .ok_or_else(|| {
            let known: Vec<String> = materials.iter().map(|m| shown(&m.name)).collect();
            let name = shown(name);
            scene_error(if known.is_empty() {
                format!("{key} = {name}: unknown material (the scene has no [[material]])")
            } else {
                format!(
                    "{key} = {name}: unknown material (defined: {})",
                    known.join(", ")
                )
            })
        })
}

/// The material of a particle or generator: the named one, else the only one when the
/// Hertz law needs one, else 0 (unused).
pub(super) fn material_of(
    who: &str,
    name: Option<&str>,
    materials: &[Material],
    hertz: bool,
) -> Result<u32> {
    match name {
        Some(n) => material_index(&format!("{who}.material"), n, materials),
        None if hertz && materials.len() == 1 => Ok(0),
        None if hertz => Err(scene_error(format!(
            "{who}.material: missing; the \"hertz\" and \"hard\" laws need a material for every particle ({})",
            if materials.is_empty() {
                "add a [[material]]".to_owned()
            } else {
                format!("{} are defined", plural(materials.len(), "material"))
            }
        ))),
        None => Ok(0),
    }
}

/// Checks that spheres of radius `radius (1 ± jitter)` and density `density` get a
/// mass `4/3 π ρ r³` and a default inertia `2/5 m r²` that are > 0 and finite. Each
/// input can be valid alone and the products still underflow to 0 or overflow (a
/// radius of 1e-320 m, a density and radius far from SI scales): the run would then
/// divide by a zero mass and fail at its first step with a message about something
/// else.
pub(super) fn sphere_sizes(who: &str, radius: f64, jitter: f64, density: f64) -> Result<()> {
    for r in [radius * (1.0 - jitter), radius * (1.0 + jitter)] {
        let m = 4.0 / 3.0 * std::f64::consts::PI * density * r * r * r;
        let j = 0.4 * m * r * r;
        if !(m > 0.0 && m.is_finite() && j > 0.0 && j.is_finite()) {
            return Err(scene_error(format!(
                "{who}.radius = {radius:e}: a sphere of radius {r:e} m and density {density:e} kg/m³ has mass {m:e} kg and inertia {j:e} kg m², which must be > 0 and finite (are the units SI?)"
            )));
        }
    }
    Ok(())
}

/// Mass from `mass` or from the material's density and the radius.
pub(super) fn mass_of(
    who: &str,
    mass: Option<f64>,
    radius: f64,
    material: Option<&Material>,
) -> Result<f64> {
    match (mass, material) {
        (Some(m), _) => positive(&format!("{who}.mass"), m),
        (None, Some(mat)) => {
            sphere_sizes(who, radius, 0.0, mat.density)?;
            Ok(mat.sphere_mass(radius))
        }
        (None, None) => Err(scene_error(format!(
            "{who}.mass: missing (give mass, or a material with a density)"
        ))),
    }
}

/// Checks that adding `extra` particles keeps every id representable as `u32`, and
/// that the particles fit the host's memory (before a generator allocates them).
pub(super) fn check_capacity(who: &str, have: usize, extra: usize) -> Result<()> {
    match have.checked_add(extra) {
        Some(total) if total <= u32::MAX as usize => crate::memory_check::check(
            &format!("{who}: a scene of {total} particles"),
            crate::memory_check::model_bytes(total as u64, 0),
        ),
        _ => Err(scene_error(format!(
            "{who}: {extra} more particles would exceed the limit of {} particles in a scene",
            u32::MAX
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_is_idempotent() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..100_000 {
            let v = DVec3::new(
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
            );
            let n = unit(v);
            assert!((n.length() - 1.0).abs() <= 4.0 * f64::EPSILON);
            assert_eq!(unit(n), n);
        }
    }
}
