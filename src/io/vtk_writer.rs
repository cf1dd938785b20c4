//! ParaView output: one VTK XML PolyData file (`.vtp`) per output step and a `.pvd`
//! collection that ParaView opens as one time series.
//!
//! Layout in the output directory `DIR`:
//!
//! * `DIR/vtk/particles_SSSSSSSS.vtp`: the state at step `SSSSSSSS` (zero-padded to 8
//!   digits), see [`write_vtp`];
//! * `DIR/particles.pvd`: `<VTKFile type="Collection">` with one
//!   `<DataSet timestep="t" file="vtk/particles_SSSSSSSS.vtp"/>` per frame, `t` the
//!   simulated time. [`VtkSeries`] rewrites it (atomically, through a rename) after every
//!   frame, so it is valid whenever a run stops. Frames are written the same way (to
//!   `particles_SSSSSSSS.vtp.tmp`, then renamed): a full disk leaves no truncated frame.
//!
//! A `.vtp` file holds one piece:
//!
//! * `Points`: the particle centres (`Float64`);
//! * `Verts`: one vertex cell per particle (cells `0..N`), so the points render without
//!   a filter;
//! * `Lines`: one line cell `i j` per bond (cells `N..N+B`, in bond order), broken
//!   bonds left out (issue 47);
//! * point data: `radius`, `velocity` (3), `angular_velocity` (3, spatial Ω),
//!   `rotation` (3, the Rodrigues vector α), `force` (3), `moment` (3, spatial),
//!   all `Float64`, and `contact_count`, `material_id` (index into the scene's `[[material]]`s, 0 without any), `id` and `body_id` (the sphere's body: its own id for a particle, its clump's `final.csv` row for a clump's sphere), `Int32`; in scenes whose bonds can
//!   break, `broken_bonds` (`Int32`), how many of the particle's bonds broke;
//! * cell data (over the vertex cells, then the line cells, as VTK orders them):
//!   `strain_energy` (`Float64`, `U^m + U^a + U^s` of the bond; 0 on vertex cells) and
//!   `bond_id` (`Int32`; −1 on vertex cells).
//!
//! Every array is written `format="binary"`: base64 of one little-endian `UInt64` byte
//! count followed by the raw values, as one base64 stream (what VTK itself writes for
//! uncompressed inline data). `Float64` values therefore read back bit for bit.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::backend::Frame;
use crate::error::{Error, Result};
use crate::model::Bond;

/// Directory (inside the output directory) of the `.vtp` frames.
pub const VTK_DIR: &str = "vtk";
/// File name of the time-series collection in the output directory.
pub const PVD_FILE: &str = "particles.pvd";

/// File name of the frame at `step`: `particles_` + the step zero-padded to 8 digits +
/// `.vtp`.
pub fn frame_file_name(step: u64) -> String {
    format!("particles_{step:08}.vtp")
}

/// One entry of the `.pvd` collection.
#[derive(Clone, Debug, PartialEq)]
pub struct PvdEntry {
    /// Simulated time of the frame (s).
    pub time: f64,
    /// Path of the `.vtp` file relative to the `.pvd` (forward slashes).
    pub file: String,
}

/// Writes the `.vtp` series of a run and keeps its `.pvd` collection up to date.
#[derive(Clone, Debug)]
pub struct VtkSeries {
    out_dir: PathBuf,
    bonds: Vec<(u32, u32)>,
    entries: Vec<PvdEntry>,
}

impl VtkSeries {
    /// Starts a series in `out_dir` (creating `out_dir/vtk/`) for a model with `bonds`
    /// (their ends become the line cells of every frame). The `.pvd` is written with the
    /// first frame.
    pub fn create(out_dir: &Path, bonds: &[Bond]) -> Result<Self> {
        let dir = out_dir.join(VTK_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Self {
            out_dir: out_dir.to_path_buf(),
            bonds: bonds.iter().map(|b| (b.i, b.j)).collect(),
            entries: Vec::new(),
        })
    }

