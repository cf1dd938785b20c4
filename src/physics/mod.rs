//! Physical laws as pure functions: energy, force and moment of each potential.
//!
//! Every function takes plain values and returns the energy together with its negative
//! gradient, so the CPU reference, the GPU kernels (their WGSL twins) and the
//! finite-difference tests share one definition. Moments are *spatial* (inertial-frame)
//! torques `RM`: the energy's derivative under `R ↦ exp(εS(e)) R` is `−e·RM`.

pub mod binder;
pub mod contact;
pub mod field;
pub mod granular;
pub mod hard;
pub mod jkr;
pub mod mesh;
pub mod rigid_body;
pub mod rolling;

pub use binder::{bond_forces, bond_forces_and_loads, BondResult};
