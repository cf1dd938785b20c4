//! GPU test helpers: an adapter or a clear skip (a failure under VARIDEM_REQUIRE_GPU=1),
//! and for f64 tests an adapter with `SHADER_F64` or a clear skip (a failure under
//! VARIDEM_REQUIRE_F64=1).
#![allow(
    dead_code,
    unreachable_pub,
    reason = "shared by several test crates, each using a part of it"
)]

use varidem::gpu::context::GpuContext;
use varidem::gpu::Precision;

/// A device for a GPU test, or `None` (with a message) when there is no adapter and
/// `VARIDEM_REQUIRE_GPU` is not set. Under `VARIDEM_REQUIRE_GPU=1` a missing adapter
/// panics, so CI cannot pass by skipping.
pub fn context(test: &str) -> Option<GpuContext> {
    match GpuContext::new(None) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            if set("VARIDEM_REQUIRE_GPU") {
                panic!("{test}: VARIDEM_REQUIRE_GPU=1 but no GPU adapter: {e}");
            }
            eprintln!("SKIPPED {test}: no GPU adapter ({e}); set VARIDEM_REQUIRE_GPU=1 to make this a failure");
            None
        }
    }
}

/// Whether the environment variable `name` is `1`.
fn set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// A device for a GPU test in `precision`: [`context`], and for `f64` one with
/// `SHADER_F64`. `f64` is optional (OpenGL adapters lack it; `varidem info` says which
/// have it), so on an adapter without it an f64 test is skipped with a message, under
/// `VARIDEM_REQUIRE_GPU=1` too, unless `VARIDEM_REQUIRE_F64=1` (CI's Vulkan passes,
/// where lavapipe has it): then it fails. An adapter that has `SHADER_F64` always runs
/// the f64 test; a device opened without it there is a failure.
pub fn context_for(test: &str, precision: Precision) -> Option<GpuContext> {
    let ctx = context(test)?;
    if precision != Precision::F64 || ctx.has_f64() {
        return Some(ctx);
    }
    let name = &ctx.summary.name;
    assert!(
        !ctx.adapter.features().contains(wgpu::Features::SHADER_F64),
        "{test}: adapter {name} has SHADER_F64 but the device was opened without it"
    );
    assert!(
        !set("VARIDEM_REQUIRE_F64"),
        "{test}: VARIDEM_REQUIRE_F64=1 but adapter {name} has no SHADER_F64"
    );
    eprintln!(
        "SKIPPED {test} (f64): adapter {name} has no SHADER_F64; set VARIDEM_REQUIRE_F64=1 to make this a failure"
    );
    None
}

/// [`context_for`] in `f64`.
pub fn context_f64(test: &str) -> Option<GpuContext> {
    context_for(test, Precision::F64)
}

/// Largest difference over particles of position, velocity, rotation and angular
/// velocity, each relative to that field's largest magnitude.
pub fn per_field(a: &varidem::model::Particles, b: &varidem::model::Particles) -> [f64; 4] {
    let fields = [
        (&a.position, &b.position),
        (&a.velocity, &b.velocity),
        (&a.rotation, &b.rotation),
        (&a.angular_velocity, &b.angular_velocity),
    ];
    fields.map(|(x, y)| {
        let scale = x.iter().map(|v| v.length()).fold(0.0, f64::max).max(1e-300);
        x.iter()
            .zip(y.iter())
            .map(|(u, v)| (*u - *v).length())
            .fold(0.0, f64::max)
            / scale
    })
}

/// A GPU backend of `scene` in `precision` with the default options on [`context_for`]'s
/// device, or `None` where that skips.
pub fn backend(
    scene: &varidem::model::Scene,
    precision: Precision,
    test: &str,
) -> Option<varidem::gpu::GpuBackend> {
    let ctx = context_for(test, precision)?;
    let options = varidem::gpu::GpuOptions {
        precision,
        ..varidem::gpu::GpuOptions::default()
    };
    Some(
        varidem::gpu::GpuBackend::with_context(
            ctx,
            scene.model.clone(),
            scene.simulation.integrator,
            scene.simulation.dt,
            &options,
        )
        .unwrap_or_else(|e| panic!("{test}: {e}")),
    )
}

