//! The GPU backend: wgpu host code driving the WGSL kernels in `shaders/`.
//!
//! One step is a fixed sequence of dispatches in one compute pass, mirroring the CPU
//! reference kernel for kernel: `step_begin`, `integrate_predict`, (`grid_gate`, then
//! `grid_clear`, `grid_insert`, `neighbor_build` by indirect dispatch with zero
//! workgroups unless a particle moved more than skin/2 relative to particle 0, and `grid_finish`), `granular_forces`, `bond_forces` (with `bond_gather` for all but the
//! last bond chunk), `particle_forces`, which ends with the correct half of the
//! integrator. Many steps are
//! encoded per submission; nothing is read back between output steps. Energies and
//! momenta are reduced on the GPU (deterministic tree) only when asked for.
//! No float atomics anywhere: results are bitwise reproducible on one adapter.

pub mod bindings;
pub mod context;
pub mod contract;
pub mod kernels;
pub mod layout;
pub mod limits;
pub mod plan;
pub mod shaders;

use std::collections::BTreeMap;

use glam::DVec3;

use crate::backend::{Backend, ContactState, Frame};
use crate::backend::{BackendKind, StateSnapshot};
use crate::diagnostics::{Diagnostics, Potentials};
use crate::error::{Error, Result};
use crate::integrators::IntegratorKind;
use crate::model::{ContactLaw, Incidence, Model, Particles, Scene, ShearForm};
use crate::neighbor::{contact_counts, NeighborList};
use bindings as bind;
use context::GpuContext;
use contract::{
    INTEGRATOR_SYMPLECTIC_EULER, INTEGRATOR_VARIATIONAL, INTEGRATOR_VARIATIONAL_EXACT,
    PARAM_COMPACT_BONDS, PARAM_CONTACT, PARAM_DOMAIN, PARAM_DOMAIN_REMOVE, PARAM_DRAG, PARAM_FIRST,
    PARAM_HERTZ, PARAM_INLINE_BONDS, PARAM_MERGED, PARAM_NEAR, PARAM_POS_DIRECT,
    PARAM_PRINTED_SHEAR,
};
use kernels::KernelId;
use layout::{
    BondRecord, Chunk, CompactBonds, HistRecord, PairRecord, Params, Real, RowChunk, WallRecord,
};
use plan::{SectionNeeds, Sections};
use shaders::{ShaderConfig, MAX_NEIGHBORS, WORKGROUP_SIZE};

/// Floating-point precision of the kernels.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit: the default on GPUs.
    #[default]
    F32,
    /// 64-bit: needs `SHADER_F64`; matches the CPU reference to ~1e-12.
    F64,
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
        })
    }
}

/// Status word indices, as `usize` (the contract's [`contract::STATUS_STEP`] ...).
const STATUS_STEP: usize = contract::STATUS_STEP as usize;
const STATUS_ERROR: usize = contract::STATUS_ERROR as usize;
const STATUS_REBUILD: usize = contract::STATUS_REBUILD as usize;
const STATUS_BUILDS: usize = contract::STATUS_BUILDS as usize;
const STATUS_MAX_NEIGHBORS: usize = contract::STATUS_MAX_NEIGHBORS as usize;
const STATUS_AHEAD: usize = contract::STATUS_AHEAD as usize;
const STATUS_FIRST_INDEX: usize = contract::STATUS_FIRST_INDEX as usize;
const STATUS_WORDS: usize = contract::STATUS_WORDS as usize;
/// What each kernel error code (`contract::ERR_*`, in order) means.
const ERR_NAMES: [&str; contract::ERR_COUNT as usize] = [
    "the time step is too large for the exact rotation update of map (23) (h²‖Ω + h·RM/(2J)‖² ≥ 1) at particle",
    "rotation composition α⊕Δα is singular (α·Δα ≈ 4) at particle",
    "the relative rotation of a bond reached a half turn (bending strain undefined): bond",
    "grid bucket overflow (too many particles hash to one cell; lower the density of the grid or raise [simulation] bucket_capacity) at particle",
    "neighbour-list overflow (more neighbours within r_i + r_j + skin than max_neighbors; raise [simulation] max_neighbors or lower the skin) at particle",
    "a state value is not finite (blow-up: time step too large or stiffness too high?) at particle",
    "contact-history overflow (more touching contacts than [contact] max_contacts; raise it, or the packing overlaps too much: time step too large?) at particle",
    "a particle left the domain ([domain] on_exit = \"error\"; on_exit = \"remove\" takes leaving particles out): particle",
];
/// A per-particle vector array of the packed buffers, for read-back and upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Pos,
    Vel,
    Rot,
    Omega,
    Force,
    Moment,
    Energy,
}

/// GPU run options.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Adapter name (substring); `None`: `$VARIDEM_ADAPTER` or the best adapter.
    pub adapter: Option<String>,
    /// Kernel precision.
    pub precision: Precision,
    /// Neighbour-list capacity per particle (default [`DEFAULT_MAX_NEIGHBORS`], at most 64).
    pub max_neighbors: Option<u32>,
    /// Slots per grid bucket (default 16).
    pub bucket_capacity: Option<u32>,
    /// Bonds per chunk (default: as many as fit one storage binding); tests set it small
    /// to exercise chunking.
    pub max_chunk_bonds: Option<u32>,
    /// Particles per row chunk of the per-particle row buffers (neighbour rows, contact
    /// history, wall springs, `gout`). Default: as many as fit
    /// one storage binding; tests set it small to exercise row chunking.
    pub max_chunk_particles: Option<u32>,
    /// Storage-binding size to plan for, in bytes, when smaller than the adapter's
    /// `max_storage_buffer_binding_size`: tests pretend a small device to exercise the
    /// automatic chunk sizes and the [`Error::DeviceTooSmall`] refusal on small problems.
    pub max_binding_bytes: Option<u64>,
    /// Whether steps may end in `particle_forces_predict` (the next step's predict fused
    /// into this step's force pass). `None` or `Some(true)`: fused where possible;
    /// `Some(false)`: every step as separate kernels (the CLI's `VARIDEM_GPU_UNFUSED=1`).
    /// The results are the same bits either way (tested).
    pub fused: Option<bool>,
    /// Whether fused steps of granular scenes run the contact pass inside
    /// `particle_forces_predict` (one pass over particles and neighbours per step, and
    /// ≈ 60 B less traffic per particle-step) instead of in `granular_forces`. `None`:
    /// merged on every adapter but CPU ones (the CLI's `VARIDEM_GPU_MERGE` sets it), on
    /// which lavapipe ran the merged kernel at a median 0.81 of the split pair (README,
    /// GPU backend). The results are the same bits either way.
    pub merge_contacts: Option<bool>,
    /// Whether fused steps of bonded scenes compute each particle's bond terms inside
    /// `particle_forces_predict` (each bond by both ends, from its record and both ends'
    /// x and α) instead of `bond_forces` storing per-bond results that the particle
    /// kernel gathers: no per-bond result traffic (≈ 223 B less DRAM traffic per
    /// particle-step on the bonded block in f32, README) for twice the bond arithmetic. `None`:
    /// inline on every adapter but CPU ones (the CLI's `VARIDEM_GPU_INLINE_BONDS` sets
    /// it), where arithmetic rather than memory traffic bounds the step (README, GPU
    /// backend). The results are the same bits either way (tested).
    pub inline_bonds: Option<bool>,
    /// Whether bonds whose ends started with the same orientation are uploaded as
    /// compact records (28 B in f32 instead of 60 B, [`CompactBonds`]), when every
    /// bond of the scene qualifies. `None` or `Some(true)`: when they qualify;
    /// `Some(false)`: never (tests compare the two; the results are the same bits).
    pub compact_bonds: Option<bool>,
}

/// A compiled kernel: its pipeline, bind group and what it is dispatched over.
#[derive(Debug)]
struct Kernel {
    pipeline: wgpu::ComputePipeline,
    /// One bind group, or one per bond chunk for [`KernelId::bond_chunked`] kernels, or
    /// one per row chunk for [`KernelId::row_chunked`] ones (two sets, even steps' then
    /// odd steps', for [`KernelId::by_parity`] ones).
    bind_groups: Vec<wgpu::BindGroup>,
}

/// Bindings that differ per bond chunk.
const CHUNK_BINDINGS: [u32; 4] = [bind::BONDS, bind::BOND_OUT, bind::INCIDENCE, bind::CHUNK];

/// Whether fused steps merge the granular contact pass into `particle_forces_predict`
/// (one pass over particles and neighbours per step instead of two, and no `gout`
/// round trip): in granular models whose bonds, if any, fit one chunk. With several
/// bond chunks `bond_gather` keeps partial sums in `force` before
/// `particle_forces_predict` runs, where the contact pass needs the previous step's
/// `F_k`, so `granular_forces` runs on its own, before the bond kernels.
/// `want`: the choice of [`GpuOptions::merge_contacts`] (or its default).
fn granular_forces_merge(granular: bool, fuse: bool, bond_chunks: usize, want: bool) -> bool {
    granular && fuse && bond_chunks <= 1 && want
}

/// Whether fused steps can predict positions in place. `particle_forces_predict` goes
/// to `pos_next` (copied by `commit_pos` at the next step's start) only because
/// partners' positions may be read in the same dispatch: by the binder contact law
/// (bonded and contact scenes without Hertz contacts) or by a merged contact pass.
/// Otherwise every kernel reading partners' positions (bonds, `granular_forces`, the
/// grid) ran before it in the step, and the copy is a pass over the particles for
/// nothing: 24 B per particle-step in f32, and a dispatch.
fn direct_positions(fuse: bool, contact: bool, hertz: bool, merged: bool, inline: bool) -> bool {
    // Binder contacts are the contact law when Hertz is off.
    let binder_contacts = contact && !hertz;
    fuse && !merged && !inline && !binder_contacts
}

/// Whether fused steps compute the bond terms in `particle_forces_predict`
/// ([`GpuOptions::inline_bonds`]): in bonded models whose bonds fit one chunk (with
/// several, `bond_gather` sums earlier chunks into `force` before the particle kernel
/// runs, and the incidence list of one chunk does not reach the others' bonds).
/// `want`: the choice of [`GpuOptions::inline_bonds`] (or its default).
fn inline_bonds(fuse: bool, bond_chunks: usize, want: bool) -> bool {
    fuse && bond_chunks == 1 && want
}
/// Bindings that differ per row chunk: the per-particle rows that only their owner
/// touches (the largest buffers of a granular run: 2 × 8 f64 history slots per particle
/// are 512 B), then the chunk's `Rows` uniform (one per step parity). State arrays that
/// kernels read for partners (`body`, `vecs`, ...) stay whole.
const ROW_BINDINGS: [u32; 5] = [
    bind::NEIGHBORS,
    bind::COMP,
    bind::HIST,
    bind::ROW_VEC,
    bind::ROWS,
];

