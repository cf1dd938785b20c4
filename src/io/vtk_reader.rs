//! Reading the ParaView frames back: a small reader for the VTK XML PolyData (`.vtp`)
//! files that [`write_vtp`](super::vtk_writer::write_vtp) writes, and [`load_frame`], the
//! particles of one output step of a run (from its `.vtp` frame, or from `final.csv`
//! for the last step of a run without ParaView output).
//!
//! The reader handles what varidem writes and a little more: `format="binary"` (base64
//! of a `UInt32` or `UInt64` byte count and the raw little-endian values, uncompressed)
//! and `format="ascii"` data arrays of any numeric type, in one `<Piece>`. Appended
//! data and compressed files (as ParaView itself may save them) are reported as
//! unsupported, naming the file.

use std::path::{Path, PathBuf};

use glam::DVec3;

use super::vtk_writer::{frame_file_name, VTK_DIR};
use crate::error::{Error, Result};

/// One named data array of a `.vtp` file, converted to `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct VtpArray {
    /// `Name` attribute.
    pub name: String,
    /// `NumberOfComponents` (1 when absent).
    pub components: usize,
    /// The values, tuple after tuple.
    pub values: Vec<f64>,
}

impl VtpArray {
    /// Tuple `i` of a 3-component array as a vector.
    fn vec3(&self, i: usize) -> DVec3 {
        DVec3::new(
            self.values[3 * i],
            self.values[3 * i + 1],
            self.values[3 * i + 2],
        )
    }
}

/// The contents of a `.vtp` file that matter for particles: the points and their point
/// data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VtpFile {
    /// Step and time from varidem's `<!-- varidem: step S time T -->` comment, if any.
    pub step_time: Option<(u64, f64)>,
    /// Point coordinates.
    pub points: Vec<DVec3>,
    /// Point data arrays, in file order.
    pub point_data: Vec<VtpArray>,
}

impl VtpFile {
    /// The point data array `name`, if present.
    pub fn point_array(&self, name: &str) -> Option<&VtpArray> {
        self.point_data.iter().find(|a| a.name == name)
    }
}

fn bad(path: &Path, msg: impl Into<String>) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into()),
    )
}

/// Reads the points and point data of the (first) piece of a `.vtp` file.
pub fn read_vtp(path: &Path) -> Result<VtpFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_vtp(&text).map_err(|msg| bad(path, msg))
}

/// [`read_vtp`] on the text of a file; errors are messages without the path.
fn parse_vtp(text: &str) -> std::result::Result<VtpFile, String> {
    let root = tag_at(text, "<VTKFile").ok_or("not a VTK XML file: no <VTKFile> element")?;
    if attribute(root, "type") != Some("PolyData") {
        return Err(format!(
            "not a PolyData file (VTKFile type={:?})",
            attribute(root, "type").unwrap_or("")
        ));
    }
    if attribute(root, "compressor").is_some() {
        return Err("compressed VTK files are not supported".into());
    }
    if attribute(root, "byte_order").is_some_and(|b| b != "LittleEndian") {
        return Err("big-endian VTK files are not supported".into());
    }
    let wide_header = match attribute(root, "header_type").unwrap_or("UInt32") {
        "UInt64" => true,
        "UInt32" => false,
        other => return Err(format!("unsupported header_type {other:?}")),
    };
    let piece = tag_at(text, "<Piece").ok_or("no <Piece> element")?;
    let n: usize = attribute(piece, "NumberOfPoints")
        .and_then(|v| v.parse().ok())
        .ok_or("<Piece> has no valid NumberOfPoints")?;

    let step_time = text.find("<!-- varidem: step ").and_then(|k| {
        let rest = &text[k + "<!-- varidem: step ".len()..];
        let rest = &rest[..rest.find("-->")?];
        let (step, time) = rest.trim().split_once(" time ")?;
        Some((step.parse().ok()?, time.parse().ok()?))
    });

    let points = section(text, "Points").ok_or("no <Points> element")?;
    let points = arrays(points, wide_header)?
        .into_iter()
        .next()
        .ok_or("<Points> holds no DataArray")?;
    if points.components != 3 || points.values.len() != 3 * n {
        return Err(format!(
            "Points: {} values in {} components, expected {} points × 3",
            points.values.len(),
            points.components,
            n
        ));
    }
    let point_data = match section(text, "PointData") {
        Some(s) => arrays(s, wide_header)?,
        None => Vec::new(),
    };
    for a in &point_data {
        if a.values.len() != n * a.components {
            return Err(format!(
                "point data {:?}: {} values, expected {} points × {}",
                a.name,
                a.values.len(),
                n,
                a.components
            ));
        }
    }
    Ok(VtpFile {
        step_time,
        points: (0..n).map(|i| points.vec3(i)).collect(),
        point_data,
    })
}

