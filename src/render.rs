//! Pictures of a run (`varidem render`): the particles of one output frame drawn
//! offscreen with wgpu as shaded spheres, coloured by a per-particle field through a
//! viridis colormap, and written as a PNG.
//!
//! Each particle is one instance of a camera-facing square on which the fragment shader
//! (`shaders/render.wgsl`) traces the sphere: exact silhouette, normal and depth, so
//! touching and overlapping spheres intersect correctly, lit by ambient + Lambert
//! light. The camera is orthographic and frames every particle ([`Camera::framing`]).
//! The picture is rendered at twice the requested size and averaged down (in linear
//! light) to smooth the silhouettes; the result is deterministic on a given adapter.

use std::path::{Path, PathBuf};

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::io::vtk_reader::{load_frame, ParticleFrame};

/// Background colour of the pictures (sRGB).
pub const BACKGROUND: [u8; 3] = [28, 30, 36];
/// Fraction of the light that is ambient (the rest is Lambertian).
pub const AMBIENT: f64 = 0.3;
/// View-space direction towards the light (x right, y up, z away from the viewer):
/// from the upper left, in front.
const LIGHT: [f64; 3] = [-0.45, 0.55, -0.70];
/// Supersampling factor along each axis.
const SUPERSAMPLE: u32 = 2;
/// Fraction of the picture left as a margin around the particles, on each side.
const MARGIN: f64 = 0.04;

/// Viridis (matplotlib's default colormap), 8 stops in sRGB, linearly interpolated.
const VIRIDIS: [[u8; 3]; 8] = [
    [68, 1, 84],
    [70, 50, 127],
    [54, 92, 141],
    [39, 127, 143],
    [31, 162, 136],
    [74, 194, 110],
    [160, 219, 57],
    [254, 232, 37],
];

/// Colour of particles whose field value is not finite.
const NAN_COLOR: [u8; 3] = [200, 60, 200];

/// The per-particle quantity that picks a particle's colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorField {
    /// `|v|` (m/s).
    #[default]
    Speed,
    /// Radius (m).
    Radius,
    /// `|Ω|` (rad/s).
    #[value(name = "angular_speed", alias = "angular-speed")]
    AngularSpeed,
    /// Number of contacts (`.vtp` frames only).
    #[value(name = "contact_count", alias = "contact-count")]
    ContactCount,
    /// `|F|`, the total force (N; `.vtp` frames only).
    Force,
    /// Particle id.
    Id,
    /// Position x (m).
    X,
    /// Position y (m).
    Y,
    /// Position z (m).
    Z,
}

impl ColorField {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Speed => "speed",
            Self::Radius => "radius",
            Self::AngularSpeed => "angular_speed",
            Self::ContactCount => "contact_count",
            Self::Force => "force",
            Self::Id => "id",
            Self::X => "x",
            Self::Y => "y",
            Self::Z => "z",
        }
    }
}

/// The direction the camera looks from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// Along the axis in which the particles are thinnest, when they are clearly
    /// thinner in one axis than in the others (a ring, a layer); else `iso`.
    #[default]
    Auto,
    /// From +x, z up.
    X,
    /// From −y, z up.
    Y,
    /// From +z, y up.
    Z,
    /// From (+1, −1, +1), z up.
    Iso,
}

impl View {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::X => "x",
            Self::Y => "y",
            Self::Z => "z",
            Self::Iso => "iso",
        }
    }
}

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

/// An RGBA8 (sRGB) picture, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width (pixels).
    pub width: u32,
    /// Height (pixels).
    pub height: u32,
    /// `4 × width × height` bytes.
    pub rgba: Vec<u8>,
}

impl Image {
    /// The RGB of pixel `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let k = 4 * (y as usize * self.width as usize + x as usize);
        [self.rgba[k], self.rgba[k + 1], self.rgba[k + 2]]
    }

    /// Writes the picture as an 8-bit RGBA PNG.
    pub fn save_png(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        let png_err = |e: png::EncodingError| Error::io(path, std::io::Error::other(e));
        let mut writer = encoder.write_header().map_err(png_err)?;
        writer.write_image_data(&self.rgba).map_err(png_err)?;
        writer.finish().map_err(png_err)
    }
}

