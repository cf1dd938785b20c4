//! Device acquisition: adapter listing and choice (discrete > integrated > virtual >
//! software, overridable by name), and a device requested with the adapter's own limits
//! (or varidem's portable minimum, [`crate::gpu::limits`]) and features.
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
    /// Adapter name.
    pub name: String,
    /// Graphics API backend.
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

fn rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn summary(a: &wgpu::Adapter) -> AdapterSummary {
    let info = a.get_info();
    let limits = a.limits();
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
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

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    // Compute needs the primary APIs (Vulkan, Metal, DX12); probing OpenGL/EGL on a
    // headless machine only prints errors. `WGPU_BACKEND` still overrides.
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = wgpu::Backends::PRIMARY;
    }
    wgpu::Instance::new(desc)
}

fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let mut all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    // Stable preference: device type, then name.
    all.sort_by_key(|a| {
        let i = a.get_info();
        (rank(i.device_type), i.name)
    });
    all
}

/// Every adapter this machine offers, in preference order.
pub fn list_adapters() -> Vec<AdapterSummary> {
    adapters(&instance()).iter().map(summary).collect()
}

/// What the device reported outside error scopes: the first uncaptured error and the
/// loss of the device.
#[derive(Debug, Default)]
struct Reports {
    uncaptured: Option<String>,
    lost: Option<String>,
}

/// One device and its queue, for one simulation.
#[derive(Debug)]
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
}

impl GpuContext {
    /// Picks an adapter (`name` or `$VARIDEM_ADAPTER`: the first whose name contains it,
    /// case-insensitively; otherwise the most capable) and opens a device with its
    /// `SHADER_F64` feature if present and the limits `$VARIDEM_GPU_LIMITS` asks for
    /// (the adapter's own by default; see [`LimitsRequest`]).
    pub fn new(name: Option<&str>) -> Result<Self> {
        Self::with_limits(name, &LimitsRequest::from_env()?)
    }

    /// [`GpuContext::new`] with the limits of `request`.
    pub fn with_limits(name: Option<&str>, request: &LimitsRequest) -> Result<Self> {
        let instance = instance();
        let all = adapters(&instance);
        if all.is_empty() {
            return Err(Error::NoAdapter(
                "no GPU adapter found (on Linux without a GPU: apt-get install mesa-vulkan-drivers for lavapipe)".into(),
            ));
        }
        let wanted = name
            .map(str::to_string)
            .or_else(|| std::env::var(ADAPTER_ENV).ok());
        let adapter = match &wanted {
            Some(w) => {
                let lw = w.to_lowercase();
                all.into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&lw))
                    .ok_or_else(|| {
                        Error::NoAdapter(format!(
                            "no adapter matches '{w}'; available: {}",
                            list_adapters()
                                .iter()
                                .map(|a| a.name.clone())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?
            }
            None => all
                .into_iter()
                .next()
                .ok_or_else(|| Error::NoAdapter("no adapter".into()))?,
        };
        let features = adapter.features() & wgpu::Features::SHADER_F64;
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
        })
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
