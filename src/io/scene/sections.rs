//! The sections that stand for one model value each, checked and converted:
//! `[simulation]` (run parameters and gravity), `[binder]` (shear form and default bond
//! stiffnesses), the `[contact]` law, `[[material]]`s, one `[[particle]]`, `[drag]` and
//! `[near_field]`.

use glam::DVec3;

use super::checks::{
    finite_vec, fmt_vec, int_in, mass_of, material_of, non_negative, positive, positive_int,
    scene_error, shown,
};
use super::schema::{
    BinderSection, ContactSection, DragSection, MaterialSection, NearFieldSection, ParticleSection,
    SimulationSection, TimeStepKey, Vec3,
};
use crate::error::Result;
use crate::integrators::IntegratorKind;
use crate::model::Precision;
use crate::model::MAX_NEIGHBORS;
use crate::model::{
    BondStiffness, BondStrength, ContactLaw, FrictionModel, HardContact, HardSolver, Material,
    OnNonconvergence, Particle, RollingModel, RunLength, ShearForm, SimulationParams,
};
use crate::physics::granular::{Drag, NearField};

/// The contact laws a scene may name in `[contact] law`.
const CONTACT_LAWS: [&str; 3] = ["binder", "hertz", "hard"];

/// The shear forms a scene may name in `[binder] shear`.
pub(super) const SHEAR_FORMS: [(&str, ShearForm); 2] = [
    ("objective", ShearForm::Objective),
    ("printed", ShearForm::Printed),
];

/// The GPU kernel precisions a scene may name in `[simulation] precision`.
const PRECISIONS: [(&str, Precision); 2] = [("f32", Precision::F32), ("f64", Precision::F64)];

/// Largest number of steps a run may have (`2^53`: every step index is exact in `f64`).
const MAX_STEPS: u64 = 1 << 53;

const ZERO: Vec3 = [0.0; 3];

/// What `[simulation] dt` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum TimeStep {
    /// This step (s).
    Seconds(f64),
    /// The step `varidem check` recommends (`dt = "auto"`).
    Auto,
}

/// `[simulation] dt`, checked (and `auto_dt_velocity`, which only `"auto"` reads).
pub(super) fn time_step(s: &SimulationSection) -> Result<TimeStep> {
    let step = match &s.dt {
        TimeStepKey::Seconds(dt) => TimeStep::Seconds(positive("simulation.dt", *dt)?),
        TimeStepKey::Name(name) if name == "auto" => TimeStep::Auto,
        TimeStepKey::Name(name) => {
            return Err(scene_error(format!(
                "simulation.dt = {}: give a time step in s, or \"auto\" for the step `varidem check` recommends",
                shown(name)
            )))
        }
    };
    if let Some(v) = s.auto_dt_velocity {
        positive("simulation.auto_dt_velocity", v)?;
        if step != TimeStep::Auto {
            return Err(scene_error(
                "simulation.auto_dt_velocity: only read with dt = \"auto\"; remove it, or set dt = \"auto\"",
            ));
        }
    }
    Ok(step)
}

/// A whole number of steps from `[simulation]` keys that give it in steps (`every`) or
/// in seconds (`interval`, rounded to the nearest step, at least 1), at most one of
/// them; `None` when neither is given.
fn steps_of(
    (every_key, every): (&str, Option<i64>),
    (interval_key, interval): (&str, Option<f64>),
    dt: f64,
) -> Result<Option<u64>> {
    match (every, interval) {
        (Some(_), Some(_)) => Err(scene_error(format!(
            "simulation: {every_key} (steps) and {interval_key} (s) are both given; give one of them"
        ))),
        (Some(k), None) => Ok(Some(positive_int(&format!("simulation.{every_key}"), k)?)),
        (None, Some(t)) => {
            let t = positive(&format!("simulation.{interval_key}"), t)?;
            let k = (t / dt).round().max(1.0);
            if k > MAX_STEPS as f64 {
                return Err(scene_error(format!(
                    "simulation.{interval_key} = {t}: {k:e} steps of dt = {dt}; at most 2^53"
                )));
            }
            Ok(Some(k as u64))
        }
        (None, None) => Ok(None),
    }
}

