//! The camera: the view directions, the orthographic camera that frames every particle
//! of a frame, and the view-space and pixel coordinates of a point.

use glam::DVec3;

use crate::error::{Error, Result};

/// Fraction of the picture left as a margin around the particles, on each side.
const MARGIN: f64 = 0.04;

/// The direction the camera looks from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// Along the axis in which the particles are thinnest, when they are clearly
    /// thinner in one axis than in the others (a ring, a layer); else `iso`.
    #[default]
    Auto,
    /// From +x, z up.
    X,
    /// From −y, z up.
    Y,
    /// From +z, y up.
    Z,
    /// From (+1, −1, +1), z up.
    Iso,
}

impl View {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::X => "x",
            Self::Y => "y",
            Self::Z => "z",
            Self::Iso => "iso",
        }
    }
}

/// An orthographic camera: a view basis, the centre of the framed box and its half
/// extents (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Centre of the view.
    pub center: DVec3,
    /// Unit vector to the right of the picture.
    pub right: DVec3,
    /// Unit vector to the top of the picture.
    pub up: DVec3,
    /// Unit viewing direction (away from the viewer).
    pub forward: DVec3,
    /// Half the width of the view (m).
    pub half_width: f64,
    /// Half the height of the view (m).
    pub half_height: f64,
    /// Nearest view-space depth (m, relative to `center`).
    pub near: f64,
    /// Farthest view-space depth (m, relative to `center`).
    pub far: f64,
    /// Picture width (pixels).
    pub width: u32,
    /// Picture height (pixels).
    pub height: u32,
    /// The view it was made for (never `Auto`).
    pub view: View,
}

/// `(right, up, forward)` of a view.
fn basis(view: View) -> (DVec3, DVec3, DVec3) {
    match view {
        View::X => (DVec3::Y, DVec3::Z, DVec3::NEG_X),
        View::Y => (DVec3::X, DVec3::Z, DVec3::Y),
        View::Z | View::Auto => (DVec3::X, DVec3::Y, DVec3::NEG_Z),
        View::Iso => {
            let forward = -DVec3::new(1.0, -1.0, 1.0).normalize();
            let up = (DVec3::Z - DVec3::Z.dot(forward) * forward).normalize();
            // right × up = −forward, as for the axis views.
            (forward.cross(up), up, forward)
        }
    }
}

