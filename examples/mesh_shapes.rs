//! Writes the STL files of the equipment scenes (`scenes/meshes/`): a conical hopper
//! and a closed rotating drum, as binary STL in metres.
//!
//! ```sh
//! cargo run --release --example mesh_shapes   # rewrites scenes/meshes/*.stl
//! ```
//!
//! The files are in the repository; this is how they were made, and how to make
//! variants (change the constants and rerun).

use std::f32::consts::TAU;
use std::path::Path;

use stl_io::{Normal, Triangle, Vertex};

/// A triangle with its right-handed normal.
fn tri(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> Triangle {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    Triangle {
        normal: Normal::new([n[0] / l, n[1] / l, n[2] / l]),
        vertices: [Vertex::new(a), Vertex::new(b), Vertex::new(c)],
    }
}

/// A ring of `n` points of radius `r` at height `z` about the z axis.
fn ring(n: usize, r: f32, z: f32) -> Vec<[f32; 3]> {
    (0..n)
        .map(|k| {
            let a = TAU * k as f32 / n as f32;
            [r * a.cos(), r * a.sin(), z]
        })
        .collect()
}

/// The band of quads between two rings, two triangles each, normals inward.
fn band(lower: &[[f32; 3]], upper: &[[f32; 3]], out: &mut Vec<Triangle>) {
    let n = lower.len();
    for k in 0..n {
        let (a, b) = (lower[k], lower[(k + 1) % n]);
        let (c, d) = (upper[(k + 1) % n], upper[k]);
        out.push(tri(a, d, c));
        out.push(tri(a, c, b));
    }
}

/// A conical hopper about z: a cylinder of radius 0.05 m from z = 0.06 to 0.16 m on a
/// cone narrowing to an outlet of radius 0.012 m at z = 0 (a half-angle of 32°),
/// open at the top and at the outlet, 48 segments.
fn hopper() -> Vec<Triangle> {
    let n = 48;
    let outlet = ring(n, 0.012, 0.0);
    let shoulder = ring(n, 0.05, 0.06);
    let top = ring(n, 0.05, 0.16);
    let mut t = Vec::new();
    band(&outlet, &shoulder, &mut t);
    band(&shoulder, &top, &mut t);
    t
}

/// A closed drum about the y axis: radius 0.1 m, from y = −0.02 to 0.02 m, 64
/// segments, with flat end caps (fans about their centres).
fn drum() -> Vec<Triangle> {
    let n = 64;
    let (r, h) = (0.1f32, 0.02f32);
    // Rings about y: (r cos a, y, r sin a).
    let ring_y = |y: f32| -> Vec<[f32; 3]> {
        (0..n)
            .map(|k| {
                let a = TAU * k as f32 / n as f32;
                [r * a.cos(), y, r * a.sin()]
            })
            .collect()
    };
    let (front, back) = (ring_y(-h), ring_y(h));
    let mut t = Vec::new();
    band(&front, &back, &mut t);
    for k in 0..n {
        let j = (k + 1) % n;
        t.push(tri([0.0, -h, 0.0], front[j], front[k]));
        t.push(tri([0.0, h, 0.0], back[k], back[j]));
    }
    t
}

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/meshes");
    std::fs::create_dir_all(&dir)?;
    for (name, mesh) in [("hopper", hopper()), ("drum", drum())] {
        let path = dir.join(format!("{name}.stl"));
        let mut file = std::fs::File::create(&path)?;
        stl_io::write_stl(&mut file, mesh.iter())?;
        println!("{}: {} triangles", path.display(), mesh.len());
    }
    Ok(())
}