/// One row buffer of a problem: what each of its row chunks holds.
struct RowBuffer<'a> {
    /// Its binding, one of [`ROW_BINDINGS`].
    binding: u32,
    /// Buffer label.
    label: &'static str,
    /// Bytes per particle (0: unused by this problem).
    per_row: u64,
    /// What a fresh buffer holds, repeated (history slots start empty: `NO_PARTNER`).
    fill: &'a [u8],
    /// Initial contents of all rows in particle order, instead of `fill`.
    init: Option<&'a [u8]>,
}

impl<'a> RowBuffer<'a> {
    fn new(
        binding: u32,
        label: &'static str,
        per_row: u64,
        fill: &'a [u8],
        init: Option<&'a [u8]>,
    ) -> Self {
        Self {
            binding,
            label,
            per_row,
            fill,
            init,
        }
    }
}

/// Default neighbour-list capacity: a monodisperse packing has at most 12 touching
/// neighbours, plus the skin's margin (the rows are split into chunks that fit the
/// storage-binding limit, so the capacity does not bound N).
pub const DEFAULT_MAX_NEIGHBORS: u32 = 24;

/// Steps encoded per command buffer.
const STEPS_PER_SUBMIT: u64 = 64;

/// The GPU simulation, generic over the kernel precision.
#[derive(Debug)]
pub struct GpuBackend {
    ctx: GpuContext,
    precision: Precision,
    model: Model,
    integrator: IntegratorKind,
    dt: f64,
    buffers: Vec<wgpu::Buffer>,
    /// Per bond chunk, the buffers of [`CHUNK_BINDINGS`] in that order.
    chunk_buffers: Vec<Vec<wgpu::Buffer>>,
    /// Per row chunk, the buffers of [`ROW_BINDINGS`] but the uniform, in that order.
    row_buffers: Vec<Vec<wgpu::Buffer>>,
    /// Section offsets of the packed buffers.
    sections: Sections,
    /// First particle and particle count of each row chunk.
    rows: Vec<(u32, u32)>,
    kernels: BTreeMap<KernelId, Kernel>,
    n: u32,
    /// Bond count of each chunk.
    chunks: Vec<u32>,
    contact: bool,
    /// Granular kernel on (Hertz law or drag).
    granular: bool,
    /// Steps may end in `particle_forces_predict` (the next step's predict fused into
    /// this step's force pass): not when particles can be removed at the domain
    /// boundary, whose flag partners read in the same pass.
    fuse: bool,
    /// Fused steps run the contact pass in `particle_forces_predict`
    /// ([`granular_forces_merge`]).
    merged: bool,
    /// Fused steps predict positions in place, so the next step commits none
    /// ([`direct_positions`]).
    direct: bool,
    /// Fused steps compute the bond terms in `particle_forces_predict`
    /// ([`inline_bonds`]).
    inline: bool,
    /// Bonds are uploaded as compact records ([`CompactBonds`]).
    compact: bool,
    /// Contact-history slots per particle (0 without the Hertz law).
    max_contacts: u32,
    max_neighbors: u32,
    steps: u64,
}

/// Environment variable: `1` compiles the kernels with wgpu's runtime bounds checks.
pub const CHECKED_ENV: &str = "VARIDEM_CHECKED_SHADERS";

/// Environment variable of the CLI: `1` runs every step as separate kernels (no
/// `particle_forces_predict`, [`PathSwitches::fused`]), for A/B measurements of the
/// fused step. The results are the same bits either way (tested).
pub const UNFUSED_ENV: &str = "VARIDEM_GPU_UNFUSED";

/// Environment variable of the CLI: `1` or `0` forces the bond terms of fused steps into
/// `particle_forces_predict` or out of it ([`GpuOptions::inline_bonds`]), for A/B
/// measurements. The results are the same bits either way (tested).
pub const INLINE_ENV: &str = "VARIDEM_GPU_INLINE_BONDS";

/// Environment variable of the CLI: `1` or `0` forces the granular contact pass of fused
/// steps into `particle_forces_predict` or out of it ([`GpuOptions::merge_contacts`]),
/// for A/B measurements. The results are the same bits either way (tested).
pub const MERGE_ENV: &str = "VARIDEM_GPU_MERGE";

/// The kernel-path switches of A/B measurements ([`UNFUSED_ENV`], [`MERGE_ENV`],
/// [`INLINE_ENV`]), as the CLI reads them from its environment; the library reads no
/// environment variable for them. `None`: the default path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathSwitches {
    /// [`GpuOptions::fused`].
    pub fused: Option<bool>,
    /// [`GpuOptions::merge_contacts`].
    pub merge_contacts: Option<bool>,
    /// [`GpuOptions::inline_bonds`].
    pub inline_bonds: Option<bool>,
}

impl PathSwitches {
    /// The switches in the variables `lookup` returns (`1` or `0`; anything else is
    /// the default path).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let flag = |name: &str| match lookup(name).as_deref() {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        Self {
            // VARIDEM_GPU_UNFUSED=1 turns fusing off.
            fused: flag(UNFUSED_ENV).and_then(|unfused| unfused.then_some(false)),
            merge_contacts: flag(MERGE_ENV),
            inline_bonds: flag(INLINE_ENV),
        }
    }

    /// Sets the switches that are not `None` in `options`.
    pub fn apply(&self, options: &mut GpuOptions) {
        options.fused = self.fused.or(options.fused);
        options.merge_contacts = self.merge_contacts.or(options.merge_contacts);
        options.inline_bonds = self.inline_bonds.or(options.inline_bonds);
    }
}

fn checked_shaders() -> bool {
    std::env::var(CHECKED_ENV).is_ok_and(|v| v == "1")
}

/// The initial `grid_args` (binding 34): the number K of grid dispatches, then K
/// indirect-dispatch triples (x, 1, 1), then the K workgroup counts of a rebuild:
/// `grid_clear` over the buckets, `grid_insert` over the particles, `neighbor_build`
/// over each row chunk. `grid_gate` copies each count into its triple when the list is
/// stale and writes 0 otherwise.
fn grid_args(n_buckets: u32, n: u32, row_chunks: &[(u32, u32)]) -> Vec<u32> {
    let full: Vec<u32> = [groups(n_buckets), groups(n)]
        .into_iter()
        .chain(row_chunks.iter().map(|&(_, count)| groups(count)))
        .collect();
    let mut args = vec![full.len() as u32];
    for _ in &full {
        args.extend([0, 1, 1]);
    }
    args.extend(full);
    args
}

fn groups(n: u32) -> u32 {
    n.div_ceil(WORKGROUP_SIZE).max(1)
}

fn flat<R: Real>(v: &[DVec3]) -> Vec<R> {
    v.iter()
        .flat_map(|a| [R::from_f64(a.x), R::from_f64(a.y), R::from_f64(a.z)])
        .collect()
}

/// `v` with `w` as fourth components, in kernel precision: the layout of the vec4 state
/// arrays (the sections of `body`).
fn flat4<R: Real>(v: &[DVec3], w: &[f64]) -> Vec<R> {
    v.iter()
        .zip(w)
        .flat_map(|(a, &w)| {
            [
                R::from_f64(a.x),
                R::from_f64(a.y),
                R::from_f64(a.z),
                R::from_f64(w),
            ]
        })
        .collect()
}

/// Bytes of one contact-history slot ([`HistRecord`]) for reals of `rs` bytes.
fn hist_slot_bytes(rs: usize) -> usize {
    if rs == 4 {
        size_of::<HistRecord<f32>>()
    } else {
        size_of::<HistRecord<f64>>()
    }
}

/// History slots ([`HistRecord`]) as bytes, from partner ids and springs (one each).
fn encode_hist_slots<R: Real>(partner: &[u32], spring: &[DVec3]) -> Vec<u8> {
    let records: Vec<HistRecord<R>> = partner
        .iter()
        .zip(spring)
        .map(|(&id, s)| HistRecord {
            spring: [R::from_f64(s.x), R::from_f64(s.y), R::from_f64(s.z)],
            id,
            ..Default::default()
        })
        .collect();
    bytemuck::cast_slice(&records).to_vec()
}

/// Partner ids and springs of history slots ([`HistRecord`]) read back as bytes.
fn decode_hist_slots<R: Real>(raw: &[u8]) -> (Vec<u32>, Vec<DVec3>) {
    bytemuck::pod_collect_to_vec::<u8, HistRecord<R>>(raw)
        .iter()
        .map(|h| {
            let [x, y, z] = h.spring.map(R::to_f64);
            (h.id, DVec3::new(x, y, z))
        })
        .unzip()
}

/// The xyz of each `stride` reals of `v` (3: vectors of three reals, 4: vec4).
fn vec3s(v: &[f64], stride: usize) -> Vec<DVec3> {
    v.chunks_exact(stride)
        .map(|c| DVec3::new(c[0], c[1], c[2]))
        .collect()
}

impl GpuBackend {
    /// Opens a device and uploads `scene`.
    pub fn new(scene: &Scene, options: &GpuOptions) -> Result<Self> {
        let ctx = GpuContext::new(options.adapter.as_deref())?;
        Self::with_context(
            ctx,
            scene.model.clone(),
            scene.simulation.integrator,
            scene.simulation.dt,
            options,
        )
    }

    /// Sets up `model` on an existing context (tests pass their own).
    pub fn with_context(
        ctx: GpuContext,
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        options: &GpuOptions,
    ) -> Result<Self> {
        Self::set_up(ctx, model, integrator, dt, options, 0, &[])
    }

    /// Opens a device (`options.adapter`, as [`GpuBackend::new`]) and restores a run
    /// from a checkpoint there: see [`GpuBackend::restore`].
    pub fn from_snapshot(
        model: Model,
        snapshot: &StateSnapshot,
        options: &GpuOptions,
    ) -> Result<Self> {
        let ctx = GpuContext::new(options.adapter.as_deref())?;
        Self::restore(ctx, model, snapshot, options)
    }

