//! Candidate triangles of mesh walls per particle: the triangles within `r + skin` of
//! each particle at the last build, found through a cell grid in which each triangle is
//! binned into the cells near it (no particle loops over all triangles).
//!
//! The list stays valid while every particle has moved, and every mesh vertex has
//! moved, by less than `skin` together: a triangle not listed was at least `r + skin`
//! from the particle, and the gap closes by at most the two displacements.

use glam::DVec3;
use rayon::prelude::*;

use crate::physics::mesh::MeshSurfaces;

/// Particles per parallel task of a build.
const CHUNK: usize = 1024;

/// Each particle's candidate triangles (CSR, ascending) with the rebuild bookkeeping.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshList {
    /// Triangles of particle `p`: `triangles[offsets[p]..offsets[p+1]]`, ascending.
    pub offsets: Vec<u32>,
    /// Concatenated triangle ids.
    pub triangles: Vec<u32>,
    /// Listing distance beyond the radius (m).
    pub skin: f64,
    /// Part of the skin kept for speculative (hard) contacts (m): the list is rebuilt
    /// once the displacements reach `skin − reserve`.
    pub reserve: f64,
    /// Particle positions at the last build.
    reference: Vec<DVec3>,
    /// Mesh vertices at the last build.
    vertex_reference: Vec<DVec3>,
    /// Number of builds so far.
    pub builds: u64,
    /// The skin of the last build (the list holds what was nearer than it).
    built_skin: f64,
}

impl MeshList {
    /// An empty list; [`MeshList::update`] builds it.
    pub fn new(skin: f64, reserve: f64) -> Self {
        Self {
            skin,
            reserve,
            ..Self::default()
        }
    }

    /// Candidate triangles of particle `p`.
    #[inline]
    pub fn of(&self, p: usize) -> &[u32] {
        match self.offsets.get(p..p + 2) {
            Some(r) => &self.triangles[r[0] as usize..r[1] as usize],
            None => &[],
        }
    }

    /// Whether the particles at `position` and the meshes as placed in `surfaces` have
    /// moved too far since the last build (or there was none).
    pub fn is_stale(&self, surfaces: &MeshSurfaces, position: &[DVec3]) -> bool {
        if self.reference.len() != position.len()
            || self.vertex_reference.len() != surfaces.vertices.len()
        {
            return true;
        }
        let max_disp = |a: &[DVec3], b: &[DVec3]| {
            a.par_iter()
                .zip(b.par_iter())
                .with_min_len(4096)
                .map(|(x, r)| (*x - *r).length_squared())
                .reduce(|| 0.0, f64::max)
                .sqrt()
        };
        // Meshes at rest keep their vertices (no pass over them).
        let walls = if surfaces.moving() {
            max_disp(&surfaces.vertices, &self.vertex_reference)
        } else {
            0.0
        };
        let moved = max_disp(position, &self.reference) + walls;
        // NaN positions fail `<` and rebuild; the force check then names them.
        moved.is_nan() || moved >= self.built_skin - self.reserve
    }

    /// Rebuilds the list when stale ([`MeshList::is_stale`]); returns whether it did.
    pub fn update(&mut self, surfaces: &MeshSurfaces, position: &[DVec3], radius: &[f64]) -> bool {
        let stale = self.is_stale(surfaces, position);
        if stale {
            self.build(surfaces, position, radius);
        }
        stale
    }

