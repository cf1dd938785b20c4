//! The WGSL law functions against their Rust twins, on random inputs, through small
//! test kernels (as `tests/gpu_math.rs` does for the Rodrigues helpers).
//!
//! Each test composes the engine's own module ([`compose`]: header, contract constants,
//! section offsets, `shaders/common/*.wgsl`) with a kernel that reads the inputs of one
//! case per invocation from a storage buffer, calls the law and writes its outputs.
//! Functions that read `params` (the integrator halves, the near field) get the
//! engine's uniform block ([`Params`]) at its binding; the rest are pure. The Rust twin
//! runs on the same inputs (rounded to `f32` first for the `f32` kernels, so only the
//! kernel's arithmetic is measured).
//!
//! Every output is compared component by component, as an absolute difference divided
//! by a scale of that output (stated per law: the size of the terms it is computed
//! from, so that a cancellation the law itself suffers, such as the axial strain
//! `|d|/L₀ − 1`, is not counted against the kernel). Cases within rounding of a branch
//! point (stick/slip, touching, the domain box, map (23)'s domain) are left out of the
//! value comparison and counted; there are none in f64.
//!
//! Tolerances. In `f64` the kernels perform the twins' IEEE operations in the same
//! order; what may differ is the driver's (FMA contraction, its `sqrt`) and, where the
//! WGSL has its own `atan_real` (bending) or `pow_real`/`ln_real` (near field), their
//! rounding against libm (`tests/gpu_math.rs`). The bound 1e-13 of the scale leaves
//! room for an FMA-contracting driver: one ulp of an intermediate, amplified at most by
//! the scale's condition. Measured on lavapipe (Mesa 22.3): 0 (the same bits) for the
//! contact laws, integrator and rotation helpers, 1.8e-15 for the bond law, 5.8e-15 for
//! the near field. In `f32` the bound is 2e-6 (about 30 roundings of 6e-8) for the
//! contact laws, integrator and rotation helpers, 5e-6 for the bond law (two
//! compositions and an `atan_real` in f32) and 2e-5 for the near field (an f32 pow's
//! error is 6e-8 × |y ln x|, up to 41 here). Measured maxima (lavapipe, and llvmpipe's
//! OpenGL where they differ) are in each test's doc comment; the tests print them.
//!
//! The kernels bind the engine's uniform block at binding 0 and their own input and
//! output buffers at 21 and 22, past the engine's, so the layout file composes as it is
//! and the device limits are those of any engine kernel (they pass under
//! `VARIDEM_GPU_LIMITS=minimum` and on OpenGL, where the f64 tests skip).

mod gpu_common;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use varidem::gpu::context::GpuContext;
use varidem::gpu::contract::{
    ERR_HALF_TURN, ERR_LEFT_DOMAIN, ERR_ROTATION_DOMAIN, INTEGRATOR_SYMPLECTIC_EULER,
    INTEGRATOR_VARIATIONAL, INTEGRATOR_VARIATIONAL_EXACT, PARAM_DOMAIN, PARAM_DOMAIN_REMOVE,
};
use varidem::gpu::layout::{Params, Real};
use varidem::gpu::shaders::{compose, ShaderConfig};
use varidem::gpu::Precision;
use varidem::integrators::{self, Body, IntegratorKind, Kinematics, StepFault};
use varidem::math::rodrigues;
use varidem::model::{
    Bond, NearField, ShearForm, Wall, FLAG_HELD, FLAG_NO_ROTATION, FLAG_PENDULUM,
};
use varidem::physics::{binder, contact, granular, jkr};

/// A test kernel: `body` is WGSL run per case with `ib` (index of the case's first
/// input in `xs`) and `ob` (of its first output in `ys`) in scope, and the helpers
/// `in3(k)` (three inputs from `k`) and `out3(k, v)`.
struct LawKernel {
    /// Label of the pipeline.
    name: &'static str,
    /// The kernel's body.
    body: &'static str,
    /// Reals read per case.
    inputs: usize,
    /// Reals written per case.
    outputs: usize,
}

/// Workgroup size of the test kernels.
const TEST_WG: usize = 64;
/// Binding of the inputs: after the engine's bindings (0-20), so the layout file
/// composes unchanged; only `params` (0) of those is bound.
const XS_BINDING: u32 = 21;
/// Binding of the outputs.
const YS_BINDING: u32 = 22;

/// The module of `k` in `precision`: the engine's composition ([`compose`]) followed by
/// the test kernel `law_test`.
fn source(k: &LawKernel, precision: Precision) -> String {
    let kernel = format!(
        "@group(0) @binding({XS_BINDING}) var<storage, read> xs: array<real>;
@group(0) @binding({YS_BINDING}) var<storage, read_write> ys: array<real>;
fn in3(k: u32) -> vec3<real> {{ return vec3<real>(xs[k], xs[k + 1u], xs[k + 2u]); }}
fn out3(k: u32, v: vec3<real>) {{ ys[k] = v.x; ys[k + 1u] = v.y; ys[k + 2u] = v.z; }}
@compute @workgroup_size({TEST_WG})
fn law_test(@builtin(global_invocation_id) g: vec3<u32>) {{
    let n_case = g.x;
    if (n_case >= arrayLength(&xs) / {inputs}u) {{ return; }}
    let ib = {inputs}u * n_case;
    let ob = {outputs}u * n_case;
{body}
}}
",
        inputs = k.inputs,
        outputs = k.outputs,
        body = k.body
    );
    compose(&kernel, &ShaderConfig::example(precision, false))
}

/// What a test sets of the engine's uniform block ([`Params`]); the rest is zero, `one`
/// is 1.
#[derive(Clone, Copy, Debug, Default)]
struct Uniform {
    /// Time step.
    dt: f64,
    /// `INTEGRATOR_*` code.
    integrator: u32,
    /// `PARAM_*` bits.
    flags: u32,
    /// The `[domain]` box (lower, upper corner).
    domain: Option<(DVec3, DVec3)>,
    /// Near-field parameters.
    near: Option<NearField>,
}

impl Uniform {
    /// The block in precision `R`.
    fn params<R: Real>(&self) -> Params<R> {
        let r = R::from_f64;
        let (lo, hi) = self.domain.unwrap_or_default();
        let nf = self.near.unwrap_or(NearField {
            kappa_attractive: 0.0,
            lambda_attractive: 0.0,
            kappa_repulsive: 0.0,
            lambda_repulsive: 0.0,
            cutoff: 0.0,
        });
        Params {
            flags: self.flags,
            integrator: self.integrator,
            dt: r(self.dt),
            one: r(1.0),
            domain_min_x: r(lo.x),
            domain_min_y: r(lo.y),
            domain_min_z: r(lo.z),
            domain_max_x: r(hi.x),
            domain_max_y: r(hi.y),
            domain_max_z: r(hi.z),
            nf_kappa_a: r(nf.kappa_attractive),
            nf_lambda_a: r(nf.lambda_attractive),
            nf_kappa_r: r(nf.kappa_repulsive),
            nf_lambda_r: r(nf.lambda_repulsive),
            nf_cutoff: r(nf.cutoff),
            ..Default::default()
        }
    }

    /// The block's values as the kernel sees them in `precision` (rounded to `f32`).
    fn rounded(&self, precision: Precision) -> Self {
        let q = |v: f64| round(precision, v);
        let q3 = |v: DVec3| DVec3::new(q(v.x), q(v.y), q(v.z));
        Self {
            dt: q(self.dt),
            domain: self.domain.map(|(a, b)| (q3(a), q3(b))),
            near: self.near.map(|n| NearField {
                kappa_attractive: q(n.kappa_attractive),
                lambda_attractive: q(n.lambda_attractive),
                kappa_repulsive: q(n.kappa_repulsive),
                lambda_repulsive: q(n.lambda_repulsive),
                cutoff: q(n.cutoff),
            }),
            ..*self
        }
    }
}

/// `v` as the kernel of `precision` holds it.
fn round(precision: Precision, v: f64) -> f64 {
    match precision {
        Precision::F32 => v as f32 as f64,
        Precision::F64 => v,
    }
}

/// A compiled test kernel on a device.
struct Runner {
    /// The device.
    ctx: GpuContext,
    /// The kernel's precision.
    precision: Precision,
    /// The kernel.
    kernel: &'static LawKernel,
    /// Its bind-group layout: `params`, inputs, outputs.
    layout: wgpu::BindGroupLayout,
    /// Its pipeline.
    pipeline: wgpu::ComputePipeline,
}

impl Runner {
    /// Compiles `kernel` in `precision` on a device for `test`, or `None` when the
    /// test is skipped ([`gpu_common::context_for`]: no adapter, or no f64).
    fn new(test: &str, precision: Precision, kernel: &'static LawKernel) -> Option<Self> {
        let ctx = gpu_common::context_for(test, precision)?;
        let (layout, pipeline) = ctx
            .scoped(kernel.name, || Self::build(&ctx, precision, kernel))
            .unwrap_or_else(|e| panic!("{test}: {e}"));
        Some(Self {
            ctx,
            precision,
            kernel,
            layout,
            pipeline,
        })
    }