    /// Continues the series of a run resumed at step `step` (from a checkpoint) in
    /// `out_dir`: the frames of earlier steps listed in an existing `particles.pvd` are
    /// kept, those of `step` and later are dropped (the resumed run writes them again).
    /// Without a `particles.pvd`, this is [`VtkSeries::create`]. Resumed in the run's
    /// own directory, the collection thus ends up as if the run had never stopped.
    pub fn resume(out_dir: &Path, bonds: &[Bond], step: u64) -> Result<Self> {
        let mut series = Self::create(out_dir, bonds)?;
        let pvd = series.pvd_path();
        let text = match std::fs::read_to_string(&pvd) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(series),
            Err(e) => return Err(Error::io(&pvd, e)),
        };
        for line in text.lines() {
            let (Some(time), Some(file)) = (attribute(line, "timestep"), attribute(line, "file"))
            else {
                continue;
            };
            let frame_step = file
                .strip_prefix(VTK_DIR)
                .and_then(|f| f.strip_prefix("/particles_"))
                .and_then(|f| f.strip_suffix(".vtp"))
                .and_then(|f| f.parse::<u64>().ok());
            if let (Some(s), Ok(time)) = (frame_step, time.parse::<f64>()) {
                if s < step {
                    series.entries.push(PvdEntry {
                        time,
                        file: file.to_owned(),
                    });
                }
            }
        }
        Ok(series)
    }

    /// Path of the `.pvd` collection.
    pub fn pvd_path(&self) -> PathBuf {
        self.out_dir.join(PVD_FILE)
    }

    /// The frames written so far.
    pub fn entries(&self) -> &[PvdEntry] {
        &self.entries
    }

    /// Writes `frame` to `vtk/particles_<step>.vtp`, adds it to the collection and
    /// rewrites the `.pvd`. Returns the path of the `.vtp`.
    pub fn write(&mut self, frame: &Frame) -> Result<PathBuf> {
        let name = frame_file_name(frame.step);
        let path = self.out_dir.join(VTK_DIR).join(&name);
        write_vtp(&path, frame, &self.bonds)?;
        let entry = PvdEntry {
            time: frame.time,
            file: format!("{VTK_DIR}/{name}"),
        };
        // A frame written again at the same step (a restart) replaces the old entry.
        self.entries.retain(|e| e.file != entry.file);
        self.entries.push(entry);
        write_pvd(&self.pvd_path(), &self.entries)?;
        Ok(path)
    }
}

/// The value of attribute `name` in one line of XML (no entities: the `.pvd` we write
/// has none in its times and frame names).
fn attribute<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

/// Writes the collection `entries` to `path`, through a temporary file renamed over it,
/// so a reader never sees a partial file.
pub fn write_pvd(path: &Path, entries: &[PvdEntry]) -> Result<()> {
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for e in entries {
        // `{:e}` is the shortest representation that parses back to the same f64.
        let _ = writeln!(
            text,
            "    <DataSet timestep=\"{:e}\" group=\"\" part=\"0\" file=\"{}\"/>",
            e.time,
            xml_escape(&e.file)
        );
    }
    text.push_str("  </Collection>\n</VTKFile>\n");
    write_file(path, text.as_bytes())
}

