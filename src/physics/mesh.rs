//! Sphere–triangle-mesh contact geometry (issue 26): every mesh of a model placed at one
//! time ([`MeshSurfaces`]), and the contacts one sphere makes with them
//! ([`MeshSurfaces::contacts`]), each on one *feature* — a face, an edge or a vertex —
//! named by a key that both triangles of a shared edge (and every triangle around a
//! shared vertex) agree on.
//!
//! The rule that gives one contact per touching feature, with no double force where
//! triangles meet: the closest point of each nearby triangle is found with its feature
//! ([`closest_point`]); a face point is a contact; an edge or vertex point is a contact
//! only when *every* triangle that contains that edge or vertex finds its closest point
//! there too (the point is then a local minimum of the distance to the whole surface,
//! not the rim of a triangle whose neighbour is nearer), and it is emitted once, by the
//! feature's owner (the lowest-numbered triangle that contains it), at a point computed
//! from the feature alone. A sphere over a flat mesh thus meets exactly one contact
//! wherever it is, face, edge or vertex, as it would meet the plane; at a convex edge
//! or corner one; in a concave corner one per face it touches.
//!
//! Keys: `8 t + l` for triangle `t`, with `l = 0` its face, `1 + k` its edge `k`
//! (corners `k`, `k + 1`) and `4 + k` its corner `k`, edges and corners named by their
//! owner.

use glam::DVec3;

use crate::math::triangle::{closest_point, Feature};
use crate::model::{MeshWall, Pose};

/// Key of feature `local` (0 face, 1–3 edges, 4–6 corners) of triangle `t`.
#[inline]
pub fn feature_key(t: u32, local: u32) -> u32 {
    8 * t + local
}

/// The most triangles all meshes of a model may have together (keys are `8 t + l` in
/// 32 bits).
pub const MAX_TRIANGLES: usize = (u32::MAX / 8) as usize;

/// One contact of a sphere with a mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshContact {
    /// The feature's key.
    pub key: u32,
    /// The mesh it belongs to.
    pub mesh: u32,
    /// The closest point of the feature (m).
    pub point: DVec3,
    /// Distance from the sphere's centre to `point` (m), > 0.
    pub distance: f64,
    /// Unit vector from the sphere's centre to `point`.
    pub normal: DVec3,
}

/// A triangle's plane `n·x = d` (unit `n`) and, for each edge `k`, its in-plane
/// outward unit normal `m_k` and offset `o_k` (`m_k·x − o_k` is the signed distance
/// of `x`'s projection beyond the edge). `|n·x − d|² + max(0, max_k(m_k·x − o_k))²` is a
/// lower bound on the squared distance from `x` to the triangle: exact over the face
/// and beside an edge, smaller near a corner.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Planes {
    n: DVec3,
    d: f64,
    m: [DVec3; 3],
    o: [f64; 3],
}

impl Planes {
    fn new([a, b, c]: [DVec3; 3]) -> Self {
        let n = (b - a).cross(c - a).normalize();
        let corner = [a, b, c];
        let mut m = [DVec3::ZERO; 3];
        let mut o = [0.0; 3];
        for k in 0..3 {
            let (p, q) = (corner[k], corner[(k + 1) % 3]);
            // (q − p) × n points out of a right-handed triangle.
            m[k] = (q - p).cross(n).normalize();
            o[k] = m[k].dot(p);
        }
        Self {
            n,
            d: n.dot(a),
            m,
            o,
        }
    }

    /// The height of `x` above the plane and how far its projection lies beyond the
    /// farthest edge line (≤ 0 inside the triangle).
    #[inline]
    fn height_and_outside(&self, x: DVec3) -> (f64, f64) {
        let h = self.n.dot(x) - self.d;
        let out = (0..3)
            .map(|k| self.m[k].dot(x) - self.o[k])
            .fold(f64::NEG_INFINITY, f64::max);
        (h, out)
    }