/// Runs the WGSL module `src` (entry point `main`, binding 0 the read-only `input`,
/// binding 1 a read-write output of `output_bytes`) over `workgroups` workgroups and
/// returns the output's bytes.
pub fn run_kernel(
    ctx: &GpuContext,
    src: &str,
    input: &[u8],
    output_bytes: usize,
    workgroups: u32,
) -> Vec<u8> {
    use wgpu::util::DeviceExt;
    let device = &ctx.device;
    // A kernel that does not compile is a failure here, not a run that writes nothing.
    let pipeline = ctx
        .scoped("compiling a test kernel", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("test kernel"),
                source: wgpu::ShaderSource::Wgsl(src.into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("test kernel"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let xs = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("input"),
        contents: input,
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = output_bytes as u64;
    let ys = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("output"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("staging"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("test kernel"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: xs.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: ys.as_entire_binding(),
            },
        ],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }
    enc.copy_buffer_to_buffer(&ys, 0, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let out = staging.slice(..).get_mapped_range().unwrap().to_vec();
    out
}

/// Mean height (z) and kinetic energy `Σ ½ m v²` of a state's rows: the statistics the
/// f32 hard-contact tests compare with the CPU's.
pub fn height_and_kinetic(p: &varidem::model::Particles) -> (f64, f64) {
    let n = p.len() as f64;
    let z = p.position.iter().map(|x| x.z).sum::<f64>() / n;
    let e = p
        .velocity
        .iter()
        .zip(&p.mass)
        .map(|(v, m)| 0.5 * m * v.length_squared())
        .sum::<f64>();
    (z, e)
}

/// The GPU in f32 on `s`: `first + then` steps run twice give the same bits, and so
/// does a run restored from a checkpoint taken after `first` steps. Returns the first
/// run (`None` without an adapter, after a clear skip).
pub fn f32_deterministic(
    s: &varidem::model::Scene,
    test: &str,
    first: u64,
    then: u64,
) -> Option<varidem::gpu::GpuBackend> {
    use varidem::backend::Backend;
    let mut a = backend(s, Precision::F32, test)?;
    a.advance(first).unwrap();
    let snap = a.checkpoint_state().unwrap();
    a.advance(then).unwrap();
    let end = a.checkpoint_state().unwrap();
    let mut b = backend(s, Precision::F32, test).unwrap();
    b.advance(first + then).unwrap();
    assert_eq!(b.checkpoint_state().unwrap(), end, "the same run twice");
    let mut r = varidem::gpu::GpuBackend::restore(
        context(test).unwrap(),
        s.model.clone(),
        &snap,
        &varidem::gpu::GpuOptions::default(),
    )
    .unwrap();
    r.advance(then).unwrap();
    assert_eq!(
        r.checkpoint_state().unwrap(),
        end,
        "resumed at step {first}"
    );
    Some(a)
}

/// Largest difference of two vector lists relative to the largest entry of `a`.
pub fn rel(a: &[glam::DVec3], b: &[glam::DVec3]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().map(|v| v.length()).fold(0.0, f64::max).max(1e-300);
    (a.iter().zip(b))
        .map(|(x, y)| (*x - *y).length())
        .fold(0.0, f64::max)
        / scale
}

/// 80 spheres in two materials (glass, steel) poured onto a turning two-triangle tray
/// (a mesh of steel) with a plane closing in from the side and a steel floor plane
/// below the tray's edge, spinning at 30 rad/s about varied axes, 300 steps: the GPU
/// tests' granular workload. `contact`, `glass` and `steel` are added to the
/// `[contact]` table and to the two materials; `rest` after them (e.g. an
/// `[[interaction]]`).
pub fn tray(contact: &str, glass: &str, steel: &str, rest: &str) -> varidem::model::Scene {
    let text = format!(
        "[simulation]\ndt = 2e-5\nsteps = 300\ngravity = [0.0, 0.0, -9.81]\n\
         [contact]\nlaw = \"hertz\"\nskin = 0.001\nmax_contacts = 12\n{contact}\
         [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
         restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n{glass}\
         [[material]]\nname = \"steel\"\nyoung = 2e8\npoisson = 0.28\ndensity = 7800.0\n\
         restitution = 0.8\nfriction_static = 0.3\n{steel}{rest}\
         [[block]]\ncounts = [5, 4, 2]\nspacing = 0.0099\nradius = 0.005\nradius_jitter = 0.01\n\
         material = \"glass\"\norigin = [0.0, 0.0, 0.004995]\nseed = 5\n\
         velocity = [0.2, 0.1, 0.0]\n\
         [[block]]\ncounts = [5, 4, 2]\nspacing = 0.0099\nradius = 0.005\nradius_jitter = 0.01\n\
         material = \"steel\"\norigin = [0.0, 0.0, 0.0248]\nseed = 6\n\
         [[mesh]]\nname = \"tray\"\nmaterial = \"steel\"\n\
         vertices = [[-0.05, -0.05, 0.0], [0.1, -0.05, 0.0], [0.1, 0.1, 0.0], [-0.05, 0.1, 0.0]]\n\
         triangles = [[0, 1, 2], [0, 2, 3]]\n\
         angular_velocity = [0.0, 0.0, 5.0]\naxis_point = [0.02, 0.015, 0.0]\n\
         [[wall]]\npoint = [0.045, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n\
         velocity = [-0.5, 0.0, 0.0]\nstart = 0.002\n\
         [[wall]]\npoint = [-0.0052, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\nmaterial = \"steel\"\n"
    );
    let mut scene = varidem::io::parse_scene(&text).unwrap();
    let p = &mut scene.model.particles;
    for i in 0..p.len() {
        let s = i as f64;
        p.angular_velocity[i] = 30.0 * glam::DVec3::new((2.0 * s).cos(), (3.0 * s).sin(), s.cos());
    }
    scene
}
