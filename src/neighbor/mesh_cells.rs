//! A fixed cell grid over mesh walls in their rest frame, for the GPU backend: each cell
//! lists (ascending) every triangle that may be within `reach` of a point in it, so a
//! sphere of radius at most `reach` finds its candidate triangles by looking up its own
//! cell, with no per-particle list to rebuild. A moving mesh is looked up with the
//! sphere's centre mapped back to the rest frame (rigid motions keep distances).

use glam::DVec3;

use crate::physics::mesh::MeshSurfaces;

/// The cell grid (CSR: cell `c` lists `items[start[c]..start[c + 1]]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshCells {
    /// Lower corner of the grid (m).
    pub origin: DVec3,
    /// Inverse cell edge (1/m).
    pub inv: f64,
    /// Cells along x, y, z.
    pub dims: [u32; 3],
    /// First item of each cell, and the end.
    pub start: Vec<u32>,
    /// Triangle ids, ascending within a cell.
    pub items: Vec<u32>,
}

impl MeshCells {
    /// Most cells per triangle (the edge grows past `reach` to keep to it).
    const CELLS_PER_TRIANGLE: f64 = 8.0;

    /// The grid of `surfaces` as they are (the rest pose) for spheres of radius up to
    /// `reach`. A cell lists each triangle whose bounding box, grown by `reach` and a
    /// margin for rounding, overlaps the cell.
    pub fn new(surfaces: &MeshSurfaces, reach: f64) -> Self {
        let nt = surfaces.triangles.len();
        if nt == 0 {
            return Self {
                dims: [1, 1, 1],
                start: vec![0, 0],
                inv: 0.0,
                ..Self::default()
            };
        }
        // The margin covers the rounding of the rest-frame map of a moving mesh.
        let grow = reach * (1.0 + 1e-9) + 1e-12;
        let boxes: Vec<(DVec3, DVec3)> = (0..nt as u32)
            .map(|t| {
                let c = surfaces.corners(t);
                (
                    c[0].min(c[1]).min(c[2]) - DVec3::splat(grow),
                    c[0].max(c[1]).max(c[2]) + DVec3::splat(grow),
                )
            })
            .collect();
        let (lo, hi) = boxes.iter().fold(
            (DVec3::INFINITY, DVec3::NEG_INFINITY),
            |(lo, hi), (a, b)| (lo.min(*a), hi.max(*b)),
        );
        let extent = (hi - lo).max(DVec3::splat(1e-300));
        let volume = extent.x * extent.y * extent.z;
        let edge = reach
            .max((volume / (Self::CELLS_PER_TRIANGLE * nt as f64)).cbrt())
            .max(1e-300);
        let inv = 1.0 / edge;
        let dims = [0, 1, 2].map(|a| ((extent[a] * inv).floor() as u32 + 1).max(1));
        let cell = |x: DVec3| -> [u32; 3] {
            let c = ((x - lo) * inv).floor();
            [0, 1, 2].map(|a| (c[a].max(0.0) as u32).min(dims[a] - 1))
        };
        let n_cells = dims.iter().map(|&d| d as usize).product::<usize>();
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n_cells];
        for (t, (a, b)) in boxes.iter().enumerate() {
            let (ca, cb) = (cell(*a), cell(*b));
            for z in ca[2]..=cb[2] {
                for y in ca[1]..=cb[1] {
                    for x in ca[0]..=cb[0] {
                        let k = ((z * dims[1] + y) * dims[0] + x) as usize;
                        lists[k].push(t as u32);
                    }
                }
            }
        }
        let mut start = Vec::with_capacity(n_cells + 1);
        let mut items = Vec::new();
        start.push(0);
        for l in lists {
            items.extend_from_slice(&l);
            start.push(items.len() as u32);
        }
        Self {
            origin: lo,
            inv,
            dims,
            start,
            items,
        }
    }

    /// The cell of rest-frame point `x` (`None` outside the grid: no triangle is within
    /// reach). The shader's lookup (`mesh_cell` in shaders/common/mesh.wgsl) does the
    /// same arithmetic.
    pub fn cell_of(&self, x: DVec3) -> Option<usize> {
        let c = ((x - self.origin) * self.inv).floor();
        let inside = (0..3).all(|a| c[a] >= 0.0 && c[a] < f64::from(self.dims[a]));
        inside.then(|| {
            let [nx, ny, _] = self.dims.map(|d| d as usize);
            (c.z as usize * ny + c.y as usize) * nx + c.x as usize
        })
    }

    /// The candidate triangles of a sphere centred at rest-frame point `x`.
    pub fn candidates(&self, x: DVec3) -> &[u32] {
        match self.cell_of(x) {
            Some(c) => &self.items[self.start[c] as usize..self.start[c + 1] as usize],
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::triangle::closest_point;
    use crate::model::{MeshWall, Motion, TriangleMesh};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A wavy sheet of 2·12² triangles: every triangle within reach of a random point is
    /// among its cell's candidates, which ascend.
    #[test]
    fn cells_list_every_triangle_within_reach() {
        let n = 12;
        let mut vertices = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (i as f64 * 0.1, j as f64 * 0.1);
                vertices.push(DVec3::new(x, y, 0.05 * (7.0 * x).sin() * (5.0 * y).cos()));
            }
        }
        let mut triangles = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let a = (j * (n + 1) + i) as u32;
                let (b, c, d) = (a + 1, a + n as u32 + 1, a + n as u32 + 2);
                triangles.push([a, b, d]);
                triangles.push([a, d, c]);
            }
        }
        let wall = MeshWall {
            name: "sheet".into(),
            mesh: TriangleMesh::new(vertices, triangles).unwrap(),
            material: None,
            stiffness: 0.0,
            motion: Motion::default(),
        };
        let surfaces = MeshSurfaces::new(&[wall]);
        let reach = 0.04;
        let cells = MeshCells::new(&surfaces, reach);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut near = 0;
        for _ in 0..20_000 {
            let x = DVec3::new(
                rng.random_range(-0.1..1.3),
                rng.random_range(-0.1..1.3),
                rng.random_range(-0.15..0.15),
            );
            let list = cells.candidates(x);
            assert!(list.windows(2).all(|w| w[0] < w[1]));
            for t in 0..surfaces.triangles.len() as u32 {
                let (q, _) = closest_point(x, surfaces.corners(t));
                if q.distance(x) < reach {
                    near += 1;
                    assert!(
                        list.contains(&t),
                        "triangle {t} within reach of {x} not listed"
                    );
                }
            }
        }
        assert!(near > 10_000, "{near}");
    }
}