/// `[simulation]`: the run parameters and the gravity, with the time step `dt` (the
/// file's, or the one `dt = "auto"` resolved to).
pub(super) fn simulation(s: &SimulationSection, dt: f64) -> Result<(SimulationParams, DVec3)> {
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
                "simulation.integrator = {}: unknown integrator (allowed: {})",
                shown(name),
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
                        "simulation.precision = {}: unknown precision (allowed: {})",
                        shown(name),
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
    let sort_every = s
        .sort_every
        .map(|k| {
            u64::try_from(k).map_err(|_| {
                scene_error(format!(
                    "simulation.sort_every = {k}: must be >= 0 (steps; 0 never sorts)"
                ))
            })
        })
        .transpose()?;
    let mut params = SimulationParams {
        dt,
        duration,
        integrator,
        output_every: 1,
        precision,
        gpu_max_neighbors,
        gpu_bucket_capacity,
        trapezoidal,
        sort_every,
        checkpoint_every: steps_of(
            ("checkpoint_every", s.checkpoint_every),
            ("checkpoint_interval", s.checkpoint_interval),
            dt,
        )?,
    };
    params.output_every = steps_of(
        ("output_every", s.output_every),
        ("output_interval", s.output_interval),
        dt,
    )?
    .unwrap_or_else(|| ((params.steps() as f64 / 100.0).round() as u64).max(1));
    let gravity = finite_vec("simulation.gravity", s.gravity.unwrap_or(ZERO))?;
    Ok((params, gravity))
}

/// `[binder]` values: the shear form and the default stiffnesses (validated).
pub(super) struct BinderDefaults {
    pub(super) shear: ShearForm,
    /// `(key, default)` for k_bend, k_axial, k_shear.
    pub(super) k: [(&'static str, Option<f64>); 3],
    /// The default strength of every bond (`break_*`; issue 47).
    pub(super) strength: BondStrength,
    /// `break_scatter`: generated bonds' strengths are scaled by `1 + s(2u − 1)`, `u`
    /// uniform in `[0, 1)` from the generator's seed.
    pub(super) scatter: f64,
}

/// The `break_*` keys of a bond strength, in [`BondStrength::values`]' order.
pub(super) const BREAK_KEYS: [&str; 4] =
    ["break_tension", "break_shear", "break_bend", "break_twist"];

/// The strengths `values` (in [`BREAK_KEYS`] order) of section `who`, each positive
/// and finite where given.
pub(super) fn strength(who: &str, values: [Option<f64>; 4]) -> Result<BondStrength> {
    let mut out = [None; 4];
    for ((o, v), name) in out.iter_mut().zip(values).zip(BREAK_KEYS) {
        if let Some(x) = v {
            *o = Some(positive(&format!("{who}.{name}"), x)?);
        }
    }
    Ok(BondStrength::from_values(out))
}

/// A `break_scatter`: in `[0, 1)`, so that every scaled strength stays positive.
pub(super) fn scatter(key: &str, v: f64) -> Result<f64> {
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(scene_error(format!("{key} = {v}: must be >= 0 and < 1")))
    }
}

/// `[binder]` (absent: every default unset, the default shear form).
pub(super) fn binder(b: Option<&BinderSection>) -> Result<BinderDefaults> {
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
                    "binder.shear = {}: unknown shear form (allowed: {})",
                    shown(name),
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
    let strength = strength(
        "binder",
        [b.break_tension, b.break_shear, b.break_bend, b.break_twist],
    )?;
    let scatter = scatter("binder.break_scatter", b.break_scatter.unwrap_or(0.0))?;
    if scatter > 0.0 && !strength.is_set() {
        return Err(scene_error(format!(
            "binder.break_scatter = {scatter}: scatters the [binder] strengths, but [binder] sets none of {}",
            BREAK_KEYS.join(", ")
        )));
    }
    Ok(BinderDefaults {
        shear,
        k,
        strength,
        scatter,
    })
}

/// The bond stiffness of `[k_bend, k_axial, k_shear]`.
pub(super) fn stiffness_from(values: [f64; 3]) -> BondStiffness {
    BondStiffness {
        bend: values[0],
        axial: values[1],
        shear: values[2],
    }
}

/// The `[contact]` law and its stiffness.
pub(super) fn contact_law(c: &ContactSection) -> Result<ContactLaw> {
    if c.law != "hard" {
        let hard_keys = [
            ("friction_model", c.friction_model.is_some()),
            ("solver", c.solver.is_some()),
            ("max_sweeps", c.max_sweeps.is_some()),
            ("tolerance", c.tolerance.is_some()),
            ("relaxation", c.relaxation.is_some()),
            ("error_reduction", c.error_reduction.is_some()),
            ("warm_start", c.warm_start.is_some()),
            ("margin", c.margin.is_some()),
            ("on_nonconvergence", c.on_nonconvergence.is_some()),
        ];
        if let Some((key, _)) = hard_keys.iter().find(|(_, given)| *given) {
            return Err(scene_error(format!(
                "contact.{key}: only the \"hard\" law uses it (contact.law = {:?})",
                c.law
            )));
        }
    }
    match c.law.as_str() {
        "hard" => {
            if let Some(k) = c.k_pp {
                return Err(scene_error(format!(
                    "contact.k_pp = {k}: only the \"binder\" law uses it; hard contacts have no stiffness"
                )));
            }
            Ok(ContactLaw::Hard(hard_contact(c)?))
        }
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
                "contact.law = {}: unknown contact law (allowed: {})",
                shown(other),
                allowed.join(", ")
            )))
        }
    }
}