    /// The bind-group layout and pipeline of `kernel`.
    fn build(
        ctx: &GpuContext,
        precision: Precision,
        kernel: &LawKernel,
    ) -> (wgpu::BindGroupLayout, wgpu::ComputePipeline) {
        let device = &ctx.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel.name),
            source: wgpu::ShaderSource::Wgsl(source(kernel, precision).into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(kernel.name),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(
                    XS_BINDING,
                    wgpu::BufferBindingType::Storage { read_only: true },
                ),
                entry(
                    YS_BINDING,
                    wgpu::BufferBindingType::Storage { read_only: false },
                ),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(kernel.name),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.name),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("law_test"),
            compilation_options: Default::default(),
            cache: None,
        });
        (layout, pipeline)
    }

    /// Rounds `input` in place to what the kernel holds (`f32` kernels).
    fn round_inputs(&self, input: &mut [f64]) {
        for v in input {
            *v = round(self.precision, *v);
        }
    }

    /// Runs the kernel on `input` (a whole number of cases, already rounded) with the
    /// uniform block `u`; the outputs, widened to `f64`.
    fn run(&self, u: &Uniform, input: &[f64]) -> Vec<f64> {
        self.ctx
            .scoped(self.kernel.name, || self.run_unscoped(u, input))
            .unwrap_or_else(|e| panic!("{}: {e}", self.kernel.name))
    }

    /// [`Runner::run`] without the error scopes: converts to the kernel's precision.
    fn run_unscoped(&self, u: &Uniform, input: &[f64]) -> Vec<f64> {
        match self.precision {
            Precision::F32 => {
                let xs: Vec<f32> = input.iter().map(|&v| v as f32).collect();
                let ys: Vec<f32> = self.run_as(bytemuck::bytes_of(&u.params::<f32>()), &xs);
                ys.into_iter().map(f64::from).collect()
            }
            Precision::F64 => self.run_as(bytemuck::bytes_of(&u.params::<f64>()), input),
        }
    }

    /// One dispatch over `input` (reals of the kernel's precision) with the uniform
    /// block's bytes `params`; the outputs read back.
    fn run_as<R: Real>(&self, params: &[u8], input: &[R]) -> Vec<R> {
        use wgpu::util::DeviceExt;
        let device = &self.ctx.device;
        let k = self.kernel;
        assert_eq!(input.len() % k.inputs, 0, "{}: partial case", k.name);
        let cases = input.len() / k.inputs;
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: params,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let xs = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("xs"),
            contents: bytemuck::cast_slice(input),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let size = (cases * k.outputs * size_of::<R>()) as u64;
        let ys = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ys"),
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
            label: Some(k.name),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: XS_BINDING,
                    resource: xs.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: YS_BINDING,
                    resource: ys.as_entire_binding(),
                },
            ],
        });
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bg, &[]);
            pass.dispatch_workgroups(cases.div_ceil(TEST_WG) as u32, 1, 1);
        }
        enc.copy_buffer_to_buffer(&ys, 0, &staging, 0, size);
        self.ctx.queue.submit([enc.finish()]);
        staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.unwrap());
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let out = bytemuck::pod_collect_to_vec(&staging.slice(..).get_mapped_range().unwrap());
        out
    }
}

/// Largest scaled differences per named output, and the cases left out near a branch
/// point.
#[derive(Debug, Default)]
struct Errors {
    /// The largest scaled difference of each output, in order of first record.
    worst: Vec<(&'static str, f64)>,
    /// Cases left out of the comparison near a branch point.
    excluded: usize,
}

impl Errors {
    /// Records the components of `gpu` against `cpu`, divided by `scale`.
    fn vec(&mut self, name: &'static str, gpu: DVec3, cpu: DVec3, scale: f64) {
        for k in 0..3 {
            self.scalar(name, gpu[k], cpu[k], scale);
        }
    }

    /// Records `|gpu − cpu| / scale` (the difference itself when the scale is 0; NaN
    /// on either side counts as infinitely wrong unless both are NaN).
    fn scalar(&mut self, name: &'static str, gpu: f64, cpu: f64, scale: f64) {
        let e = if gpu == cpu || (gpu.is_nan() && cpu.is_nan()) {
            0.0
        } else if gpu.is_nan() || cpu.is_nan() {
            f64::INFINITY
        } else if scale > 0.0 {
            (gpu - cpu).abs() / scale
        } else {
            (gpu - cpu).abs()
        };
        match self.worst.iter_mut().find(|(n, _)| *n == name) {
            Some((_, w)) => *w = w.max(e),
            None => self.worst.push((name, e)),
        }
    }

    /// Prints the maxima and asserts each is at most `tol`.
    fn check(&self, test: &str, precision: Precision, tol: f64) {
        let list: Vec<String> = self
            .worst
            .iter()
            .map(|(n, e)| format!("{n} {e:.2e}"))
            .collect();
        println!(
            "{test} ({precision:?}): {} (tolerance {tol:e}; {} cases within rounding of a branch point left out)",
            list.join(", "),
            self.excluded
        );
        for (n, e) in &self.worst {
            assert!(
                *e <= tol,
                "{test} ({precision:?}): {n} differs by {e:e} > {tol:e}"
            );
        }
    }
}

/// A random unit vector.
fn unit(rng: &mut ChaCha8Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let l = v.length();
        if l > 0.1 && l <= 1.0 {
            return v / l;
        }
    }
}

/// `10^u`, `u` uniform in `[lo, hi)`.
fn log_uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    10f64.powf(rng.random_range(lo..hi))
}

/// Three inputs from `x` at `k`.
fn v3(x: &[f64], k: usize) -> DVec3 {
    DVec3::new(x[k], x[k + 1], x[k + 2])
}

/// Tolerance of the `f64` kernels relative to each output's scale (module doc).
const TOL_F64: f64 = 1e-13;

// ---------------------------------------------------------------------------------
// Hertz–Mindlin: hertz_contact (shaders/common/contact.wgsl) against
// physics::granular::hertz_contact.

static HERTZ: LawKernel = LawKernel {
    name: "hertz_contact",
    body: "
    let pm = PairRecord(xs[ib], xs[ib + 1u], xs[ib + 2u], xs[ib + 3u], xs[ib + 4u], 0.0, 0.0, 0.0);
    let a = Side(vec3<real>(0.0), in3(ib + 13u), 0.0, in3(ib + 16u), in3(ib + 19u));
    let b = Side(vec3<real>(0.0), in3(ib + 22u), 0.0, in3(ib + 25u), in3(ib + 28u));
    let c = hertz_contact(pm, xs[ib + 5u], xs[ib + 6u], in3(ib + 7u), xs[ib + 10u],
                          xs[ib + 11u], xs[ib + 12u], a, b, in3(ib + 31u));
    out3(ob, c.force);
    out3(ob + 3u, c.friction);
    ys[ob + 6u] = c.energy;
    out3(ob + 7u, c.spring);",
    inputs: 34,
    outputs: 10,
};

/// Random Hertz–Mindlin contacts: moduli over six decades, overlaps from 1e-6 to 3e-2
/// of r*, damping on and off with approach rates that sometimes clamp `f_n` at 0, stored
/// springs zero, along the normal (carried to zero), or of any direction with a length
/// from 0.03 to 5 times the sticking limit, increments that stick or slip; a quarter are
/// walls (`b` at rest, lever 0), some frictionless.
fn hertz_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut input = Vec::with_capacity(34 * n);
    for k in 0..n {
        let e_star = log_uniform(rng, 5.0, 11.0);
        let g_star = e_star * rng.random_range(0.25..0.45);
        let xi = if k % 4 == 1 {
            0.0
        } else {
            rng.random_range(0.0..1.5)
        };
        let mu_s: f64 = if k % 13 == 0 {
            0.0
        } else {
            rng.random_range(0.05..1.0)
        };
        let mu_d = mu_s * rng.random_range(0.5..1.0);
        let r_star = log_uniform(rng, -4.0, 0.0);
        let overlap = r_star * log_uniform(rng, -6.0, -1.5);
        let m_star = log_uniform(rng, -6.0, 2.0);
        let axis = k % 11 == 3;
        let n_vec = if axis {
            // Axis-aligned, with a spring along it: carry_spring's zero branch.
            [DVec3::X, DVec3::NEG_Y, DVec3::Z][k % 3]
        } else {
            unit(rng)
        };
        let wall = k % 4 == 0;
        let r_a = r_star * rng.random_range(1.0..4.0);
        let lever_a = if wall {
            r_a - overlap
        } else {
            r_a - 0.5 * overlap
        };
        let lever_b = if wall {
            0.0
        } else {
            r_star * rng.random_range(1.0..4.0) - 0.5 * overlap
        };
        let sqrt_rd = (r_star * overlap).sqrt();
        let f_el = 4.0 / 3.0 * e_star * sqrt_rd * overlap;
        let damp = 2.0 * xi * (2.0 * e_star * m_star * sqrt_rd).sqrt();
        let approach = if damp > 0.0 {
            f_el / damp * rng.random_range(-2.0..1.5)
        } else {
            rng.random_range(-1.0..1.0)
        };
        let k_t = 8.0 * g_star * sqrt_rd;
        let s_max = (mu_s.max(0.1) * f_el / k_t).max(1e-300);
        let spring = match k % 5 {
            0 => DVec3::ZERO,
            1 if axis => n_vec * s_max * rng.random_range(-2.0..2.0),
            _ => unit(rng) * s_max * log_uniform(rng, -1.5, 0.7),
        };
        let slip = s_max * log_uniform(rng, -2.0, 0.5);
        let v_b = unit(rng) * approach.abs() * rng.random_range(0.0..3.0);
        let v_a = v_b + approach * n_vec + unit(rng) * approach.abs() * rng.random_range(0.0..3.0);
        let dx_b = if wall { DVec3::ZERO } else { unit(rng) * slip };
        let dx_a = dx_b + unit(rng) * slip;
        let da_a = unit(rng) * slip / lever_a * rng.random_range(0.0..2.0);
        let (v_b, da_b) = if wall {
            (DVec3::ZERO, DVec3::ZERO)
        } else {
            (v_b, unit(rng) * slip / lever_b * rng.random_range(0.0..2.0))
        };
        input.extend([e_star, g_star, xi, mu_s, mu_d, r_star, m_star]);
        input.extend(n_vec.to_array());
        input.extend([overlap, lever_a, lever_b]);
        for v in [v_a, dx_a, da_a, v_b, dx_b, da_b, spring] {
            input.extend(v.to_array());
        }
    }
    input
}