/// An orthographic camera: a view basis, the centre of the framed box and its half
/// extents (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Centre of the view.
    pub center: DVec3,
    /// Unit vector to the right of the picture.
    pub right: DVec3,
    /// Unit vector to the top of the picture.
    pub up: DVec3,
    /// Unit viewing direction (away from the viewer).
    pub forward: DVec3,
    /// Half the width of the view (m).
    pub half_width: f64,
    /// Half the height of the view (m).
    pub half_height: f64,
    /// Nearest view-space depth (m, relative to `center`).
    pub near: f64,
    /// Farthest view-space depth (m, relative to `center`).
    pub far: f64,
    /// Picture width (pixels).
    pub width: u32,
    /// Picture height (pixels).
    pub height: u32,
    /// The view it was made for (never `Auto`).
    pub view: View,
}

/// `(right, up, forward)` of a view.
fn basis(view: View) -> (DVec3, DVec3, DVec3) {
    match view {
        View::X => (DVec3::Y, DVec3::Z, DVec3::NEG_X),
        View::Y => (DVec3::X, DVec3::Z, DVec3::Y),
        View::Z | View::Auto => (DVec3::X, DVec3::Y, DVec3::NEG_Z),
        View::Iso => {
            let forward = -DVec3::new(1.0, -1.0, 1.0).normalize();
            let up = (DVec3::Z - DVec3::Z.dot(forward) * forward).normalize();
            // right × up = −forward, as for the axis views.
            (forward.cross(up), up, forward)
        }
    }
}

impl Camera {
    /// The camera that looks at spheres at `position` with `radius` from `view` and
    /// frames all of them in a `width × height` picture with a small margin.
    ///
    /// Fails when there is no particle or a position is not finite.
    pub fn framing(
        position: &[DVec3],
        radius: &[f64],
        view: View,
        width: u32,
        height: u32,
    ) -> Result<Self> {
        if position.is_empty() {
            return Err(Error::Render("the frame has no particle".into()));
        }
        if let Some(i) = position.iter().position(|p| !p.is_finite()) {
            return Err(Error::Render(format!(
                "particle {i} has a non-finite position {}",
                position[i]
            )));
        }
        let r = |i: usize| radius.get(i).copied().unwrap_or(0.0).max(0.0);
        let bounds = |axis: DVec3| {
            (0..position.len()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
                let d = position[i].dot(axis);
                (lo.min(d - r(i)), hi.max(d + r(i)))
            })
        };
        let view = match view {
            View::Auto => auto_view(|axis| {
                let (lo, hi) = bounds(axis);
                hi - lo
            }),
            v => v,
        };
        let (right, up, forward) = basis(view);
        let (x0, x1) = bounds(right);
        let (y0, y1) = bounds(up);
        let (z0, z1) = bounds(forward);
        let center = right * (x0 + x1) / 2.0 + up * (y0 + y1) / 2.0 + forward * (z0 + z1) / 2.0;
        let aspect = f64::from(width.max(1)) / f64::from(height.max(1));
        // Tiny or zero extents (one particle of radius 0) still get a view.
        let mut half_width = ((x1 - x0) / 2.0).max(1e-12) / (1.0 - 2.0 * MARGIN);
        let mut half_height = ((y1 - y0) / 2.0).max(1e-12) / (1.0 - 2.0 * MARGIN);
        if half_width / half_height < aspect {
            half_width = half_height * aspect;
        } else {
            half_height = half_width / aspect;
        }
        let depth = ((z1 - z0) / 2.0).max(1e-12);
        Ok(Self {
            center,
            right,
            up,
            forward,
            half_width,
            half_height,
            // A margin so the nearest and farthest surfaces are not clipped by rounding.
            near: -1.01 * depth,
            far: 1.01 * depth,
            width,
            height,
            view,
        })
    }

    /// View-space coordinates of `p` (x right, y up, z away from the viewer), relative
    /// to the centre.
    pub fn to_view(&self, p: DVec3) -> DVec3 {
        let d = p - self.center;
        DVec3::new(d.dot(self.right), d.dot(self.up), d.dot(self.forward))
    }

    /// Pixel coordinates (x right, y down, pixel centres at half-integers) of `p`.
    pub fn pixel(&self, p: DVec3) -> (f64, f64) {
        let v = self.to_view(p);
        (
            (v.x / self.half_width + 1.0) / 2.0 * f64::from(self.width),
            (1.0 - v.y / self.half_height) / 2.0 * f64::from(self.height),
        )
    }

    /// Radius of a sphere of radius `r` in pixels.
    pub fn pixels_per_metre(&self) -> f64 {
        f64::from(self.width) / (2.0 * self.half_width)
    }
}