    /// Restores a run from a checkpoint on an existing context: uploads `model`
    /// (constant properties, bonds with their rest states, walls, laws) in the state of
    /// `snapshot`, sets the step counter to its step, uploads its Kahan compensation
    /// terms, and computes the neighbour list and the forces with the usual set-up
    /// dispatches. Restored on the adapter and in the precision that took the
    /// snapshot, the run goes on with the same bits as if it had not stopped (see
    /// [`StateSnapshot`]).
    ///
    /// In another precision the state is converted (an `f64` state rounded to `f32`
    /// starts with zero compensation; `f32` compensation terms are dropped in `f64`):
    /// the run goes on, but not bit for bit.
    pub fn restore(
        ctx: GpuContext,
        mut model: Model,
        snapshot: &StateSnapshot,
        options: &GpuOptions,
    ) -> Result<Self> {
        snapshot.apply_to(&mut model.particles)?;
        let comp = match options.precision {
            Precision::F32 => snapshot.compensation.as_slice(),
            Precision::F64 => &[],
        };
        let mut me = Self::set_up(
            ctx,
            model,
            snapshot.integrator,
            snapshot.dt,
            options,
            snapshot.step,
            comp,
        )?;
        match &snapshot.contacts {
            Some(c) => me.restore_contacts(c)?,
            None if me.granular => {
                return Err(Error::Snapshot(
                    "the snapshot has no contact state, but the scene has granular contacts".into(),
                ))
            }
            None => {}
        }
        Ok(me)
    }

    /// Checks the adapter supports `options.precision` and builds the backend at step
    /// `step` with Kahan terms `comp` (`f32` only; empty: zero).
    fn set_up(
        ctx: GpuContext,
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        options: &GpuOptions,
        step: u64,
        comp: &[f32],
    ) -> Result<Self> {
        if options.precision == Precision::F64 && !ctx.has_f64() {
            return Err(Error::Backend(format!(
                "adapter {} has no SHADER_F64 support; use --precision f32",
                ctx.summary.name
            )));
        }
        if integrator == IntegratorKind::CampelloTrapezoidal {
            return Err(Error::Backend(
                "the campello-trapezoidal integrator (implicit, fixed-point iterations) runs on the CPU reference backend only; use --backend cpu".into(),
            ));
        }

        let start = u32::try_from(step).map_err(|_| {
            Error::Snapshot(format!(
                "step {step} does not fit the GPU backend's 32-bit step counter"
            ))
        })?;
        match options.precision {
            Precision::F32 => Self::build::<f32>(ctx, model, integrator, dt, options, start, comp),
            Precision::F64 => Self::build::<f64>(ctx, model, integrator, dt, options, start, comp),
        }
    }

