//! STL files (binary and ASCII) read into [`TriangleMesh`]es, for mesh walls (issue
//! 26), with errors that say what is wrong with the file (issue 49): empty, truncated,
//! a binary header whose triangle count disagrees with the file's size, a byte-order
//! mark, an ASCII line that is not STL.
//!
//! The reader is our own (the format is small) so that each refusal can name the line,
//! the counts or the bytes. Corners are then welded ([`TriangleMesh::welded`]) within
//! [`tolerance`]: corners that an exporter wrote a rounding step apart become one
//! vertex, so triangles that meet there share the vertex and the edges
//! ([`TriangleMesh::edges`]), and a sphere on the seam meets one contact, not two.

use std::path::Path;

use glam::DVec3;

use crate::model::TriangleMesh;

/// The bytes of a binary STL before its triangles: an 80-byte header and the count.
const BINARY_HEADER: u64 = 84;
/// The bytes of one binary triangle: normal, three corners, attribute count.
const BINARY_TRIANGLE: u64 = 50;

/// The welding tolerance of an STL mesh with these corners (in the file's units): the
/// larger of [`TriangleMesh::weld_tolerance`] (10⁻⁶ of the mesh's size) and four `f32`
/// steps at the largest coordinate magnitude (4 × 2⁻²³ × max |x|), since a file's
/// corners are only that exact: a part modelled far from its origin still welds
/// corners one rounding step apart.
pub fn tolerance(vertices: &[DVec3]) -> f64 {
    let magnitude = vertices
        .iter()
        .map(|v| v.abs().max_element())
        .fold(0.0, f64::max);
    TriangleMesh::weld_tolerance(vertices).max(4.0 * f64::from(f32::EPSILON) * magnitude)
}

/// The mesh of the STL file at `path` (binary or ASCII), its corners widened to `f64`
/// and welded within [`tolerance`]. The errors are [`read_mesh_from`]'s, with
/// [`ReadError::Io`] also when the file cannot be opened.
pub fn read_mesh(path: &Path) -> Result<TriangleMesh, ReadError> {
    let mut file = std::fs::File::open(path)?;
    read_mesh_from(&mut file)
}

/// Why an STL file was refused. Facets are numbered from 0 in the file's order; so are
/// the triangles of [`ReadError::Mesh`].
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// No bytes at all.
    #[error("is empty: an STL file holds at least a header")]
    Empty,
    /// A UTF-8 byte-order mark (EF BB BF) at the start, which STL does not allow.
    #[error("starts with a UTF-8 byte-order mark (bytes EF BB BF){}: an ASCII STL must begin with `solid`; save the file without the mark", if *.solid { " before `solid`" } else { "" })]
    ByteOrderMark {
        /// Whether `solid` follows the mark.
        solid: bool,
    },
    /// Not ASCII STL and too short for a binary one's header.
    #[error("is not an STL file: not ASCII STL (which begins with `solid`), and its {bytes} bytes are fewer than a binary STL's 84-byte header")]
    TooShort {
        /// The file's size.
        bytes: u64,
    },
    /// Not ASCII STL, and a binary STL's size must be 84 + 50 n bytes for the n
    /// triangles its header counts.
    #[error("{}: as a binary STL its header counts {}, so it should have 84 + 50 × {header} = {} bytes, but it has {bytes} bytes, room for {}{}", diagnosis(*.header, *.bytes), triangles(u64::from(*.header)), binary_size(*.header), triangles(whole(*.bytes)), leftover(*.bytes))]
    CountMismatch {
        /// The triangle count in the header.
        header: u32,
        /// The file's size.
        bytes: u64,
    },
    /// An ASCII STL line that does not follow the format.
    #[error("line {line}: {what}")]
    Ascii {
        /// The line (from 1).
        line: usize,
        /// What is wrong there.
        what: String,
    },
    /// A corner with a NaN or infinite coordinate.
    #[error("facet {facet}{}: corner {corner} has a non-finite coordinate {position:?}", line.map_or(String::new(), |l| format!(" (line {l})")))]
    NonFinite {
        /// The facet.
        facet: usize,
        /// Its line, in an ASCII file.
        line: Option<usize>,
        /// The corner (0, 1, 2).
        corner: usize,
        /// Its coordinates.
        position: [f32; 3],
    },
    /// The mesh is refused once read and welded (no triangles, a degenerate, collapsed
    /// or repeated triangle).
    #[error("{0}")]
    Mesh(#[from] crate::model::MeshError),
}

