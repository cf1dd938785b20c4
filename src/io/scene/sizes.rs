//! The sphere sizes a `[[cloud]]` or `[[inserter]]` draws: `radius` with
//! `radius_jitter` (uniform in `r (1 ± jitter)`), or `radius_distribution` (a lognormal
//! law or a tabulated cumulative curve, [`RadiusDistribution`]), checked.

use super::checks::{positive, scene_error, shown, sphere_sizes};
use super::schema::RadiusDistributionSection;
use crate::error::Result;
use crate::model::sizes::{RadiusDistribution, SizeBasis};

/// What a generator's spheres measure.
pub(super) struct Sizes {
    /// The nominal radius (m): `radius`, or the law's smallest radius.
    pub(super) radius: f64,
    /// The uniform jitter (0 with a law).
    pub(super) jitter: f64,
    /// The law, if one is given.
    pub(super) distribution: Option<RadiusDistribution>,
    /// The largest radius drawn (m).
    pub(super) max_radius: f64,
}

/// The sizes of generator `who` (`cloud[0]`, `inserter[1]`) from its keys, its spheres'
/// masses and inertias checked at `density`; `missing` says what to give when there is
/// no size at all.
pub(super) fn sizes(
    who: &str,
    (radius, jitter, law): (Option<f64>, f64, Option<&RadiusDistributionSection>),
    density: f64,
    missing: &str,
) -> Result<Sizes> {
    let key = |field: &str| format!("{who}.{field}");
    let Some(law) = law else {
        if !(0.0..1.0).contains(&jitter) {
            return Err(scene_error(format!(
                "{} = {jitter}: must be >= 0 and < 1",
                key("radius_jitter")
            )));
        }
        let radius = positive(
            &key("radius"),
            radius.ok_or_else(|| scene_error(format!("{}: missing ({missing})", key("radius"))))?,
        )?;
        sphere_sizes(who, radius, jitter, density)?;
        return Ok(Sizes {
            radius,
            jitter,
            distribution: None,
            max_radius: radius * (1.0 + jitter),
        });
    };
    let dkey = key("radius_distribution");
    if radius.is_some() || jitter != 0.0 {
        return Err(scene_error(format!(
            "{dkey}: give radius (with radius_jitter) or radius_distribution, not both"
        )));
    }
    let distribution = match (&law.lognormal, &law.table) {
        (Some(l), None) => {
            if law.by.is_some() {
                return Err(scene_error(format!(
                    "{dkey}.by: only a table takes it (a lognormal law is by number)"
                )));
            }
            RadiusDistribution::LogNormal {
                median: l.median,
                sigma: l.sigma,
            }
        }
        (None, Some(points)) => {
            let by = match law.by.as_deref() {
                Some("mass") => SizeBasis::Mass,
                Some("number") => SizeBasis::Number,
                Some(other) => {
                    return Err(scene_error(format!(
                        "{dkey}.by = {}: unknown basis (allowed: \"mass\", \"number\")",
                        shown(other)
                    )))
                }
                None => {
                    return Err(scene_error(format!(
                        "{dkey}.by: missing; give by = \"mass\" (a sieve curve: the fraction of the mass up to each radius) or \"number\""
                    )))
                }
            };
            RadiusDistribution::Table {
                radius: points.iter().map(|p| p[0]).collect(),
                fraction: points.iter().map(|p| p[1]).collect(),
                by,
            }
        }
        _ => {
            return Err(scene_error(format!(
                "{dkey}: give exactly one law, lognormal = {{ median = ..., sigma = ... }} or table = [[radius, cumulative_fraction], ...]"
            )))
        }
    };
    distribution.check(&dkey).map_err(scene_error)?;
    let (lo, hi) = (distribution.min_radius(), distribution.max_radius());
    for r in [lo, hi] {
        sphere_sizes(who, r, 0.0, density)?;
    }
    Ok(Sizes {
        radius: lo,
        jitter: 0.0,
        distribution: Some(distribution),
        max_radius: hi,
    })
}