    /// The lower bound on the squared distance from `x` (`contacts` computes it inline,
    /// with the face test from the same numbers).
    #[cfg(test)]
    fn lower_bound2(&self, x: DVec3) -> f64 {
        let (h, out) = self.height_and_outside(x);
        h * h + out.max(0.0) * out.max(0.0)
    }
}

/// Every mesh of a model in one triangle list, placed at one time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshSurfaces {
    /// Vertices at rest, all meshes (mesh `m`'s are `first_vertex[m]..first_vertex[m+1]`).
    rest: Vec<DVec3>,
    /// Vertices now (m).
    pub vertices: Vec<DVec3>,
    /// Triangles, as indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
    /// Each triangle's corners now (a copy of `vertices` by triangle: the contact
    /// loop reads one record per triangle instead of three scattered vertices).
    corner: Vec<[DVec3; 3]>,
    /// Each triangle's plane and edge lines now, for a cheap lower bound on the
    /// distance ([`Planes`]).
    planes: Vec<Planes>,
    /// The mesh of each triangle.
    pub mesh_of: Vec<u32>,
    /// Keys of each triangle's edges (0–2) and corners (3–5), named by their owners.
    pub keys: Vec<[u32; 6]>,
    /// First vertex of each mesh, and the total at the end.
    first_vertex: Vec<u32>,
    /// Each mesh's motion.
    motions: Vec<crate::model::Motion>,
    /// Each mesh's pose now.
    pub poses: Vec<Pose>,
}

impl MeshSurfaces {
    /// The meshes `meshes` at rest, with their feature keys.
    ///
    /// # Panics
    ///
    /// Never for a model of at most [`MAX_TRIANGLES`] triangles; scenes are checked.
    pub fn new(meshes: &[MeshWall]) -> Self {
        let mut s = Self::default();
        for (m, w) in meshes.iter().enumerate() {
            let base = s.rest.len() as u32;
            s.first_vertex.push(base);
            s.rest.extend_from_slice(&w.mesh.vertices);
            for t in &w.mesh.triangles {
                s.triangles.push(t.map(|k| k + base));
                s.mesh_of.push(m as u32);
            }
            s.motions.push(w.motion);
            s.poses.push(w.motion.pose(0.0));
        }
        s.first_vertex.push(s.rest.len() as u32);
        s.vertices.clone_from(&s.rest);
        s.update_corners();
        // Owners: the lowest triangle with each edge and each corner.
        let mut vertex_owner = vec![u32::MAX; s.rest.len()];
        let mut edge_owner = std::collections::HashMap::new();
        for (t, tri) in s.triangles.iter().enumerate() {
            for k in 0..3 {
                let v = tri[k] as usize;
                if vertex_owner[v] == u32::MAX {
                    vertex_owner[v] = feature_key(t as u32, 4 + k as u32);
                }
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                edge_owner
                    .entry((a.min(b), a.max(b)))
                    .or_insert(feature_key(t as u32, 1 + k as u32));
            }
        }
        s.keys = s
            .triangles
            .iter()
            .map(|tri| {
                let e = |k: usize| {
                    let (a, b) = (tri[k], tri[(k + 1) % 3]);
                    edge_owner[&(a.min(b), a.max(b))]
                };
                [
                    e(0),
                    e(1),
                    e(2),
                    vertex_owner[tri[0] as usize],
                    vertex_owner[tri[1] as usize],
                    vertex_owner[tri[2] as usize],
                ]
            })
            .collect();
        s
    }

    /// Number of meshes.
    pub fn meshes(&self) -> usize {
        self.motions.len()
    }

    /// Whether any mesh moves.
    pub fn moving(&self) -> bool {
        self.motions.iter().any(|m| !m.is_static())
    }

    /// Copies the vertices into the per-triangle corners.
    fn update_corners(&mut self) {
        let v = &self.vertices;
        self.corner = self
            .triangles
            .iter()
            .map(|t| t.map(|k| v[k as usize]))
            .collect();
        self.planes = self.corner.iter().map(|c| Planes::new(*c)).collect();
    }

