//! Clumps: rigid bodies made of overlapping spheres (issue 24). A [`ClumpType`] is the
//! shape (spheres in its body frame) with its mass properties; a [`Clump`] is one body of
//! that type with its state. Contacts act on the constituent spheres; the body moves by
//! `integrators::rigid` with its full inertia tensor.

use glam::{DMat3, DVec3};

use super::mass_properties::sphere_union;
use super::{Inertia, InertiaError};
use crate::math::rodrigues;

/// A constituent sphere of a clump type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClumpSphere {
    /// Its centre relative to the clump's centre of mass, in the body frame (m).
    pub offset: DVec3,
    /// Radius (m).
    pub radius: f64,
}

/// A clump type (`[[clump_type]]`): the shape and its mass properties.
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpType {
    /// Name, as scenes refer to it.
    pub name: String,
    /// The spheres, centred on the centre of mass.
    pub spheres: Vec<ClumpSphere>,
    /// The centre of mass in the body frame the spheres were written in (the spheres
    /// as written sit at `centroid + offset`).
    pub centroid: DVec3,
    /// Material index of every sphere (0 when the scene has no materials).
    pub material: u32,
    /// Mass (kg).
    pub mass: f64,
    /// Inertia tensor about the centre of mass, body frame.
    pub inertia: Inertia,
}

/// Why a clump type cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClumpTypeError {
    /// No spheres.
    #[error("has no spheres")]
    Empty,
    /// Neither a density nor a mass to compute the mass from.
    #[error("has no mass: give mass, or a material with a density")]
    NoMass,
    /// The given or computed inertia tensor is impossible.
    #[error("inertia: {0}")]
    Inertia(#[from] InertiaError),
    /// More spheres than [`MAX_CLUMP_SPHERES`].
    #[error("{0} spheres: at most {MAX_CLUMP_SPHERES} in one clump type")]
    TooManySpheres(usize),
    /// More overlapping pairs than [`MAX_OVERLAP_PAIRS`]: the mass properties would not
    /// be computed in bounded time (issue 49: 1000 mutually overlapping spheres never
    /// finished).
    #[error("more than {MAX_OVERLAP_PAIRS} overlapping pairs of spheres (the mass properties of their union cost about 1 ms per pair: measured 0.8 ms): use fewer or less overlapping spheres")]
    TooManyOverlaps,
}

/// Most spheres in one clump type.
pub const MAX_CLUMP_SPHERES: usize = 10_000;

/// Most overlapping sphere pairs in one clump type: each costs one pass over the
/// [`sphere_union`] rule's directions (see [`crate::model::mass_properties`]), so this
/// bounds the set-up to about 5 s (0.8 ms per pair measured on one core).
pub const MAX_OVERLAP_PAIRS: usize = 5_000;

/// Overlapping pairs of `spheres`, counted up to `limit + 1` (then the count stops).
fn overlapping_pairs(spheres: &[(DVec3, f64)], limit: usize) -> usize {
    let mut pairs = 0;
    for (k, &(c, r)) in spheres.iter().enumerate() {
        for &(cj, rj) in &spheres[..k] {
            if (cj - c).length() < r + rj {
                pairs += 1;
                if pairs > limit {
                    return pairs;
                }
            }
        }
    }
    pairs
}

impl ClumpType {
    /// A clump type from its spheres `(centre, radius)` in the body frame: the centre
    /// of mass is the centroid of their union (overlaps counted once, uniform density,
    /// [`sphere_union`]). The mass is `mass`, else `density` × the union's volume; the
    /// inertia tensor about the centre of mass is `inertia` (body frame), else the
    /// union's at the density that gives that mass. Radii must be positive and every
    /// value finite (the scene loader checks).
    pub fn new(
        name: &str,
        spheres: &[(DVec3, f64)],
        material: u32,
        density: Option<f64>,
        mass: Option<f64>,
        inertia: Option<DMat3>,
    ) -> Result<Self, ClumpTypeError> {
        if spheres.is_empty() {
            return Err(ClumpTypeError::Empty);
        }
        if spheres.len() > MAX_CLUMP_SPHERES {
            return Err(ClumpTypeError::TooManySpheres(spheres.len()));
        }
        if overlapping_pairs(spheres, MAX_OVERLAP_PAIRS) > MAX_OVERLAP_PAIRS {
            return Err(ClumpTypeError::TooManyOverlaps);
        }
        let union = sphere_union(spheres);
        let mass = match (mass, density) {
            (Some(m), _) => m,
            (None, Some(rho)) => rho * union.volume,
            (None, None) => return Err(ClumpTypeError::NoMass),
        };
        let tensor = inertia.unwrap_or(union.inertia * (mass / union.volume));
        Ok(Self {
            name: name.to_owned(),
            spheres: spheres
                .iter()
                .map(|&(c, r)| ClumpSphere {
                    offset: c - union.centroid,
                    radius: r,
                })
                .collect(),
            centroid: union.centroid,
            material,
            mass,
            inertia: Inertia::new(tensor)?,
        })
    }

    /// The radius of the smallest ball about the centre of mass that holds every
    /// sphere.
    pub fn reach(&self) -> f64 {
        self.spheres
            .iter()
            .map(|s| s.offset.length() + s.radius)
            .fold(0.0, f64::max)
    }
}

/// One clump (`[[clump]]`): a body of a [`ClumpType`] and its state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clump {
    /// Index of its type in `Model::clump_types`.
    pub kind: u32,
    /// Centre of mass (m).
    pub position: DVec3,
    /// Rescaled Rodrigues vector `α` of the body frame.
    pub rotation: DVec3,
    /// Velocity of the centre of mass (m/s).
    pub velocity: DVec3,
    /// Spatial angular velocity `Ω` (rad/s).
    pub angular_velocity: DVec3,
}