/// `View::Auto`: along the thinnest axis if it is at most half the middle extent.
fn auto_view(extent: impl Fn(DVec3) -> f64) -> View {
    let mut axes = [
        (extent(DVec3::Z), View::Z),
        (extent(DVec3::Y), View::Y),
        (extent(DVec3::X), View::X),
    ];
    // Stable: on ties z is preferred, then y.
    axes.sort_by(|a, b| a.0.total_cmp(&b.0));
    if axes[0].0 <= 0.5 * axes[1].0 {
        axes[0].1
    } else {
        View::Iso
    }
}

/// The values of `field` for every particle of `frame`.
///
/// Fails, naming the field and the file, for `force` and `contact_count` when the frame
/// comes from `final.csv` (which does not hold them).
pub fn field_values(frame: &ParticleFrame, field: ColorField) -> Result<Vec<f64>> {
    let missing = || {
        Error::Render(format!(
            "--color {} needs a .vtp frame; {} does not hold it",
            field.name(),
            frame.source.display()
        ))
    };
    Ok(match field {
        ColorField::Speed => frame.velocity.iter().map(|v| v.length()).collect(),
        ColorField::Radius => frame.radius.clone(),
        ColorField::AngularSpeed => frame.angular_velocity.iter().map(|w| w.length()).collect(),
        ColorField::ContactCount => frame
            .contact_count
            .as_ref()
            .ok_or_else(missing)?
            .iter()
            .map(|&c| f64::from(c))
            .collect(),
        ColorField::Force => frame
            .force
            .as_ref()
            .ok_or_else(missing)?
            .iter()
            .map(|f| f.length())
            .collect(),
        ColorField::Id => frame.id.iter().map(|&i| f64::from(i)).collect(),
        ColorField::X => frame.position.iter().map(|p| p.x).collect(),
        ColorField::Y => frame.position.iter().map(|p| p.y).collect(),
        ColorField::Z => frame.position.iter().map(|p| p.z).collect(),
    })
}

/// The colour (sRGB) of `t ∈ [0, 1]` on the viewer colormap (clamped).
pub fn colormap(t: f64) -> [u8; 3] {
    if t.is_nan() {
        return NAN_COLOR;
    }
    let x = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let k = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    std::array::from_fn(|c| {
        (f64::from(a[c]) + f * (f64::from(b[c]) - f64::from(a[c]))).round() as u8
    })
}

/// sRGB byte → linear intensity.
fn to_linear(c: u8) -> f64 {
    let s = f64::from(c) / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear intensity → sRGB byte.
fn to_srgb(l: f64) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let s = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round() as u8
}

fn light_dir() -> DVec3 {
    DVec3::from_array(LIGHT).normalize()
}

/// The colour the renderer gives the point of a sphere of colour `rgb` that faces the
/// viewer (the centre of its disc): `rgb` in linear light times
/// `AMBIENT + (1 − AMBIENT) × (n · l)` with `n` towards the viewer.
pub fn lit_center_color(rgb: [u8; 3]) -> [u8; 3] {
    let lambert = DVec3::NEG_Z.dot(light_dir()).max(0.0);
    let shade = AMBIENT + (1.0 - AMBIENT) * lambert;
    rgb.map(|c| to_srgb(to_linear(c) * shade))
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
    let rendered = render_frame(&frame, options)?;
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

/// One instance of `render.wgsl` (`Instance` there).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct InstanceData {
    center: [f32; 3],
    radius: f32,
    color: [f32; 4],
}

