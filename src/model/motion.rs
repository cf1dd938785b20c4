//! Prescribed motion of walls and meshes (`velocity`, `angular_velocity`, `axis_point`,
//! `start`, `stop`, and for planes `period`): a rigid motion whose pose is a closed
//! function of time, so a run resumed from a checkpoint at step `k` places its walls at
//! `k·h` to the bit.

use glam::{DMat3, DVec3};

/// A prescribed rigid motion: translation at `velocity` and rotation at
/// `angular_velocity` about the line through `axis_point` (which travels with the
/// translation), while `start ≤ t < stop`; before `start` the wall is at its rest pose,
/// after `stop` it stays where the motion left it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    /// Translation velocity (m/s).
    pub velocity: DVec3,
    /// Angular velocity (rad/s).
    pub angular_velocity: DVec3,
    /// A point of the rotation axis at rest (m); moment loads are taken about it.
    pub axis_point: DVec3,
    /// Time the motion begins (s).
    pub start: f64,
    /// Time the motion ends (s); `f64::INFINITY`: never.
    pub stop: f64,
    /// The motion starts over every `period` seconds of motion: the wall returns to its
    /// rest pose at `start + k·period` and moves on from there (Preclik et al. §4.3's
    /// inflow plane, which pushes for 2r and returns); `f64::INFINITY`: never.
    pub period: f64,
}

/// Returns within this fraction of a period of a time count at that time, so that a
/// return at `k·period` lands on the step an inserter's event of the same interval
/// lands on, whatever the rounding of `k·period/h`.
const PERIOD_TOLERANCE: f64 = 1e-9;

impl Default for Motion {
    /// At rest.
    fn default() -> Self {
        Self {
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            axis_point: DVec3::ZERO,
            start: 0.0,
            stop: f64::INFINITY,
            period: f64::INFINITY,
        }
    }
}

/// Where a moving wall is at one time: `x ↦ R (x − c) + c + d` of a rest point `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// The rotation `R`.
    pub rotation: DMat3,
    /// The rest axis point `c`.
    pub center: DVec3,
    /// The translation `d`.
    pub translation: DVec3,
    /// Velocity of the translation now (zero outside `[start, stop)`).
    pub velocity: DVec3,
    /// Angular velocity now (zero outside `[start, stop)`).
    pub angular_velocity: DVec3,
}

impl Pose {
    /// The rest pose (identity, at rest).
    pub const REST: Pose = Pose {
        rotation: DMat3::IDENTITY,
        center: DVec3::ZERO,
        translation: DVec3::ZERO,
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
    };

    /// The placed position of rest point `x`.
    #[inline]
    pub fn place(&self, x: DVec3) -> DVec3 {
        self.rotation * (x - self.center) + self.center + self.translation
    }

    /// The placed direction of rest direction `n`.
    #[inline]
    pub fn turn(&self, n: DVec3) -> DVec3 {
        self.rotation * n
    }

    /// The axis point now.
    #[inline]
    pub fn axis(&self) -> DVec3 {
        self.center + self.translation
    }

    /// Velocity of the wall's material point now at `q`: `v + ω × (q − c(t))`.
    #[inline]
    pub fn surface_velocity(&self, q: DVec3) -> DVec3 {
        self.velocity + self.angular_velocity.cross(q - self.axis())
    }

    /// Whether the pose is the rest pose (placing changes nothing).
    pub fn is_rest(&self) -> bool {
        self.rotation == DMat3::IDENTITY
            && self.translation == DVec3::ZERO
            && self.velocity == DVec3::ZERO
            && self.angular_velocity == DVec3::ZERO
    }
}

impl Motion {
    /// Whether the wall never moves.
    pub fn is_static(&self) -> bool {
        self.velocity == DVec3::ZERO && self.angular_velocity == DVec3::ZERO
    }

