//! Particle insertion over time (`[[inserter]]`): where, when and what an inserter
//! adds. The particles it may add are reserved in the model from the start, dormant
//! ([`FLAG_DORMANT`](super::FLAG_DORMANT)), so every backend sizes its buffers once;
//! `neighbor::insert` places them at each event.

use glam::DVec3;

/// Where an inserter puts particles: their whole sphere lies in the region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    /// An axis-aligned box; along an axis of zero extent every centre lies on that
    /// plane (quasi-2-D pours), as in a `[[cloud]]`.
    Box {
        /// Lower corner (m).
        min: DVec3,
        /// Upper corner (m).
        max: DVec3,
    },
    /// A flat disc (a pipe's outlet): centres in the disc's plane, within
    /// `radius − r` of its centre.
    Disc {
        /// Centre (m).
        center: DVec3,
        /// Unit normal of the disc's plane.
        normal: DVec3,
        /// Radius (m).
        radius: f64,
    },
    /// A regular grid of sites (a layer of Preclik et al. §4.3's inflow): each event
    /// puts one sphere on every free site, site `(a, b, c)` at `origin + (a s_x, b s_y,
    /// c s_z)`, sites in order of `a` fastest, then `b`, then `c`.
    Grid {
        /// The first site (m).
        origin: DVec3,
        /// Spacing along each axis (m).
        spacing: DVec3,
        /// Sites along each axis (each ≥ 1).
        counts: [u32; 3],
    },
}

impl Region {
    /// A centre for a sphere of radius `r` from three uniform numbers in `[0, 1)`:
    /// uniform over the box inset by `r`, or over the disc of radius `R − r` (area
    /// uniform: the distance from the centre is `(R − r) √u`).
    pub fn sample(&self, r: f64, u: [f64; 3]) -> DVec3 {
        match *self {
            Region::Box { min, max } => {
                let flat = (max - min).cmpeq(DVec3::ZERO);
                let inset = DVec3::select(flat, DVec3::ZERO, DVec3::splat(r));
                let (lo, hi) = (min + inset, max - inset);
                lo + (hi - lo) * DVec3::from_array(u)
            }
            Region::Disc {
                center,
                normal,
                radius,
            } => {
                let (a, b) = normal.any_orthonormal_pair();
                let rho = (radius - r).max(0.0) * u[0].sqrt();
                let phi = std::f64::consts::TAU * u[1];
                center + rho * (phi.cos() * a + phi.sin() * b)
            }
            // A grid's spheres go to their sites (Region::site); a draw picks one.
            Region::Grid { counts, .. } => {
                let sites = counts.iter().map(|&c| u64::from(c)).product::<u64>();
                self.site(((u[0] * sites as f64) as u64).min(sites.saturating_sub(1)))
            }
        }
    }

    /// The number of sites of a grid (0 for the other regions).
    pub fn sites(&self) -> u64 {
        match *self {
            Region::Grid { counts, .. } => counts.iter().map(|&c| u64::from(c)).product(),
            _ => 0,
        }
    }

    /// Site `k` of a grid, `a` fastest (`k = a + n_x (b + n_y c)`); the centre for the
    /// other regions.
    pub fn site(&self, k: u64) -> DVec3 {
        match *self {
            Region::Grid {
                origin,
                spacing,
                counts,
            } => {
                let (nx, ny) = (u64::from(counts[0]), u64::from(counts[1]));
                let (a, b, c) = (k % nx, (k / nx) % ny, k / (nx * ny));
                origin + spacing * DVec3::new(a as f64, b as f64, c as f64)
            }
            _ => self.center(),
        }
    }

    /// The far corner of a grid: its last site.
    fn grid_end(origin: DVec3, spacing: DVec3, counts: [u32; 3]) -> DVec3 {
        let n = DVec3::new(
            f64::from(counts[0].max(1) - 1),
            f64::from(counts[1].max(1) - 1),
            f64::from(counts[2].max(1) - 1),
        );
        origin + spacing * n
    }

    /// The box every sphere of radius up to `r` placed in the region lies in (for
    /// gathering what it may overlap).
    pub fn bounds(&self, r: f64) -> (DVec3, DVec3) {
        match *self {
            Region::Box { min, max } => (min, max),
            Region::Disc { center, radius, .. } => {
                let e = DVec3::splat(radius + r);
                (center - e, center + e)
            }
            Region::Grid {
                origin,
                spacing,
                counts,
            } => {
                let end = Self::grid_end(origin, spacing, counts);
                let e = DVec3::splat(r);
                (origin.min(end) - e, origin.max(end) + e)
            }
        }
    }