/// The scale of `carry_spring(s, n)`: `|s|`, divided by the sine of the angle between
/// `s` and `n` (the tangential part `t = s − (s·n)n` is a cancellation when `s` is
/// nearly normal, and `carry_spring` scales its direction up to `|s|`).
fn carry_scale(s: DVec3, n: DVec3) -> f64 {
    let t = s - s.dot(n) * n;
    if t.length() == 0.0 {
        s.length()
    } else {
        s.length() * (s.length() / t.length()).max(1.0)
    }
}

/// The Rust twin of one Hertz case, with the scales of its outputs: `f_n`'s terms (with
/// the two velocities' sizes) plus `k_t` times the tangential lengths (the carried
/// spring's scale, [`carry_scale`], and the increments' sizes) for force and friction,
/// those lengths plus `μ_d` times `f_n`'s terms over `k_t` (the sliding spring) for the
/// spring, the energy itself; the stick test's margin relative to its terms; `f_n`.
fn hertz_reference(x: &[f64]) -> (granular::ContactResult, [f64; 3], f64, f64) {
    let pm = granular::PairMaterial {
        e_star: x[0],
        g_star: x[1],
        xi: x[2],
        restitution: 0.0,
        mu_s: x[3],
        mu_d: x[4],
        mu_r: 0.0,
        eta_r: 0.0,
        gamma: 0.0,
    };
    let g = granular::ContactGeometry {
        r_star: x[5],
        m_star: x[6],
    };
    let n = v3(x, 7);
    let (overlap, lever_a, lever_b) = (x[10], x[11], x[12]);
    let side = |k: usize| granular::ContactSide {
        x: DVec3::ZERO,
        v: v3(x, k),
        r: 0.0,
        dx: v3(x, k + 3),
        dalpha: v3(x, k + 6),
    };
    let (a, b) = (side(13), side(22));
    let spring = v3(x, 31);
    let c = granular::hertz_contact(&pm, g, n, overlap, lever_a, lever_b, &a, &b, spring);
    let sqrt_rd = (g.r_star * overlap).sqrt();
    let f_el = 4.0 / 3.0 * pm.e_star * sqrt_rd * overlap;
    let damp = 2.0 * pm.xi * (2.0 * pm.e_star * g.m_star * sqrt_rd).sqrt();
    // The approach rate is a difference of the two velocities: their size, not the
    // rate's, bounds its rounding.
    let f_n_terms = f_el + damp * (a.v.length() + b.v.length());
    let f_n = (f_el + damp * (a.v - b.v).dot(n)).max(0.0);
    let k_t = 8.0 * pm.g_star * sqrt_rd;
    let t_len = carry_scale(spring, n)
        + a.dx.length()
        + b.dx.length()
        + lever_a.abs() * a.dalpha.length()
        + lever_b.abs() * b.dalpha.length();
    // The stick test f_trial ≤ μ_s f_n: its margin relative to its terms.
    let trial = if c.slipping {
        // The trial spring: the carried spring plus the increment (recomputed).
        granular::carry_spring(spring, n) + {
            let slip = a.dx - b.dx
                + granular::rotate_minus_identity(a.dalpha, lever_a * n)
                + granular::rotate_minus_identity(b.dalpha, lever_b * n);
            slip - slip.dot(n) * n
        }
    } else {
        c.spring
    };
    let margin = (k_t * trial.length() - pm.mu_s * f_n).abs() / (k_t * t_len + f_n_terms);
    let f_scale = f_n_terms + k_t * t_len;
    // A sliding spring is μ_d f_n / k_t along the trial: f_n's rounding counts too.
    let s_scale = if k_t > 0.0 {
        t_len + pm.mu_d * f_n_terms / k_t
    } else {
        t_len
    };
    (c, [f_scale, s_scale, c.energy], margin, f_n)
}

/// `hertz_contact` in `precision` against its twin on 8192 random contacts.
fn hertz_contact_matches(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &HERTZ) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let n = 8192;
    let mut input = hertz_cases(&mut rng, n);
    runner.round_inputs(&mut input);
    let out = runner.run(&Uniform::default(), &input);
    let margin_tol = if precision == Precision::F32 {
        1e-5
    } else {
        1e-12
    };
    let mut errors = Errors::default();
    let (mut stick, mut slip, mut clamped, mut walls) = (0, 0, 0, 0);
    for k in 0..n {
        let x = &input[34 * k..34 * k + 34];
        let y = &out[10 * k..10 * k + 10];
        let (c, [f_scale, s_scale, e_scale], margin, f_n) = hertz_reference(x);
        if margin < margin_tol {
            errors.excluded += 1;
            continue;
        }
        if c.slipping {
            slip += 1;
        } else {
            stick += 1;
        }
        if f_n == 0.0 {
            clamped += 1;
        }
        if x[12] == 0.0 {
            walls += 1;
        }
        errors.vec("force", v3(y, 0), c.force, f_scale);
        errors.vec("friction", v3(y, 3), c.friction, f_scale);
        errors.scalar("energy", y[6], c.energy, e_scale);
        errors.vec("spring", v3(y, 7), c.spring, s_scale);
    }
    println!("{test}: {stick} stick, {slip} slip, {clamped} with f_n clamped at 0, {walls} walls");
    assert!(stick > n / 5 && slip > n / 5 && clamped > n / 50 && walls > n / 5);
    errors.check(test, precision, tol);
}

