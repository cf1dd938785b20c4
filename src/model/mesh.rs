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
    /// The name given in the scene (`name`), else the file's stem made of the allowed
    /// characters (ASCII letters, digits, `_ - .`), else `mesh[k]`; names the wall in
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
    /// A triangle two of whose corners are within the welding tolerance of each other
    /// ([`TriangleMesh::welded`]): welded into one vertex, it has no area.
    #[error(
        "triangle {triangle} has corners {a:?} and {b:?} within the welding tolerance {tol:.3e} of each other: welded into one, they leave the triangle no area"
    )]
    Collapsed {
        /// The triangle.
        triangle: usize,
        /// One of the two corners.
        a: [f64; 3],
        /// The other.
        b: [f64; 3],
        /// The welding tolerance.
        tol: f64,
    },
    /// A triangle whose corners, once welded ([`TriangleMesh::welded`]), are an earlier
    /// triangle's in some order: the same face given twice, through copied vertices or
    /// corners a rounding step apart.
    #[error(
        "triangle {triangle} repeats triangle {first}: with corners within {tol:.3e} of each other welded, both are the triangle {corners:?} (in some order), and a sphere touching it would be pushed twice"
    )]
    Coincident {
        /// The repeat.
        triangle: usize,
        /// The earlier one.
        first: usize,
        /// Their corners, welded.
        corners: [[f64; 3]; 3],
        /// The welding tolerance.
        tol: f64,
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

/// Vertices closer than this fraction of a mesh's size are one vertex
/// ([`TriangleMesh::weld_tolerance`]). Coordinates stored as `f32` (STL) are exact to
/// about 6e-8 of their magnitude, so corners that an exporter meant to share but wrote
/// a rounding step apart weld, while a genuine feature a millionth of the mesh's size
/// is far below anything a sphere of the scene could resolve.
pub const WELD_TOLERANCE: f64 = 1e-6;

/// A triangle mesh in the scene's frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TriangleMesh {
    /// Corner positions (m).
    pub vertices: Vec<DVec3>,
    /// Each triangle's corners, indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
}

/// The checks of a mesh's input that need no geometry, shared by
/// [`TriangleMesh::new`] and [`TriangleMesh::welded`]: a triangle at least, finite
/// vertices, indices in range.
fn check_input(vertices: &[DVec3], triangles: &[[u32; 3]]) -> Result<(), MeshError> {
    if triangles.is_empty() {
        return Err(MeshError::Empty);
    }
    if let Some((vertex, v)) = vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(MeshError::NonFinite {
            vertex,
            position: v.to_array(),
        });
    }
    for (triangle, t) in triangles.iter().enumerate() {
        if let Some(&vertex) = t.iter().find(|&&k| k as usize >= vertices.len()) {
            return Err(MeshError::BadIndex {
                triangle,
                vertex,
                count: vertices.len(),
            });
        }
    }
    Ok(())
}

