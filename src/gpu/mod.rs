//! The GPU backend: wgpu host code driving the WGSL kernels in `shaders/`.
//!
//! One step is a fixed sequence of dispatches in one compute pass, mirroring the CPU
//! reference kernel for kernel: `step_begin`, `integrate_predict`, (`grid_gate`, then
//! `grid_clear`, `grid_insert`, `neighbor_build` by indirect dispatch with zero
//! workgroups unless a particle moved more than skin/2 relative to particle 0, and
//! `grid_finish`), `granular_forces`, `bond_forces` (with `bond_gather` for all but the
//! last bond chunk), `particle_forces`, which ends with the correct half of the
//! integrator. Many steps are encoded per submission; nothing is read back between
//! output steps. Energies and momenta are reduced on the GPU (deterministic tree) only
//! when asked for. No float atomics anywhere: results are bitwise reproducible on one
//! adapter.
//!
//! The modules, in the order a backend is made and run:
//! [`context`] (adapter and device, errors as values) and [`limits`] (the portable
//! minimum) → `options` (what the caller chooses, and the kernel paths) → [`plan`]
//! (sizes, chunks and sections, without a device) → `contents` (every buffer's initial
//! bytes) → `buffers` (device buffers, read-back and upload) → [`kernels`] (pipelines
//! and bind groups by [`kernels::KernelId`]) → `encode` (the step sequence) →
//! `backend` (the [`Backend`](crate::backend::Backend) implementation). The Rust↔WGSL
//! contract lives in [`bindings`], [`contract`], [`layout`] and [`shaders`].

mod backend;
pub mod bindings;
mod breakage;
mod buffers;
mod clumps;
mod contents;
pub mod context;
pub mod contract;
mod encode;
pub mod hard;
mod insert;
pub mod kernels;
pub mod layout;
pub mod limits;
mod options;
pub mod placement;
pub mod plan;
mod profile;
pub mod shaders;
pub mod sort;
mod storage;
mod walls;

use glam::DVec3;
use std::collections::BTreeMap;

use crate::backend::{BackendKind, StateSnapshot};
use crate::error::{Error, Result};
use crate::integrators::bodies::Bodies;
use crate::integrators::IntegratorKind;
use crate::model::{ContactLaw, Model, Scene};
use bindings as bind;
use buffers::Buffers;
use contents::{Contents, Tables};
use context::GpuContext;
use contract::PARAM_FIRST;
use kernels::{Kernel, KernelId};
use layout::{CompactBonds, Params, Real};
use plan::{Plan, Sections};
use shaders::ShaderConfig;

pub use crate::model::Precision;
pub use options::{
    GpuOptions, PathSwitches, CHECKED_ENV, DEFAULT_MAX_NEIGHBORS, INLINE_ENV, MERGE_ENV,
    UNFUSED_ENV,
};

/// Status word indices, as `usize` (the contract's [`contract::STATUS_STEP`] ...).
const STATUS_STEP: usize = contract::STATUS_STEP as usize;
const STATUS_ERROR: usize = contract::STATUS_ERROR as usize;
const STATUS_REBUILD: usize = contract::STATUS_REBUILD as usize;
const STATUS_BUILDS: usize = contract::STATUS_BUILDS as usize;
const STATUS_MAX_NEIGHBORS: usize = contract::STATUS_MAX_NEIGHBORS as usize;
const STATUS_AHEAD: usize = contract::STATUS_AHEAD as usize;
const STATUS_FIRST_INDEX: usize = contract::STATUS_FIRST_INDEX as usize;
const STATUS_WORDS: usize = contract::STATUS_WORDS as usize;

/// The device coordinates of a restored `f32` state: its origin and its positions
/// relative to it (3 per particle; empty when the origin is zero).
#[derive(Clone, Copy, Debug)]
struct Placement<'a> {
    origin: DVec3,
    device_position: &'a [f32],
}