    /// The time spent moving by time `t`: `clamp(t, start, stop) − start`, less the
    /// whole periods.
    #[inline]
    fn moved_for(&self, t: f64) -> f64 {
        let tau = t.clamp(self.start, self.stop.max(self.start)) - self.start;
        if self.period.is_finite() {
            let cycles = (tau / self.period + PERIOD_TOLERANCE).floor();
            let rest = tau - cycles * self.period;
            // A rounding step past a return is the return itself (the rest pose exactly,
            // where an inserter places spheres touching the wall).
            if rest < PERIOD_TOLERANCE * self.period {
                0.0
            } else {
                rest
            }
        } else {
            tau
        }
    }

    /// Whether the motion is on at time `t` (`start ≤ t < stop`).
    #[inline]
    pub fn active(&self, t: f64) -> bool {
        self.start <= t && t < self.stop
    }

    /// The pose at time `t`: the rotation by `|ω| τ` about `ω` (an axis–angle, so any
    /// number of turns is exact to rounding) and the translation `v τ`, with `τ` the
    /// time spent moving.
    pub fn pose(&self, t: f64) -> Pose {
        if self.is_static() {
            return Pose {
                center: self.axis_point,
                ..Pose::REST
            };
        }
        let tau = self.moved_for(t);
        let w = self.angular_velocity.length();
        let rotation = if w > 0.0 {
            DMat3::from_axis_angle(self.angular_velocity / w, w * tau)
        } else {
            DMat3::IDENTITY
        };
        let on = self.active(t);
        Pose {
            rotation,
            center: self.axis_point,
            translation: self.velocity * tau,
            velocity: if on { self.velocity } else { DVec3::ZERO },
            angular_velocity: if on {
                self.angular_velocity
            } else {
                DVec3::ZERO
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turning_plate_carries_its_points_at_the_surface_velocity() {
        let m = Motion {
            angular_velocity: DVec3::new(0.0, 0.0, 2.0),
            axis_point: DVec3::new(1.0, 0.0, 0.0),
            ..Motion::default()
        };
        let (t, h) = (0.3, 1e-6);
        let x = DVec3::new(2.0, 0.5, 0.1);
        let (a, b) = (m.pose(t), m.pose(t + h));
        let fd = (b.place(x) - a.place(x)) / h;
        let v = a.surface_velocity(a.place(x));
        // Central enough at h = 1e-6: the error is ½ h |ω|² r ~ 2e-6.
        assert!((fd - v).length() < 1e-5, "{fd} vs {v}");
        // Many turns later the rotation is still a rotation.
        let r = m.pose(1e4).rotation;
        assert!((r * r.transpose() - DMat3::IDENTITY).abs_diff_eq(DMat3::ZERO, 1e-14));
    }

    #[test]
    fn start_and_stop_hold_the_pose() {
        let m = Motion {
            velocity: DVec3::X,
            start: 1.0,
            stop: 3.0,
            ..Motion::default()
        };
        assert_eq!(m.pose(0.5).translation, DVec3::ZERO);
        assert_eq!(m.pose(0.5).velocity, DVec3::ZERO);
        assert_eq!(m.pose(2.0).translation, DVec3::X);
        assert_eq!(m.pose(2.0).velocity, DVec3::X);
        assert_eq!(m.pose(5.0).translation, 2.0 * DVec3::X);
        assert_eq!(m.pose(5.0).velocity, DVec3::ZERO);
    }

    #[test]
    fn a_periodic_motion_returns_to_rest_at_every_period() {
        let (h, period) = (1e-5, 4.7e-4);
        let m = Motion {
            velocity: DVec3::X,
            period,
            ..Motion::default()
        };
        // The return lands on step 47k for every k, although 47k·h is not k·period in
        // floating point for every k.
        for k in 0..2000u64 {
            let at = m.pose((47 * k) as f64 * h);
            assert_eq!(at.translation.x, 0.0, "{k}");
            let before = m.pose((47 * k + 46) as f64 * h).translation.x;
            assert!((before - 46.0 * h).abs() < 1e-12, "{k}: {before}");
            assert_eq!(at.velocity, DVec3::X);
        }
    }
}