/// Writes one frame as VTK XML PolyData (see the [module docs](self) for the arrays).
/// `bonds` are the `(i, j)` ends of every bond, in bond order; `frame.bond_energy` must
/// have one entry per bond and the per-particle vectors one per particle.
///
/// Particles out of the system are left out: dormant ones (reserved by an inserter,
/// not yet inserted) and removed ones (left the domain, `removed.csv`); `id` keeps
/// every particle's own id. A bond with an end out of the system is left out too;
/// `bond_id` keeps every bond's own index.
pub fn write_vtp(path: &Path, frame: &Frame, bonds: &[(u32, u32)]) -> Result<()> {
    let n = frame.particles.len();
    // Breakable bonds (issue 47): the broken ones leave the lines, and each particle
    // shows how many of its bonds broke.
    let broken = &frame.bond_broken;
    let breakable = !broken.is_empty();
    if breakable && broken.len() != bonds.len() {
        return Err(invalid(
            path,
            format!(
                "frame of step {}: {} broken-bond flags for {} bonds",
                frame.step,
                broken.len(),
                bonds.len()
            ),
        ));
    }
    let in_system = frame.in_system();
    if (in_system.is_none() && !breakable) || frame.bond_energy.len() != bonds.len() {
        return write_points(path, frame, bonds, None, None, None);
    }
    let mut broken_count = vec![0i32; if breakable { n } else { 0 }];
    for (b, &(i, j)) in bonds.iter().enumerate() {
        if breakable && broken[b] {
            for e in [i, j] {
                if let Some(c) = broken_count.get_mut(e as usize) {
                    *c += 1;
                }
            }
        }
    }
    let (mut kept, ids) = in_system.unwrap_or_else(|| (frame.clone(), (0..n as u32).collect()));
    // Each kept particle's point index, by id.
    let mut point = vec![u32::MAX; n];
    for (k, &id) in ids.iter().enumerate() {
        point[id as usize] = k as u32;
    }
    let at = |i: u32| point.get(i as usize).copied().filter(|&k| k != u32::MAX);
    let (mut ends, mut bond_ids, mut energy) = (Vec::new(), Vec::new(), Vec::new());
    for (b, &(i, j)) in bonds.iter().enumerate() {
        if breakable && broken[b] {
            continue;
        }
        if let (Some(a), Some(c)) = (at(i), at(j)) {
            ends.push((a, c));
            bond_ids.push(b as u32);
            energy.push(frame.bond_energy[b]);
        }
    }
    kept.bond_energy = energy;
    let counts: Option<Vec<i32>> =
        breakable.then(|| ids.iter().map(|&i| broken_count[i as usize]).collect());
    write_points(
        path,
        &kept,
        &ends,
        Some(&ids),
        Some(&bond_ids),
        counts.as_deref(),
    )
}

