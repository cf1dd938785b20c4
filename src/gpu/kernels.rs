//! The kernels by name: [`KernelId`], one per WGSL entry point, with how each is bound
//! and dispatched (once, per bond chunk, per row chunk, by step parity); and their
//! compilation into pipelines and bind groups, checked against the device's limits
//! first so that a kernel needing more is a named refusal, not a wgpu error.

use std::collections::BTreeMap;

use super::bindings::{CHUNK_BINDINGS, ROW_BINDINGS};
use super::buffers::Buffers;
use super::context::GpuContext;
use super::options::checked_shaders;
use super::shaders::{self, ShaderConfig, WORKGROUP_SIZE};
use crate::error::{Error, Result};

/// A compute kernel (a WGSL entry point of `shaders/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelId {
    /// `step_begin`.
    StepBegin,
    /// `integrate_predict`.
    IntegratePredict,
    /// `commit_pos`.
    CommitPos,
    /// `bond_forces`.
    BondForces,
    /// `bond_forces_no_energy`.
    BondForcesNoEnergy,
    /// `bond_gather`.
    BondGather,
    /// `bond_unload`.
    BondUnload,
    /// `particle_forces`.
    ParticleForces,
    /// `particle_forces_predict`.
    ParticleForcesPredict,
    /// `granular_forces`.
    GranularForces,
    /// `granular_forces_no_energy`.
    GranularForcesNoEnergy,
    /// `mesh_place`.
    MeshPlace,
    /// `grid_gate`.
    GridGate,
    /// `grid_clear`.
    GridClear,
    /// `grid_insert`.
    GridInsert,
    /// `neighbor_build`.
    NeighborBuild,
    /// `grid_finish`.
    GridFinish,
    /// `reduce_partials`.
    ReducePartials,
    /// `reduce_bond_partials`.
    ReduceBondPartials,
    /// `reduce_final`.
    ReduceFinal,
    /// `clump_predict`.
    ClumpPredict,
    /// `clump_pose`.
    ClumpPose,
    /// `clump_gather`.
    ClumpGather,
    /// `hard_begin`.
    HardBegin,
    /// `hard_free`.
    HardFree,
    /// `hard_skin`.
    HardSkin,
    /// `hard_count`.
    HardCount,
    /// `hard_scan_local`.
    HardScanLocal,
    /// `hard_scan_top`.
    HardScanTop,
    /// `hard_scan_add`.
    HardScanAdd,
    /// `hard_build`.
    HardBuild,
    /// `hard_incidence`.
    HardIncidence,
    /// `hard_color_round`.
    HardColorRound,
    /// `hard_color_gate`.
    HardColorGate,
    /// `hard_color_rest`.
    HardColorRest,
    /// `hard_color_count`.
    HardColorCount,
    /// `hard_color_finish`.
    HardColorFinish,
    /// `hard_color_place`.
    HardColorPlace,
    /// `hard_gather`.
    HardGather,
    /// `hard_update`.
    HardUpdate,
    /// `hard_color_sweep`.
    HardColorSweep,
    /// `hard_check`.
    HardCheck,
    /// `hard_solve_end`.
    HardSolveEnd,
    /// `hard_advance`.
    HardAdvance,
    /// `hard_advance_clumps`.
    HardAdvanceClumps,
    /// `hard_follow`.
    HardFollow,
    /// `hard_save`.
    HardSave,
    /// `hard_row`.
    HardRow,
}

impl KernelId {
    /// Every kernel.
    pub const ALL: [KernelId; 48] = [
        Self::StepBegin,
        Self::IntegratePredict,
        Self::CommitPos,
        Self::BondForces,
        Self::BondForcesNoEnergy,
        Self::BondGather,
        Self::BondUnload,
        Self::ParticleForces,
        Self::ParticleForcesPredict,
        Self::GranularForces,
        Self::GranularForcesNoEnergy,
        Self::MeshPlace,
        Self::GridGate,
        Self::GridClear,
        Self::GridInsert,
        Self::NeighborBuild,
        Self::GridFinish,
        Self::ReducePartials,
        Self::ReduceBondPartials,
        Self::ReduceFinal,
        Self::ClumpPredict,
        Self::ClumpPose,
        Self::ClumpGather,
        Self::HardBegin,
        Self::HardFree,
        Self::HardSkin,
        Self::HardCount,
        Self::HardScanLocal,
        Self::HardScanTop,
        Self::HardScanAdd,
        Self::HardBuild,
        Self::HardIncidence,
        Self::HardColorRound,
        Self::HardColorGate,
        Self::HardColorRest,
        Self::HardColorCount,
        Self::HardColorFinish,
        Self::HardColorPlace,
        Self::HardGather,
        Self::HardUpdate,
        Self::HardColorSweep,
        Self::HardCheck,
        Self::HardSolveEnd,
        Self::HardAdvance,
        Self::HardAdvanceClumps,
        Self::HardFollow,
        Self::HardSave,
        Self::HardRow,
    ];