    /// Places every moving mesh at time `t` (static meshes stay at rest). Its GPU twin
    /// is the kernel `mesh_place` (shaders/granular.wgsl).
    pub fn place(&mut self, t: f64) {
        let mut moved = false;
        for (m, motion) in self.motions.iter().enumerate() {
            if motion.is_static() {
                continue;
            }
            let pose = motion.pose(t);
            self.poses[m] = pose;
            let r = self.first_vertex[m] as usize..self.first_vertex[m + 1] as usize;
            for (v, x) in self.vertices[r.clone()].iter_mut().zip(&self.rest[r]) {
                *v = pose.place(*x);
            }
            moved = true;
        }
        if moved {
            self.update_corners();
        }
    }

    /// The end of mesh `m`'s vertices (its first is the previous mesh's end, or 0).
    pub fn vertex_end(&self, m: usize) -> u32 {
        self.first_vertex[m + 1]
    }

    /// Triangle `t`'s plane now: its unit normal `n` and offset `d` (`n·x = d` on it),
    /// and each edge's outward in-plane unit normal and offset (the bound of
    /// `contacts`; for the GPU's copy).
    pub fn plane(&self, t: u32) -> (DVec3, f64, [(DVec3, f64); 3]) {
        let p = &self.planes[t as usize];
        (p.n, p.d, [0, 1, 2].map(|k| (p.m[k], p.o[k])))
    }

    /// The corners of triangle `t` now.
    #[inline]
    pub fn corners(&self, t: u32) -> [DVec3; 3] {
        self.corner[t as usize]
    }

    /// The vertices of the feature `key`, and how many (3 for a face, 2 for an edge, 1
    /// for a corner).
    #[inline]
    pub fn feature_vertices(&self, key: u32) -> ([u32; 3], usize) {
        let tri = self.triangles[(key / 8) as usize];
        match key % 8 {
            0 => (tri, 3),
            l @ 1..=3 => {
                let k = (l - 1) as usize;
                ([tri[k], tri[(k + 1) % 3], 0], 2)
            }
            l => ([tri[(l - 4) as usize], 0, 0], 1),
        }
    }

    /// Whether features `a` and `b` share a vertex: a sphere can slide from one to the
    /// other, so a contact on `b` new this step takes over `a`'s history.
    pub fn adjacent(&self, a: u32, b: u32) -> bool {
        let (va, na) = self.feature_vertices(a);
        let (vb, nb) = self.feature_vertices(b);
        va[..na].iter().any(|v| vb[..nb].contains(v))
    }

    /// The key of the feature `f` of triangle `t`.
    #[inline]
    fn key_of(&self, t: u32, f: Feature) -> u32 {
        let keys = &self.keys[t as usize];
        match f {
            Feature::Face => feature_key(t, 0),
            Feature::Edge(k) => keys[k as usize],
            Feature::Vertex(k) => keys[3 + k as usize],
        }
    }