/// The value named `value` of key `contact.{key}` among `named`; `None` when absent.
fn pick<T: Copy>(key: &str, value: &Option<String>, named: &[(&str, T)]) -> Result<Option<T>> {
    let Some(v) = value else { return Ok(None) };
    named
        .iter()
        .find(|(n, _)| n == v)
        .map(|&(_, k)| Some(k))
        .ok_or_else(|| {
            let allowed: Vec<String> = named.iter().map(|(n, _)| format!("{n:?}")).collect();
            scene_error(format!(
                "contact.{key} = {}: unknown (allowed: {})",
                shown(v),
                allowed.join(", ")
            ))
        })
}

/// The hard-contact keys of `[contact]`, each checked, absent ones at their defaults.
fn hard_contact(c: &ContactSection) -> Result<HardContact> {
    let d = HardContact::default();
    let friction_model = pick("friction_model", &c.friction_model, &FrictionModel::NAMED)?
        .unwrap_or(d.friction_model);
    let solver = pick("solver", &c.solver, &HardSolver::NAMED)?.unwrap_or(d.solver);
    let on_nonconvergence = pick(
        "on_nonconvergence",
        &c.on_nonconvergence,
        &[
            ("warn", OnNonconvergence::Warn),
            ("error", OnNonconvergence::Error),
        ],
    )?
    .unwrap_or(d.on_nonconvergence);
    let max_sweeps = match c.max_sweeps {
        Some(k) => int_in("contact.max_sweeps", k, 1_000_000)?,
        None => d.max_sweeps,
    };
    let tolerance = match c.tolerance {
        Some(t) => positive("contact.tolerance", t)?,
        None => d.tolerance,
    };
    let relaxation = match c.relaxation {
        Some(w) if w > 0.0 && w <= 1.0 => w,
        Some(w) => {
            return Err(scene_error(format!(
                "contact.relaxation = {w}: must be in (0, 1]"
            )))
        }
        None => d.relaxation,
    };
    let error_reduction = match c.error_reduction {
        Some(e) if (0.0..1.0).contains(&e) => e,
        Some(e) => {
            return Err(scene_error(format!(
                "contact.error_reduction = {e}: must be in [0, 1) (§3.1's ε)"
            )))
        }
        None => d.error_reduction,
    };
    let margin = c
        .margin
        .map(|m| non_negative("contact.margin", m))
        .transpose()?;
    Ok(HardContact {
        friction_model,
        solver,
        max_sweeps,
        tolerance,
        relaxation,
        error_reduction,
        warm_start: c.warm_start.unwrap_or(d.warm_start),
        margin,
        on_nonconvergence,
    })
}

