//! Rotation and vector mathematics shared by every other module.
//!
//! The CPU reference works in `f64` with [`glam::DVec3`]; the GPU kernels mirror these
//! functions in `shaders/common/rodrigues.wgsl`.

pub mod rodrigues;
pub mod triangle;

pub use rodrigues::{
    angle, compose, from_rotation_vector, inverse, relative, rotate, rotate_inverse,
    rotation_matrix, skew, to_rotation_vector, try_compose,
};
