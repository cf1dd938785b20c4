//! Checkpoints: a run's complete state at a step, written by `varidem run
//! --checkpoint-every N` and continued by `varidem resume`.
//!
//! A [`Checkpoint`] holds the scene of the run as it was at step 0 (every particle's
//! constant properties and initial state, the bonds with their rest states stored
//! exactly, walls, laws and run parameters) and a [`StateSnapshot`] of the backend at
//! the checkpoint's step: positions, velocities, rotations and angular velocities bit
//! for bit, the integrator and time step, the backend and precision that took it and,
//! for the `f32` GPU backend, its Kahan compensation terms. Resumed on the backend and
//! precision that wrote it, a run continues with the same bits as if it had never
//! stopped (tested in `tests/checkpoint.rs`). Why the neighbour list, the forces and no
//! random state are stored is explained at [`StateSnapshot`].
//!
//! # File format (version 2)
//!
//! All integers and floats little-endian; floats as their IEEE bits.
//!
//! | bytes | content |
//! |---|---|
//! | 19 | magic `VARIDEM-CHECKPOINT\n` |
//! | 4 | format version (`u32`, [`FORMAT_VERSION`]) |
//! | 8 | body length `L` (`u64`) |
//! | L | body |
//! | 4 | CRC-32 (IEEE, `u32`) of every byte before it |
//!
//! The body is, in order: a human-readable summary (`u32` length + UTF-8 text, `key =
//! value` lines; informational only), the snapshot header (step, backend, backend name,
//! precision, integrator, dt, checkpoint interval), the run parameters, the model
//! (gravity, shear form, contact law, materials, drag, near field, then the particle
//! arrays, bonds and walls) and the snapshot arrays (x, v, α, Ω, compensation terms,
//! then for granular scenes the contact history and the current forces). Version 2
//! added the granular model and state; version-1 files are refused with a clear error. [`Checkpoint::read`] checks
//! the magic, then the version, then the length and the checksum, and names the file
//! in every error.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::backend::{Backend, BackendKind, ContactState, StateSnapshot};
use crate::error::{Error, Result};
use crate::integrators::IntegratorKind;
use crate::model::Precision;
use crate::model::{
    Bond, ContactLaw, ContactParams, Domain, Interaction, Material, Model, Particles, RunLength,
    Scene, ShearForm, SimulationParams, Wall,
};
use crate::physics::granular::{Drag, NearField};

/// First bytes of every checkpoint file.
pub const MAGIC: &[u8; 19] = b"VARIDEM-CHECKPOINT\n";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;
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
}