/// A binary STL's size for `count` triangles.
fn binary_size(count: u32) -> u64 {
    BINARY_HEADER + BINARY_TRIANGLE * u64::from(count)
}

/// `n` triangles, said.
fn triangles(n: u64) -> String {
    if n == 1 {
        "1 triangle".into()
    } else {
        format!("{n} triangles")
    }
}

/// The whole triangles a binary file of `bytes` bytes has room for.
fn whole(bytes: u64) -> u64 {
    bytes.saturating_sub(BINARY_HEADER) / BINARY_TRIANGLE
}

/// The bytes past the last whole triangle, said.
fn leftover(bytes: u64) -> String {
    match bytes.saturating_sub(BINARY_HEADER) % BINARY_TRIANGLE {
        0 => String::new(),
        r => format!(" and {r} bytes more"),
    }
}

/// What a binary size mismatch most likely is.
fn diagnosis(header: u32, bytes: u64) -> &'static str {
    let need = binary_size(header);
    if need > bytes {
        "truncated (or not an STL file)"
    } else if (bytes - BINARY_HEADER) % BINARY_TRIANGLE == 0 {
        "the header's triangle count disagrees with the file's size (the triangles past the count would be lost)"
    } else {
        "not an STL file (or a binary STL with bytes appended)"
    }
}

/// Whether `bytes` start with the keyword `solid` (any case; leading blanks allowed)
/// followed by a blank or the end.
fn starts_solid(bytes: &[u8]) -> bool {
    let rest = bytes.trim_ascii_start();
    rest.len() >= 5
        && rest[..5].eq_ignore_ascii_case(b"solid")
        && rest.get(5).map_or(true, u8::is_ascii_whitespace)
}

/// Whether `bytes` can be text: no control bytes but blanks. Binary triangles hold
/// zero bytes (0.0, and the high bytes of small counts), so a binary STL is not text
/// even when its header begins with `solid`, as some CAD exporters write it.
fn is_text(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| (b >= 0x20 && b != 0x7f) || b.is_ascii_whitespace())
}

/// [`read_mesh`] from any reader. A file whose size is exactly a binary STL's for the
/// count in its header (84 + 50 n bytes) is binary, whatever its first bytes say; a
/// text file that begins with `solid` is ASCII; anything else is refused, saying why
/// (empty, a byte-order mark, too short, or the header's count against the size).
pub fn read_mesh_from<R: std::io::Read>(reader: &mut R) -> Result<TriangleMesh, ReadError> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    let corners = corners_of(&bytes)?;
    let tol = tolerance(&corners);
    let triangles = (0..corners.len() as u32 / 3)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    Ok(TriangleMesh::welded(corners, triangles, tol)?)
}

/// The three corners of each facet of the STL file `bytes`, in order, checked finite.
fn corners_of(bytes: &[u8]) -> Result<Vec<DVec3>, ReadError> {
    let size = bytes.len() as u64;
    if bytes.is_empty() {
        return Err(ReadError::Empty);
    }
    let header = (size >= BINARY_HEADER)
        .then(|| u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]));
    if let Some(count) = header.filter(|&c| binary_size(c) == size) {
        return binary(&bytes[BINARY_HEADER as usize..], count);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xef\xbb\xbf") {
        return Err(ReadError::ByteOrderMark {
            solid: starts_solid(rest),
        });
    }
    if starts_solid(bytes) && is_text(bytes) {
        return ascii(bytes);
    }
    match header {
        None => Err(ReadError::TooShort { bytes: size }),
        Some(header) => Err(ReadError::CountMismatch {
            header,
            bytes: size,
        }),
    }
}

