//! `[[inserter]]`s: particle insertion over time. Each inserter's particles are
//! reserved here, after every other particle, dormant at the region's centre, with their
//! radii drawn once from the seed, so that every backend sizes its buffers once.

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::checks::{
    check_capacity, finite_vec, fmt_vec, material_of, non_negative, nonzero_vec, positive,
    scene_error, seed, shown, unit,
};
use super::clumps::clump_type_index;
use super::generators::density_of;
use super::schema::InserterSection;
use super::sizes::sizes;
use crate::error::Result;
use crate::model::{
    Batch, Clump, Domain, Inserter, Material, Model, Particle, Region, DEFAULT_ATTEMPTS,
    DEFAULT_RATE_INTERVAL, FLAG_DORMANT, FLAG_REMOVED,
};

/// Adds the inserters of `sections` to `model` with their reserved particles; `end` is
/// the run's end time (s), the default `stop`.
pub(super) fn add_inserters(
    model: &mut Model,
    sections: &[InserterSection],
    materials: &[Material],
    hertz: bool,
    (end, removal): (Option<f64>, bool),
) -> Result<()> {
    // A probe (`end` unknown, `dt = "auto"`) reads what each inserter inserts, not how
    // many: its events end at the start, and it reserves nothing.
    let probe = end.is_none();
    for (k, s) in sections.iter().enumerate() {
        let end = end.unwrap_or(s.start.unwrap_or(0.0).max(0.0));
        let who = format!("inserter[{k}]");
        let key = |field: &str| format!("{who}.{field}");
        let what = match &s.clump_type {
            Some(name) => clump_kind(&who, s, name, model)?,
            None => spheres(&who, s, materials, hertz)?,
        };
        // The region holds a whole sphere, or a whole clump's bounding ball.
        let extent = if what.clump.is_some() {
            what.radius
        } else {
            what.max_radius
        };
        let region = region(&who, s, extent)?;
        let (batch, interval) = match region {
            Region::Grid { .. } => grid_batch(&who, s, &region)?,
            _ => batch(&who, s)?,
        };
        if what.clump.is_some() && matches!(region, Region::Grid { .. }) {
            return Err(scene_error(format!(
                "{}: a grid places spheres; insert clumps in a box or disc",
                key("grid")
            )));
        }
        let start = non_negative(&key("start"), s.start.unwrap_or(0.0))?;
        let stop = match s.stop {
            Some(t) if t.is_nan() || t < start => {
                return Err(scene_error(format!(
                    "{} = {t}: must be >= start = {start}",
                    key("stop")
                )))
            }
            Some(t) => t,
            None if end >= start => end,
            None => {
                return Err(scene_error(format!(
                    "{} = {start}: after the run's end ({end} s), so nothing would be inserted",
                    key("start")
                )))
            }
        };
        let attempts = match s.attempts {
            None => DEFAULT_ATTEMPTS,
            Some(a) => u32::try_from(a)
                .ok()
                .filter(|&a| a >= 1)
                .ok_or_else(|| scene_error(format!("{} = {a}: must be >= 1", key("attempts"))))?,
        };
        let mut ins = Inserter {
            region,
            batch,
            interval,
            start,
            stop,
            velocity: finite_vec(&key("velocity"), s.velocity)?,
            velocity_perturbation: perturbation(&key("velocity_perturbation"), s)?,
            seed: seed(&key("seed"), s.seed)?,
            first: if what.clump.is_some() {
                model.clumps.len() as u32
            } else {
                model.particles.len() as u32
            },
            capacity: 0,
            attempts,
            ..what
        };
        if probe {
            model.inserters.push(ins);
            continue;
        }
        let capacity = match s.capacity {
            Some(c) if c < 1 => {
                return Err(scene_error(format!(
                    "{} = {c}: must be >= 1",
                    key("capacity")
                )))
            }
            Some(c) => u32::try_from(c).map_err(|_| {
                scene_error(format!(
                    "{} = {c}: too large (a scene holds at most {} particles)",
                    key("capacity"),
                    u32::MAX
                ))
            })?,
            None => match ins.total() {
                0 => {
                    return Err(scene_error(format!(
                        "{who}: its events from t = {start} to {stop} s insert no particle; raise rate or count, or give capacity"
                    )))
                }
                t => u32::try_from(t).map_err(|_| {
                    scene_error(format!(
                        "{who}: {t} particles to insert exceed the limit of {} particles",
                        u32::MAX
                    ))
                })?,
            },
        };
        ins.capacity = capacity;
        // With removal, a sphere inserter's capacity bounds its particles in the system
        // at once (those that left free their places, issue 44): it reserves what its
        // schedule inserts.
        if removal && s.capacity.is_some() && ins.clump.is_none() {
            let total = u32::try_from(ins.total()).map_err(|_| {
                scene_error(format!(
                    "{who}: {} particles to insert exceed the limit of {} particles",
                    ins.total(),
                    u32::MAX
                ))
            })?;
            ins.live_limit = Some(capacity);
            ins.capacity = capacity.max(total);
        }
        match ins.clump {
            Some(kind) => {
                let spheres = model.clump_types[kind as usize].spheres.len();
                let members: usize = model
                    .clumps
                    .iter()
                    .map(|c| model.clump_types[c.kind as usize].spheres.len())
                    .sum();
                check_capacity(
                    &who,
                    model.particles.len() + members,
                    (capacity as usize).saturating_mul(spheres),
                )?;
                reserve_clumps(model, &ins, kind);
            }
            None => {
                // The reserve (with a live limit, the schedule's), not the limit.
                check_capacity(&who, model.particles.len(), ins.capacity as usize)?;
                reserve(model, &ins);
            }
        }
        model.inserters.push(ins);
    }
    Ok(())
}