    /// Unconditional rebuild: each particle lists the triangles nearer than its radius
    /// plus the skin.
    pub fn build(&mut self, surfaces: &MeshSurfaces, position: &[DVec3], radius: &[f64]) {
        let n = position.len();
        self.reference = position.to_vec();
        self.vertex_reference.clone_from(&surfaces.vertices);
        self.builds += 1;
        self.built_skin = self.skin;
        let r_max = radius.iter().copied().fold(0.0, f64::max);
        let reach = r_max + self.skin;
        let grid = TriangleGrid::new(surfaces, position, reach);
        let skin = self.skin;
        let rows: Vec<(Vec<u32>, Vec<u32>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let ids = c * CHUNK..((c + 1) * CHUNK).min(n);
                let mut counts = Vec::with_capacity(ids.len());
                let mut flat = Vec::new();
                for i in ids {
                    let first = flat.len();
                    let x = position[i];
                    let r = radius[i] + skin;
                    for &t in grid.cell(x) {
                        let (q, _) = crate::math::triangle::closest_point(x, surfaces.corners(t));
                        if (q - x).length_squared() < r * r {
                            flat.push(t);
                        }
                    }
                    counts.push((flat.len() - first) as u32);
                }
                (counts, flat)
            })
            .collect();
        self.offsets.clear();
        self.offsets.push(0);
        self.triangles.clear();
        for (counts, flat) in rows {
            for c in counts {
                let last = *self.offsets.last().unwrap_or(&0);
                self.offsets.push(last + c);
            }
            self.triangles.extend_from_slice(&flat);
        }
    }
}

/// A dense grid over the particles' bounding box in which every triangle is listed in
/// each cell it may be within `reach` of (its cell lists ascend).
struct TriangleGrid {
    origin: DVec3,
    inv: f64,
    dims: [i64; 3],
    start: Vec<u32>,
    ids: Vec<u32>,
}

impl TriangleGrid {
    /// Most cells per particle.
    const CELLS_PER_PARTICLE: f64 = 2.0;