/// `hertz_contact` (WGSL, f64) against `physics::granular::hertz_contact` on 8192
/// contacts (≈ 3600 stick, 4600 slip, 1500 with `f_n` clamped at 0, 2048 walls).
/// Measured on lavapipe: 0 for every output (the same bits).
#[test]
fn hertz_contact_f64_matches_cpu() {
    hertz_contact_matches("hertz_contact_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// `hertz_contact` in f32 against the f64 twin on the same (rounded) inputs. Bound
/// 2e-6; measured (lavapipe and OpenGL): force 2.0e-7, friction 7.3e-8, energy 2.6e-7,
/// spring 7.2e-8; one case of 8192 within 1e-5 of the stick/slip limit left out.
#[test]
fn hertz_contact_f32_matches_cpu() {
    hertz_contact_matches("hertz_contact_f32_matches_cpu", Precision::F32, 2e-6);
}

// ---------------------------------------------------------------------------------
// JKR cohesion: jkr_contact (shaders/common/contact.wgsl) against
// physics::jkr::jkr_core.

static JKR: LawKernel = LawKernel {
    name: "jkr_contact",
    body: "
    let pm = PairRecord(xs[ib], xs[ib + 1u], xs[ib + 2u], xs[ib + 3u], xs[ib + 4u], 0.0, 0.0,
                        xs[ib + 5u]);
    let a = Side(vec3<real>(0.0), in3(ib + 14u), 0.0, in3(ib + 17u), in3(ib + 20u));
    let b = Side(vec3<real>(0.0), in3(ib + 23u), 0.0, in3(ib + 26u), in3(ib + 29u));
    let c = jkr_contact(pm, xs[ib + 6u], xs[ib + 7u], in3(ib + 8u), xs[ib + 11u],
                        xs[ib + 12u], xs[ib + 13u], a, b, in3(ib + 32u));
    out3(ob, c.force);
    out3(ob + 3u, c.friction);
    ys[ob + 6u] = c.energy;
    out3(ob + 7u, c.spring);
    ys[ob + 10u] = c.f_n;
    ys[ob + 11u] = c.a;",
    inputs: 35,
    outputs: 12,
};

/// Random JKR contacts: moduli over five decades, surface energies from 10⁻³ to
/// 1 J/m², radii from 10 µm to 1 cm, overlaps from just above the pull-off overlap
/// δ_c (in tension) to twenty times |δ_c| (pressed), damping on and off, stored
/// springs and increments that stick or slip; a quarter are walls (`b` at rest,
/// lever 0).
fn jkr_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut input = Vec::with_capacity(35 * n);
    for k in 0..n {
        let e_star = log_uniform(rng, 5.0, 10.0);
        let g_star = e_star * rng.random_range(0.25..0.45);
        let xi = if k % 3 == 0 {
            0.0
        } else {
            rng.random_range(0.0..1.0)
        };
        let mu_s = rng.random_range(0.1..1.0);
        let mu_d = mu_s * rng.random_range(0.5..1.0);
        let gamma = log_uniform(rng, -3.0, 0.0);
        let r_star = log_uniform(rng, -5.0, -2.0);
        let m_star = 2500.0 * r_star.powi(3) * rng.random_range(1.0..8.0);
        let dc = jkr::pull_off_overlap(r_star, e_star, gamma);
        let overlap = dc + dc.abs() * log_uniform(rng, -2.0, 1.3);
        let n = unit(rng);
        // Displacements on the scale the friction cap allows, μ_s F_po / k_t, with k_t
        // at the contact radius of touching (δ = 0).
        let a0 = jkr::contact_radius(r_star, e_star, gamma, 0.0);
        let t_scale = mu_s * jkr::pull_off_force(r_star, gamma) / (8.0 * g_star * a0);
        let wall = k % 4 == 1;
        let lever_a = r_star * rng.random_range(1.0..2.0);
        let lever_b = if wall {
            0.0
        } else {
            r_star * rng.random_range(1.0..2.0)
        };
        input.extend([e_star, g_star, xi, mu_s, mu_d, gamma, r_star, m_star]);
        input.extend(n.to_array());
        input.extend([overlap, lever_a, lever_b]);
        let speed = (jkr::pull_off_force(r_star, gamma) * dc.abs() / m_star).sqrt();
        for side in 0..2 {
            let still = wall && side == 1;
            let v = if still {
                DVec3::ZERO
            } else {
                speed * rng.random_range(0.0..3.0) * unit(rng)
            };
            let dx = if still {
                DVec3::ZERO
            } else {
                t_scale * log_uniform(rng, -2.0, 0.5) * unit(rng)
            };
            let da = if still {
                DVec3::ZERO
            } else {
                t_scale / r_star * log_uniform(rng, -2.0, 0.5) * unit(rng)
            };
            input.extend(v.to_array());
            input.extend(dx.to_array());
            input.extend(da.to_array());
        }
        let spring = if k % 5 == 0 {
            DVec3::ZERO
        } else {
            t_scale * log_uniform(rng, -1.5, 0.5) * unit(rng)
        };
        input.extend(spring.to_array());
    }
    input
}

/// `jkr_contact` (WGSL, f64) against `physics::jkr::jkr_core` on 8192 random contacts,
/// each output relative to its scale: the force and friction to the pull-off force
/// plus |F_el|, the damping's terms and k_t times the tangential lengths; the spring
/// to those lengths plus μ_d times the load over k_t; the energy to |U| + F_po|δ_c|;
/// the load to F_po + |F_el|; the contact radius to itself. Cases within 10⁻⁹ of the
/// stick/slip limit are left out. Bound 1e-12: the GPU takes its cube root as
/// exp(ln x/3) where the CPU calls `cbrt` (a few ulps apart), and the contact radius
/// amplifies that near δ_c, where dδ/da = 0. Measured on lavapipe (≈ 5000 of the cases
/// in tension): contact radius 1.0e-14, the other outputs ≤ 5.0e-15.
#[test]
fn jkr_contact_f64_matches_cpu() {
    let test = "jkr_contact_f64_matches_cpu";
    let Some(runner) = Runner::new(test, Precision::F64, &JKR) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(37);
    let n = 8192;
    let input = jkr_cases(&mut rng, n);
    let out = runner.run(&Uniform::default(), &input);
    let mut errors = Errors::default();
    let (mut tension, mut stick, mut slip) = (0, 0, 0);
    for k in 0..n {
        let x = &input[35 * k..35 * k + 35];
        let y = &out[12 * k..12 * k + 12];
        let pm = granular::PairMaterial {
            e_star: x[0],
            g_star: x[1],
            xi: x[2],
            restitution: 0.0,
            mu_s: x[3],
            mu_d: x[4],
            mu_r: 0.0,
            eta_r: 0.0,
            gamma: x[5],
        };
        let side = |k: usize| granular::ContactSide {
            x: DVec3::ZERO,
            v: v3(x, k),
            r: 0.0,
            dx: v3(x, k + 3),
            dalpha: v3(x, k + 6),
        };
        let (a, b) = (side(14), side(23));
        let inputs = granular::HertzInputs {
            pm,
            g: granular::ContactGeometry {
                r_star: x[6],
                m_star: x[7],
            },
            n: v3(x, 8),
            overlap: x[11],
            lever_a: x[12],
            lever_b: x[13],
            relative_v: a.v - b.v,
            relative_dx: a.dx - b.dx,
            dalpha_a: a.dalpha,
            dalpha_b: b.dalpha,
            spring: v3(x, 32),
        };
        let c = jkr::jkr_core(&inputs);
        let (r, e, g) = (x[6], x[0], x[5]);
        let a_r = c.contact_radius;
        let f_el = jkr::force(r, e, g, a_r);
        let po = jkr::pull_off_force(r, g);
        let damp = 2.0 * pm.xi * (2.0 * pm.e_star * x[7] * a_r).sqrt();
        let k_t = 8.0 * pm.g_star * a_r;
        let t_len = granular::carry_spring(inputs.spring, inputs.n).length()
            + a.dx.length()
            + b.dx.length()
            + x[12] * a.dalpha.length()
            + x[13] * b.dalpha.length();
        let f_terms = po + f_el.abs() + damp * (a.v.length() + b.v.length());
        // The stick test k_t |trial| ≤ μ_s load: its margin relative to its terms (a
        // sticking contact's spring is its trial).
        let margin = if c.slipping {
            // Recomputed trial length of a sliding contact.
            let slip_v = inputs.relative_dx
                + granular::rotate_minus_identity(a.dalpha, x[12] * inputs.n)
                + granular::rotate_minus_identity(b.dalpha, x[13] * inputs.n);
            let ds = slip_v - slip_v.dot(inputs.n) * inputs.n;
            let tr = granular::carry_spring(inputs.spring, inputs.n) + ds;
            (k_t * tr.length() - pm.mu_s * c.normal_force).abs() / (k_t * t_len + f_terms)
        } else {
            (k_t * c.spring.length() - pm.mu_s * c.normal_force).abs() / (k_t * t_len + f_terms)
        };
        if margin < 1e-9 {
            errors.excluded += 1;
            continue;
        }
        if x[11] < 0.0 {
            tension += 1;
        }
        if c.slipping {
            slip += 1;
        } else {
            stick += 1;
        }
        let f_scale = f_terms + k_t * t_len;
        let s_scale = t_len + pm.mu_d * (po + f_el.abs()) / k_t;
        errors.vec("force", v3(y, 0), c.force, f_scale);
        errors.vec("friction", v3(y, 3), c.friction, f_scale);
        errors.scalar(
            "energy",
            y[6],
            c.energy,
            c.energy.abs() + po * x[11].abs().max(1e-300),
        );
        errors.vec("spring", v3(y, 7), c.spring, s_scale);
        errors.scalar("load", y[10], c.normal_force, po + f_el.abs());
        errors.scalar("contact radius", y[11], a_r, a_r);
    }
    println!("{test}: {tension} in tension, {stick} stick, {slip} slip");
    assert!(tension > n / 5 && stick > n / 10 && slip > n / 10);
    errors.check(test, Precision::F64, 1e-12);
}

// ---------------------------------------------------------------------------------
// Rolling resistance: rolling_torque (shaders/common/contact.wgsl) against
// physics::rolling::rolling_torque, both models (the kernel passes the case's model;
// the engine passes the scene's ROLLING). The time step is the uniform's dt.

static ROLLING: LawKernel = LawKernel {
    name: "rolling_torque",
    body: "
    let pm = PairRecord(xs[ib + 3u], 0.0, 0.0, 0.0, 0.0, xs[ib + 1u], xs[ib + 2u], 0.0);
    let r = rolling_torque(u32(xs[ib]), pm, xs[ib + 4u], xs[ib + 5u], xs[ib + 6u],
                           in3(ib + 7u), in3(ib + 10u), xs[ib + 13u], in3(ib + 14u));
    out3(ob, r.torque);
    out3(ob + 3u, r.spring);",
    inputs: 17,
    outputs: 6,
};

/// Time step of the rolling cases (EPSD's dashpot).
const ROLLING_DT: f64 = 1e-5;

/// Random contacts for both models: μ_r from 0.01 to 1, η_r from 0 to 1, moduli over
/// four decades, radii and overlaps over two and four, normal forces about the
/// overlap's Hertz force, unit normals, rotation increments from 10⁻³ to 10 times the
/// one that loads the spring to the cap (some along the normal: pure twisting, some
/// zero), stored springs zero or of any direction and a length from 0.03 to 3 times
/// the cap (so that EPSD both holds and yields).
fn rolling_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut input = Vec::with_capacity(17 * n);
    for k in 0..n {
        let model = if k % 2 == 0 { 1.0 } else { 2.0 };
        let mu_r = log_uniform(rng, -2.0, 0.0);
        let e_star = log_uniform(rng, 6.0, 10.0);
        let r_star = log_uniform(rng, -4.0, -2.0);
        let overlap = r_star * log_uniform(rng, -6.0, -2.0);
        // f_n about the elastic Hertz force of the overlap (damping moves it).
        let f_el = (4.0 / 3.0) * e_star * (r_star * overlap).sqrt() * overlap;
        let f_n = f_el * rng.random_range(0.3..1.5);
        let k_r =
            2.25 * (4.0 / 3.0) * e_star * (r_star * overlap).sqrt() * mu_r * mu_r * r_star * r_star;
        let cap = mu_r * r_star * f_n;
        let nrm = unit(rng);
        // Increments about the rotation that loads the spring to the cap.
        let size = cap / k_r * log_uniform(rng, -3.0, 1.0);
        let dalpha = match k % 7 {
            0 => DVec3::ZERO,
            1 => nrm * size,
            _ => unit(rng) * size,
        };
        let spring = if k % 5 == 0 {
            DVec3::ZERO
        } else {
            unit(rng) * cap * log_uniform(rng, -1.5, 0.5)
        };
        input.extend([
            model,
            mu_r,
            rng.random_range(0.0..1.0),
            e_star,
            r_star,
            // The contact radius √(r*δ) the Hertz law passes.
            (r_star * overlap).sqrt(),
            f_n,
        ]);
        input.extend(nrm.to_array());
        input.extend(dalpha.to_array());
        input.push(log_uniform(rng, -12.0, -6.0));
        input.extend(spring.to_array());
    }
    input
}

