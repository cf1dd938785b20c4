//! Size distributions of generated spheres (`radius_distribution` of a `[[cloud]]` or an
//! `[[inserter]]`, issue 50): a lognormal law or a tabulated sieve curve, by number or
//! by mass. Each radius is drawn by inverting the number distribution at one uniform
//! number, so a sphere costs one draw of its generator's stream whatever the law.

use statrs::distribution::{ContinuousCDF, Normal};

/// How far a lognormal law reaches: `median · exp(±LOGNORMAL_REACH · sigma)`, the
/// central 99.73 % of the untruncated law.
pub const LOGNORMAL_REACH: f64 = 3.0;

/// What a tabulated distribution's cumulative fractions count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeBasis {
    /// The fraction of the spheres with a radius up to `r`.
    Number,
    /// The fraction of the mass (of the volume, at one density) in spheres up to `r`:
    /// a sieve curve.
    Mass,
}

impl SizeBasis {
    /// The scene file's name of the basis (`by = "mass"`).
    pub fn name(self) -> &'static str {
        match self {
            SizeBasis::Number => "number",
            SizeBasis::Mass => "mass",
        }
    }
}

/// A distribution of sphere radii.
#[derive(Clone, Debug, PartialEq)]
pub enum RadiusDistribution {
    /// `ln r` normal with median `median` (m) and standard deviation `sigma`, truncated
    /// to `median · exp(±3 sigma)` ([`LOGNORMAL_REACH`]).
    LogNormal {
        /// Median radius (m).
        median: f64,
        /// Standard deviation of `ln r`.
        sigma: f64,
    },
    /// A cumulative curve: `fraction[k]` of the spheres (or of their mass) have a radius
    /// up to `radius[k]`, linear in `r` between the points. The radii ascend, the
    /// fractions rise from 0 to 1 without falling.
    Table {
        /// Radii (m), ascending.
        radius: Vec<f64>,
        /// Cumulative fractions, from 0 to 1.
        fraction: Vec<f64>,
        /// What the fractions count.
        by: SizeBasis,
    },
}

impl RadiusDistribution {
    /// The smallest radius it draws (m).
    pub fn min_radius(&self) -> f64 {
        match self {
            Self::LogNormal { median, sigma } => median * (-LOGNORMAL_REACH * sigma).exp(),
            Self::Table { radius, .. } => radius[0],
        }
    }

    /// The largest radius it draws (m).
    pub fn max_radius(&self) -> f64 {
        match self {
            Self::LogNormal { median, sigma } => median * (LOGNORMAL_REACH * sigma).exp(),
            Self::Table { radius, .. } => radius[radius.len() - 1],
        }
    }