/// The WGSL source of the renderer.
pub const SHADER: &str = include_str!("../shaders/render.wgsl");

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
    let camera = Camera::framing(&frame.position, &frame.radius, options.view, width, height)?;
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
    let big = draw(ctx, &uniform, &instances, width * ss, height * ss)?;
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
    width: u32,
    height: u32,
) -> Result<Image> {
    ctx.scoped(&format!("rendering a {width} × {height} picture"), || {
        draw_unscoped(ctx, uniform, instances, width, height)
    })?
}

/// [`draw`] without its error scopes.
fn draw_unscoped(
    ctx: &GpuContext,
    uniform: &CameraUniform,
    instances: &[InstanceData],
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
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("render spheres"),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<InstanceData>() as wgpu::BufferAddress,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &INSTANCE_ATTRIBUTES,
            })],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: depth_format,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        }),
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: color_format,
                blend: None,
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
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

/// Averages `factor × factor` blocks of `image` in linear light.
fn downsample(image: &Image, factor: u32) -> Image {
    if factor == 1 {
        return image.clone();
    }
    let (w, h) = (image.width / factor, image.height / factor);
    let lut: Vec<f64> = (0..=255u8).map(to_linear).collect();
    let n = f64::from(factor * factor);
    let mut rgba = Vec::with_capacity(4 * (w * h) as usize);
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0.0f64; 3];
            for dy in 0..factor {
                for dx in 0..factor {
                    let p = image.pixel(x * factor + dx, y * factor + dy);
                    for c in 0..3 {
                        sum[c] += lut[usize::from(p[c])];
                    }
                }
            }
            rgba.extend(sum.map(|s| to_srgb(s / n)));
            rgba.push(255);
        }
    }
    Image {
        width: w,
        height: h,
        rgba,
    }
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

    #[test]
    fn colormap_runs_from_purple_to_yellow() {
        assert_eq!(colormap(0.0), VIRIDIS[0]);
        assert_eq!(colormap(1.0), VIRIDIS[7]);
        assert_eq!(colormap(-3.0), VIRIDIS[0]);
        assert_eq!(colormap(2.0), VIRIDIS[7]);
        assert_eq!(colormap(f64::NAN), NAN_COLOR);
        let mid = colormap(0.5);
        assert!(mid[1] > mid[0] && mid[1] > 100, "{mid:?}");
    }

    #[test]
    fn srgb_round_trips_every_byte() {
        for c in 0..=255u8 {
            assert_eq!(to_srgb(to_linear(c)), c);
        }
    }

    #[test]
    fn the_camera_frames_every_sphere() {
        let p = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(4.0, 2.0, 0.1)];
        let r = [0.5, 0.5];
        let cam = Camera::framing(&p, &r, View::Auto, 400, 200).unwrap();
        // Flat in z: looked at from +z, x to the right, y up.
        assert_eq!(cam.view, View::Z);
        let (x0, y0) = cam.pixel(p[0]);
        let (x1, y1) = cam.pixel(p[1]);
        assert!(x0 < x1 && y1 < y0, "{x0},{y0} {x1},{y1}");
        for (i, q) in p.iter().enumerate() {
            let (x, y) = cam.pixel(*q);
            let rp = r[i] * cam.pixels_per_metre();
            assert!(x - rp >= 0.0 && x + rp <= 400.0 && y - rp >= 0.0 && y + rp <= 200.0);
        }
        // Square pixels.
        assert!((cam.half_width / cam.half_height - 2.0).abs() < 1e-12);
        for view in [View::X, View::Y, View::Z, View::Iso] {
            let (right, up, forward) = basis(view);
            assert!((right.cross(up) + forward).length() < 1e-12, "{view:?}");
        }
        assert!(Camera::framing(&[], &[], View::Auto, 10, 10).is_err());
    }

    #[test]
    fn auto_view_looks_along_the_thin_axis() {
        assert_eq!(
            auto_view(|a| if a == DVec3::X { 0.1 } else { 1.0 }),
            View::X
        );
        assert_eq!(
            auto_view(|a| if a == DVec3::Y { 0.1 } else { 1.0 }),
            View::Y
        );
        assert_eq!(auto_view(|_| 1.0), View::Iso);
    }
}
