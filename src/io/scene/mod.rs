//! TOML scene files: parsing, validation and the way back.
//!
//! A scene file has these sections; everything but `[simulation]` and at least one
//! particle (explicit or generated) is optional.
//!
//! ```toml
//! [simulation]
//! dt = 1e-3                   # time step h (s), > 0
//! steps = 1000                # or t_end = 1.0 (s): exactly one of the two
//! integrator = "variational"  # | "variational-exact" | "symplectic-euler" | "campello-trapezoidal"
//! phi = 0.5                   # campello-trapezoidal: weight φ in [0, 1] (eq. 41)
//! tolerance = 1e-4            # campello-trapezoidal: fixed-point tolerance (eqs. 48-49)
//! output_every = 100          # energy.csv cadence; default round(steps/100), at least 1
//! gravity = [0.0, 0.0, 0.0]   # field acceleration a (m/s²) on every particle
//! precision = "f32"           # GPU kernel precision, "f32" | "f64"; default f32 (the
//!                             # CPU backend is always f64); --precision overrides it
//! max_neighbors = 32          # GPU neighbour-list capacity per particle, 1..=64
//! bucket_capacity = 16        # GPU grid-bucket capacity, >= 1
//!
//! [binder]                    # defaults for every bond; needed only by bonds that use them
//! k_bend = 10.0               # K^m (N m/rad²)
//! k_axial = 200.0             # K^a (J)
//! k_shear = 200.0             # K^s (J)
//! shear = "objective"         # | "printed" (eq. 53 as printed)
//!
//! [contact]                   # absent: no contact forces (and no walls)
//! law = "binder"              # U^pp of eqs. 56-57
//! k_pp = 2100.0               # K^pp (J)
//! skin = 0.005                # neighbour-list skin (m); default 0.1 × largest radius
//! max_initial_overlap = 0.05  # unbonded overlap allowed at t = 0 (fraction of the smaller radius)
//!
//! [domain]                    # optional box; a centre leaving it stops the run, or
//! min = [-1.0, -1.0, -1.0]    # with on_exit = "remove" the particle is removed
//! max = [1.0, 1.0, 1.0]       # (parked at rest, out of every contact)
//! on_exit = "error"           # | "remove"
//!
//! [[particle]]
//! position = [1.0, 0.0, 0.0]
//! velocity = [0.0, 0.0, 0.0]          # default 0
//! rotation = [0.0, 0.0, 0.0]          # rescaled Rodrigues vector α, default 0
//! angular_velocity = [0.0, 0.0, 0.0]  # spatial Ω, default 0
//! mass = 1.0
//! inertia = 1.0                       # scalar J, default 2/5 m r²
//! radius = 0.05
//! hold_position = false               # position fixed, rotation free
//! pendulum_offset = [0.0, 0.0, 1.0]   # optional ρ₀: the field acts at x + Rρ₀
//!
//! [[bond]]                    # indices in the final numbering (see below)
//! i = 0
//! j = 1                       # optional k_bend / k_axial / k_shear override [binder]
//!
//! [[wall]]
//! point = [0.0, 0.0, 0.0]
//! normal = [1.0, 0.0, 0.0]    # into the domain; normalised
//! stiffness = 2100.0          # default [contact] k_pp
//! ```
//!
//! Clumps (rigid bodies of overlapping spheres): `[[clump_type]]` and `[[clump]]`,
//! documented in `clumps.rs` and `docs/scene-format.md`; `[[cloud]]` with
//! `clump_type` pours them.
//!
//! Generators: `[[ring]]` ([`Ring`](crate::model::generators::Ring)) and `[[block]]`
//! ([`Block`](crate::model::generators::Block)). Particles are numbered explicit
//! `[[particle]]`s first, then rings, then blocks, each in file order; ring and block
//! bonds take their stiffnesses from `[binder]`.
//!
//! Every key is checked: unknown keys, wrong types and out-of-range values are errors
//! naming the key, the value and the allowed range.
//!
//! The way through: the text is read into the sections of `schema` (serde: syntax,
//! types, unknown keys), whose values `checks` validates; `sections` and `generators`
//! turn sections into model values, `build` assembles the scene from them in file
//! order and `overlaps` refuses particles that start inside each other. `write` is the
//! way back ([`scene_to_toml`]).

