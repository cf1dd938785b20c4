//! A parsed [`SceneFile`] turned into a [`Scene`]: the model assembled step by step, in
//! a fixed order (particles, rings, blocks, clouds, bonds, walls, contact, drag, near
//! field, domain, the initial-overlap check, interactions), so that the same file gives
//! the same model bit for bit.

use std::collections::HashMap;
use std::path::Path;

use super::checks::{
    check_capacity, finite_vec, fmt_vec, int_in, material_index, non_negative, plural, positive,
    scene_error, shown,
};
use super::clumps::{add_clumps, check_clumps_in_domain, clump_types};
use super::generators::{block, cloud, generator_stiffness, ring};
use super::initial::{check_initial_energy, Origins};
use super::inserters::{add_inserters, check_in_domain};
use super::overlaps::{check_initial_overlaps, check_initial_wall_overlaps, MAX_INITIAL_OVERLAP};
use super::schema::{
    BlockSection, BondSection, CloudSection, ContactSection, DomainSection, InteractionSection,
    MaterialSection, ParticleSection, RingSection, SceneFile,
};
use super::sections::{
    binder, contact_law, drag, materials, near_field, particle, rolling_model, simulation,
    stiffness_from, time_step, BinderDefaults, TimeStep,
};
use super::walls::{add_meshes, add_walls};
use crate::error::Result;
use crate::model::{
    is_dormant, Bond, BondStrength, ContactLaw, ContactParams, Domain, Interaction, Material,
    Model, Particles, Scene, DEFAULT_MAX_CONTACTS, DEFAULT_MAX_OVERLAP,
};
use crate::physics::granular::time_step_advice_at;

/// Largest `[contact] max_contacts`.
const MAX_CONTACT_SLOTS: u32 = 64;

/// Default neighbour-list skin as a fraction of the largest radius.
const DEFAULT_SKIN_FRACTION: f64 = 0.1;

/// Where each bond so far came from, by unordered pair, for the duplicate check.
type Bonded = HashMap<(u32, u32), String>;

/// The scene of `file`, every value checked; the first invalid one is the error.
///
/// `dt = "auto"` builds the scene twice: first without its inserters' reserves (a
/// probe, which is all the time-step estimate reads), then with the step the estimate
/// gives ([`auto_time_step`]).
pub(super) fn build(file: &SceneFile, base: &Path) -> Result<Scene> {
    let dt = match time_step(&file.simulation)? {
        TimeStep::Seconds(dt) => dt,
        TimeStep::Auto => {
            // Any step will do for the probe: it only has to pass the run-length checks.
            let probe = build_with(file, base, file.simulation.t_end.unwrap_or(1.0), true)?;
            auto_time_step(&probe.model, file.simulation.auto_dt_velocity)?
        }
    };
    build_with(file, base, dt, false)
}

/// The step of `dt = "auto"` for `model` (built without its reserves): Campello eq.
/// (50)'s advice ([`time_step_advice_at`]) at the speed `auto_dt_velocity` when given,
/// the scene's own estimate otherwise. It says what it chose in the log.
fn auto_time_step(model: &Model, velocity: Option<f64>) -> Result<f64> {
    if !matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz)) {
        return Err(scene_error(
            "simulation.dt = \"auto\": the automatic step is the Hertz collision time / 20, and the scene has no [contact] law = \"hertz\"; give dt in s",
        ));
    }
    let advice = time_step_advice_at(model, velocity).ok_or_else(|| {
        scene_error(
            "simulation.dt = \"auto\": nothing in the scene moves (no velocity, fall, inserter or moving wall) to estimate an impact speed from; give auto_dt_velocity (m/s) or dt",
        )
    })?;
    if !(advice.dt_max.is_finite() && advice.dt_max > 0.0) {
        return Err(scene_error(format!(
            "simulation.dt = \"auto\": the estimate gives dt = {:e} s (collision time {:e} s at {:e} m/s); give dt in s",
            advice.dt_max, advice.collision_duration, advice.v_rel
        )));
    }
    log::info!(
        "dt = \"auto\": {:.3e} s, the Hertz collision time {:.3e} s / 20 at an impact speed of {:.3e} m/s ({})",
        advice.dt_max,
        advice.collision_duration,
        advice.v_rel,
        if velocity.is_some() {
            "auto_dt_velocity"
        } else {
            "the scene's fastest particle, fall, inserter or moving wall"
        }
    );
    Ok(advice.dt_max)
}

