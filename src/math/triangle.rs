//! The closest point of a triangle to a point, and the feature (vertex, edge or face)
//! it lies on: the geometry of a sphere–triangle contact (mesh walls, issue 26).
//!
//! Ericson, *Real-Time Collision Detection* (2005), §5.1.5: the point's Voronoi region
//! of the triangle is found from six dot products, and the closest point from the
//! region's barycentric coordinates, without a square root or a normal.

use glam::DVec3;

/// The feature of a triangle `[a, b, c]` a closest point lies on. Edge `k` joins
/// corner `k` and corner `(k + 1) % 3` (edge 0 is `ab`, 1 is `bc`, 2 is `ca`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// A corner (0, 1 or 2).
    Vertex(u8),
    /// The inside of an edge (0, 1 or 2).
    Edge(u8),
    /// The inside of the face.
    Face,
}

/// The point of triangle `[a, b, c]` closest to `p`, and the feature it lies on.
///
/// The triangle must not be degenerate (zero area): [`crate::model::TriangleMesh`]
/// rejects such triangles, and here they would divide by zero in the face region. A
/// point on the boundary between two regions is given to the lower-dimensional
/// feature (a corner before an edge, an edge before the face).
pub fn closest_point(p: DVec3, [a, b, c]: [DVec3; 3]) -> (DVec3, Feature) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Feature::Vertex(0));
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + v * ab, Feature::Edge(0));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + w * ac, Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + w * (c - b), Feature::Edge(1));
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    (a + v * ab + w * ac, Feature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The closest point of segment `[a, b]` to `p`.
    fn on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
        let d = b - a;
        let t = ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0);
        a + t * d
    }

    /// An independent reference: the projection onto the plane when its barycentric
    /// coordinates (from the 2×2 normal equations) are all positive, else the closest
    /// of the three edges' closest points.
    fn brute(p: DVec3, [a, b, c]: [DVec3; 3]) -> DVec3 {
        let (e0, e1) = (b - a, c - a);
        let (g00, g01, g11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
        let (r0, r1) = (e0.dot(p - a), e1.dot(p - a));
        let det = g00 * g11 - g01 * g01;
        let v = (g11 * r0 - g01 * r1) / det;
        let w = (g00 * r1 - g01 * r0) / det;
        if v > 0.0 && w > 0.0 && v + w < 1.0 {
            return a + v * e0 + w * e1;
        }
        [
            on_segment(p, a, b),
            on_segment(p, b, c),
            on_segment(p, c, a),
        ]
        .into_iter()
        .min_by(|x, y| (*x - p).length().total_cmp(&(*y - p).length()))
        .unwrap()
    }

    fn v3() -> impl Strategy<Value = DVec3> {
        (-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    proptest! {
        /// The closest point matches the reference to rounding (1e-12 of the scene's
        /// unit size), lies on the triangle's plane, and its feature agrees with where
        /// it is: a corner, a point of an edge's line, or an inside point.
        #[test]
        fn closest_point_matches_a_reference(p in v3(), a in v3(), b in v3(), c in v3()) {
            let area = (b - a).cross(c - a).length();
            prop_assume!(area > 1e-3);
            let t = [a, b, c];
            let (q, f) = closest_point(p, t);
            let r = brute(p, t);
            prop_assert!((q - p).length() <= (r - p).length() + 1e-12, "{q} {r}");
            prop_assert!((q - r).length() <= 1e-9, "{q} {r} {f:?}");
            match f {
                Feature::Vertex(k) => prop_assert_eq!(q, t[k as usize]),
                Feature::Edge(k) => {
                    let (u, w) = (t[k as usize], t[(k as usize + 1) % 3]);
                    prop_assert!((w - u).cross(q - u).length() <= 1e-12 * (w - u).length());
                }
                Feature::Face => {
                    let n = (b - a).cross(c - a).normalize();
                    prop_assert!(((q - a).dot(n)).abs() <= 1e-12);
                    prop_assert!(((p - q).cross(n)).length() <= 1e-9);
                }
            }
        }
    }

    #[test]
    fn regions_of_a_right_triangle() {
        let t = [DVec3::ZERO, DVec3::X, DVec3::Y];
        let cases = [
            (
                DVec3::new(0.2, 0.2, 1.0),
                DVec3::new(0.2, 0.2, 0.0),
                Feature::Face,
            ),
            (DVec3::new(-1.0, -1.0, 0.5), DVec3::ZERO, Feature::Vertex(0)),
            (DVec3::new(2.0, -0.5, 0.0), DVec3::X, Feature::Vertex(1)),
            (DVec3::new(-0.1, 3.0, 0.0), DVec3::Y, Feature::Vertex(2)),
            (
                DVec3::new(0.5, -1.0, 0.0),
                DVec3::new(0.5, 0.0, 0.0),
                Feature::Edge(0),
            ),
            (
                DVec3::new(1.0, 1.0, 0.0),
                DVec3::new(0.5, 0.5, 0.0),
                Feature::Edge(1),
            ),
            (
                DVec3::new(-2.0, 0.25, 0.0),
                DVec3::new(0.0, 0.25, 0.0),
                Feature::Edge(2),
            ),
        ];
        for (p, want, feature) in cases {
            let (q, f) = closest_point(p, t);
            assert_eq!(f, feature, "{p}");
            assert!((q - want).length() < 1e-15, "{p}: {q}");
        }
    }
}
