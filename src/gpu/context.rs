//! Device acquisition: adapter listing and choice (Vulkan, Metal and Direct3D 12 before
//! OpenGL; then discrete > integrated > virtual > software; overridable by name or
//! backend), and a device requested with the adapter's own limits (or varidem's portable
//! minimum, [`crate::gpu::limits`]) and features.
//!
//! wgpu's default handler panics on any error it reports outside an error scope; a
//! [`GpuContext`] installs its own, which records the first such error and the loss of
//! the device, and [`GpuContext::scoped`] and [`GpuContext::check`] turn them into
//! [`Error::Gpu`]. No wgpu error panics the process.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::gpu::limits::{shortfalls, LimitsRequest};

/// Environment variable naming the adapter to use (a case-insensitive substring of its
/// name), like `--adapter`.
pub const ADAPTER_ENV: &str = "VARIDEM_ADAPTER";

/// What `varidem info` shows about an adapter.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    /// Adapter name, with ` (OpenGL)` appended on wgpu's OpenGL backend: Mesa's
    /// llvmpipe has the same name through Vulkan (lavapipe) and OpenGL.
    pub name: String,
    /// Graphics API backend (`Vulkan`, `Metal`, `Dx12`, `OpenGL`).
    pub backend: String,
    /// Device type (discrete, integrated, virtual, CPU, other).
    pub device_type: wgpu::DeviceType,
    /// Driver and driver info.
    pub driver: String,
    /// `SHADER_F64` support.
    pub f64: bool,
    /// Largest storage-buffer binding (bytes).
    pub max_storage_binding: u64,
    /// Largest buffer (bytes).
    pub max_buffer: u64,
    /// Storage buffers per shader stage.
    pub max_storage_buffers_per_stage: u32,
    /// Invocations per workgroup.
    pub max_invocations_per_workgroup: u32,
    /// Workgroup memory (bytes).
    pub max_workgroup_storage: u32,
    /// The limits that fall short of varidem's portable minimum (empty: it meets it).
    pub shortfalls: Vec<String>,
}

impl AdapterSummary {
    /// Whether the adapter runs on the CPU (a software rasteriser such as lavapipe).
    pub fn is_software(&self) -> bool {
        self.device_type == wgpu::DeviceType::Cpu
    }
}

/// Preference of a graphics backend: the primary APIs (Vulkan, Metal, Direct3D 12) before
/// OpenGL, which wgpu supports as a secondary backend (no `f64`, fewer limits); an
/// OpenGL adapter is chosen only when no other is there, or when it is asked for.
fn backend_rank(b: wgpu::Backend) -> u32 {
    u32::from(b == wgpu::Backend::Gl)
}

fn rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn backend_name(b: wgpu::Backend) -> String {
    match b {
        wgpu::Backend::Gl => "OpenGL".to_string(),
        other => format!("{other:?}"),
    }
}

/// The name varidem shows and matches `--adapter` against (see [`AdapterSummary::name`]).
fn display_name(info: &wgpu::AdapterInfo) -> String {
    if info.backend == wgpu::Backend::Gl {
        format!("{} (OpenGL)", info.name)
    } else {
        info.name.clone()
    }
}

fn summary(a: &wgpu::Adapter) -> AdapterSummary {
    let info = a.get_info();
    let limits = a.limits();
    AdapterSummary {
        name: display_name(&info),
        backend: backend_name(info.backend),
        device_type: info.device_type,
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_string(),
        f64: a.features().contains(wgpu::Features::SHADER_F64),
        max_storage_binding: limits.max_storage_buffer_binding_size,
        max_buffer: limits.max_buffer_size,
        max_storage_buffers_per_stage: limits.max_storage_buffers_per_shader_stage,
        max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        max_workgroup_storage: limits.max_compute_workgroup_storage_size,
        shortfalls: shortfalls(&limits),
    }
}

/// Mesa's Vulkan drivers probe the Wayland window system when an instance is created
/// and print `error: XDG_RUNTIME_DIR is invalid or not set` without it (626 lines in
/// `cargo test`, two from Python's `varidem.adapters()`; issue 49). Compute needs no
/// window system, so before the first instance a missing or relative value is replaced
/// by the temporary directory, once per process. The binary does the same first thing
/// in `main`, single-threaded; a library user (tests, Python) gets it here, before any
/// driver reads the variable.
pub fn quiet_window_system_probe() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let valid = std::env::var_os("XDG_RUNTIME_DIR")
            .is_some_and(|d| std::path::Path::new(&d).is_absolute());
        if !valid {
            std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
        }
    });
}