/// [`write_vtp`] of a frame whose particles have ids `ids` (`None`: their indices),
/// and whose bonds have indices `bond_ids` (`None`: their positions in `bonds`);
/// `broken_bonds`: each point's count of broken bonds (breakable bonds only).
fn write_points(
    path: &Path,
    frame: &Frame,
    bonds: &[(u32, u32)],
    ids: Option<&[u32]>,
    bond_ids: Option<&[u32]>,
    broken_bonds: Option<&[i32]>,
) -> Result<()> {
    let p = &frame.particles;
    let n = p.len();
    let nb = bonds.len();
    let lengths = [
        ("force", frame.force.len()),
        ("moment", frame.moment.len()),
        ("contact_count", frame.contact_count.len()),
    ];
    for (what, len) in lengths {
        if len != n {
            return Err(invalid(
                path,
                format!(
                    "frame of step {}: {len} {what} values for {n} particles",
                    frame.step
                ),
            ));
        }
    }
    if frame.bond_energy.len() != nb {
        return Err(invalid(
            path,
            format!(
                "frame of step {}: {} bond energies for {nb} bonds",
                frame.step,
                frame.bond_energy.len()
            ),
        ));
    }

    let mut x = String::with_capacity(256 + n * 250 + nb * 60);
    x.push_str("<?xml version=\"1.0\"?>\n");
    x.push_str("<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    let _ = writeln!(
        x,
        "  <!-- varidem: step {} time {:e} -->\n  <PolyData>\n    <Piece NumberOfPoints=\"{n}\" NumberOfVerts=\"{n}\" NumberOfLines=\"{nb}\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">",
        frame.step, frame.time
    );

    x.push_str("      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n");
    data_array(&mut x, "radius", 1, &Values::F64(&p.radius));
    for (name, v) in [
        ("velocity", &p.velocity),
        ("angular_velocity", &p.angular_velocity),
        ("rotation", &p.rotation),
        ("force", &frame.force),
        ("moment", &frame.moment),
    ] {
        data_array(&mut x, name, 3, &Values::Vec3(v));
    }
    let counts: Vec<i32> = frame
        .contact_count
        .iter()
        .map(|&c| i32::try_from(c).unwrap_or(i32::MAX))
        .collect();
    data_array(&mut x, "contact_count", 1, &Values::I32(&counts));
    let material: Vec<i32> = frame.particles.material.iter().map(|&m| m as i32).collect();
    data_array(&mut x, "material_id", 1, &Values::I32(&material));
    let ids: Vec<i32> = match ids {
        Some(ids) => ids.iter().map(|&i| index_i32(i as usize)).collect(),
        None => (0..n).map(index_i32).collect(),
    };
    data_array(&mut x, "id", 1, &Values::I32(&ids));
    // The body of each sphere (a clump's spheres share their clump's row in final.csv).
    let bodies: Vec<i32> = if frame.body_id.len() == n {
        frame.body_id.iter().map(|&b| b as i32).collect()
    } else {
        ids.clone()
    };
    data_array(&mut x, "body_id", 1, &Values::I32(&bodies));
    if let Some(c) = broken_bonds {
        data_array(&mut x, "broken_bonds", 1, &Values::I32(c));
    }
    x.push_str("      </PointData>\n");

    // Cell data: the N vertex cells come first, then the bond lines.
    x.push_str("      <CellData Scalars=\"strain_energy\">\n");
    let mut energy = vec![0.0; n];
    energy.extend_from_slice(&frame.bond_energy);
    data_array(&mut x, "strain_energy", 1, &Values::F64(&energy));
    let mut bond_id = vec![-1i32; n];
    match bond_ids {
        Some(b) => bond_id.extend(b.iter().map(|&k| index_i32(k as usize))),
        None => bond_id.extend((0..nb).map(index_i32)),
    }
    data_array(&mut x, "bond_id", 1, &Values::I32(&bond_id));
    x.push_str("      </CellData>\n");

    x.push_str("      <Points>\n");
    data_array(&mut x, "Points", 3, &Values::Vec3(&p.position));
    x.push_str("      </Points>\n");

    x.push_str("      <Verts>\n");
    let verts: Vec<i64> = (0..n as i64).collect();
    data_array(&mut x, "connectivity", 1, &Values::I64(&verts));
    let offsets: Vec<i64> = (1..=n as i64).collect();
    data_array(&mut x, "offsets", 1, &Values::I64(&offsets));
    x.push_str("      </Verts>\n");

    if nb > 0 {
        x.push_str("      <Lines>\n");
        let ends: Vec<i64> = bonds
            .iter()
            .flat_map(|&(i, j)| [i64::from(i), i64::from(j)])
            .collect();
        data_array(&mut x, "connectivity", 1, &Values::I64(&ends));
        let offsets: Vec<i64> = (1..=nb as i64).map(|k| 2 * k).collect();
        data_array(&mut x, "offsets", 1, &Values::I64(&offsets));
        x.push_str("      </Lines>\n");
    }

    x.push_str("    </Piece>\n  </PolyData>\n</VTKFile>\n");
    write_file(path, x.as_bytes())
}

fn invalid(path: &Path, msg: String) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
    )
}

fn index_i32(i: usize) -> i32 {
    i32::try_from(i).unwrap_or(i32::MAX)
}

