//! The wgpu drawing: a frame loaded, its particles turned into instances coloured by
//! their field, drawn offscreen by `render.wgsl` at the supersampled size, read back and
//! averaged down; and the options and results of a rendering.

use std::path::{Path, PathBuf};

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use super::camera::{Camera, View};
use super::colormap::{colormap, field_values, light_dir, to_linear, ColorField, AMBIENT};
use super::image::{downsample, Image};
use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::io::vtk_reader::{load_frame, ParticleFrame};

/// Background colour of the pictures (sRGB).
pub const BACKGROUND: [u8; 3] = [28, 30, 36];
/// Supersampling factor along each axis.
const SUPERSAMPLE: u32 = 2;

/// What to draw and how big.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Picture width (pixels).
    pub width: u32,
    /// Picture height (pixels).
    pub height: u32,
    /// The field that colours the particles.
    pub color: ColorField,
    /// The camera direction.
    pub view: View,
    /// GPU adapter: a case-insensitive substring of its name (default: as for the
    /// GPU backend, `$VARIDEM_ADAPTER` or the most capable adapter).
    pub adapter: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            width: 1024,
            height: 768,
            color: ColorField::Speed,
            view: View::Auto,
            adapter: None,
        }
    }
}

/// A picture and how it was made.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The picture.
    pub image: Image,
    /// The camera (for the requested size).
    pub camera: Camera,
    /// The range of the colour field mapped onto the colormap (min, max).
    pub range: (f64, f64),
    /// Adapter name.
    pub adapter: String,
}

/// What `render_run` did.
#[derive(Clone, Debug)]
pub struct RenderSummary {
    /// The picture's path.
    pub out: PathBuf,
    /// The frame's step.
    pub step: u64,
    /// The frame's time (s), when known.
    pub time: Option<f64>,
    /// The file the particles were read from.
    pub source: PathBuf,
    /// Particles drawn.
    pub particles: usize,
    /// The field and its range on the colormap.
    pub color: (ColorField, f64, f64),
    /// The view used (never `Auto`).
    pub view: View,
    /// Adapter name.
    pub adapter: String,
}

/// Renders frame `step` (default: the last) of the run in `dir` (see
/// [`load_frame`]) and writes it as PNG to `out` (default
/// `DIR/plots/frame_<step>.png`, its directory created if needed).
pub fn render_run(
    dir: &Path,
    step: Option<u64>,
    out: Option<&Path>,
    options: &RenderOptions,
) -> Result<RenderSummary> {
    let frame = load_frame(dir, step)?;
    let triangles = crate::io::vtk_reader::mesh_triangles(dir, frame.time)?;
    let ctx = GpuContext::new(options.adapter.as_deref())?;
    let rendered = render_scene_on(&ctx, &frame, &triangles, options)?;
    let out = out.map_or_else(
        || {
            dir.join(crate::io::plot::PLOTS_DIR)
                .join(format!("frame_{:08}.png", frame.step))
        },
        Path::to_path_buf,
    );
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    rendered.image.save_png(&out)?;
    Ok(RenderSummary {
        out,
        step: frame.step,
        time: frame.time,
        source: frame.source.clone(),
        particles: frame.len(),
        color: (options.color, rendered.range.0, rendered.range.1),
        view: rendered.camera.view,
        adapter: rendered.adapter,
    })
}

/// Renders `frame` on a device picked by `options.adapter` (see [`GpuContext::new`]).
pub fn render_frame(frame: &ParticleFrame, options: &RenderOptions) -> Result<Rendered> {
    let ctx = GpuContext::new(options.adapter.as_deref())?;
    render_frame_on(&ctx, frame, options)
}

/// Uniforms of `render.wgsl` (`Camera` there).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CameraUniform {
    scale: [f32; 2],
    near: f32,
    inv_depth_range: f32,
    light: [f32; 4],
}

