//! Planar walls.

use glam::DVec3;

use super::Motion;

/// An infinite rigid plane through `point` with unit `normal` pointing into the domain.
///
/// Under the binder contact law a wall acts as a particle of zero diameter at the foot
/// of the perpendicular (Baker & Gonzalez §4: "a special case of particle-particle").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wall {
    /// A point on the plane (m).
    pub point: DVec3,
    /// Unit normal pointing into the domain.
    pub normal: DVec3,
    /// Contact stiffness `K^pp` used against this wall (J); defaults to the scene's
    /// `[contact] k_pp`.
    pub stiffness: f64,
    /// Material index under the Hertz law; `None`: a rigid wall (`E, G → ∞`).
    pub material: Option<u32>,
    /// Prescribed motion (at rest by default); `point` and `normal` are the rest pose.
    pub motion: Motion,
}

impl Wall {
    /// The wall placed at `pose` (its motion's pose at some time).
    pub fn placed(&self, pose: &super::Pose) -> Self {
        Self {
            point: pose.place(self.point),
            normal: pose.turn(self.normal),
            ..*self
        }
    }

    /// Signed distance of `x` from the plane, positive inside the domain.
    #[inline]
    pub fn distance(&self, x: DVec3) -> f64 {
        (x - self.point).dot(self.normal)
    }
}