/// The values of one data array.
enum Values<'a> {
    F64(&'a [f64]),
    Vec3(&'a [DVec3]),
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Values<'_> {
    fn vtk_type(&self) -> &'static str {
        match self {
            Self::F64(_) | Self::Vec3(_) => "Float64",
            Self::I32(_) => "Int32",
            Self::I64(_) => "Int64",
        }
    }

    /// The 8-byte little-endian byte count, then the values in little-endian order.
    fn encoded_block(&self) -> Vec<u8> {
        let len = match self {
            Self::F64(v) => 8 * v.len(),
            Self::Vec3(v) => 24 * v.len(),
            Self::I32(v) => 4 * v.len(),
            Self::I64(v) => 8 * v.len(),
        };
        let mut b = Vec::with_capacity(8 + len);
        b.extend_from_slice(&(len as u64).to_le_bytes());
        match self {
            Self::F64(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            Self::Vec3(v) => v.iter().for_each(|x| {
                for c in x.to_array() {
                    b.extend_from_slice(&c.to_le_bytes());
                }
            }),
            Self::I32(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            Self::I64(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
        }
        b
    }
}

/// Appends one `<DataArray format="binary">` element to `x`.
fn data_array(x: &mut String, name: &str, components: usize, values: &Values<'_>) {
    let _ = write!(
        x,
        "        <DataArray type=\"{}\" Name=\"{name}\"",
        values.vtk_type()
    );
    if components != 1 {
        let _ = write!(x, " NumberOfComponents=\"{components}\"");
    }
    x.push_str(" format=\"binary\">");
    base64_into(x, &values.encoded_block());
    x.push_str("</DataArray>\n");
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends the standard (RFC 4648, padded) base64 encoding of `bytes` to `out`.
fn base64_into(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let sym = |v: u32| char::from(BASE64[(v & 63) as usize]);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let v = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend([sym(v >> 18), sym(v >> 12), sym(v >> 6), sym(v)]);
    }
    match *chunks.remainder() {
        [a] => {
            let v = u32::from(a) << 16;
            out.extend([sym(v >> 18), sym(v >> 12), '=', '=']);
        }
        [a, b] => {
            let v = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend([sym(v >> 18), sym(v >> 12), sym(v >> 6), '=']);
        }
        _ => {}
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Writes `bytes` to `path` through `path.tmp` renamed over it, so `path` holds either
/// its old contents or all the new ones: a full disk or a failing write leaves no
/// truncated frame (issue 49) and the temporary file is removed.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame whose write fails (here its temporary name is taken by a directory; on a
    /// full disk, `write_all` fails) leaves the file of that name as it was, never
    /// truncated, and no temporary file.
    #[test]
    fn a_failing_write_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("particles_00000010.vtp");
        write_file(&path, b"the whole old frame").unwrap();
        assert!(!dir.path().join("particles_00000010.vtp.tmp").exists());
        std::fs::create_dir(dir.path().join("particles_00000010.vtp.tmp")).unwrap();
        let err = write_file(&path, b"a new frame").unwrap_err().to_string();
        assert!(err.contains("particles_00000010.vtp.tmp"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"the whole old frame");
        std::fs::remove_dir(dir.path().join("particles_00000010.vtp.tmp")).unwrap();
        write_file(&path, b"a new frame").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a new frame");
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut s = String::new();
            base64_into(&mut s, input.as_bytes());
            assert_eq!(s, expected, "{input:?}");
        }
        let mut s = String::new();
        base64_into(&mut s, &[0xff, 0xfe, 0x00]);
        assert_eq!(s, "//4A");
    }

    #[test]
    fn frame_names_are_zero_padded() {
        assert_eq!(frame_file_name(0), "particles_00000000.vtp");
        assert_eq!(frame_file_name(1234), "particles_00001234.vtp");
        assert_eq!(frame_file_name(123_456_789), "particles_123456789.vtp");
    }

    #[test]
    fn a_frame_of_the_wrong_size_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut frame = Frame::default();
        frame.force.push(DVec3::ZERO);
        let err = write_vtp(&dir.path().join("x.vtp"), &frame, &[]).unwrap_err();
        assert!(
            err.to_string().contains("1 force values for 0 particles"),
            "{err}"
        );
    }
}