    /// Its WGSL entry point.
    pub fn entry_point(self) -> &'static str {
        match self {
            Self::StepBegin => "step_begin",
            Self::IntegratePredict => "integrate_predict",
            Self::CommitPos => "commit_pos",
            Self::BondForces => "bond_forces",
            Self::BondForcesNoEnergy => "bond_forces_no_energy",
            Self::BondGather => "bond_gather",
            Self::BondUnload => "bond_unload",
            Self::ParticleForces => "particle_forces",
            Self::ParticleForcesPredict => "particle_forces_predict",
            Self::GranularForces => "granular_forces",
            Self::GranularForcesNoEnergy => "granular_forces_no_energy",
            Self::MeshPlace => "mesh_place",
            Self::GridGate => "grid_gate",
            Self::GridClear => "grid_clear",
            Self::GridInsert => "grid_insert",
            Self::NeighborBuild => "neighbor_build",
            Self::GridFinish => "grid_finish",
            Self::ReducePartials => "reduce_partials",
            Self::ReduceBondPartials => "reduce_bond_partials",
            Self::ReduceFinal => "reduce_final",
            Self::ClumpPredict => "clump_predict",
            Self::ClumpPose => "clump_pose",
            Self::ClumpGather => "clump_gather",
            Self::HardBegin => "hard_begin",
            Self::HardFree => "hard_free",
            Self::HardSkin => "hard_skin",
            Self::HardCount => "hard_count",
            Self::HardScanLocal => "hard_scan_local",
            Self::HardScanTop => "hard_scan_top",
            Self::HardScanAdd => "hard_scan_add",
            Self::HardBuild => "hard_build",
            Self::HardIncidence => "hard_incidence",
            Self::HardColorRound => "hard_color_round",
            Self::HardColorGate => "hard_color_gate",
            Self::HardColorRest => "hard_color_rest",
            Self::HardColorCount => "hard_color_count",
            Self::HardColorFinish => "hard_color_finish",
            Self::HardColorPlace => "hard_color_place",
            Self::HardGather => "hard_gather",
            Self::HardUpdate => "hard_update",
            Self::HardColorSweep => "hard_color_sweep",
            Self::HardCheck => "hard_check",
            Self::HardSolveEnd => "hard_solve_end",
            Self::HardAdvance => "hard_advance",
            Self::HardAdvanceClumps => "hard_advance_clumps",
            Self::HardFollow => "hard_follow",
            Self::HardSave => "hard_save",
            Self::HardRow => "hard_row",
        }
    }

    /// The kernel of WGSL entry point `name`.
    pub fn from_entry_point(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.entry_point() == name)
    }

    /// A kernel of clump scenes only (`shaders/clumps.wgsl`), compiled only for them.
    pub fn clumps_only(self) -> bool {
        matches!(
            self,
            Self::ClumpPredict | Self::ClumpPose | Self::ClumpGather
        )
    }

    /// A kernel of hard-contact scenes only (`shaders/hard.wgsl`), compiled only for
    /// them.
    pub fn hard_only(self) -> bool {
        self.entry_point().starts_with("hard_")
    }

    /// Bound once per colour of the colored solver (its `hard_color` uniform).
    pub fn by_color(self) -> bool {
        self == Self::HardColorSweep
    }

    /// Bound and dispatched once per bond chunk.
    pub fn bond_chunked(self) -> bool {
        matches!(
            self,
            Self::BondForces
                | Self::BondForcesNoEnergy
                | Self::BondGather
                | Self::BondUnload
                | Self::ReduceBondPartials
        )
    }

    /// Bound and dispatched once per row chunk: the only kernels that touch the row
    /// buffers. Each reads and writes its own particle's rows only (no kernel reads a
    /// partner's neighbour or history row: both sides of a contact keep their own copy
    /// of its spring), so a chunk needs no other chunk's rows bound.
    pub fn row_chunked(self) -> bool {
        matches!(
            self,
            Self::IntegratePredict
                | Self::NeighborBuild
                | Self::GranularForces
                | Self::GranularForcesNoEnergy
                | Self::ParticleForces
                | Self::ParticleForcesPredict
                | Self::HardCount
                | Self::HardBuild
                | Self::HardIncidence
        )
    }

    /// Row-chunked and also gathering (or computing) the last bond chunk's results: it
    /// gets that chunk's buffers in every row chunk's bind group.
    pub fn last_bond_chunk(self) -> bool {
        matches!(self, Self::ParticleForces | Self::ParticleForcesPredict)
    }

    /// Row-chunked and using the two copies of the contact history, the wall springs
    /// and the motion records by step parity: one set of bind groups per parity, whose
    /// `rows` uniform places the copy written at that parity at its `*_new` offsets.
    pub fn by_parity(self) -> bool {
        matches!(
            self,
            Self::GranularForces
                | Self::GranularForcesNoEnergy
                | Self::ParticleForcesPredict
                | Self::IntegratePredict
        )
    }
}