/// What a sphere inserter `who` inserts (its size, density and material keys), as the
/// fields of an [`Inserter`] (the others placeholders).
fn spheres(
    who: &str,
    s: &InserterSection,
    materials: &[Material],
    hertz: bool,
) -> Result<Inserter> {
    let material = material_of(who, s.material.as_deref(), materials, hertz)?;
    let density = density_of(
        who,
        s.density,
        material,
        s.material.is_some() || hertz,
        materials,
    )?;
    let sizes = sizes(
        who,
        (s.radius, s.radius_jitter, s.radius_distribution.as_ref()),
        density,
        "give radius or radius_distribution, or clump_type to insert clumps",
    )?;
    Ok(Inserter {
        max_radius: sizes.max_radius,
        radius: sizes.radius,
        radius_jitter: sizes.jitter,
        distribution: sizes.distribution,
        density,
        material,
        clump: None,
        ..placeholder()
    })
}

/// What a clump inserter `who` inserts: clumps of type `name`, whose spheres, masses
/// and material are the type's (the sphere keys are refused, as for a `[[cloud]]`).
fn clump_kind(who: &str, s: &InserterSection, name: &str, model: &Model) -> Result<Inserter> {
    let key = |field: &str| format!("{who}.{field}");
    let kind = clump_type_index(&key("clump_type"), name, &model.clump_types)?;
    for (field, given) in [
        ("radius", s.radius.is_some()),
        ("radius_jitter", s.radius_jitter != 0.0),
        ("radius_distribution", s.radius_distribution.is_some()),
        ("density", s.density.is_some()),
        ("material", s.material.is_some()),
    ] {
        if given {
            return Err(scene_error(format!(
                "{}: belongs to the clump type {}; an inserter of clumps takes none",
                key(field),
                shown(name)
            )));
        }
    }
    let t = &model.clump_types[kind as usize];
    Ok(Inserter {
        max_radius: t.spheres.iter().map(|s| s.radius).fold(0.0, f64::max),
        radius: t.reach(),
        radius_jitter: 0.0,
        distribution: None,
        density: 0.0,
        material: t.material,
        clump: Some(kind),
        ..placeholder()
    })
}

/// An inserter whose every field is to be set.
fn placeholder() -> Inserter {
    Inserter {
        region: Region::Box {
            min: DVec3::ZERO,
            max: DVec3::ZERO,
        },
        batch: Batch::Count(0),
        interval: 0.0,
        start: 0.0,
        stop: 0.0,
        velocity: DVec3::ZERO,
        velocity_perturbation: DVec3::ZERO,
        seed: 0,
        first: 0,
        capacity: 0,
        live_limit: None,
        attempts: 0,
        max_radius: 0.0,
        radius: 0.0,
        radius_jitter: 0.0,
        distribution: None,
        density: 0.0,
        material: 0,
        clump: None,
    }
}

