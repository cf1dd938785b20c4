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
//! Generators: `[[ring]]` ([`Ring`]) and `[[block]]` ([`Block`]). Particles are numbered
//! explicit `[[particle]]`s first, then rings, then blocks, each in file order; ring and
//! block bonds take their stiffnesses from `[binder]`.
//!
//! Every key is checked: unknown keys, wrong types and out-of-range values are errors
//! naming the key, the value and the allowed range.

use std::collections::HashMap;
use std::path::Path;

use glam::DVec3;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::integrators::IntegratorKind;
use crate::model::generators::{Block, Cloud, Ring};
use crate::model::Precision;
use crate::model::MAX_NEIGHBORS;
use crate::model::{
    Bond, BondStiffness, ContactLaw, ContactParams, Domain, Interaction, Material, Model, Particle,
    RunLength, Scene, ShearForm, SimulationParams, Wall, DEFAULT_MAX_CONTACTS,
};
use crate::physics::granular::{Drag, NearField};

/// The built-in scene run when no scene file is given: the torus impact of Baker &
/// Gonzalez §4.1 (`scenes/torus-impact.toml`).
pub const DEFAULT_SCENE: &str = include_str!("../../scenes/torus-impact.toml");

/// The contact laws a scene may name in `[contact] law`.
const CONTACT_LAWS: [&str; 2] = ["binder", "hertz"];

/// Largest `[contact] max_contacts`.
const MAX_CONTACT_SLOTS: u32 = 64;

/// Largest initial overlap of two unbonded particles in a scene with contacts, relative
/// to the smaller radius: more is almost always a placement mistake (and an explosion).
const MAX_INITIAL_OVERLAP: f64 = 0.05;

/// The shear forms a scene may name in `[binder] shear`.
const SHEAR_FORMS: [(&str, ShearForm); 2] = [
    ("objective", ShearForm::Objective),
    ("printed", ShearForm::Printed),
];

/// The GPU kernel precisions a scene may name in `[simulation] precision`.
const PRECISIONS: [(&str, Precision); 2] = [("f32", Precision::F32), ("f64", Precision::F64)];

/// Largest number of steps a run may have (`2^53`: every step index is exact in `f64`).
const MAX_STEPS: u64 = 1 << 53;

/// Default neighbour-list skin as a fraction of the largest radius.
const DEFAULT_SKIN_FRACTION: f64 = 0.1;

type Vec3 = [f64; 3];
const ZERO: Vec3 = [0.0; 3];