    /// The region's centre (where dormant particles wait).
    pub fn center(&self) -> DVec3 {
        match *self {
            Region::Box { min, max } => 0.5 * (min + max),
            Region::Disc { center, .. } => center,
            Region::Grid {
                origin,
                spacing,
                counts,
            } => 0.5 * (origin + Self::grid_end(origin, spacing, counts)),
        }
    }
}

/// How many particles an inserter adds at each event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Batch {
    /// `rate` particles per second on average: event `k` adds
    /// `⌊rate·interval·(k+1)⌋ − ⌊rate·interval·k⌋`, so the running total never
    /// drifts from `rate · t`.
    Rate(f64),
    /// The same number at every event.
    Count(u64),
}

/// One `[[inserter]]`: events at `start, start + interval, …` up to `stop`, each
/// adding a batch of particles at random non-overlapping places in `region`, taken in
/// order from the reserved particles `first .. first + capacity` (whose radii, masses
/// and material were drawn when the scene was built), or of clumps (`clump`).
#[derive(Clone, Debug, PartialEq)]
pub struct Inserter {
    /// Where.
    pub region: Region,
    /// How many per event.
    pub batch: Batch,
    /// Time between events (s).
    pub interval: f64,
    /// Time of the first event (s).
    pub start: f64,
    /// No event after this time (s).
    pub stop: f64,
    /// Velocity of the inserted particles (m/s).
    pub velocity: DVec3,
    /// Half-widths of a uniform perturbation of each inserted particle's velocity, per
    /// component (m/s): `v + p ⊙ (2u − 1)`, three numbers of the event's stream drawn
    /// after the particle's place. Zero: no draws.
    pub velocity_perturbation: DVec3,
    /// Seed of the placements (each event draws from its own stream).
    pub seed: u64,
    /// First reserved particle id.
    pub first: u32,
    /// Reserved particles: at most this many are ever inserted.
    pub capacity: u32,
    /// At most this many of its particles in the system at once (`capacity` in a scene
    /// with removal, issue 44: the ones that left free their places); `None`: no bound
    /// but the reserve.
    pub live_limit: Option<u32>,
    /// Random places tried for one particle before it is skipped.
    pub attempts: u32,
    /// Largest radius of the reserved particles (m): `radius (1 + radius_jitter)`.
    pub max_radius: f64,
    /// Nominal radius of the reserved particles (m).
    pub radius: f64,
    /// Their relative radius jitter: radii uniform in `radius (1 ± jitter)`.
    pub radius_jitter: f64,
    /// Their radii drawn from this law instead (`radius_distribution`; `radius_jitter`
    /// is then 0 and `radius` the law's smallest radius): one draw of stream 0 per
    /// sphere, in reserve order.
    pub distribution: Option<crate::model::sizes::RadiusDistribution>,
    /// Their density (kg/m³).
    pub density: f64,
    /// Their material index.
    pub material: u32,
    /// The clump type it inserts (index in `Model::clump_types`), or `None` for
    /// spheres. A clump inserter reserves the clumps `first .. first + capacity` of
    /// `Model::clumps` (dormant at the region's centre until inserted, each at a
    /// uniformly random attitude); `radius` is then its type's bounding radius (the
    /// region holds the whole clump), `max_radius` its largest sphere, `radius_jitter`
    /// and `density` 0, `material` the type's.
    pub clump: Option<u32>,
}

/// Default [`Inserter::attempts`].
pub const DEFAULT_ATTEMPTS: u32 = 200;

/// Default [`Inserter::interval`] of an inserter given a `rate` (s).
pub const DEFAULT_RATE_INTERVAL: f64 = 0.01;

impl Inserter {
    /// Number of events: those at `start + k·interval ≤ stop`.
    pub fn events(&self) -> u64 {
        if self.stop.is_nan() || self.stop < self.start {
            return 0;
        }
        // The tolerance keeps an event that lands on `stop` up to rounding.
        let span = (self.stop - self.start) / self.interval;
        (span * (1.0 + 1e-12)).floor() as u64 + 1
    }

    /// Time of event `k` (s).
    pub fn event_time(&self, k: u64) -> f64 {
        self.start + k as f64 * self.interval
    }