/// One vertex of a mesh triangle (`MeshVertex` in `render.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct MeshVertexData {
    position: [f32; 3],
    color: [f32; 4],
}

/// The vertex attributes of a [`MeshVertexData`].
const MESH_ATTRIBUTES: [wgpu::VertexAttribute; 2] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];

/// Opacity of mesh walls over the particles.
const MESH_OPACITY: f32 = 0.2;

/// One instance of `render.wgsl` (`Instance` there).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct InstanceData {
    center: [f32; 3],
    radius: f32,
    color: [f32; 4],
}

/// The WGSL source of the renderer.
pub const SHADER: &str = include_str!("../../shaders/render.wgsl");

/// The vertex attributes of an [`InstanceData`], by `@location` of `Instance` in
/// `render.wgsl` (offsets follow the formats; checked against the struct in the tests).
const INSTANCE_ATTRIBUTES: [wgpu::VertexAttribute; 3] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32, 2 => Float32x4];

/// Renders `frame` on `ctx`'s device.
pub fn render_frame_on(
    ctx: &GpuContext,
    frame: &ParticleFrame,
    options: &RenderOptions,
) -> Result<Rendered> {
    render_scene_on(ctx, frame, &[], options)
}

/// Renders `frame` with the mesh-wall `triangles` (drawn translucent, flat-shaded,
/// and framed with the particles) on `ctx`'s device.
pub fn render_scene_on(
    ctx: &GpuContext,
    frame: &ParticleFrame,
    triangles: &[[DVec3; 3]],
    options: &RenderOptions,
) -> Result<Rendered> {
    let (width, height) = (options.width, options.height);
    let max_dim = ctx.device.limits().max_texture_dimension_2d;
    if width == 0 || height == 0 || width > max_dim || height > max_dim {
        return Err(Error::Render(format!(
            "a {width}×{height} picture does not fit the adapter (1 to {max_dim} pixels a side)"
        )));
    }
    let ss = if width * SUPERSAMPLE <= max_dim && height * SUPERSAMPLE <= max_dim {
        SUPERSAMPLE
    } else {
        1
    };
    // The framing holds the meshes' corners too (as points of no radius).
    let mut points = frame.position.clone();
    let mut radii = frame.radius.clone();
    for t in triangles {
        points.extend_from_slice(t);
        radii.extend_from_slice(&[0.0; 3]);
    }
    let camera = Camera::framing(&points, &radii, options.view, width, height)?;
    let values = field_values(frame, options.color)?;
    let range = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let range = if range.0.is_finite() {
        range
    } else {
        (0.0, 0.0)
    };
    let instances: Vec<InstanceData> = (0..frame.len())
        .map(|i| {
            let t = if range.1 > range.0 {
                (values[i] - range.0) / (range.1 - range.0)
            } else if values[i].is_finite() {
                0.5
            } else {
                f64::NAN
            };
            let c = colormap(t).map(|c| to_linear(c) as f32);
            InstanceData {
                center: camera.to_view(frame.position[i]).as_vec3().to_array(),
                radius: frame.radius[i] as f32,
                color: [c[0], c[1], c[2], 1.0],
            }
        })
        .collect();
    let light = light_dir();
    let uniform = CameraUniform {
        scale: [
            (1.0 / camera.half_width) as f32,
            (1.0 / camera.half_height) as f32,
        ],
        near: camera.near as f32,
        inv_depth_range: (1.0 / (camera.far - camera.near)) as f32,
        light: [
            light.x as f32,
            light.y as f32,
            light.z as f32,
            AMBIENT as f32,
        ],
    };
    // Two-sided Lambert per triangle, in view space.
    let base = to_linear(170) as f32;
    let mesh: Vec<MeshVertexData> = triangles
        .iter()
        .flat_map(|t| {
            let v = t.map(|x| camera.to_view(x));
            let n = (v[1] - v[0]).cross(v[2] - v[0]).normalize_or_zero();
            let lambert = n.dot(light).abs();
            let shade = base * (AMBIENT + (1.0 - AMBIENT) * lambert) as f32;
            v.map(|p| MeshVertexData {
                position: p.as_vec3().to_array(),
                color: [shade, shade, shade, MESH_OPACITY],
            })
        })
        .collect();
    let big = draw(ctx, &uniform, &instances, &mesh, width * ss, height * ss)?;
    Ok(Rendered {
        image: downsample(&big, ss),
        camera,
        range,
        adapter: ctx.summary.name.clone(),
    })
}