// ---------------------------------------------------------------------------------------
// The file as written: every section and key, with serde's unknown-key check.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    simulation: SimulationSection,
    #[serde(default)]
    binder: Option<BinderSection>,
    #[serde(default)]
    contact: Option<ContactSection>,
    #[serde(default, rename = "particle")]
    particles: Vec<ParticleSection>,
    #[serde(default, rename = "bond")]
    bonds: Vec<BondSection>,
    #[serde(default, rename = "wall")]
    walls: Vec<WallSection>,
    #[serde(default, rename = "ring")]
    rings: Vec<RingSection>,
    #[serde(default, rename = "block")]
    blocks: Vec<BlockSection>,
    #[serde(default, rename = "cloud")]
    clouds: Vec<CloudSection>,
    #[serde(default, rename = "material")]
    materials: Vec<MaterialSection>,
    #[serde(default, rename = "interaction")]
    interactions: Vec<InteractionSection>,
    #[serde(default)]
    drag: Option<DragSection>,
    #[serde(default)]
    near_field: Option<NearFieldSection>,
    #[serde(default)]
    domain: Option<DomainSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainSection {
    min: Vec3,
    max: Vec3,
    #[serde(default)]
    on_exit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaterialSection {
    name: String,
    young: f64,
    poisson: f64,
    #[serde(default)]
    shear_modulus: Option<f64>,
    density: f64,
    restitution: f64,
    friction_static: f64,
    #[serde(default)]
    friction_dynamic: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InteractionSection {
    materials: [String; 2],
    #[serde(default)]
    restitution: Option<f64>,
    #[serde(default)]
    friction_static: Option<f64>,
    #[serde(default)]
    friction_dynamic: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DragSection {
    #[serde(default)]
    coefficient: f64,
    #[serde(default)]
    fluid_velocity: Vec3,
    #[serde(default)]
    magnus: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NearFieldSection {
    #[serde(default)]
    kappa_attractive: f64,
    #[serde(default)]
    lambda_attractive: f64,
    #[serde(default)]
    kappa_repulsive: f64,
    #[serde(default)]
    lambda_repulsive: f64,
    cutoff: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CloudSection {
    min: Vec3,
    max: Vec3,
    count: i64,
    radius: f64,
    #[serde(default)]
    radius_jitter: f64,
    #[serde(default)]
    density: Option<f64>,
    #[serde(default)]
    material: Option<String>,
    #[serde(default)]
    velocity: Vec3,
    #[serde(default)]
    hold_rotation: bool,
    #[serde(default)]
    seed: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulationSection {
    dt: f64,
    #[serde(default)]
    steps: Option<i64>,
    #[serde(default)]
    t_end: Option<f64>,
    #[serde(default)]
    integrator: Option<String>,
    #[serde(default)]
    output_every: Option<i64>,
    #[serde(default)]
    gravity: Option<Vec3>,
    #[serde(default)]
    precision: Option<String>,
    #[serde(default)]
    max_neighbors: Option<i64>,
    #[serde(default)]
    bucket_capacity: Option<i64>,
    #[serde(default)]
    phi: Option<f64>,
    #[serde(default)]
    tolerance: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BinderSection {
    #[serde(default)]
    k_bend: Option<f64>,
    #[serde(default)]
    k_axial: Option<f64>,
    #[serde(default)]
    k_shear: Option<f64>,
    #[serde(default)]
    shear: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContactSection {
    law: String,
    #[serde(default)]
    k_pp: Option<f64>,
    #[serde(default)]
    skin: Option<f64>,
    #[serde(default)]
    max_contacts: Option<i64>,
    #[serde(default)]
    max_initial_overlap: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParticleSection {
    position: Vec3,
    #[serde(default)]
    velocity: Vec3,
    #[serde(default)]
    rotation: Vec3,
    #[serde(default)]
    angular_velocity: Vec3,
    #[serde(default)]
    mass: Option<f64>,
    #[serde(default)]
    inertia: Option<f64>,
    radius: f64,
    #[serde(default)]
    hold_position: bool,
    #[serde(default)]
    hold_rotation: bool,
    #[serde(default)]
    pendulum_offset: Option<Vec3>,
    #[serde(default)]
    material: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BondSection {
    i: i64,
    j: i64,
    #[serde(default)]
    k_bend: Option<f64>,
    #[serde(default)]
    k_axial: Option<f64>,
    #[serde(default)]
    k_shear: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WallSection {
    point: Vec3,
    normal: Vec3,
    #[serde(default)]
    stiffness: Option<f64>,
    #[serde(default)]
    material: Option<String>,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RingSection {
    count: i64,
    diameter: f64,
    #[serde(default)]
    center: Vec3,
    #[serde(default)]
    axis: Option<Vec3>,
    mass: f64,
    #[serde(default)]
    inertia: Option<f64>,
    #[serde(default)]
    velocity: Vec3,
    #[serde(default)]
    angular_velocity: Vec3,
    #[serde(default = "default_true")]
    bond: bool,
    #[serde(default)]
    random_velocity: f64,
    #[serde(default)]
    random_angular_velocity: f64,
    #[serde(default)]
    seed: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockSection {
    #[serde(default)]
    origin: Vec3,
    counts: [i64; 3],
    spacing: f64,
    radius: f64,
    #[serde(default)]
    radius_jitter: f64,
    #[serde(default)]
    density: Option<f64>,
    #[serde(default)]
    velocity: Vec3,
    #[serde(default)]
    bond_cutoff: f64,
    #[serde(default)]
    seed: i64,
    #[serde(default)]
    material: Option<String>,
    #[serde(default)]
    hold_rotation: bool,
}

// ---------------------------------------------------------------------------------------
// Value checks. Each names the key, the value and the allowed range.
// ---------------------------------------------------------------------------------------

fn scene_error(msg: impl Into<String>) -> Error {
    Error::Scene(msg.into())
}

fn fmt_vec(v: Vec3) -> String {
    format!("[{}, {}, {}]", v[0], v[1], v[2])
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn positive(key: &str, v: f64) -> Result<f64> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(scene_error(format!("{key} = {v}: must be > 0 and finite")))
    }
}

fn non_negative(key: &str, v: f64) -> Result<f64> {
    if v >= 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(scene_error(format!("{key} = {v}: must be >= 0 and finite")))
    }
}

/// Largest `bond_cutoff / spacing` of a `[[block]]`: up to ~2100 lattice neighbours
/// per particle.
pub const MAX_BOND_REACH: f64 = 8.0;

/// A random amplitude `a` (uniform samples in `[−a, a]`): non-negative, and small enough
/// that the width `2a` of the interval is finite (the sampler needs it).
fn amplitude(key: &str, v: f64) -> Result<f64> {
    let a = non_negative(key, v)?;
    if (2.0 * a).is_finite() {
        Ok(a)
    } else {
        Err(scene_error(format!(
            "{key} = {v:e}: too large (the interval [−a, a] must have a finite width)"
        )))
    }
}

fn finite_vec(key: &str, v: Vec3) -> Result<DVec3> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(DVec3::from_array(v))
    } else {
        Err(scene_error(format!(
            "{key} = {}: every component must be finite",
            fmt_vec(v)
        )))
    }
}

fn nonzero_vec(key: &str, v: Vec3, why: &str) -> Result<DVec3> {
    let d = finite_vec(key, v)?;
    let len = d.length();
    if len > 0.0 && len.is_finite() {
        Ok(d)
    } else {
        Err(scene_error(format!(
            "{key} = {}: must be a non-zero vector ({why})",
            fmt_vec(v)
        )))
    }
}

fn positive_int(key: &str, v: i64) -> Result<u64> {
    u64::try_from(v)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| scene_error(format!("{key} = {v}: must be >= 1")))
}

/// An integer in `1..=max`, as a `u32`.
fn int_in(key: &str, v: i64, max: u32) -> Result<u32> {
    u32::try_from(v)
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| scene_error(format!("{key} = {v}: must be in 1..={max}")))
}

fn seed(key: &str, v: i64) -> Result<u64> {
    u64::try_from(v).map_err(|_| scene_error(format!("{key} = {v}: must be >= 0")))
}

/// `n` scaled to unit length, leaving vectors that are already unit (to rounding) as
/// they are, so that normalising twice gives the same bits as once.
fn unit(n: DVec3) -> DVec3 {
    let len = n.length();
    if (len - 1.0).abs() <= 4.0 * f64::EPSILON {
        n
    } else {
        n / len
    }
}

// ---------------------------------------------------------------------------------------
// Sections to model values.
// ---------------------------------------------------------------------------------------

fn simulation(s: &SimulationSection) -> Result<(SimulationParams, DVec3)> {
    let dt = positive("simulation.dt", s.dt)?;
    let duration = match (s.steps, s.t_end) {
        (Some(n), None) => {
            let n = positive_int("simulation.steps", n)?;
            if n > MAX_STEPS {
                return Err(scene_error(format!(
                    "simulation.steps = {n}: must be <= 2^53 = {MAX_STEPS}"
                )));
            }
            RunLength::Steps(n)
        }
        (None, Some(t)) => {
            let t = positive("simulation.t_end", t)?;
            let n = (t / dt).round();
            if n < 1.0 {
                return Err(scene_error(format!(
                    "simulation.t_end = {t}: shorter than half a time step (dt = {dt}), so no step would be taken; must be >= dt/2"
                )));
            }
            if n > MAX_STEPS as f64 {
                return Err(scene_error(format!(
                    "simulation.t_end = {t}: gives {n:e} steps of dt = {dt}; at most 2^53 steps"
                )));
            }
            RunLength::EndTime(t)
        }
        (Some(_), Some(_)) => {
            return Err(scene_error(
                "simulation: steps and t_end are both given; give exactly one of them",
            ))
        }
        (None, None) => {
            return Err(scene_error(
                "simulation: the run length is missing; give steps (a number of steps) or t_end (an end time in s)",
            ))
        }
    };
    let integrator = match &s.integrator {
        None => IntegratorKind::default(),
        Some(name) => IntegratorKind::from_name(name).ok_or_else(|| {
            let allowed: Vec<String> = IntegratorKind::NAMED
                .iter()
                .map(|k| format!("{:?}", k.name()))
                .collect();
            scene_error(format!(
                "simulation.integrator = {name:?}: unknown integrator (allowed: {})",
                allowed.join(", ")
            ))
        })?,
    };
    let precision = match &s.precision {
        None => None,
        Some(name) => Some(
            PRECISIONS
                .iter()
                .find(|(n, _)| n == name)
                .map(|&(_, p)| p)
                .ok_or_else(|| {
                    let allowed: Vec<String> =
                        PRECISIONS.iter().map(|(n, _)| format!("{n:?}")).collect();
                    scene_error(format!(
                        "simulation.precision = {name:?}: unknown precision (allowed: {})",
                        allowed.join(", ")
                    ))
                })?,
        ),
    };
    let gpu_max_neighbors = s
        .max_neighbors
        .map(|k| int_in("simulation.max_neighbors", k, MAX_NEIGHBORS))
        .transpose()?;
    let gpu_bucket_capacity = s
        .bucket_capacity
        .map(|k| int_in("simulation.bucket_capacity", k, u32::MAX))
        .transpose()?;
    let mut trapezoidal = crate::integrators::Trapezoidal::default();
    if let Some(phi) = s.phi {
        if !(0.0..=1.0).contains(&phi) {
            return Err(scene_error(format!(
                "simulation.phi = {phi}: must be in [0, 1]"
            )));
        }
        trapezoidal.phi = phi;
    }
    if let Some(tol) = s.tolerance {
        trapezoidal.tolerance = positive("simulation.tolerance", tol)?;
    }
    let mut params = SimulationParams {
        dt,
        duration,
        integrator,
        output_every: 1,
        precision,
        gpu_max_neighbors,
        gpu_bucket_capacity,
        trapezoidal,
    };
    params.output_every = match s.output_every {
        Some(k) => positive_int("simulation.output_every", k)?,
        None => ((params.steps() as f64 / 100.0).round() as u64).max(1),
    };
    let gravity = finite_vec("simulation.gravity", s.gravity.unwrap_or(ZERO))?;
    Ok((params, gravity))
}

/// `[binder]` values: the shear form and the default stiffnesses (validated).
struct BinderDefaults {
    shear: ShearForm,
    /// `(key, default)` for k_bend, k_axial, k_shear.
    k: [(&'static str, Option<f64>); 3],
}

fn binder(b: Option<&BinderSection>) -> Result<BinderDefaults> {
    let empty = BinderSection::default();
    let b = b.unwrap_or(&empty);
    let shear = match &b.shear {
        None => ShearForm::default(),
        Some(name) => SHEAR_FORMS
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, f)| f)
            .ok_or_else(|| {
                let allowed: Vec<String> =
                    SHEAR_FORMS.iter().map(|(n, _)| format!("{n:?}")).collect();
                scene_error(format!(
                    "binder.shear = {name:?}: unknown shear form (allowed: {})",
                    allowed.join(", ")
                ))
            })?,
    };
    let mut k = [
        ("k_bend", b.k_bend),
        ("k_axial", b.k_axial),
        ("k_shear", b.k_shear),
    ];
    for (name, v) in &mut k {
        if let Some(x) = v {
            *x = non_negative(&format!("binder.{name}"), *x)?;
        }
    }
    Ok(BinderDefaults { shear, k })
}

fn stiffness_from(values: [f64; 3]) -> BondStiffness {
    BondStiffness {
        bend: values[0],
        axial: values[1],
        shear: values[2],
    }
}

/// The `[binder]` stiffnesses for the bonds of generator `who`; all three must be given.
fn generator_stiffness(defaults: &BinderDefaults, who: &str) -> Result<BondStiffness> {
    let mut values = [0.0; 3];
    for (v, (name, default)) in values.iter_mut().zip(defaults.k) {
        *v = default.ok_or_else(|| {
            scene_error(format!(
                "{who}: its bonds take their stiffnesses from [binder], but [binder] gives no {name}"
            ))
        })?;
    }
    Ok(stiffness_from(values))
}

fn contact_law(c: &ContactSection) -> Result<ContactLaw> {
    match c.law.as_str() {
        "hertz" => {
            if let Some(k) = c.k_pp {
                return Err(scene_error(format!(
                    "contact.k_pp = {k}: only the \"binder\" law uses it; the \"hertz\" law takes its stiffness from the materials"
                )));
            }
            Ok(ContactLaw::Hertz)
        }
        "binder" => {
            let k_pp = c.k_pp.ok_or_else(|| {
                scene_error("contact.k_pp: missing (the \"binder\" law needs it)")
            })?;
            Ok(ContactLaw::Binder {
                k_pp: non_negative("contact.k_pp", k_pp)?,
            })
        }
        other => {
            let allowed: Vec<String> = CONTACT_LAWS.iter().map(|n| format!("{n:?}")).collect();
            Err(scene_error(format!(
                "contact.law = {other:?}: unknown contact law (allowed: {})",
                allowed.join(", ")
            )))
        }
    }
}

/// `[[material]]` sections, validated, with their names.
fn materials(sections: &[MaterialSection]) -> Result<Vec<Material>> {
    let mut out: Vec<Material> = Vec::with_capacity(sections.len());
    for (k, m) in sections.iter().enumerate() {
        let key = |field: &str| format!("material[{k}].{field}");
        if m.name.trim().is_empty() {
            return Err(scene_error(format!(
                "{} = {:?}: must not be empty",
                key("name"),
                m.name
            )));
        }
        if let Some(first) = out.iter().position(|o| o.name == m.name) {
            return Err(scene_error(format!(
                "{} = {:?}: material[{first}] already has that name",
                key("name"),
                m.name
            )));
        }
        let young = positive(&key("young"), m.young)?;
        let poisson = m.poisson;
        if !(poisson > -1.0 && poisson <= 0.5) {
            return Err(scene_error(format!(
                "{} = {poisson}: must be in (-1, 0.5]",
                key("poisson")
            )));
        }
        let shear_modulus = match m.shear_modulus {
            Some(g) => positive(&key("shear_modulus"), g)?,
            None => young / (2.0 * (1.0 + poisson)),
        };
        let restitution = m.restitution;
        if !(0.0..=1.0).contains(&restitution) {
            return Err(scene_error(format!(
                "{} = {restitution}: must be in [0, 1]",
                key("restitution")
            )));
        }
        let friction_static = non_negative(&key("friction_static"), m.friction_static)?;
        let friction_dynamic = match m.friction_dynamic {
            Some(mu) => {
                let mu = non_negative(&key("friction_dynamic"), mu)?;
                if mu > friction_static {
                    return Err(scene_error(format!(
                        "{} = {mu}: must be <= friction_static = {friction_static}",
                        key("friction_dynamic")
                    )));
                }
                mu
            }
            None => friction_static,
        };
        out.push(Material {
            name: m.name.clone(),
            young,
            poisson,
            shear_modulus,
            density: positive(&key("density"), m.density)?,
            restitution,
            friction_static,
            friction_dynamic,
        });
    }
    Ok(out)
}

/// The index of material `name` given at `key`.
fn material_index(key: &str, name: &str, materials: &[Material]) -> Result<u32> {
    materials
        .iter()
        .position(|m| m.name == name)
        .map(|i| i as u32)
        .ok_or_else(|| {
            let known: Vec<String> = materials.iter().map(|m| format!("{:?}", m.name)).collect();
            scene_error(if known.is_empty() {
                format!("{key} = {name:?}: unknown material (the scene has no [[material]])")
            } else {
                format!(
                    "{key} = {name:?}: unknown material (defined: {})",
                    known.join(", ")
                )
            })
        })
}

/// The material of a particle or generator: the named one, else the only one when the
/// Hertz law needs one, else 0 (unused).
fn material_of(who: &str, name: Option<&str>, materials: &[Material], hertz: bool) -> Result<u32> {
    match name {
        Some(n) => material_index(&format!("{who}.material"), n, materials),
        None if hertz && materials.len() == 1 => Ok(0),
        None if hertz => Err(scene_error(format!(
            "{who}.material: missing; the \"hertz\" law needs a material for every particle ({})",
            if materials.is_empty() {
                "add a [[material]]".to_owned()
            } else {
                format!("{} are defined", plural(materials.len(), "material"))
            }
        ))),
        None => Ok(0),
    }
}

/// Checks that spheres of radius `radius (1 ± jitter)` and density `density` get a
/// mass `4/3 π ρ r³` and a default inertia `2/5 m r²` that are > 0 and finite. Each
/// input can be valid alone and the products still underflow to 0 or overflow (a
/// radius of 1e-320 m, a density and radius far from SI scales): the run would then
/// divide by a zero mass and fail at its first step with a message about something
/// else.
fn sphere_sizes(who: &str, radius: f64, jitter: f64, density: f64) -> Result<()> {
    for r in [radius * (1.0 - jitter), radius * (1.0 + jitter)] {
        let m = 4.0 / 3.0 * std::f64::consts::PI * density * r * r * r;
        let j = 0.4 * m * r * r;
        if !(m > 0.0 && m.is_finite() && j > 0.0 && j.is_finite()) {
            return Err(scene_error(format!(
                "{who}.radius = {radius:e}: a sphere of radius {r:e} m and density {density:e} kg/m³ has mass {m:e} kg and inertia {j:e} kg m², which must be > 0 and finite (are the units SI?)"
            )));
        }
    }
    Ok(())
}

/// Mass from `mass` or from the material's density and the radius.
fn mass_of(who: &str, mass: Option<f64>, radius: f64, material: Option<&Material>) -> Result<f64> {
    match (mass, material) {
        (Some(m), _) => positive(&format!("{who}.mass"), m),
        (None, Some(mat)) => {
            sphere_sizes(who, radius, 0.0, mat.density)?;
            Ok(mat.sphere_mass(radius))
        }
        (None, None) => Err(scene_error(format!(
            "{who}.mass: missing (give mass, or a material with a density)"
        ))),
    }
}

fn particle(
    k: usize,
    p: &ParticleSection,
    materials: &[Material],
    hertz: bool,
) -> Result<Particle> {
    let key = |field: &str| format!("particle[{k}].{field}");
    let position = finite_vec(&key("position"), p.position)?;
    let velocity = finite_vec(&key("velocity"), p.velocity)?;
    let rotation = finite_vec(&key("rotation"), p.rotation)?;
    let angular_velocity = finite_vec(&key("angular_velocity"), p.angular_velocity)?;
    let radius = positive(&key("radius"), p.radius)?;
    let who = format!("particle[{k}]");
    let material = material_of(&who, p.material.as_deref(), materials, hertz)?;
    // The named material, or the scene's only one that the Hertz law assigned.
    let named = (p.material.is_some() || hertz).then(|| &materials[material as usize]);
    let mass = mass_of(&who, p.mass, radius, named)?;
    let inertia = match p.inertia {
        Some(j) => positive(&key("inertia"), j)?,
        None => {
            let j = 0.4 * mass * radius * radius;
            if !(j > 0.0 && j.is_finite()) {
                return Err(scene_error(format!(
                    "particle[{k}]: the default inertia 2/5 m r² = {j} is not > 0 and finite; give inertia"
                )));
            }
            j
        }
    };
    if p.hold_position && velocity != DVec3::ZERO {
        return Err(scene_error(format!(
            "{} = {}: must be zero when hold_position = true (a held particle does not move)",
            key("velocity"),
            fmt_vec(p.velocity)
        )));
    }
    let pendulum_offset = p
        .pendulum_offset
        .map(|o| finite_vec(&key("pendulum_offset"), o))
        .transpose()?;
    Ok(Particle {
        position,
        velocity,
        rotation,
        angular_velocity,
        mass,
        inertia,
        radius,
        hold_position: p.hold_position,
        hold_rotation: p.hold_rotation,
        pendulum_offset,
        material,
    })
}

fn ring(k: usize, r: &RingSection) -> Result<Ring> {
    let key = |field: &str| format!("ring[{k}].{field}");
    let count = u32::try_from(r.count)
        .ok()
        .filter(|&n| n >= 2)
        .ok_or_else(|| {
            scene_error(format!(
                "{} = {}: must be >= 2 and <= {}",
                key("count"),
                r.count,
                u32::MAX
            ))
        })?;
    let inertia = r
        .inertia
        .map(|j| positive(&key("inertia"), j))
        .transpose()?;
    Ok(Ring {
        count: count as usize,
        diameter: positive(&key("diameter"), r.diameter)?,
        center: finite_vec(&key("center"), r.center)?,
        axis: nonzero_vec(
            &key("axis"),
            r.axis.unwrap_or([0.0, 0.0, 1.0]),
            "the normal of the ring's plane",
        )?,
        mass: positive(&key("mass"), r.mass)?,
        inertia,
        velocity: finite_vec(&key("velocity"), r.velocity)?,
        angular_velocity: finite_vec(&key("angular_velocity"), r.angular_velocity)?,
        bond: r.bond,
        random_velocity: amplitude(&key("random_velocity"), r.random_velocity)?,
        random_angular_velocity: amplitude(
            &key("random_angular_velocity"),
            r.random_angular_velocity,
        )?,
        seed: seed(&key("seed"), r.seed)?,
    })
}

fn block(k: usize, b: &BlockSection, materials: &[Material], hertz: bool) -> Result<Block> {
    let key = |field: &str| format!("block[{k}].{field}");
    let mut counts = [0usize; 3];
    for (c, &v) in counts.iter_mut().zip(&b.counts) {
        *c = u32::try_from(v).ok().filter(|&n| n >= 1).ok_or_else(|| {
            scene_error(format!(
                "{} = [{}, {}, {}]: every count must be >= 1 and <= {}",
                key("counts"),
                b.counts[0],
                b.counts[1],
                b.counts[2],
                u32::MAX
            ))
        })? as usize;
    }
    let material = material_of(
        &format!("block[{k}]"),
        b.material.as_deref(),
        materials,
        hertz,
    )?;
    let radius_jitter = b.radius_jitter;
    if !(0.0..1.0).contains(&radius_jitter) {
        return Err(scene_error(format!(
            "{} = {radius_jitter}: must be >= 0 and < 1",
            key("radius_jitter")
        )));
    }
    let spacing = positive(&key("spacing"), b.spacing)?;
    let bond_cutoff = non_negative(&key("bond_cutoff"), b.bond_cutoff)?;
    // Binder bonds join near neighbours; a cutoff of many spacings would bond each
    // particle to thousands of others (and the lattice scan would take as long).
    if bond_cutoff > MAX_BOND_REACH * spacing {
        return Err(scene_error(format!(
            "{} = {bond_cutoff:e}: more than {MAX_BOND_REACH} spacings ({:e}); binder bonds join near neighbours",
            key("bond_cutoff"),
            spacing
        )));
    }
    let radius = positive(&key("radius"), b.radius)?;
    let density = density_of(
        &format!("block[{k}]"),
        b.density,
        material,
        b.material.is_some() || hertz,
        materials,
    )?;
    sphere_sizes(&format!("block[{k}]"), radius, radius_jitter, density)?;
    Ok(Block {
        origin: finite_vec(&key("origin"), b.origin)?,
        counts,
        spacing,
        radius,
        radius_jitter,
        density,
        velocity: finite_vec(&key("velocity"), b.velocity)?,
        bond_cutoff,
        seed: seed(&key("seed"), b.seed)?,
        material,
        hold_rotation: b.hold_rotation,
    })
}

/// A generator's density: its own, else its named material's.
fn density_of(
    who: &str,
    density: Option<f64>,
    material: u32,
    named: bool,
    materials: &[Material],
) -> Result<f64> {
    match density {
        Some(d) => positive(&format!("{who}.density"), d),
        None if named => Ok(materials[material as usize].density),
        None => Err(scene_error(format!(
            "{who}.density: missing (give density, or a material)"
        ))),
    }
}

fn cloud(k: usize, c: &CloudSection, materials: &[Material], hertz: bool) -> Result<Cloud> {
    let who = format!("cloud[{k}]");
    let key = |field: &str| format!("{who}.{field}");
    let material = material_of(&who, c.material.as_deref(), materials, hertz)?;
    let min = finite_vec(&key("min"), c.min)?;
    let max = finite_vec(&key("max"), c.max)?;
    if !(max - min).is_finite() {
        return Err(scene_error(format!(
            "{} = {}: the box from min = {} is too large to place spheres in",
            key("max"),
            fmt_vec(c.max),
            fmt_vec(c.min)
        )));
    }
    if (max - min).min_element() < 0.0 {
        return Err(scene_error(format!(
            "{} = {}: must be >= min = {} in every component",
            key("max"),
            fmt_vec(c.max),
            fmt_vec(c.min)
        )));
    }
    let count = usize::try_from(c.count)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| scene_error(format!("{} = {}: must be >= 1", key("count"), c.count)))?;
    if !(0.0..1.0).contains(&c.radius_jitter) {
        return Err(scene_error(format!(
            "{} = {}: must be >= 0 and < 1",
            key("radius_jitter"),
            c.radius_jitter
        )));
    }
    let radius = positive(&key("radius"), c.radius)?;
    let density = density_of(
        &who,
        c.density,
        material,
        c.material.is_some() || hertz,
        materials,
    )?;
    sphere_sizes(&who, radius, c.radius_jitter, density)?;
    Ok(Cloud {
        min,
        max,
        count,
        radius,
        radius_jitter: c.radius_jitter,
        density,
        velocity: finite_vec(&key("velocity"), c.velocity)?,
        material,
        hold_rotation: c.hold_rotation,
        seed: seed(&key("seed"), c.seed)?,
    })
}

/// Checks that adding `extra` particles keeps every id representable as `u32`, and
/// that the particles fit the host's memory (before a generator allocates them).
fn check_capacity(who: &str, have: usize, extra: usize) -> Result<()> {
    match have.checked_add(extra) {
        Some(total) if total <= u32::MAX as usize => crate::memory_check::check(
            &format!("{who}: a scene of {total} particles"),
            crate::memory_check::model_bytes(total as u64, 0),
        ),
        _ => Err(scene_error(format!(
            "{who}: {extra} more particles would exceed the limit of {} particles in a scene",
            u32::MAX
        ))),
    }
}

/// Turns a TOML or serde error into a one-line scene error with line and column.
fn toml_error(text: &str, e: &toml::de::Error) -> Error {
    let message = e.message().trim().replace('\n', " ");
    let located = e.span().and_then(|span| {
        let before = text.get(..span.start)?;
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let column = before[line_start..].chars().count() + 1;
        let content = text[line_start..].lines().next().unwrap_or("").trim();
        Some(format!(
            "line {line}, column {column}: {message} (at `{content}`)"
        ))
    });
    scene_error(located.unwrap_or(message))
}

/// Parses and validates a scene from TOML text.
///
/// Errors are [`Error::Scene`] with one line naming the problem: a TOML syntax or type
/// error with its line and column (unknown keys included), or a value out of range
/// with its key, e.g. `particle[3].mass = -1: must be > 0 and finite`.
pub fn parse_scene(text: &str) -> Result<Scene> {
    let file: SceneFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    build(&file)
}

/// Records the bonds `model.bonds[from..]`, made by generator `who`, in `bonded`.
fn record_bonds(model: &Model, from: usize, who: &str, bonded: &mut HashMap<(u32, u32), String>) {
    for b in &model.bonds[from..] {
        bonded.insert((b.i.min(b.j), b.i.max(b.j)), who.to_owned());
    }
}

fn build(file: &SceneFile) -> Result<Scene> {
    let (simulation, gravity) = simulation(&file.simulation)?;
    let binder = binder(file.binder.as_ref())?;
    let law = file.contact.as_ref().map(contact_law).transpose()?;
    let materials = materials(&file.materials)?;
    let hertz = law == Some(ContactLaw::Hertz);

    let mut model = Model {
        shear: binder.shear,
        gravity,
        ..Model::default()
    };
    // Where each bond so far came from, by unordered pair, for the duplicate check.
    let mut bonded: HashMap<(u32, u32), String> = HashMap::new();

    check_capacity("particle", 0, file.particles.len())?;
    for (k, p) in file.particles.iter().enumerate() {
        model.particles.push(particle(k, p, &materials, hertz)?);
    }
    for (k, r) in file.rings.iter().enumerate() {
        let who = format!("ring[{k}]");
        let ring = ring(k, r)?;
        check_capacity(&who, model.particles.len(), ring.count)?;
        let stiffness = if ring.bond {
            generator_stiffness(&binder, &who)?
        } else {
            stiffness_from([0.0; 3])
        };
        let from = model.bonds.len();
        ring.add_to(&mut model, stiffness)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
        record_bonds(&model, from, &who, &mut bonded);
    }
    for (k, b) in file.blocks.iter().enumerate() {
        let who = format!("block[{k}]");
        let block = block(k, b, &materials, hertz)?;
        let n = block
            .counts
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c));
        check_capacity(&who, model.particles.len(), n.unwrap_or(usize::MAX))?;
        let stiffness = if block.bond_cutoff > 0.0 {
            generator_stiffness(&binder, &who)?
        } else {
            stiffness_from([0.0; 3])
        };
        let from = model.bonds.len();
        block
            .add_to(&mut model, stiffness)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
        record_bonds(&model, from, &who, &mut bonded);
    }
    for (k, c) in file.clouds.iter().enumerate() {
        let who = format!("cloud[{k}]");
        let cloud = cloud(k, c, &materials, hertz)?;
        check_capacity(&who, model.particles.len(), cloud.count)?;
        cloud
            .add_to(&mut model)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
    }
    let n = model.particles.len();
    if n == 0 {
        return Err(scene_error(
            "the scene has no particles; add a [[particle]], [[ring]] or [[block]]",
        ));
    }

    for (k, b) in file.bonds.iter().enumerate() {
        let index = |field: &str, v: i64| {
            u32::try_from(v)
                .ok()
                .filter(|&i| (i as usize) < n)
                .ok_or_else(|| {
                    scene_error(format!(
                        "bond[{k}].{field} = {v}: no such particle ({})",
                        plural(n, "particle")
                    ))
                })
        };
        let (i, j) = (index("i", b.i)?, index("j", b.j)?);
        if i == j {
            return Err(scene_error(format!(
                "bond[{k}]: i = j = {i}: a particle cannot be bonded to itself"
            )));
        }
        let pair = (i.min(j), i.max(j));
        if let Some(first) = bonded.get(&pair) {
            return Err(scene_error(format!(
                "bond[{k}] (i = {i}, j = {j}): particles {} and {} are already bonded by {first}",
                pair.0, pair.1
            )));
        }
        let mut values = [0.0; 3];
        let overrides = [b.k_bend, b.k_axial, b.k_shear];
        for ((v, (name, default)), over) in values.iter_mut().zip(binder.k).zip(overrides) {
            *v = match over {
                Some(x) => non_negative(&format!("bond[{k}].{name}"), x)?,
                None => default.ok_or_else(|| {
                    scene_error(format!(
                        "bond[{k}] (i = {i}, j = {j}): {name} is not given, and [binder] has no {name} default"
                    ))
                })?,
            };
        }
        let bond = Bond::from_current(&model.particles, i, j, stiffness_from(values))
            .map_err(|e| scene_error(format!("bond[{k}]: {e}")))?;
        model.bonds.push(bond);
        bonded.insert(pair, format!("bond[{k}]"));
    }

    if !file.walls.is_empty() && law.is_none() {
        return Err(scene_error(
            "wall[0]: walls act only through the contact law, but the scene has no [contact] section",
        ));
    }
    for (k, w) in file.walls.iter().enumerate() {
        let key = |field: &str| format!("wall[{k}].{field}");
        let point = finite_vec(&key("point"), w.point)?;
        let normal = unit(nonzero_vec(
            &key("normal"),
            w.normal,
            "it points into the domain",
        )?);
        let stiffness = match (w.stiffness, law) {
            (Some(s), Some(ContactLaw::Hertz)) => {
                return Err(scene_error(format!(
                    "{} = {s}: only the \"binder\" law uses it; under \"hertz\" give the wall a material (or none: rigid)",
                    key("stiffness")
                )))
            }
            (Some(s), _) => non_negative(&key("stiffness"), s)?,
            (None, Some(ContactLaw::Binder { k_pp })) => k_pp,
            // Hertz walls take their stiffness from the materials; walls without a
            // contact law were rejected above.
            (None, _) => 0.0,
        };
        let material = w
            .material
            .as_deref()
            .map(|name| material_index(&key("material"), name, &materials))
            .transpose()?;
        model.walls.push(Wall {
            point,
            normal,
            stiffness,
            material,
        });
    }

    if let (Some(law), Some(c)) = (law, &file.contact) {
        let skin = match c.skin {
            Some(s) => non_negative("contact.skin", s)?,
            None => DEFAULT_SKIN_FRACTION * model.particles.max_radius(),
        };
        let max_contacts = match c.max_contacts {
            Some(k) => int_in("contact.max_contacts", k, MAX_CONTACT_SLOTS)?,
            None => DEFAULT_MAX_CONTACTS,
        };
        model.contact = Some(ContactParams {
            law,
            skin,
            max_contacts,
        });
    }
    if let Some(d) = &file.drag {
        model.drag = Some(Drag {
            coefficient: non_negative("drag.coefficient", d.coefficient)?,
            fluid_velocity: finite_vec("drag.fluid_velocity", d.fluid_velocity)?,
            magnus: {
                let m = d.magnus;
                if !m.is_finite() {
                    return Err(scene_error(format!("drag.magnus = {m}: must be finite")));
                }
                m
            },
        });
    }
    if let Some(nf) = &file.near_field {
        let finite = |key: &str, v: f64| {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(scene_error(format!(
                    "near_field.{key} = {v}: must be finite"
                )))
            }
        };
        model.near_field = Some(NearField {
            kappa_attractive: finite("kappa_attractive", nf.kappa_attractive)?,
            lambda_attractive: finite("lambda_attractive", nf.lambda_attractive)?,
            kappa_repulsive: finite("kappa_repulsive", nf.kappa_repulsive)?,
            lambda_repulsive: finite("lambda_repulsive", nf.lambda_repulsive)?,
            cutoff: positive("near_field.cutoff", nf.cutoff)?,
        });
        if model.contact.is_none() {
            return Err(scene_error(
                "near_field: near-field forces use the contact neighbour list; add a [contact] section",
            ));
        }
    }
    if let Some(d) = &file.domain {
        let min = finite_vec("domain.min", d.min)?;
        let max = finite_vec("domain.max", d.max)?;
        if !(max.cmpgt(min).all()) {
            return Err(scene_error(format!(
                "domain.max = {}: must be > domain.min = {} in every component",
                fmt_vec(d.max),
                fmt_vec(d.min)
            )));
        }
        let remove = match d.on_exit.as_deref() {
            None | Some("error") => false,
            Some("remove") => true,
            Some(other) => {
                return Err(scene_error(format!(
                    "domain.on_exit = {other:?}: unknown (allowed: \"error\", \"remove\")"
                )))
            }
        };
        let domain = Domain { min, max, remove };
        if let Some(i) =
            (0..model.particles.len()).find(|&i| !domain.contains(model.particles.position[i]))
        {
            return Err(scene_error(format!(
                "particle {i} at {:?} starts outside the domain {}..{}",
                model.particles.position[i].to_array(),
                fmt_vec(d.min),
                fmt_vec(d.max)
            )));
        }
        model.domain = Some(domain);
    }
    if let Some(c) = &file.contact {
        let limit = match c.max_initial_overlap {
            Some(v) => non_negative("contact.max_initial_overlap", v)?,
            None => MAX_INITIAL_OVERLAP,
        };
        check_initial_overlaps(&model, limit)?;
    }
    for (k, it) in file.interactions.iter().enumerate() {
        let key = |field: &str| format!("interaction[{k}].{field}");
        let a = material_index(&key("materials"), &it.materials[0], &materials)?;
        let b = material_index(&key("materials"), &it.materials[1], &materials)?;
        let unit_interval = |field: &str, v: Option<f64>| -> Result<Option<f64>> {
            match v {
                Some(x) if !(0.0..=1.0).contains(&x) => Err(scene_error(format!(
                    "{} = {x}: must be in [0, 1]",
                    key(field)
                ))),
                other => Ok(other),
            }
        };
        let friction_static = it
            .friction_static
            .map(|v| non_negative(&key("friction_static"), v))
            .transpose()?;
        let friction_dynamic = it
            .friction_dynamic
            .map(|v| non_negative(&key("friction_dynamic"), v))
            .transpose()?;
        if let (Some(s), Some(d)) = (friction_static, friction_dynamic) {
            if d > s {
                return Err(scene_error(format!(
                    "{} = {d}: must be <= friction_static = {s}",
                    key("friction_dynamic")
                )));
            }
        }
        model.interactions.push(Interaction {
            materials: [a, b],
            restitution: unit_interval("restitution", it.restitution)?,
            friction_static,
            friction_dynamic,
        });
    }
    model.materials = materials;

    Ok(Scene { simulation, model })
}

/// Rejects scenes with contacts whose particles overlap by more than `max_overlap` of
/// the smaller radius at `t = 0` (`[contact] max_initial_overlap`, default
/// [`MAX_INITIAL_OVERLAP`]), naming the first such pair.
fn check_initial_overlaps(model: &Model, max_overlap: f64) -> Result<()> {
    match worst_initial_overlap(model, Some(max_overlap)) {
        Some((ratio, i, j, overlap)) if ratio > max_overlap => {
            let limit = overlap / ratio * max_overlap;
            Err(scene_error(format!(
                "particles {i} and {j} overlap by {overlap:.3e} m at t = 0, more than {max_overlap} of the smaller radius ({limit:.3e} m): move them apart, or raise [contact] max_initial_overlap"
            )))
        }
        _ => Ok(()),
    }
}

/// The largest overlap of two unbonded particles relative to the smaller radius:
/// `(ratio, i, j, overlap)`, or `None` without overlaps. With `stop_above`, the first
/// pair above it (in particle order) is returned at once.
fn worst_initial_overlap(
    model: &Model,
    stop_above: Option<f64>,
) -> Option<(f64, usize, usize, f64)> {
    let p = &model.particles;
    let bonded: std::collections::HashSet<(u32, u32)> = model
        .bonds
        .iter()
        .map(|b| (b.i.min(b.j), b.i.max(b.j)))
        .collect();
    let mut list = crate::neighbor::NeighborList::new(0.0);
    list.build(&p.position, &p.radius);
    let mut worst: Option<(f64, usize, usize, f64)> = None;
    for i in 0..p.len() {
        for &j in list.of(i) {
            let j = j as usize;
            if j <= i || bonded.contains(&(i as u32, j as u32)) {
                continue;
            }
            let overlap = p.radius[i] + p.radius[j] - p.position[i].distance(p.position[j]);
            if overlap <= 0.0 {
                continue;
            }
            let ratio = overlap / p.radius[i].min(p.radius[j]);
            if stop_above.is_some_and(|limit| ratio > limit) {
                return Some((ratio, i, j, overlap));
            }
            if worst.map_or(true, |w| ratio > w.0) {
                worst = Some((ratio, i, j, overlap));
            }
        }
    }
    worst
}

/// Reads, parses and validates the scene file at `path`.
///
/// Errors are those of [`parse_scene`] prefixed with the path, or [`Error::Io`] if the
/// file cannot be read.
pub fn load_scene(path: &Path) -> Result<Scene> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_scene(&text).map_err(|e| match e {
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

// ---------------------------------------------------------------------------------------
// The way back: a resolved scene as an explicit TOML file.
// ---------------------------------------------------------------------------------------

/// A float as a TOML literal that parses back to the same bits (shortest round-trip
/// representation).
fn toml_float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else {
        // Debug prints the shortest representation that round-trips, always with a
        // fraction or exponent ("1.0", "1e-7", "inf"): valid TOML floats.
        format!("{x:?}")
    }
}

fn toml_vec(v: DVec3) -> String {
    format!(
        "[{}, {}, {}]",
        toml_float(v.x),
        toml_float(v.y),
        toml_float(v.z)
    )
}

/// Writes a resolved scene as TOML: `[simulation]`, `[binder]` (shear form only),
/// `[contact]`, then every particle, bond and wall explicitly, with every default
/// filled in. Floats use their shortest round-trip form, so [`parse_scene`] of the
/// result gives back an equal [`Scene`].
///
/// Bond rest states are not written: parsing re-derives them from the initial
/// configuration, which is how scene bonds are formed. A bond whose rest state differs
/// from that (a scene taken from the middle of a run) is logged as a warning.
pub fn scene_to_toml(scene: &Scene) -> String {
    use std::fmt::Write as _;

    let sim = &scene.simulation;
    let m = &scene.model;
    let mut s = String::new();
    // Writing to a String cannot fail: the `let _ =` drop infallible results.
    let _ = writeln!(
        s,
        "# Resolved varidem scene: every particle, bond and wall listed explicitly.\n\
         # Bond rest states are those of this initial configuration.\n"
    );
    let _ = writeln!(s, "[simulation]");
    let _ = writeln!(s, "dt = {}", toml_float(sim.dt));
    match sim.duration {
        RunLength::Steps(n) => {
            let _ = writeln!(s, "steps = {n}");
        }
        RunLength::EndTime(t) => {
            let _ = writeln!(s, "t_end = {}", toml_float(t));
        }
    }
    let _ = writeln!(s, "integrator = \"{}\"", sim.integrator.name());
    let _ = writeln!(s, "output_every = {}", sim.output_every);
    let _ = writeln!(s, "gravity = {}", toml_vec(m.gravity));
    if let Some(p) = sim.precision {
        let _ = writeln!(s, "precision = \"{p}\"");
    }
    if let Some(k) = sim.gpu_max_neighbors {
        let _ = writeln!(s, "max_neighbors = {k}");
    }
    if let Some(k) = sim.gpu_bucket_capacity {
        let _ = writeln!(s, "bucket_capacity = {k}");
    }
    if sim.integrator == IntegratorKind::CampelloTrapezoidal {
        let _ = writeln!(s, "phi = {}", toml_float(sim.trapezoidal.phi));
        let _ = writeln!(s, "tolerance = {}", toml_float(sim.trapezoidal.tolerance));
    }

    let shear = SHEAR_FORMS
        .iter()
        .find(|(_, f)| *f == m.shear)
        .map_or("objective", |(n, _)| n);
    let _ = writeln!(s, "\n[binder]\nshear = \"{shear}\"");

    if let Some(c) = &m.contact {
        let _ = writeln!(s, "\n[contact]");
        match c.law {
            ContactLaw::Binder { k_pp } => {
                let _ = writeln!(s, "law = \"binder\"\nk_pp = {}", toml_float(k_pp));
            }
            ContactLaw::Hertz => {
                let _ = writeln!(s, "law = \"hertz\"");
            }
        }
        let _ = writeln!(s, "skin = {}", toml_float(c.skin));
        let _ = writeln!(s, "max_contacts = {}", c.max_contacts);
        // Overlaps the scene already has must parse back.
        if let Some((ratio, ..)) = worst_initial_overlap(m, None) {
            if ratio > MAX_INITIAL_OVERLAP {
                let _ = writeln!(s, "max_initial_overlap = {}", toml_float(ratio));
            }
        }
    }
    if let Some(d) = &m.domain {
        let _ = writeln!(
            s,
            "\n[domain]\nmin = {}\nmax = {}\non_exit = \"{}\"",
            toml_vec(d.min),
            toml_vec(d.max),
            if d.remove { "remove" } else { "error" }
        );
    }
    if let Some(d) = &m.drag {
        let _ = writeln!(
            s,
            "\n[drag]\ncoefficient = {}\nfluid_velocity = {}\nmagnus = {}",
            toml_float(d.coefficient),
            toml_vec(d.fluid_velocity),
            toml_float(d.magnus)
        );
    }
    if let Some(nf) = &m.near_field {
        let _ = writeln!(
            s,
            "\n[near_field]\nkappa_attractive = {}\nlambda_attractive = {}\nkappa_repulsive = {}\nlambda_repulsive = {}\ncutoff = {}",
            toml_float(nf.kappa_attractive),
            toml_float(nf.lambda_attractive),
            toml_float(nf.kappa_repulsive),
            toml_float(nf.lambda_repulsive),
            toml_float(nf.cutoff)
        );
    }
    for it in &m.interactions {
        let name = |k: u32| m.materials[k as usize].name.clone();
        let _ = writeln!(
            s,
            "\n[[interaction]]\nmaterials = [{:?}, {:?}]",
            name(it.materials[0]),
            name(it.materials[1])
        );
        for (k, v) in [
            ("restitution", it.restitution),
            ("friction_static", it.friction_static),
            ("friction_dynamic", it.friction_dynamic),
        ] {
            if let Some(v) = v {
                let _ = writeln!(s, "{k} = {}", toml_float(v));
            }
        }
    }
    for mat in &m.materials {
        let _ = writeln!(s, "\n[[material]]\nname = {:?}", mat.name);
        for (k, v) in [
            ("young", mat.young),
            ("poisson", mat.poisson),
            ("shear_modulus", mat.shear_modulus),
            ("density", mat.density),
            ("restitution", mat.restitution),
            ("friction_static", mat.friction_static),
            ("friction_dynamic", mat.friction_dynamic),
        ] {
            let _ = writeln!(s, "{k} = {}", toml_float(v));
        }
    }

    let p = &m.particles;
    for i in 0..p.len() {
        let q = p.get(i);
        let _ = writeln!(s, "\n[[particle]]");
        let _ = writeln!(s, "position = {}", toml_vec(q.position));
        let _ = writeln!(s, "velocity = {}", toml_vec(q.velocity));
        let _ = writeln!(s, "rotation = {}", toml_vec(q.rotation));
        let _ = writeln!(s, "angular_velocity = {}", toml_vec(q.angular_velocity));
        let _ = writeln!(s, "mass = {}", toml_float(q.mass));
        let _ = writeln!(s, "inertia = {}", toml_float(q.inertia));
        let _ = writeln!(s, "radius = {}", toml_float(q.radius));
        if q.hold_position {
            let _ = writeln!(s, "hold_position = true");
        }
        if q.hold_rotation {
            let _ = writeln!(s, "hold_rotation = true");
        }
        if let Some(o) = q.pendulum_offset {
            let _ = writeln!(s, "pendulum_offset = {}", toml_vec(o));
        }
        if let Some(mat) = m.materials.get(q.material as usize) {
            let _ = writeln!(s, "material = {:?}", mat.name);
        }
    }

    let mut stale = 0usize;
    for b in &m.bonds {
        if Bond::from_current(p, b.i, b.j, b.stiffness()).as_ref() != Ok(b) {
            stale += 1;
        }
        let _ = writeln!(s, "\n[[bond]]\ni = {}\nj = {}", b.i, b.j);
        let _ = writeln!(s, "k_bend = {}", toml_float(b.k_bend));
        let _ = writeln!(s, "k_axial = {}", toml_float(b.k_axial));
        let _ = writeln!(s, "k_shear = {}", toml_float(b.k_shear));
    }
    if stale > 0 {
        log::warn!(
            "scene_to_toml: {stale} of {} bonds have rest states other than the current configuration's; the TOML re-derives them from it",
            m.bonds.len()
        );
    }

    for w in &m.walls {
        let _ = writeln!(s, "\n[[wall]]");
        let _ = writeln!(s, "point = {}", toml_vec(w.point));
        let _ = writeln!(s, "normal = {}", toml_vec(w.normal));
        match w.material.and_then(|k| m.materials.get(k as usize)) {
            Some(mat) => {
                let _ = writeln!(s, "material = {:?}", mat.name);
            }
            None if matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz)) => {}
            None => {
                let _ = writeln!(s, "stiffness = {}", toml_float(w.stiffness));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FLAG_HELD, FLAG_PENDULUM};

    const MINIMAL: &str = "[simulation]\ndt = 1e-3\nsteps = 10\n\n\
        [[particle]]\nposition = [0.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n";

    fn scenes_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
    }

    /// The error message of parsing `text`, which must fail.
    fn error_of(text: &str) -> String {
        match parse_scene(text) {
            Ok(_) => panic!("scene parsed but should not have:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    fn assert_error(text: &str, expected: &str) {
        let msg = error_of(text);
        assert!(
            msg.contains(expected),
            "error {msg:?} does not contain {expected:?}"
        );
        assert!(!msg.contains('\n'), "error is not one line: {msg:?}");
    }

    /// A scene with `n` bonded-free particles on the x axis, 1 m apart, and `extra` text.
    fn chain(n: usize, extra: &str) -> String {
        let mut s = String::from("[simulation]\ndt = 1e-3\nsteps = 10\n");
        s.push_str(extra);
        for i in 0..n {
            s.push_str(&format!(
                "\n[[particle]]\nposition = [{i}.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n"
            ));
        }
        s
    }

    /// A block whose bond cutoff spans many lattice spacings is refused (a tiny spacing
    /// or a huge cutoff made the lattice scan run for ever; found by tests/fuzz_scene.rs).
    #[test]
    fn block_bond_reach_is_bounded() {
        let block = |spacing: &str, cutoff: &str| {
            chain(
                0,
                &format!(
                    "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n\
                     [[block]]\ncounts = [3, 3, 3]\nspacing = {spacing}\nradius = 0.25\n\
                     density = 1.0\nbond_cutoff = {cutoff}\n"
                ),
            )
        };
        assert_error(
            &block("1.0", "1e308"),
            "block[0].bond_cutoff = 1e308: more than 8 spacings",
        );
        assert_error(
            &block("1e-320", "1.1"),
            "block[0].bond_cutoff = 1.1e0: more than 8 spacings",
        );
        assert!(parse_scene(&block("1.0", "8.0")).is_ok());
    }

    /// A ring's random amplitude so large that `[−a, a]` has no finite width is an error
    /// naming the key (the sampler panicked on it; found by tests/fuzz_scene.rs).
    #[test]
    fn ring_amplitudes_must_have_a_finite_interval() {
        let ring = |key: &str| {
            format!(
                "[simulation]\ndt = 1e-3\nsteps = 10\n[[ring]]\ncount = 4\ndiameter = 1.0\n\
                 center = [0.0, 0.0, 0.0]\naxis = [0.0, 0.0, 1.0]\nmass = 1.0\nbond = false\n{key} = 1e308\n"
            )
        };
        for key in ["random_velocity", "random_angular_velocity"] {
            assert_error(&ring(key), &format!("ring[0].{key} = 1e308: too large"));
        }
        let ok = ring("random_velocity").replace("1e308", "1e300");
        assert!(parse_scene(&ok).is_ok(), "{:?}", parse_scene(&ok).err());
    }

    #[test]
    fn minimal_scene_gets_the_documented_defaults() {
        let s = parse_scene(MINIMAL).unwrap();
        assert_eq!(s.simulation.dt, 1e-3);
        assert_eq!(s.simulation.duration, RunLength::Steps(10));
        assert_eq!(s.simulation.integrator, IntegratorKind::Variational);
        assert_eq!(
            s.simulation.output_every, 1,
            "round(10/100) = 0 → at least 1"
        );
        assert_eq!(s.simulation.precision, None);
        assert_eq!(s.simulation.gpu_max_neighbors, None);
        assert_eq!(s.simulation.gpu_bucket_capacity, None);
        let m = &s.model;
        assert_eq!(m.gravity, DVec3::ZERO);
        assert_eq!(m.contact, None);
        assert!(m.bonds.is_empty() && m.walls.is_empty());
        assert_eq!(m.shear, ShearForm::Objective);
        let p = m.particles.get(0);
        assert_eq!(p.velocity, DVec3::ZERO);
        assert_eq!(p.rotation, DVec3::ZERO);
        assert_eq!(p.angular_velocity, DVec3::ZERO);
        assert_eq!(p.inertia, 0.4 * 1.0 * 0.1 * 0.1);
        assert!(!p.hold_position && p.pendulum_offset.is_none());
    }

    #[test]
    fn gpu_keys_are_read_from_simulation() {
        let s = parse_scene(&MINIMAL.replace(
            "steps = 10",
            "steps = 10\nprecision = \"f32\"\nmax_neighbors = 64\nbucket_capacity = 1",
        ))
        .unwrap();
        assert_eq!(s.simulation.precision, Some(Precision::F32));
        assert_eq!(s.simulation.gpu_max_neighbors, Some(64));
        assert_eq!(s.simulation.gpu_bucket_capacity, Some(1));
    }

    #[test]
    fn output_every_defaults_to_a_hundredth_of_the_run() {
        let s = parse_scene(&MINIMAL.replace("steps = 10", "t_end = 35.0")).unwrap();
        assert_eq!(s.simulation.steps(), 35_000);
        assert_eq!(s.simulation.output_every, 350);
        let s = parse_scene(&MINIMAL.replace("steps = 10", "steps = 1249")).unwrap();
        assert_eq!(s.simulation.output_every, 12);
    }

    #[test]
    fn every_scene_file_parses() {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(scenes_dir()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!scene.model.particles.is_empty());
                names.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        names.sort();
        assert_eq!(
            names,
            [
                "block-impact.toml",
                "container.toml",
                "pendulum.toml",
                "spinning-sphere.toml",
                "three-spheres.toml",
                "torus-free.toml",
                "torus-impact.toml"
            ]
        );
    }

    #[test]
    fn default_scene_is_the_torus_impact() {
        let file = load_scene(&scenes_dir().join("torus-impact.toml")).unwrap();
        assert_eq!(default_scene(), file);
    }

    #[test]
    fn pendulum_scene_is_baker_gonzalez_section_3() {
        let s = load_scene(&scenes_dir().join("pendulum.toml")).unwrap();
        assert_eq!(s.simulation.dt, 1e-3);
        assert_eq!(s.simulation.duration, RunLength::EndTime(10.0));
        assert_eq!(s.simulation.steps(), 10_000);
        assert_eq!(s.simulation.integrator, IntegratorKind::Variational);
        assert_eq!(s.simulation.output_every, 100);
        let m = &s.model;
        assert_eq!(m.gravity, DVec3::Z);
        assert_eq!(m.contact, None);
        assert_eq!(m.particles.len(), 1);
        let p = m.particles.get(0);
        assert_eq!(p.position, DVec3::ZERO);
        assert_eq!((p.mass, p.inertia, p.radius), (1.0, 1.0, 0.1));
        assert!(p.hold_position);
        assert_eq!(m.particles.flags[0], FLAG_HELD | FLAG_PENDULUM);
        assert_eq!(p.pendulum_offset, Some(DVec3::Z));
        let alpha = 2.0 * (3.0 * std::f64::consts::PI / 8.0).tan();
        assert!((p.rotation - DVec3::new(0.0, alpha, 0.0)).length() < 1e-14);
        let w = 0.4 * std::f64::consts::FRAC_PI_4.sin().powi(2);
        assert!((p.angular_velocity - DVec3::new(w, 0.0, w)).length() < 1e-15);
    }

    #[test]
    fn torus_impact_scene_is_section_4_1_with_a_005_gap() {
        let s = default_scene();
        assert_eq!(s.simulation.steps(), 35_000);
        assert_eq!(s.simulation.output_every, 100);
        let m = &s.model;
        assert_eq!(m.particles.len(), 80);
        assert_eq!(m.bonds.len(), 80);
        let k = m.bonds[0].stiffness();
        assert_eq!((k.bend, k.axial, k.shear), (10.0, 200.0, 200.0));
        assert_eq!(m.shear, ShearForm::Objective);
        let c = m.contact.unwrap();
        assert_eq!(c.law, ContactLaw::Binder { k_pp: 2100.0 });
        let r = m.particles.max_radius();
        assert!((r - 1.5 * (std::f64::consts::PI / 80.0).sin()).abs() < 1e-16);
        assert_eq!(c.skin, 0.1 * r);
        assert_eq!(m.walls.len(), 1);
        assert_eq!(m.walls[0].normal, DVec3::X);
        assert_eq!(m.walls[0].stiffness, 2100.0);
        let gap = (0..80)
            .map(|i| m.walls[0].distance(m.particles.position[i]) - m.particles.radius[i])
            .fold(f64::INFINITY, f64::min);
        assert!((gap - 0.05).abs() < 1e-14, "gap {gap}");
        for i in 0..80 {
            assert_eq!(m.particles.velocity[i], DVec3::new(-1.0, 0.0, 0.0));
            assert_eq!(m.particles.position[i].z, 0.0, "ring in the x-y plane");
        }
    }

    #[test]
    fn torus_free_scene_is_seeded_and_wall_free() {
        let s = load_scene(&scenes_dir().join("torus-free.toml")).unwrap();
        let again = load_scene(&scenes_dir().join("torus-free.toml")).unwrap();
        assert_eq!(s, again, "seeded: the same scene every time");
        let m = &s.model;
        assert_eq!(
            (m.particles.len(), m.bonds.len(), m.walls.len()),
            (80, 80, 0)
        );
        assert_eq!(m.gravity, DVec3::ZERO);
        assert!(m.contact.is_some());
        assert!(m
            .particles
            .velocity
            .iter()
            .all(|v| v.abs().max_element() <= 0.1));
        assert!(m.particles.velocity[0] != m.particles.velocity[1]);
        assert!(m
            .particles
            .angular_velocity
            .iter()
            .all(|w| w.abs().max_element() <= 0.5));
        assert_eq!(s.simulation.steps(), 10_000);
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let msg = error_of(&MINIMAL.replace("radius = 0.1", "radius = 0.1\ncolour = \"red\""));
        assert!(msg.contains("unknown field `colour`"), "{msg}");
        assert!(msg.contains("line 9"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert_error(
            &MINIMAL.replace("steps = 10", "steps = 10\ntimestep = 1"),
            "unknown field `timestep`",
        );
        assert_error(
            &format!("{MINIMAL}\n[simulaton]\n"),
            "unknown field `simulaton`",
        );
    }

    #[test]
    fn syntax_and_type_errors_carry_toml_messages() {
        assert_error("[simulation\ndt = 1", "line 1");
        assert_error(&MINIMAL.replace("mass = 1.0", "mass = \"heavy\""), "line 7");
        assert_error("", "missing field `simulation`");
        assert_error(
            &MINIMAL.replace("mass = 1.0\n", ""),
            "particle[0].mass: missing (give mass, or a material with a density)",
        );
    }

    #[test]
    fn negative_mass_is_named_with_its_value_and_range() {
        let text = chain(4, "");
        // Make the fourth particle's mass negative.
        let idx = text.rfind("mass = 1.0").unwrap();
        let text = format!("{}mass = -1{}", &text[..idx], &text[idx + 10..]);
        assert_error(&text, "particle[3].mass = -1: must be > 0 and finite");
    }

    #[test]
    fn out_of_range_values_are_named() {
        let cases: [(&str, &str, &str); 19] = [
            ("dt = 1e-3", "dt = 0.0", "simulation.dt = 0: must be > 0 and finite"),
            ("dt = 1e-3", "dt = nan", "simulation.dt = NaN: must be > 0"),
            ("steps = 10", "steps = -5", "simulation.steps = -5: must be >= 1"),
            ("steps = 10", "steps = 0", "simulation.steps = 0: must be >= 1"),
            ("steps = 10", "t_end = -1.0", "simulation.t_end = -1: must be > 0"),
            ("steps = 10", "t_end = 1e-4", "simulation.t_end = 0.0001: shorter than half a time step"),
            ("steps = 10", "steps = 10\nt_end = 1.0", "steps and t_end are both given"),
            ("steps = 10", "", "give steps (a number of steps) or t_end"),
            ("steps = 10", "steps = 10\noutput_every = 0", "simulation.output_every = 0: must be >= 1"),
            ("steps = 10", "steps = 10\nintegrator = \"rk4\"", "simulation.integrator = \"rk4\": unknown integrator (allowed: \"variational\", \"variational-exact\", \"symplectic-euler\", \"campello-trapezoidal\")"),
            ("steps = 10", "steps = 10\ngravity = [0.0, inf, 0.0]", "simulation.gravity = [0, inf, 0]: every component must be finite"),
            ("steps = 10", "steps = 10\nprecision = \"f16\"", "simulation.precision = \"f16\": unknown precision (allowed: \"f32\", \"f64\")"),
            ("steps = 10", "steps = 10\nmax_neighbors = 0", "simulation.max_neighbors = 0: must be in 1..=64"),
            ("steps = 10", "steps = 10\nmax_neighbors = 65", "simulation.max_neighbors = 65: must be in 1..=64"),
            ("steps = 10", "steps = 10\nbucket_capacity = 0", "simulation.bucket_capacity = 0: must be in 1..=4294967295"),
            ("steps = 10", "steps = 10\nbucket_capacity = -3", "simulation.bucket_capacity = -3: must be in 1..=4294967295"),
            ("radius = 0.1", "radius = -0.5", "particle[0].radius = -0.5: must be > 0 and finite"),
            ("radius = 0.1", "radius = 0.1\ninertia = 0.0", "particle[0].inertia = 0: must be > 0 and finite"),
            ("radius = 0.1", "radius = 0.1\nhold_position = true\nvelocity = [1.0, 0.0, 0.0]", "particle[0].velocity = [1, 0, 0]: must be zero when hold_position = true"),
        ];
        for (from, to, expected) in cases {
            assert_error(&MINIMAL.replace(from, to), expected);
        }
    }

    #[test]
    fn section_values_are_checked() {
        assert_error(
            &chain(1, "[contact]\nlaw = \"hertz\"\nk_pp = 1.0\n"),
            "contact.k_pp = 1: only the \"binder\" law uses it",
        );
        assert_error(
            &chain(1, "[contact]\nlaw = \"dmt\"\n"),
            "contact.law = \"dmt\": unknown contact law (allowed: \"binder\", \"hertz\")",
        );
        // Overlaps at t = 0: an error for unbonded pairs, whatever the contact law.
        let two = "[simulation]\ndt = 1e-3\nsteps = 10\n[contact]\nlaw = \"binder\"\nk_pp = 10.0\n\
            [[particle]]\nposition = [0.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n\
            [[particle]]\nposition = [0.15, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n";
        assert_error(two, "particles 0 and 1 overlap by 5.000e-2 m at t = 0");
        let bonded =
            format!("{two}[[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n");
        assert!(parse_scene(&bonded).is_ok(), "bonded pairs may overlap");
        // Granular keys: materials, interactions, clouds, drag, near field.
        let granular = |extra: &str| {
            format!(
                "[simulation]\ndt = 1e-5\nsteps = 10\n[contact]\nlaw = \"hertz\"\n\
                 [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = 2500.0\n\
                 restitution = 0.5\nfriction_static = 0.5\n\
                 [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.01\n{extra}"
            )
        };
        assert!(parse_scene(&granular("")).is_ok());
        for (extra, expected) in [
            ("[[material]]\nname = \"glass\"\nyoung = 1.0\npoisson = 0.3\ndensity = 1.0\nrestitution = 0.5\nfriction_static = 0.5\n", "material[1].name = \"glass\": material[0] already has that name"),
            ("[[material]]\nname = \"x\"\nyoung = 1.0\npoisson = 0.7\ndensity = 1.0\nrestitution = 0.5\nfriction_static = 0.5\n", "material[1].poisson = 0.7: must be in (-1, 0.5]"),
            ("[[material]]\nname = \"x\"\nyoung = 1.0\npoisson = 0.3\ndensity = 1.0\nrestitution = 1.5\nfriction_static = 0.5\n", "material[1].restitution = 1.5: must be in [0, 1]"),
            ("[[material]]\nname = \"x\"\nyoung = 1.0\npoisson = 0.3\ndensity = 1.0\nrestitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.6\n", "material[1].friction_dynamic = 0.6: must be <= friction_static = 0.5"),
            ("[[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 0.01\nmaterial = \"steel\"\n", "particle[1].material = \"steel\": unknown material (defined: \"glass\")"),
            ("[[particle]]\nposition = [0.019, 0.0, 0.0]\nradius = 0.01\n", "particles 0 and 1 overlap by"),
            ("[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nstiffness = 5.0\n", "wall[0].stiffness = 5: only the \"binder\" law uses it"),
            ("[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 0.0]\n", "wall[0].normal = [0, 0, 0]: must be a non-zero vector"),
            ("[[interaction]]\nmaterials = [\"glass\", \"sand\"]\n", "interaction[0].materials = \"sand\": unknown material"),
            ("[[cloud]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.01, 0.01, 0.01]\ncount = 5\nradius = 0.01\n", "cloud[0]: the box"),
            ("[[cloud]]\nmin = [1.0, 0.0, 0.0]\nmax = [1.2, 0.2, 0.2]\ncount = 5\nradius = 1e-320\n", "cloud[0].radius = 1e-320: a sphere of radius 1e-320 m and density 2.5e3 kg/m³ has mass 0e0 kg"),
            ("[[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 1e-110\ninertia = 1.0\n", "particle[1].radius = 1e-110: a sphere of radius 1e-110 m"),
            ("[drag]\ncoefficient = -1.0\n", "drag.coefficient = -1: must be >= 0"),
            ("[near_field]\ncutoff = 0.0\n", "near_field.cutoff = 0: must be > 0"),
            ("[domain]\nmin = [1.0, 1.0, 1.0]\nmax = [2.0, 2.0, 2.0]\n", "particle 0 at [0.0, 0.0, 0.0] starts outside the domain"),
            ("[domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, 1.0, 1.0]\non_exit = \"wrap\"\n", "domain.on_exit = \"wrap\": unknown"),
            ("[domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, -1.0, 1.0]\n", "domain.max = [1, -1, 1]: must be > domain.min"),
        ] {
            assert_error(&granular(extra), expected);
        }
        assert_error(
            &chain(1, "[contact]\nlaw = \"binder\"\n"),
            "contact.k_pp: missing",
        );
        assert_error(
            &chain(1, "[contact]\nlaw = \"binder\"\nk_pp = -3.0\n"),
            "contact.k_pp = -3: must be >= 0 and finite",
        );
        assert_error(
            &chain(1, "[contact]\nlaw = \"binder\"\nk_pp = 3.0\nskin = -1.0\n"),
            "contact.skin = -1: must be >= 0",
        );
        assert_error(
            &chain(1, "[binder]\nk_bend = -10.0\n"),
            "binder.k_bend = -10: must be >= 0 and finite",
        );
        assert_error(
            &chain(1, "[binder]\nshear = \"sideways\"\n"),
            "binder.shear = \"sideways\": unknown shear form (allowed: \"objective\", \"printed\")",
        );
    }

    #[test]
    fn bond_to_missing_particle_is_named() {
        let text = chain(80, "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n");
        let bonds =
            "\n[[bond]]\ni = 0\nj = 1\n\n[[bond]]\ni = 1\nj = 2\n\n[[bond]]\ni = 2\nj = 17\n";
        parse_scene(&format!("{text}{bonds}")).unwrap();
        let bad = bonds.replace("j = 17", "j = 80");
        assert_error(
            &format!("{text}{bad}"),
            "bond[2].j = 80: no such particle (80 particles)",
        );
        let bad = bonds.replace("i = 2", "i = -1");
        assert_error(
            &format!("{text}{bad}"),
            "bond[2].i = -1: no such particle (80 particles)",
        );
    }

    #[test]
    fn self_and_duplicate_bonds_are_rejected() {
        let text = chain(3, "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n");
        assert_error(
            &format!("{text}\n[[bond]]\ni = 1\nj = 1\n"),
            "bond[0]: i = j = 1: a particle cannot be bonded to itself",
        );
        assert_error(
            &format!("{text}\n[[bond]]\ni = 0\nj = 2\n\n[[bond]]\ni = 2\nj = 0\n"),
            "bond[1] (i = 2, j = 0): particles 0 and 2 are already bonded by bond[0]",
        );
        // A duplicate of a generated (ring) bond: ring particles are 3..=8.
        let ring = "[[ring]]\ncount = 6\ndiameter = 2.0\ncenter = [10.0, 0.0, 0.0]\nmass = 1.0\n";
        assert_error(
            &format!("{text}\n{ring}\n[[bond]]\ni = 4\nj = 3\n"),
            "bond[0] (i = 4, j = 3): particles 3 and 4 are already bonded by ring[0]",
        );
    }

    #[test]
    fn bond_stiffness_is_required_only_when_used() {
        // Full overrides: no [binder] needed.
        let text = chain(2, "");
        let full = "\n[[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 2.0\nk_shear = 3.0\n";
        let s = parse_scene(&format!("{text}{full}")).unwrap();
        let k = s.model.bonds[0].stiffness();
        assert_eq!((k.bend, k.axial, k.shear), (1.0, 2.0, 3.0));
        assert_eq!(s.model.bonds[0].rest_length, 1.0);
        // A missing one names the bond and the key.
        assert_error(
            &format!("{text}\n[[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 2.0\n"),
            "bond[0] (i = 0, j = 1): k_shear is not given, and [binder] has no k_shear default",
        );
        // Overrides win over [binder]; the rest come from it.
        let text = chain(2, "[binder]\nk_bend = 5.0\nk_axial = 6.0\nk_shear = 7.0\n");
        let s = parse_scene(&format!("{text}\n[[bond]]\ni = 1\nj = 0\nk_axial = 0.5\n")).unwrap();
        let k = s.model.bonds[0].stiffness();
        assert_eq!((k.bend, k.axial, k.shear), (5.0, 0.5, 7.0));
        assert_error(
            &format!("{text}\n[[bond]]\ni = 1\nj = 0\nk_axial = -0.5\n"),
            "bond[0].k_axial = -0.5: must be >= 0 and finite",
        );
        // A bonded ring needs [binder]; an unbonded one does not.
        let ring = "[[ring]]\ncount = 6\ndiameter = 2.0\nmass = 1.0\n";
        assert_error(
            &format!("[simulation]\ndt = 1e-3\nsteps = 1\n{ring}"),
            "ring[0]: its bonds take their stiffnesses from [binder], but [binder] gives no k_bend",
        );
        let s = parse_scene(&format!(
            "[simulation]\ndt = 1e-3\nsteps = 1\n{ring}bond = false\n"
        ))
        .unwrap();
        assert!(s.model.bonds.is_empty());
        assert_eq!(s.model.particles.len(), 6);
    }

    #[test]
    fn walls_are_normalised_and_checked() {
        let contact = "[contact]\nlaw = \"binder\"\nk_pp = 50.0\n";
        let s = parse_scene(&chain(
            1,
            &format!("{contact}[[wall]]\npoint = [0.0, -1.0, 0.0]\nnormal = [0.0, 3.0, 4.0]\n"),
        ))
        .unwrap();
        assert_eq!(s.model.walls[0].normal, DVec3::new(0.0, 0.6, 0.8));
        assert_eq!(s.model.walls[0].stiffness, 50.0);
        assert_error(
            &chain(
                1,
                &format!("{contact}[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 0.0]\n"),
            ),
            "wall[0].normal = [0, 0, 0]: must be a non-zero vector",
        );
        assert_error(
            &chain(
                1,
                "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n",
            ),
            "walls act only through the contact law, but the scene has no [contact] section",
        );
        assert_error(
            &chain(
                1,
                &format!("{contact}[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0]\n"),
            ),
            "invalid length 2",
        );
    }

    #[test]
    fn generators_are_checked_and_numbered_after_explicit_particles() {
        let binder = "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n";
        let gens =
            "[[block]]\ncounts = [2, 2, 1]\nspacing = 1.0\nradius = 0.25\ndensity = 1000.0\n\
                    origin = [20.0, 0.0, 0.0]\nbond_cutoff = 1.1\n\n\
                    [[ring]]\ncount = 5\ndiameter = 2.0\ncenter = [10.0, 0.0, 0.0]\nmass = 2.0\n";
        let s = parse_scene(&chain(2, &format!("{binder}{gens}"))).unwrap();
        let m = &s.model;
        assert_eq!(m.particles.len(), 2 + 5 + 4, "explicit, ring, block");
        assert_eq!(m.particles.mass[2], 2.0, "rings come before blocks");
        assert_eq!(m.particles.position[7], DVec3::new(20.0, 0.0, 0.0));
        assert_eq!(m.bonds.len(), 5 + 4);
        assert_error(
            &chain(
                0,
                "[[ring]]\ncount = 1\ndiameter = 2.0\nmass = 1.0\nbond = false\n",
            ),
            "ring[0].count = 1: must be >= 2",
        );
        assert_error(
            &chain(0, "[[ring]]\ncount = 4\ndiameter = 2.0\nmass = 1.0\nbond = false\naxis = [0.0, 0.0, 0.0]\n"),
            "ring[0].axis = [0, 0, 0]: must be a non-zero vector",
        );
        assert_error(
            &chain(
                0,
                "[[ring]]\ncount = 4\ndiameter = 2.0\nmass = 1.0\nbond = false\nseed = -2\n",
            ),
            "ring[0].seed = -2: must be >= 0",
        );
        assert_error(
            &chain(
                0,
                "[[block]]\ncounts = [2, 0, 1]\nspacing = 1.0\nradius = 0.25\ndensity = 1.0\n",
            ),
            "block[0].counts = [2, 0, 1]: every count must be >= 1",
        );
        assert_error(
            &chain(0, "[[block]]\ncounts = [2, 1, 1]\nspacing = 1.0\nradius = 0.25\ndensity = 1.0\nradius_jitter = 1.0\n"),
            "block[0].radius_jitter = 1: must be >= 0 and < 1",
        );
        assert_error(
            &chain(0, ""),
            "the scene has no particles; add a [[particle]], [[ring]] or [[block]]",
        );
    }

    #[test]
    fn load_scene_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, MINIMAL.replace("mass = 1.0", "mass = -1.0")).unwrap();
        let msg = load_scene(&path).unwrap_err().to_string();
        assert!(msg.contains("bad.toml: particle[0].mass = -1"), "{msg}");
        let msg = load_scene(&dir.path().join("missing.toml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("missing.toml"), "{msg}");
    }

    fn assert_round_trip(scene: &Scene) {
        let text = scene_to_toml(scene);
        let back = parse_scene(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back, scene, "{text}");
        // And the written form is a fixed point.
        assert_eq!(scene_to_toml(&back), text);
    }

    #[test]
    fn scene_files_round_trip_through_toml() {
        for name in [
            "pendulum.toml",
            "torus-impact.toml",
            "torus-free.toml",
            "spinning-sphere.toml",
            "three-spheres.toml",
            "container.toml",
        ] {
            assert_round_trip(&load_scene(&scenes_dir().join(name)).unwrap());
        }
    }

    /// Every granular key survives the way back: materials, interactions, drag, near
    /// field, material names on particles and walls, rigid walls, locked rotations, the
    /// implicit integrator's parameters.
    #[test]
    fn a_granular_scene_round_trips() {
        let text = "[simulation]\ndt = 1e-5\nsteps = 10\nintegrator = \"campello-trapezoidal\"\n\
            phi = 0.6\ntolerance = 1e-6\n\
            [contact]\nlaw = \"hertz\"\nmax_contacts = 9\n\
            [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = 2500.0\n\
            restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n\
            [[material]]\nname = \"steel\"\nyoung = 2e11\npoisson = 0.28\nshear_modulus = 8e10\n\
            density = 7800.0\nrestitution = 0.9\nfriction_static = 0.2\n\
            [[interaction]]\nmaterials = [\"glass\", \"steel\"]\nfriction_static = 0.3\n\
            [drag]\ncoefficient = 0.1\nfluid_velocity = [1.0, 0.0, 0.0]\nmagnus = 0.01\n\
            [near_field]\nkappa_attractive = 1e-3\nlambda_attractive = 2.0\ncutoff = 0.05\n\
            [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.01\nmaterial = \"steel\"\nhold_rotation = true\n\
            [[cloud]]\nmin = [1.0, 0.0, 0.0]\nmax = [1.2, 0.2, 0.2]\ncount = 20\nradius = 0.01\n\
            radius_jitter = 0.1\nmaterial = \"glass\"\nseed = 4\n\
            [[wall]]\npoint = [0.0, 0.0, -1.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"steel\"\n\
            [[wall]]\npoint = [0.0, 0.0, 1.0]\nnormal = [0.0, 0.0, -1.0]\n\
            [domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [2.0, 1.0, 1.0]\non_exit = \"remove\"\n";
        let scene = parse_scene(text).unwrap();
        assert_eq!(scene.model.particles.len(), 21);
        assert_eq!(scene.model.particles.material[0], 1);
        assert_eq!(scene.model.walls[1].material, None);
        assert_eq!(scene.simulation.trapezoidal.phi, 0.6);
        assert!(scene.model.domain.is_some_and(|d| d.remove));
        assert_round_trip(&scene);
    }

    #[test]
    fn a_scene_with_every_feature_round_trips() {
        let text = "[simulation]\ndt = 2.5e-4\nsteps = 123\nintegrator = \"symplectic-euler\"\n\
            output_every = 7\ngravity = [0.1, -9.81, 1e-300]\n\
            precision = \"f64\"\nmax_neighbors = 48\nbucket_capacity = 24\n\
            [binder]\nk_bend = 0.3\nk_axial = 1e5\nk_shear = 7.0\nshear = \"printed\"\n\
            [contact]\nlaw = \"binder\"\nk_pp = 12.5\n\
            [[particle]]\nposition = [0.1, 0.2, 0.3]\nvelocity = [-0.0, 1e-20, 3.0]\n\
            rotation = [0.3, -0.2, 0.1]\nangular_velocity = [1.0, 2.0, 3.0]\nmass = 0.7\nradius = 0.2\n\
            [[particle]]\nposition = [1.1, 0.2, 0.3]\nmass = 0.7\nradius = 0.3\ninertia = 0.05\n\
            hold_position = true\npendulum_offset = [0.0, 0.1, 0.0]\n\
            [[bond]]\ni = 0\nj = 1\nk_shear = 0.125\n\
            [[wall]]\npoint = [0.0, 0.0, -5.0]\nnormal = [0.3, 0.4, 1.7]\n\
            [[wall]]\npoint = [0.0, 0.0, 5.0]\nnormal = [-1.0, -2.0, -3.0]\nstiffness = 3.0\n\
            [[ring]]\ncount = 12\ndiameter = 1.3\ncenter = [5.0, 5.0, 5.0]\naxis = [1.0, 1.0, 0.5]\n\
            mass = 0.3\nvelocity = [0.1, 0.0, 0.0]\nrandom_velocity = 0.2\n\
            random_angular_velocity = 3.0\nseed = 7\n\
            [[block]]\norigin = [-4.0, 0.0, 0.0]\ncounts = [3, 2, 2]\nspacing = 0.5\nradius = 0.2\n\
            radius_jitter = 0.1\ndensity = 2500.0\nvelocity = [0.0, 0.0, -1.0]\nbond_cutoff = 0.75\nseed = 3\n";
        let scene = parse_scene(text).unwrap();
        assert_eq!(scene.model.particles.len(), 2 + 12 + 12);
        assert_eq!(scene.simulation.precision, Some(Precision::F64));
        assert_eq!(scene.simulation.gpu_max_neighbors, Some(48));
        assert_eq!(scene.simulation.gpu_bucket_capacity, Some(24));
        assert_round_trip(&scene);
    }

    #[test]
    fn normalising_is_idempotent() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..100_000 {
            let v = DVec3::new(
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
            );
            let n = unit(v);
            assert!((n.length() - 1.0).abs() <= 4.0 * f64::EPSILON);
            assert_eq!(unit(n), n);
        }
    }

    #[test]
    fn toml_floats_are_exact() {
        for x in [
            0.1,
            -0.0,
            1e-300,
            5e-324,
            1e300,
            f64::MAX,
            1.0 / 3.0,
            123456789.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let text = format!("x = {}", toml_float(x));
            let t: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = t["x"].as_float().unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{text}");
        }
    }
}