/// Whether `[domain]` removes the particles that leave it (`on_exit = "remove"`; a
/// wrong value is refused when the section is read).
fn removes(d: Option<&DomainSection>) -> bool {
    d.is_some_and(|d| d.on_exit.as_deref() == Some("remove"))
}

/// The scene of `file` with time step `dt`; a `probe` leaves out the inserters'
/// reserves (their capacities are 0).
fn build_with(file: &SceneFile, base: &Path, dt: f64, probe: bool) -> Result<Scene> {
    let (simulation, gravity) = simulation(&file.simulation, dt)?;
    let binder = binder(file.binder.as_ref())?;
    let law = file.contact.as_ref().map(contact_law).transpose()?;
    let materials = materials(&file.materials)?;
    // Every particle needs a material under the Hertz and hard laws.
    let hertz = law.is_some_and(ContactLaw::uses_materials);

    let mut model = Model {
        shear: binder.shear,
        gravity,
        ..Model::default()
    };
    let mut bonded: Bonded = HashMap::new();
    let mut origins = Origins::default();

    origins.mark_listed(&model, "particle");
    add_particles(&mut model, &file.particles, &materials, hertz)?;
    add_rings(&mut model, &file.rings, &binder, &mut bonded, &mut origins)?;
    add_blocks(
        &mut model,
        &file.blocks,
        &binder,
        &materials,
        hertz,
        &mut bonded,
        &mut origins,
    )?;
    model.clump_types = clump_types(&file.clump_types, &materials, hertz)?;
    origins.mark_listed(&model, "clump");
    add_clumps(&mut model, &file.clumps)?;
    add_clouds(&mut model, &file.clouds, &materials, hertz, &mut origins)?;
    if model.particles.is_empty() && model.clumps.is_empty() && file.inserters.is_empty() {
        return Err(scene_error(
            "the scene has no particles; add a [[particle]], [[ring]] or [[block]] (or a [[cloud]], [[clump]] or [[inserter]])",
        ));
    }
    add_bonds(&mut model, &file.bonds, &binder, &mut bonded)?;
    if !model.breakable() {
        model.bond_strength.clear();
    }
    check_breakage(&model, simulation.integrator)?;
    add_walls(&mut model, &file.walls, law, &materials)?;
    add_meshes(&mut model, &file.meshes, law, &materials, base)?;
    let end = simulation.steps() as f64 * simulation.dt;
    origins.mark(&model, "an [[inserter]]");
    add_inserters(
        &mut model,
        &file.inserters,
        &materials,
        hertz,
        ((!probe).then_some(end), removes(file.domain.as_ref())),
    )?;

    if let (Some(law), Some(c)) = (law, &file.contact) {
        model.contact = Some(contact_params(c, law, &model, &file.materials)?);
    }
    if let Some(d) = &file.drag {
        model.drag = Some(drag(d)?);
    }
    if let Some(nf) = &file.near_field {
        model.near_field = Some(near_field(nf)?);
        if model.contact.is_none() {
            return Err(scene_error(
                "near_field: near-field forces use the contact neighbour list; add a [contact] section",
            ));
        }
    }
    if let Some(d) = &file.domain {
        let domain = domain(d, &model.particles)?;
        check_in_domain(&model, &domain)?;
        model.domain = Some(domain);
        check_clumps_in_domain(&model)?;
    }
    if let Some(c) = &file.contact {
        let limit = match c.max_initial_overlap {
            Some(v) => non_negative("contact.max_initial_overlap", v)?,
            None => MAX_INITIAL_OVERLAP,
        };
        check_initial_overlaps(&model, limit)?;
        check_initial_wall_overlaps(&model, limit)?;
    }
    add_interactions(&mut model, &file.interactions, &materials)?;
    model.materials = materials;
    check_rolling(&model, simulation.integrator)?;
    check_cohesion(&model)?;
    check_hard(&model, simulation.integrator)?;
    check_clump_support(&model, simulation.integrator)?;
    check_initial_energy(&model, &origins)?;

    Ok(Scene { simulation, model })
}