/// A compiled kernel: its pipeline, bind group and what it is dispatched over.
#[derive(Debug)]
pub(super) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    /// One bind group, or one per bond chunk for [`KernelId::bond_chunked`] kernels, or
    /// one per row chunk for [`KernelId::row_chunked`] ones (two sets, even steps' then
    /// odd steps', for [`KernelId::by_parity`] ones).
    pub bind_groups: Vec<wgpu::BindGroup>,
}

/// Validates the WGSL text `source` of `file` against the device's limits (a named
/// refusal rather than wgpu's validation error) and compiles a pipeline per entry
/// point, in the file's order, with the bindings each uses.
pub(super) fn compile_file(
    ctx: &GpuContext,
    file: &shaders::KernelFile,
    source: String,
    precision: crate::model::Precision,
    device_limits: &wgpu::Limits,
) -> Result<Vec<(wgpu::ComputePipeline, Vec<u32>)>> {
    let device = &ctx.device;
    let (module_ir, info) = shaders::validate(&source, precision)
        .map_err(|e| Error::Backend(format!("shader {}: {e}", file.name)))?;
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
            // which are the sizes of the buffers allocated (n, bonds, buckets ×
            // capacity, rows of max_neighbors + 1, the sections of `Sections`); the
            // GPU tests run the same kernels with runtime checks on
            // (VARIDEM_CHECKED_SHADERS=1 in .ci/run).
            unsafe {
                device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        }
    })?;
    let mut out = Vec::with_capacity(file.entry_points.len());
    for &ep in file.entry_points {
        let used = shaders::used_bindings(&module_ir, &info, ep)
            .ok_or_else(|| Error::Backend(format!("entry point {ep} missing in {}", file.name)))?;
        let pipeline = ctx.scoped(&format!("creating the pipeline of kernel {ep}"), || {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(ep),
                layout: None,
                module: &module,
                entry_point: Some(ep),
                // No zero-fill of workgroup memory: only reduce.wgsl and hard.wgsl have any
                // (`scratch`), and each invocation writes its row before the first
                // barrier (tests/gpu_shaders.rs checks no other file declares any).
                // On OpenGL naga writes the fill as one invocation storing all 16
                // KiB, which llvmpipe compiles very slowly (the container's first 100
                // steps: 130 s with a cold shader cache, 8 s without the fill).
                compilation_options: wgpu::PipelineCompilationOptions {
                    zero_initialize_workgroup_memory: false,
                    ..Default::default()
                },
                cache: None,
            })
        })?;
        out.push((pipeline, used));
    }
    Ok(out)
}