/// The backends varidem lists and may use: the primary APIs (Vulkan, Metal, DX12) and
/// OpenGL (through EGL on Linux; headless, with no display handle, so no window-system
/// probe).
const BACKENDS: wgpu::Backends = wgpu::Backends::PRIMARY.union(wgpu::Backends::GL);

/// An instance over `backends`, or over those `WGPU_BACKEND` names (e.g. `vulkan`, `gl`)
/// when it is set.
fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    quiet_window_system_probe();
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = backends;
    }
    wgpu::Instance::new(desc)
}

fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let mut all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    // Stable preference: backend, device type, then name.
    all.sort_by_key(|a| {
        let i = a.get_info();
        (backend_rank(i.backend), rank(i.device_type), i.name)
    });
    all
}

/// The backend `wanted` names (`vulkan`/`vk`, `metal`/`mtl`, `dx12`/`d3d12`,
/// `gl`/`opengl`/`gles`, case-insensitive), if it names one.
fn backend_named(wanted: &str) -> Option<wgpu::Backend> {
    match wanted.trim().to_lowercase().as_str() {
        "vulkan" | "vk" => Some(wgpu::Backend::Vulkan),
        "metal" | "mtl" => Some(wgpu::Backend::Metal),
        "dx12" | "d3d12" => Some(wgpu::Backend::Dx12),
        "gl" | "opengl" | "gles" => Some(wgpu::Backend::Gl),
        _ => None,
    }
}

/// Whether `--adapter wanted` picks adapter `info`: `wanted` names its backend, or is a
/// case-insensitive substring of its name as shown (`(OpenGL)` included).
fn matches(info: &wgpu::AdapterInfo, wanted: &str) -> bool {
    match backend_named(wanted) {
        Some(b) => info.backend == b,
        None => display_name(info)
            .to_lowercase()
            .contains(&wanted.to_lowercase()),
    }
}

/// Every adapter this machine offers, in preference order.
pub fn list_adapters() -> Vec<AdapterSummary> {
    adapters(&instance(BACKENDS)).iter().map(summary).collect()
}

/// What the device reported outside error scopes: the first uncaptured error and the
/// loss of the device.
#[derive(Debug, Default)]
struct Reports {
    uncaptured: Option<String>,
    lost: Option<String>,
}

/// One device and its queue, for one simulation (a clone shares them: compacted
/// storage sets its buffers up again on the same device).
#[derive(Clone, Debug)]
pub struct GpuContext {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Adapter description.
    pub summary: AdapterSummary,
    /// Errors and loss reported by the device's callbacks.
    reports: Arc<Mutex<Reports>>,
    /// The pipelines compiled on this device, by shader text and entry point, with the
    /// bindings each uses: a backend set up again on the same device (compacted
    /// storage's new layouts) reuses them when its kernels are the same text.
    pub(super) pipelines: PipelineCache,
}

/// Compiled pipelines by the full WGSL text of their file, then entry point: the
/// pipeline and the bindings it uses.
pub(super) type PipelineCache =
    Arc<Mutex<std::collections::HashMap<String, Vec<(wgpu::ComputePipeline, Vec<u32>)>>>>;

impl GpuContext {
    /// Picks an adapter (`name` or `$VARIDEM_ADAPTER`: the first, in order of preference,
    /// whose name contains it case-insensitively, or of the backend it names, e.g. `gl`;
    /// otherwise the most capable) and opens a device with its
    /// `SHADER_F64` feature if present and the limits `$VARIDEM_GPU_LIMITS` asks for
    /// (the adapter's own by default; see [`LimitsRequest`]).
    pub fn new(name: Option<&str>) -> Result<Self> {
        Self::with_limits(name, &LimitsRequest::from_env()?)
    }