/// Bonds break at the force evaluation of an explicit step; the implicit rule
/// evaluates forces many times per step, at trial states, where a break would depend
/// on the iteration (issue 47).
fn check_breakage(model: &Model, integrator: crate::model::IntegratorKind) -> Result<()> {
    if model.breakable() && integrator == crate::model::IntegratorKind::CampelloTrapezoidal {
        return Err(scene_error(
            "simulation.integrator = \"campello-trapezoidal\": bonds with break_* strengths break at the force evaluation of an explicit step, and the implicit rule evaluates forces at trial states; use an explicit integrator".to_string(),
        ));
    }
    Ok(())
}

/// The explicit `[[particle]]`s, numbered first.
fn add_particles(
    model: &mut Model,
    sections: &[ParticleSection],
    materials: &[Material],
    hertz: bool,
) -> Result<()> {
    check_capacity("particle", 0, sections.len())?;
    for (k, p) in sections.iter().enumerate() {
        model.particles.push(particle(k, p, materials, hertz)?);
    }
    Ok(())
}

/// The `[[ring]]`s, after the explicit particles; bonded rings take their stiffnesses
/// from `[binder]`.
fn add_rings(
    model: &mut Model,
    sections: &[RingSection],
    binder: &BinderDefaults,
    bonded: &mut Bonded,
    origins: &mut Origins,
) -> Result<()> {
    for (k, r) in sections.iter().enumerate() {
        let who = format!("ring[{k}]");
        origins.mark(model, &who);
        let ring = ring(k, r)?;
        check_capacity(&who, model.particles.len(), ring.count)?;
        let stiffness = if ring.bond {
            generator_stiffness(binder, &who)?
        } else {
            stiffness_from([0.0; 3])
        };
        let from = model.bonds.len();
        ring.add_to(model, stiffness)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
        record_bonds(model, from, &who, bonded);
        generated_strengths(model, binder.strength, binder.scatter, ring.seed);
    }
    Ok(())
}

/// The `[[block]]`s, after the rings; bonded blocks take their stiffnesses from
/// `[binder]`.
fn add_blocks(
    model: &mut Model,
    sections: &[BlockSection],
    binder: &BinderDefaults,
    materials: &[Material],
    hertz: bool,
    bonded: &mut Bonded,
    origins: &mut Origins,
) -> Result<()> {
    for (k, b) in sections.iter().enumerate() {
        let who = format!("block[{k}]");
        origins.mark(model, &who);
        let block = block(k, b, materials, hertz)?;
        let n = block
            .counts
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c));
        check_capacity(&who, model.particles.len(), n.unwrap_or(usize::MAX))?;
        let stiffness = if block.bond_cutoff > 0.0 {
            generator_stiffness(binder, &who)?
        } else {
            stiffness_from([0.0; 3])
        };
        let from = model.bonds.len();
        block
            .add_to(model, stiffness)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
        record_bonds(model, from, &who, bonded);
        let scatter = match b.break_scatter {
            Some(s) => super::sections::scatter(&format!("{who}.break_scatter"), s)?,
            None => binder.scatter,
        };
        if scatter > 0.0 && !binder.strength.is_set() {
            return Err(scene_error(format!(
                "{who}.break_scatter = {scatter}: scatters the [binder] strengths, but [binder] sets no break_* key"
            )));
        }
        generated_strengths(model, binder.strength, scatter, block.seed);
    }
    Ok(())
}

/// The `[[cloud]]`s, after the blocks.
fn add_clouds(
    model: &mut Model,
    sections: &[CloudSection],
    materials: &[Material],
    hertz: bool,
    origins: &mut Origins,
) -> Result<()> {
    for (k, c) in sections.iter().enumerate() {
        let who = format!("cloud[{k}]");
        origins.mark(model, &who);
        let cloud = cloud(k, c, materials, hertz, &model.clump_types)?;
        check_capacity(&who, model.particles.len(), cloud.count)?;
        cloud
            .add_to(model)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
    }
    Ok(())
}

/// Gives the bonds a generator just made (those past [`Model::bond_strength`]'s end)
/// the `[binder]` strength, each scaled by `1 + scatter (2u − 1)` with `u` uniform in
/// `[0, 1)`, drawn in bond order from the generator's `seed` on a stream of its own
/// (the generator's jitter and velocities keep their draws).
fn generated_strengths(model: &mut Model, strength: BondStrength, scatter: f64, seed: u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    while model.bond_strength.len() < model.bonds.len() {
        let factor = if scatter > 0.0 {
            1.0 + scatter * (2.0 * rng.random::<f64>() - 1.0)
        } else {
            1.0
        };
        model.bond_strength.push(strength.scaled(factor));
    }
}