use std::path::Path;

use build::build;
use checks::scene_error;
use schema::SceneFile;

use crate::error::{Error, Result};
use crate::model::Scene;

mod build;
mod checks;
mod clumps;
mod generators;
mod initial;
mod inserters;
mod overlaps;
mod schema;
mod sections;
mod sizes;
#[cfg(test)]
mod tests;
mod walls;
mod write;

pub use generators::MAX_BOND_REACH;
pub use write::scene_to_toml;

/// The target of the loader's log messages: this module's path, which they had before it
/// was split into submodules (log filters and log lines read as before).
const LOG_TARGET: &str = module_path!();

/// The built-in scene run when no scene file is given: the torus impact of Baker &
/// Gonzalez §4.1 (`scenes/torus-impact.toml`).
pub const DEFAULT_SCENE: &str = include_str!("../../../scenes/torus-impact.toml");

/// Turns a TOML or serde error into a one-line scene error with line and column.
fn toml_error(text: &str, e: &toml::de::Error) -> Error {
    let message = e.message().trim().replace('\n', " ");
    // serde's messages quote the offending value (`invalid type: string "…"`): at most
    // about MAX_ECHO characters of it.
    let message = if message.chars().count() > 2 * checks::MAX_ECHO {
        let head: String = message.chars().take(2 * checks::MAX_ECHO).collect();
        format!("{head}…")
    } else {
        message
    };
    let located = e.span().and_then(|span| {
        let before = text.get(..span.start)?;
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let column = before[line_start..].chars().count() + 1;
        let content = text[line_start..].lines().next().unwrap_or("").trim();
        // At most MAX_ECHO characters of the line (a vector of a million numbers is
        // one line).
        let shown: String = content.chars().take(checks::MAX_ECHO).collect();
        let more = if shown.len() < content.len() {
            "…"
        } else {
            ""
        };
        Some(format!(
            "line {line}, column {column}: {message} (at `{shown}{more}`)"
        ))
    });
    scene_error(located.unwrap_or(message))
}

/// Parses and validates a scene from TOML text.
///
/// Errors are [`Error::Scene`] with one line naming the problem: a TOML syntax or type
/// error with its line and column (unknown keys included), or a value out of range
/// with its key, e.g. `particle[3].mass = -1: must be > 0 and finite`.
///
/// Mesh files (`[[mesh]] file`) are read relative to the current directory; use
/// [`parse_scene_in`] to give another.
pub fn parse_scene(text: &str) -> Result<Scene> {
    parse_scene_in(text, Path::new("."))
}

/// [`parse_scene`] with relative mesh files read from `base`.
pub fn parse_scene_in(text: &str, base: &Path) -> Result<Scene> {
    let file: SceneFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    build(&file, base)
}

/// Reads, parses and validates the scene file at `path`.
///
/// Errors are those of [`parse_scene`] prefixed with the path, or [`Error::Io`] if the
/// file cannot be read.
pub fn load_scene(path: &Path) -> Result<Scene> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_scene_in(&text, base).map_err(|e| match e {
        Error::Scene(msg) => Error::Scene(format!("{}: {msg}", path.display())),
        other => other,
    })
}

/// The built-in scene ([`DEFAULT_SCENE`], the torus impact).
///
/// # Panics
///
/// Never in a released build: the embedded file is parsed by the unit tests.
pub fn default_scene() -> Scene {
    match parse_scene(DEFAULT_SCENE) {
        Ok(scene) => scene,
        Err(e) => panic!("the embedded default scene is invalid: {e}"),
    }
}