    /// Calls `visit` with each contact of a sphere at `x` with the triangles
    /// `candidates` (ascending; every triangle within `reach` of `x` must be among them)
    /// whose feature is nearer than `reach`, in candidate order (see the module
    /// documentation for the rule). A centre exactly on the surface has no normal and
    /// makes no contact.
    pub fn contacts(
        &self,
        candidates: &[u32],
        x: DVec3,
        reach: f64,
        mut visit: impl FnMut(MeshContact),
    ) {
        let reach2 = reach * reach;
        // The bound is exact to rounding where it matters (over a face or beside an
        // edge); the slack keeps rounding from refusing a contact the exact test takes.
        let far2 = reach2 * (1.0 + 1e-9);
        // The candidates that pass the bound (`mesh_near`'s bits, the first 32), so
        // that the search proper and `all_agree` visit those alone, in ascending order
        // (`near_order`), as the GPU's `mesh_sum` does.
        let near = self.near(candidates, x, far2);
        for s in near_order(near, candidates.len()) {
            let t = candidates[s];
            // One pass over the plane and edge lines gives both the bound and, inside
            // the edge lines, the face contact (`closest`'s first case).
            let pl = &self.planes[t as usize];
            let (h, out) = pl.height_and_outside(x);
            if h * h + out.max(0.0) * out.max(0.0) > far2 {
                continue;
            }
            let (q, f) = if out < 0.0 {
                (x - h * pl.n, Feature::Face)
            } else {
                closest_point(x, self.corners(t))
            };
            let d2 = (q - x).length_squared();
            if d2 >= reach2 || d2.is_nan() || d2 == 0.0 {
                continue;
            }
            let key = self.key_of(t, f);
            let point = match f {
                Feature::Face => q,
                _ => {
                    if key / 8 != t || !self.all_agree(candidates, near, x, t, key) {
                        continue;
                    }
                    self.feature_point(key, x)
                }
            };
            let d = point - x;
            let d2 = d.length_squared();
            if d2 >= reach2 || d2.is_nan() || d2 == 0.0 {
                continue;
            }
            let distance = d2.sqrt();
            visit(MeshContact {
                key,
                mesh: self.mesh_of[t as usize],
                point,
                distance,
                normal: d / distance,
            });
        }
    }

    /// The closest point of triangle `t` to `x` and its feature: the projection on the
    /// plane when it falls strictly inside the triangle (its edge lines), else
    /// [`closest_point`]'s. The one classification every test here uses, so a
    /// triangle's feature is the same whichever loop asks.
    #[inline]
    fn closest(&self, t: u32, x: DVec3) -> (DVec3, Feature) {
        let pl = &self.planes[t as usize];
        let (h, out) = pl.height_and_outside(x);
        // Strictly inside: a point on an edge line goes to `closest_point`, which gives
        // it to the edge (or corner), so the two faces of a shared edge never both
        // claim it.
        if out < 0.0 {
            return (x - h * pl.n, Feature::Face);
        }
        closest_point(x, self.corners(t))
    }

    /// Whether every candidate other than `t` that contains the edge or corner `key`
    /// finds its closest point to `x` on it. A triangle containing the feature is no
    /// further from `x` than the feature, which is within reach, so it passed the bound:
    /// only the candidates `near` ([`Self::near`], and every one from 32 on) are
    /// visited (the GPU's `mesh_all_agree`).
    fn all_agree(&self, candidates: &[u32], near: u32, x: DVec3, t: u32, key: u32) -> bool {
        let (v, n) = self.feature_vertices(key);
        near_order(near, candidates.len())
            .map(|s| candidates[s])
            .filter(|&o| o != t)
            .all(|o| {
                let tri = &self.triangles[o as usize];
                if !v[..n].iter().all(|k| tri.contains(k)) {
                    return true;
                }
                let (_, f) = self.closest(o, x);
                self.key_of(o, f) == key
            })
    }

    /// The first 32 of `candidates` that may be within the reach of `far2` (its square
    /// with slack) of `x`, as bits: the search's first test alone (the GPU's
    /// `mesh_near` and `mesh_may_touch`).
    fn near(&self, candidates: &[u32], x: DVec3, far2: f64) -> u32 {
        let mut bits = 0u32;
        for (s, &t) in candidates.iter().take(32).enumerate() {
            let (h, out) = self.planes[t as usize].height_and_outside(x);
            // Not refused by the loop's test (a NaN bound is not refused either).
            let bound = h * h + out.max(0.0) * out.max(0.0);
            if bound <= far2 || bound.is_nan() {
                bits |= 1 << s;
            }
        }
        bits
    }