/// Records the bonds `model.bonds[from..]`, made by generator `who`, in `bonded`.
fn record_bonds(model: &Model, from: usize, who: &str, bonded: &mut Bonded) {
    for b in &model.bonds[from..] {
        bonded.insert((b.i.min(b.j), b.i.max(b.j)), who.to_owned());
    }
}

/// The explicit `[[bond]]`s between particles of the final numbering, each pair at most
/// once (generated bonds included); stiffnesses not given come from `[binder]`.
fn add_bonds(
    model: &mut Model,
    sections: &[BondSection],
    binder: &BinderDefaults,
    bonded: &mut Bonded,
) -> Result<()> {
    let n = model.particles.len();
    for (k, b) in sections.iter().enumerate() {
        let index = |field: &str, v: i64| {
            u32::try_from(v)
                .ok()
                .filter(|&i| (i as usize) < n)
                .ok_or_else(|| {
                    // Bonds join particles only: a clump's spheres have no index here.
                    let clumps = if model.clumps.is_empty() {
                        ""
                    } else {
                        "; clumps cannot be bonded"
                    };
                    scene_error(format!(
                        "bond[{k}].{field} = {v}: no such particle ({}{clumps})",
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
        // Each strength term: the bond's own, else [binder]'s (no scatter).
        let own = super::sections::strength(
            &format!("bond[{k}]"),
            [b.break_tension, b.break_shear, b.break_bend, b.break_twist],
        )?;
        let strength = BondStrength::from_values(std::array::from_fn(|t| {
            own.values()[t].or(binder.strength.values()[t])
        }));
        model.bonds.push(bond);
        model.bond_strength.push(strength);
        bonded.insert(pair, format!("bond[{k}]"));
    }
    Ok(())
}

/// Rolling resistance is part of the Hertz law: a positive `rolling_friction` under
/// another law is a named error.
fn check_rolling(model: &Model, integrator: crate::model::IntegratorKind) -> Result<()> {
    // CDT's torque jumps with the rolling direction, so the implicit rule's fixed-point
    // iteration cycles where a contact's rolling reverses (measured: the frictional
    // cluster stops converging at step 40); EPSD's is continuous.
    if model.rolling() == Some(crate::model::RollingModel::Cdt)
        && integrator == crate::model::IntegratorKind::CampelloTrapezoidal
    {
        return Err(scene_error(
            "simulation.integrator = \"campello-trapezoidal\": its fixed-point iteration does not converge on rolling_model = \"cdt\" (the torque jumps where the rolling reverses); use rolling_model = \"epsd\" or an explicit integrator".to_string(),
        ));
    }
    let hertz = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz));
    if hertz {
        return Ok(());
    }
    let rolling = |k: usize| model.materials.get(k).map_or(0.0, |m| m.rolling_friction);
    if let Some(k) = (0..model.materials.len()).find(|&k| rolling(k) > 0.0) {
        return Err(scene_error(format!(
            "material[{k}].rolling_friction = {}: only the \"hertz\" law has rolling resistance",
            rolling(k)
        )));
    }
    if let Some((k, _)) = model
        .interactions
        .iter()
        .enumerate()
        .find(|(_, it)| it.rolling_friction.is_some_and(|v| v > 0.0))
    {
        return Err(scene_error(format!(
            "interaction[{k}].rolling_friction: only the \"hertz\" law has rolling resistance"
        )));
    }
    Ok(())
}

/// JKR cohesion: a positive `surface_energy` needs `[contact] cohesion = "jkr"` (a
/// value that would be ignored is an error), and the skin must exceed the largest
/// pull-off separation `|δ_c|` (its largest sphere against a rigid wall of the stiffest
/// pair: `|δ_c| ∝ (γ²R/E*²)^{1/3}`), so that a contact in tension stays in the
/// neighbour lists until it breaks (a listed pair stays listed until a rebuild, which
/// lists every pair closer than the skin).
fn check_cohesion(model: &Model) -> Result<()> {
    let jkr = model
        .contact
        .is_some_and(|c| c.cohesion == crate::model::Cohesion::Jkr);
    if let Some((k, m)) = (model.materials.iter().enumerate()).find(|(_, m)| m.surface_energy > 0.0)
    {
        if !jkr {
            return Err(scene_error(format!(
                "material[{k}].surface_energy = {}: adhesion needs [contact] cohesion = \"jkr\"",
                m.surface_energy
            )));
        }
    }
    if !model.jkr() {
        return Ok(());
    }
    let Some(c) = model.contact else {
        return Ok(());
    };
    let separation = crate::physics::jkr::largest_reach(model);
    if c.skin <= separation || c.skin.is_nan() {
        return Err(scene_error(format!(
            "contact.skin = {:e}: must exceed the largest JKR pull-off separation {separation:.3e} m (a contact in tension must stay in the neighbour lists until it breaks)",
            c.skin
        )));
    }
    Ok(())
}

/// The `[contact]` parameters of `law`: the skin (default a fraction of the largest
/// radius of `model`) and the contact slots per particle.
fn contact_params(
    c: &ContactSection,
    law: ContactLaw,
    model: &Model,
    materials: &[MaterialSection],
) -> Result<ContactParams> {
    let skin = match c.skin {
        Some(s) => non_negative("contact.skin", s)?,
        None => {
            let clump_spheres = model
                .clump_types
                .iter()
                .flat_map(|t| t.spheres.iter().map(|s| s.radius));
            DEFAULT_SKIN_FRACTION * clump_spheres.fold(model.particles.max_radius(), f64::max)
        }
    };
    let max_contacts = match c.max_contacts {
        Some(k) => int_in("contact.max_contacts", k, MAX_CONTACT_SLOTS)?,
        None => DEFAULT_MAX_CONTACTS,
    };
    Ok(ContactParams {
        law,
        skin,
        max_contacts,
        max_overlap: max_overlap(c, law)?,
        rolling: rolling_model(materials)?,
        cohesion: cohesion(c, law)?,
    })
}

/// `[contact] cohesion` (the Hertz law only): `"none"` (the default) or `"jkr"`.
fn cohesion(c: &ContactSection, law: ContactLaw) -> Result<crate::model::Cohesion> {
    use crate::model::Cohesion;
    let Some(name) = &c.cohesion else {
        return Ok(Cohesion::None);
    };
    let cohesion = match name.as_str() {
        "none" => Cohesion::None,
        "jkr" => Cohesion::Jkr,
        other => {
            return Err(scene_error(format!(
                "contact.cohesion = {}: must be \"none\" or \"jkr\"",
                shown(other)
            )))
        }
    };
    if cohesion == Cohesion::Jkr && law != ContactLaw::Hertz {
        return Err(scene_error(
            "contact.cohesion = \"jkr\": only the \"hertz\" law has JKR cohesion".to_string(),
        ));
    }
    Ok(cohesion)
}

/// `[contact] max_overlap` (the Hertz law only): at least `max_initial_overlap`, whose
/// overlaps the first steps keep; by default [`DEFAULT_MAX_OVERLAP`], or
/// `max_initial_overlap` where that is larger.
fn max_overlap(c: &ContactSection, law: ContactLaw) -> Result<f64> {
    let initial = match c.max_initial_overlap {
        Some(v) => non_negative("contact.max_initial_overlap", v)?,
        None => MAX_INITIAL_OVERLAP,
    };
    match c.max_overlap {
        None => Ok(DEFAULT_MAX_OVERLAP.max(initial)),
        Some(v) if law != ContactLaw::Hertz => Err(scene_error(format!(
            "contact.max_overlap = {v}: only the \"hertz\" law uses it"
        ))),
        Some(v) => {
            let v = positive("contact.max_overlap", v)?;
            if v < initial {
                return Err(scene_error(format!(
                    "contact.max_overlap = {v}: must be >= contact.max_initial_overlap = {initial} (the overlaps allowed at t = 0 must not stop the first step)"
                )));
            }
            Ok(v)
        }
    }
}

/// The `[domain]` box, which every particle must start inside.
fn domain(d: &DomainSection, particles: &Particles) -> Result<Domain> {
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
                "domain.on_exit = {}: unknown (allowed: \"error\", \"remove\")",
                shown(other)
            )))
        }
    };
    let domain = Domain { min, max, remove };
    // Dormant particles wait at their inserter's region, checked apart.
    if let Some(i) = (0..particles.len())
        .find(|&i| !is_dormant(particles.flags[i]) && !domain.contains(particles.position[i]))
    {
        return Err(scene_error(format!(
            "particle {i} at {:?} starts outside the domain {}..{}",
            particles.position[i].to_array(),
            fmt_vec(d.min),
            fmt_vec(d.max)
        )));
    }
    Ok(domain)
}