/// The corners of `count` binary triangles (`data`: the bytes after the header, 50 per
/// triangle).
fn binary(data: &[u8], count: u32) -> Result<Vec<DVec3>, ReadError> {
    let mut corners = Vec::with_capacity(3 * count as usize);
    for (facet, t) in data.chunks_exact(BINARY_TRIANGLE as usize).enumerate() {
        let f = |k: usize| f32::from_le_bytes([t[4 * k], t[4 * k + 1], t[4 * k + 2], t[4 * k + 3]]);
        // Floats 3..12: the corners after the normal (0..3).
        for corner in 0..3 {
            let p = [f(3 + 3 * corner), f(4 + 3 * corner), f(5 + 3 * corner)];
            corners.push(finite(p, facet, None, corner)?);
        }
    }
    Ok(corners)
}

/// The corner `p` widened, if finite.
fn finite(
    p: [f32; 3],
    facet: usize,
    line: Option<usize>,
    corner: usize,
) -> Result<DVec3, ReadError> {
    if p.iter().all(|c| c.is_finite()) {
        Ok(DVec3::new(p[0].into(), p[1].into(), p[2].into()))
    } else {
        Err(ReadError::NonFinite {
            facet,
            line,
            corner,
            position: p,
        })
    }
}

/// Blank-separated words of a text, with their line numbers.
struct Words<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> Words<'a> {
    /// The next word and its line, if any.
    fn next(&mut self) -> Option<(&'a str, usize)> {
        while let Some(&b) = self.text.get(self.at) {
            if !b.is_ascii_whitespace() {
                break;
            }
            if b == b'\n' {
                self.line += 1;
            }
            self.at += 1;
        }
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|&b| !b.is_ascii_whitespace())
        {
            self.at += 1;
        }
        // Not UTF-8 (a name in another encoding): the word is no keyword nor number.
        (self.at > start).then(|| {
            (
                std::str::from_utf8(&self.text[start..self.at]).unwrap_or("\u{fffd}"),
                self.line,
            )
        })
    }

    /// Skips the rest of the current line (a solid's name).
    fn skip_line(&mut self) {
        while let Some(&b) = self.text.get(self.at) {
            if b == b'\n' {
                break;
            }
            self.at += 1;
        }
    }

    /// The next word, which must be `keyword` (any case).
    fn expect(&mut self, keyword: &str, context: &str) -> Result<usize, ReadError> {
        match self.next() {
            Some((w, line)) if w.eq_ignore_ascii_case(keyword) => Ok(line),
            Some((w, line)) => Err(ReadError::Ascii {
                line,
                what: format!("expected `{keyword}` {context}, found `{w}`"),
            }),
            None => Err(self.truncated(&format!("`{keyword}` {context}"))),
        }
    }

    /// Three numbers: `what` (the normal, a corner) of `facet`.
    fn numbers(&mut self, what: &str, facet: usize) -> Result<[f32; 3], ReadError> {
        let mut out = [0.0; 3];
        for (k, x) in out.iter_mut().enumerate() {
            let axis = ["x", "y", "z"][k];
            match self.next() {
                Some((w, line)) => {
                    *x = w.parse().map_err(|_| ReadError::Ascii {
                        line,
                        what: format!("`{w}` is not a number (facet {facet}, {what}, {axis})"),
                    })?
                }
                None => return Err(self.truncated(&format!("facet {facet}'s {what} {axis}"))),
            }
        }
        Ok(out)
    }

    /// The file ended where `wanted` was due.
    fn truncated(&self, wanted: &str) -> ReadError {
        ReadError::Ascii {
            line: self.line,
            what: format!("the file ends where {wanted} was due: truncated?"),
        }
    }
}