    /// [`GpuContext::new`] with the limits of `request`.
    pub fn with_limits(name: Option<&str>, request: &LimitsRequest) -> Result<Self> {
        let wanted = name
            .map(str::to_string)
            .or_else(|| std::env::var(ADAPTER_ENV).ok());
        // The primary backends first: OpenGL ranks after them (`backend_rank`), so its
        // instance (an EGL display and context) is made only when they offer no adapter,
        // or none that matches.
        let pick = |backends| {
            let all = adapters(&instance(backends));
            match &wanted {
                Some(w) => all.into_iter().find(|a| matches(&a.get_info(), w)),
                None => all.into_iter().next(),
            }
        };
        let found = pick(wgpu::Backends::PRIMARY).or_else(|| pick(wgpu::Backends::GL));
        let adapter = match (found, &wanted) {
            (Some(a), _) => a,
            (None, Some(w)) if !list_adapters().is_empty() => {
                return Err(Error::NoAdapter(format!(
                    "no adapter matches '{w}'; available: {}",
                    list_adapters()
                        .iter()
                        .map(|a| a.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            (None, _) => {
                return Err(Error::NoAdapter(
                    "no GPU adapter found (on Linux without a GPU: apt-get install mesa-vulkan-drivers for lavapipe)".into(),
                ))
            }
        };
        // Timestamp queries where the adapter has them: `bench` times the kernels with
        // them (nothing is timed unless a profile is asked for).
        let features =
            adapter.features() & (wgpu::Features::SHADER_F64 | super::profile::features());
        let required_limits = request.limits(&adapter.limits());
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("varidem"),
            required_features: features,
            required_limits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| {
            Error::Backend(format!(
                "requesting a device from {}: {e}",
                adapter.get_info().name
            ))
        })?;
        let summary = summary(&adapter);
        let reports = Arc::new(Mutex::new(Reports::default()));
        let sink = Arc::clone(&reports);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            log::debug!("uncaptured wgpu error: {e}");
            if let Ok(mut r) = sink.lock() {
                r.uncaptured.get_or_insert_with(|| e.to_string());
            }
        }));
        let sink = Arc::clone(&reports);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut r) = sink.lock() {
                r.lost
                    .get_or_insert_with(|| format!("{reason:?}: {message}"));
            }
        });
        Ok(Self {
            adapter,
            device,
            queue,
            summary,
            reports,
            pipelines: PipelineCache::default(),
        })
    }

    /// Copies `bytes` of `buffer` from byte `offset` (a multiple of 4) to the host
    /// (blocking); the length is rounded up to the copy alignment.
    pub(super) fn read_buffer_at(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<u8>> {
        let bytes = bytes.max(4).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = (self.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read-back"),
        });
        encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, bytes);
        self.scoped("submitting a read-back", || {
            self.queue.submit([encoder.finish()]);
        })?;
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
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
        self.check("reading back")?;
        staging.unmap();
        Ok(data)
    }

    /// The limits the device was opened with.
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    /// Runs `f` inside validation, out-of-memory and internal error scopes: an error
    /// wgpu reports there becomes [`Error::Gpu`] naming `during` (what was being
    /// created or submitted), as does an earlier uncaptured error or the loss of the
    /// device.
    pub fn scoped<T>(&self, during: &str, f: impl FnOnce() -> T) -> Result<T> {
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        // Popped innermost first.
        let errors = [
            pollster::block_on(validation.pop()),
            pollster::block_on(memory.pop()),
            pollster::block_on(internal.pop()),
        ];
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(Error::Gpu {
                during: during.to_string(),
                message: e.to_string(),
            });
        }
        self.check(during)?;
        Ok(out)
    }

    /// [`Error::Gpu`] if the device reported an error outside any scope or was lost.
    pub fn check(&self, during: &str) -> Result<()> {
        let r = self.reports.lock().map_err(|_| Error::Gpu {
            during: during.to_string(),
            message: "the error record is poisoned".into(),
        })?;
        if let Some(lost) = &r.lost {
            return Err(Error::Gpu {
                during: during.to_string(),
                message: format!("the device was lost ({lost})"),
            });
        }
        if let Some(e) = &r.uncaptured {
            return Err(Error::Gpu {
                during: during.to_string(),
                message: e.clone(),
            });
        }
        Ok(())
    }

    /// Destroys the device, as a driver reset or removal would (tests of the loss of
    /// the device mid-run): every later use reports [`Error::Gpu`].
    pub fn lose_device(&self) {
        self.device.destroy();
    }

    /// Whether kernels can be built in `f64`.
    pub fn has_f64(&self) -> bool {
        self.device.features().contains(wgpu::Features::SHADER_F64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_are_named_and_opengl_ranks_last() {
        assert_eq!(backend_named("GL"), Some(wgpu::Backend::Gl));
        assert_eq!(backend_named("opengl"), Some(wgpu::Backend::Gl));
        assert_eq!(backend_named(" Vulkan "), Some(wgpu::Backend::Vulkan));
        assert_eq!(backend_named("dx12"), Some(wgpu::Backend::Dx12));
        assert_eq!(backend_named("metal"), Some(wgpu::Backend::Metal));
        assert_eq!(backend_named("llvmpipe"), None);
        for b in [
            wgpu::Backend::Vulkan,
            wgpu::Backend::Metal,
            wgpu::Backend::Dx12,
        ] {
            assert!(backend_rank(b) < backend_rank(wgpu::Backend::Gl), "{b:?}");
        }
        assert_eq!(backend_name(wgpu::Backend::Gl), "OpenGL");
        assert_eq!(backend_name(wgpu::Backend::Vulkan), "Vulkan");
    }
}