/// The opening tag starting with `start` (e.g. `<Piece`), up to its `>`.
fn tag_at<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    let k = text.find(start)?;
    let len = text[k..].find('>')?;
    Some(&text[k..=k + len])
}

/// The text between `<name ...>` and `</name>`.
fn section<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}");
    let mut from = 0;
    // `<Points` must not match `<PointsX`: the tag name ends at a space, `>` or `/`.
    let start = loop {
        let k = from + text[from..].find(&open)?;
        let after = text[k + open.len()..].chars().next()?;
        if after == '>' || after == ' ' || after == '\n' {
            break k;
        }
        if after == '/' {
            return Some("");
        }
        from = k + open.len();
    };
    let body = start + text[start..].find('>')? + 1;
    let end = body + text[body..].find(&format!("</{name}>"))?;
    Some(&text[body..end])
}

/// The value of attribute `name` in an opening tag (no entities: varidem's names and
/// numbers have none).
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// Every `<DataArray>` in `text`, decoded.
fn arrays(text: &str, wide_header: bool) -> std::result::Result<Vec<VtpArray>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(k) = rest.find("<DataArray") {
        let tag_len = rest[k..].find('>').ok_or("unterminated <DataArray> tag")?;
        let tag = &rest[k..=k + tag_len];
        let name = attribute(tag, "Name").unwrap_or("").to_owned();
        let components = match attribute(tag, "NumberOfComponents") {
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&c| c > 0)
                .ok_or_else(|| format!("DataArray {name:?}: NumberOfComponents = {c:?}"))?,
            None => 1,
        };
        let ty = attribute(tag, "type").unwrap_or("");
        let body_start = k + tag_len + 1;
        let (body, next) = if tag.ends_with("/>") {
            ("", body_start)
        } else {
            let len = rest[body_start..]
                .find("</DataArray>")
                .ok_or_else(|| format!("DataArray {name:?}: no </DataArray>"))?;
            (
                &rest[body_start..body_start + len],
                body_start + len + "</DataArray>".len(),
            )
        };
        let values = match attribute(tag, "format").unwrap_or("ascii") {
            "ascii" => body
                .split_ascii_whitespace()
                .map(|v| {
                    v.parse::<f64>()
                        .map_err(|_| format!("DataArray {name:?}: {v:?} is not a number"))
                })
                .collect::<std::result::Result<Vec<_>, _>>()?,
            "binary" => decode_binary(body, ty, wide_header)
                .map_err(|e| format!("DataArray {name:?}: {e}"))?,
            other => {
                return Err(format!(
                    "DataArray {name:?}: format {other:?} is not supported (only inline ascii and binary)"
                ))
            }
        };
        out.push(VtpArray {
            name,
            components,
            values,
        });
        rest = &rest[next..];
    }
    Ok(out)
}