    /// The step at whose end event `k` happens: the nearest step to its time.
    pub fn event_step(&self, k: u64, dt: f64) -> u64 {
        (self.event_time(k) / dt).round() as u64
    }

    /// Particles event `k` adds.
    pub fn batch_size(&self, k: u64) -> u64 {
        match self.batch {
            Batch::Count(c) => c,
            Batch::Rate(rate) => {
                let per = rate * self.interval;
                let upto = |k: u64| (per * k as f64).floor() as u64;
                upto(k + 1).saturating_sub(upto(k))
            }
        }
    }

    /// Particles all events add together (what `capacity` defaults to).
    pub fn total(&self) -> u64 {
        match self.batch {
            Batch::Count(c) => c.saturating_mul(self.events()),
            Batch::Rate(rate) => (rate * self.interval * self.events() as f64).floor() as u64,
        }
    }

    /// Events that happen by the end of step `step` (`dt` the time step): the first
    /// event not yet done at that point.
    pub fn events_by(&self, step: u64, dt: f64) -> u64 {
        let n = self.events();
        // Event steps ascend with k: count them by bisection.
        let (mut lo, mut hi) = (0u64, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.event_step(mid, dt) <= step {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inserter(batch: Batch) -> Inserter {
        Inserter {
            region: Region::Box {
                min: DVec3::ZERO,
                max: DVec3::ONE,
            },
            batch,
            interval: 0.1,
            start: 0.05,
            stop: 1.05,
            velocity: DVec3::ZERO,
            velocity_perturbation: DVec3::ZERO,
            seed: 1,
            first: 0,
            capacity: 100,
            live_limit: None,
            attempts: DEFAULT_ATTEMPTS,
            max_radius: 0.1,
            radius: 0.1,
            radius_jitter: 0.0,
            distribution: None,
            density: 1.0,
            material: 0,
            clump: None,
        }
    }

    #[test]
    fn schedule_counts_events_and_batches() {
        let c = inserter(Batch::Count(3));
        // 0.05, 0.15, ..., 1.05: the last lands on stop.
        assert_eq!(c.events(), 11);
        assert_eq!(c.total(), 33);
        let r = inserter(Batch::Rate(25.0));
        // 2.5 per event: 2, 3, 2, 3, ... summing to floor(2.5 k).
        let sizes: Vec<u64> = (0..4).map(|k| r.batch_size(k)).collect();
        assert_eq!(sizes, [2, 3, 2, 3]);
        assert_eq!(
            (0..r.events()).map(|k| r.batch_size(k)).sum::<u64>(),
            r.total()
        );
        let dt = 0.01;
        assert_eq!(c.event_step(0, dt), 5);
        assert_eq!(c.events_by(4, dt), 0);
        assert_eq!(c.events_by(5, dt), 1);
        assert_eq!(c.events_by(14, dt), 1);
        assert_eq!(c.events_by(15, dt), 2);
        assert_eq!(c.events_by(10_000, dt), 11);
    }

    /// docs/scene-format.md's example: every event opens an interval and adds its feed,
    /// so the total is the feed of (stop − start + interval), 1550 here, not 1500.
    #[test]
    fn the_documented_rate_example_inserts_1550() {
        let mut r = inserter(Batch::Rate(5000.0));
        (r.start, r.stop, r.interval) = (0.0, 0.3, 0.01);
        assert_eq!(r.events(), 31);
        assert!((0..r.events()).all(|k| r.batch_size(k) == 50));
        assert_eq!(r.total(), 1550);
    }

    #[test]
    fn samples_keep_the_sphere_inside() {
        let b = Region::Box {
            min: DVec3::ZERO,
            max: DVec3::new(1.0, 0.0, 1.0),
        };
        for u in [[0.0, 0.0, 0.0], [0.999, 0.5, 0.999]] {
            let x = b.sample(0.1, u);
            assert!(x.x >= 0.1 && x.x <= 0.9 && x.z >= 0.1 && x.z <= 0.9 && x.y == 0.0);
        }
        let d = Region::Disc {
            center: DVec3::new(1.0, 2.0, 3.0),
            normal: DVec3::Z,
            radius: 0.5,
        };
        for u in [[0.999, 0.3, 0.0], [0.5, 0.9, 0.7]] {
            let x = d.sample(0.1, u);
            assert!((x - DVec3::new(1.0, 2.0, 3.0)).length() <= 0.4 + 1e-15);
            assert_eq!(x.z, 3.0);
        }
    }
}
