//! Which backend runs, in one place: the GPU options of a scene, the choice between
//! the CPU and GPU backends (`--backend auto|cpu|gpu`), and the fallback to the CPU with
//! a warning when the GPU is not available, for a new run ([`make_backend`]) and for
//! the resume of a checkpoint ([`resume_backend`]).

use crate::backend::{Backend, BackendKind};
use crate::checkpoint::Checkpoint;
use crate::cpu::CpuBackend;
use crate::error::{Error, Result};
use crate::gpu::context::{list_adapters, AdapterSummary, ADAPTER_ENV};
use crate::gpu::{GpuBackend, GpuOptions, PathSwitches, Precision};
use crate::model::Scene;

/// The GPU options for `scene`: `precision` (the command line's) overrides the scene's
/// `[simulation] precision`, which overrides the default (`f32`); the neighbour-list
/// and bucket capacities are the scene's; `adapter` names the adapter (`None`:
/// `$VARIDEM_ADAPTER` or the most capable one).
pub fn gpu_options(
    scene: &Scene,
    precision: Option<Precision>,
    adapter: Option<&str>,
) -> GpuOptions {
    let sim = &scene.simulation;
    GpuOptions {
        adapter: adapter.map(str::to_owned),
        precision: precision.or(sim.precision).unwrap_or_default(),
        max_neighbors: sim.gpu_max_neighbors,
        bucket_capacity: sim.gpu_bucket_capacity,
        max_chunk_bonds: None,
        max_chunk_particles: None,
        max_binding_bytes: None,
        fused: None,
        merge_contacts: None,
        inline_bonds: None,
        compact_bonds: None,
        shuffle_storage: None,
        sort_every: sim.sort_every,
        compact_storage: None,
    }
}

/// Builds the backend `kind` for `scene`; `gpu` configures the GPU backend (see
/// [`gpu_options`]) and is ignored by the CPU backend.
///
/// * [`BackendKind::Cpu`] never touches the GPU.
/// * [`BackendKind::Gpu`] builds the GPU backend; if it is not available on this
///   machine (no adapter, no adapter matching the requested name, no `f64` support for
///   `f64` kernels, a device that cannot be opened or is too small), it falls back to
///   the CPU with a warning, through [`fallback_to_cpu`].
/// * [`BackendKind::Auto`] does the same, except that when no adapter is named
///   (`gpu.adapter`, `$VARIDEM_ADAPTER`) and every adapter is a software rasteriser
///   (lavapipe/llvmpipe, device type `Cpu`) it runs on the CPU backend, which is faster
///   and `f64`, without trying the GPU.
///
/// Any other error (an invalid scene, say) is returned.
pub fn make_backend(
    kind: BackendKind,
    scene: &Scene,
    gpu: &GpuOptions,
) -> Result<Box<dyn Backend>> {
    select_backend(kind, gpu, || cpu_backend(scene), || gpu_backend(scene, gpu))
}

/// The choice of [`make_backend`] with the backends built by `cpu` and `gpu`: the
/// resume of a checkpoint ([`resume_backend`]) builds them from a
/// snapshot instead of a scene.
pub fn select_backend(
    kind: BackendKind,
    gpu: &GpuOptions,
    cpu: impl Fn() -> Result<Box<dyn Backend>>,
    make_gpu: impl FnOnce() -> Result<Box<dyn Backend>>,
) -> Result<Box<dyn Backend>> {
    match kind {
        BackendKind::Cpu => cpu(),
        BackendKind::Gpu => fallback_with("gpu", make_gpu(), cpu),
        BackendKind::Auto => {
            let named = gpu.adapter.is_some() || std::env::var_os(ADAPTER_ENV).is_some();
            if !named {
                let adapters = list_adapters();
                if !adapters.is_empty() && adapters.iter().all(AdapterSummary::is_software) {
                    let names: Vec<&str> = adapters.iter().map(|a| a.name.as_str()).collect();
                    log::info!(
                        "only software GPU adapters ({}): running on the CPU backend (--backend gpu runs on them anyway)",
                        names.join(", ")
                    );
                    return cpu();
                }
            }
            fallback_with("gpu", make_gpu(), cpu)
        }
    }
}