/// Decodes one inline binary array: base64 of the byte count header and the values.
fn decode_binary(body: &str, ty: &str, wide_header: bool) -> std::result::Result<Vec<f64>, String> {
    let bytes = base64_decode(body)?;
    let header = if wide_header { 8 } else { 4 };
    if bytes.len() < header {
        return Err("binary data shorter than its header".into());
    }
    let mut count = [0u8; 8];
    count[..header].copy_from_slice(&bytes[..header]);
    let count = u64::from_le_bytes(count);
    let data = &bytes[header..];
    if count != data.len() as u64 {
        return Err(format!(
            "header says {count} bytes, the data holds {}",
            data.len()
        ));
    }
    Ok(match ty {
        "Float64" => values(data, ty, f64::from_le_bytes)?,
        "Float32" => values(data, ty, |b| f64::from(f32::from_le_bytes(b)))?,
        "Int8" => values(data, ty, |b| f64::from(i8::from_le_bytes(b)))?,
        "UInt8" => values(data, ty, |b| f64::from(u8::from_le_bytes(b)))?,
        "Int16" => values(data, ty, |b| f64::from(i16::from_le_bytes(b)))?,
        "UInt16" => values(data, ty, |b| f64::from(u16::from_le_bytes(b)))?,
        "Int32" => values(data, ty, |b| f64::from(i32::from_le_bytes(b)))?,
        "UInt32" => values(data, ty, |b| f64::from(u32::from_le_bytes(b)))?,
        // 64-bit integers beyond 2^53 lose precision; ids and counts never get there.
        "Int64" => values(data, ty, |b| i64::from_le_bytes(b) as f64)?,
        "UInt64" => values(data, ty, |b| u64::from_le_bytes(b) as f64)?,
        other => return Err(format!("type {other:?} is not supported")),
    })
}

/// `data` as little-endian values of `W` bytes, each converted by `f`.
fn values<const W: usize>(
    data: &[u8],
    ty: &str,
    f: impl Fn([u8; W]) -> f64,
) -> std::result::Result<Vec<f64>, String> {
    if data.len() % W != 0 {
        return Err(format!(
            "{} bytes is not a whole number of {ty}",
            data.len()
        ));
    }
    Ok(data
        .chunks_exact(W)
        .map(|c| f(c.try_into().expect("a chunk of W bytes")))
        .collect())
}

/// Standard (RFC 4648) base64, padded, whitespace ignored.
fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            c if c.is_ascii_whitespace() => continue,
            c => return Err(format!("invalid base64 character {:?}", char::from(c))),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// The particles of one output step, as the renderer needs them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleFrame {
    /// Output step.
    pub step: u64,
    /// Simulated time (s), when known.
    pub time: Option<f64>,
    /// Where the frame was read from.
    pub source: PathBuf,
    /// Particle centres (m).
    pub position: Vec<DVec3>,
    /// Radii (m).
    pub radius: Vec<f64>,
    /// Velocities (m/s).
    pub velocity: Vec<DVec3>,
    /// Spatial angular velocities (rad/s).
    pub angular_velocity: Vec<DVec3>,
    /// Particle ids.
    pub id: Vec<u32>,
    /// Each sphere's body (`body_id`; its id when the frame has none).
    pub body_id: Vec<u32>,
    /// Total forces (N): only in `.vtp` frames.
    pub force: Option<Vec<DVec3>>,
    /// Contact counts: only in `.vtp` frames.
    pub contact_count: Option<Vec<u32>>,
    /// Broken bonds per particle (issue 47): only in `.vtp` frames of scenes whose
    /// bonds can break.
    pub broken_bonds: Option<Vec<u32>>,
}

