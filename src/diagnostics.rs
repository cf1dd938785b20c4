//! Energies and momenta of a state (Baker & Gonzalez §2.5, eqs. 32, 34 in their inertial
//! form per NOTES).

use glam::DVec3;

use crate::model::{Particles, FLAG_PENDULUM};
use crate::physics::field;

/// Potential energy by kind (J).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Potentials {
    /// Binder bending/torsion `U^m`.
    pub bend: f64,
    /// Binder axial `U^a`.
    pub axial: f64,
    /// Binder shear `U^s`.
    pub shear: f64,
    /// Particle–particle contact `U^pp`.
    pub contact: f64,
    /// Particle–wall contact `U^pw`.
    pub wall: f64,
    /// Gravity / pendulum field.
    pub field: f64,
    /// Near-field (Mie) pair potential (Campello eq. 17).
    pub near_field: f64,
}

impl Potentials {
    /// Sum of all potentials.
    pub fn total(&self) -> f64 {
        self.bend
            + self.axial
            + self.shear
            + self.contact
            + self.wall
            + self.field
            + self.near_field
    }
}

/// One row of `energy.csv`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Diagnostics {
    /// Step index.
    pub step: u64,
    /// Time (s).
    pub time: f64,
    /// Translational kinetic energy `Σ ½ m |v|²`.
    pub e_kin: f64,
    /// Rotational kinetic energy `Σ ½ J |Ω|²`.
    pub e_rot: f64,
    /// Potentials.
    pub potentials: Potentials,
    /// Linear momentum `Σ m v`.
    pub momentum: DVec3,
    /// Angular momentum about the origin `Σ (x × m v + J Ω)`.
    pub angular_momentum: DVec3,
    /// The energy the broken bonds held when they broke (J; issue 47), not part of
    /// [`Diagnostics::e_total`]: `e_total + e_broken` is what an undamped run with
    /// breaking bonds conserves.
    pub e_broken: f64,
}

impl Diagnostics {
    /// Total potential energy.
    pub fn e_pot(&self) -> f64 {
        self.potentials.total()
    }

    /// Total energy.
    pub fn e_total(&self) -> f64 {
        self.e_kin + self.e_rot + self.e_pot()
    }

    /// CSV header of `energy.csv`. The first twelve columns are a fixed interface.
    pub const CSV_HEADER: &'static str = "step,t,e_kin,e_rot,e_pot,e_total,px,py,pz,lx,ly,lz,e_bend,e_axial,e_shear,e_contact,e_wall,e_field,e_near_field,e_broken";

    /// The row in the column order of [`Diagnostics::CSV_HEADER`], numbers in `{:.16e}`
    /// (17 significant digits, round-trips exactly).
    pub fn csv_row(&self) -> String {
        let p = &self.potentials;
        let vals = [
            self.time,
            self.e_kin,
            self.e_rot,
            self.e_pot(),
            self.e_total(),
            self.momentum.x,
            self.momentum.y,
            self.momentum.z,
            self.angular_momentum.x,
            self.angular_momentum.y,
            self.angular_momentum.z,
            p.bend,
            p.axial,
            p.shear,
            p.contact,
            p.wall,
            p.field,
            p.near_field,
            self.e_broken,
        ];
        let mut s = self.step.to_string();
        for v in vals {
            s.push(',');
            s.push_str(&format!("{v:.16e}"));
        }
        s
    }
}

/// Kinetic energies and momenta of `particles`, plus the field potential
/// (gravity / pendulum) for acceleration `gravity`. Sums run in particle order.
pub fn kinematic(particles: &Particles, gravity: DVec3) -> (f64, f64, DVec3, DVec3, f64) {
    let mut e_kin = 0.0;
    let mut e_rot = 0.0;
    let mut p = DVec3::ZERO;
    let mut l = DVec3::ZERO;
    let mut e_field = 0.0;
    for i in 0..particles.len() {
        // A clump's sphere counts in its body (the backend adds the bodies); a dormant
        // particle is not yet in the system, a removed one no longer (dormant ones
        // carry FLAG_REMOVED too).
        if particles.flags[i] & (crate::model::FLAG_MEMBER | crate::model::FLAG_REMOVED) != 0 {
            continue;
        }
        let (m, j) = (particles.mass[i], particles.inertia[i]);
        let (x, v, w) = (
            particles.position[i],
            particles.velocity[i],
            particles.angular_velocity[i],
        );
        e_kin += 0.5 * m * v.length_squared();
        e_rot += 0.5 * j * w.length_squared();
        p += m * v;
        l += x.cross(m * v) + j * w;
        e_field += if particles.flags[i] & FLAG_PENDULUM != 0 {
            field::pendulum(
                m,
                gravity,
                x,
                particles.rotation[i],
                particles.pendulum_offset[i],
            )
            .0
        } else {
            field::gravity(m, gravity, x).0
        };
    }
    (e_kin, e_rot, p, l, e_field)
}