/// Rasterises `instances` into a `width × height` picture. A wgpu error on the way (a
/// picture larger than the device's textures, a lost device) is [`Error::Gpu`], never a
/// panic.
fn draw(
    ctx: &GpuContext,
    uniform: &CameraUniform,
    instances: &[InstanceData],
    mesh: &[MeshVertexData],
    width: u32,
    height: u32,
) -> Result<Image> {
    ctx.scoped(&format!("rendering a {width} × {height} picture"), || {
        draw_unscoped(ctx, uniform, instances, mesh, width, height)
    })?
}

/// [`draw`] without its error scopes.
fn draw_unscoped(
    ctx: &GpuContext,
    uniform: &CameraUniform,
    instances: &[InstanceData],
    mesh: &[MeshVertexData],
    width: u32,
    height: u32,
) -> Result<Image> {
    use wgpu::util::DeviceExt;
    let device = &ctx.device;
    let color_format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let depth_format = wgpu::TextureFormat::Depth32Float;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("render.wgsl"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("render camera"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("render"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    // One pipeline per kind of primitive: entry points, vertex layout, and whether it
    // writes depth (spheres) or blends over what is drawn (mesh walls).
    let make = |label, vs, fs, buffer: wgpu::VertexBufferLayout<'_>, opaque: bool| {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(vs),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                buffers: &[Some(buffer)],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: depth_format,
                depth_write_enabled: Some(opaque),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState::default(),
            }),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(fs),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: color_format,
                    blend: (!opaque).then_some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let pipeline = make(
        "render spheres",
        "vs_main",
        "fs_main",
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<InstanceData>() as wgpu::BufferAddress,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &INSTANCE_ATTRIBUTES,
        },
        true,
    );
    // Mesh walls after the spheres: blended, depth-tested, not writing depth.
    let mesh_pipeline = make(
        "render meshes",
        "vs_mesh",
        "fs_mesh",
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<MeshVertexData>() as wgpu::BufferAddress,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &MESH_ATTRIBUTES,
        },
        false,
    );
    let mesh_buffer = (!mesh.is_empty()).then(|| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("render mesh vertices"),
            contents: bytemuck::cast_slice(mesh),
            usage: wgpu::BufferUsages::VERTEX,
        })
    });
    let camera_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("render camera"),
        contents: bytemuck::bytes_of(uniform),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let instance_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("render instances"),
        contents: bytemuck::cast_slice(instances),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("render camera"),
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: camera_buffer.as_entire_binding(),
        }],
    });
    let size = wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: 1,
    };
    let texture = |label, format, usage| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
    };
    let color = texture(
        "render color",
        color_format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let depth = texture(
        "render depth",
        depth_format,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
    );
    let color_view = color.create_view(&wgpu::TextureViewDescriptor::default());
    let depth_view = depth.create_view(&wgpu::TextureViewDescriptor::default());
    // Rows of a texture-to-buffer copy are padded to 256 bytes.
    let row_bytes = 4 * width;
    let padded_row =
        row_bytes.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("render readback"),
        size: u64::from(padded_row) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let [r, g, b] = BACKGROUND.map(to_linear);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("render"),
    });
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("render spheres"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &color_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    // The clear colour is linear; the sRGB target encodes it.
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.set_vertex_buffer(0, instance_buffer.slice(..));
        let n = u32::try_from(instances.len())
            .map_err(|_| Error::Render("too many particles for one draw".into()))?;
        pass.draw(0..6, 0..n);
        if let Some(buffer) = &mesh_buffer {
            let vertices = u32::try_from(mesh.len())
                .map_err(|_| Error::Render("too many mesh triangles for one draw".into()))?;
            pass.set_pipeline(&mesh_pipeline);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..vertices, 0..1);
        }
    }
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture: &color,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded_row),
                rows_per_image: Some(height),
            },
        },
        size,
    );
    ctx.queue.submit([encoder.finish()]);
    let slice = readback.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Render(format!("device lost or timed out: {e}")))?;
    rx.recv()
        .map_err(|e| Error::Render(format!("readback: {e}")))?
        .map_err(|e| Error::Render(format!("readback: {e}")))?;
    let mapped = slice
        .get_mapped_range()
        .map_err(|e| Error::Render(format!("readback: {e}")))?;
    let mut rgba = Vec::with_capacity((row_bytes * height) as usize);
    for row in mapped.chunks_exact(padded_row as usize) {
        rgba.extend_from_slice(&row[..row_bytes as usize]);
    }
    drop(mapped);
    readback.unmap();
    Ok(Image {
        width,
        height,
        rgba,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shader_validates_with_naga() {
        let module = naga::front::wgsl::parse_str(SHADER)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(SHADER)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(SHADER)));
    }

    /// `CameraUniform` has the member names, offsets and size naga gives `Camera` in
    /// `render.wgsl`; each `Instance` member's `@location` is fed by the attribute of
    /// that location, at the offset of the `InstanceData` field of the same name, in a
    /// format of the member's size.
    #[test]
    fn uniform_and_instance_layouts_match_the_shader() {
        use std::mem::{offset_of, size_of};
        let module = naga::front::wgsl::parse_str(SHADER).unwrap();
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).unwrap();
        let members = |name: &str| {
            let (_, ty) = module
                .types
                .iter()
                .find(|(_, t)| t.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no struct {name}"));
            let naga::TypeInner::Struct { members, span } = &ty.inner else {
                panic!("{name} is not a struct");
            };
            (members.clone(), *span)
        };
        let (camera, span) = members("Camera");
        assert_eq!(span as usize, size_of::<CameraUniform>());
        let expect = [
            ("scale", offset_of!(CameraUniform, scale)),
            ("near", offset_of!(CameraUniform, near)),
            (
                "inv_depth_range",
                offset_of!(CameraUniform, inv_depth_range),
            ),
            ("light", offset_of!(CameraUniform, light)),
        ];
        assert_eq!(camera.len(), expect.len());
        for (m, (name, off)) in camera.iter().zip(expect) {
            assert_eq!((m.name.as_deref(), m.offset as usize), (Some(name), off));
        }
        let (instance, _) = members("Instance");
        let fields = [
            ("center", offset_of!(InstanceData, center)),
            ("radius", offset_of!(InstanceData, radius)),
            ("color", offset_of!(InstanceData, color)),
        ];
        assert_eq!(instance.len(), fields.len());
        assert_eq!(INSTANCE_ATTRIBUTES.len(), fields.len());
        for m in &instance {
            let Some(naga::Binding::Location { location, .. }) = m.binding else {
                panic!("{:?} has no @location", m.name);
            };
            let name = m.name.as_deref().unwrap();
            let attr = INSTANCE_ATTRIBUTES
                .iter()
                .find(|a| a.shader_location == location)
                .unwrap_or_else(|| panic!("no attribute for @location({location})"));
            let field = fields.iter().find(|f| f.0 == name).unwrap();
            assert_eq!(attr.offset as usize, field.1, "{name}");
            assert_eq!(
                attr.format.size(),
                u64::from(layouter[m.ty].size),
                "{name}: format size"
            );
        }
    }
}