    /// The closest point to `x` of feature `key`, from the feature alone (the same bits
    /// whichever triangle found it): a corner itself, the projection on an edge from
    /// its lower-numbered vertex, or the closest point of a face's triangle.
    pub fn feature_point(&self, key: u32, x: DVec3) -> DVec3 {
        let (v, n) = self.feature_vertices(key);
        if n == 3 {
            return self.closest(key / 8, x).0;
        }
        if n == 1 {
            return self.vertices[v[0] as usize];
        }
        let (a, b) = (v[0].min(v[1]), v[0].max(v[1]));
        let (a, b) = (self.vertices[a as usize], self.vertices[b as usize]);
        let e = b - a;
        let s = ((x - a).dot(e) / e.length_squared()).clamp(0.0, 1.0);
        a + s * e
    }
}

/// Mesh contacts one particle may have at once (faces of a concave corner, say); more
/// is an error naming the particle.
pub const MESH_SLOTS: usize = 8;

/// The springs the contacts `now` start from, given the particle's previous slots
/// (`old_keys`, `old_springs`): a feature touched before keeps its spring; a new one
/// takes over the spring of a vanished contact on an adjacent feature (the first in
/// slot order, each at most once); otherwise zero.
pub fn carried_springs(
    surfaces: &MeshSurfaces,
    now: &[Option<MeshContact>],
    old_keys: &[u32],
    old_springs: &[DVec3],
) -> [DVec3; MESH_SLOTS] {
    let mut out = [DVec3::ZERO; MESH_SLOTS];
    let mut taken = [false; MESH_SLOTS];
    let keys_now = |k: u32| now.iter().flatten().any(|c| c.key == k);
    // Exact matches first, so a handover never takes a spring that continues.
    let mut matched = [false; MESH_SLOTS];
    for (a, c) in now.iter().enumerate() {
        let Some(c) = c else { continue };
        if let Some(s) = old_keys.iter().position(|&k| k == c.key) {
            out[a] = old_springs[s];
            taken[s] = true;
            matched[a] = true;
        }
    }
    for (a, c) in now.iter().enumerate() {
        let Some(c) = c else { continue };
        if matched[a] {
            continue;
        }
        let from = old_keys.iter().enumerate().position(|(s, &k)| {
            k != crate::physics::granular::NO_PARTNER
                && !taken[s]
                && !keys_now(k)
                && surfaces.adjacent(k, c.key)
        });
        if let Some(s) = from {
            out[a] = old_springs[s];
            taken[s] = true;
        }
    }
    out
}