    /// Uploads everything, compiles the kernels and evaluates the forces of the
    /// model's state. `start` is the initial step count; `comp` the initial Kahan terms
    /// (used in `f32` when it has 9 per particle, zero otherwise).
    fn build<R: Real>(
        ctx: GpuContext,
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        options: &GpuOptions,
        start: u32,
        comp: &[f32],
    ) -> Result<Self> {
        let p = &model.particles;
        let n = p.len() as u32;
        let nb = model.bonds.len() as u32;
        let contact = model.contact.is_some();
        let hertz = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let granular = hertz || model.drag.is_some() || model.near_field.is_some();
        let max_contacts = if hertz {
            model.contact.map_or(0, |c| c.max_contacts)
        } else {
            0
        };
        let n_materials = model.materials.len() as u32;
        let drag = model.drag.unwrap_or_default();
        let near = model
            .near_field
            .unwrap_or(crate::physics::granular::NearField {
                kappa_attractive: 0.0,
                lambda_attractive: 0.0,
                kappa_repulsive: 0.0,
                lambda_repulsive: 0.0,
                cutoff: 0.0,
            });
        let domain = model.domain.unwrap_or(crate::model::Domain {
            min: DVec3::ZERO,
            max: DVec3::ZERO,
            remove: false,
        });
        let max_neighbors = options
            .max_neighbors
            .unwrap_or(DEFAULT_MAX_NEIGHBORS)
            .min(MAX_NEIGHBORS);
        let bucket_capacity = options.bucket_capacity.unwrap_or(16);
        // The largest storage binding (a test hook may pretend it is smaller).
        let limits = ctx.device.limits();
        let max_bind = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(options.max_binding_bytes.unwrap_or(u64::MAX));
        // About one bucket per particle (a power of two, for the hash mask), but no more
        // than one binding of bucket_items holds: the grid is read for every partner, so
        // it cannot be split by rows. Fewer buckets only hash more cells to one bucket;
        // the sorted lists are the same unless a bucket overflows, which stops the run
        // with an error naming bucket_capacity.
        let fit = (max_bind / (4 * u64::from(bucket_capacity.max(1)))).max(1);
        let n_buckets = (n as u64)
            .next_power_of_two()
            .max(64)
            .min(1 << (63 - fit.leading_zeros()))
            .max(u64::from(shaders::MIN_BUCKETS)) as u32;
        let r_max = p.max_radius();
        let (k_pp, skin) = match model.contact {
            Some(c) => {
                let k_pp = match c.law {
                    ContactLaw::Binder { k_pp } => k_pp,
                    // Refused in set_up.
                    ContactLaw::Hertz => 0.0,
                };
                (k_pp, c.skin)
            }
            None => (0.0, 0.0),
        };
        // Cells reach every pair the list holds: contacts, and near-field partners.
        let cell = (2.0 * r_max).max(near.cutoff) + skin;
        let rs = std::mem::size_of::<R>() as u64;
        // Bond chunks: contiguous id ranges whose buffers each fit one storage binding.
        let per_bond = (std::mem::size_of::<BondRecord<R>>() as u64).max(12 * rs);
        let chunk_len = options
            .max_chunk_bonds
            .map(u64::from)
            .unwrap_or(max_bind / per_bond)
            .max(1) as usize;
        let bond_chunks: Vec<&[crate::model::Bond]> = model.bonds.chunks(chunk_len).collect();
        let n_partials = groups(n)
            + bond_chunks
                .iter()
                .map(|c| groups(c.len() as u32))
                .sum::<u32>();
        let fuse = !model.domain.is_some_and(|d| d.remove) && options.fused != Some(false);
        // Kernel paths that pay on hardware but not on a CPU adapter (llvmpipe is bound
        // by arithmetic, not memory traffic): the option, else on for every adapter but
        // CPU ones.
        let hardware = !ctx.summary.is_software();
        let want_merge = options.merge_contacts.unwrap_or(hardware);
        let merged = granular_forces_merge(granular, fuse, bond_chunks.len(), want_merge);
        let want_inline = options.inline_bonds.unwrap_or(hardware);
        let inline = inline_bonds(fuse, bond_chunks.len(), want_inline);
        let compact = if options.compact_bonds != Some(false) {
            CompactBonds::<R>::new(&model.bonds)
        } else {
            None
        };
        let direct = direct_positions(fuse, contact, hertz, merged, inline);
        let params = Params::<R> {
            n_particles: n,
            n_bonds: nb,
            n_walls: model.walls.len() as u32,
            n_buckets,
            bucket_capacity,
            max_neighbors,
            flags: if contact { PARAM_CONTACT } else { 0 }
                | if model.shear == ShearForm::Printed {
                    PARAM_PRINTED_SHEAR
                } else {
                    0
                }
                | if hertz { PARAM_HERTZ } else { 0 }
                | if merged { PARAM_MERGED } else { 0 }
                | if direct { PARAM_POS_DIRECT } else { 0 }
                | if inline { PARAM_INLINE_BONDS } else { 0 }
                | if compact.is_some() {
                    PARAM_COMPACT_BONDS
                } else {
                    0
                }
                | if model.drag.is_some() { PARAM_DRAG } else { 0 }
                | PARAM_FIRST
                | if model.near_field.is_some() {
                    PARAM_NEAR
                } else {
                    0
                }
                | match model.domain {
                    None => 0,
                    Some(d) if d.remove => PARAM_DOMAIN | PARAM_DOMAIN_REMOVE,
                    Some(_) => PARAM_DOMAIN,
                },
            integrator: match integrator {
                IntegratorKind::Variational => INTEGRATOR_VARIATIONAL,
                IntegratorKind::VariationalExact => INTEGRATOR_VARIATIONAL_EXACT,
                IntegratorKind::SymplecticEuler => INTEGRATOR_SYMPLECTIC_EULER,
                // Refused in set_up.
                IntegratorKind::CampelloTrapezoidal => INTEGRATOR_VARIATIONAL,
            },
            n_partials,
            n_materials,
            max_contacts,
            pad_u2: 0,
            dt: R::from_f64(dt),
            k_pp: R::from_f64(k_pp),
            skin: R::from_f64(skin),
            inv_cell: R::from_f64(if cell > 0.0 { 1.0 / cell } else { 0.0 }),
            gravity_x: R::from_f64(model.gravity.x),
            gravity_y: R::from_f64(model.gravity.y),
            gravity_z: R::from_f64(model.gravity.z),
            one: R::from_f64(1.0),
            drag_c: R::from_f64(drag.coefficient),
            fluid_x: R::from_f64(drag.fluid_velocity.x),
            fluid_y: R::from_f64(drag.fluid_velocity.y),
            fluid_z: R::from_f64(drag.fluid_velocity.z),
            magnus: R::from_f64(drag.magnus),
            domain_min_x: R::from_f64(domain.min.x),
            domain_min_y: R::from_f64(domain.min.y),
            domain_min_z: R::from_f64(domain.min.z),
            domain_max_x: R::from_f64(domain.max.x),
            domain_max_y: R::from_f64(domain.max.y),
            domain_max_z: R::from_f64(domain.max.z),
            nf_kappa_a: R::from_f64(near.kappa_attractive),
            nf_lambda_a: R::from_f64(near.lambda_attractive),
            nf_kappa_r: R::from_f64(near.kappa_repulsive),
            nf_lambda_r: R::from_f64(near.lambda_repulsive),
            nf_cutoff: R::from_f64(near.cutoff),
        };
        // Granular tables (empty otherwise).
        let (pair_records, material): (Vec<PairRecord<R>>, &[u32]) = if granular {
            let t = crate::physics::granular::PairTables::new(&model);
            (
                t.pairs
                    .iter()
                    .chain(t.walls.iter())
                    .map(PairRecord::from)
                    .collect(),
                &p.material,
            )
        } else {
            (Vec::new(), &[])
        };
        let walls: Vec<WallRecord<R>> = model.walls.iter().map(WallRecord::from).collect();
        // Compact bond kinds, one vec4 each (K^m, K^a, K^s, 0).
        let kinds: Vec<R> = compact
            .as_ref()
            .map(|c| {
                c.kinds
                    .chunks_exact(3)
                    .flat_map(|k| [k[0], k[1], k[2], R::default()])
                    .collect()
            })
            .unwrap_or_default();
        let motion = merged && hertz;
        let needs = SectionNeeds {
            n,
            pendulum: p.flags.iter().any(|f| f & crate::model::FLAG_PENDULUM != 0),
            contact,
            // Only fused steps that do not predict in place write pos_next, and only
            // fused steps that compute bond terms inline write rot_next.
            pos_next: fuse && !direct,
            rot_next: inline,
            motion,
            material: granular,
            pair_records: pair_records.len() as u32,
            walls: walls.len() as u32,
            bond_kinds: (kinds.len() / 4) as u32,
        };
        let sections = Sections::new(&needs)
            .map_err(|e| Error::DeviceTooSmall(format!("{e} ({n} particles, {nb} bonds)")))?;
        // Wall springs per particle and wall (granular_sum stores one for every wall,
        // Hertz or not).
        let wall_stride = if granular {
            model.walls.len().max(1) as u64
        } else {
            0
        };
        // The row buffers (ROW_BINDINGS but the uniform): their bytes per particle and
        // initial contents.
        let k = max_contacts as u64;
        // f32 builds only: the 9 Kahan terms per particle, restored from a checkpoint.
        let comp_row = if rs == 4 { 36 } else { 0 };
        let comp_init: Option<&[u8]> =
            (rs == 4 && comp.len() == 9 * n as usize).then(|| bytemuck::cast_slice(comp));
        let neighbor_row = if contact {
            4 * (max_neighbors as u64 + 1)
        } else {
            0
        };
        // Two copies of the history slots (`HistSlot`): a spring and a partner id,
        // unused ones NO_PARTNER.
        let slot = hist_slot_bytes(rs as usize) as u64;
        let empty_slot = encode_hist_slots::<R>(&[crate::cpu::NO_PARTNER], &[DVec3::ZERO]);
        // row_vec: two copies of the wall springs (one vec4 each, w unused), then the
        // granular output (three vec4).
        let gout_vec4 = if granular { 3 } else { 0 };
        let row_vec_row = (2 * wall_stride + gout_vec4) * 4 * rs;
        let row = RowBuffer::new;
        let row_layout: [RowBuffer; 4] = [
            row(bind::NEIGHBORS, "neighbors", neighbor_row, &[0], None),
            row(bind::COMP, "comp", comp_row, &[0], comp_init),
            row(bind::HIST, "hist", 2 * k * slot, &empty_slot, None),
            row(bind::ROW_VEC, "row_vec", row_vec_row, &[0], None),
        ];
        debug_assert!(row_layout
            .iter()
            .map(|r| r.binding)
            .eq(ROW_BINDINGS[..4].iter().copied()));
        // Row chunks: contiguous particle ranges whose rows fit one storage binding in
        // every row buffer.
        let widest_row = row_layout.iter().map(|r| r.per_row).max().unwrap_or(0);
        let rows_per_chunk = options
            .max_chunk_particles
            .map_or(u64::MAX, u64::from)
            .min(max_bind.checked_div(widest_row).unwrap_or(u64::MAX))
            .clamp(1, u64::from(n.max(1))) as u32;
        let row_chunks: Vec<(u32, u32)> = (0..n.max(1))
            .step_by(rows_per_chunk as usize)
            .map(|first| (first, rows_per_chunk.min(n - first)))
            .collect();
        let mut status = [0u32; STATUS_WORDS];
        status[STATUS_STEP] = start;
        status[STATUS_REBUILD] = u32::from(contact);
        for w in &mut status[STATUS_FIRST_INDEX..] {
            *w = u32::MAX;
        }
        let zeros = |bytes: u64| -> Vec<u8> { vec![0u8; bytes as usize] };
        let bytes_of = |v: &[R]| -> Vec<u8> { bytemuck::cast_slice(v).to_vec() };
        // The packed buffers, section by section in the order of `Sections`.
        let n3 = 3 * n as u64 * rs;
        let mut body = [
            bytes_of(&flat4::<R>(&p.position, &p.radius)),
            bytes_of(&flat4::<R>(&p.velocity, &p.mass)),
            bytes_of(&flat4::<R>(&p.angular_velocity, &p.inertia)),
            zeros(4 * n as u64 * rs),
        ]
        .concat();
        if motion {
            // Motion records' end-of-step velocity and mass (vec4), the mass set here
            // for good, in both copies.
            let mv = bytes_of(&flat4::<R>(&vec![DVec3::ZERO; p.len()], &p.mass));
            body.extend_from_slice(&mv);
            body.extend_from_slice(&mv);
        }
        let mut vecs = [bytes_of(&flat::<R>(&p.rotation)), zeros(n3)].concat();
        if needs.pendulum {
            vecs.extend(bytes_of(&flat::<R>(&p.pendulum_offset)));
        }
        if contact {
            vecs.extend(zeros(n3));
        }
        vecs.extend(zeros(n3));
        if contact {
            vecs.extend(zeros(3 * rs));
        }
        if needs.pos_next {
            vecs.extend(zeros(n3));
        }
        if needs.rot_next {
            vecs.extend(zeros(n3));
        }
        debug_assert_eq!(vecs.len() as u64, u64::from(sections.vecs_len) * rs);
        debug_assert_eq!(body.len() as u64, u64::from(sections.body_len) * 4 * rs);
        let pflags: Vec<u8> = [
            bytemuck::cast_slice::<u32, u8>(&p.flags),
            bytemuck::cast_slice(material),
        ]
        .concat();
        let tables: Vec<u8> = [
            bytemuck::cast_slice::<PairRecord<R>, u8>(&pair_records),
            bytemuck::cast_slice(&walls),
            bytemuck::cast_slice(&kinds),
        ]
        .concat();
        debug_assert_eq!(tables.len() as u64, u64::from(sections.tables_len) * 4 * rs);
        // (binding, label, contents)
        let contents: Vec<(u32, &str, Vec<u8>)> = vec![
            (bind::PARAMS, "params", bytemuck::bytes_of(&params).to_vec()),
            (
                bind::STATUS,
                "status",
                bytemuck::cast_slice(&status).to_vec(),
            ),
            (bind::BODY, "body", body),
            (bind::VECS, "vecs", vecs),
            (bind::PFLAGS, "pflags", pflags),
            (bind::TABLES, "tables", tables),
            (
                bind::MOTION,
                "motion",
                zeros(u64::from(sections.motion_len) * rs),
            ),
            // Bindings 7-10 are bound per bond chunk (below); placeholders keep the
            // table indexed by binding.
            (bind::BONDS, "bonds (per chunk)", Vec::new()),
            (bind::BOND_OUT, "bond_out (per chunk)", Vec::new()),
            (bind::INCIDENCE, "incidence (per chunk)", Vec::new()),
            (bind::CHUNK, "chunk (per chunk)", Vec::new()),
            // Bindings 11-15 are bound per row chunk (below).
            (bind::NEIGHBORS, "neighbors (per row chunk)", Vec::new()),
            (bind::COMP, "comp (per row chunk)", Vec::new()),
            (bind::HIST, "hist (per row chunk)", Vec::new()),
            (bind::ROW_VEC, "row_vec (per row chunk)", Vec::new()),
            (bind::ROWS, "rows (per row chunk)", Vec::new()),
            (
                bind::BUCKET_COUNT,
                "bucket_count",
                zeros(if contact { 4 * n_buckets as u64 } else { 0 }),
            ),
            (
                bind::BUCKET_ITEMS,
                "bucket_items",
                zeros(if contact {
                    4 * n_buckets as u64 * bucket_capacity as u64
                } else {
                    0
                }),
            ),
            (
                bind::GRID_ARGS,
                "grid_args",
                bytemuck::cast_slice(&grid_args(n_buckets, n, &row_chunks)).to_vec(),
            ),
            (
                bind::PARTIALS,
                "partials",
                zeros(16 * n_partials as u64 * rs),
            ),
            (bind::RESULT, "result", zeros(16 * rs)),
        ];
        debug_assert!(contents.iter().enumerate().all(|(i, c)| c.0 as usize == i));
        // Per row chunk: its rows of every row buffer.
        let row_contents: Vec<Vec<(u32, String, Vec<u8>)>> = row_chunks
            .iter()
            .enumerate()
            .map(|(c, &(first, count))| {
                let suffix = if row_chunks.len() > 1 {
                    format!("[{c}]")
                } else {
                    String::new()
                };
                row_layout
                    .iter()
                    .map(|r| {
                        let (from, to) = (
                            (r.per_row * first as u64) as usize,
                            (r.per_row * (first + count) as u64) as usize,
                        );
                        let data = match r.init {
                            Some(all) => all[from..to].to_vec(),
                            None => r.fill.iter().copied().cycle().take(to - from).collect(),
                        };
                        (r.binding, format!("{}{suffix}", r.label), data)
                    })
                    .collect()
            })
            .collect();
        // Per row chunk and step parity: the Rows uniform, whose offsets put the copy
        // written at that parity at `*_new`.
        let row_uniforms: Vec<[RowChunk; 2]> = row_chunks
            .iter()
            .map(|&(first, count)| {
                let count64 = u64::from(count);
                [0usize, 1].map(|q| {
                    let other = 1 - q;
                    let hist = |copy: usize| (copy as u64 * count64 * k) as u32;
                    let wall = |copy: usize| (copy as u64 * count64 * wall_stride) as u32;
                    RowChunk {
                        first,
                        count,
                        hist_new: hist(q),
                        hist_old: hist(other),
                        wall_new: wall(q),
                        wall_old: wall(other),
                        gout: wall(2),
                        mv_new: sections.motion_v[q],
                        mv_old: sections.motion_v[other],
                        mdx_new: sections.motion_dx[q],
                        mdx_old: sections.motion_dx[other],
                        mda_new: sections.motion_da[q],
                        mda_old: sections.motion_da[other],
                        ..Default::default()
                    }
                })
            })
            .collect();
        // Per chunk: bonds (full or compact records), bond_out, incidence, chunk uniform.
        let mut chunk_contents: Vec<[(u32, String, Vec<u8>); 4]> = Vec::new();
        let mut bond_base = 0u32;
        let mut partial_base = groups(n);
        for (c, bonds) in bond_chunks.iter().enumerate() {
            let range = bond_base as usize..bond_base as usize + bonds.len();
            let records = match &compact {
                Some(cb) => bytemuck::cast_slice(&cb.records[range]).to_vec(),
                None => {
                    let r: Vec<BondRecord<R>> = bonds.iter().map(BondRecord::from).collect();
                    bytemuck::cast_slice(&r).to_vec()
                }
            };
            let inc = Incidence::build(p.len(), bonds);
            let incidence: Vec<u32> = inc
                .offsets
                .iter()
                .chain(inc.entries.iter())
                .copied()
                .collect();
            let info = Chunk {
                n_bonds: bonds.len() as u32,
                first: u32::from(c == 0),
                partial_base,
                bond_base,
            };
            chunk_contents.push([
                (bind::BONDS, format!("bonds[{c}]"), records),
                (
                    bind::BOND_OUT,
                    format!("bond_out[{c}]"),
                    zeros(12 * bonds.len() as u64 * rs),
                ),
                (
                    bind::INCIDENCE,
                    format!("incidence[{c}]"),
                    bytemuck::cast_slice(&incidence).to_vec(),
                ),
                (
                    bind::CHUNK,
                    format!("chunk[{c}]"),
                    bytemuck::bytes_of(&info).to_vec(),
                ),
            ]);
            bond_base += bonds.len() as u32;
            partial_base += groups(bonds.len() as u32);
        }
        debug_assert_eq!(contents.len(), bind::COUNT);

        // Does the problem fit the device?
        let total: u64 = contents.iter().map(|c| c.2.len() as u64).sum::<u64>()
            + chunk_contents
                .iter()
                .flatten()
                .chain(row_contents.iter().flatten())
                .map(|c| c.2.len() as u64)
                .sum::<u64>();
        let chunk_refs = chunk_contents
            .iter()
            .flatten()
            .chain(row_contents.iter().flatten())
            .map(|(b, l, d)| (*b, l.as_str(), d));
        for (b, label, data) in contents
            .iter()
            .map(|(b, l, d)| (*b, *l, d))
            .chain(chunk_refs)
        {
            let size = data.len() as u64;
            if size > max_bind {
                // Row and bond chunks are sized to fit, so this is a whole array that
                // kernels index by any partner, or a single row or bond too large.
                let why = if ROW_BINDINGS.contains(&b) {
                    "one particle's row alone exceeds it"
                } else if CHUNK_BINDINGS.contains(&b) {
                    "one bond alone exceeds it"
                } else {
                    "kernels read this array for any particle's partners, so it is not split into chunks"
                };
                return Err(Error::DeviceTooSmall(format!(
                    "buffer '{label}' needs {size} bytes ({n} particles, {nb} bonds) but adapter {} binds at most {max_bind} bytes per storage buffer ({why}); total device memory needed ≈ {:.1} MiB",
                    ctx.summary.name,
                    total as f64 / 1048576.0
                )));
            }
        }
        log::debug!(
            "gpu buffers: {:.1} MiB; {} row chunk(s) of ≤ {rows_per_chunk} particles, {} bond chunk(s)",
            total as f64 / 1048576.0,
            row_chunks.len(),
            bond_chunks.len()
        );

        let device = &ctx.device;
        let make = |b: u32, label: &str, data: &[u8]| -> wgpu::Buffer {
            let usage = if b == bind::PARAMS || b == bind::CHUNK || b == bind::ROWS {
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
            } else if b == bind::GRID_ARGS {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_DST
            } else {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC
            };
            // Zero-sized bindings are not allowed: pad to one 256-byte block.
            let size = (data.len() as u64)
                .max(256)
                .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            });
            if !data.is_empty() {
                let padded = data
                    .len()
                    .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT as usize);
                let mut bytes = data.to_vec();
                bytes.resize(padded, 0);
                ctx.queue.write_buffer(&buf, 0, &bytes);
            }
            buf
        };
        // Every buffer fits a binding, but together they may not fit the device's
        // memory: an allocation failure becomes the same clear refusal.
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffers: Vec<wgpu::Buffer> = contents
            .iter()
            .map(|(b, label, data)| make(*b, label, data))
            .collect();
        // One chunk's buffers (bond or row chunk), in its bindings' order.
        let make_set = |set: &[(u32, String, Vec<u8>)]| -> Vec<wgpu::Buffer> {
            set.iter()
                .map(|(b, label, data)| make(*b, label, data))
                .collect()
        };
        let chunk_buffers: Vec<Vec<wgpu::Buffer>> =
            chunk_contents.iter().map(|c| make_set(c)).collect();
        let row_buffers: Vec<Vec<wgpu::Buffer>> =
            row_contents.iter().map(|c| make_set(c)).collect();
        let row_uniform_buffers: Vec<[wgpu::Buffer; 2]> = row_uniforms
            .iter()
            .enumerate()
            .map(|(c, u)| {
                [0, 1].map(|q| {
                    make(
                        bind::ROWS,
                        &format!("rows[{c}, {q}]"),
                        bytemuck::bytes_of(&u[q]),
                    )
                })
            })
            .collect();
        drop(row_contents);
        if let Some(e) = pollster::block_on(out_of_memory.pop()) {
            return Err(Error::DeviceTooSmall(format!(
                "allocating {:.1} MiB of buffers ({n} particles, {nb} bonds) on adapter {} failed: {e}",
                total as f64 / 1048576.0,
                ctx.summary.name
            )));
        }
        if let Some(e) = pollster::block_on(validation.pop()) {
            return Err(Error::Backend(format!("buffer set-up: {e}")));
        }

        let precision = if rs == 8 {
            Precision::F64
        } else {
            Precision::F32
        };
        let config = ShaderConfig {
            precision,
            compact_bonds: compact.is_some(),
            sections,
        };
        let mut kernels = BTreeMap::new();
        let device_limits = ctx.limits();
        for file in shaders::KERNEL_FILES {
            let source = shaders::compose(file.source, &config);
            let (module_ir, info) = shaders::validate(&source, precision)
                .map_err(|e| Error::Backend(format!("shader {}: {e}", file.name)))?;
            // What the kernels need against what the device allows: a named refusal
            // rather than wgpu's validation error.
            let workgroup = shaders::workgroup_bytes(&module_ir);
            if u64::from(workgroup) > u64::from(device_limits.max_compute_workgroup_storage_size) {
                return Err(Error::DeviceLimit {
                    what: format!("shader {}", file.name),
                    limit: "bytes of workgroup memory",
                    need: workgroup.into(),
                    have: device_limits.max_compute_workgroup_storage_size.into(),
                });
            }
            if WORKGROUP_SIZE > device_limits.max_compute_invocations_per_workgroup {
                return Err(Error::DeviceLimit {
                    what: format!("shader {}", file.name),
                    limit: "invocations per workgroup",
                    need: WORKGROUP_SIZE.into(),
                    have: device_limits.max_compute_invocations_per_workgroup.into(),
                });
            }
            for &ep in file.entry_points {
                let storage = shaders::storage_buffers(&module_ir, &info, ep).unwrap_or(0);
                if storage > device_limits.max_storage_buffers_per_shader_stage {
                    return Err(Error::DeviceLimit {
                        what: format!("kernel {ep}"),
                        limit: "storage buffers per shader stage",
                        need: storage.into(),
                        have: device_limits.max_storage_buffers_per_shader_stage.into(),
                    });
                }
            }
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(file.name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            };
            let module = ctx.scoped(&format!("compiling shader {}", file.name), || {
                if checked_shaders() {
                    device.create_shader_module(desc)
                } else {
                    // SAFETY: every index the kernels use is bounded by the sizes in `Params`,
                    // which are the sizes of the buffers allocated above (n, bonds, buckets ×
                    // capacity, rows of max_neighbors + 1, the sections of `Sections`); the
                    // GPU tests run the same kernels with runtime checks on
                    // (VARIDEM_CHECKED_SHADERS=1 in .ci/run).
                    unsafe {
                        device.create_shader_module_trusted(
                            desc,
                            wgpu::ShaderRuntimeChecks::unchecked(),
                        )
                    }
                }
            })?;
            for &ep in file.entry_points {
                let used = shaders::used_bindings(&module_ir, &info, ep).ok_or_else(|| {
                    Error::Backend(format!("entry point {ep} missing in {}", file.name))
                })?;
                let pipeline =
                    ctx.scoped(&format!("creating the pipeline of kernel {ep}"), || {
                        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                            label: Some(ep),
                            layout: None,
                            module: &module,
                            entry_point: Some(ep),
                            // No zero-fill of workgroup memory: only reduce.wgsl has
                            // any (`scratch`), and each invocation writes its row before
                            // the first barrier. On OpenGL naga writes the fill as one
                            // invocation storing all 16 KiB, which llvmpipe compiles
                            // very slowly (the container's first 100 steps: 130 s with
                            // a cold shader cache, 8 s without the fill).
                            compilation_options: wgpu::PipelineCompilationOptions {
                                zero_initialize_workgroup_memory: false,
                                ..Default::default()
                            },
                            cache: None,
                        })
                    })?;
                let layout = pipeline.get_bind_group_layout(0);
                // A kernel dispatched once must not reach a per-chunk binding: it would
                // get the empty placeholder.
                let id = KernelId::from_entry_point(ep)
                    .ok_or_else(|| Error::Backend(format!("entry point {ep} has no KernelId")))?;
                let bond_chunked = id.bond_chunked() || id.last_bond_chunk();
                let row_chunked = id.row_chunked();
                if let Some(b) = used.iter().find(|&&b| {
                    (CHUNK_BINDINGS.contains(&b) && !bond_chunked)
                        || (ROW_BINDINGS.contains(&b) && !row_chunked)
                }) {
                    return Err(Error::Backend(format!(
                        "kernel {ep} uses binding {b}, which is bound per chunk, but is not dispatched per chunk"
                    )));
                }
                // The bind group of one bond chunk and/or row chunk: their buffers for
                // the per-chunk bindings, the shared ones (or the placeholder of a
                // problem without bonds) for the rest. `row`: the row chunk's index;
                // `odd`: its Rows uniform for an odd step (copy B written).
                let group = |bond: Option<&Vec<wgpu::Buffer>>, row: Option<usize>, odd: bool| {
                    let entries: Vec<wgpu::BindGroupEntry> = used
                        .iter()
                        .map(|&b| {
                            let in_bond = CHUNK_BINDINGS.iter().position(|&x| x == b);
                            let in_row = ROW_BINDINGS.iter().position(|&x| x == b);
                            let buffer = match (bond, in_bond, row, in_row) {
                                (Some(c), Some(k), _, _) => &c[k],
                                (_, _, Some(r), Some(_)) if b == bind::ROWS => {
                                    &row_uniform_buffers[r][usize::from(odd)]
                                }
                                (_, _, Some(r), Some(k)) => &row_buffers[r][k],
                                _ => &buffers[b as usize],
                            };
                            wgpu::BindGroupEntry {
                                binding: b,
                                resource: buffer.as_entire_binding(),
                            }
                        })
                        .collect();
                    device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some(ep),
                        layout: &layout,
                        entries: &entries,
                    })
                };
                let last_bond = if id.last_bond_chunk() {
                    chunk_buffers.last()
                } else {
                    None
                };
                let parities: &[bool] = if id.by_parity() {
                    &[false, true]
                } else {
                    &[false]
                };
                let bind_groups =
                    ctx.scoped(&format!("binding the buffers of kernel {ep}"), || {
                        if id.bond_chunked() {
                            chunk_buffers
                                .iter()
                                .map(|c| group(Some(c), None, false))
                                .collect()
                        } else if row_chunked {
                            parities
                                .iter()
                                .flat_map(|&odd| (0..row_buffers.len()).map(move |r| (odd, r)))
                                .map(|(odd, r)| group(last_bond, Some(r), odd))
                                .collect()
                        } else {
                            vec![group(None, None, false)]
                        }
                    })?;
                kernels.insert(
                    id,
                    Kernel {
                        pipeline,
                        bind_groups,
                    },
                );
            }
        }

        let chunks: Vec<u32> = bond_chunks.iter().map(|c| c.len() as u32).collect();
        drop(bond_chunks);
        let mut me = Self {
            ctx,
            precision,
            model,
            integrator,
            dt,
            buffers,
            chunk_buffers,
            row_buffers,
            sections,
            rows: row_chunks,
            kernels,
            n,
            chunks,
            contact,
            granular,
            fuse,
            merged,
            direct,
            inline,
            compact: compact.is_some(),
            max_contacts,
            max_neighbors,
            steps: 0,
        };
        // Forces of the initial state (and the first neighbour list).
        let mut encoder = me.encoder();
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("init"),
                timestamp_writes: None,
            });
            me.encode_forces(&mut pass, u64::from(start), false);
        }
        me.submit("the set-up force evaluation", encoder)?;
        // Later evaluations follow a step: the contact springs take its increments.
        let later = Params {
            flags: params.flags & !PARAM_FIRST,
            ..params
        };
        me.ctx.queue.write_buffer(
            &me.buffers[bind::PARAMS as usize],
            0,
            bytemuck::bytes_of(&later),
        );
        me.check_status()?;
        Ok(me)
    }

    /// Number of row chunks the per-particle row buffers are split into (1 when they
    /// fit one storage binding): tests check that chunking took place.
    pub fn row_chunk_count(&self) -> usize {
        self.rows.len()
    }

    /// Destroys the device, as a driver reset or a removed GPU would: every later call
    /// returns [`Error::Gpu`]. For tests of what a run keeps when its device is lost.
    pub fn lose_device(&self) {
        self.ctx.lose_device();
    }

    /// The adapter this backend runs on.
    pub fn adapter_name(&self) -> &str {
        &self.ctx.summary.name
    }

    /// Kernel precision.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Finishes and submits `encoder`; a wgpu error in encoding or submission, or a
    /// lost device, becomes [`Error::Gpu`] naming `what`.
    fn submit(&self, what: &str, encoder: wgpu::CommandEncoder) -> Result<()> {
        self.ctx.scoped(&format!("submitting {what}"), || {
            self.ctx.queue.submit([encoder.finish()]);
        })
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("varidem"),
            })
    }

    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId, groups: u32) {
        self.dispatch_chunk(pass, name, 0, groups);
    }

    /// Dispatches `name` with the bind group of bond or row chunk `chunk` (0 for
    /// unchunked kernels).
    fn dispatch_chunk(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        chunk: usize,
        groups: u32,
    ) {
        let k = &self.kernels[&name];
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &k.bind_groups[chunk], &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }

    /// Dispatches `name` with the workgroup count at entry `entry` of `grid_args` (see
    /// [`grid_args`]): the grid kernels launch no invocation at all between rebuilds.
    fn dispatch_grid(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        chunk: usize,
        entry: usize,
    ) {
        let k = &self.kernels[&name];
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &k.bind_groups[chunk], &[]);
        let offset = 4 * (1 + 3 * entry as u64);
        pass.dispatch_workgroups_indirect(&self.buffers[bind::GRID_ARGS as usize], offset);
    }

    /// Dispatches a [`KernelId::row_chunked`] kernel once per row chunk, over its particles.
    /// Every particle's work does not depend on the chunking, so the results are the
    /// same bits as one dispatch over all particles.
    fn dispatch_rows(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId) {
        self.dispatch_rows_from(pass, name, 0);
    }

    /// [`Self::dispatch_rows`] with the bind groups from `first` on: a kernel of
    /// [`KernelId::by_parity`] has the odd-step set after the even one.
    fn dispatch_rows_from(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId, first: usize) {
        for (c, &(_, count)) in self.rows.iter().enumerate() {
            self.dispatch_chunk(pass, name, first + c, groups(count));
        }
    }

    /// Grid (when stale), bond forces and particle forces.
    /// `step` is the step count once this evaluation's step has begun: its parity picks
    /// the history copy granular_forces writes.
    /// `fuse`: end in `particle_forces_predict` instead of `particle_forces`.
    fn encode_forces(&self, pass: &mut wgpu::ComputePass<'_>, step: u64, fuse: bool) {
        if self.contact {
            // grid_gate sets the grid kernels' workgroup counts: zero unless stale.
            self.dispatch(pass, KernelId::GridGate, 1);
            self.dispatch_grid(pass, KernelId::GridClear, 0, 0);
            self.dispatch_grid(pass, KernelId::GridInsert, 0, 1);
            for c in 0..self.rows.len() {
                self.dispatch_grid(pass, KernelId::NeighborBuild, c, 2 + c);
            }
            self.dispatch(pass, KernelId::GridFinish, 1);
        }
        // A fused step's energies are never read (the host reads them after the last
        // step of an advance, which is not fused): its kernels do not store them.
        let (granular, bonds) = if fuse {
            (
                KernelId::GranularForcesNoEnergy,
                KernelId::BondForcesNoEnergy,
            )
        } else {
            (KernelId::GranularForces, KernelId::BondForces)
        };
        let parity = (step & 1) as usize;
        // Merged fused steps run the contact pass in particle_forces_predict.
        if self.granular && !(fuse && self.merged) {
            self.dispatch_rows_from(pass, granular, parity * self.rows.len());
        }
        // particle_forces gathers the last chunk's bond results itself, and fused steps
        // with inline bond terms compute them there (the one chunk).
        let last = self.chunks.len().saturating_sub(1);
        for (c, &len) in self.chunks.iter().enumerate() {
            if fuse && self.inline {
                break;
            }
            self.dispatch_chunk(pass, bonds, c, groups(len));
            if c < last {
                self.dispatch_chunk(pass, KernelId::BondGather, c, groups(self.n));
            }
        }
        if fuse {
            self.dispatch_rows_from(
                pass,
                KernelId::ParticleForcesPredict,
                parity * self.rows.len(),
            );
        } else {
            self.dispatch_rows(pass, KernelId::ParticleForces);
        }
    }

    /// One step: predict, forces, and the correct half, which ends particle_forces
    /// (except in the set-up evaluation, flagged `PARAM_FIRST`).
    ///
    /// `predicted`: the previous step ended in `particle_forces_predict`, which
    /// predicted this one, so only its positions are committed. `fuse`: end in
    /// `particle_forces_predict` (predict the next step); the last step of an advance
    /// does not, so the state read back afterwards is that of a completed step.
    fn encode_step(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        step: u64,
        predicted: bool,
        fuse: bool,
    ) {
        self.dispatch(pass, KernelId::StepBegin, 1);
        if predicted {
            // Predicted in place (PARAM_POS_DIRECT): nothing to commit.
            if !self.direct {
                self.dispatch(pass, KernelId::CommitPos, groups(self.n));
            }
        } else {
            // Bound with the next step's parity: its `*_new` motion records are the
            // copy this step's merged contact pass reads.
            let parity = ((step + 1) & 1) as usize;
            self.dispatch_rows_from(pass, KernelId::IntegratePredict, parity * self.rows.len());
        }
        self.encode_forces(pass, step, fuse);
    }

    /// Copies the first `bytes` of the buffer bound at `binding` to the host (blocking).
    fn read(&self, binding: u32, bytes: u64) -> Result<Vec<u8>> {
        self.read_buffer(&self.buffers[binding as usize], bytes)
    }

    /// Copies the first `bytes` of `buffer` (rounded up to the copy alignment) to the
    /// host (blocking).
    fn read_buffer(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        self.read_buffer_at(buffer, 0, bytes)
    }

    /// Copies `bytes` of `buffer` from byte `offset` (a multiple of 4) to the host
    /// (blocking); the length is rounded up to the copy alignment.
    fn read_buffer_at(&self, buffer: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
        let bytes = bytes.max(4).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.encoder();
        encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, bytes);
        self.submit("a read-back", encoder)?;
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu {
                during: "waiting for a read-back".into(),
                message: format!("device lost or timed out: {e}"),
            })?;
        let failed = |e: String| Error::Gpu {
            during: "reading back".into(),
            message: e,
        };
        rx.recv()
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        let data = slice
            .get_mapped_range()
            .map_err(|e| failed(e.to_string()))?
            .to_vec();
        self.ctx.check("reading back")?;
        staging.unmap();
        Ok(data)
    }

    fn read_reals(&self, binding: u32, count: usize) -> Result<Vec<f64>> {
        self.read_buffer_reals(&self.buffers[binding as usize], count)
    }

    /// Where `field` lives: its buffer, its first byte and its reals per particle.
    fn field_place(&self, field: Field) -> (u32, u64, usize) {
        let rs = self.real_size() as u64;
        let s = &self.sections;
        let (binding, offset, stride) = match field {
            Field::Pos => (bind::BODY, 0, 4),
            Field::Vel => (bind::BODY, s.vel, 4),
            Field::Omega => (bind::BODY, s.omega, 4),
            Field::Force => (bind::BODY, s.force, 4),
            Field::Rot => (bind::VECS, 0, 3),
            Field::Moment => (bind::VECS, s.moment, 3),
            Field::Energy => (bind::VECS, s.energy, 3),
        };
        // body is indexed by vec4, vecs by real.
        let unit = if binding == bind::BODY { 4 * rs } else { rs };
        (binding, u64::from(offset) * unit, stride)
    }

    /// Every particle's `field`, widened to `f64` (the xyz of vec4 fields).
    fn read_field(&self, field: Field) -> Result<Vec<DVec3>> {
        let (binding, offset, stride) = self.field_place(field);
        let count = stride * self.n as usize;
        let raw = self.read_buffer_at(
            &self.buffers[binding as usize],
            offset,
            (count * self.real_size()) as u64,
        )?;
        Ok(vec3s(&self.reals_from_bytes(&raw, count), stride))
    }

    /// Uploads every particle's `field` (`w` of vec4 fields: 0), rounded to the kernel
    /// precision.
    fn write_field(&self, field: Field, values: &[DVec3]) {
        let (binding, offset, stride) = self.field_place(field);
        let flat: Vec<f64> = values
            .iter()
            .flat_map(|a| {
                let v = a.extend(0.0).to_array();
                v.into_iter().take(stride)
            })
            .collect();
        self.ctx.queue.write_buffer(
            &self.buffers[binding as usize],
            offset,
            &self.real_bytes(&flat),
        );
    }

    /// Bytes per real of the kernels.
    fn real_size(&self) -> usize {
        match self.precision {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// The first `count` reals of `raw` (kernel precision), widened to `f64`.
    fn reals_from_bytes(&self, raw: &[u8], count: usize) -> Vec<f64> {
        match self.precision {
            Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(&raw[..count * 4])
                .iter()
                .map(|&v| v as f64)
                .collect(),
            Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(&raw[..count * 8]),
        }
    }

    /// `values` rounded to the kernel precision, as bytes.
    fn real_bytes(&self, values: &[f64]) -> Vec<u8> {
        match self.precision {
            Precision::F32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                bytemuck::cast_slice(&v).to_vec()
            }
            Precision::F64 => bytemuck::cast_slice(values).to_vec(),
        }
    }

    /// The first `count` reals of `buffer`, widened to `f64`.
    fn read_buffer_reals(&self, buffer: &wgpu::Buffer, count: usize) -> Result<Vec<f64>> {
        let raw = self.read_buffer(buffer, (count * self.real_size()) as u64)?;
        Ok(self.reals_from_bytes(&raw, count))
    }

    /// The buffers of row binding `binding` (one of [`ROW_BINDINGS`]), one per row chunk,
    /// with the particle count of each.
    fn row_chunk_buffers(&self, binding: u32) -> Result<Vec<(&wgpu::Buffer, usize)>> {
        let slot = ROW_BINDINGS
            .iter()
            .position(|&b| b == binding)
            .ok_or_else(|| Error::Backend(format!("binding {binding} is not a row binding")))?;
        Ok(self
            .row_buffers
            .iter()
            .zip(&self.rows)
            .map(|(bufs, &(_, count))| (&bufs[slot], count as usize))
            .collect())
    }

    /// Every particle's row of one section of row binding `binding` (`bytes_per_row`
    /// each), read from each row chunk's buffer and concatenated in particle order.
    /// The section starts after `skip_per_row` bytes per particle of the chunk (earlier
    /// sections: a copy of the history, the wall springs).
    fn read_rows(
        &self,
        binding: u32,
        skip_per_row: usize,
        bytes_per_row: usize,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.n as usize * bytes_per_row);
        for (buffer, count) in self.row_chunk_buffers(binding)? {
            let bytes = count * bytes_per_row;
            if bytes > 0 {
                let at = (count * skip_per_row) as u64;
                out.extend_from_slice(&self.read_buffer_at(buffer, at, bytes as u64)?[..bytes]);
            }
        }
        Ok(out)
    }

    /// Uploads `data`, every particle's row of one section of row binding `binding` in
    /// particle order (`bytes_per_row` each, after `skip_per_row` bytes per particle of
    /// each chunk as in [`Self::read_rows`]), into the row chunks' buffers.
    fn write_rows(
        &self,
        binding: u32,
        skip_per_row: usize,
        bytes_per_row: usize,
        data: &[u8],
    ) -> Result<()> {
        let mut rest = data;
        for (buffer, count) in self.row_chunk_buffers(binding)? {
            let (part, tail) = rest.split_at((count * bytes_per_row).min(rest.len()));
            if !part.is_empty() {
                let at = (count * skip_per_row) as u64;
                self.ctx.queue.write_buffer(buffer, at, part);
            }
            rest = tail;
        }
        Ok(())
    }

    /// The particle flags as they are on the device (removals included).
    fn read_flags(&self) -> Result<Vec<u32>> {
        let n = self.n as usize;
        let raw = self.read(bind::PFLAGS, 4 * n as u64)?;
        Ok(bytemuck::pod_collect_to_vec::<u8, u32>(&raw[..4 * n]))
    }

    /// Wall springs per particle in the wall-spring rows (none without history).
    fn wall_stride(&self) -> usize {
        if self.max_contacts > 0 {
            self.model.walls.len().max(1)
        } else {
            0
        }
    }

    /// The history and wall-spring copy the last force evaluation wrote (the
    /// evaluation of step `s` writes copy `s & 1`).
    fn history_copy(&self) -> usize {
        (self.steps & 1) as usize
    }

    /// Bytes per particle of one copy of the wall springs in `row_vec`.
    fn wall_row_bytes(&self) -> usize {
        // granular_sum keeps a spring per wall in every granular scene.
        let walls = if self.granular {
            self.model.walls.len().max(1)
        } else {
            0
        };
        4 * walls * self.real_size()
    }

    /// The granular contact state (history and current forces) for a snapshot.
    fn contact_state(&self) -> Result<Option<ContactState>> {
        if !self.granular {
            return Ok(None);
        }
        let n = self.n as usize;
        let k = self.max_contacts as usize;
        let slots = n * k;
        let stride = self.wall_stride();
        let rs = self.real_size();
        let copy = self.history_copy();
        let slot_row = k * hist_slot_bytes(rs);
        let raw = self.read_rows(bind::HIST, copy * slot_row, slot_row)?;
        let (partner, spring) = match self.precision {
            Precision::F32 => decode_hist_slots::<f32>(&raw[..slots * hist_slot_bytes(rs)]),
            Precision::F64 => decode_hist_slots::<f64>(&raw[..slots * hist_slot_bytes(rs)]),
        };
        // Wall springs are one vec4 each (w unused).
        let wall_row = self.wall_row_bytes();
        let wall_spring = vec3s(
            &self.reals_from_bytes(
                &self.read_rows(bind::ROW_VEC, copy * wall_row, 4 * stride * rs)?,
                4 * n * stride,
            ),
            4,
        );
        let energy = self.read_field(Field::Energy)?;
        Ok(Some(ContactState {
            slots: self.max_contacts,
            partner,
            spring,
            wall_spring,
            force: self.read_field(Field::Force)?,
            moment: self.read_field(Field::Moment)?,
            energy: energy.iter().map(|e| e.to_array()).collect(),
        }))
    }

    /// Puts a snapshot's contact state in place of what the set-up evaluation computed.
    fn restore_contacts(&mut self, c: &ContactState) -> Result<()> {
        let n = self.n as usize;
        let stride = self.wall_stride();
        let walls = n * stride;
        if c.slots != self.max_contacts
            || c.partner.len() != n * c.slots as usize
            || c.spring.len() != c.partner.len()
            || c.wall_spring.len() != walls
            || c.force.len() != n
        {
            return Err(Error::Snapshot(format!(
                "the contact state ({} slots, {} wall springs) does not fit the scene ({} slots, {n} particles, {walls} wall springs)",
                c.slots,
                c.wall_spring.len(),
                self.max_contacts
            )));
        }
        // Wall springs and forces are one vec4 each (w unused, 0); moments three reals.
        let flat4 =
            |v: &[DVec3]| -> Vec<f64> { v.iter().flat_map(|a| a.extend(0.0).to_array()).collect() };
        let copy = self.history_copy();
        let k = c.slots as usize;
        let rs = self.real_size();
        if !c.partner.is_empty() {
            let slots = match self.precision {
                Precision::F32 => encode_hist_slots::<f32>(&c.partner, &c.spring),
                Precision::F64 => encode_hist_slots::<f64>(&c.partner, &c.spring),
            };
            let slot_row = k * hist_slot_bytes(rs);
            self.write_rows(bind::HIST, copy * slot_row, slot_row, &slots)?;
        }
        if !c.wall_spring.is_empty() {
            self.write_rows(
                bind::ROW_VEC,
                copy * self.wall_row_bytes(),
                4 * stride * rs,
                &self.real_bytes(&flat4(&c.wall_spring)),
            )?;
        }
        self.write_field(Field::Force, &c.force);
        self.write_field(Field::Moment, &c.moment);
        let energy: Vec<DVec3> = c.energy.iter().map(|e| DVec3::from_array(*e)).collect();
        self.write_field(Field::Energy, &energy);
        Ok(())
    }

    fn status(&self) -> Result<[u32; STATUS_WORDS]> {
        let raw = self.read(bind::STATUS, 4 * STATUS_WORDS as u64)?;
        let mut s = [0u32; STATUS_WORDS];
        s.copy_from_slice(&bytemuck::pod_collect_to_vec::<u8, u32>(
            &raw[..4 * STATUS_WORDS],
        ));
        Ok(s)
    }

    /// Reads the status words; turns a raised kernel error into [`Error::Kernel`].
    fn check_status(&mut self) -> Result<()> {
        let s = self.status()?;
        // An error of a fused predict is the next step's (step_begin no longer counts it).
        self.steps = s[STATUS_STEP] as u64 + u64::from(s[STATUS_AHEAD] != 0);
        let bits = s[STATUS_ERROR];
        if bits == 0 {
            return Ok(());
        }
        let code = bits.trailing_zeros() as usize;
        let index = s[STATUS_FIRST_INDEX + code];
        let what = ERR_NAMES
            .get(code)
            .copied()
            .unwrap_or("unknown kernel error at");
        let mut message = format!("{what} {index}");
        if code == contract::ERR_BOND_HALF_TURN as usize {
            if let Some(b) = self.model.bonds.get(index as usize) {
                message.push_str(&format!(" ({}, {})", b.i, b.j));
            }
        }
        Err(Error::Kernel {
            step: self.steps,
            message,
        })
    }

    /// Neighbour-list builds so far and the largest list seen.
    pub fn neighbor_stats(&self) -> Result<(u32, u32)> {
        let s = self.status()?;
        Ok((s[STATUS_BUILDS], s[STATUS_MAX_NEIGHBORS]))
    }

    /// Forces and moments of the current state (for parity tests).
    pub fn forces(&self) -> Result<(Vec<DVec3>, Vec<DVec3>)> {
        Ok((
            self.read_field(Field::Force)?,
            self.read_field(Field::Moment)?,
        ))
    }

    /// Strain energy `U^m + U^a + U^s` of every bond at the current state (J), in bond
    /// order: read from each chunk's `bond_out` (12 reals per bond, the energies at
    /// offsets 9, 10 and 11).
    pub fn bond_energies(&self) -> Result<Vec<f64>> {
        let slot = CHUNK_BINDINGS
            .iter()
            .position(|&b| b == bind::BOND_OUT)
            .ok_or_else(|| Error::Backend("bond_out is not a per-chunk binding".into()))?;
        let mut out = Vec::with_capacity(self.model.bonds.len());
        for (buffers, &len) in self.chunk_buffers.iter().zip(&self.chunks) {
            if len == 0 {
                continue;
            }
            let r = self.read_buffer_reals(&buffers[slot], 12 * len as usize)?;
            out.extend(r.chunks_exact(12).map(|b| b[9] + b[10] + b[11]));
        }
        Ok(out)
    }

    /// Each particle's neighbour list (for parity tests); empty without contacts.
    pub fn neighbor_lists(&self) -> Result<Vec<Vec<u32>>> {
        if !self.contact {
            return Ok(Vec::new());
        }
        let row = self.max_neighbors as usize + 1;
        let words: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_rows(bind::NEIGHBORS, 0, 4 * row)?);
        Ok(words
            .chunks_exact(row)
            .map(|r| r[1..1 + r[0] as usize].to_vec())
            .collect())
    }
}