impl Checkpoint {
    /// Takes a checkpoint of `backend`, which runs `scene` (as it was at step 0).
    pub fn take(
        scene: &Scene,
        backend: &mut dyn Backend,
        checkpoint_every: Option<u64>,
    ) -> Result<Self> {
        Ok(Self {
            scene: scene.clone(),
            state: backend.checkpoint_state()?,
            checkpoint_every,
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

    /// Reads and verifies the checkpoint at `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes, path)
    }

    /// The file contents: see the [module documentation](self).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = Writer::default();
        body.str(&self.summary());
        encode_state_header(&mut body, &self.state, self.checkpoint_every);
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
    /// the file is truncated, the checksum does not match or the contents do not
    /// decode.
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
        if version != FORMAT_VERSION {
            return Err(fail(format!(
                "unknown checkpoint format version {version}; this varidem ({}) reads version {FORMAT_VERSION}",
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
        decode(&data[HEADER_LEN..]).map_err(|e| fail(format!("corrupt contents: {e}")))
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

// ---------------------------------------------------------------------------------------
// Encoding. Every struct is destructured in full, so that a new field is a compile
// error here until the format (and FORMAT_VERSION) accounts for it.
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn vec3(&mut self, v: DVec3) {
        self.f64(v.x);
        self.f64(v.y);
        self.f64(v.z);
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_u32(&mut self, v: Option<u32>) {
        self.u8(u8::from(v.is_some()));
        self.u32(v.unwrap_or(0));
    }
}

fn backend_code(k: BackendKind) -> u8 {
    match k {
        BackendKind::Auto => 0,
        BackendKind::Cpu => 1,
        BackendKind::Gpu => 2,
    }
}

fn precision_code(p: Precision) -> u8 {
    match p {
        Precision::F32 => 1,
        Precision::F64 => 2,
    }
}

fn integrator_code(k: IntegratorKind) -> u8 {
    match k {
        IntegratorKind::Variational => 0,
        IntegratorKind::VariationalExact => 1,
        IntegratorKind::SymplecticEuler => 2,
        IntegratorKind::CampelloTrapezoidal => 3,
    }
}

fn encode_state_header(w: &mut Writer, s: &StateSnapshot, checkpoint_every: Option<u64>) {
    let StateSnapshot {
        backend,
        backend_name,
        precision,
        step,
        integrator,
        dt,
        position: _,
        velocity: _,
        rotation: _,
        angular_velocity: _,
        compensation: _,
        contacts: _,
        removed: _,
    } = s;
    w.u64(*step);
    w.u8(backend_code(*backend));
    w.str(backend_name);
    w.u8(precision_code(*precision));
    w.u8(integrator_code(*integrator));
    w.f64(*dt);
    w.u64(checkpoint_every.unwrap_or(0));
}

fn encode_simulation(w: &mut Writer, sim: &SimulationParams) {
    let SimulationParams {
        dt,
        duration,
        integrator,
        output_every,
        precision,
        gpu_max_neighbors,
        gpu_bucket_capacity,
        trapezoidal,
    } = sim;
    w.f64(*dt);
    match duration {
        RunLength::Steps(n) => {
            w.u8(0);
            w.u64(*n);
        }
        RunLength::EndTime(t) => {
            w.u8(1);
            w.f64(*t);
        }
    }
    w.u8(integrator_code(*integrator));
    w.u64(*output_every);
    w.u8(precision.map_or(0, precision_code));
    w.opt_u32(*gpu_max_neighbors);
    w.opt_u32(*gpu_bucket_capacity);
    w.f64(trapezoidal.phi);
    w.f64(trapezoidal.tolerance);
    w.u32(trapezoidal.max_iterations);
}

fn encode_model(w: &mut Writer, m: &Model) {
    let Model {
        particles,
        bonds,
        walls,
        shear,
        contact,
        gravity,
        materials,
        interactions,
        drag,
        near_field,
        domain,
    } = m;
    w.vec3(*gravity);
    w.u8(match shear {
        ShearForm::Objective => 0,
        ShearForm::Printed => 1,
    });
    match contact {
        None => w.u8(0),
        Some(ContactParams {
            law,
            skin,
            max_contacts,
        }) => {
            w.u8(1);
            match law {
                ContactLaw::Binder { k_pp } => {
                    w.u8(0);
                    w.f64(*k_pp);
                }
                ContactLaw::Hertz => w.u8(1),
            }
            w.f64(*skin);
            w.u32(*max_contacts);
        }
    }
    w.len(materials.len());
    for mat in materials {
        let Material {
            name,
            young,
            poisson,
            shear_modulus,
            density,
            restitution,
            friction_static,
            friction_dynamic,
        } = mat;
        w.str(name);
        for v in [
            young,
            poisson,
            shear_modulus,
            density,
            restitution,
            friction_static,
            friction_dynamic,
        ] {
            w.f64(*v);
        }
    }
    match domain {
        None => w.u8(0),
        Some(d) => {
            w.u8(1);
            w.vec3(d.min);
            w.vec3(d.max);
            w.u8(u8::from(d.remove));
        }
    }
    w.len(interactions.len());
    for it in interactions {
        w.u32(it.materials[0]);
        w.u32(it.materials[1]);
        for v in [it.restitution, it.friction_static, it.friction_dynamic] {
            match v {
                None => w.u8(0),
                Some(x) => {
                    w.u8(1);
                    w.f64(x);
                }
            }
        }
    }
    match drag {
        None => w.u8(0),
        Some(Drag {
            coefficient,
            fluid_velocity,
            magnus,
        }) => {
            w.u8(1);
            w.f64(*coefficient);
            w.vec3(*fluid_velocity);
            w.f64(*magnus);
        }
    }
    match near_field {
        None => w.u8(0),
        Some(NearField {
            kappa_attractive,
            lambda_attractive,
            kappa_repulsive,
            lambda_repulsive,
            cutoff,
        }) => {
            w.u8(1);
            for v in [
                kappa_attractive,
                lambda_attractive,
                kappa_repulsive,
                lambda_repulsive,
                cutoff,
            ] {
                w.f64(*v);
            }
        }
    }
    let Particles {
        position,
        velocity,
        rotation,
        angular_velocity,
        mass,
        inertia,
        radius,
        pendulum_offset,
        flags,
        material,
    } = particles;
    w.len(particles.len());
    for field in [
        position,
        velocity,
        rotation,
        angular_velocity,
        pendulum_offset,
    ] {
        field.iter().for_each(|v| w.vec3(*v));
    }
    for field in [mass, inertia, radius] {
        field.iter().for_each(|v| w.f64(*v));
    }
    flags.iter().for_each(|v| w.u32(*v));
    material.iter().for_each(|v| w.u32(*v));
    w.len(bonds.len());
    for b in bonds {
        let Bond {
            i,
            j,
            k_bend,
            k_axial,
            k_shear,
            rest_length,
            rest_dir_i,
            rest_dir_j,
            rest_rotation,
        } = b;
        w.u32(*i);
        w.u32(*j);
        for v in [k_bend, k_axial, k_shear, rest_length] {
            w.f64(*v);
        }
        for v in [rest_dir_i, rest_dir_j, rest_rotation] {
            w.vec3(*v);
        }
    }
    w.len(walls.len());
    for wall in walls {
        let Wall {
            point,
            normal,
            stiffness,
            material,
        } = wall;
        w.vec3(*point);
        w.vec3(*normal);
        w.f64(*stiffness);
        w.opt_u32(*material);
    }
}

fn encode_state_arrays(w: &mut Writer, s: &StateSnapshot) {
    w.len(s.position.len());
    for field in [&s.position, &s.velocity, &s.rotation, &s.angular_velocity] {
        field.iter().for_each(|v| w.vec3(*v));
    }
    w.len(s.compensation.len());
    s.compensation.iter().for_each(|c| w.u32(c.to_bits()));
    w.len(s.removed.len());
    s.removed.iter().for_each(|i| w.u32(*i));
    match &s.contacts {
        None => w.u8(0),
        Some(c) => {
            w.u8(1);
            w.u32(c.slots);
            w.len(c.partner.len());
            c.partner.iter().for_each(|v| w.u32(*v));
            c.spring.iter().for_each(|v| w.vec3(*v));
            w.len(c.wall_spring.len());
            c.wall_spring.iter().for_each(|v| w.vec3(*v));
            w.len(c.force.len());
            c.force.iter().for_each(|v| w.vec3(*v));
            c.moment.iter().for_each(|v| w.vec3(*v));
            c.energy.iter().flatten().for_each(|v| w.f64(*v));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Decoding: errors are plain messages, wrapped with the path by `from_bytes`.
// ---------------------------------------------------------------------------------------

type Decoded<T> = std::result::Result<T, String>;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "the data ends early (at byte {} of {}, {n} more needed)",
                    self.pos,
                    self.bytes.len()
                )
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Decoded<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn vec3(&mut self) -> Decoded<DVec3> {
        Ok(DVec3::new(self.f64()?, self.f64()?, self.f64()?))
    }

    /// A count of items of `item_bytes` bytes each that must fit the remaining data.
    fn count(&mut self, what: &str, item_bytes: usize) -> Decoded<usize> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(item_bytes as u64) > left {
            return Err(format!(
                "{n} {what} announced, but only {left} bytes of data are left"
            ));
        }
        Ok(n as usize)
    }

    fn str(&mut self) -> Decoded<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|e| format!("text: {e}"))
    }

    fn opt_u32(&mut self) -> Decoded<Option<u32>> {
        let some = self.u8()?;
        let v = self.u32()?;
        match some {
            0 => Ok(None),
            1 => Ok(Some(v)),
            other => Err(format!("option flag {other}")),
        }
    }

    fn vec3s(&mut self, n: usize) -> Decoded<Vec<DVec3>> {
        (0..n).map(|_| self.vec3()).collect()
    }
    fn f64s(&mut self, n: usize) -> Decoded<Vec<f64>> {
        (0..n).map(|_| self.f64()).collect()
    }
}

fn backend_of(code: u8) -> Decoded<BackendKind> {
    match code {
        1 => Ok(BackendKind::Cpu),
        2 => Ok(BackendKind::Gpu),
        c => Err(format!("backend code {c}")),
    }
}

fn precision_of(code: u8) -> Decoded<Precision> {
    match code {
        1 => Ok(Precision::F32),
        2 => Ok(Precision::F64),
        c => Err(format!("precision code {c}")),
    }
}

fn integrator_of(code: u8) -> Decoded<IntegratorKind> {
    match code {
        0 => Ok(IntegratorKind::Variational),
        1 => Ok(IntegratorKind::VariationalExact),
        2 => Ok(IntegratorKind::SymplecticEuler),
        3 => Ok(IntegratorKind::CampelloTrapezoidal),
        c => Err(format!("integrator code {c}")),
    }
}

fn decode(body: &[u8]) -> Decoded<Checkpoint> {
    let mut r = Reader::new(body);
    let _summary = r.str()?;

    // Snapshot header.
    let step = r.u64()?;
    let backend = backend_of(r.u8()?)?;
    let backend_name = r.str()?;
    let precision = precision_of(r.u8()?)?;
    let integrator = integrator_of(r.u8()?)?;
    let dt = r.f64()?;
    let checkpoint_every = Some(r.u64()?).filter(|&n| n > 0);

    // Run parameters.
    let simulation = SimulationParams {
        dt: r.f64()?,
        duration: match r.u8()? {
            0 => RunLength::Steps(r.u64()?),
            1 => RunLength::EndTime(r.f64()?),
            c => return Err(format!("duration code {c}")),
        },
        integrator: integrator_of(r.u8()?)?,
        output_every: r.u64()?,
        precision: match r.u8()? {
            0 => None,
            c => Some(precision_of(c)?),
        },
        gpu_max_neighbors: r.opt_u32()?,
        gpu_bucket_capacity: r.opt_u32()?,
        trapezoidal: crate::integrators::Trapezoidal {
            phi: r.f64()?,
            tolerance: r.f64()?,
            max_iterations: r.u32()?,
        },
    };

    // Model.
    let gravity = r.vec3()?;
    let shear = match r.u8()? {
        0 => ShearForm::Objective,
        1 => ShearForm::Printed,
        c => return Err(format!("shear form code {c}")),
    };
    let contact = match r.u8()? {
        0 => None,
        1 => {
            let law = match r.u8()? {
                0 => ContactLaw::Binder { k_pp: r.f64()? },
                1 => ContactLaw::Hertz,
                c => return Err(format!("contact law code {c}")),
            };
            Some(ContactParams {
                law,
                skin: r.f64()?,
                max_contacts: r.u32()?,
            })
        }
        c => return Err(format!("contact flag {c}")),
    };
    let nm = r.count("materials", 4 + 7 * 8)?;
    let mut materials = Vec::with_capacity(nm);
    for _ in 0..nm {
        materials.push(Material {
            name: r.str()?,
            young: r.f64()?,
            poisson: r.f64()?,
            shear_modulus: r.f64()?,
            density: r.f64()?,
            restitution: r.f64()?,
            friction_static: r.f64()?,
            friction_dynamic: r.f64()?,
        });
    }
    let domain = match r.u8()? {
        0 => None,
        1 => Some(Domain {
            min: r.vec3()?,
            max: r.vec3()?,
            remove: r.u8()? != 0,
        }),
        c => return Err(format!("domain flag {c}")),
    };
    let ni = r.count("interactions", 8 + 3)?;
    let mut interactions = Vec::with_capacity(ni);
    for _ in 0..ni {
        let materials = [r.u32()?, r.u32()?];
        if materials.iter().any(|&k| k as usize >= nm) {
            return Err(format!(
                "interaction {materials:?} names a missing material"
            ));
        }
        let mut opt = || -> Decoded<Option<f64>> {
            match r.u8()? {
                0 => Ok(None),
                1 => Ok(Some(r.f64()?)),
                c => Err(format!("option flag {c}")),
            }
        };
        interactions.push(Interaction {
            materials,
            restitution: opt()?,
            friction_static: opt()?,
            friction_dynamic: opt()?,
        });
    }
    let drag = match r.u8()? {
        0 => None,
        1 => Some(Drag {
            coefficient: r.f64()?,
            fluid_velocity: r.vec3()?,
            magnus: r.f64()?,
        }),
        c => return Err(format!("drag flag {c}")),
    };
    let near_field = match r.u8()? {
        0 => None,
        1 => Some(NearField {
            kappa_attractive: r.f64()?,
            lambda_attractive: r.f64()?,
            kappa_repulsive: r.f64()?,
            lambda_repulsive: r.f64()?,
            cutoff: r.f64()?,
        }),
        c => return Err(format!("near-field flag {c}")),
    };
    // 5 vectors, 3 scalars, the flags and the material per particle.
    let n = r.count("particles", 5 * 24 + 3 * 8 + 4 + 4)?;
    let position = r.vec3s(n)?;
    let velocity = r.vec3s(n)?;
    let rotation = r.vec3s(n)?;
    let angular_velocity = r.vec3s(n)?;
    let pendulum_offset = r.vec3s(n)?;
    let mass = r.f64s(n)?;
    let inertia = r.f64s(n)?;
    let radius = r.f64s(n)?;
    let flags = (0..n).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    let material = (0..n).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    if let Some((i, m)) = material
        .iter()
        .enumerate()
        .find(|(_, &m)| nm > 0 && m as usize >= nm)
    {
        return Err(format!("particle {i} has material {m}, but there are {nm}"));
    }
    let particles = Particles {
        position,
        velocity,
        rotation,
        angular_velocity,
        mass,
        inertia,
        radius,
        pendulum_offset,
        flags,
        material,
    };
    let nb = r.count("bonds", 8 + 4 * 8 + 3 * 24)?;
    let mut bonds = Vec::with_capacity(nb);
    for k in 0..nb {
        let b = Bond {
            i: r.u32()?,
            j: r.u32()?,
            k_bend: r.f64()?,
            k_axial: r.f64()?,
            k_shear: r.f64()?,
            rest_length: r.f64()?,
            rest_dir_i: r.vec3()?,
            rest_dir_j: r.vec3()?,
            rest_rotation: r.vec3()?,
        };
        if b.i as usize >= n || b.j as usize >= n {
            return Err(format!(
                "bond {k} joins particles {} and {}, but there are {n}",
                b.i, b.j
            ));
        }
        bonds.push(b);
    }
    let nw = r.count("walls", 2 * 24 + 8 + 1)?;
    let walls = (0..nw)
        .map(|_| {
            Ok(Wall {
                point: r.vec3()?,
                normal: r.vec3()?,
                stiffness: r.f64()?,
                material: r.opt_u32()?,
            })
        })
        .collect::<Decoded<Vec<Wall>>>()?;
    let model = Model {
        particles,
        bonds,
        walls,
        shear,
        contact,
        gravity,
        materials,
        interactions,
        drag,
        near_field,
        domain,
    };

    // Snapshot arrays.
    let ns = r.count("particle states", 4 * 24)?;
    if ns != n {
        return Err(format!(
            "the state has {ns} particles but the scene has {n}"
        ));
    }
    let position = r.vec3s(n)?;
    let velocity = r.vec3s(n)?;
    let rotation = r.vec3s(n)?;
    let angular_velocity = r.vec3s(n)?;
    let nc = r.count("compensation terms", 4)?;
    let compensation = (0..nc)
        .map(|_| r.u32().map(f32::from_bits))
        .collect::<Decoded<Vec<f32>>>()?;
    let nr = r.count("removed particles", 4)?;
    let removed = (0..nr).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    if let Some(i) = removed.iter().find(|&&i| i as usize >= n) {
        return Err(format!("removed particle {i}, but there are {n}"));
    }
    let contacts = match r.u8()? {
        0 => None,
        1 => {
            let slots = r.u32()?;
            let ns = r.count("contact slots", 4 + 24)?;
            if ns != n * slots as usize {
                return Err(format!(
                    "{ns} contact slots for {n} particles of {slots} slots each"
                ));
            }
            let partner = (0..ns).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
            let spring = r.vec3s(ns)?;
            let nw = r.count("wall springs", 24)?;
            let wall_spring = r.vec3s(nw)?;
            let nf = r.count("contact forces", 2 * 24 + 3 * 8)?;
            if nf != n {
                return Err(format!("{nf} contact forces for {n} particles"));
            }
            let force = r.vec3s(n)?;
            let moment = r.vec3s(n)?;
            let energy = (0..n)
                .map(|_| Ok([r.f64()?, r.f64()?, r.f64()?]))
                .collect::<Decoded<Vec<[f64; 3]>>>()?;
            Some(ContactState {
                slots,
                partner,
                spring,
                wall_spring,
                force,
                moment,
                energy,
            })
        }
        c => return Err(format!("contact-state flag {c}")),
    };
    let state = StateSnapshot {
        contacts,
        removed,
        backend,
        backend_name,
        precision,
        step,
        integrator,
        dt,
        position,
        velocity,
        rotation,
        angular_velocity,
        compensation,
    };
    state.check_len(n).map_err(|e| e.to_string())?;
    if r.pos != body.len() {
        return Err(format!(
            "{} unexpected bytes after the data",
            body.len() - r.pos
        ));
    }
    Ok(Checkpoint {
        scene: Scene { simulation, model },
        state,
        checkpoint_every,
    })
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

    #[test]
    fn file_names_carry_the_step() {
        assert_eq!(checkpoint_file_name(12000), "checkpoint_00012000.vdc");
        assert_eq!(
            checkpoint_path(Path::new("out"), 5),
            Path::new("out/checkpoints/checkpoint_00000005.vdc")
        );
    }
}
