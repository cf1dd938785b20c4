//! Colours: the per-particle field that picks a particle's colour, the viridis colormap,
//! sRGB ↔ linear light, and the lighting of a sphere's centre.

use glam::DVec3;

use crate::error::{Error, Result};
use crate::io::vtk_reader::ParticleFrame;

/// Fraction of the light that is ambient (the rest is Lambertian).
pub const AMBIENT: f64 = 0.3;
/// View-space direction towards the light (x right, y up, z away from the viewer):
/// from the upper left, in front.
const LIGHT: [f64; 3] = [-0.45, 0.55, -0.70];

/// Viridis (matplotlib's default colormap), 8 stops in sRGB, linearly interpolated.
const VIRIDIS: [[u8; 3]; 8] = [
    [68, 1, 84],
    [70, 50, 127],
    [54, 92, 141],
    [39, 127, 143],
    [31, 162, 136],
    [74, 194, 110],
    [160, 219, 57],
    [254, 232, 37],
];

/// Colour of particles whose field value is not finite.
const NAN_COLOR: [u8; 3] = [200, 60, 200];

/// The per-particle quantity that picks a particle's colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorField {
    /// `|v|` (m/s).
    #[default]
    Speed,
    /// Radius (m).
    Radius,
    /// `|Ω|` (rad/s).
    #[value(name = "angular_speed", alias = "angular-speed")]
    AngularSpeed,
    /// Number of contacts (`.vtp` frames only).
    #[value(name = "contact_count", alias = "contact-count")]
    ContactCount,
    /// `|F|`, the total force (N; `.vtp` frames only).
    Force,
    /// Particle id.
    Id,
    /// The sphere's body (a clump's spheres share it).
    #[value(name = "body_id", alias = "body-id")]
    BodyId,
    /// Position x (m).
    X,
    /// Position y (m).
    Y,
    /// Position z (m).
    Z,
    /// Broken bonds of the particle (issue 47; `.vtp` frames of scenes whose bonds can
    /// break): the cracks.
    #[value(name = "broken_bonds", alias = "broken-bonds")]
    BrokenBonds,
}

impl ColorField {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Speed => "speed",
            Self::Radius => "radius",
            Self::AngularSpeed => "angular_speed",
            Self::ContactCount => "contact_count",
            Self::Force => "force",
            Self::Id => "id",
            Self::BodyId => "body_id",
            Self::X => "x",
            Self::Y => "y",
            Self::Z => "z",
            Self::BrokenBonds => "broken_bonds",
        }
    }
}

/// The values of `field` for every particle of `frame`.
///
/// Fails, naming the field and the file, for `force`, `contact_count` and
/// `broken_bonds` when the frame does not hold them (`final.csv`, or a scene whose bonds
/// cannot break).
pub fn field_values(frame: &ParticleFrame, field: ColorField) -> Result<Vec<f64>> {
    let missing = || {
        Error::Render(format!(
            "--color {} needs a .vtp frame; {} does not hold it",
            field.name(),
            frame.source.display()
        ))
    };
    Ok(match field {
        ColorField::Speed => frame.velocity.iter().map(|v| v.length()).collect(),
        ColorField::Radius => frame.radius.clone(),
        ColorField::AngularSpeed => frame.angular_velocity.iter().map(|w| w.length()).collect(),
        ColorField::ContactCount => frame
            .contact_count
            .as_ref()
            .ok_or_else(missing)?
            .iter()
            .map(|&c| f64::from(c))
            .collect(),
        ColorField::Force => frame
            .force
            .as_ref()
            .ok_or_else(missing)?
            .iter()
            .map(|f| f.length())
            .collect(),
        ColorField::Id => frame.id.iter().map(|&i| f64::from(i)).collect(),
        ColorField::BodyId => frame.body_id.iter().map(|&i| f64::from(i)).collect(),
        ColorField::X => frame.position.iter().map(|p| p.x).collect(),
        ColorField::Y => frame.position.iter().map(|p| p.y).collect(),
        ColorField::Z => frame.position.iter().map(|p| p.z).collect(),
        ColorField::BrokenBonds => frame
            .broken_bonds
            .as_ref()
            .ok_or_else(missing)?
            .iter()
            .map(|&c| f64::from(c))
            .collect(),
    })
}

/// The colour (sRGB) of `t ∈ [0, 1]` on the viewer colormap (clamped).
pub fn colormap(t: f64) -> [u8; 3] {
    if t.is_nan() {
        return NAN_COLOR;
    }
    let x = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let k = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    std::array::from_fn(|c| {
        (f64::from(a[c]) + f * (f64::from(b[c]) - f64::from(a[c]))).round() as u8
    })
}

/// sRGB byte → linear intensity.
pub(super) fn to_linear(c: u8) -> f64 {
    let s = f64::from(c) / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear intensity → sRGB byte.
pub(super) fn to_srgb(l: f64) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let s = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round() as u8
}

pub(super) fn light_dir() -> DVec3 {
    DVec3::from_array(LIGHT).normalize()
}

/// The colour the renderer gives the point of a sphere of colour `rgb` that faces the
/// viewer (the centre of its disc): `rgb` in linear light times
/// `AMBIENT + (1 − AMBIENT) × (n · l)` with `n` towards the viewer.
pub fn lit_center_color(rgb: [u8; 3]) -> [u8; 3] {
    let lambert = DVec3::NEG_Z.dot(light_dir()).max(0.0);
    let shade = AMBIENT + (1.0 - AMBIENT) * lambert;
    rgb.map(|c| to_srgb(to_linear(c) * shade))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colormap_runs_from_purple_to_yellow() {
        assert_eq!(colormap(0.0), VIRIDIS[0]);
        assert_eq!(colormap(1.0), VIRIDIS[7]);
        assert_eq!(colormap(-3.0), VIRIDIS[0]);
        assert_eq!(colormap(2.0), VIRIDIS[7]);
        assert_eq!(colormap(f64::NAN), NAN_COLOR);
        let mid = colormap(0.5);
        assert!(mid[1] > mid[0] && mid[1] > 100, "{mid:?}");
    }

    #[test]
    fn srgb_round_trips_every_byte() {
        for c in 0..=255u8 {
            assert_eq!(to_srgb(to_linear(c)), c);
        }
    }
}