/// `rolling_torque` in `precision` against its twin on 8192 random contacts. Each
/// output's scale is the sizes it is formed from: the cap μ_r R* f_n, the carried
/// spring's scale ([`carry_scale`]), k_r |Δα| and the dashpot's c|Δα|/h. Cases within
/// rounding of EPSD's yield test (|trial| = cap) are left out.
fn rolling_matches(test: &str, precision: Precision, tol: f64) {
    use varidem::model::RollingModel;
    use varidem::physics::rolling::{rolling_torque, RollingInputs};
    let Some(runner) = Runner::new(test, precision, &ROLLING) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let n = 8192;
    let mut input = rolling_cases(&mut rng, n);
    runner.round_inputs(&mut input);
    let u = Uniform {
        dt: ROLLING_DT,
        ..Default::default()
    }
    .rounded(precision);
    let out = runner.run(&u, &input);
    let margin_tol = if precision == Precision::F32 {
        1e-5
    } else {
        1e-12
    };
    let mut errors = Errors::default();
    let (mut held, mut yielded) = (0, 0);
    for k in 0..n {
        let x = &input[17 * k..17 * k + 17];
        let y = &out[6 * k..6 * k + 6];
        let c = RollingInputs {
            model: if x[0] == 1.0 {
                RollingModel::Cdt
            } else {
                RollingModel::Epsd
            },
            mu_r: x[1],
            eta_r: x[2],
            e_star: x[3],
            r_star: x[4],
            contact_radius: x[5],
            f_n: x[6],
            n: v3(x, 7),
            dalpha: v3(x, 10),
            inertia: x[13],
            h: u.dt,
            spring: v3(x, 14),
        };
        let r = rolling_torque(&c);
        let cap = c.mu_r * c.r_star * c.f_n;
        let k_n = (4.0 / 3.0) * c.e_star * c.contact_radius;
        let k_r = 2.25 * k_n * c.mu_r * c.mu_r * c.r_star * c.r_star;
        let da = c.dalpha.length();
        let damping = c.eta_r * 2.0 * (c.inertia * k_r).sqrt();
        let scale = cap + carry_scale(c.spring, c.n) + k_r * da + damping * da / c.h;
        if c.model == RollingModel::Epsd {
            let dtheta = c.dalpha - c.dalpha.dot(c.n) * c.n;
            let trial = granular::carry_spring(c.spring, c.n) - k_r * dtheta;
            if (trial.length() - cap).abs() < margin_tol * scale {
                errors.excluded += 1;
                continue;
            }
            if trial.length() <= cap {
                held += 1;
            } else {
                yielded += 1;
            }
        }
        // CDT's direction is that of Δθ, whose rounding is relative to |Δα| (the
        // normal part cancels): its torque's scale is the cap over the in-plane share.
        let cdt_scale = {
            let dtheta = c.dalpha - c.dalpha.dot(c.n) * c.n;
            if dtheta.length() > 0.0 {
                cap * (da / dtheta.length()).max(1.0)
            } else {
                cap
            }
        };
        let t_scale = if c.model == RollingModel::Cdt {
            cdt_scale
        } else {
            scale
        };
        errors.vec("torque", v3(y, 0), r.torque, t_scale);
        errors.vec("spring", v3(y, 3), r.spring, scale);
    }
    println!("{test}: EPSD {held} held, {yielded} yielded");
    assert!(held > n / 10 && yielded > n / 10, "{held} {yielded}");
    errors.check(test, precision, tol);
}

/// `rolling_torque` (WGSL, f64) against `physics::rolling::rolling_torque` on 8192
/// contacts, half CDT, half EPSD (≈ 2800 held, 1300 yielded). Bound 1e-13; measured
/// on lavapipe: torque 4.2e-16, spring 6.6e-17.
#[test]
fn rolling_torque_f64_matches_cpu() {
    rolling_matches("rolling_torque_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// `rolling_torque` in f32 against the f64 twin on the same (rounded) inputs. Bound
/// 2e-6, the contact laws'; measured on lavapipe: torque 2.0e-7, spring 7.9e-8 (162
/// cases within 1e-5 of EPSD's yield test left out).
#[test]
fn rolling_torque_f32_matches_cpu() {
    rolling_matches("rolling_torque_f32_matches_cpu", Precision::F32, 2e-6);
}

// ---------------------------------------------------------------------------------
// Binder bonds: bond_law (shaders/common/laws.wgsl) against physics::binder::bond_forces.

static BOND: LawKernel = LawKernel {
    name: "bond_law",
    body: "
    let bond = BondRecord(0u, 1u, xs[ib], xs[ib + 1u], xs[ib + 2u], xs[ib + 3u],
                          xs[ib + 4u], xs[ib + 5u], xs[ib + 6u], xs[ib + 7u], xs[ib + 8u],
                          xs[ib + 9u], xs[ib + 10u], xs[ib + 11u], xs[ib + 12u]);
    let z = vec3<real>(0.0);
    let d = separation(in3(ib + 13u), z, in3(ib + 16u), z);
    let r = bond_law(bond, d, in3(ib + 19u), in3(ib + 22u), xs[ib + 25u] != 0.0);
    out3(ob, r.force_i);
    out3(ob + 3u, r.moment_i);
    out3(ob + 6u, r.moment_j);
    ys[ob + 9u] = r.e_bend;
    ys[ob + 10u] = r.e_axial;
    ys[ob + 11u] = r.e_shear;
    ys[ob + 12u] = select(real(0.0), real(1.0), r.ok);
    ys[ob + 13u] = r.tension;
    ys[ob + 14u] = r.shear;
    ys[ob + 15u] = r.bend;
    ys[ob + 16u] = r.twist;",
    inputs: 26,
    outputs: 17,
};

/// Random bonds: stiffnesses over five decades (some zero), rest lengths from 1 mm to
/// 1 m, axial strains of either sign from 1e-4 to 0.3, rotations up to |α| = 3 (170°),
/// rest directions equal (compact bonds) or not, rest rotations zero or not, both shear
/// forms, and a few whose bending composition is a half turn (`ok` false).
fn bond_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut input = Vec::with_capacity(26 * n);
    for k in 0..n {
        let mut stiff = [0.0; 3];
        for s in &mut stiff {
            *s = if rng.random_range(0..8) == 0 {
                0.0
            } else {
                log_uniform(rng, -2.0, 3.0)
            };
        }
        let rest_length = log_uniform(rng, -3.0, 0.0);
        let dir_i = unit(rng);
        let dir_j = if k % 2 == 0 { dir_i } else { unit(rng) };
        let rest_rotation = if k % 3 == 0 {
            DVec3::ZERO
        } else {
            unit(rng) * log_uniform(rng, -3.0, 0.3)
        };
        let x_i = unit(rng) * rest_length * rng.random_range(0.0..5.0);
        let strain = rng.random_range(-1.0..1.0f64).signum() * log_uniform(rng, -4.0, -0.5);
        let x_j = x_i + unit(rng) * rest_length * (1.0 + strain);
        let mut a_i = unit(rng) * log_uniform(rng, -4.0, 0.48);
        let a_j = unit(rng) * log_uniform(rng, -4.0, 0.48);
        let mut rest = rest_rotation;
        if k % 512 == 7 {
            // (−α_i) ⊕ c₀ with (−α_i)·c₀ = 4: a half turn.
            a_i = DVec3::new(-2.0, 0.0, 0.0);
            rest = DVec3::new(2.0, 0.0, 0.0);
        }
        input.extend(stiff);
        input.push(rest_length);
        for v in [dir_i, dir_j, rest, x_i, x_j, a_i, a_j] {
            input.extend(v.to_array());
        }
        input.push((k % 4 >= 2) as u32 as f64);
    }
    input
}

/// `bond_law` in `precision` against `bond_forces` on 8192 random bonds, and its loads
/// (issue 47) against `bond_forces_and_loads`' [`binder::LoadParts::loads`]. Scales:
/// force, tension and shear force `(K^a + K^s)/L₀` (the force of unit strain: the axial
/// strain `|d|/L₀ − 1` is a cancellation of the law itself), moments, bend and twist
/// `K^m + K^s`, energies `K^m + K^a + K^s`.
fn bond_law_matches(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &BOND) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let n = 8192;
    let mut input = bond_cases(&mut rng, n);
    runner.round_inputs(&mut input);
    let out = runner.run(&Uniform::default(), &input);
    let mut errors = Errors::default();
    let (mut printed, mut half_turns) = (0, 0);
    for k in 0..n {
        let x = &input[26 * k..26 * k + 26];
        let y = &out[17 * k..17 * k + 17];
        let bond = Bond {
            i: 0,
            j: 1,
            k_bend: x[0],
            k_axial: x[1],
            k_shear: x[2],
            rest_length: x[3],
            rest_dir_i: v3(x, 4),
            rest_dir_j: v3(x, 7),
            rest_rotation: v3(x, 10),
        };
        let shear = if x[25] != 0.0 {
            printed += 1;
            ShearForm::Printed
        } else {
            ShearForm::Objective
        };
        let r = binder::bond_forces(&bond, v3(x, 13), v3(x, 16), v3(x, 19), v3(x, 22), shear);
        assert_eq!(
            y[12] == 1.0,
            r.is_some(),
            "{test}: half-turn check differs at {k}"
        );
        let Some(r) = r else {
            half_turns += 1;
            continue;
        };
        let f_scale = (bond.k_axial + bond.k_shear) / bond.rest_length;
        let m_scale = bond.k_bend + bond.k_shear;
        let e_scale = bond.k_bend + bond.k_axial + bond.k_shear;
        errors.vec("force_i", v3(y, 0), r.force_i, f_scale);
        errors.vec("moment_i", v3(y, 3), r.moment_i, m_scale);
        errors.vec("moment_j", v3(y, 6), r.moment_j, m_scale);
        errors.scalar("e_bend", y[9], r.e_bend, e_scale);
        errors.scalar("e_axial", y[10], r.e_axial, e_scale);
        errors.scalar("e_shear", y[11], r.e_shear, e_scale);
        let (same, parts) =
            binder::bond_forces_and_loads(&bond, v3(x, 13), v3(x, 16), v3(x, 19), v3(x, 22), shear)
                .expect("no half turn");
        assert_eq!(same, r, "{test}: the law with loads differs at {k}");
        let l = parts.loads(&bond, v3(x, 16) - v3(x, 13));
        errors.scalar("tension", y[13], l.tension, f_scale);
        errors.scalar("shear", y[14], l.shear, f_scale);
        errors.scalar("bend", y[15], l.bend, m_scale);
        errors.scalar("twist", y[16], l.twist, m_scale);
    }
    println!("{test}: {printed} printed shear, {half_turns} half turns");
    assert!(printed > n / 3 && half_turns >= 8);
    errors.check(test, precision, tol);
}