impl Backend for GpuBackend {
    fn neighbor_builds(&mut self) -> Result<Option<u64>> {
        if !self.contact {
            return Ok(None);
        }
        Ok(Some(u64::from(self.neighbor_stats()?.0)))
    }

    fn listed_neighbors(&mut self) -> Result<Option<u64>> {
        if !self.contact {
            return Ok(None);
        }
        // Each row is its count, then the ids.
        let row = self.max_neighbors as usize + 1;
        let words: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_rows(bind::NEIGHBORS, 0, 4 * row)?);
        Ok(Some(words.chunks_exact(row).map(|r| u64::from(r[0])).sum()))
    }

    fn name(&self) -> String {
        format!("gpu ({}, {})", self.ctx.summary.name, self.precision)
    }

    fn kernel_path(&self) -> Option<String> {
        let mut parts = vec![if self.fuse {
            "fused steps"
        } else {
            "unfused steps"
        }];
        if !self.chunks.is_empty() {
            parts.push(if self.fuse && self.inline {
                "bond terms inline"
            } else {
                "bond terms from bond_forces"
            });
            parts.push(if self.compact {
                "compact bond records"
            } else {
                "full bond records"
            });
        }
        if self.granular {
            parts.push(if self.fuse && self.merged {
                "contact pass merged"
            } else {
                "contact pass split"
            });
        }
        if self.fuse {
            parts.push(if self.direct {
                "positions predicted in place"
            } else {
                "positions via pos_next"
            });
        }
        Some(parts.join(", "))
    }

    fn step_count(&self) -> u64 {
        self.steps
    }

    fn time(&self) -> f64 {
        self.steps as f64 * self.dt
    }

    /// Reads back the state and, in `f32`, the Kahan compensation terms.
    fn checkpoint_state(&mut self) -> Result<StateSnapshot> {
        let compensation = match self.precision {
            Precision::F32 => {
                bytemuck::pod_collect_to_vec::<u8, f32>(&self.read_rows(bind::COMP, 0, 36)?)
            }
            Precision::F64 => Vec::new(),
        };
        Ok(StateSnapshot {
            backend: BackendKind::Gpu,
            backend_name: self.name(),
            precision: self.precision,
            step: self.steps,
            integrator: self.integrator,
            dt: self.dt,
            position: self.read_field(Field::Pos)?,
            velocity: self.read_field(Field::Vel)?,
            rotation: self.read_field(Field::Rot)?,
            angular_velocity: self.read_field(Field::Omega)?,
            compensation,
            contacts: self.contact_state()?,
            removed: if self.model.domain.is_some_and(|d| d.remove) {
                crate::cpu::removed_ids(&self.read_flags()?)
            } else {
                Vec::new()
            },
        })
    }

    fn advance(&mut self, n: u64) -> Result<()> {
        let mut left = n;
        while left > 0 {
            let batch = left.min(STEPS_PER_SUBMIT);
            let mut encoder = self.encoder();
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("steps"),
                    timestamp_writes: None,
                });
                // Step numbers as step_begin counts them (an error stops the count, and
                // every later kernel with it, so a stale parity is never used).
                let done = n - left;
                for k in 0..batch {
                    let index = done + k;
                    self.encode_step(
                        &mut pass,
                        self.steps + index + 1,
                        self.fuse && index > 0,
                        self.fuse && index + 1 < n,
                    );
                }
            }
            self.submit(&format!("{batch} steps"), encoder)?;
            left -= batch;
        }
        self.check_status()
    }

    fn diagnostics(&mut self) -> Result<Diagnostics> {
        let mut encoder = self.encoder();
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("reduce"),
                timestamp_writes: None,
            });
            self.dispatch(&mut pass, KernelId::ReducePartials, groups(self.n));
            for (c, &len) in self.chunks.iter().enumerate() {
                self.dispatch_chunk(&mut pass, KernelId::ReduceBondPartials, c, groups(len));
            }
            self.dispatch(&mut pass, KernelId::ReduceFinal, 1);
        }
        self.submit("the reductions", encoder)?;
        let q = self.read_reals(bind::RESULT, 16)?;
        Ok(Diagnostics {
            step: self.steps,
            time: self.time(),
            e_kin: q[0],
            e_rot: q[1],
            momentum: DVec3::new(q[2], q[3], q[4]),
            angular_momentum: DVec3::new(q[5], q[6], q[7]),
            potentials: Potentials {
                field: q[8],
                contact: q[9],
                wall: q[10],
                bend: q[11],
                axial: q[12],
                shear: q[13],
                near_field: q[14],
            },
        })
    }

    fn particles(&mut self) -> Result<Particles> {
        let mut p = self.model.particles.clone();
        p.position = self.read_field(Field::Pos)?;
        p.velocity = self.read_field(Field::Vel)?;
        p.rotation = self.read_field(Field::Rot)?;
        p.angular_velocity = self.read_field(Field::Omega)?;
        if self.model.domain.is_some_and(|d| d.remove) {
            p.flags = self.read_flags()?;
        }
        Ok(p)
    }

    /// Reads back the state, forces, moments and bond energies; counts the contacts on
    /// the host from the read-back positions (a cell grid with no skin).
    fn frame(&mut self) -> Result<Frame> {
        let particles = self.particles()?;
        let (force, moment) = self.forces()?;
        let bond_energy = self.bond_energies()?;
        let contact_count = if self.contact {
            let mut list = NeighborList::new(0.0);
            list.build(&particles.position, &particles.radius);
            contact_counts(
                &list,
                &particles.position,
                &particles.radius,
                &self.model.walls,
            )
        } else {
            vec![0; particles.len()]
        };
        Ok(Frame {
            step: self.steps,
            time: self.time(),
            particles,
            force,
            moment,
            contact_count,
            bond_energy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's A/B variables map onto the options; unset or other values leave the
    /// default path.
    #[test]
    fn path_switches_come_from_the_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(PathSwitches::from_lookup(env(&[])), PathSwitches::default());
        let s = PathSwitches::from_lookup(env(&[
            (UNFUSED_ENV, "1"),
            (MERGE_ENV, "0"),
            (INLINE_ENV, "1"),
        ]));
        assert_eq!(
            (s.fused, s.merge_contacts, s.inline_bonds),
            (Some(false), Some(false), Some(true))
        );
        // VARIDEM_GPU_UNFUSED=0 is the default (fused), not a request.
        assert_eq!(
            PathSwitches::from_lookup(env(&[(UNFUSED_ENV, "0"), (MERGE_ENV, "yes")])),
            PathSwitches::default()
        );
        let mut o = GpuOptions {
            inline_bonds: Some(false),
            ..GpuOptions::default()
        };
        s.apply(&mut o);
        assert_eq!(
            (o.fused, o.merge_contacts, o.inline_bonds),
            (Some(false), Some(false), Some(true))
        );
    }

    /// Positions are predicted in place exactly when no kernel of the fused force pass
    /// reads partners' positions after the predict has begun.
    #[test]
    fn direct_positions_only_without_partner_reads_in_the_predict_pass() {
        // Granular (Hertz) with the split contact pass: in place.
        assert!(direct_positions(true, true, true, false, false));
        // Merged contact pass: partners' positions read in the same dispatch.
        assert!(!direct_positions(true, true, true, true, false));
        // Inline bond terms: partners' positions read in the same dispatch.
        assert!(!direct_positions(true, true, true, false, true));
        assert!(!direct_positions(true, false, false, false, true));
        // Binder contacts (the bonded block): read in particle_forces_predict.
        assert!(!direct_positions(true, true, false, false, false));
        // No contacts at all (pendulum, torus, split bond kernels): in place.
        assert!(direct_positions(true, false, false, false, false));
        // Unfused steps predict in integrate_predict, in place already.
        assert!(!direct_positions(false, true, true, false, false));
        // Inline bond terms need fused steps and exactly one bond chunk.
        assert!(inline_bonds(true, 1, true));
        assert!(!inline_bonds(true, 0, true));
        assert!(!inline_bonds(true, 2, true));
        assert!(!inline_bonds(false, 1, true));
        assert!(!inline_bonds(true, 1, false));
        // The merge needs fused steps, a granular model and at most one bond chunk.
        assert!(granular_forces_merge(true, true, 1, true));
        assert!(!granular_forces_merge(true, true, 2, true));
        assert!(!granular_forces_merge(true, false, 0, true));
        assert!(!granular_forces_merge(false, true, 0, true));
        assert!(!granular_forces_merge(true, true, 0, false));
    }
}