/// The reserved clumps of `ins` (type `kind`): at the region's centre, at rest, in the
/// body frame's attitude; dormant, since `ins` reserves them (`Bodies::expand`).
fn reserve_clumps(model: &mut Model, ins: &Inserter, kind: u32) {
    for _ in 0..ins.capacity {
        model.clumps.push(Clump {
            kind,
            position: ins.region.center(),
            rotation: DVec3::ZERO,
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
        });
    }
}

/// The reserved particles of `ins`: radii `r (1 ± jitter)` (or its distribution's, one
/// uniform draw each) from stream 0 of its seed,
/// mass `ρ 4/3 π r³`, dormant at the region's centre.
fn reserve(model: &mut Model, ins: &Inserter) {
    let (radius, jitter, density) = (ins.radius, ins.radius_jitter, ins.density);
    let mut rng = ChaCha8Rng::seed_from_u64(ins.seed);
    model.particles.reserve_exact(ins.capacity as usize);
    for _ in 0..ins.capacity {
        let r = match &ins.distribution {
            Some(law) => law.radius_at(rng.random::<f64>()),
            None if jitter > 0.0 => radius * (1.0 + rng.random_range(-jitter..=jitter)),
            None => radius,
        };
        let mass = density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let id = model.particles.push(Particle {
            material: ins.material,
            ..Particle::at_rest(ins.region.center(), mass, r)
        });
        model.particles.flags[id as usize] |= FLAG_DORMANT | FLAG_REMOVED;
    }
}

/// The velocity perturbation's half-widths (m/s): finite, ≥ 0 per component.
fn perturbation(key: &str, s: &InserterSection) -> Result<DVec3> {
    let Some(p) = s.velocity_perturbation else {
        return Ok(DVec3::ZERO);
    };
    let p = finite_vec(key, p)?;
    if p.min_element() < 0.0 {
        return Err(scene_error(format!(
            "{key} = {}: half-widths must be >= 0",
            fmt_vec(s.velocity_perturbation.unwrap_or_default())
        )));
    }
    Ok(p)
}

/// A grid's batch (one sphere per site, `rate` and `count` refused) and its required
/// `interval`.
fn grid_batch(who: &str, s: &InserterSection, region: &Region) -> Result<(Batch, f64)> {
    let key = |field: &str| format!("{who}.{field}");
    if s.rate.is_some() || s.count.is_some() {
        return Err(scene_error(format!(
            "{who}: a grid places one sphere per site at every event; leave out rate and count"
        )));
    }
    let interval = s.interval.ok_or_else(|| {
        scene_error(format!(
            "{}: missing (a grid's layer is placed every interval seconds)",
            key("interval")
        ))
    })?;
    Ok((
        Batch::Count(region.sites()),
        positive(&key("interval"), interval)?,
    ))
}

