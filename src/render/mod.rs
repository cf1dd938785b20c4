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
//!
//! The modules: `camera` (views and the framing camera), `colormap` (the colour field,
//! the colormap, sRGB and lighting), `image` (the picture, PNG and the downsampling)
//! and `pipeline` (the wgpu drawing, from a run's directory to a PNG).

mod camera;
mod colormap;
mod image;
mod pipeline;

pub use camera::{Camera, View};
pub use colormap::{colormap, field_values, lit_center_color, ColorField, AMBIENT};
pub use image::Image;
pub use pipeline::{
    render_frame, render_frame_on, render_run, render_scene_on, RenderOptions, RenderSummary,
    Rendered, BACKGROUND, SHADER,
};