impl ParticleFrame {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// Whether the frame has no particle.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// The particles of a `.vtp` frame written by varidem (it must have the point data
    /// `radius`, `velocity` and `angular_velocity`; `force`, `contact_count` and `id`
    /// are read when present).
    pub fn from_vtp(path: &Path) -> Result<Self> {
        let file = read_vtp(path)?;
        let n = file.points.len();
        let need = |name: &str, components: usize| -> Result<&VtpArray> {
            let a = file
                .point_array(name)
                .ok_or_else(|| bad(path, format!("no point data array {name:?}")))?;
            if a.components != components {
                return Err(bad(
                    path,
                    format!(
                        "point data {name:?} has {} components, expected {components}",
                        a.components
                    ),
                ));
            }
            Ok(a)
        };
        let vecs = |a: &VtpArray| (0..n).map(|i| a.vec3(i)).collect::<Vec<_>>();
        let radius = need("radius", 1)?.values.clone();
        let velocity = vecs(need("velocity", 3)?);
        let angular_velocity = vecs(need("angular_velocity", 3)?);
        let force = match file.point_array("force") {
            Some(_) => Some(vecs(need("force", 3)?)),
            None => None,
        };
        // Counts and ids are integers stored exactly; `as` saturates anything odd.
        let ints = |a: &VtpArray| a.values.iter().map(|&v| v as u32).collect::<Vec<_>>();
        let contact_count = match file.point_array("contact_count") {
            Some(_) => Some(ints(need("contact_count", 1)?)),
            None => None,
        };
        let broken_bonds = match file.point_array("broken_bonds") {
            Some(_) => Some(ints(need("broken_bonds", 1)?)),
            None => None,
        };
        let id = match file.point_array("id") {
            Some(_) => ints(need("id", 1)?),
            None => (0..n).map(|i| i as u32).collect(),
        };
        let body_id = match file.point_array("body_id") {
            Some(_) => ints(need("body_id", 1)?),
            None => id.clone(),
        };
        Ok(Self {
            step: file.step_time.map_or(0, |(s, _)| s),
            time: file.step_time.map(|(_, t)| t),
            source: path.to_owned(),
            position: file.points,
            radius,
            velocity,
            angular_velocity,
            id,
            body_id,
            force,
            contact_count,
            broken_bonds,
        })
    }
}

/// The output steps that have a `.vtp` frame in `DIR/vtk/`, sorted; none when the
/// directory's `run.toml` records a run without VTK output (`--no-vtk`): frames left
/// there by another run are never read as this one's (issue 49).
pub fn frame_steps(dir: &Path) -> Vec<u64> {
    let record = std::fs::read_to_string(dir.join(super::RUN_RECORD)).unwrap_or_default();
    if super::recorded_run(&record).vtk == Some(false) {
        return Vec::new();
    }
    let mut steps: Vec<u64> = std::fs::read_dir(dir.join(VTK_DIR))
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            let name = name.to_str()?;
            name.strip_prefix("particles_")?
                .strip_suffix(".vtp")?
                .parse()
                .ok()
        })
        .collect();
    steps.sort_unstable();
    steps
}

/// The particles of output step `step` of the run in `dir` (the last frame when `step`
/// is `None`): `DIR/vtk/particles_<step>.vtp` if it exists; otherwise, for the run's
/// last step, `DIR/final.csv` with the radii and clump shapes of the scene recorded in
/// `DIR/run.toml`, each clump drawn as its spheres (such a frame has no forces or
/// contact counts).
pub fn load_frame(dir: &Path, step: Option<u64>) -> Result<ParticleFrame> {
    let steps = frame_steps(dir);
    let last = last_row(dir);
    let last_step = last.map(|(s, _)| s);
    let step = match step.or_else(|| steps.last().copied().max(last_step)) {
        Some(s) => s,
        None => {
            return Err(Error::io(
                dir,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no frame to render: neither vtk/particles_<step>.vtp nor final.csv with run.toml (is it the output directory of `varidem run`?)",
                ),
            ))
        }
    };
    let vtp = dir.join(VTK_DIR).join(frame_file_name(step));
    // Only a frame the run record allows (`frame_steps`): another run's stay unread.
    if steps.binary_search(&step).is_ok() && vtp.is_file() {
        let mut frame = ParticleFrame::from_vtp(&vtp)?;
        frame.step = step;
        return Ok(frame);
    }
    if let Some((s, t)) = last.filter(|&(s, _)| s == step) {
        return from_final_csv(dir, s, t);
    }
    let available = match (steps.first(), steps.last()) {
        (Some(a), Some(b)) => format!(
            "{} frame(s) in {}, steps {a} to {b}",
            steps.len(),
            dir.join(VTK_DIR).display()
        ),
        _ => format!("no frames in {}", dir.join(VTK_DIR).display()),
    };
    let last = last_step.map_or(String::new(), |s| format!("; final.csv holds step {s}"));
    Err(Error::io(
        &vtp,
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no frame of step {step}: {available}{last}"),
        ),
    ))
}