/// `[[material]]` sections, validated, with their names.
pub(super) fn materials(sections: &[MaterialSection]) -> Result<Vec<Material>> {
    let mut out: Vec<Material> = Vec::with_capacity(sections.len());
    for (k, m) in sections.iter().enumerate() {
        let key = |field: &str| format!("material[{k}].{field}");
        if m.name.trim().is_empty() {
            return Err(scene_error(format!(
                "{} = {}: must not be empty",
                key("name"),
                shown(&m.name)
            )));
        }
        if let Some(first) = out.iter().position(|o| o.name == m.name) {
            return Err(scene_error(format!(
                "{} = {}: material[{first}] already has that name",
                key("name"),
                shown(&m.name)
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
        let rolling_friction = m
            .rolling_friction
            .map(|v| non_negative(&key("rolling_friction"), v))
            .transpose()?
            .unwrap_or(0.0);
        let rolling_damping = m
            .rolling_damping
            .map(|v| non_negative(&key("rolling_damping"), v))
            .transpose()?
            .unwrap_or(crate::model::DEFAULT_ROLLING_DAMPING);
        let surface_energy = m
            .surface_energy
            .map(|v| non_negative(&key("surface_energy"), v))
            .transpose()?
            .unwrap_or(0.0);
        out.push(Material {
            name: m.name.clone(),
            young,
            poisson,
            shear_modulus,
            density: positive(&key("density"), m.density)?,
            restitution,
            friction_static,
            friction_dynamic,
            rolling_friction,
            rolling_damping,
            surface_energy,
        });
    }
    Ok(out)
}

/// The scene's rolling-resistance model: the `rolling_model` of the `[[material]]`s that
/// give one (they must agree: one model per scene), `"cdt"` when none does.
pub(super) fn rolling_model(sections: &[MaterialSection]) -> Result<RollingModel> {
    let mut chosen: Option<(usize, RollingModel)> = None;
    for (k, m) in sections.iter().enumerate() {
        let Some(name) = &m.rolling_model else {
            continue;
        };
        let model = match name.as_str() {
            "cdt" => RollingModel::Cdt,
            "epsd" => RollingModel::Epsd,
            other => {
                return Err(scene_error(format!(
                    "material[{k}].rolling_model = {}: must be \"cdt\" or \"epsd\"",
                    shown(other)
                )))
            }
        };
        match chosen {
            Some((first, c)) if c != model => {
                return Err(scene_error(format!(
                    "material[{k}].rolling_model = \"{}\": material[{first}] has \"{}\" (one rolling model per scene)",
                    model.name(),
                    c.name()
                )))
            }
            None => chosen = Some((k, model)),
            _ => {}
        }
    }
    Ok(chosen.map_or(RollingModel::default(), |c| c.1))
}

/// `[[particle]]` number `k`: mass from the material when not given, inertia 2/5 m r²
/// when not given.
pub(super) fn particle(
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

/// `[drag]`: the drag and Magnus coefficients and the fluid's velocity.
pub(super) fn drag(d: &DragSection) -> Result<Drag> {
    Ok(Drag {
        coefficient: non_negative("drag.coefficient", d.coefficient)?,
        fluid_velocity: finite_vec("drag.fluid_velocity", d.fluid_velocity)?,
        magnus: {
            let m = d.magnus;
            if !m.is_finite() {
                return Err(scene_error(format!("drag.magnus = {m}: must be finite")));
            }
            m
        },
    })
}

/// `[near_field]`: the attractive and repulsive terms and the cutoff.
pub(super) fn near_field(nf: &NearFieldSection) -> Result<NearField> {
    let finite = |key: &str, v: f64| {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(scene_error(format!(
                "near_field.{key} = {v}: must be finite"
            )))
        }
    };
    Ok(NearField {
        kappa_attractive: finite("kappa_attractive", nf.kappa_attractive)?,
        lambda_attractive: finite("lambda_attractive", nf.lambda_attractive)?,
        kappa_repulsive: finite("kappa_repulsive", nf.kappa_repulsive)?,
        lambda_repulsive: finite("lambda_repulsive", nf.lambda_repulsive)?,
        cutoff: positive("near_field.cutoff", nf.cutoff)?,
    })
}
