//! The checkpoint file: its name and place in a run's output directory, the header
//! (magic, format version, body length) and the CRC-32 around the body, the atomic write
//! and the verified read, and the [`Checkpoint`] that a file holds. The body itself is
//! encoded by `encode` and decoded by `decode`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::bytes::{Reader, Writer};
use super::decode::decode;
use super::encode::{encode_model, encode_simulation, encode_state_arrays, encode_state_header};
use crate::backend::{Backend, StateSnapshot};
use crate::error::{Error, Result};
use crate::model::Scene;

/// First bytes of every checkpoint file.
pub const MAGIC: &[u8; 19] = b"VARIDEM-CHECKPOINT\n";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 17;
/// The oldest format version this build still reads (version 2 has no device origin:
/// its `f32` states were stored in absolute coordinates, origin zero).
pub const OLDEST_READ_VERSION: u32 = 2;
/// Directory of the checkpoints inside a run's output directory.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// File extension of checkpoints.
pub const EXTENSION: &str = "vdc";

/// Bytes before the body: magic, version, body length.
const HEADER_LEN: usize = MAGIC.len() + 4 + 8;

/// File name of the checkpoint of step `step`: `checkpoint_00012000.vdc`.
pub fn checkpoint_file_name(step: u64) -> String {
    format!("checkpoint_{step:08}.{EXTENSION}")
}

/// Path of the checkpoint of step `step` in the output directory `out_dir`:
/// `out_dir/checkpoints/checkpoint_00012000.vdc`.
pub fn checkpoint_path(out_dir: &Path, step: u64) -> PathBuf {
    out_dir
        .join(CHECKPOINT_DIR)
        .join(checkpoint_file_name(step))
}

/// A run's complete state at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The scene as it was at step 0, bonds with their exact rest states: the run
    /// parameters and the model. Its particle state is the initial one; the current
    /// state is in [`Checkpoint::state`].
    pub scene: Scene,
    /// The backend's state at the checkpoint's step.
    pub state: StateSnapshot,
    /// The interval the run wrote checkpoints at, if it did: `varidem resume` goes on
    /// writing them at that interval unless told otherwise.
    pub checkpoint_every: Option<u64>,
    /// The identity of the run that wrote the checkpoint (issue 49): a random number
    /// drawn when the run started, kept by every resume of it, and recorded in the
    /// run's `run.toml`, so that `varidem resume` recognises the run's own directory.
    /// `None` for files of format 8 and older.
    pub run_id: Option<u64>,
    /// Whether the run wrote VTK frames (`varidem run --no-vtk` did not): `varidem
    /// resume` keeps the setting. `true` for files of format 8 and older.
    pub vtk: bool,
}

impl Checkpoint {
    /// Takes a checkpoint of `backend`, which runs `scene` (as it was at step 0).
    /// The run's identity and VTK setting are those of a fresh run without one
    /// (`None`, VTK on): a run's recorder sets them.
    pub fn take(
        scene: &Scene,
        backend: &mut dyn Backend,
        checkpoint_every: Option<u64>,
    ) -> Result<Self> {
        Ok(Self {
            scene: scene.clone(),
            state: backend.checkpoint_state()?,
            checkpoint_every,
            run_id: None,
            vtk: true,
        })
    }