    /// The radius at `u` in `[0, 1)` of the number distribution's inverse: a uniform
    /// `u` gives radii distributed by number as the law says.
    pub fn radius_at(&self, u: f64) -> f64 {
        let r = match self {
            Self::LogNormal { median, sigma } => {
                let (n, lo, hi) = truncated_normal();
                median * (sigma * n.inverse_cdf(lo + u * (hi - lo))).exp()
            }
            Self::Table {
                radius,
                fraction,
                by,
            } => {
                let w = interval_weights(radius, fraction, *by);
                let total: f64 = w.iter().sum();
                // The interval of u, then u's place within it.
                let mut target = u * total;
                let mut k = 0;
                while k + 1 < w.len() && target >= w[k] {
                    target -= w[k];
                    k += 1;
                }
                let t = if w[k] > 0.0 {
                    (target / w[k]).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (a, b) = (radius[k], radius[k + 1]);
                match by {
                    SizeBasis::Number => a + t * (b - a),
                    // Number density ∝ r⁻³ on the interval (mass uniform in r there):
                    // the inverse of its cumulative, (a⁻² − r⁻²)/(a⁻² − b⁻²).
                    SizeBasis::Mass => (a.powi(-2) - t * (a.powi(-2) - b.powi(-2))).powf(-0.5),
                }
            }
        };
        r.clamp(self.min_radius(), self.max_radius())
    }

    /// The fraction by number of the radii up to `r` (the cumulative distribution the
    /// draws follow).
    pub fn number_cdf(&self, r: f64) -> f64 {
        match self {
            Self::LogNormal { median, sigma } => {
                let (n, lo, hi) = truncated_normal();
                let z = ((r / median).ln() / sigma).clamp(-LOGNORMAL_REACH, LOGNORMAL_REACH);
                ((n.cdf(z) - lo) / (hi - lo)).clamp(0.0, 1.0)
            }
            Self::Table {
                radius,
                fraction,
                by,
            } => {
                let w = interval_weights(radius, fraction, *by);
                let total: f64 = w.iter().sum();
                let mut below = 0.0;
                for (k, &wk) in w.iter().enumerate() {
                    let (a, b) = (radius[k], radius[k + 1]);
                    if r >= b {
                        below += wk;
                        continue;
                    }
                    if r > a {
                        let part = match by {
                            SizeBasis::Number => (r - a) / (b - a),
                            SizeBasis::Mass => {
                                (a.powi(-2) - r.powi(-2)) / (a.powi(-2) - b.powi(-2))
                            }
                        };
                        below += wk * part;
                    }
                    break;
                }
                (below / total).clamp(0.0, 1.0)
            }
        }
    }

    /// Checks the law's values, naming `key` (e.g. `cloud[0].radius_distribution`) and
    /// what is wrong.
    pub fn check(&self, key: &str) -> Result<(), String> {
        match self {
            Self::LogNormal { median, sigma } => {
                if !(median.is_finite() && *median > 0.0) {
                    return Err(format!(
                        "{key}.lognormal.median = {median:e}: must be > 0 and finite"
                    ));
                }
                if !(sigma.is_finite() && *sigma > 0.0 && *sigma <= 2.0) {
                    return Err(format!(
                        "{key}.lognormal.sigma = {sigma:e}: must be > 0 and at most 2 (the radii span median · exp(±3 sigma))"
                    ));
                }
            }
            Self::Table {
                radius, fraction, ..
            } => {
                if radius.len() < 2 {
                    return Err(format!(
                        "{key}.table: {} point(s); give at least two [radius, cumulative_fraction] pairs",
                        radius.len()
                    ));
                }
                for (k, (&r, &f)) in radius.iter().zip(fraction).enumerate() {
                    if !(r.is_finite() && r > 0.0) {
                        return Err(format!(
                            "{key}.table[{k}]: radius {r:e} must be > 0 and finite"
                        ));
                    }
                    if !(0.0..=1.0).contains(&f) {
                        return Err(format!("{key}.table[{k}]: fraction {f} must be in [0, 1]"));
                    }
                    if k > 0 && r <= radius[k - 1] {
                        return Err(format!(
                            "{key}.table[{k}]: radius {r:e} must be above the previous one ({:e})",
                            radius[k - 1]
                        ));
                    }
                    if k > 0 && f < fraction[k - 1] {
                        return Err(format!(
                            "{key}.table[{k}]: fraction {f} falls below the previous one ({})",
                            fraction[k - 1]
                        ));
                    }
                }
                let (first, last) = (fraction[0], fraction[fraction.len() - 1]);
                if first != 0.0 || last != 1.0 {
                    return Err(format!(
                        "{key}.table: the fractions run from {first} to {last}; they must run from 0 to 1"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The standard normal and its cumulative probabilities at `∓LOGNORMAL_REACH`, the
/// ends of a truncated lognormal law.
fn truncated_normal() -> (Normal, f64, f64) {
    let n = Normal::standard();
    let (lo, hi) = (n.cdf(-LOGNORMAL_REACH), n.cdf(LOGNORMAL_REACH));
    (n, lo, hi)
}

/// The number weight of each interval of a table: its fraction's rise, by number as
/// it is, by mass over the interval's `∫ r⁻³ dr` per unit length (mass uniform in `r`).
fn interval_weights(radius: &[f64], fraction: &[f64], by: SizeBasis) -> Vec<f64> {
    (0..radius.len() - 1)
        .map(|k| {
            let (a, b) = (radius[k], radius[k + 1]);
            let df = fraction[k + 1] - fraction[k];
            match by {
                SizeBasis::Number => df,
                SizeBasis::Mass => df / (b - a) * 0.5 * (a.powi(-2) - b.powi(-2)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inverse is the inverse: `number_cdf(radius_at(u)) = u` (to 1e-9) for every
    /// law, over a grid of u.
    #[test]
    fn radius_at_inverts_the_number_cdf() {
        let laws = [
            RadiusDistribution::LogNormal {
                median: 1e-3,
                sigma: 0.3,
            },
            RadiusDistribution::Table {
                radius: vec![1e-3, 2e-3, 4e-3],
                fraction: vec![0.0, 0.25, 1.0],
                by: SizeBasis::Number,
            },
            RadiusDistribution::Table {
                radius: vec![1e-3, 2e-3, 4e-3],
                fraction: vec![0.0, 0.25, 1.0],
                by: SizeBasis::Mass,
            },
        ];
        for law in &laws {
            for k in 0..100 {
                let u = (k as f64 + 0.5) / 100.0;
                let back = law.number_cdf(law.radius_at(u));
                assert!((back - u).abs() < 1e-9, "{law:?} at {u}: {back}");
            }
        }
    }
}