    fn new(surfaces: &MeshSurfaces, position: &[DVec3], reach: f64) -> Self {
        let (lo, hi) = position
            .iter()
            .filter(|x| x.is_finite())
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            });
        if !(lo.cmple(hi).all()) {
            return Self {
                origin: DVec3::ZERO,
                inv: 0.0,
                dims: [1, 1, 1],
                start: vec![0, 0],
                ids: Vec::new(),
            };
        }
        let extent = (hi - lo).max(DVec3::splat(1e-300));
        // Cells of at least the reach; larger when the particles are sparse, so the
        // grid has at most a few cells per particle however far apart they are.
        let volume_per_cell = extent.x.max(reach) * extent.y.max(reach) * extent.z.max(reach)
            / (Self::CELLS_PER_PARTICLE * position.len().max(1) as f64);
        let mut edge = reach.max(volume_per_cell.cbrt());
        // An axis thinner than the reach still takes a cell, so particles spread along
        // one line far apart (a hostile checkpoint's 1e300) could ask for more cells
        // than exist (the counts overflowed): widen the cells until there are at most
        // a few per particle. Ordinary scenes stay far below the cap.
        let cells_at = |edge: f64| {
            (0..3)
                .map(|a| (extent[a] / edge).floor() + 1.0)
                .product::<f64>()
        };
        let cap = 8.0 * (Self::CELLS_PER_PARTICLE * position.len().max(1) as f64).max(8.0);
        while edge.is_finite() && (cells_at(edge) > cap || cells_at(edge).is_nan()) {
            edge *= 2.0;
        }
        let inv = 1.0 / edge;
        let dims = [0, 1, 2].map(|a| ((extent[a] * inv).floor() as i64 + 1).max(1));
        let cells = (dims[0] * dims[1] * dims[2]) as usize;
        // Half the cell diagonal: a point of a cell is within it of the cell's centre.
        let half_diag = 0.5 * 3f64.sqrt() * edge;
        let cell_lo = |c: [i64; 3]| lo + DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64) * edge;
        let pairs: Vec<Vec<(u32, u32)>> = (0..surfaces.triangles.len() as u32)
            .into_par_iter()
            .with_min_len(256)
            .map(|t| {
                let c = surfaces.corners(t);
                let tlo = c[0].min(c[1]).min(c[2]) - DVec3::splat(reach);
                let thi = c[0].max(c[1]).max(c[2]) + DVec3::splat(reach);
                let mut out = Vec::new();
                let a = [0, 1, 2].map(|k| ((tlo[k] - lo[k]) * inv).floor().max(0.0) as i64);
                let b =
                    [0, 1, 2].map(|k| (((thi[k] - lo[k]) * inv).floor() as i64).min(dims[k] - 1));
                if (0..3).any(|k| a[k] > b[k] || b[k] < 0) {
                    return out;
                }
                for z in a[2]..=b[2] {
                    for y in a[1]..=b[1] {
                        for x in a[0]..=b[0] {
                            let centre = cell_lo([x, y, z]) + DVec3::splat(0.5 * edge);
                            let (q, _) = crate::math::triangle::closest_point(centre, c);
                            let far = reach + half_diag;
                            if (q - centre).length_squared() <= far * far {
                                out.push((((z * dims[1] + y) * dims[0] + x) as u32, t));
                            }
                        }
                    }
                }
                out
            })
            .collect();
        // Counting sort by cell, stable: triangles ascend within a cell.
        let mut start = vec![0u32; cells + 1];
        for &(cell, _) in pairs.iter().flatten() {
            start[cell as usize + 1] += 1;
        }
        for k in 0..cells {
            start[k + 1] += start[k];
        }
        let mut cursor = start.clone();
        let mut ids = vec![0u32; start[cells] as usize];
        for &(cell, t) in pairs.iter().flatten() {
            ids[cursor[cell as usize] as usize] = t;
            cursor[cell as usize] += 1;
        }
        Self {
            origin: lo,
            inv,
            dims,
            start,
            ids,
        }
    }

    /// The triangles binned in the cell of `x` (none for a non-finite `x`).
    fn cell(&self, x: DVec3) -> &[u32] {
        if !x.is_finite() || self.ids.is_empty() {
            return &[];
        }
        let c = [0, 1, 2].map(|a| {
            (((x[a] - self.origin[a]) * self.inv).floor() as i64).clamp(0, self.dims[a] - 1)
        });
        let k = ((c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]) as usize;
        &self.ids[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MeshWall, Motion, TriangleMesh};

    #[test]
    fn the_grid_lists_what_a_scan_of_every_triangle_lists() {
        // A bumpy surface of 2·20² triangles and 500 particles scattered above it.
        let n = 20;
        let mut v = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (i as f64 * 0.1, j as f64 * 0.1);
                v.push(DVec3::new(x, y, 0.03 * (7.0 * x).sin() * (5.0 * y).cos()));
            }
        }
        let mut t = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let a = (j * (n + 1) + i) as u32;
                let (b, c, d) = (a + 1, a + n as u32 + 2, a + n as u32 + 1);
                t.push([a, b, c]);
                t.push([a, c, d]);
            }
        }
        let s = MeshSurfaces::new(&[MeshWall {
            name: "bumps".into(),
            mesh: TriangleMesh::new(v, t).unwrap(),
            material: None,
            stiffness: 0.0,
            motion: Motion::default(),
        }]);
        let mut rng = 12345u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64
        };
        let x: Vec<DVec3> = (0..500)
            .map(|_| DVec3::new(2.2 * next() - 0.1, 2.2 * next() - 0.1, 0.3 * next() - 0.1))
            .collect();
        let r: Vec<f64> = (0..500).map(|_| 0.01 + 0.03 * next()).collect();
        let mut list = MeshList::new(0.01, 0.0);
        assert!(list.update(&s, &x, &r));
        let mut total = 0;
        for i in 0..x.len() {
            let want: Vec<u32> = (0..s.triangles.len() as u32)
                .filter(|&t| {
                    let (q, _) = crate::math::triangle::closest_point(x[i], s.corners(t));
                    (q - x[i]).length() < r[i] + 0.01
                })
                .collect();
            assert_eq!(list.of(i), want.as_slice(), "particle {i}");
            total += want.len();
        }
        assert!(total > 200, "the test lists something: {total}");
        assert!(!list.update(&s, &x, &r));
    }
}