impl TriangleMesh {
    /// The mesh of `vertices` and `triangles`, checked: at least one triangle, finite
    /// vertices, indices in range, no triangle twice (in any corner order), no
    /// degenerate triangle ([`DEGENERATE_AREA`]).
    pub fn new(vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> Result<Self, MeshError> {
        check_input(&vertices, &triangles)?;
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

    /// The welding tolerance of a mesh with these vertices: [`WELD_TOLERANCE`] × R, with
    /// R the largest distance of a vertex from the first (`vertices[0]`). R lies between
    /// half the mesh's diameter and all of it; unlike a bounding box's diagonal it does
    /// not change when the mesh is turned, and welding never raises it (the first vertex
    /// is kept, the others kept are among the originals), so a welded mesh written back
    /// placed (`scene_to_toml`) welds to itself when read again. 0 for no vertices.
    pub fn weld_tolerance(vertices: &[DVec3]) -> f64 {
        let Some(&first) = vertices.first() else {
            return 0.0;
        };
        let r = vertices
            .iter()
            .map(|v| (*v - first).length())
            .fold(0.0, f64::max);
        WELD_TOLERANCE * r
    }

    /// The mesh of `vertices` and `triangles` with vertices within `tol` of each other
    /// welded, then checked as by [`TriangleMesh::new`].
    ///
    /// Welding merges each cluster of vertices linked by distances `≤ tol` into its
    /// first vertex (lowest index, coordinates kept as given, not averaged); the vertices
    /// kept stay in their order and triangles in theirs, re-indexed. Vertices no triangle
    /// names are welded and kept like the others. A triangle with two corners welded
    /// together is [`MeshError::Collapsed`], one that welds onto an earlier triangle (in
    /// any corner order: either side of the same face) is [`MeshError::Coincident`]. The
    /// vertices are hashed into cells of side `tol`, so this takes time linear in their
    /// number unless many crowd within `tol` of one another.
    pub fn welded(
        vertices: Vec<DVec3>,
        triangles: Vec<[u32; 3]>,
        tol: f64,
    ) -> Result<Self, MeshError> {
        check_input(&vertices, &triangles)?;
        let root = weld_roots(&vertices, tol);
        let mut seen: std::collections::HashMap<[u32; 3], usize> =
            std::collections::HashMap::with_capacity(triangles.len());
        for (triangle, t) in triangles.iter().enumerate() {
            let w = t.map(|k| root[k as usize]);
            for k in 0..3 {
                let (i, j) = (k, (k + 1) % 3);
                if w[i] == w[j] && t[i] != t[j] {
                    return Err(MeshError::Collapsed {
                        triangle,
                        a: vertices[t[i] as usize].to_array(),
                        b: vertices[t[j] as usize].to_array(),
                        tol,
                    });
                }
            }
            let mut sorted = w;
            sorted.sort_unstable();
            if let Some(&first) = seen.get(&sorted) {
                if w != *t || triangles[first] != triangles[first].map(|k| root[k as usize]) {
                    return Err(MeshError::Coincident {
                        triangle,
                        first,
                        corners: w.map(|k| vertices[k as usize].to_array()),
                        tol,
                    });
                }
                // The same indices, nothing welded: the plain repeat `new` names.
                return Err(MeshError::Duplicate {
                    triangle,
                    first,
                    corners: *t,
                });
            }
            seen.insert(sorted, triangle);
        }
        // Keep the roots, in order; re-index the triangles onto them.
        let mut index = vec![u32::MAX; vertices.len()];
        let mut kept = Vec::with_capacity(vertices.len());
        for (i, v) in vertices.iter().enumerate() {
            if root[i] as usize == i {
                index[i] = kept.len() as u32;
                kept.push(*v);
            }
        }
        let triangles = triangles
            .iter()
            .map(|t| t.map(|k| index[root[k as usize] as usize]))
            .collect();
        Self::new(kept, triangles)
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

/// For each vertex, the lowest index of its cluster: the vertices linked to it by
/// chains of distances `≤ tol` (union-find over the pairs found in neighbouring grid
/// cells of side `tol`). Only exact copies weld when `tol` is 0 (or not a finite
/// positive number). The vertices are finite.
fn weld_roots(vertices: &[DVec3], tol: f64) -> Vec<u32> {
    let n = vertices.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    if n == 0 {
        return parent;
    }
    let grid_on = tol > 0.0 && tol.is_finite();
    fn find(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            let up = parent[parent[i as usize] as usize];
            parent[i as usize] = up;
            i = up;
        }
        i
    }
    // Cells relative to the first vertex: every vertex lies within R = tol / WELD_TOLERANCE
    // of it when `tol` is the mesh's own, so the cell indices stay near ±1e6; a larger
    // `tol` only makes them smaller, and saturating casts keep any other value in range.
    let origin = vertices[0];
    let cell = |v: DVec3| {
        let c = ((v - origin) / tol).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    };
    let mut exact: std::collections::HashMap<[u64; 3], u32> =
        std::collections::HashMap::with_capacity(n);
    let mut grid: std::collections::HashMap<[i64; 3], Vec<u32>> =
        std::collections::HashMap::with_capacity(n);
    for (i, &v) in vertices.iter().enumerate() {
        let i = i as u32;
        // A copy of an earlier vertex joins it; its neighbours are that vertex's (`+ 0.0`
        // makes −0 and +0 one key).
        let bits = (v + DVec3::ZERO).to_array().map(f64::to_bits);
        if let Some(&j) = exact.get(&bits) {
            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
            parent[a.max(b) as usize] = a.min(b);
            continue;
        }
        exact.insert(bits, i);
        if !grid_on {
            continue;
        }
        let c = cell(v);
        for dx in -1..=1i64 {
            for dy in -1..=1i64 {
                for dz in -1..=1i64 {
                    let key = [
                        c[0].saturating_add(dx),
                        c[1].saturating_add(dy),
                        c[2].saturating_add(dz),
                    ];
                    let Some(near) = grid.get(&key) else {
                        continue;
                    };
                    for &j in near {
                        if (v - vertices[j as usize]).length() <= tol {
                            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                            parent[a.max(b) as usize] = a.min(b);
                        }
                    }
                }
            }
        }
        grid.entry(c).or_default().push(i);
    }
    (0..n as u32).map(|i| find(&mut parent, i)).collect()
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

    /// The square with its diagonal's corners given again (triangle 1 names copies).
    fn seam(offset: DVec3) -> (Vec<DVec3>, Vec<[u32; 3]>) {
        let (mut v, _) = square();
        v.push(v[0] + offset);
        v.push(v[2] - offset);
        (v, vec![[0, 1, 2], [4, 5, 3]])
    }

    #[test]
    fn welding_merges_corners_within_the_tolerance_and_keeps_the_rest() {
        let (v, _) = square();
        // R = |(1, 1, 0) − 0| = √2.
        let tol = TriangleMesh::weld_tolerance(&v);
        assert_eq!(tol, WELD_TOLERANCE * 2f64.sqrt());
        // Turned and moved, the tolerance is the same (to rounding).
        let turned: Vec<DVec3> = v
            .iter()
            .map(|&x| crate::math::rodrigues::rotate(DVec3::new(0.3, -0.7, 1.1), x) + DVec3::X)
            .collect();
        assert!((TriangleMesh::weld_tolerance(&turned) - tol).abs() < 1e-15 * tol);
        // Copies a hair apart (a third of the tolerance) weld: 4 vertices, one shared
        // diagonal; the first of each pair is kept as given.
        let (v, t) = seam(DVec3::new(tol / 3.0, 0.0, 0.0));
        let m = TriangleMesh::welded(v.clone(), t.clone(), tol).unwrap();
        assert_eq!(m.vertices, square().0);
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(m.edges()[&[0, 2]], vec![0, 1], "one edge over the seam");
        // Twice the tolerance apart, they stay apart: two diagonals.
        let (v, t) = seam(DVec3::new(2.0 * tol, 0.0, 0.0));
        let m = TriangleMesh::welded(v, t, tol).unwrap();
        assert_eq!(m.vertices.len(), 6);
        assert_eq!(m.edges().values().filter(|s| s.len() == 2).count(), 0);
        // Welding a welded mesh changes nothing.
        let again = TriangleMesh::welded(
            m.vertices.clone(),
            m.triangles.clone(),
            TriangleMesh::weld_tolerance(&m.vertices),
        )
        .unwrap();
        assert_eq!(again, m);
        // Chains weld whole: 0 – 4 – 5 each 0.6 tol apart, 1.2 tol end to end.
        let mut v = square().0;
        v.push(DVec3::new(0.6 * tol, 0.0, 0.0));
        v.push(DVec3::new(1.2 * tol, 0.0, 0.0));
        let m = TriangleMesh::welded(v, vec![[5, 1, 2], [4, 2, 3]], tol).unwrap();
        assert_eq!(m.vertices, square().0);
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        // Tolerance 0: exact copies weld, nothing else does.
        let (v, t) = seam(DVec3::ZERO);
        let m = TriangleMesh::welded(v, t, 0.0).unwrap();
        assert_eq!(m.vertices, square().0);
        let (v, t) = seam(DVec3::new(1e-12, 0.0, 0.0));
        assert_eq!(TriangleMesh::welded(v, t, 0.0).unwrap().vertices.len(), 6);
    }

    #[test]
    fn welding_refuses_repeated_and_collapsed_triangles() {
        let (mut v, _) = square();
        let tol = TriangleMesh::weld_tolerance(&v);
        // Triangle 2 repeats triangle 0 through a copied vertex (index 4 = 0), turned over.
        v.push(v[0]);
        let e = TriangleMesh::welded(v.clone(), vec![[0, 1, 2], [0, 2, 3], [2, 1, 4]], tol)
            .unwrap_err();
        assert!(
            matches!(
                e,
                MeshError::Coincident {
                    triangle: 2,
                    first: 0,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("triangle 2 repeats triangle 0"),
            "{e}"
        );
        // A copy a rounding step away does the same.
        v[4].x = f64::from_bits(1);
        let e = TriangleMesh::welded(v.clone(), vec![[0, 1, 2], [4, 1, 2]], tol).unwrap_err();
        assert!(
            matches!(
                e,
                MeshError::Coincident {
                    triangle: 1,
                    first: 0,
                    ..
                }
            ),
            "{e}"
        );
        // Without a weld, the same indices again are the plain repeat.
        let e = TriangleMesh::welded(v.clone(), vec![[0, 1, 2], [1, 2, 0]], tol).unwrap_err();
        assert!(
            matches!(
                e,
                MeshError::Duplicate {
                    triangle: 1,
                    first: 0,
                    ..
                }
            ),
            "{e}"
        );
        // Two corners within the tolerance: the triangle collapses.
        let e = TriangleMesh::welded(v, vec![[0, 1, 2], [0, 3, 4]], tol).unwrap_err();
        assert!(matches!(e, MeshError::Collapsed { triangle: 1, .. }), "{e}");
        assert!(
            e.to_string().contains("within the welding tolerance"),
            "{e}"
        );
        // The checks of `new` come first.
        assert_eq!(
            TriangleMesh::welded(vec![], vec![], 1.0),
            Err(MeshError::Empty)
        );
        let e = TriangleMesh::welded(square().0, vec![[0, 1, 9]], 1e-6).unwrap_err();
        assert!(matches!(e, MeshError::BadIndex { vertex: 9, .. }), "{e}");
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
