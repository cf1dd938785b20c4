//! Triangle-mesh walls (issue 26): a validated, indexed triangle mesh in the scene's
//! frame, and its edges with the triangles that share them (a sphere sliding across a
//! shared edge must meet one contact, not two).
//!
//! Reading STL files is `io::stl`'s job; this type holds what was read once it is
//! placed (scaled, rotated, translated) and checked.

use std::collections::BTreeMap;

use glam::DVec3;

use super::Motion;

/// A triangle-mesh wall of a scene (`[[mesh]]`): the placed mesh at rest, what it is
/// made of, and how it moves.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshWall {
    /// The name given in the scene (`name`), else the file's stem; names the wall in
    /// errors and in `walls.csv`.
    pub name: String,
    /// The mesh, placed (scaled, turned, moved) at its rest pose.
    pub mesh: TriangleMesh,
    /// Material index under the Hertz law; `None`: rigid (`E, G → ∞`).
    pub material: Option<u32>,
    /// Contact stiffness `K^pp` against this mesh under the binder law (J).
    pub stiffness: f64,
    /// Prescribed motion (at rest by default).
    pub motion: Motion,
}

/// Why a mesh was refused, naming the vertex or triangle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeshError {
    /// No triangles.
    #[error("has no triangles")]
    Empty,
    /// A vertex with a NaN or infinite coordinate.
    #[error("vertex {vertex} has a non-finite coordinate {position:?}")]
    NonFinite {
        /// Its index.
        vertex: usize,
        /// Its coordinates.
        position: [f64; 3],
    },
    /// A triangle naming a vertex the mesh does not have.
    #[error("triangle {triangle} names vertex {vertex}, but the mesh has {count} vertices")]
    BadIndex {
        /// The triangle.
        triangle: usize,
        /// The index it names.
        vertex: u32,
        /// The vertices there are.
        count: usize,
    },
    /// A triangle with the same three corners as an earlier one (a sphere touching
    /// it would be pushed twice).
    #[error("triangle {triangle} repeats triangle {first} (corners {corners:?})")]
    Duplicate {
        /// The repeat.
        triangle: usize,
        /// The earlier one.
        first: usize,
        /// Their corner indices.
        corners: [u32; 3],
    },
    /// A triangle of (nearly) zero area: repeated or collinear corners.
    #[error(
        "triangle {triangle} is degenerate: area {area:.3e} m² for its longest edge of {edge:.3e} m (corners {corners:?})"
    )]
    Degenerate {
        /// The triangle.
        triangle: usize,
        /// Its area.
        area: f64,
        /// Its longest edge.
        edge: f64,
        /// Its corners.
        corners: [[f64; 3]; 3],
    },
}

/// A triangle's area below this fraction of its longest edge squared counts as zero:
/// the corners are collinear to rounding (the closest-point geometry divides by the
/// area).
pub const DEGENERATE_AREA: f64 = 1e-10;

/// A triangle mesh in the scene's frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TriangleMesh {
    /// Corner positions (m).
    pub vertices: Vec<DVec3>,
    /// Each triangle's corners, indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
}

impl TriangleMesh {
    /// The mesh of `vertices` and `triangles`, checked: at least one triangle, finite
    /// vertices, indices in range, no triangle twice (in any corner order), no
    /// degenerate triangle ([`DEGENERATE_AREA`]).
    pub fn new(vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> Result<Self, MeshError> {
        if triangles.is_empty() {
            return Err(MeshError::Empty);
        }
        if let Some((vertex, v)) = vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(MeshError::NonFinite {
                vertex,
                position: v.to_array(),
            });
        }
        let mesh = Self {
            vertices,
            triangles,
        };
        let mut seen = std::collections::HashMap::with_capacity(mesh.triangles.len());
        for (triangle, t) in mesh.triangles.iter().enumerate() {
            let mut sorted = *t;
            sorted.sort_unstable();
            if let Some(&first) = seen.get(&sorted) {
                return Err(MeshError::Duplicate {
                    triangle,
                    first,
                    corners: *t,
                });
            }
            seen.insert(sorted, triangle);
            if let Some(&vertex) = t.iter().find(|&&k| k as usize >= mesh.vertices.len()) {
                return Err(MeshError::BadIndex {
                    triangle,
                    vertex,
                    count: mesh.vertices.len(),
                });
            }
            let c = mesh.corners(triangle);
            let area = 0.5 * (c[1] - c[0]).cross(c[2] - c[0]).length();
            let edge = (0..3)
                .map(|k| (c[(k + 1) % 3] - c[k]).length())
                .fold(0.0, f64::max);
            // Finite corners: the area is a number.
            if area <= DEGENERATE_AREA * edge * edge {
                return Err(MeshError::Degenerate {
                    triangle,
                    area,
                    edge,
                    corners: c.map(|v| v.to_array()),
                });
            }
        }
        Ok(mesh)
    }