/// Compiles every kernel of `shaders/` for `config` and binds it to `buffers`. The
/// workgroup memory, invocations and storage buffers each kernel needs (read from the
/// shader through naga) are checked against the device's limits first:
/// [`Error::DeviceLimit`] names the kernel and the limit.
pub(super) fn compile(
    ctx: &GpuContext,
    config: &ShaderConfig,
    buffers: &Buffers,
) -> Result<BTreeMap<KernelId, Kernel>> {
    let device = &ctx.device;
    let precision = config.precision;
    let mut kernels = BTreeMap::new();
    let device_limits = ctx.limits();
    let clumps = config.sections.bodies > 0;
    let hard = config.hard.capacity > 0;
    for file in shaders::KERNEL_FILES {
        // The clump kernels are compiled for clump scenes only (a pipeline fewer to
        // build for every other scene).
        let clump_file = file
            .entry_points
            .iter()
            .any(|ep| KernelId::from_entry_point(ep).is_some_and(KernelId::clumps_only));
        if clump_file && !clumps {
            continue;
        }
        let hard_file = file
            .entry_points
            .iter()
            .any(|ep| KernelId::from_entry_point(ep).is_some_and(KernelId::hard_only));
        if hard_file && !hard {
            continue;
        }
        let source = shaders::compose(file.source, config);
        let cached = ctx
            .pipelines
            .lock()
            .ok()
            .and_then(|c| c.get(&source).cloned());
        let compiled = match cached {
            Some(c) => c,
            None => {
                let c = compile_file(ctx, &file, source.clone(), precision, &device_limits)?;
                if let Ok(mut cache) = ctx.pipelines.lock() {
                    cache.insert(source, c.clone());
                }
                c
            }
        };
        for (&ep, (pipeline, used)) in file.entry_points.iter().zip(compiled) {
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
            let group =
                |bond: Option<&Vec<wgpu::Buffer>>, row: Option<usize>, odd: bool, color: usize| {
                    let entries: Vec<wgpu::BindGroupEntry> = used
                        .iter()
                        .map(|&b| {
                            let in_bond = CHUNK_BINDINGS.iter().position(|&x| x == b);
                            let in_row = ROW_BINDINGS.iter().position(|&x| x == b);
                            let buffer = match (bond, in_bond, row, in_row) {
                                _ if b == super::bind::HARD_COLOR => &buffers.hard_colors[color],
                                (Some(c), Some(k), _, _) => &c[k],
                                (_, _, Some(r), Some(_)) if b == super::bind::ROWS => {
                                    &buffers.row_uniforms[r][usize::from(odd)]
                                }
                                (_, _, Some(r), Some(k)) => &buffers.row_chunks[r][k],
                                _ => &buffers.shared[b as usize],
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
                buffers.bond_chunks.last()
            } else {
                None
            };
            let parities: &[bool] = if id.by_parity() {
                &[false, true]
            } else {
                &[false]
            };
            let row_count = buffers.row_chunks.len();
            let bind_groups = ctx.scoped(&format!("binding the buffers of kernel {ep}"), || {
                if id.bond_chunked() {
                    buffers
                        .bond_chunks
                        .iter()
                        .map(|c| group(Some(c), None, false, 0))
                        .collect()
                } else if row_chunked {
                    parities
                        .iter()
                        .flat_map(|&odd| (0..row_count).map(move |r| (odd, r)))
                        .map(|(odd, r)| group(last_bond, Some(r), odd, 0))
                        .collect()
                } else if id.by_color() {
                    (0..buffers.hard_colors.len())
                        .map(|k| group(None, None, false, k))
                        .collect()
                } else {
                    vec![group(None, None, false, 0)]
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
    // Every dispatch indexes this map: a kernel no shader file defines is an error here,
    // not a panic at its first dispatch.
    if let Some(missing) = KernelId::ALL.into_iter().find(|k| {
        !kernels.contains_key(k) && (clumps || !k.clumps_only()) && (hard || !k.hard_only())
    }) {
        return Err(Error::Backend(format!(
            "no shader file defines kernel {}",
            missing.entry_point()
        )));
    }
    Ok(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shaders::KERNEL_FILES;

    /// Every entry point of every kernel file has its id, and every id its entry point.
    #[test]
    fn ids_and_entry_points_correspond() {
        let eps: Vec<&str> = KERNEL_FILES
            .iter()
            .flat_map(|f| f.entry_points.iter().copied())
            .collect();
        assert_eq!(eps.len(), KernelId::ALL.len());
        for ep in &eps {
            let k = KernelId::from_entry_point(ep).unwrap_or_else(|| panic!("{ep}"));
            assert_eq!(k.entry_point(), *ep);
        }
        for k in KernelId::ALL {
            assert!(!(k.bond_chunked() && k.row_chunked()), "{k:?}");
            assert!(!k.last_bond_chunk() || k.row_chunked(), "{k:?}");
            assert!(!k.by_parity() || k.row_chunked(), "{k:?}");
        }
    }
}