/// `bond_law` (WGSL, f64) against `physics::binder::bond_forces`, both shear forms,
/// 8192 bonds (16 half turns). Measured on lavapipe: force and axial and shear
/// energies 0, moments 7.4e-16, bending energy 1.8e-15 (`atan_real` against libm);
/// loads: tension and shear force 0, bend 8.8e-16, twist 8.7e-16.
#[test]
fn bond_law_f64_matches_cpu() {
    bond_law_matches("bond_law_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// `bond_law` in f32 against the f64 twin. Bound 5e-6: the bending strain goes through
/// two compositions and `to_rotation_vector` (f32 `atan_real`), the shear through
/// rotations. Measured: force 8.8e-7, moments 4.4e-7, energies 8.6e-7, loads 6.0e-7
/// (lavapipe);
/// bending energy 1.6e-6 on llvmpipe's OpenGL.
#[test]
fn bond_law_f32_matches_cpu() {
    bond_law_matches("bond_law_f32_matches_cpu", Precision::F32, 5e-6);
}

// ---------------------------------------------------------------------------------
// Binder contacts: binder_pair and binder_wall (laws.wgsl) against
// physics::contact::{binder_pair, binder_wall}.

static BINDER: LawKernel = LawKernel {
    name: "binder_contact",
    body: "
    let z = vec3<real>(0.0);
    let p = binder_pair(xs[ib], separation(in3(ib + 4u), z, in3(ib + 1u), z), xs[ib + 7u],
                        xs[ib + 8u]);
    out3(ob, p.force);
    ys[ob + 3u] = p.energy;
    ys[ob + 4u] = select(real(0.0), real(1.0), p.touching);
    let w = WallRecord(xs[ib + 9u], xs[ib + 10u], xs[ib + 11u], xs[ib + 12u], xs[ib + 13u],
                       xs[ib + 14u], xs[ib + 15u], 0.0);
    let c = binder_wall(w, wall_offset(w, in3(ib + 1u), z), xs[ib + 7u]);
    out3(ob + 5u, c.force);
    ys[ob + 8u] = c.energy;
    ys[ob + 9u] = select(real(0.0), real(1.0), c.touching);",
    inputs: 16,
    outputs: 10,
};

/// Random binder contacts: stiffness over four decades, radii over two, centre
/// distances from 0 (coincident centres, no direction) to 1.2 reaches; the wall at a
/// signed distance from −0.5 r (centre behind the plane) to 1.3 r.
fn binder_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut input = Vec::with_capacity(16 * n);
    for k in 0..n {
        let stiffness = log_uniform(rng, 0.0, 4.0);
        let (r_i, r_j) = (log_uniform(rng, -3.0, -1.0), log_uniform(rng, -3.0, -1.0));
        let x_i = unit(rng) * rng.random_range(0.0..0.5);
        let dist = if k % 97 == 0 {
            0.0
        } else {
            (r_i + r_j) * rng.random_range(0.0..1.2)
        };
        let x_j = x_i + unit(rng) * dist;
        let normal = unit(rng);
        let h = r_i * rng.random_range(-0.5..1.3);
        // The point within a few radii of the foot of the perpendicular: one far away
        // costs f32 digits of h (the inputs' conditioning, the same on both sides).
        let point =
            x_i - h * normal + normal.any_orthonormal_vector() * r_i * rng.random_range(-3.0..3.0);
        input.push(stiffness);
        input.extend(x_i.to_array());
        input.extend(x_j.to_array());
        input.extend([r_i, r_j]);
        input.extend(point.to_array());
        input.extend(normal.to_array());
        input.push(log_uniform(rng, 0.0, 4.0));
    }
    input
}

/// `binder_pair` and `binder_wall` in `precision` against their twins on 8192 random
/// cases. Scales: force `K/R` (the force at full overlap; `s = 1 − |d|/R` is the law's
/// own cancellation), energy `K`. Whether the pair touches is compared away from the
/// boundary (a relative band of 1e-12 in f64, 1e-5 in f32, where the force is ~0 either
/// way); the values everywhere (a pair that does not touch has force and energy 0).
fn binder_contact_matches(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &BINDER) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let n = 8192;
    let mut input = binder_cases(&mut rng, n);
    runner.round_inputs(&mut input);
    let out = runner.run(&Uniform::default(), &input);
    let band = if precision == Precision::F32 {
        1e-5
    } else {
        1e-12
    };
    let mut errors = Errors::default();
    let (mut pairs, mut walls) = (0, 0);
    for k in 0..n {
        let x = &input[16 * k..16 * k + 16];
        let y = &out[10 * k..10 * k + 10];
        let (stiffness, x_i, x_j, r_i, r_j) = (x[0], v3(x, 1), v3(x, 4), x[7], x[8]);
        let pair = contact::binder_pair(stiffness, x_i, x_j, r_i, r_j);
        let reach = r_i + r_j;
        let s = 1.0 - x_i.distance(x_j) / reach;
        if s.abs() > band {
            assert_eq!(
                y[4] == 1.0,
                pair.is_some(),
                "{test}: pair contact differs at {k}"
            );
        } else {
            errors.excluded += 1;
        }
        pairs += usize::from(pair.is_some());
        let (e, f) = pair.unwrap_or_default();
        errors.vec("pair force", v3(y, 0), f, stiffness / reach);
        errors.scalar("pair energy", y[3], e, stiffness);
        let wall = Wall {
            point: v3(x, 9),
            normal: v3(x, 12),
            stiffness: x[15],
            material: None,
            motion: Default::default(),
        };
        let w = contact::binder_wall(&wall, x_i, r_i);
        if (1.0 - wall.distance(x_i) / r_i).abs() > band {
            assert_eq!(
                y[9] == 1.0,
                w.is_some(),
                "{test}: wall contact differs at {k}"
            );
        } else {
            errors.excluded += 1;
        }
        walls += usize::from(w.is_some());
        let (e, f) = w.unwrap_or_default();
        errors.vec("wall force", v3(y, 5), f, wall.stiffness / r_i);
        errors.scalar("wall energy", y[8], e, wall.stiffness);
    }
    println!("{test}: {pairs} pairs and {walls} walls touching of {n}");
    assert!(pairs > n / 2 && pairs < n * 19 / 20 && walls > n / 2 && walls < n * 19 / 20);
    errors.check(test, precision, tol);
}