/// The `[[interaction]]`s: per pair of materials, overrides of the mixed coefficients.
fn add_interactions(
    model: &mut Model,
    sections: &[InteractionSection],
    materials: &[Material],
) -> Result<()> {
    for (k, it) in sections.iter().enumerate() {
        let key = |field: &str| format!("interaction[{k}].{field}");
        let a = material_index(&key("materials"), &it.materials[0], materials)?;
        let b = material_index(&key("materials"), &it.materials[1], materials)?;
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
            rolling_friction: it
                .rolling_friction
                .map(|v| non_negative(&key("rolling_friction"), v))
                .transpose()?,
        });
    }
    Ok(())
}

/// Hard contacts (`law = "hard"`) and the `impulse-velocity` integrator go together, and
/// the features hard contacts have no meaning for (restitution, bonds, near-field) or
/// do not support yet (drag on clumps) are named errors.
/// What clumps do not run with yet, refused here with the backends' message so that
/// `varidem check` refuses what `run` would (issue 49).
fn check_clump_support(model: &Model, integrator: crate::model::IntegratorKind) -> Result<()> {
    let clumps = !model.clumps.is_empty() || model.inserters.iter().any(|i| i.clump.is_some());
    if !clumps {
        return Ok(());
    }
    if integrator == crate::model::IntegratorKind::CampelloTrapezoidal {
        return Err(scene_error(
            "simulation.integrator = \"campello-trapezoidal\": it does not run clumps; use variational, variational-exact or symplectic-euler",
        ));
    }
    if model.domain.is_some_and(|d| d.remove) {
        return Err(scene_error(
            "domain.on_exit = \"remove\" is not supported for clumps yet; use \"error\"",
        ));
    }
    Ok(())
}