impl Camera {
    /// The camera that looks at spheres at `position` with `radius` from `view` and
    /// frames all of them in a `width × height` picture with a small margin.
    ///
    /// Fails when there is no particle or a position is not finite.
    pub fn framing(
        position: &[DVec3],
        radius: &[f64],
        view: View,
        width: u32,
        height: u32,
    ) -> Result<Self> {
        if position.is_empty() {
            return Err(Error::Render("the frame has no particle".into()));
        }
        if let Some(i) = position.iter().position(|p| !p.is_finite()) {
            return Err(Error::Render(format!(
                "particle {i} has a non-finite position {}",
                position[i]
            )));
        }
        let r = |i: usize| radius.get(i).copied().unwrap_or(0.0).max(0.0);
        let bounds = |axis: DVec3| {
            (0..position.len()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
                let d = position[i].dot(axis);
                (lo.min(d - r(i)), hi.max(d + r(i)))
            })
        };
        let view = match view {
            View::Auto => auto_view(|axis| {
                let (lo, hi) = bounds(axis);
                hi - lo
            }),
            v => v,
        };
        let (right, up, forward) = basis(view);
        let (x0, x1) = bounds(right);
        let (y0, y1) = bounds(up);
        let (z0, z1) = bounds(forward);
        let center = right * (x0 + x1) / 2.0 + up * (y0 + y1) / 2.0 + forward * (z0 + z1) / 2.0;
        let aspect = f64::from(width.max(1)) / f64::from(height.max(1));
        // Tiny or zero extents (one particle of radius 0) still get a view.
        let mut half_width = ((x1 - x0) / 2.0).max(1e-12) / (1.0 - 2.0 * MARGIN);
        let mut half_height = ((y1 - y0) / 2.0).max(1e-12) / (1.0 - 2.0 * MARGIN);
        if half_width / half_height < aspect {
            half_width = half_height * aspect;
        } else {
            half_height = half_width / aspect;
        }
        let depth = ((z1 - z0) / 2.0).max(1e-12);
        Ok(Self {
            center,
            right,
            up,
            forward,
            half_width,
            half_height,
            // A margin so the nearest and farthest surfaces are not clipped by rounding.
            near: -1.01 * depth,
            far: 1.01 * depth,
            width,
            height,
            view,
        })
    }

    /// View-space coordinates of `p` (x right, y up, z away from the viewer), relative
    /// to the centre.
    pub fn to_view(&self, p: DVec3) -> DVec3 {
        let d = p - self.center;
        DVec3::new(d.dot(self.right), d.dot(self.up), d.dot(self.forward))
    }

    /// Pixel coordinates (x right, y down, pixel centres at half-integers) of `p`.
    pub fn pixel(&self, p: DVec3) -> (f64, f64) {
        let v = self.to_view(p);
        (
            (v.x / self.half_width + 1.0) / 2.0 * f64::from(self.width),
            (1.0 - v.y / self.half_height) / 2.0 * f64::from(self.height),
        )
    }

    /// Radius of a sphere of radius `r` in pixels.
    pub fn pixels_per_metre(&self) -> f64 {
        f64::from(self.width) / (2.0 * self.half_width)
    }
}

/// `View::Auto`: along the thinnest axis if it is at most half the middle extent.
fn auto_view(extent: impl Fn(DVec3) -> f64) -> View {
    let mut axes = [
        (extent(DVec3::Z), View::Z),
        (extent(DVec3::Y), View::Y),
        (extent(DVec3::X), View::X),
    ];
    // Stable: on ties z is preferred, then y.
    axes.sort_by(|a, b| a.0.total_cmp(&b.0));
    if axes[0].0 <= 0.5 * axes[1].0 {
        axes[0].1
    } else {
        View::Iso
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_camera_frames_every_sphere() {
        let p = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(4.0, 2.0, 0.1)];
        let r = [0.5, 0.5];
        let cam = Camera::framing(&p, &r, View::Auto, 400, 200).unwrap();
        // Flat in z: looked at from +z, x to the right, y up.
        assert_eq!(cam.view, View::Z);
        let (x0, y0) = cam.pixel(p[0]);
        let (x1, y1) = cam.pixel(p[1]);
        assert!(x0 < x1 && y1 < y0, "{x0},{y0} {x1},{y1}");
        for (i, q) in p.iter().enumerate() {
            let (x, y) = cam.pixel(*q);
            let rp = r[i] * cam.pixels_per_metre();
            assert!(x - rp >= 0.0 && x + rp <= 400.0 && y - rp >= 0.0 && y + rp <= 200.0);
        }
        // Square pixels.
        assert!((cam.half_width / cam.half_height - 2.0).abs() < 1e-12);
        for view in [View::X, View::Y, View::Z, View::Iso] {
            let (right, up, forward) = basis(view);
            assert!((right.cross(up) + forward).length() < 1e-12, "{view:?}");
        }
        assert!(Camera::framing(&[], &[], View::Auto, 10, 10).is_err());
    }

    #[test]
    fn auto_view_looks_along_the_thin_axis() {
        assert_eq!(
            auto_view(|a| if a == DVec3::X { 0.1 } else { 1.0 }),
            View::X
        );
        assert_eq!(
            auto_view(|a| if a == DVec3::Y { 0.1 } else { 1.0 }),
            View::Y
        );
        assert_eq!(auto_view(|_| 1.0), View::Iso);
    }
}
