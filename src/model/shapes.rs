//! Generated mesh walls: a cylinder, optionally with the half on one side replaced by
//! its bounding box (Preclik, Eibl & Rüde §4.3's obstacle: "the right half of the
//! cylinder is replaced by a box"), as a closed prism of triangles.

use glam::DVec3;

use super::mesh::{MeshError, TriangleMesh};

/// A cylinder (`[[mesh]] cylinder = { ... }`): its axis through `center` along `axis`,
/// `length` long (centred on `center`), of `radius`, its round part faceted by
/// `segments` sides over a full turn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// The centre of the axis (m).
    pub center: DVec3,
    /// Unit axis.
    pub axis: DVec3,
    /// Radius (m).
    pub radius: f64,
    /// Length along the axis (m).
    pub length: f64,
    /// Facets over a full turn (≥ 8; a multiple of 4 with `box_side`).
    pub segments: u32,
    /// The unit direction (perpendicular to the axis) whose half of the cylinder is
    /// its bounding box's: the cross-section is a half disc and a square, a "D".
    pub box_side: Option<DVec3>,
}

impl Cylinder {
    /// The cross-section's corners in order around the axis, in the plane frame `(e1,
    /// e2)` with `e1` = `box_side` when given. The facets' corners lie on the circle,
    /// so the faceted surface lies within `r (1 − cos(π/segments))` inside it.
    fn outline(&self) -> (DVec3, DVec3, Vec<(f64, f64)>) {
        let e1 = match self.box_side {
            Some(s) => s,
            None => self.axis.any_orthonormal_vector(),
        };
        let e2 = self.axis.cross(e1);
        let n = self.segments as usize;
        let r = self.radius;
        let at = |k: usize| {
            let phi = std::f64::consts::TAU * k as f64 / n as f64;
            (r * phi.cos(), r * phi.sin())
        };
        let points = match self.box_side {
            None => (0..n).map(at).collect(),
            // From +e2 (a quarter turn) round the far side to −e2, then the box's two
            // corners on the +e1 side.
            Some(_) => {
                let mut p: Vec<(f64, f64)> = (n / 4..=3 * n / 4).map(at).collect();
                // The quarter-turn points exactly on the axes, as the box's edges are.
                p[0] = (0.0, r);
                let last = p.len() - 1;
                p[last] = (0.0, -r);
                p.push((r, -r));
                p.push((r, r));
                p
            }
        };
        (e1, e2, points)
    }

    /// The closed prism: a quad (two triangles) per side facet and a fan per end cap
    /// (the cross-section is convex).
    pub fn mesh(&self) -> Result<TriangleMesh, MeshError> {
        let (e1, e2, outline) = self.outline();
        let m = outline.len() as u32;
        let half = 0.5 * self.length * self.axis;
        let mut vertices = Vec::with_capacity(2 * outline.len() + 2);
        for end in [-half, half] {
            for &(a, b) in &outline {
                vertices.push(self.center + end + a * e1 + b * e2);
            }
        }
        // The caps' centres.
        vertices.push(self.center - half);
        vertices.push(self.center + half);
        let (c0, c1) = (2 * m, 2 * m + 1);
        let mut triangles = Vec::with_capacity(4 * outline.len());
        for k in 0..m {
            let next = (k + 1) % m;
            triangles.push([k, next, m + next]);
            triangles.push([k, m + next, m + k]);
            triangles.push([c0, next, k]);
            triangles.push([c1, m + k, m + next]);
        }
        TriangleMesh::new(vertices, triangles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d_shape(segments: u32) -> Cylinder {
        Cylinder {
            center: DVec3::new(0.04, 0.04, 0.01),
            axis: DVec3::Z,
            radius: 0.01,
            length: 0.02,
            segments,
            box_side: Some(DVec3::X),
        }
    }

    #[test]
    fn the_d_shape_is_a_half_disc_and_its_box() {
        let c = d_shape(128);
        let mesh = c.mesh().unwrap();
        // 65 points of the half circle and two box corners, at both ends, and the two
        // cap centres; four triangles per outline edge.
        assert_eq!(mesh.vertices.len(), 2 * 67 + 2);
        assert_eq!(mesh.triangles.len(), 4 * 67);
        for v in &mesh.vertices {
            let d = *v - c.center;
            // Within the paper's region [3, 5] × [3, 5] × [0, 2] cm.
            assert!(v.x >= 0.03 - 1e-15 && v.x <= 0.05 + 1e-15, "{v}");
            assert!(v.y >= 0.03 - 1e-15 && v.y <= 0.05 + 1e-15, "{v}");
            assert!(v.z >= -1e-15 && v.z <= 0.02 + 1e-15, "{v}");
            // Round on the upstream side (x < 4 cm): on the circle, or a cap centre.
            if d.x < -1e-12 {
                let rho = (d.x * d.x + d.y * d.y).sqrt();
                assert!((rho - 0.01).abs() < 1e-15, "{v}");
            }
        }
        // The area of the side: the faceted half circle's perimeter plus the box
        // sides (r, 2r, r), times the length.
        let area: f64 = mesh
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| mesh.vertices[k as usize]);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum();
        let chord = 2.0 * 0.01 * (std::f64::consts::PI / 128.0).sin();
        let side = (64.0 * chord + 4.0 * 0.01) * 0.02;
        let caps =
            2.0 * (0.5 * 64.0 * 0.01 * 0.01 * (std::f64::consts::TAU / 128.0).sin() + 0.01 * 0.02);
        assert!(
            (area - side - caps).abs() < 1e-15,
            "{area} vs {}",
            side + caps
        );
    }

    #[test]
    fn a_full_cylinder_is_round_all_round() {
        let c = Cylinder {
            box_side: None,
            ..d_shape(64)
        };
        let mesh = c.mesh().unwrap();
        assert_eq!(mesh.vertices.len(), 2 * 64 + 2);
        for v in &mesh.vertices[..128] {
            let d = *v - c.center;
            assert!(((d.x * d.x + d.y * d.y).sqrt() - 0.01).abs() < 1e-15);
        }
    }
}