impl Clump {
    /// The centres of its spheres, `x + R(α) offset`, in the type's order.
    pub fn sphere_centres<'a>(&'a self, kind: &'a ClumpType) -> impl Iterator<Item = DVec3> + 'a {
        kind.spheres
            .iter()
            .map(move |s| self.position + rodrigues::rotate(self.rotation, s.offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 49: a type of 1000 mutually overlapping spheres is refused at once instead
    /// of running for hours; one at the pair limit finishes in bounded time (timed
    /// here, printed with --nocapture).
    #[test]
    fn mass_properties_take_bounded_time() {
        let crowd: Vec<(DVec3, f64)> = (0..1000)
            .map(|k| (DVec3::new(1e-3 * k as f64, 0.0, 0.0), 1.0))
            .collect();
        let t = std::time::Instant::now();
        let err = ClumpType::new("crowd", &crowd, 0, Some(1.0), None, None).unwrap_err();
        assert_eq!(err, ClumpTypeError::TooManyOverlaps);
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
        let many = vec![(DVec3::ZERO, 1.0); MAX_CLUMP_SPHERES + 1];
        let err = ClumpType::new("many", &many, 0, Some(1.0), None, None).unwrap_err();
        assert!(err.to_string().contains("10001 spheres"), "{err}");
        // A chain whose spheres each overlap the 4 before: 4 pairs a sphere.
        let chain: Vec<(DVec3, f64)> = (0..100)
            .map(|k| (DVec3::new(0.45 * k as f64, 0.0, 0.0), 1.0))
            .collect();
        assert_eq!(overlapping_pairs(&chain, usize::MAX), 4 * 100 - 10);
        let t = std::time::Instant::now();
        ClumpType::new("chain", &chain, 0, Some(1.0), None, None).unwrap();
        println!("390 overlapping pairs: {:?}", t.elapsed());
    }

    #[test]
    fn a_dimer_is_centred_on_its_centre_of_mass() {
        // Two disjoint spheres: the centroid is their volume-weighted centre.
        let (a, b) = (
            (DVec3::new(-1.0, 0.0, 0.0), 1.0),
            (DVec3::new(2.0, 0.0, 0.0), 0.5),
        );
        let t = ClumpType::new("d", &[a, b], 0, Some(1000.0), None, None).unwrap();
        let (va, vb) = (1.0, 0.125);
        let c = (a.0 * va + b.0 * vb) / (va + vb);
        assert!((t.centroid - c).length() < 1e-12);
        assert!((t.spheres[0].offset - (a.0 - c)).length() < 1e-12);
        let mass = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI * (1.0 + 0.125);
        assert!((t.mass / mass - 1.0).abs() < 1e-12);
        // Symmetric about the x axis: J_yy = J_zz > J_xx.
        let j = t.inertia.body;
        assert!((j.y_axis.y - j.z_axis.z).abs() < 1e-9 * j.y_axis.y);
        assert!(j.x_axis.x < j.y_axis.y);
        assert!((t.reach() - (2.0 - c.x + 0.5)).abs() < 1e-12);
    }

    #[test]
    fn given_mass_and_inertia_override_the_computed_ones() {
        let s = [(DVec3::ZERO, 1.0), (DVec3::new(1.0, 0.0, 0.0), 1.0)];
        let j = DMat3::from_diagonal(DVec3::new(1.0, 2.0, 2.0));
        let t = ClumpType::new("d", &s, 0, None, Some(3.0), Some(j)).unwrap();
        assert_eq!((t.mass, t.inertia.body), (3.0, j));
        // Mass alone scales the computed tensor.
        let u = ClumpType::new("d", &s, 0, Some(2.0), None, None).unwrap();
        let m = ClumpType::new("d", &s, 0, None, Some(2.0 * u.mass), None).unwrap();
        assert!((m.inertia.body.x_axis.x / u.inertia.body.x_axis.x - 2.0).abs() < 1e-12);
    }

    #[test]
    fn impossible_types_are_refused() {
        assert_eq!(
            ClumpType::new("e", &[], 0, Some(1.0), None, None).unwrap_err(),
            ClumpTypeError::Empty
        );
        assert_eq!(
            ClumpType::new("e", &[(DVec3::ZERO, 1.0)], 0, None, None, None).unwrap_err(),
            ClumpTypeError::NoMass
        );
        let bad = DMat3::from_diagonal(DVec3::new(1.0, 1.0, 3.0));
        assert!(matches!(
            ClumpType::new("e", &[(DVec3::ZERO, 1.0)], 0, None, Some(1.0), Some(bad)),
            Err(ClumpTypeError::Inertia(InertiaError::TriangleInequality(_)))
        ));
    }

    #[test]
    fn sphere_centres_follow_the_body_pose() {
        let t = ClumpType::new(
            "d",
            &[
                (DVec3::new(-1.0, 0.0, 0.0), 1.0),
                (DVec3::new(1.0, 0.0, 0.0), 1.0),
            ],
            0,
            Some(1.0),
            None,
            None,
        )
        .unwrap();
        // A quarter turn about z: the dimer's axis turns from x to y.
        let quarter =
            rodrigues::from_rotation_vector(DVec3::Z * std::f64::consts::FRAC_PI_2).unwrap();
        let c = Clump {
            kind: 0,
            position: DVec3::new(5.0, 0.0, 0.0),
            rotation: quarter,
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
        };
        let xs: Vec<DVec3> = c.sphere_centres(&t).collect();
        assert!((xs[0] - DVec3::new(5.0, -1.0, 0.0)).length() < 1e-12);
        assert!((xs[1] - DVec3::new(5.0, 1.0, 0.0)).length() < 1e-12);
    }
}
