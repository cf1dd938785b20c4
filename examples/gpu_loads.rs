//! How a GPU adapter pays for the loads of a contact partner's data, the measurement
//! behind the vec4 state layout (README, *Memory layout* under GPU backend):
//! `cargo run --release --example gpu_loads [adapter]`.
//!
//! 10⁵ invocations each read the data of 6 partners at fixed id offsets (±1, ±158,
//! ±25 000, as in a lattice-ordered bed), 16 reals per partner, laid out as 16 scalar
//! loads, as 4 vec4 loads, or as 4 texel fetches of an `rgba32float` texture; and
//! 15 values as the contact pass used to read them (15 scalar loads from six arrays)
//! against the vec4 layout (three vec4 and one scalar). Times are per invocation and
//! partner, over 20 dispatches, for three rounds.

use wgpu::util::DeviceExt;

/// Invocations.
const N: u32 = 100_000;
/// Texture width (texels).
const W: u32 = 1024;

fn main() {
    let adapter = std::env::args().nth(1);
    let ctx = match varidem::gpu::context::GpuContext::new(adapter.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gpu_loads: {e}");
            std::process::exit(1);
        }
    };
    println!("adapter: {}", ctx.summary.name);
    let (dev, q) = (&ctx.device, &ctx.queue);
    let h = N.div_ceil(W);
    let data: Vec<f32> = (0..W * h * 16).map(|k| (k % 97) as f32 * 0.01).collect();
    let reals = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("reals"),
        contents: bytemuck::cast_slice(&data),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let out = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size: u64::from(N) * 4,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let size = wgpu::Extent3d {
        width: W,
        height: h,
        depth_or_array_layers: 1,
    };
    let tex = dev.create_texture(&wgpu::TextureDescriptor {
        label: Some("texels"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba32Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    q.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture: &tex,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        bytemuck::cast_slice(&data[..(W * h * 4) as usize]),
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(W * 16),
            rows_per_image: Some(h),
        },
        size,
    );
    let view = tex.create_view(&Default::default());
    let kernel = |load: &str| {
        format!(
            "@group(0) @binding(0) var<storage, read> s: array<f32>;
@group(0) @binding(1) var<storage, read> v4: array<vec4<f32>>;
@group(0) @binding(2) var t: texture_2d<f32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = g.x;
    if (i >= {N}u) {{ return; }}
    var acc = vec4<f32>(0.0);
    let offs = array<u32, 6>(1u, 158u, 25000u, {N}u - 1u, {N}u - 158u, {N}u - 25000u);
    for (var k = 0u; k < 6u; k++) {{
        let j = (i + offs[k]) % {N}u;
        {load}
    }}
    o[i] = acc.x + acc.y + acc.z + acc.w;
}}"
        )
    };
    // (name, kernel, bindings used besides the output)
    let cases: [(&str, String, &[u32]); 5] = [
        (
            "16 reals, 16 scalar loads",
            kernel("for (var c = 0u; c < 4u; c++) { let e = 16u * j + 4u * c; acc += vec4<f32>(s[e], s[e + 1u], s[e + 2u], s[e + 3u]); }"),
            &[0],
        ),
        (
            "16 reals, 4 vec4 loads",
            kernel("for (var c = 0u; c < 4u; c++) { acc += v4[4u * j + c]; }"),
            &[1],
        ),
        (
            "16 reals, 4 texel fetches",
            kernel("for (var c = 0u; c < 4u; c++) { let e = (4u * j + c) % (1024u * 98u); acc += textureLoad(t, vec2<u32>(e % 1024u, e / 1024u), 0); }"),
            &[2],
        ),
        (
            "contact partner, 15 scalar loads (six arrays)",
            kernel("let x = vec3<f32>(s[3u * j], s[3u * j + 1u], s[3u * j + 2u]); let r = s[300000u + j]; let fl = s[400000u + j]; let v = vec3<f32>(s[500000u + 3u * j], s[500000u + 3u * j + 1u], s[500000u + 3u * j + 2u]); let f = vec3<f32>(s[800000u + 3u * j], s[800000u + 3u * j + 1u], s[800000u + 3u * j + 2u]); let m = s[1100000u + j]; let w = vec3<f32>(s[1200000u + 3u * j], s[1200000u + 3u * j + 1u], s[1200000u + 3u * j + 2u]); acc += vec4<f32>(x * r + v * m + f * fl + w, r);"),
            &[0],
        ),
        (
            "contact partner, 3 vec4 and 1 scalar load",
            kernel("let p = v4[j]; let v = v4[100000u + j]; let f = v4[200000u + j].xyz; let w = v4[300000u + j].xyz; let fl = s[j]; acc += vec4<f32>(p.xyz * p.w + v.xyz * v.w + f * fl + w, p.w);"),
            &[0, 1],
        ),
    ];
    for round in 1..=3 {
        for (name, src, used) in &cases {
            let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(src.as_str().into()),
            });
            let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let entries: Vec<wgpu::BindGroupEntry> = used
                .iter()
                .chain(&[3])
                .map(|&b| wgpu::BindGroupEntry {
                    binding: b,
                    resource: match b {
                        0 | 1 => reals.as_entire_binding(),
                        2 => wgpu::BindingResource::TextureView(&view),
                        _ => out.as_entire_binding(),
                    },
                })
                .collect();
            let group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(name),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            let run = |reps: u32| {
                let mut enc = dev.create_command_encoder(&Default::default());
                {
                    let mut pass = enc.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &group, &[]);
                    for _ in 0..reps {
                        pass.dispatch_workgroups(N.div_ceil(64), 1, 1);
                    }
                }
                q.submit([enc.finish()]);
                dev.poll(wgpu::PollType::wait_indefinitely())
                    .expect("device lost");
            };
            run(2);
            let t = std::time::Instant::now();
            run(20);
            let per = t.elapsed().as_secs_f64() / 20.0 / (f64::from(N) * 6.0);
            println!(
                "round {round}: {name}: {:.2} ns per invocation and partner",
                per * 1e9
            );
        }
    }
}