/// The step and time of `final.csv`: those of the last row of `energy.csv`, when
/// `final.csv` and `run.toml` exist.
fn last_row(dir: &Path) -> Option<(u64, f64)> {
    if !dir.join(super::FINAL_CSV).is_file() || !dir.join(super::RUN_RECORD).is_file() {
        return None;
    }
    let table = super::read_energy_csv(&dir.join(super::ENERGY_CSV)).ok()?;
    let step = *table.column("step")?.last()?;
    let time = *table.column("t")?.last()?;
    (step >= 0.0).then_some((step as u64, time))
}

/// The scene of the run in `dir`, from its `run.toml`.
pub fn run_scene(dir: &Path) -> Result<crate::model::Scene> {
    let record = dir.join(super::RUN_RECORD);
    let text = std::fs::read_to_string(&record).map_err(|e| Error::io(&record, e))?;
    // run.toml is a scene file with a [run] table in front.
    let mut doc: toml::Table =
        toml::from_str(&text).map_err(|e| bad(&record, format!("not valid TOML: {e}")))?;
    doc.remove("run");
    let scene_text =
        toml::to_string(&doc).map_err(|e| bad(&record, format!("cannot re-serialise: {e}")))?;
    super::parse_scene(&scene_text).map_err(|e| bad(&record, e.to_string()))
}

/// The mesh walls of the run in `dir` as triangles placed at time `time` (at rest
/// when unknown); none when the run has no `run.toml` or no mesh.
pub fn mesh_triangles(dir: &Path, time: Option<f64>) -> Result<Vec<[DVec3; 3]>> {
    if !dir.join(super::RUN_RECORD).is_file() {
        return Ok(Vec::new());
    }
    let scene = run_scene(dir)?;
    let mut out = Vec::new();
    for m in &scene.model.meshes {
        let pose = m.motion.pose(time.unwrap_or(0.0));
        for t in 0..m.mesh.triangles.len() {
            out.push(m.mesh.corners(t).map(|x| pose.place(x)));
        }
    }
    Ok(out)
}

