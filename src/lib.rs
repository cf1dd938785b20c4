//! # varidem
//!
//! A discrete element engine for granular materials and particle-binder composites:
//! spheres that translate and rotate (rescaled Rodrigues rotation vectors), binder bonds
//! that resist stretching, shearing, bending and twisting, and contacts, advanced by the
//! explicit variational integrators of Baker & Gonzalez.
//!
//! The module tree is the architecture, from the bottom up:
//! [`math`] (rotations) → [`model`] (particles, bonds, walls) → [`physics`] (laws as
//! pure functions) → [`integrators`] (the discrete maps) → [`neighbor`] (contact
//! detection) → [`cpu`] (reference backend, behind [`backend::Backend`]) → [`io`]
//! (scenes, CSV) → [`checkpoint`] (checkpoints and restarts) → [`select`] (which backend
//! runs, and the fallback to the CPU) → [`run`] (the driver the CLI calls) and [`bench`](mod@bench)
//! (benchmark workloads that are poured and cached).
//! [`io::plot`] and [`render`] make plots and pictures of a run's output; [`memory_check`]
//! refuses problems too large for the machine's memory. `tests/layers.rs` fails on an
//! import against this order.

pub mod backend;
pub mod bench;
pub mod checkpoint;
pub mod cpu;
pub mod diagnostics;
pub mod error;
pub mod gpu;
pub mod integrators;
pub mod io;
pub mod math;
pub mod memory_check;
pub mod model;
pub mod neighbor;
pub mod physics;
pub mod render;
pub mod run;
pub mod select;

pub use error::{Error, Result};