    /// The corners of triangle `t`.
    pub fn corners(&self, t: usize) -> [DVec3; 3] {
        self.triangles[t].map(|k| self.vertices[k as usize])
    }

    /// The unit normal of triangle `t` (right-handed in its corner order).
    pub fn normal(&self, t: usize) -> DVec3 {
        let [a, b, c] = self.corners(t);
        (b - a).cross(c - a).normalize()
    }

    /// Every edge `[i, j]` (`i < j`, vertex indices) with the triangles that share it,
    /// ascending: one triangle on a boundary, two inside a closed surface.
    pub fn edges(&self) -> BTreeMap<[u32; 2], Vec<u32>> {
        let mut edges: BTreeMap<[u32; 2], Vec<u32>> = BTreeMap::new();
        for (t, tri) in self.triangles.iter().enumerate() {
            for k in 0..3 {
                let (i, j) = (tri[k], tri[(k + 1) % 3]);
                edges
                    .entry([i.min(j), i.max(j)])
                    .or_default()
                    .push(t as u32);
            }
        }
        edges
    }

    /// The mesh placed in the scene: each vertex `x` becomes `R(α)(s x) + d`, with `α`
    /// the rotation vector of the scene format (`math::rodrigues`).
    pub fn placed(mut self, scale: f64, rotation: DVec3, translation: DVec3) -> Self {
        for v in &mut self.vertices {
            *v = crate::math::rodrigues::rotate(rotation, scale * *v) + translation;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> (Vec<DVec3>, Vec<[u32; 3]>) {
        (
            vec![DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Y],
            vec![[0, 1, 2], [0, 2, 3]],
        )
    }

    #[test]
    fn a_square_of_two_triangles_shares_its_diagonal() {
        let (v, t) = square();
        let m = TriangleMesh::new(v, t).unwrap();
        let e = m.edges();
        assert_eq!(e.len(), 5);
        assert_eq!(e[&[0, 2]], vec![0, 1]);
        assert_eq!(e[&[0, 1]], vec![0]);
        assert_eq!(m.normal(0), DVec3::Z);
        assert_eq!(m.normal(1), DVec3::Z);
    }

    #[test]
    fn bad_meshes_are_named_errors() {
        assert_eq!(TriangleMesh::new(vec![], vec![]), Err(MeshError::Empty));
        let (mut v, t) = square();
        v[2].y = f64::NAN;
        let e = TriangleMesh::new(v, t.clone()).unwrap_err();
        assert!(matches!(e, MeshError::NonFinite { vertex: 2, .. }), "{e}");
        let (v, _) = square();
        let e = TriangleMesh::new(v.clone(), vec![[0, 1, 7]]).unwrap_err();
        assert!(e.to_string().contains("names vertex 7"), "{e}");
        // Collinear corners, and a repeated corner.
        let e = TriangleMesh::new(vec![DVec3::ZERO, DVec3::X, 2.0 * DVec3::X], vec![[0, 1, 2]])
            .unwrap_err();
        assert!(
            matches!(e, MeshError::Degenerate { triangle: 0, .. }),
            "{e}"
        );
        let e = TriangleMesh::new(v.clone(), vec![[0, 1, 2], [0, 3, 3]]).unwrap_err();
        assert!(e.to_string().starts_with("triangle 1 is degenerate"), "{e}");
        // The same corners in another order (the other side of the same face).
        let e = TriangleMesh::new(v, vec![[0, 1, 2], [0, 2, 3], [2, 1, 0]]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "triangle 2 repeats triangle 0 (corners [2, 1, 0])"
        );
    }

    #[test]
    fn placement_scales_turns_and_moves() {
        let (v, t) = square();
        let m = TriangleMesh::new(v, t).unwrap();
        // A quarter turn about z: α = 2 tan(θ/2) ẑ with θ = π/2.
        let alpha = 2.0 * (std::f64::consts::FRAC_PI_4).tan() * DVec3::Z;
        let p = m.placed(2.0, alpha, DVec3::new(0.0, 0.0, 1.0));
        assert!((p.vertices[1] - DVec3::new(0.0, 2.0, 1.0)).length() < 1e-15);
        assert!((p.normal(0) - DVec3::Z).length() < 1e-15);
    }
}