/// The frame of `final.csv` with the scene of `run.toml`: a particle's row is drawn as
/// that particle with its radius; a clump's row (after the particles) as the clump's
/// spheres, each placed, moving and turning with the body the row gives
/// (`physics::rigid_body`, as the backends pose them), numbered and with the `body_id`
/// that a `.vtp` frame gives them.
fn from_final_csv(dir: &Path, step: u64, time: f64) -> Result<ParticleFrame> {
    use crate::math::rodrigues::rotate;
    use crate::physics::rigid_body::member_velocity;

    let record = dir.join(super::RUN_RECORD);
    let scene = run_scene(dir)?;
    let path = dir.join(super::FINAL_CSV);
    let rows = super::read_final_csv(&path)?;
    let model = &scene.model;
    let radius = &model.particles.radius;
    let free = radius.len();
    // Each clump's first sphere id: the spheres follow the particles, clump by clump.
    let mut first_sphere = Vec::with_capacity(model.clumps.len());
    let mut next = free;
    for c in &model.clumps {
        first_sphere.push(next);
        next += model
            .clump_types
            .get(c.kind as usize)
            .map_or(0, |t| t.spheres.len());
    }
    let mut frame = ParticleFrame {
        step,
        time: Some(time),
        source: path.clone(),
        ..ParticleFrame::default()
    };
    for r in rows {
        let row = r.id as usize;
        if let Some(&r_i) = radius.get(row) {
            frame.position.push(r.position);
            frame.velocity.push(r.velocity);
            frame.angular_velocity.push(r.angular_velocity);
            frame.radius.push(r_i);
            frame.id.push(r.id);
            frame.body_id.push(r.id);
            continue;
        }
        let clump = row - free;
        let Some(t) = model
            .clumps
            .get(clump)
            .and_then(|c| model.clump_types.get(c.kind as usize))
        else {
            return Err(bad(
                &path,
                format!(
                    "row {} is not in the scene of {} ({} particles and {} clumps)",
                    r.id,
                    record.display(),
                    free,
                    model.clumps.len()
                ),
            ));
        };
        for (k, s) in t.spheres.iter().enumerate() {
            let lever = rotate(r.rotation, s.offset);
            frame.position.push(r.position + lever);
            frame
                .velocity
                .push(member_velocity(r.velocity, r.angular_velocity, lever));
            frame.angular_velocity.push(r.angular_velocity);
            frame.radius.push(s.radius);
            frame.id.push((first_sphere[clump] + k) as u32);
            frame.body_id.push(r.id);
        }
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_rfc_4648_vectors() {
        for (expected, input) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9v\n YmFy"),
        ] {
            assert_eq!(base64_decode(input).unwrap(), expected.as_bytes());
        }
        assert!(base64_decode("Zm9*").is_err());
    }

    #[test]
    fn ascii_and_binary_arrays_are_read() {
        // [1.5, -2.0] as Float64 with a UInt64 byte count of 16.
        let mut raw = 16u64.to_le_bytes().to_vec();
        raw.extend(1.5f64.to_le_bytes());
        raw.extend((-2.0f64).to_le_bytes());
        let mut b64 = String::new();
        for c in raw.chunks(3) {
            let mut v = [0u8; 3];
            v[..c.len()].copy_from_slice(c);
            let n = (u32::from(v[0]) << 16) | (u32::from(v[1]) << 8) | u32::from(v[2]);
            let sym = |s: u32| {
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(s & 63) as usize],
                )
            };
            b64.extend([sym(n >> 18), sym(n >> 12)]);
            b64.push(if c.len() > 1 { sym(n >> 6) } else { '=' });
            b64.push(if c.len() > 2 { sym(n) } else { '=' });
        }
        let text = format!(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n<!-- varidem: step 7 time 7e-3 -->\n<PolyData><Piece NumberOfPoints=\"2\">\n<PointData><DataArray type=\"Float64\" Name=\"radius\" format=\"binary\">{b64}</DataArray>\n<DataArray type=\"Int32\" Name=\"id\" format=\"ascii\">3 4</DataArray></PointData>\n<Points><DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">0 1 2 3 4 5</DataArray></Points>\n</Piece></PolyData></VTKFile>\n"
        );
        let f = parse_vtp(&text).unwrap();
        assert_eq!(f.step_time, Some((7, 7e-3)));
        assert_eq!(
            f.points,
            [DVec3::new(0.0, 1.0, 2.0), DVec3::new(3.0, 4.0, 5.0)]
        );
        assert_eq!(f.point_array("radius").unwrap().values, [1.5, -2.0]);
        assert_eq!(f.point_array("id").unwrap().values, [3.0, 4.0]);
        let short = text.replace("NumberOfPoints=\"2\"", "NumberOfPoints=\"3\"");
        let msg = parse_vtp(&short).unwrap_err();
        assert!(msg.contains("Points: 6 values"), "{msg}");
        let msg =
            parse_vtp(&text.replace("PolyData\" version", "ImageData\" version")).unwrap_err();
        assert!(msg.contains("not a PolyData"), "{msg}");
    }
}