/// The region of inserter `who`: exactly one of `box`, `disc` and `grid`, large
/// enough for a sphere of radius `r_max` (a grid's sites far enough apart for two).
fn region(who: &str, s: &InserterSection, r_max: f64) -> Result<Region> {
    let key = |field: &str| format!("{who}.{field}");
    if let Some(g) = &s.grid {
        if s.box_region.is_some() || s.disc.is_some() {
            return Err(scene_error(format!(
                "{who}: give exactly one region, box, disc or grid"
            )));
        }
        let origin = finite_vec(&key("grid.origin"), g.origin)?;
        let spacing = finite_vec(&key("grid.spacing"), g.spacing)?;
        let mut counts = [0u32; 3];
        for (a, (&c, out)) in g.counts.iter().zip(&mut counts).enumerate() {
            *out = u32::try_from(c).ok().filter(|&c| c >= 1).ok_or_else(|| {
                scene_error(format!(
                    "{} = {:?}: each count must be >= 1 (axis {a} is {c})",
                    key("grid.counts"),
                    g.counts
                ))
            })?;
            // Spheres on neighbouring sites must not overlap.
            if *out > 1 && spacing[a].abs() < 2.0 * r_max {
                return Err(scene_error(format!(
                    "{} = {}: along axis {a} ({} sites) the sites must be at least a sphere apart ({:e} m)",
                    key("grid.spacing"),
                    fmt_vec(g.spacing),
                    *out,
                    2.0 * r_max
                )));
            }
        }
        let sites: u64 = counts.iter().map(|&c| u64::from(c)).product();
        if sites > u64::from(u32::MAX) {
            return Err(scene_error(format!(
                "{} = {:?}: {sites} sites exceed the limit of {} particles",
                key("grid.counts"),
                g.counts,
                u32::MAX
            )));
        }
        return Ok(Region::Grid {
            origin,
            spacing,
            counts,
        });
    }
    match (&s.box_region, &s.disc) {
        (Some(b), None) => {
            let min = finite_vec(&key("box.min"), b.min)?;
            let max = finite_vec(&key("box.max"), b.max)?;
            let span = max - min;
            // An axis of zero extent holds the centres on its plane; the others must
            // hold a sphere.
            if (0..3).any(|a| span[a] != 0.0 && span[a] < 2.0 * r_max) {
                return Err(scene_error(format!(
                    "{} = {}: from box.min = {}, the box must be at least one sphere wide ({:e} m: radius × (1 + radius_jitter) × 2, or a clump's bounding ball × 2) or flat along each axis",
                    key("box.max"),
                    fmt_vec(b.max),
                    fmt_vec(b.min),
                    2.0 * r_max
                )));
            }
            Ok(Region::Box { min, max })
        }
        (None, Some(d)) => {
            let center = finite_vec(&key("disc.center"), d.center)?;
            let normal = unit(nonzero_vec(&key("disc.normal"), d.normal, "the disc's normal")?);
            let radius = positive(&key("disc.radius"), d.radius)?;
            if radius < r_max {
                return Err(scene_error(format!(
                    "{} = {radius:e}: smaller than the largest sphere ({r_max:e} m)",
                    key("disc.radius")
                )));
            }
            Ok(Region::Disc {
                center,
                normal,
                radius,
            })
        }
        _ => Err(scene_error(format!(
            "{who}: give exactly one region, box = {{ min = [...], max = [...] }}, disc = {{ center = [...], normal = [...], radius = ... }} or grid = {{ origin = [...], spacing = [...], counts = [...] }}"
        ))),
    }
}

/// The batch and interval of inserter `who`: `rate` (interval default
/// [`DEFAULT_RATE_INTERVAL`]) or `count` with `interval`.
fn batch(who: &str, s: &InserterSection) -> Result<(Batch, f64)> {
    let key = |field: &str| format!("{who}.{field}");
    let interval = s
        .interval
        .map(|t| positive(&key("interval"), t))
        .transpose()?;
    match (s.rate, s.count) {
        (Some(rate), None) => Ok((
            Batch::Rate(positive(&key("rate"), rate)?),
            interval.unwrap_or(DEFAULT_RATE_INTERVAL),
        )),
        (None, Some(count)) => {
            let count = u64::try_from(count)
                .ok()
                .filter(|&c| c >= 1)
                .ok_or_else(|| scene_error(format!("{} = {count}: must be >= 1", key("count"))))?;
            let interval = interval.ok_or_else(|| {
                scene_error(format!(
                    "{}: missing (count is the number inserted every interval seconds)",
                    key("interval")
                ))
            })?;
            Ok((Batch::Count(count), interval))
        }
        _ => Err(scene_error(format!(
            "{who}: give exactly one of rate (particles per second) and count (per interval)"
        ))),
    }
}

/// Checks every inserter's region lies in the domain.
pub(super) fn check_in_domain(model: &Model, domain: &Domain) -> Result<()> {
    for (k, ins) in model.inserters.iter().enumerate() {
        let (lo, hi) = ins.region.bounds(0.0);
        let (lo, hi) = match ins.region {
            Region::Box { .. } | Region::Grid { .. } => (lo, hi),
            // The disc's own extent, not its bounding cube's.
            Region::Disc {
                center,
                normal,
                radius,
            } => {
                let e = DVec3::ONE - normal * normal;
                let e = radius
                    * DVec3::new(
                        e.x.max(0.0).sqrt(),
                        e.y.max(0.0).sqrt(),
                        e.z.max(0.0).sqrt(),
                    );
                (center - e, center + e)
            }
        };
        if !(domain.contains(lo) && domain.contains(hi)) {
            return Err(scene_error(format!(
                "inserter[{k}]: its region {:?}..{:?} is not inside the domain {:?}..{:?}",
                lo.to_array(),
                hi.to_array(),
                domain.min.to_array(),
                domain.max.to_array()
            )));
        }
    }
    Ok(())
}
