//! STL files (binary and ASCII) read into [`TriangleMesh`]es with the `stl_io` crate,
//! for mesh walls (issue 26). `stl_io` merges vertices with equal coordinates, so
//! triangles that share a corner in the file share a vertex here, and edges shared by
//! two triangles are found by index ([`TriangleMesh::edges`]).

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::TriangleMesh;

/// The mesh of the STL file at `path` (binary or ASCII), its vertices widened to
/// `f64`. An unreadable or malformed file is an [`Error::Io`] naming the path; a mesh
/// with no triangles, a non-finite vertex or a degenerate triangle is an
/// [`Error::Scene`] naming the file and the triangle or vertex.
pub fn read_mesh(path: &Path) -> Result<TriangleMesh> {
    let io = |source: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    read_mesh_from(&mut file).map_err(|e| match e {
        ReadError::Io(source) => io(source),
        ReadError::Mesh(e) => Error::Scene(format!("{}: {e}", path.display())),
    })
}

/// Why [`read_mesh_from`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes are not an STL file (or could not be read).
    #[error("not a readable STL file: {0}")]
    Io(#[from] std::io::Error),
    /// The file's mesh is refused.
    #[error("{0}")]
    Mesh(#[from] crate::model::MeshError),
}

/// [`read_mesh`] from any reader. `stl_io` takes a file whose first line starts with
/// `solid ` for ASCII, but some CAD exporters (SolidWorks among them) begin binary
/// headers so: a file whose length is exactly a binary STL's for the triangle count
/// in its header (84 + 50 n bytes) is read as binary whatever its first bytes say, and
/// an ASCII file that starts with a bare `solid` line as ASCII.
pub fn read_mesh_from<R: std::io::Read>(
    reader: &mut R,
) -> std::result::Result<TriangleMesh, ReadError> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    if bytes.starts_with(b"solid ") && bytes.len() >= 84 {
        let count = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]);
        if bytes.len() as u64 == 84 + 50 * u64::from(count) {
            bytes[..6].fill(0);
        }
    }
    // An ASCII file whose first line is a bare `solid` (no name) is ASCII too.
    if bytes.starts_with(b"solid\n") || bytes.starts_with(b"solid\r\n") {
        bytes.insert(5, b' ');
    }
    let mesh = stl_io::read_stl(&mut std::io::Cursor::new(bytes))?;
    let vertices = mesh
        .vertices
        .iter()
        .map(|v| glam::DVec3::new(v[0].into(), v[1].into(), v[2].into()))
        .collect();
    let mut triangles = Vec::with_capacity(mesh.faces.len());
    for f in &mesh.faces {
        let index = |k: usize| u32::try_from(f.vertices[k]).unwrap_or(u32::MAX);
        triangles.push([index(0), index(1), index(2)]);
    }
    Ok(TriangleMesh::new(vertices, triangles)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;
    use std::io::Cursor;

    fn tri(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> stl_io::Triangle {
        stl_io::Triangle {
            normal: stl_io::Normal::new([0.0, 0.0, 1.0]),
            vertices: [
                stl_io::Vertex::new(a),
                stl_io::Vertex::new(b),
                stl_io::Vertex::new(c),
            ],
        }
    }

    /// A unit square as two triangles, written as a binary STL.
    fn square_binary() -> Vec<u8> {
        let mut out = Vec::new();
        let t = [
            tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
            tri([0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]),
        ];
        stl_io::write_stl(&mut out, t.iter()).unwrap();
        out
    }

    #[test]
    fn binary_and_ascii_squares_read_alike() {
        let b = read_mesh_from(&mut Cursor::new(square_binary())).unwrap();
        let ascii = "solid square\n\
            facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 1 1 0\n endloop\nendfacet\n\
            facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 1 0\n  vertex 0 1 0\n endloop\nendfacet\n\
            endsolid square\n";
        let a = read_mesh_from(&mut Cursor::new(ascii.as_bytes().to_vec())).unwrap();
        let bare = ascii.replacen("solid square", "solid", 1);
        let c = read_mesh_from(&mut Cursor::new(bare.into_bytes())).unwrap();
        assert_eq!(c, a, "a bare `solid` line");
        for m in [&a, &b] {
            assert_eq!(m.vertices.len(), 4, "shared corners merged");
            assert_eq!(m.triangles.len(), 2);
            assert_eq!(m.edges().values().filter(|t| t.len() == 2).count(), 1);
            assert_eq!(m.normal(0), DVec3::Z);
        }
        assert_eq!(a.vertices, b.vertices);
        assert_eq!(a.triangles, b.triangles);
    }

    #[test]
    fn bad_files_are_named_errors() {
        // Garbage, an empty file, a binary header announcing more triangles than follow.
        let mut truncated = square_binary();
        truncated.truncate(84 + 30);
        for bytes in [b"hello, not an STL".to_vec(), Vec::new(), truncated] {
            let e = read_mesh_from(&mut Cursor::new(bytes)).unwrap_err();
            assert!(matches!(e, ReadError::Io(_)), "{e}");
        }
        // A degenerate triangle is the mesh's error, naming it.
        let mut out = Vec::new();
        let t = [tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0])];
        stl_io::write_stl(&mut out, t.iter()).unwrap();
        let e = read_mesh_from(&mut Cursor::new(out)).unwrap_err();
        assert!(e.to_string().starts_with("triangle 0 is degenerate"), "{e}");
        // A binary file whose header starts like an ASCII one reads as binary.
        let mut solid = square_binary();
        solid[..12].copy_from_slice(b"solid square");
        let m = read_mesh_from(&mut Cursor::new(solid)).unwrap();
        assert_eq!(m.triangles.len(), 2);
        // A missing file names its path.
        let e = read_mesh(Path::new("/nonexistent/wall.stl")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/wall.stl"), "{e}");
    }

    proptest::proptest! {
        /// No input panics: random bytes, and a valid file with bytes overwritten or cut.
        #[test]
        fn no_input_panics(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            at in 0usize..184,
            cut in 0usize..184,
        ) {
            let _ = read_mesh_from(&mut Cursor::new(bytes.clone()));
            let mut file = square_binary();
            for (k, b) in bytes.iter().take(16).enumerate() {
                let i = (at + k) % file.len();
                file[i] = *b;
            }
            let _ = read_mesh_from(&mut Cursor::new(file.clone()));
            file.truncate(cut);
            let _ = read_mesh_from(&mut Cursor::new(file));
        }
    }
}