    /// Writes the checkpoint to `path` (creating its directory). The file is written
    /// under a temporary name and renamed, so `path` never holds a partial checkpoint.
    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let bytes = self.to_bytes();
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&tmp, e));
        }
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// Reads and verifies the checkpoint at `path`. The header is read first: a file
    /// that is not a checkpoint (`/dev/zero`, a scene, a picture) fails on its first
    /// bytes, and no more is read than the header announces (plus one byte to tell a
    /// longer file), so any file fails in bounded time and memory (issue 49).
    pub fn read(path: &Path) -> Result<Self> {
        use std::io::Read as _;
        let io = |e| Error::io(path, e);
        let file = std::fs::File::open(path).map_err(io)?;
        let mut head = Vec::with_capacity(HEADER_LEN);
        (&file)
            .take(HEADER_LEN as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        if head.len() < HEADER_LEN {
            // Too short for a header: from_bytes names what is wrong.
            return Self::from_bytes(&head, path);
        }
        let len = u64::from_le_bytes(head[HEADER_LEN - 8..].try_into().unwrap_or([0; 8]));
        let version = u32::from_le_bytes(
            head[MAGIC.len()..MAGIC.len() + 4]
                .try_into()
                .unwrap_or([0; 4]),
        );
        if &head[..MAGIC.len()] != MAGIC
            || !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version)
        {
            // Not a checkpoint, or one of an unknown format: from_bytes says which.
            return Self::from_bytes(&head, path);
        }
        let total = len.saturating_add(HEADER_LEN as u64 + 4);
        let size = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        if let Some(size) = size.filter(|&s| s != total) {
            return Err(Error::Checkpoint {
                path: path.to_owned(),
                message: format!(
                    "truncated or corrupt: the header announces {len} bytes of data ({total} bytes in all with header and checksum), the file has {size} bytes"
                ),
            });
        }
        let mut bytes = head;
        (&file)
            .take(total.saturating_sub(HEADER_LEN as u64).saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Self::from_bytes(&bytes, path)
    }

    /// The file contents: see the [module documentation](crate::checkpoint).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = Writer::default();
        body.str(&self.summary());
        encode_state_header(&mut body, &self.state, self.checkpoint_every);
        body.u64(self.run_id.unwrap_or(0));
        body.u8(u8::from(self.vtk));
        encode_simulation(&mut body, &self.scene.simulation);
        encode_model(&mut body, &self.scene.model);
        encode_state_arrays(&mut body, &self.state);
        let body = body.0;
        let mut out = Vec::with_capacity(HEADER_LEN + body.len() + 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses and verifies checkpoint bytes; `path` names the file in errors.
    ///
    /// Fails, naming `path`, when the magic is missing, the format version is unknown,
    /// the file is truncated, the checksum does not match, the contents do not
    /// decode or the decoded scene fails the checks of a scene file.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self> {
        let fail = |message: String| Error::Checkpoint {
            path: path.to_owned(),
            message,
        };
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(fail(
                "not a varidem checkpoint (the file does not start with VARIDEM-CHECKPOINT)".into(),
            ));
        }
        if bytes.len() < HEADER_LEN {
            return Err(fail(format!(
                "truncated: {} bytes, shorter than the {HEADER_LEN}-byte header",
                bytes.len()
            )));
        }
        let mut head = Reader::new(&bytes[MAGIC.len()..HEADER_LEN]);
        let version = head.u32().map_err(fail)?;
        let len = head.u64().map_err(fail)?;
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(fail(format!(
                "unknown checkpoint format version {version}; this varidem ({}) reads versions {OLDEST_READ_VERSION} to {FORMAT_VERSION}",
                env!("CARGO_PKG_VERSION")
            )));
        }
        let expected = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(HEADER_LEN + 4));
        if expected != Some(bytes.len()) {
            return Err(fail(format!(
                "truncated or corrupt: the header announces {len} bytes of data ({} bytes in all with header and checksum), the file has {} bytes",
                len.saturating_add(HEADER_LEN as u64 + 4),
                bytes.len()
            )));
        }
        let (data, tail) = bytes.split_at(bytes.len() - 4);
        let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let computed = crc32fast::hash(data);
        if stored != computed {
            return Err(fail(format!(
                "checksum mismatch (CRC-32 stored {stored:08x}, computed {computed:08x}): the file is corrupt"
            )));
        }
        let checkpoint = decode(&data[HEADER_LEN..], version)
            .map_err(|e| fail(format!("corrupt contents: {e}")))?;
        // The scene passes every check a scene file does (issue 49): written back as
        // the scene text `run.toml` holds and parsed, so a checkpoint cannot start a
        // run that its scene file could not.
        crate::io::parse_scene(&crate::io::scene_to_toml(&checkpoint.scene))
            .map_err(|e| fail(format!("its scene is not a valid scene: {e}")))?;
        Ok(checkpoint)
    }

    /// The human-readable summary at the start of the body.
    fn summary(&self) -> String {
        let s = &self.state;
        let m = &self.scene.model;
        let every = self
            .checkpoint_every
            .map_or_else(|| "none".to_owned(), |n| n.to_string());
        format!(
            "varidem checkpoint\nformat = {FORMAT_VERSION}\nvaridem = \"{}\"\nstep = {}\ntime = {:?}\n\
             steps = {}\nbackend = \"{}\"\nprecision = \"{}\"\nintegrator = \"{}\"\ndt = {:?}\n\
             particles = {}\nbonds = {}\nwalls = {}\ncheckpoint_every = {every}\n",
            env!("CARGO_PKG_VERSION"),
            s.step,
            s.step as f64 * s.dt,
            self.scene.simulation.steps(),
            s.backend_name,
            s.precision,
            s.integrator,
            s.dt,
            m.particles.len(),
            m.bonds.len(),
            m.walls.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuBackend;
    use crate::io::parse_scene;

    const SCENE: &str = "[simulation]\ndt = 1e-3\nsteps = 40\noutput_every = 10\n\
        precision = \"f64\"\nmax_neighbors = 12\n\
        [contact]\nlaw = \"binder\"\nk_pp = 100.0\n\
        [[particle]]\nposition = [0.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n\
        [[particle]]\nposition = [0.205, 0.0, 0.0]\nrotation = [0.1, 0.2, 0.3]\nmass = 1.0\nradius = 0.1\n\
        hold_position = true\npendulum_offset = [0.0, 0.0, 0.5]\n\
        [[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 2.0\nk_shear = 3.0\n\
        [[wall]]\npoint = [-1.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n";

    fn checkpoint() -> Checkpoint {
        let scene = parse_scene(SCENE).unwrap();
        let mut backend = CpuBackend::new(&scene).unwrap();
        backend.advance(7).unwrap();
        let mut state = backend.checkpoint_state().unwrap();
        state.compensation = (0..18).map(|k| k as f32 * -1.5e-9).collect();
        Checkpoint {
            scene,
            state,
            checkpoint_every: Some(7),
            run_id: Some(0x0123_4567_89ab_cdef),
            vtk: false,
        }
    }

    #[test]
    fn bytes_round_trip_exactly() {
        let c = checkpoint();
        let bytes = c.to_bytes();
        assert_eq!(&bytes[..MAGIC.len()], MAGIC);
        let back = Checkpoint::from_bytes(&bytes, Path::new("x.vdc")).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.to_bytes(), bytes);
        let summary = String::from_utf8_lossy(&bytes);
        assert!(summary.contains("step = 7"), "{summary}");
    }

    #[test]
    fn every_flipped_bit_is_detected() {
        let bytes = checkpoint().to_bytes();
        for k in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[k] ^= 0x10;
            let err = Checkpoint::from_bytes(&bad, Path::new("x.vdc")).unwrap_err();
            assert!(matches!(err, Error::Checkpoint { .. }), "byte {k}: {err}");
        }
        let err = Checkpoint::from_bytes(&bytes[..bytes.len() - 1], Path::new("x.vdc"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated"), "{err}");
    }

    /// A checkpoint with a right checksum but values the engine cannot run (written by
    /// another tool) is refused, naming the value, instead of failing in the engine (a
    /// negative radius used to make the neighbour grid panic).
    #[test]
    fn impossible_values_are_refused_naming_them() {
        type Spoil = fn(&mut Checkpoint);
        let cases: [(&str, Spoil); 5] = [
            ("particle 1's radius", |c| {
                c.scene.model.particles.radius[1] = -0.1
            }),
            ("particle 0's mass", |c| {
                c.scene.model.particles.mass[0] = 0.0
            }),
            ("the time step", |c| c.scene.simulation.dt = f64::NAN),
            ("particle 1's position", |c| {
                c.state.position[1].y = f64::INFINITY
            }),
            ("the contact skin", |c| {
                if let Some(k) = &mut c.scene.model.contact {
                    k.skin = -1.0;
                }
            }),
        ];
        for (what, spoil) in cases {
            let mut c = checkpoint();
            spoil(&mut c);
            let err = Checkpoint::from_bytes(&c.to_bytes(), Path::new("x.vdc"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("x.vdc") && err.contains(what), "{what}: {err}");
        }
    }

    /// A checkpoint whose values decode but whose scene a scene file could not hold is
    /// refused with the scene check's message, naming the key (issue 49).
    #[test]
    fn the_decoded_scene_is_validated_like_a_scene_file() {
        type Spoil = fn(&mut Checkpoint);
        let cases: [(&str, Spoil); 2] = [
            ("gravity", |c| c.scene.model.gravity.x = f64::NAN),
            ("k_bend", |c| c.scene.model.bonds[0].k_bend = -1.0),
        ];
        for (what, spoil) in cases {
            let mut c = checkpoint();
            spoil(&mut c);
            let err = Checkpoint::from_bytes(&c.to_bytes(), Path::new("x.vdc"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("x.vdc") && err.contains("not a valid scene") && err.contains(what),
                "{what}: {err}"
            );
        }
    }

    const CLUMPS: &str = "[simulation]\ndt = 1e-5\nsteps = 40\n\
        [contact]\nlaw = \"hertz\"\n\
        [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
        restitution = 0.5\nfriction_static = 0.4\n\
        [[clump_type]]\nname = \"dimer\"\n\
        spheres = [{ position = [-0.6e-3, 0.0, 0.0], radius = 1e-3 }, \
                   { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [3.3e-3, 0.0, 0.0]\nrotation = [0.1, 0.2, 0.3]\n\
        angular_velocity = [0.0, 40.0, 10.0]\n";

    fn clump_checkpoint() -> Checkpoint {
        let scene = parse_scene(CLUMPS).unwrap();
        let mut backend = CpuBackend::new(&scene).unwrap();
        backend.advance(20).unwrap();
        Checkpoint {
            scene,
            state: backend.checkpoint_state().unwrap(),
            checkpoint_every: Some(20),
            run_id: None,
            vtk: true,
        }
    }

    /// Format 4 carries the clump types, the clumps and the bodies' state exactly, and
    /// refuses impossible clump values by name.
    #[test]
    fn clumps_round_trip_and_bad_clumps_are_refused() {
        let c = clump_checkpoint();
        assert_eq!(c.state.bodies.len(), 2);
        assert_eq!(c.state.position.len(), 4);
        let bytes = c.to_bytes();
        let back = Checkpoint::from_bytes(&bytes, Path::new("x.vdc")).unwrap();
        assert_eq!(back, c);
        type Spoil = fn(&mut Checkpoint);
        let cases: [(&str, Spoil); 4] = [
            ("clump type 0 (dimer): sphere", |c| {
                c.scene.model.clump_types[0].spheres[1].radius = -1.0
            }),
            ("clump type 0 (dimer): inertia", |c| {
                c.scene.model.clump_types[0].inertia.body.x_axis.x = -1.0
            }),
            ("clump 1 has type 3", |c| c.scene.model.clumps[1].kind = 3),
            ("clump 1's state", |c| c.state.bodies[1].spin.z = f64::NAN),
        ];
        for (what, spoil) in cases {
            let mut c = clump_checkpoint();
            spoil(&mut c);
            let err = Checkpoint::from_bytes(&c.to_bytes(), Path::new("x.vdc"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("x.vdc") && err.contains(what), "{what}: {err}");
        }
    }

    #[test]
    fn file_names_carry_the_step() {
        assert_eq!(checkpoint_file_name(12000), "checkpoint_00012000.vdc");
        assert_eq!(
            checkpoint_path(Path::new("out"), 5),
            Path::new("out/checkpoints/checkpoint_00000005.vdc")
        );
    }
}