fn cpu_backend(scene: &Scene) -> Result<Box<dyn Backend>> {
    Ok(Box::new(CpuBackend::new(scene)?))
}

fn gpu_backend(scene: &Scene, gpu: &GpuOptions) -> Result<Box<dyn Backend>> {
    Ok(Box::new(GpuBackend::new(scene, gpu)?))
}

/// Returns the backend `attempt` made for `requested` or, if that backend is not
/// available on this machine ([`Error::NoAdapter`], [`Error::Backend`],
/// [`Error::DeviceTooSmall`], [`Error::DeviceLimit`], [`Error::Gpu`]), logs a warning and returns the CPU backend instead.
/// Other errors (an invalid scene, say) are returned as they are.
pub fn fallback_to_cpu(
    requested: &str,
    attempt: Result<Box<dyn Backend>>,
    scene: &Scene,
) -> Result<Box<dyn Backend>> {
    fallback_with(requested, attempt, || cpu_backend(scene))
}

/// [`fallback_to_cpu`] with the CPU backend built by `cpu`.
fn fallback_with(
    requested: &str,
    attempt: Result<Box<dyn Backend>>,
    cpu: impl FnOnce() -> Result<Box<dyn Backend>>,
) -> Result<Box<dyn Backend>> {
    match attempt {
        Err(Error::NoAdapter(why)) => {
            log::warn!("no GPU adapter ({why}): falling back to the CPU backend");
            cpu()
        }
        Err(
            e @ (Error::Backend(_)
            | Error::DeviceTooSmall(_)
            | Error::DeviceLimit { .. }
            | Error::Gpu { .. }),
        ) => {
            log::warn!(
                "the {requested} backend is not available ({e}): falling back to the CPU backend"
            );
            cpu()
        }
        other => other,
    }
}

/// Builds the backend that resumes `checkpoint`:
///
/// * `kind` (default: the backend that wrote the checkpoint) as in
///   [`make_backend`]: a GPU that is not available falls back to the CPU
///   with a warning;
/// * `precision` (default: the checkpoint's, for a GPU checkpoint; else the scene's),
///   `adapter` and the kernel-path switches `paths` configure the GPU backend.
///
/// The backend is restored from the snapshot ([`CpuBackend::from_snapshot`],
/// [`GpuBackend::from_snapshot`]). If it is not the one that wrote the checkpoint
/// (another backend, adapter or precision), a warning says the run goes on but not bit
/// for bit.
pub fn resume_backend(
    checkpoint: &Checkpoint,
    kind: Option<BackendKind>,
    precision: Option<Precision>,
    adapter: Option<&str>,
    paths: &PathSwitches,
) -> Result<Box<dyn Backend>> {
    let state = &checkpoint.state;
    let scene = &checkpoint.scene;
    let kind = kind.unwrap_or(state.backend);
    let recorded = (state.backend == BackendKind::Gpu).then_some(state.precision);
    let mut options = gpu_options(scene, precision.or(recorded), adapter);
    paths.apply(&mut options);
    let cpu = || -> Result<Box<dyn Backend>> {
        let sort = scene.simulation.sort_every;
        let mut b = CpuBackend::from_snapshot_sorted(scene.model.clone(), state, sort)?;
        b.set_trapezoidal(scene.simulation.trapezoidal);
        Ok(Box::new(b))
    };
    let gpu = || -> Result<Box<dyn Backend>> {
        Ok(Box::new(GpuBackend::from_snapshot(
            scene.model.clone(),
            state,
            &options,
        )?))
    };
    let backend = select_backend(kind, &options, cpu, gpu)?;
    if backend.name() != state.backend_name {
        log::warn!(
            "the checkpoint was written by the {} backend and resumes on the {} backend: the run goes on from the same state, but not bit for bit as it would have on the first",
            state.backend_name,
            backend.name()
        );
    }
    Ok(backend)
}