/// The GPU simulation, generic over the kernel precision.
#[derive(Debug)]
pub struct GpuBackend {
    ctx: GpuContext,
    precision: Precision,
    /// The model in absolute coordinates (the device's are relative to `origin`).
    model: Model,
    /// Where the device's coordinates are centred ([`placement::device_origin`]): zero
    /// in `f64`.
    origin: DVec3,
    integrator: IntegratorKind,
    dt: f64,
    buffers: Vec<wgpu::Buffer>,
    /// Per bond chunk, the buffers of [`bindings::CHUNK_BINDINGS`] in that order.
    chunk_buffers: Vec<Vec<wgpu::Buffer>>,
    /// Per row chunk, the buffers of [`bindings::ROW_BINDINGS`] but the uniform, in
    /// that order.
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
    /// JKR cohesion ([`crate::model::Model::jkr`]): the w of each wall spring's vec4
    /// is the contact's held flag.
    jkr: bool,
    /// Steps may end in `particle_forces_predict` (the next step's predict fused into
    /// this step's force pass): not when particles can be removed at the domain
    /// boundary, whose flag partners read in the same pass.
    fuse: bool,
    /// Fused steps run the contact pass in `particle_forces_predict` (`Paths::merged`).
    merged: bool,
    /// Fused steps predict positions in place, so the next step commits none
    /// (`Paths::direct`).
    direct: bool,
    /// Fused steps compute the bond terms in `particle_forces_predict`
    /// (`Paths::inline`).
    inline: bool,
    /// Bonds are uploaded as compact records ([`CompactBonds`]).
    compact: bool,
    /// Contact-history slots per particle (0 without the Hertz law).
    max_contacts: u32,
    max_neighbors: u32,
    steps: u64,
    /// The clumps (issue 24): their types and, as last read back, their state; their
    /// spheres are the particles from `sections.free` on. `None` without clumps.
    bodies: Option<Bodies>,
    /// Hard contacts (`shaders/hard.wgsl`): `None` under the other laws.
    hard: Option<hard::HardGpu>,
    /// Particle insertion (`[[inserter]]`); `None` without inserters.
    insertion: Option<crate::neighbor::Insertion>,
    /// The force evaluations record wall loads (Hertz law with walls, `Plan::wall_loads`).
    records_loads: bool,
    /// Feature-keyed mesh slots per particle in `hist` (0 without meshes).
    mesh_slots: u32,
    /// EPSD rolling springs are kept (`Plan::roll_history`), with the vec4 of wall
    /// loads per particle (0 without loads) that place the walls' rolling springs in
    /// `row_vec` after them.
    roll_history: (bool, usize),
    /// Vec4 per wall-load record (`plan::load_vec4`: 3 with rolling resistance).
    load_vec4: usize,
    /// The step whose evaluation was asked to record them (`status[STATUS_LOADS]`).
    loads_step: Option<u64>,
    /// A restored Hertz state's loads and its step: the set-up evaluation of a restore
    /// is not the one that produced the state (the forces are restored as stored, and
    /// so are these).
    restored_loads: Option<(u64, Vec<[DVec3; 2]>)>,
    /// The timestamp queries of a profile being recorded
    /// ([`Backend::kernel_profile`](crate::backend::Backend::kernel_profile)).
    profiler: Option<profile::Profiler>,
    /// `varidem check`'s recommended time step for the scene at `t = 0`
    /// ([`time_step_advice`](crate::physics::granular::time_step_advice)), named by
    /// [`Fault::Overlap`](crate::error::Fault::Overlap).
    dt_advice: Option<f64>,
    /// Which id each storage slot holds (issue 44; `storage`): the model above is in
    /// id order, the device in this one.
    layout: crate::model::Layout,
    /// Compacted storage (open systems; `storage`): `None` when every id is stored.
    compaction: Option<storage::Compaction>,
    /// Bond breakage (issue 47): the breaks read back so far; `None` when no bond can
    /// break.
    breakage: Option<breakage::Breakage>,
    /// Sorting storage during the run (issue 44, `sort`): `None` when the run does not
    /// sort (`sort_every` 0, hard contacts, nothing to move).
    sorting: Option<sort::Sorting>,
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
        Self::set_up(ctx, model, integrator, dt, options, 0, None, 0)
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
        model: Model,
        snapshot: &StateSnapshot,
        options: &GpuOptions,
    ) -> Result<Self> {
        Self::restore_with(ctx, model, snapshot, options, 0)
    }

    /// [`GpuBackend::restore`] into at least `slots` storage slots where storage is
    /// compacted.
    fn restore_with(
        ctx: GpuContext,
        model: Model,
        snapshot: &StateSnapshot,
        options: &GpuOptions,
        slots: usize,
    ) -> Result<Self> {
        let mut backend = Self::set_up(
            ctx,
            model,
            snapshot.integrator,
            snapshot.dt,
            options,
            snapshot.step,
            Some(snapshot),
            slots,
        )?;
        match &snapshot.contacts {
            Some(c) => backend.restore_contacts(c)?,
            None if backend.granular => {
                return Err(Error::Snapshot(
                    "the snapshot has no contact state, but the scene has granular contacts".into(),
                ))
            }
            None => {}
        }
        backend.restore_bodies(snapshot)?;
        backend.restore_hard_impulses(&snapshot.hard_impulses)?;
        Ok(backend)
    }

    /// Checks the adapter supports `options.precision` and builds the backend at step
    /// `step`, in the particles' state of `snapshot` when restoring one (with its Kahan
    /// terms in `f32` and, for an `f32` GPU state, its device coordinates), in at least
    /// `slots` storage slots where storage is compacted.
    #[expect(
        clippy::too_many_arguments,
        reason = "a restored state and its storage beside the run's settings"
    )]
    fn set_up(
        ctx: GpuContext,
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        options: &GpuOptions,
        step: u64,
        snapshot: Option<&StateSnapshot>,
        slots: usize,
    ) -> Result<Self> {
        let mut model = model;
        // Compacted storage sets up again from the scene's model (`restore_storage`).
        let compacting = options.compact_storage != Some(false);
        let scene = (compacting && crate::model::layout::gpu_compacts(&model, integrator))
            .then(|| model.clone());
        // From the scene as `varidem check` reads it: before the clumps are expanded
        // and a snapshot's state is applied.
        let dt_advice = crate::physics::granular::time_step_advice(&model).map(|a| a.dt_max);
        let mut bodies = if model.clumps.is_empty() {
            None
        } else {
            if model.domain.is_some_and(|d| d.remove) {
                return Err(Error::Backend(
                    "[domain] on_exit = \"remove\" is not supported for clumps yet; use \"error\""
                        .into(),
                ));
            }
            Some(Bodies::expand(&mut model))
        };
        let mut kahan: &[f32] = &[];
        let mut placement = None;
        if let Some(snapshot) = snapshot {
            // The spheres of clumps are particles of the snapshot: expanded first.
            snapshot.apply_to(&mut model.particles)?;
            if bodies.is_none() && !snapshot.bodies.is_empty() {
                return Err(Error::Snapshot(format!(
                    "the snapshot has {} clumps but the scene has none",
                    snapshot.bodies.len()
                )));
            }
            if options.precision == Precision::F32 {
                kahan = snapshot.compensation.as_slice();
            }
            // An f32 GPU state goes back to the device coordinates it was taken in (its
            // origin, zero for format-2 checkpoints, and the relative positions as
            // stored).
            placement = (snapshot.backend == BackendKind::Gpu
                && snapshot.precision == Precision::F32
                && options.precision == Precision::F32)
                .then_some(Placement {
                    origin: snapshot.origin,
                    device_position: &snapshot.device_position,
                });
        }
        if options.precision == Precision::F64 && !ctx.has_f64() {
            return Err(Error::Backend(format!(
                "adapter {} has no SHADER_F64 support; use --precision f32",
                ctx.summary.name
            )));
        }
        match (integrator, model.contact.map(|c| c.law)) {
            (IntegratorKind::ImpulseVelocity, Some(ContactLaw::Hard(h))) => {
                hard::check_supported(&model, &h)?;
            }
            (IntegratorKind::ImpulseVelocity, _) | (_, Some(ContactLaw::Hard(_))) => {
                return Err(Error::Backend(
                    "hard contacts need the impulse-velocity integrator, and it needs them".into(),
                ));
            }
            _ => {}
        }
        if integrator == IntegratorKind::CampelloTrapezoidal {
            return Err(Error::Backend(
                "the campello-trapezoidal integrator (implicit, fixed-point iterations) runs on the CPU reference backend only; use --backend cpu".into(),
            ));
        }

        let insertion = crate::neighbor::Insertion::set_up(
            &mut model,
            dt,
            step,
            snapshot.map(|s| (s.inserted.as_slice(), s.removed.as_slice())),
        )
        .map_err(Error::Snapshot)?;
        if let Some(b) = &mut bodies {
            crate::neighbor::wake_bodies(insertion.as_ref(), b, &mut model);
        }
        let stored = scene
            .as_ref()
            .map(|_| storage::stored_ids(&model, insertion.as_ref(), step, slots));
        let start = u32::try_from(step).map_err(|_| {
            Error::Snapshot(format!(
                "step {step} does not fit the GPU backend's 32-bit step counter"
            ))
        })?;
        let ids = stored.as_ref().map(|(ids, _)| ids.as_slice());
        let broken = snapshot.map_or(&[][..], |s| s.broken.as_slice());
        let mut backend = match options.precision {
            Precision::F32 => Self::build::<f32>(
                ctx, model, integrator, dt, options, start, kahan, placement, dt_advice, ids,
                broken,
            ),
            Precision::F64 => Self::build::<f64>(
                ctx, model, integrator, dt, options, start, kahan, None, dt_advice, ids, broken,
            ),
        }?;
        backend.bodies = bodies;
        backend.insertion = insertion;
        if let (Some(scene), Some((_, slots))) = (scene, stored) {
            // The exit steps of the removed particles not stored stay on the host.
            let mut exit_steps = std::collections::BTreeMap::new();
            let mut archive = std::collections::BTreeMap::new();
            if let Some(s) = snapshot {
                let n = backend.n as usize;
                let ids = s.position.len();
                let f32_rows =
                    s.compensation.len() == 9 * ids && s.device_position.len() == 3 * ids;
                for (k, &i) in s.removed.iter().enumerate() {
                    if backend.layout.try_slot(i as usize, n).is_none() {
                        exit_steps.insert(i, s.exit_steps.get(k).copied().unwrap_or(s.step));
                        let j = i as usize;
                        if f32_rows && j < ids {
                            let mut kahan = [0.0f32; 9];
                            kahan.copy_from_slice(&s.compensation[9 * j..9 * j + 9]);
                            let mut device = [0.0f32; 3];
                            device.copy_from_slice(&s.device_position[3 * j..3 * j + 3]);
                            archive.insert(i, (kahan, device));
                        }
                    }
                }
            }
            backend.compaction = Some(storage::Compaction {
                scene,
                options: options.clone(),
                slots,
                exit_steps,
                restores: 0,
                archive,
            });
        }
        if let Some(s) = snapshot {
            backend.write_exit_steps(&s.removed, &s.exit_steps, s.step)?;
        }
        Ok(backend)
    }

    /// Uploads everything, compiles the kernels and evaluates the forces of the
    /// model's state. `start` is the initial step count; `kahan` the initial Kahan terms
    /// (used in `f32` when it has 9 per particle, zero otherwise); `placement` the
    /// device coordinates of a restored `f32` state; `dt_advice` `varidem check`'s
    /// recommended time step; `stored` the ids storage holds when it is compacted
    /// (ascending; `None`: every id).
    #[expect(
        clippy::too_many_arguments,
        reason = "a restored state's parts (step, Kahan terms, device coordinates) beside the run's"
    )]
    fn build<R: Real>(
        ctx: GpuContext,
        model: Model,
        integrator: IntegratorKind,
        dt: f64,
        options: &GpuOptions,
        start: u32,
        kahan: &[f32],
        placement: Option<Placement<'_>>,
        dt_advice: Option<f64>,
        stored: Option<&[u32]>,
        broken: &[crate::backend::BondBreak],
    ) -> Result<Self> {
        // The largest storage binding (a test hook may pretend it is smaller).
        let limits = ctx.device.limits();
        let max_bind = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(options.max_binding_bytes.unwrap_or(u64::MAX));
        // f32 coordinates relative to an origin near the scene (placement.rs); f64 keeps
        // absolute ones.
        let origin = match (&placement, std::mem::size_of::<R>()) {
            (Some(p), _) => p.origin,
            (None, 4) => placement::device_origin(&model.particles),
            (None, _) => DVec3::ZERO,
        };
        let mut device = placement::to_device(&model, origin);
        if let Some(p) = placement.filter(|p| p.device_position.len() == 3 * model.particles.len())
        {
            // The stored f32 coordinates, exactly (f32 → f64 → f32 is the identity).
            for (x, c) in device
                .particles
                .position
                .iter_mut()
                .zip(p.device_position.chunks(3))
            {
                *x = DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
            }
        }
        // The device's storage order (issue 44): the particles and bond ends in slots,
        // the Kahan terms (9 per particle) with them.
        let order = match stored {
            Some(ids) => Some(storage::compacted_order(&device, ids, options)),
            None => storage::set_up_order(&device, options),
        };
        let (layout, slot_kahan) = match order {
            Some(order) => {
                let layout = storage::store(&mut device, &order);
                let k = if kahan.len() == 9 * model.particles.len() {
                    layout.to_slots(kahan, 9)
                } else {
                    kahan.to_vec()
                };
                (layout, k)
            }
            None => (crate::model::Layout::identity(), kahan.to_vec()),
        };
        let kahan = slot_kahan.as_slice();
        let compact = if options.compact_bonds != Some(false) {
            CompactBonds::<R>::new(&device.bonds)
        } else {
            None
        };
        let tables = Tables::<R>::new(&device, compact.as_ref());
        let software = ctx.summary.is_software();
        // A run that sorts during the run stores the id tables from the start.
        let sortable = storage::sortable(&device);
        let sort_every = options
            .sort_every
            .unwrap_or(crate::model::DEFAULT_SORT_EVERY);
        let sorts = sort_every > 0 && sortable > 1;
        let plan = Plan::new::<R>(
            &device,
            options,
            max_bind,
            software,
            tables.counts(),
            (sorts || !layout.is_identity()).then_some(model.particles.len() as u32),
        )?;
        let sorting = sorts.then(|| sort::Sorting {
            every: sort_every,
            last: u64::from(start),
            sorts: 0,
            attempts: 0,
            set_up: !layout.is_identity(),
            seconds: 0.0,
            sortable,
            cell: storage::cell_edge(&device),
            slots: plan
                .sections
                .slot_sections(&plan.needs, std::mem::size_of::<R>() as u32),
            rows: plan.row_sections(std::mem::size_of::<R>() as u64),
            shuffle: options.shuffle_storage,
        });
        let contents = Contents::<R>::new(
            &device,
            &plan,
            &tables,
            compact.as_ref(),
            integrator,
            dt,
            start,
            kahan,
            &layout,
        );
        let total = contents
            .check_fit(&plan, max_bind, &ctx.summary.name)
            .map_err(|e| name_the_meshes(e, &model))?;
        log::debug!(
            "gpu buffers: {:.1} MiB; {} row chunk(s), {} bond chunk(s)",
            total as f64 / 1048576.0,
            plan.row_chunks.len(),
            plan.bond_chunks.len()
        );
        let problem = format!("{} particles, {} bonds", plan.n, plan.nb);
        let buffers = Buffers::create(&ctx, &contents, total, &problem)?;
        let precision = if std::mem::size_of::<R>() == 8 {
            Precision::F64
        } else {
            Precision::F32
        };
        if plan.hard.capacity > 0 && plan.row_chunks.len() > 1 {
            return Err(Error::DeviceTooSmall(format!(
                "{problem}: hard contacts on the GPU need every neighbour row in one storage binding ({} row chunks here)",
                plan.row_chunks.len()
            )));
        }
        let config = ShaderConfig {
            precision,
            compact_bonds: compact.is_some(),
            sections: plan.sections,
            hard: plan.hard,
        };
        let kernels = kernels::compile(&ctx, &config, &buffers)?;
        let hard_state = match model.contact.map(|c| c.law) {
            Some(ContactLaw::Hard(params)) => Some(hard::HardGpu {
                params,
                sections: plan.hard,
                rows: Vec::new(),
                colors: hard::FIRST_COLORS,
                sweeps: params.max_sweeps.min(hard::FIRST_SWEEPS),
                skin: model.contact.map_or(0.0, |c| c.skin),
                r_max: model.particles.max_radius(),
                mesh_headroom: (!model.meshes.is_empty()).then(|| hard::mesh_grid_headroom(&model)),
                dt,
            }),
            _ => None,
        };
        let mut backend = Self {
            ctx,
            precision,
            model,
            origin,
            integrator,
            dt,
            buffers: buffers.shared,
            chunk_buffers: buffers.bond_chunks,
            row_buffers: buffers.row_chunks,
            sections: plan.sections,
            rows: plan.row_chunks,
            kernels,
            n: plan.n,
            chunks: plan.bond_chunks,
            contact: plan.contact,
            granular: plan.granular,
            jkr: plan.needs.jkr,
            fuse: plan.paths.fuse,
            merged: plan.paths.merged,
            direct: plan.paths.direct,
            inline: plan.paths.inline,
            compact: compact.is_some(),
            max_contacts: plan.max_contacts,
            max_neighbors: plan.max_neighbors,
            steps: 0,
            bodies: None,
            hard: hard_state,
            insertion: None,
            records_loads: plan.wall_loads,
            mesh_slots: plan.mesh_slots,
            roll_history: (
                plan.roll_history,
                if plan.wall_loads {
                    plan::load_vec4(plan.needs.rolling) as usize * plan.load_stride as usize
                } else {
                    0
                },
            ),
            load_vec4: plan::load_vec4(plan.needs.rolling) as usize,
            loads_step: None,
            restored_loads: None,
            profiler: None,
            dt_advice,
            layout,
            compaction: None,
            breakage: None,
            sorting,
        };
        // A restored run's breaks, before the set-up evaluation, which unloads those
        // of its own step.
        if backend.model.breakable() {
            backend.breakage = Some(breakage::Breakage::new(backend.model.bonds.len()));
            backend.upload_breaks(broken)?;
        } else {
            crate::backend::check_breaks(&backend.model, broken)?;
        }
        backend.first_evaluation(u64::from(start), contents.params)?;
        Ok(backend)
    }

    /// The set-up evaluation: forces of the initial state (and the first neighbour
    /// list), with the parameters `params` (`PARAM_FIRST` set), which later
    /// evaluations clear: they follow a step, whose increments the contact springs take.
    fn first_evaluation<R: Real>(&mut self, start: u64, params: Params<R>) -> Result<()> {
        self.write_wall_poses(start);
        self.write_mesh_poses(start);
        self.record_loads_at(start);
        let mut encoder = self.encoder();
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("init"),
                timestamp_writes: None,
            });
            if self.hard.is_some() {
                self.encode_hard_first(&mut pass);
            } else {
                self.encode_forces(&mut pass, start, false);
            }
        }
        self.submit("the set-up force evaluation", encoder)?;
        let later = Params {
            flags: params.flags & !PARAM_FIRST,
            ..params
        };
        self.ctx.queue.write_buffer(
            &self.buffers[bind::PARAMS as usize],
            0,
            bytemuck::bytes_of(&later),
        );
        self.check_status()
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
}

/// A buffer too large for the adapter, in a scene with meshes: the error names each mesh
/// and its triangles, which share the packed mesh tables (issue 49: a mesh too large
/// for the GPU was not named).
fn name_the_meshes(e: Error, model: &Model) -> Error {
    match e {
        // The mesh tables ride in these two buffers (gpu/contents.rs).
        Error::DeviceTooSmall(message)
            if !model.meshes.is_empty()
                && ["'particle_flags'", "'tables'"]
                    .iter()
                    .any(|b| message.starts_with(&format!("buffer {b}"))) =>
        {
            let meshes: Vec<String> = model
                .meshes
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    format!(
                        "mesh[{k}] ({}) {} triangles",
                        m.name,
                        m.mesh.triangles.len()
                    )
                })
                .collect();
            Error::DeviceTooSmall(format!(
                "{message}; the meshes are packed in it: {} (use a coarser mesh, or --backend cpu)",
                meshes.join(", ")
            ))
        }
        other => other,
    }
}