fn check_hard(model: &Model, integrator: crate::model::IntegratorKind) -> Result<()> {
    let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
    let impulse = integrator == crate::model::IntegratorKind::ImpulseVelocity;
    if impulse && !hard {
        return Err(scene_error(
            "simulation.integrator = \"impulse-velocity\": it advances hard contacts only; add [contact] law = \"hard\"",
        ));
    }
    if !hard {
        return Ok(());
    }
    if !impulse {
        return Err(scene_error(format!(
            "contact.law = \"hard\": hard contacts need [simulation] integrator = \"impulse-velocity\" (not {integrator:?})",
            integrator = integrator.name()
        )));
    }
    if let Some((k, m)) = model
        .materials
        .iter()
        .enumerate()
        .find(|(_, m)| m.restitution != 0.0)
    {
        return Err(scene_error(format!(
            "material[{k}].restitution = {}: hard contacts are purely inelastic (the paper's impact law, restitution 0); set it to 0",
            m.restitution
        )));
    }
    if let Some((k, e)) = model
        .interactions
        .iter()
        .enumerate()
        .find_map(|(k, it)| it.restitution.filter(|&e| e != 0.0).map(|e| (k, e)))
    {
        return Err(scene_error(format!(
            "interaction[{k}].restitution = {e}: hard contacts are purely inelastic; set it to 0 or leave it out"
        )));
    }
    if !model.bonds.is_empty() {
        return Err(scene_error(format!(
            "the scene has {} binder bonds: bonds are elastic springs and cannot be combined with hard contacts; use law = \"hertz\" or \"binder\"",
            model.bonds.len()
        )));
    }
    if model.near_field.is_some() {
        return Err(scene_error(
            "near_field: near-field forces have no meaning for hard contacts (no overlap, no stiffness); remove [near_field]",
        ));
    }
    if model.drag.is_some() && !model.clumps.is_empty() {
        return Err(scene_error(
            "drag: drag on clumps is not supported with hard contacts yet; remove [drag] or the clumps",
        ));
    }
    Ok(())
}
