//! The generator sections, `[[ring]]`, `[[block]]` and `[[cloud]]`, checked and turned
//! into the inputs of the model's generators ([`Ring`], [`Block`], [`Cloud`]).

use glam::DVec3;

use super::checks::{
    amplitude, finite_vec, fmt_vec, material_of, non_negative, nonzero_vec, positive, scene_error,
    seed, shown, sphere_sizes,
};
use super::clumps::clump_type_index;
use super::schema::{BlockSection, CloudSection, RingSection};
use super::sections::{stiffness_from, BinderDefaults};
use super::sizes::sizes;
use crate::error::Result;
use crate::model::generators::{Block, Cloud, Ring};
use crate::model::{BondStiffness, ClumpType, Material};

/// Largest `bond_cutoff / spacing` of a `[[block]]`: up to ~2100 lattice neighbours
/// per particle.
pub const MAX_BOND_REACH: f64 = 8.0;

/// The `[binder]` stiffnesses for the bonds of generator `who`; all three must be given.
pub(super) fn generator_stiffness(defaults: &BinderDefaults, who: &str) -> Result<BondStiffness> {
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

/// `[[ring]]` number `k` as a [`Ring`].
pub(super) fn ring(k: usize, r: &RingSection) -> Result<Ring> {
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

/// `[[block]]` number `k` as a [`Block`], its material and density resolved.
pub(super) fn block(
    k: usize,
    b: &BlockSection,
    materials: &[Material],
    hertz: bool,
) -> Result<Block> {
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
        cylinder: b
            .cylinder
            .as_ref()
            .map(|c| -> Result<_> {
                let axis = nonzero_vec(&key("cylinder.axis"), c.axis, "the cylinder's axis")?;
                Ok((
                    finite_vec(&key("cylinder.center"), c.center)?,
                    axis.normalize(),
                    positive(&key("cylinder.radius"), c.radius)?,
                ))
            })
            .transpose()?,
    })
}

/// A generator's density: its own, else its named material's.
pub(super) fn density_of(
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

/// `[[cloud]]` number `k` as a [`Cloud`], its material and density resolved.
pub(super) fn cloud(
    k: usize,
    c: &CloudSection,
    materials: &[Material],
    hertz: bool,
    clump_types: &[ClumpType],
) -> Result<Cloud> {
    let who = format!("cloud[{k}]");
    let key = |field: &str| format!("{who}.{field}");
    if let Some(name) = &c.clump_type {
        return clump_cloud(k, c, name, clump_types);
    }
    let material = material_of(&who, c.material.as_deref(), materials, hertz)?;
    let (min, max, count) = cloud_box(&who, c)?;
    let density = density_of(
        &who,
        c.density,
        material,
        c.material.is_some() || hertz,
        materials,
    )?;
    let sizes = sizes(
        &who,
        (c.radius, c.radius_jitter, c.radius_distribution.as_ref()),
        density,
        "give radius or radius_distribution, or clump_type to pour clumps",
    )?;
    Ok(Cloud {
        min,
        max,
        count,
        radius: sizes.radius,
        radius_jitter: sizes.jitter,
        distribution: sizes.distribution,
        density,
        velocity: finite_vec(&key("velocity"), c.velocity)?,
        material,
        hold_rotation: c.hold_rotation,
        seed: seed(&key("seed"), c.seed)?,
        clump: None,
    })
}

/// A cloud's box and count, checked (for sphere and clump clouds alike).
fn cloud_box(who: &str, c: &CloudSection) -> Result<(DVec3, DVec3, usize)> {
    let key = |field: &str| format!("{who}.{field}");
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
    Ok((min, max, count))
}

/// `[[cloud]]` number `k` with `clump_type = name`: clumps of that type, placed by their
/// bounding balls; the keys that describe spheres (radius, jitter, density, material,
/// hold_rotation) belong to the clump type and are refused here.
fn clump_cloud(k: usize, c: &CloudSection, name: &str, types: &[ClumpType]) -> Result<Cloud> {
    let who = format!("cloud[{k}]");
    let key = |field: &str| format!("{who}.{field}");
    let kind = clump_type_index(&key("clump_type"), name, types)?;
    for (field, given) in [
        ("radius", c.radius.is_some()),
        ("radius_jitter", c.radius_jitter != 0.0),
        ("radius_distribution", c.radius_distribution.is_some()),
        ("density", c.density.is_some()),
        ("material", c.material.is_some()),
        ("hold_rotation", c.hold_rotation),
    ] {
        if given {
            return Err(scene_error(format!(
                "{}: not used with clump_type (the clump type {} sets its spheres, material and mass)",
                key(field),
                shown(name)
            )));
        }
    }
    let (min, max, count) = cloud_box(&who, c)?;
    let t = &types[kind as usize];
    Ok(Cloud {
        min,
        max,
        count,
        radius: t.reach(),
        radius_jitter: 0.0,
        distribution: None,
        density: 0.0,
        velocity: finite_vec(&key("velocity"), c.velocity)?,
        material: t.material,
        hold_rotation: false,
        seed: seed(&key("seed"), c.seed)?,
        clump: Some(kind),
    })
}