/// `binder_pair`, `binder_wall` (WGSL, f64) against `physics::contact` (≈ 6800 of
/// 8192 pairs and walls touching). Measured on lavapipe: 0 (the same bits).
#[test]
fn binder_contact_f64_matches_cpu() {
    binder_contact_matches("binder_contact_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// `binder_pair`, `binder_wall` in f32 against the f64 twins. Bound 2e-6; measured:
/// pair force 1.9e-7, energy 8.2e-8, wall force 3.9e-7, energy 3.4e-7.
#[test]
fn binder_contact_f32_matches_cpu() {
    binder_contact_matches("binder_contact_f32_matches_cpu", Precision::F32, 2e-6);
}

// ---------------------------------------------------------------------------------
// Near field: near_field (contact.wgsl, reads params.nf_*) against NearField::pair.

static NEAR: LawKernel = LawKernel {
    name: "near_field",
    body: "
    let r = near_field(in3(ib));
    out3(ob, r.force);
    ys[ob + 3u] = r.energy;",
    inputs: 3,
    outputs: 4,
};

/// Parameter sets of the near-field test: both terms with general exponents, the
/// attractive exponent 1 (the logarithmic energy), the repulsive one 1 with no
/// attraction.
fn near_sets() -> [NearField; 3] {
    [
        NearField {
            kappa_attractive: 1e-3,
            lambda_attractive: 2.0,
            kappa_repulsive: 1e-9,
            lambda_repulsive: 6.0,
            cutoff: 0.05,
        },
        NearField {
            kappa_attractive: 2e-2,
            lambda_attractive: 1.0,
            kappa_repulsive: 3e-5,
            lambda_repulsive: 2.5,
            cutoff: 0.02,
        },
        NearField {
            kappa_attractive: 0.0,
            lambda_attractive: 0.0,
            kappa_repulsive: 5e-4,
            lambda_repulsive: 1.0,
            cutoff: 0.1,
        },
    ]
}

/// `near_field` in `precision` against `NearField::pair`, 4096 separations per set from
/// 0 (no direction) to 1.1 cutoffs. Scales: force `κ₁d^{−λ₁} + κ₂d^{−λ₂}` (the two
/// terms cancel at the equilibrium distance), energy the sizes of the powers each term
/// is a difference of, `κ(c^{1−λ} + d^{1−λ})/|1−λ|` (they cancel as `d` nears the
/// cutoff `c`; for `λ = 1`, `κ(|ln(c/d)| + 1)`: the rounding of `c/d`).
fn near_field_matches(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &NEAR) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    let n = 4096;
    let mut errors = Errors::default();
    let mut inside = 0;
    for set in near_sets() {
        let u = Uniform {
            near: Some(set),
            ..Default::default()
        }
        .rounded(precision);
        let nf = u.near.unwrap();
        let mut input = Vec::with_capacity(3 * n);
        for k in 0..n {
            let d = if k == 0 {
                0.0
            } else {
                nf.cutoff * rng.random_range(0.02..1.1)
            };
            input.extend((unit(&mut rng) * d).to_array());
        }
        runner.round_inputs(&mut input);
        let out = runner.run(&u, &input);
        for k in 0..n {
            let d = v3(&input, 3 * k);
            let y = &out[4 * k..4 * k + 4];
            let dist = d.length();
            let band = if precision == Precision::F32 {
                1e-6
            } else {
                1e-14
            };
            if ((dist - nf.cutoff) / nf.cutoff).abs() < band {
                errors.excluded += 1;
                continue;
            }
            let r = nf.pair(DVec3::ZERO, d);
            inside += usize::from(r.is_some());
            let (e, f) = r.unwrap_or_default();
            let term = |kappa: f64, lambda: f64| {
                if (lambda - 1.0).abs() < 1e-12 {
                    kappa * ((nf.cutoff / dist).ln().abs() + 1.0)
                } else {
                    kappa * (nf.cutoff.powf(1.0 - lambda) + dist.powf(1.0 - lambda))
                        / (1.0 - lambda).abs()
                }
            };
            let f_scale = nf.kappa_attractive * dist.powf(-nf.lambda_attractive)
                + nf.kappa_repulsive * dist.powf(-nf.lambda_repulsive);
            let e_scale = term(nf.kappa_attractive, nf.lambda_attractive)
                + term(nf.kappa_repulsive, nf.lambda_repulsive);
            errors.vec("force", v3(y, 0), f, f_scale);
            errors.scalar("energy", y[3], e, e_scale);
        }
    }
    println!("{test}: {inside} of {} inside the cutoff", 3 * n);
    errors.check(test, precision, tol);
}

/// `near_field` (WGSL, f64, `pow_real`/`ln_real`) against `NearField::pair` (libm's
/// `powf`, `ln`). Bound 1e-13: the f64 pow's error is the rounding of `y ln x`
/// amplified by `|y ln x|` (up to 41 here; `tests/gpu_math.rs`). Measured on lavapipe:
/// force 5.8e-15, energy 4.8e-15.
#[test]
fn near_field_f64_matches_cpu() {
    near_field_matches("near_field_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// `near_field` in f32 against the f64 twin. Bound 2e-5 (f32 pow: 6e-8 × |y ln x| ≤ 41,
/// for each of two terms). Measured: force 3.9e-6, energy 4.0e-6 (lavapipe), 4.7e-6
/// (OpenGL).
#[test]
fn near_field_f32_matches_cpu() {
    near_field_matches("near_field_f32_matches_cpu", Precision::F32, 2e-5);
}

// ---------------------------------------------------------------------------------
// Integrator halves: predict_half and correct_half (shaders/common/integrator.wgsl,
// read params.dt, integrator, flags, domain) against integrators::{predict, correct}.

static INTEGRATOR: LawKernel = LawKernel {
    name: "integrator",
    body: "
    let flags = u32(xs[ib]);
    let m = xs[ib + 1u];
    let jj = xs[ib + 2u];
    let s = Velocities(in3(ib + 9u), in3(ib + 12u), vec3<real>(0.0), vec3<real>(0.0));
    let p = predict_half(flags, m, jj, in3(ib + 3u), in3(ib + 6u), s, vec3<real>(0.0),
                         in3(ib + 15u), in3(ib + 18u));
    out3(ob, p.x);
    out3(ob + 3u, p.v);
    out3(ob + 6u, p.a);
    out3(ob + 9u, p.w);
    ys[ob + 12u] = select(real(p.err), real(-1.0), p.err == NO_ERROR);
    ys[ob + 13u] = select(real(0.0), real(1.0), p.removed);
    let c = correct_half(flags, m, jj, s, in3(ib + 15u), in3(ib + 18u));
    out3(ob + 14u, c.v);
    out3(ob + 17u, c.w);",
    inputs: 21,
    outputs: 20,
};

/// The time step of the integrator test: a power of two, so that `h Ω` of the
/// half-turn cases is exact.
const H: f64 = 1.0 / 1024.0;

/// Random particles for the integrator halves: flags held, rotation-locked, pendulum
/// (which the halves ignore) and combinations; masses over five decades; kicks from
/// 1e-3 to 1 of the velocity; angular speeds up to 1.3/h, so map (23) leaves its domain
/// (`h²|Ω|² ≥ 1`) in some cases; a fifth of the particles near the domain box's faces,
/// some leaving it; a few exact half turns `α·Δα = 4`.
fn integrator_cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let flag_sets = [
        0,
        0,
        FLAG_HELD,
        FLAG_NO_ROTATION,
        FLAG_HELD | FLAG_NO_ROTATION,
        FLAG_PENDULUM,
        FLAG_PENDULUM | FLAG_HELD,
    ];
    let mut input = Vec::with_capacity(21 * n);
    for k in 0..n {
        let mut flags = flag_sets[rng.random_range(0..flag_sets.len())];
        let m = log_uniform(rng, -3.0, 2.0);
        let jj = m * log_uniform(rng, -5.0, -1.0);
        let mut x0 = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if k % 5 == 0 {
            x0[k % 3] = (1.0 - rng.random_range(0.0..0.02)) * if k % 2 == 0 { 1.0 } else { -1.0 };
        }
        let mut a0 = unit(rng) * log_uniform(rng, -3.0, 0.5);
        let v = unit(rng) * log_uniform(rng, -2.0, 1.0);
        let mut w = unit(rng) * log_uniform(rng, -1.0, 3.1);
        let f = unit(rng) * m * v.length() / H * log_uniform(rng, -3.0, 0.0);
        let mut t = unit(rng) * jj * w.length() / H * log_uniform(rng, -3.0, -0.5);
        if k % 61 == 0 {
            // α·Δα = 4 exactly: a half turn (map 23: h²|Ω|² = 4, out of its domain).
            flags = 0;
            a0 = DVec3::new(2.0, 0.0, 0.0);
            w = DVec3::new(2.0 / H, 0.0, 0.0);
            t = DVec3::ZERO;
        }
        input.extend([f64::from(flags), m, jj]);
        for v in [x0, a0, v, w, f, t] {
            input.extend(v.to_array());
        }
    }
    input
}

/// The integrator configurations: each map, without a domain, with one that stops the
/// run and with one that removes leaving particles.
fn integrator_configs() -> Vec<(IntegratorKind, Uniform)> {
    let box_ = Some((DVec3::splat(-1.0), DVec3::splat(1.0)));
    let mut out = Vec::new();
    for (kind, code) in [
        (IntegratorKind::Variational, INTEGRATOR_VARIATIONAL),
        (
            IntegratorKind::VariationalExact,
            INTEGRATOR_VARIATIONAL_EXACT,
        ),
        (IntegratorKind::SymplecticEuler, INTEGRATOR_SYMPLECTIC_EULER),
    ] {
        for (flags, domain) in [
            (0, None),
            (PARAM_DOMAIN, box_),
            (PARAM_DOMAIN | PARAM_DOMAIN_REMOVE, box_),
        ] {
            out.push((
                kind,
                Uniform {
                    dt: H,
                    integrator: code,
                    flags,
                    domain,
                    near: None,
                },
            ));
        }
    }
    out
}

/// `predict_half` and `correct_half` in `precision` against `integrators::predict` and
/// `correct` (map 25's, which the GPU's callers run for maps 23 and 25), 4096 particles
/// per configuration. The domain check the CPU backend does after `predict`
/// (`CpuBackend::integrate_predict`: a leaving particle is an error, or removed: parked
/// at its new position with its new velocity, not spinning, its rotation as before) is reproduced here from
/// [`varidem::model::Domain::contains`].
///
/// Scales: x `|x₀| + h|v|`, v `|v₀| + kick |F|/m`, Ω likewise, α the composition's
/// terms `(|α₀| + |Δα| + ½|α₀||Δα|) · 4/|4 − α₀·Δα|`.
///
/// Left out: cases within rounding of the box or of map (23)'s domain, and those that
/// fail in both the rotation update and the domain (the CPU reports the rotation fault,
/// or, with `on_exit = "remove"`, fails the step; `predict_half` checks the domain
/// first: it reports leaving, or removes the particle).
fn integrator_matches(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &INTEGRATOR) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(27);
    let n = 4096;
    let band = if precision == Precision::F32 {
        1e-5
    } else {
        1e-13
    };
    let mut errors = Errors::default();
    let mut outcomes = [0usize; 5];
    let mut both = 0;
    for (kind, uniform) in integrator_configs() {
        let u = uniform.rounded(precision);
        let mut input = integrator_cases(&mut rng, n);
        runner.round_inputs(&mut input);
        let out = runner.run(&u, &input);
        let h = u.dt;
        for k in 0..n {
            let x = &input[21 * k..21 * k + 21];
            let y = &out[20 * k..20 * k + 20];
            let flags = x[0] as u32;
            let body = Body {
                mass: x[1],
                inertia: x[2],
                held: flags & FLAG_HELD != 0,
                fixed_rotation: flags & FLAG_NO_ROTATION != 0,
            };
            let s = Kinematics {
                x: v3(x, 3),
                alpha: v3(x, 6),
                v: v3(x, 9),
                omega: v3(x, 12),
            };
            let (f, t) = (v3(x, 15), v3(x, 18));
            // Correct half.
            let (vc, wc) =
                integrators::correct(IntegratorKind::Variational, h, body, s.v, s.omega, f, t);
            let kick = 0.5 * h;
            errors.vec(
                "correct v",
                v3(y, 14),
                vc,
                s.v.length() + kick * f.length() / body.mass,
            );
            errors.vec(
                "correct Ω",
                v3(y, 17),
                wc,
                s.omega.length() + kick * t.length() / body.inertia,
            );
            // Predict half, then the domain as the CPU backend checks it.
            let kick = if kind == IntegratorKind::SymplecticEuler {
                h
            } else {
                0.5 * h
            };
            let w_new = s.omega + (kick / body.inertia) * t;
            let q = h * h * w_new.length_squared();
            let near_q = kind == IntegratorKind::VariationalExact
                && !body.fixed_rotation
                && (q - 1.0).abs() < band;
            let predicted = integrators::predict(kind, h, body, s, f, t);
            let x_new = if body.held {
                s.x
            } else {
                s.x + h * (s.v + (kick / body.mass) * f)
            };
            let domain = u.domain.filter(|_| u.flags & PARAM_DOMAIN != 0);
            let leaves = domain.is_some_and(|(lo, hi)| {
                !varidem::model::Domain {
                    min: lo,
                    max: hi,
                    remove: false,
                }
                .contains(x_new)
            });
            let near_box = domain.is_some_and(|(lo, hi)| {
                let gap = (x_new - lo).min_element().min((hi - x_new).min_element());
                gap.abs() < band
            });
            if near_q || near_box {
                errors.excluded += 1;
                continue;
            }
            let remove = u.flags & PARAM_DOMAIN_REMOVE != 0;
            let code = y[12];
            match predicted {
                Err(e) => {
                    if leaves {
                        both += 1;
                        continue;
                    }
                    let want = match e {
                        StepFault::RotationDomain(_) => ERR_ROTATION_DOMAIN,
                        StepFault::HalfTurn => ERR_HALF_TURN,
                        // Only bodies with a full inertia tensor solve by Newton.
                        StepFault::NoConvergence(_) => unreachable!("spheres"),
                    };
                    outcomes[if want == ERR_HALF_TURN { 4 } else { 3 }] += 1;
                    assert_eq!(code, f64::from(want), "{test}: {kind:?} case {k}: {e:?}");
                }
                Ok(_) if leaves && !remove => {
                    outcomes[2] += 1;
                    assert_eq!(
                        code,
                        f64::from(ERR_LEFT_DOMAIN),
                        "{test}: {kind:?} case {k}"
                    );
                }
                Ok(p) => {
                    assert_eq!(code, -1.0, "{test}: {kind:?} case {k}: error {code}");
                    assert_eq!(y[13] == 1.0, leaves, "{test}: {kind:?} case {k}: removal");
                    let p = if leaves {
                        outcomes[1] += 1;
                        // Parked where it left with its exit velocity, α as before.
                        Kinematics {
                            x: p.x,
                            v: p.v,
                            alpha: s.alpha,
                            omega: DVec3::ZERO,
                        }
                    } else {
                        outcomes[0] += 1;
                        p
                    };
                    let da = integrators::increments(kind, h, p.v, p.omega).1;
                    let dot = s.alpha.dot(da);
                    let a_scale =
                        (s.alpha.length() + da.length() + 0.5 * s.alpha.length() * da.length())
                            * 4.0
                            / (4.0 - dot).abs();
                    errors.vec("predict x", v3(y, 0), p.x, s.x.length() + h * p.v.length());
                    errors.vec(
                        "predict v",
                        v3(y, 3),
                        p.v,
                        s.v.length() + kick * f.length() / body.mass,
                    );
                    errors.vec("predict α", v3(y, 6), p.alpha, a_scale);
                    errors.vec(
                        "predict Ω",
                        v3(y, 9),
                        p.omega,
                        s.omega.length() + kick * t.length() / body.inertia,
                    );
                }
            }
        }
    }
    println!(
        "{test}: {} moved, {} removed, {} left the domain (error), {} out of map (23)'s domain, {} half turns; {both} failing in both rotation and domain",
        outcomes[0], outcomes[1], outcomes[2], outcomes[3], outcomes[4]
    );
    assert!(outcomes.iter().all(|&c| c >= 20), "{outcomes:?}");
    errors.check(test, precision, tol);
}

/// `predict_half`, `correct_half` (WGSL, f64) against `integrators::predict`,
/// `correct` for maps (23), (25), (27), with and without a domain: 9 × 4096 particles
/// (≈ 36000 moved, 29 removed, 28 leaving with an error, 394 out of map (23)'s domain,
/// 406 half turns, 3 failing both ways and left out). Measured on lavapipe: 0 (the
/// same bits).
#[test]
fn integrator_f64_matches_cpu() {
    integrator_matches("integrator_f64_matches_cpu", Precision::F64, TOL_F64);
}

/// The integrator halves in f32 (compensated sums with zero compensation terms: one
/// rounding per update) against the f64 twins. Bound 2e-6; measured: x, v, Ω 7.0e-8,
/// α 2.6e-7 (lavapipe), 3.7e-7 (OpenGL); 7 cases within 1e-5 of the box or of map
/// (23)'s domain left out.
#[test]
fn integrator_f32_matches_cpu() {
    integrator_matches("integrator_f32_matches_cpu", Precision::F32, 2e-6);
}

// ---------------------------------------------------------------------------------
// Rotation helpers of the contact law: rotate_minus_identity and carry_spring
// (contact.wgsl), and rotate_inverse (rodrigues.wgsl, not in tests/gpu_math.rs),
// against physics::granular and math::rodrigues.

static ROTATIONS: LawKernel = LawKernel {
    name: "rotations",
    body: "
    out3(ob, rotate_minus_identity(in3(ib), in3(ib + 3u)));
    out3(ob + 3u, carry_spring(in3(ib + 6u), in3(ib + 9u)));
    out3(ob + 6u, rotate_inverse(in3(ib), in3(ib + 3u)));",
    inputs: 12,
    outputs: 9,
};

/// The rotation helpers in `precision` on 8192 random cases: rotation vectors from
/// 1e-6 to 10, springs zero, along an axis-aligned normal (carried to zero) or of any
/// direction. Scales: `(R − I)v` by `|α||v|(1 + |α|/2) c`, the carried spring by
/// [`carry_scale`] (`|s|` over the sine of its angle with `n`), `R⁻¹v` by `|v|`.
fn rotations_match(test: &str, precision: Precision, tol: f64) {
    let Some(runner) = Runner::new(test, precision, &ROTATIONS) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(28);
    let n = 8192;
    let mut input = Vec::with_capacity(12 * n);
    for k in 0..n {
        let alpha = unit(&mut rng) * log_uniform(&mut rng, -6.0, 1.0);
        let v = unit(&mut rng) * log_uniform(&mut rng, -3.0, 1.0);
        let (s, nrm) = match k % 4 {
            0 => (DVec3::ZERO, unit(&mut rng)),
            1 => {
                let axis = [DVec3::X, DVec3::NEG_Y, DVec3::Z][k % 3];
                (axis * rng.random_range(-2.0..2.0), axis)
            }
            _ => (
                unit(&mut rng) * log_uniform(&mut rng, -6.0, 0.0),
                unit(&mut rng),
            ),
        };
        for u in [alpha, v, s, nrm] {
            input.extend(u.to_array());
        }
    }
    runner.round_inputs(&mut input);
    let out = runner.run(&Uniform::default(), &input);
    let mut errors = Errors::default();
    for k in 0..n {
        let x = &input[12 * k..12 * k + 12];
        let y = &out[9 * k..9 * k + 9];
        let (alpha, v, s, nrm) = (v3(x, 0), v3(x, 3), v3(x, 6), v3(x, 9));
        let a = alpha.length();
        let c = 4.0 / (4.0 + a * a);
        errors.vec(
            "rotate_minus_identity",
            v3(y, 0),
            granular::rotate_minus_identity(alpha, v),
            a * v.length() * (1.0 + 0.5 * a) * c,
        );
        errors.vec(
            "carry_spring",
            v3(y, 3),
            granular::carry_spring(s, nrm),
            carry_scale(s, nrm),
        );
        errors.vec(
            "rotate_inverse",
            v3(y, 6),
            rodrigues::rotate_inverse(alpha, v),
            v.length(),
        );
    }
    errors.check(test, precision, tol);
}

/// `rotate_minus_identity`, `carry_spring`, `rotate_inverse` (WGSL, f64) against their
/// twins. Measured on lavapipe: 0 (the same bits).
#[test]
fn rotations_f64_match_cpu() {
    rotations_match("rotations_f64_match_cpu", Precision::F64, TOL_F64);
}

/// The rotation helpers in f32 against the f64 twins. Bound 2e-6; measured:
/// `rotate_minus_identity` 2.3e-7, `carry_spring` 1.4e-7, `rotate_inverse` 3.3e-7.
#[test]
fn rotations_f32_match_cpu() {
    rotations_match("rotations_f32_match_cpu", Precision::F32, 2e-6);
}