/// The candidates to visit, by index: the set bits of `near` ascending, then every
/// index from 32 to `count` (the GPU's `mesh_next` loop).
fn near_order(near: u32, count: usize) -> impl Iterator<Item = usize> {
    let mut bits = near;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            k
        })
    })
    .chain(32..count.max(32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Motion, TriangleMesh};

    fn wall(vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> MeshWall {
        MeshWall {
            name: "m".into(),
            mesh: TriangleMesh::new(vertices, triangles).unwrap(),
            material: None,
            stiffness: 0.0,
            motion: Motion::default(),
        }
    }

    /// A flat fan of `n` triangles around the origin in the plane z = 0.
    fn fan(n: usize) -> MeshSurfaces {
        let mut v = vec![DVec3::ZERO];
        for k in 0..n {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            v.push(DVec3::new(a.cos(), a.sin(), 0.0));
        }
        let t = (0..n as u32)
            .map(|k| [0, 1 + k, 1 + (k + 1) % n as u32])
            .collect();
        MeshSurfaces::new(&[wall(v, t)])
    }

    fn all(s: &MeshSurfaces) -> Vec<u32> {
        (0..s.triangles.len() as u32).collect()
    }

    fn contacts(s: &MeshSurfaces, x: DVec3, reach: f64) -> Vec<MeshContact> {
        let mut out = Vec::new();
        s.contacts(&all(s), x, reach, |c| out.push(c));
        out
    }

    #[test]
    fn a_flat_fan_gives_one_contact_anywhere() {
        let s = fan(12);
        // Over a face, near an edge, on an edge, at the centre vertex, near it.
        for (x, y) in [
            (0.3, 0.05),
            (0.5, 1e-3),
            (0.5, 0.0),
            (0.0, 0.0),
            (1e-3, -2e-3),
        ] {
            let c = contacts(&s, DVec3::new(x, y, 0.1), 0.5);
            assert_eq!(c.len(), 1, "at ({x}, {y}): {c:?}");
            assert!((c[0].distance - 0.1).abs() < 1e-15, "{c:?}");
            assert!((c[0].normal + DVec3::Z).length() < 1e-15);
        }
        let c = contacts(&s, DVec3::new(0.0, 0.0, 0.1), 0.5);
        assert_eq!(c[0].key % 8, 4, "the centre vertex: {c:?}");
    }

    #[test]
    fn a_convex_edge_and_corner_give_one_contact_and_a_concave_corner_one_per_face() {
        // Two faces of a unit cube meeting along the x axis (z = 0 top, y = 0 side).
        let v = vec![
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(0.0, 0.0, -1.0),
            DVec3::new(1.0, 0.0, -1.0),
        ];
        let t = vec![[0, 1, 2], [0, 2, 3], [0, 4, 5], [0, 5, 1]];
        let s = MeshSurfaces::new(&[wall(v, t)]);
        // Outside the convex edge (y < 0, z > 0): one edge contact.
        let c = contacts(&s, DVec3::new(0.5, -0.05, 0.05), 0.1);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((1..=3).contains(&(c[0].key % 8)), "{c:?}");
        assert!((c[0].point - DVec3::new(0.5, 0.0, 0.0)).length() < 1e-15);
        // Above the top face near the edge: only the face.
        let c = contacts(&s, DVec3::new(0.5, 0.02, 0.05), 0.1);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].key % 8, 0);
        // Inside the concave corner (the same faces seen from the other side: y > 0,
        // z < 0): both faces.
        let c = contacts(&s, DVec3::new(0.5, 0.05, -0.05), 0.1);
        assert_eq!(c.len(), 2, "{c:?}");
    }

    #[test]
    fn shared_features_have_one_key_and_neighbours_are_adjacent() {
        let s = fan(6);
        // Every triangle names the centre by triangle 0's corner 0.
        assert!(s.keys.iter().all(|k| k[3] == feature_key(0, 4)));
        // Triangles 0 and 1 share edge (0, 2): triangle 0's edge 2 (corners 2, 0).
        assert_eq!(s.keys[1][0], s.keys[0][2]);
        assert!(s.adjacent(feature_key(0, 0), feature_key(3, 0)));
        assert!(!s.adjacent(feature_key(0, 2), feature_key(3, 2)));
    }

    #[test]
    fn the_plane_bound_never_exceeds_the_distance() {
        let s = fan(7);
        let mut rng = 99u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for _ in 0..20_000 {
            let x = DVec3::new(3.0 * next(), 3.0 * next(), next());
            for t in 0..7u32 {
                let (q, _) = closest_point(x, s.corners(t));
                let d2 = (q - x).length_squared();
                let lb = s.planes[t as usize].lower_bound2(x);
                assert!(lb <= d2 * (1.0 + 1e-12) + 1e-30, "{x} {t}: {lb} > {d2}");
            }
        }
    }

    #[test]
    fn a_turning_mesh_is_placed_by_its_pose() {
        let mut w = wall(
            vec![
                DVec3::X,
                DVec3::new(2.0, 0.0, 0.0),
                DVec3::new(1.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2]],
        );
        w.motion.angular_velocity = DVec3::new(0.0, 0.0, std::f64::consts::PI);
        let mut s = MeshSurfaces::new(&[w]);
        s.place(1.0);
        assert!(
            (s.vertices[0] + DVec3::X).length() < 1e-15,
            "{:?}",
            s.vertices
        );
    }
}