/// The corners of an ASCII STL: one or more `solid` … `endsolid` blocks of facets
/// (`facet normal n n n`, `outer loop`, three `vertex x y z`, `endloop`, `endfacet`).
/// Keywords in any case; the normals are read and ignored (a facet faces by its corner
/// order).
fn ascii(text: &[u8]) -> Result<Vec<DVec3>, ReadError> {
    let mut words = Words {
        text,
        at: 0,
        line: 1,
    };
    let mut corners = Vec::new();
    let mut facet = 0;
    loop {
        // The first `solid` is there (`starts_solid`); another may follow an `endsolid`.
        words.expect("solid", "to begin a solid")?;
        words.skip_line();
        loop {
            let context = format!("(facet {facet})");
            let (w, line) = match words.next() {
                Some(w) => w,
                None => return Err(words.truncated("`facet` or `endsolid`")),
            };
            if w.eq_ignore_ascii_case("endsolid") {
                words.skip_line();
                break;
            }
            if !w.eq_ignore_ascii_case("facet") {
                return Err(ReadError::Ascii {
                    line,
                    what: format!("expected `facet` or `endsolid`, found `{w}`"),
                });
            }
            words.expect("normal", &context)?;
            words.numbers("normal", facet)?;
            words.expect("outer", &context)?;
            words.expect("loop", &context)?;
            for corner in 0..3 {
                let line = words.expect("vertex", &format!("(facet {facet} has 3 corners)"))?;
                let p = words.numbers(&format!("corner {corner}"), facet)?;
                corners.push(finite(p, facet, Some(line), corner)?);
            }
            words.expect("endloop", &format!("(facet {facet} has 3 corners)"))?;
            words.expect("endfacet", &context)?;
            facet += 1;
        }
        if words.text[words.at..].trim_ascii().is_empty() {
            return Ok(corners);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MeshError;
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

    fn binary_of(t: &[stl_io::Triangle]) -> Vec<u8> {
        let mut out = Vec::new();
        stl_io::write_stl(&mut out, t.iter()).unwrap();
        out
    }

    /// The unit square as two triangles sharing the diagonal (0, 0)–(1, 1).
    fn square() -> [stl_io::Triangle; 2] {
        [
            tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
            tri([0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]),
        ]
    }

    /// A unit square as two triangles, written as a binary STL.
    fn square_binary() -> Vec<u8> {
        binary_of(&square())
    }

    fn read(bytes: impl Into<Vec<u8>>) -> Result<TriangleMesh, ReadError> {
        read_mesh_from(&mut Cursor::new(bytes.into()))
    }

    const ASCII: &str = "solid square\n\
        facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 1 1 0\n endloop\nendfacet\n\
        facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 1 0\n  vertex 0 1 0\n endloop\nendfacet\n\
        endsolid square\n";

    #[test]
    fn binary_and_ascii_squares_read_alike() {
        let b = read(square_binary()).unwrap();
        let a = read(ASCII).unwrap();
        let bare = ASCII.replacen("solid square", "solid", 1);
        let c = read(bare).unwrap();
        assert_eq!(c, a, "a bare `solid` line");
        // Upper case, CRLF, two solids in one file.
        let two = format!(
            "{}{}",
            ASCII.replace('\n', "\r\n").to_uppercase(),
            ASCII.replace("0 1 0", "0 1 1").replace("1 0 0", "1 0 1")
        );
        assert_eq!(read(two).unwrap().triangles.len(), 4);
        for m in [&a, &b] {
            assert_eq!(m.vertices.len(), 4, "shared corners merged");
            assert_eq!(m.triangles.len(), 2);
            assert_eq!(m.edges().values().filter(|t| t.len() == 2).count(), 1);
            assert_eq!(m.normal(0), DVec3::Z);
        }
        assert_eq!(a, b);
    }

    /// Issue 49, item 4: corners one `f32` step apart (an exporter's rounding) weld, so
    /// the seam is one shared edge, not two edges a sphere would touch twice; a part far
    /// from its origin welds too (the tolerance covers the coordinates' own steps).
    #[test]
    fn a_seam_one_f32_step_apart_is_one_edge() {
        for offset in [0.0f32, 1000.0] {
            // The next f32 up (x + offset ≥ 0: one more in the bits).
            let up = |x: f32| f32::from_bits((x + offset).to_bits() + 1);
            let o = |x: f32| x + offset;
            let t = [
                tri([o(0.0), 0.0, 0.0], [o(1.0), 0.0, 0.0], [o(1.0), 1.0, 0.0]),
                tri(
                    [up(0.0), 0.0, 0.0],
                    [o(1.0), f32::from_bits(1.0f32.to_bits() - 1), 0.0],
                    [o(0.0), 1.0, 0.0],
                ),
            ];
            let m = read(binary_of(&t)).unwrap();
            assert_eq!(m.vertices.len(), 4, "offset {offset}: {:?}", m.vertices);
            assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
            let shared: Vec<_> = m
                .edges()
                .into_iter()
                .filter(|(_, t)| t.len() == 2)
                .collect();
            assert_eq!(shared, vec![([0, 2], vec![0, 1])], "offset {offset}");
            // The first corner of each weld is kept as the file gives it.
            assert_eq!(m.vertices[0], DVec3::new(o(0.0).into(), 0.0, 0.0));
        }
        // 1e-6 of the mesh's size and four f32 steps at its largest coordinate.
        let v = [DVec3::ZERO, DVec3::new(3.0, 4.0, 0.0)];
        assert!((tolerance(&v) - 5e-6).abs() < 1e-20);
        let far = [DVec3::splat(1e4), DVec3::new(1e4 + 3.0, 1e4 + 4.0, 1e4)];
        assert_eq!(tolerance(&far), 4.0 * f64::from(f32::EPSILON) * (1e4 + 4.0));
    }

    #[test]
    fn a_facet_given_twice_is_refused() {
        // The first triangle again, turned over: the other side of the same face.
        let mut t = square().to_vec();
        t.push(tri([1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]));
        let e = read(binary_of(&t)).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::Mesh(MeshError::Coincident {
                    triangle: 2,
                    first: 0,
                    ..
                })
            ),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("triangle 2 repeats triangle 0"),
            "{e}"
        );
    }

    /// Issue 49, item 4: a binary header whose count disagrees with the file's size is
    /// refused with both counts, whichever is larger.
    #[test]
    fn a_binary_header_count_against_the_size_is_an_error_with_both_counts() {
        // Three triangles, the header counting two: the third would be lost.
        let mut t = square().to_vec();
        t.push(tri([0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]));
        let mut more = binary_of(&t);
        more[80..84].copy_from_slice(&2u32.to_le_bytes());
        let e = read(more.clone()).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::CountMismatch {
                    header: 2,
                    bytes: 234
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(msg.contains("header counts 2 triangles"), "{msg}");
        assert!(msg.contains("room for 3 triangles"), "{msg}");
        assert!(msg.contains("disagrees"), "{msg}");
        // The header counting four: truncated.
        more[80..84].copy_from_slice(&4u32.to_le_bytes());
        let msg = read(more).unwrap_err().to_string();
        assert!(msg.starts_with("truncated"), "{msg}");
        assert!(msg.contains("header counts 4 triangles, so it should have 84 + 50 × 4 = 284 bytes, but it has 234 bytes, room for 3 triangles"), "{msg}");
        // Cut inside a triangle: the bytes left over are said.
        let mut cut = square_binary();
        cut.truncate(84 + 30);
        let msg = read(cut).unwrap_err().to_string();
        assert!(msg.starts_with("truncated"), "{msg}");
        assert!(
            msg.contains("room for 0 triangles and 30 bytes more"),
            "{msg}"
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(matches!(read(Vec::new()), Err(ReadError::Empty)));
        // Garbage: short, and long enough for a header.
        let e = read(b"hello, not an STL".to_vec()).unwrap_err();
        assert!(matches!(e, ReadError::TooShort { bytes: 17 }), "{e}");
        assert!(e.to_string().starts_with("is not an STL file"), "{e}");
        let e = read(vec![b'x'; 200]).unwrap_err();
        assert!(matches!(e, ReadError::CountMismatch { .. }), "{e}");
        // A byte-order mark before `solid`.
        let e = read(format!("\u{feff}{ASCII}")).unwrap_err();
        assert!(matches!(e, ReadError::ByteOrderMark { solid: true }), "{e}");
        assert!(
            e.to_string()
                .contains("byte-order mark (bytes EF BB BF) before `solid`"),
            "{e}"
        );
        // ASCII cut short, a word out of place, a bad number: the line.
        let cut = &ASCII[..ASCII.find("endloop").unwrap()];
        let e = read(cut).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 7: the file ends where `endloop` (facet 0 has 3 corners) was due: truncated?"
        );
        let e = read(ASCII.replacen("  vertex 1 1 0\n", "", 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 6: expected `vertex` (facet 0 has 3 corners), found `endloop`"
        );
        let e = read(ASCII.replacen("vertex 1 0 0", "vertex 1 0.0.0 0", 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 5: `0.0.0` is not a number (facet 0, corner 1, y)"
        );
        let e = read(ASCII.replacen("vertex 1 0 0", "vertex 1 nan 0", 1)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("facet 0 (line 5): corner 1 has a non-finite"),
            "{e}"
        );
        let e = read(format!("{ASCII}garbage")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 17: expected `solid` to begin a solid, found `garbage`"
        );
        // A degenerate triangle is the mesh's error, naming it.
        let t = [tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0])];
        let e = read(binary_of(&t)).unwrap_err();
        assert!(e.to_string().starts_with("triangle 0 is degenerate"), "{e}");
        // A binary file whose header starts like an ASCII one reads as binary.
        let mut solid = square_binary();
        solid[..12].copy_from_slice(b"solid square");
        assert_eq!(read(solid.clone()).unwrap().triangles.len(), 2);
        // ... and with a wrong count, its binary bytes make it a binary error.
        solid[80] = 3;
        let e = read(solid).unwrap_err();
        assert!(
            matches!(e, ReadError::CountMismatch { header: 3, .. }),
            "{e}"
        );
        // A missing file.
        let e = read_mesh(Path::new("/nonexistent/wall.stl")).unwrap_err();
        assert!(matches!(e, ReadError::Io(_)), "{e}");
    }

    /// The bundled meshes read as `stl_io` (the reader before welding) reads them, to
    /// the vertex and its index: welding merges nothing there, so the scenes that use
    /// them run as before.
    #[test]
    fn bundled_meshes_read_as_before() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/meshes");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let ours = read_mesh(&path).unwrap();
            let theirs = stl_io::read_stl(&mut std::fs::File::open(&path).unwrap()).unwrap();
            let v: Vec<DVec3> = theirs
                .vertices
                .iter()
                .map(|v| DVec3::new(v[0].into(), v[1].into(), v[2].into()))
                .collect();
            let t: Vec<[u32; 3]> = theirs
                .faces
                .iter()
                .map(|f| f.vertices.map(|k| k as u32))
                .collect();
            assert_eq!(ours.vertices, v, "{}", path.display());
            assert_eq!(ours.triangles, t, "{}", path.display());
            n += 1;
        }
        assert!(n >= 2);
    }

    proptest::proptest! {
        /// No input panics: random bytes, and a valid file with bytes overwritten or cut.
        #[test]
        fn no_input_panics(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            at in 0usize..184,
            cut in 0usize..184,
        ) {
            let _ = read(bytes.clone());
            let mut file = square_binary();
            for (k, b) in bytes.iter().take(16).enumerate() {
                let i = (at + k) % file.len();
                file[i] = *b;
            }
            let _ = read(file.clone());
            file.truncate(cut);
            let _ = read(file);
            let mut text = ASCII.as_bytes().to_vec();
            for (k, b) in bytes.iter().take(8).enumerate() {
                let i = (at + k) % text.len();
                text[i] = *b;
            }
            let _ = read(text.clone());
            text.truncate(cut);
            let _ = read(text);
        }
    }
}
