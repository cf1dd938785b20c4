//! Decoding of a checkpoint's body, step by step in the order of the format: the
//! snapshot header, the run parameters, the model and the snapshot arrays. Every count
//! is checked against the bytes left and every index against what it indexes; errors
//! are plain messages, wrapped with the path by `Checkpoint::from_bytes`.

use super::bytes::{Decoded, Reader};
use super::Checkpoint;
use crate::backend::{BackendKind, BodyState, ContactState, HardImpulse, StateSnapshot};
use crate::integrators::IntegratorKind;
use crate::model::sizes::{RadiusDistribution, SizeBasis};
use crate::model::Precision;
use crate::model::{Batch, Inserter, MeshWall, Motion, Region, RollingModel, TriangleMesh};
use crate::model::{
    Bond, Clump, ClumpSphere, ClumpType, ContactLaw, ContactParams, Domain, Inertia, Interaction,
    Material, Model, Particles, RunLength, Scene, ShearForm, SimulationParams, Wall,
};
use crate::neighbor::InsertCount;
use crate::physics::granular::{Drag, NearField};
use glam::DVec3;

fn backend_of(code: u8) -> Decoded<BackendKind> {
    match code {
        1 => Ok(BackendKind::Cpu),
        2 => Ok(BackendKind::Gpu),
        c => Err(format!("backend code {c}")),
    }
}

fn precision_of(code: u8) -> Decoded<Precision> {
    match code {
        1 => Ok(Precision::F32),
        2 => Ok(Precision::F64),
        c => Err(format!("precision code {c}")),
    }
}

fn integrator_of(code: u8) -> Decoded<IntegratorKind> {
    match code {
        0 => Ok(IntegratorKind::Variational),
        1 => Ok(IntegratorKind::VariationalExact),
        2 => Ok(IntegratorKind::SymplecticEuler),
        3 => Ok(IntegratorKind::CampelloTrapezoidal),
        4 => Ok(IntegratorKind::ImpulseVelocity),
        c => Err(format!("integrator code {c}")),
    }
}

/// The fields of a [`StateSnapshot`] that come before the scene in the body, and the
/// run's checkpoint interval.
struct StateHeader {
    step: u64,
    backend: BackendKind,
    backend_name: String,
    precision: Precision,
    integrator: IntegratorKind,
    dt: f64,
    checkpoint_every: Option<u64>,
}

/// Decodes a checkpoint's body (everything between the header and the checksum) of
/// format `version`.
pub(super) fn decode(body: &[u8], version: u32) -> Decoded<Checkpoint> {
    let mut r = Reader::new(body);
    let _summary = r.str()?;
    let header = decode_state_header(&mut r)?;
    // Format 9 added the run's identity (0: none) and its VTK setting.
    let (run_id, vtk) = if version >= 9 {
        let id = Some(r.u64()?).filter(|&id| id != 0);
        let vtk = match r.u8()? {
            0 => false,
            1 => true,
            c => return Err(format!("VTK flag {c}, not 0 or 1")),
        };
        (id, vtk)
    } else {
        (None, true)
    };
    let simulation = decode_simulation(&mut r, version)?;
    let model = decode_model(&mut r, version)?;
    let checkpoint_every = header.checkpoint_every;
    let n = model.sphere_count();
    let state = decode_state_arrays(&mut r, header, n, model.clumps.len(), version)?;
    if r.pos != body.len() {
        return Err(format!(
            "{} unexpected bytes after the data",
            body.len() - r.pos
        ));
    }
    check_values(&simulation, &model, &state)?;
    Ok(Checkpoint {
        scene: Scene { simulation, model },
        state,
        checkpoint_every,
        run_id,
        vtk,
    })
}

/// The values a run divides by, sizes grids with or steps from: a checkpoint whose
/// checksum is right but whose values are not (written by hand, or by a faulty tool)
/// is refused here, naming the value, rather than failing later in the engine.
fn check_values(sim: &SimulationParams, model: &Model, state: &StateSnapshot) -> Decoded<()> {
    let positive = |what: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(format!("{what} is {v}, not a positive finite number"))
        }
    };
    positive("the time step", sim.dt)?;
    positive("the state's time step", state.dt)?;
    let p = &model.particles;
    for i in 0..p.len() {
        positive(&format!("particle {i}'s radius"), p.radius[i])?;
        positive(&format!("particle {i}'s mass"), p.mass[i])?;
        if !(p.inertia[i].is_finite() && p.inertia[i] >= 0.0) {
            return Err(format!(
                "particle {i}'s moment of inertia is {}, not a finite number ≥ 0",
                p.inertia[i]
            ));
        }
    }
    let fields = [
        ("position", &state.position),
        ("velocity", &state.velocity),
        ("rotation", &state.rotation),
        ("angular velocity", &state.angular_velocity),
    ];
    for (name, values) in fields {
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!("particle {i}'s {name} {} is not finite", values[i]));
        }
    }
    if let Some(c) = model.contact {
        if !(c.skin.is_finite() && c.skin >= 0.0) {
            return Err(format!(
                "the contact skin is {}, not a finite number ≥ 0",
                c.skin
            ));
        }
        if c.max_overlap.is_nan() || c.max_overlap <= 0.0 {
            return Err(format!(
                "the largest overlap allowed is {}, not a number > 0",
                c.max_overlap
            ));
        }
    }
    Ok(())
}

/// Snapshot header: step, backend, precision, integrator, dt, checkpoint interval.
fn decode_state_header(r: &mut Reader<'_>) -> Decoded<StateHeader> {
    let step = r.u64()?;
    let backend = backend_of(r.u8()?)?;
    let backend_name = r.str()?;
    let precision = precision_of(r.u8()?)?;
    let integrator = integrator_of(r.u8()?)?;
    let dt = r.f64()?;
    let checkpoint_every = Some(r.u64()?).filter(|&n| n > 0);
    Ok(StateHeader {
        step,
        backend,
        backend_name,
        precision,
        integrator,
        dt,
        checkpoint_every,
    })
}

/// Run parameters: the [`SimulationParams`] of the scene.
fn decode_simulation(r: &mut Reader<'_>, version: u32) -> Decoded<SimulationParams> {
    let mut sim = SimulationParams {
        dt: r.f64()?,
        duration: match r.u8()? {
            0 => RunLength::Steps(r.u64()?),
            1 => RunLength::EndTime(r.f64()?),
            c => return Err(format!("duration code {c}")),
        },
        integrator: integrator_of(r.u8()?)?,
        output_every: r.u64()?,
        precision: match r.u8()? {
            0 => None,
            c => Some(precision_of(c)?),
        },
        gpu_max_neighbors: r.opt_u32()?,
        gpu_bucket_capacity: r.opt_u32()?,
        trapezoidal: crate::integrators::Trapezoidal {
            phi: r.f64()?,
            tolerance: r.f64()?,
            max_iterations: r.u32()?,
        },
        sort_every: None,
        checkpoint_every: None,
    };
    if version >= 11 {
        sim.sort_every = r.u64()?.checked_sub(1);
    }
    if version >= 13 {
        sim.checkpoint_every = Some(r.u64()?).filter(|&k| k > 0);
    }
    Ok(sim)
}

/// Model: gravity, shear form, contact law, materials, domain, interactions, drag,
/// near field, then the particle arrays, bonds and walls.
fn decode_model(r: &mut Reader<'_>, version: u32) -> Decoded<Model> {
    let gravity = r.vec3()?;
    let shear = match r.u8()? {
        0 => ShearForm::Objective,
        1 => ShearForm::Printed,
        c => return Err(format!("shear form code {c}")),
    };
    let contact = match r.u8()? {
        0 => None,
        1 => {
            let law = match r.u8()? {
                0 => ContactLaw::Binder { k_pp: r.f64()? },
                1 => ContactLaw::Hertz,
                2 => ContactLaw::Hard(decode_hard(r)?),
                c => return Err(format!("contact law code {c}")),
            };
            let skin = r.f64()?;
            let max_contacts = r.u32()?;
            // Format 10 added the largest overlap allowed during the run (older runs
            // had no limit: they resume with the default).
            let max_overlap = if version >= 10 {
                r.f64()?
            } else {
                crate::model::DEFAULT_MAX_OVERLAP
            };
            Some(ContactParams {
                law,
                skin,
                max_contacts,
                max_overlap,
                rolling: RollingModel::default(),
                cohesion: Default::default(),
            })
        }
        c => return Err(format!("contact flag {c}")),
    };
    let nm = r.count("materials", 4 + 7 * 8)?;
    let mut materials = Vec::with_capacity(nm);
    for _ in 0..nm {
        materials.push(Material {
            name: r.str()?,
            young: r.f64()?,
            poisson: r.f64()?,
            shear_modulus: r.f64()?,
            density: r.f64()?,
            restitution: r.f64()?,
            friction_static: r.f64()?,
            friction_dynamic: r.f64()?,
            rolling_friction: 0.0,
            rolling_damping: crate::model::DEFAULT_ROLLING_DAMPING,
            surface_energy: 0.0,
        });
    }
    let domain = match r.u8()? {
        0 => None,
        1 => Some(Domain {
            min: r.vec3()?,
            max: r.vec3()?,
            remove: r.u8()? != 0,
        }),
        c => return Err(format!("domain flag {c}")),
    };
    let ni = r.count("interactions", 8 + 3)?;
    let mut interactions = Vec::with_capacity(ni);
    for _ in 0..ni {
        let materials = [r.u32()?, r.u32()?];
        if materials.iter().any(|&k| k as usize >= nm) {
            return Err(format!(
                "interaction {materials:?} names a missing material"
            ));
        }
        let mut opt = || -> Decoded<Option<f64>> {
            match r.u8()? {
                0 => Ok(None),
                1 => Ok(Some(r.f64()?)),
                c => Err(format!("option flag {c}")),
            }
        };
        interactions.push(Interaction {
            materials,
            restitution: opt()?,
            friction_static: opt()?,
            friction_dynamic: opt()?,
            rolling_friction: None,
        });
    }
    let drag = match r.u8()? {
        0 => None,
        1 => Some(Drag {
            coefficient: r.f64()?,
            fluid_velocity: r.vec3()?,
            magnus: r.f64()?,
        }),
        c => return Err(format!("drag flag {c}")),
    };
    let near_field = match r.u8()? {
        0 => None,
        1 => Some(NearField {
            kappa_attractive: r.f64()?,
            lambda_attractive: r.f64()?,
            kappa_repulsive: r.f64()?,
            lambda_repulsive: r.f64()?,
            cutoff: r.f64()?,
        }),
        c => return Err(format!("near-field flag {c}")),
    };
    // 5 vectors, 3 scalars, the flags and the material per particle.
    let n = r.count("particles", 5 * 24 + 3 * 8 + 4 + 4)?;
    let position = r.vec3s(n)?;
    let velocity = r.vec3s(n)?;
    let rotation = r.vec3s(n)?;
    let angular_velocity = r.vec3s(n)?;
    let pendulum_offset = r.vec3s(n)?;
    let mass = r.f64s(n)?;
    let inertia = r.f64s(n)?;
    let radius = r.f64s(n)?;
    let flags = (0..n).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    let material = (0..n).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    if let Some((i, m)) = material
        .iter()
        .enumerate()
        .find(|(_, &m)| nm > 0 && m as usize >= nm)
    {
        return Err(format!("particle {i} has material {m}, but there are {nm}"));
    }
    let particles = Particles {
        position,
        velocity,
        rotation,
        angular_velocity,
        mass,
        inertia,
        radius,
        pendulum_offset,
        flags,
        material,
    };
    let nb = r.count("bonds", 8 + 4 * 8 + 3 * 24)?;
    let mut bonds = Vec::with_capacity(nb);
    for k in 0..nb {
        let b = Bond {
            i: r.u32()?,
            j: r.u32()?,
            k_bend: r.f64()?,
            k_axial: r.f64()?,
            k_shear: r.f64()?,
            rest_length: r.f64()?,
            rest_dir_i: r.vec3()?,
            rest_dir_j: r.vec3()?,
            rest_rotation: r.vec3()?,
        };
        if b.i as usize >= n || b.j as usize >= n {
            return Err(format!(
                "bond {k} joins particles {} and {}, but there are {n}",
                b.i, b.j
            ));
        }
        bonds.push(b);
    }
    let nw = r.count("walls", 2 * 24 + 8 + 1)?;
    let walls = (0..nw)
        .map(|_| {
            Ok(Wall {
                point: r.vec3()?,
                normal: r.vec3()?,
                stiffness: r.f64()?,
                material: r.opt_u32()?,
                motion: Motion::default(),
            })
        })
        .collect::<Decoded<Vec<Wall>>>()?;
    if let Some((k, m)) = (walls.iter().enumerate())
        .find_map(|(k, w)| w.material.filter(|&m| m as usize >= nm).map(|m| (k, m)))
    {
        return Err(format!("wall {k} has material {m}, but there are {nm}"));
    }
    let (clump_types, clumps) = if version >= 4 {
        decode_clumps(r, materials.len())?
    } else {
        (Vec::new(), Vec::new())
    };
    let mut walls = walls;
    let meshes = if version >= 6 {
        for wall in &mut walls {
            wall.motion = decode_motion(r, version)?;
        }
        decode_meshes(r, materials.len(), version)?
    } else {
        Vec::new()
    };
    let inserters = if version >= 7 {
        decode_inserters(
            r,
            (
                particles.len(),
                clumps.len(),
                clump_types.len(),
                materials.len(),
            ),
            version,
        )?
    } else {
        Vec::new()
    };
    let mut contact = contact;
    if version >= 14 {
        decode_rolling(r, contact.as_mut(), &mut materials, &mut interactions)?;
    }
    if version >= 15 {
        decode_cohesion(r, contact.as_mut(), &mut materials)?;
    }
    let bond_strength = if version >= 16 {
        decode_strengths(r, bonds.len())?
    } else {
        Vec::new()
    };
    Ok(Model {
        inserters,
        particles,
        bonds,
        bond_strength,
        walls,
        meshes,
        shear,
        contact,
        gravity,
        materials,
        interactions,
        drag,
        near_field,
        domain,
        clump_types,
        clumps,
    })
}

/// Rolling resistance (format 14; older files have none): the contact's rolling
/// model, each material's μ_r and η_r, each interaction's optional μ_r.
fn decode_rolling(
    r: &mut Reader<'_>,
    contact: Option<&mut ContactParams>,
    materials: &mut [Material],
    interactions: &mut [Interaction],
) -> Decoded<()> {
    let rolling = match r.u8()? {
        0 => RollingModel::Cdt,
        1 => RollingModel::Epsd,
        c => return Err(format!("rolling model code {c}")),
    };
    if let Some(c) = contact {
        c.rolling = rolling;
    }
    for mat in materials {
        mat.rolling_friction = r.f64()?;
        mat.rolling_damping = r.f64()?;
    }
    for it in interactions {
        it.rolling_friction = match r.u8()? {
            0 => None,
            1 => Some(r.f64()?),
            c => return Err(format!("option flag {c}")),
        };
    }
    Ok(())
}

/// The bonds' strengths (format 16; older files have none): none, or one per bond of
/// the model's `nb`, each term positive where set.
fn decode_strengths(r: &mut Reader<'_>, nb: usize) -> Decoded<Vec<crate::model::BondStrength>> {
    let ns = r.count("bond strengths", 4 * 9)?;
    if ns != 0 && ns != nb {
        return Err(format!("{ns} bond strengths for {nb} bonds"));
    }
    (0..ns)
        .map(|k| {
            let mut v = [None; 4];
            for t in &mut v {
                let set = r.u8()?;
                let x = r.f64()?;
                *t = match set {
                    0 => None,
                    1 if x > 0.0 && x.is_finite() => Some(x),
                    1 => return Err(format!("bond {k}'s strength {x} is not positive")),
                    c => return Err(format!("bond {k}'s strength flag {c}")),
                };
            }
            Ok(crate::model::BondStrength::from_values(v))
        })
        .collect()
}

/// JKR cohesion (format 15; older files have none): the contact's cohesion and each
/// material's surface energy.
fn decode_cohesion(
    r: &mut Reader<'_>,
    contact: Option<&mut ContactParams>,
    materials: &mut [Material],
) -> Decoded<()> {
    let cohesion = match r.u8()? {
        0 => crate::model::Cohesion::None,
        1 => crate::model::Cohesion::Jkr,
        c => return Err(format!("cohesion code {c}")),
    };
    if let Some(c) = contact {
        c.cohesion = cohesion;
    }
    for mat in materials {
        mat.surface_energy = r.f64()?;
    }
    Ok(())
}

/// The inserters of a format-7 model, their reserved particles within the model's `n`
/// (clump inserters, since format 8: their reserved clumps within its `nc`, their type
/// one of its `nt`).
fn decode_inserters(
    r: &mut Reader<'_>,
    (n, nc, nt, nm): (usize, usize, usize, usize),
    version: u32,
) -> Decoded<Vec<Inserter>> {
    let ni = r.count("inserters", 1 + 48 + 9 + 24 + 24 + 8 + 12 + 32 + 4)?;
    let mut out = Vec::with_capacity(ni);
    for k in 0..ni {
        let region = match r.u8()? {
            0 => Region::Box {
                min: r.vec3()?,
                max: r.vec3()?,
            },
            1 => Region::Disc {
                center: r.vec3()?,
                normal: r.vec3()?,
                radius: r.f64()?,
            },
            2 if version >= 17 => {
                let (origin, spacing) = (r.vec3()?, r.vec3()?);
                let counts = [r.u32()?, r.u32()?, r.u32()?];
                if counts.contains(&0) {
                    return Err(format!("inserter {k}: grid counts {counts:?}"));
                }
                Region::Grid {
                    origin,
                    spacing,
                    counts,
                }
            }
            c => return Err(format!("inserter {k}: unknown region code {c}")),
        };
        let batch = match r.u8()? {
            0 => Batch::Rate(r.f64()?),
            1 => Batch::Count(r.u64()?),
            c => return Err(format!("inserter {k}: unknown batch code {c}")),
        };
        let ins = Inserter {
            region,
            batch,
            interval: r.f64()?,
            start: r.f64()?,
            stop: r.f64()?,
            velocity: r.vec3()?,
            velocity_perturbation: glam::DVec3::ZERO,
            seed: r.u64()?,
            first: r.u32()?,
            capacity: r.u32()?,
            live_limit: None,
            attempts: r.u32()?,
            max_radius: r.f64()?,
            radius: r.f64()?,
            radius_jitter: r.f64()?,
            distribution: None,
            density: r.f64()?,
            material: r.u32()?,
            clump: if version >= 8 {
                Some(r.u32()?).filter(|&t| t != u32::MAX)
            } else {
                None
            },
        };
        let mut ins = ins;
        if version >= 13 {
            ins.live_limit = match r.u64()? {
                0 => None,
                l => Some(
                    u32::try_from(l - 1).map_err(|_| format!("inserter {k}: live limit {l}"))?,
                ),
            };
            ins.distribution = decode_distribution(r).map_err(|e| format!("inserter {k}: {e}"))?;
        }
        if version >= 17 {
            ins.velocity_perturbation = r.vec3()?;
            if !(ins.velocity_perturbation.is_finite()
                && ins.velocity_perturbation.min_element() >= 0.0)
            {
                return Err(format!(
                    "inserter {k}: velocity perturbation {:?}",
                    ins.velocity_perturbation
                ));
            }
        }
        if ins.clump.is_some() && ins.live_limit.is_some() {
            return Err(format!("inserter {k}: a clump inserter with a live limit"));
        }
        if nm > 0 && ins.clump.is_none() && ins.material as usize >= nm {
            return Err(format!(
                "inserter {k} has material {}, but there are {nm}",
                ins.material
            ));
        }
        if ins.clump.is_some_and(|t| t as usize >= nt) {
            return Err(format!("inserter {k}: clump type {:?} of {nt}", ins.clump));
        }
        let reserved = if ins.clump.is_some() { nc } else { n };
        if ins.first as usize + ins.capacity as usize > reserved
            || ins.interval.is_nan()
            || ins.interval <= 0.0
        {
            return Err(format!(
                "inserter {k}: reserved {}..{} of {reserved}, interval {}",
                ins.first,
                ins.first as u64 + u64::from(ins.capacity),
                ins.interval
            ));
        }
        out.push(ins);
    }
    Ok(out)
}

/// The clump types and clumps of a format-4 model, checked as the scene loader checks
/// them (positive radii and mass, finite values, a valid inertia tensor, known types
/// and materials).
fn decode_motion(r: &mut Reader<'_>, version: u32) -> Decoded<Motion> {
    let mut m = Motion {
        velocity: r.vec3()?,
        angular_velocity: r.vec3()?,
        axis_point: r.vec3()?,
        start: r.f64()?,
        stop: r.f64()?,
        period: f64::INFINITY,
    };
    if version >= 17 {
        m.period = r.f64()?;
        if m.period.is_nan() || m.period <= 0.0 {
            return Err(format!("a motion's period {}", m.period));
        }
    }
    Ok(m)
}

/// The mesh walls (format 6), each checked as a scene's ([`TriangleMesh::new`]).
fn decode_meshes(r: &mut Reader<'_>, materials: usize, version: u32) -> Decoded<Vec<MeshWall>> {
    let nm = r.count("meshes", 4 + 8 + 8 + 5 + 8 + 88)?;
    let mut meshes = Vec::with_capacity(nm);
    for k in 0..nm {
        let name = r.str()?;
        let nv = r.count("mesh vertices", 24)?;
        let vertices = r.vec3s(nv)?;
        let nt = r.count("mesh triangles", 12)?;
        let triangles = (0..nt)
            .map(|_| Ok([r.u32()?, r.u32()?, r.u32()?]))
            .collect::<Decoded<Vec<[u32; 3]>>>()?;
        let mesh = TriangleMesh::new(vertices, triangles)
            .map_err(|e| format!("mesh {k} ({name}): {e}"))?;
        let material = r.opt_u32()?;
        if let Some(m) = material.filter(|&m| m as usize >= materials) {
            return Err(format!(
                "mesh {k} ({name}) has material {m}, but there are {materials}"
            ));
        }
        meshes.push(MeshWall {
            name,
            mesh,
            material,
            stiffness: r.f64()?,
            motion: decode_motion(r, version)?,
        });
    }
    Ok(meshes)
}

fn decode_clumps(r: &mut Reader<'_>, materials: usize) -> Decoded<(Vec<ClumpType>, Vec<Clump>)> {
    let nt = r.count("clump types", 4 + 4 + 24 + 4 + 8 + 72)?;
    let mut types = Vec::with_capacity(nt);
    for k in 0..nt {
        let name = r.str()?;
        let ns = r.count("clump spheres", 32)?;
        let spheres = (0..ns)
            .map(|_| {
                Ok(ClumpSphere {
                    offset: r.vec3()?,
                    radius: r.f64()?,
                })
            })
            .collect::<Decoded<Vec<ClumpSphere>>>()?;
        let centroid = r.vec3()?;
        let material = r.u32()?;
        let mass = r.f64()?;
        let mut cols = [0.0; 9];
        for v in &mut cols {
            *v = r.f64()?;
        }
        let body = glam::DMat3::from_cols_array(&cols);
        let bad = |what: String| format!("clump type {k} ({name}): {what}");
        if spheres.is_empty() {
            return Err(bad("no spheres".into()));
        }
        if let Some(s) = spheres
            .iter()
            .find(|s| !(s.offset.is_finite() && s.radius.is_finite() && s.radius > 0.0))
        {
            return Err(bad(format!(
                "sphere at {} of radius {}",
                s.offset, s.radius
            )));
        }
        if !(mass.is_finite() && mass > 0.0 && centroid.is_finite()) {
            return Err(bad(format!("mass {mass}, centre of mass {centroid}")));
        }
        if materials > 0 && material as usize >= materials {
            return Err(bad(format!(
                "material {material}, but there are {materials}"
            )));
        }
        let inertia = Inertia::new(body).map_err(|e| bad(format!("inertia: {e}")))?;
        types.push(ClumpType {
            name,
            spheres,
            centroid,
            material,
            mass,
            inertia,
        });
    }
    let nc = r.count("clumps", 4 + 4 * 24)?;
    let mut clumps = Vec::with_capacity(nc);
    for k in 0..nc {
        let c = Clump {
            kind: r.u32()?,
            position: r.vec3()?,
            rotation: r.vec3()?,
            velocity: r.vec3()?,
            angular_velocity: r.vec3()?,
        };
        if c.kind as usize >= nt {
            return Err(format!("clump {k} has type {}, but there are {nt}", c.kind));
        }
        if ![c.position, c.rotation, c.velocity, c.angular_velocity]
            .iter()
            .all(|v| v.is_finite())
        {
            return Err(format!("clump {k}'s initial state is not finite"));
        }
        clumps.push(c);
    }
    Ok((types, clumps))
}

/// Snapshot arrays of the `n` particles of the model in format `version`; with
/// `header`, the snapshot.
fn decode_state_arrays(
    r: &mut Reader<'_>,
    header: StateHeader,
    n: usize,
    n_bodies: usize,
    version: u32,
) -> Decoded<StateSnapshot> {
    let StateHeader {
        step,
        backend,
        backend_name,
        precision,
        integrator,
        dt,
        checkpoint_every: _,
    } = header;
    let ns = r.count("particle states", 4 * 24)?;
    if ns != n {
        return Err(format!(
            "the state has {ns} particles but the scene has {n}"
        ));
    }
    let position = r.vec3s(n)?;
    let velocity = r.vec3s(n)?;
    let rotation = r.vec3s(n)?;
    let angular_velocity = r.vec3s(n)?;
    let nc = r.count("compensation terms", 4)?;
    let compensation = (0..nc)
        .map(|_| r.u32().map(f32::from_bits))
        .collect::<Decoded<Vec<f32>>>()?;
    let (origin, device_position) = if version >= 3 {
        let origin = r.vec3()?;
        let nd = r.count("device coordinates", 4)?;
        let d = (0..nd)
            .map(|_| r.u32().map(f32::from_bits))
            .collect::<Decoded<Vec<f32>>>()?;
        (origin, d)
    } else {
        (DVec3::ZERO, Vec::new())
    };
    let nr = r.count("removed particles", 4)?;
    let removed = (0..nr).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
    if let Some(i) = removed.iter().find(|&&i| i as usize >= n) {
        return Err(format!("removed particle {i}, but there are {n}"));
    }
    let contacts = match r.u8()? {
        0 => None,
        1 => {
            let slots = r.u32()?;
            // Rows: the particles in the system (version 13), every id before.
            let ids = if version >= 13 {
                let rows = r.count("contact rows", 4)?;
                let ids = (0..rows).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
                if !ids.windows(2).all(|w| w[0] < w[1])
                    || ids.last().is_some_and(|&i| i as usize >= n)
                {
                    return Err(format!(
                        "the contact rows are not distinct ascending ids of the {n} particles"
                    ));
                }
                ids
            } else {
                (0..n as u32).collect()
            };
            let rows = ids.len();
            let ns = r.count("contact slots", 4 + 24)?;
            if ns != rows * slots as usize {
                return Err(format!(
                    "{ns} contact slots for {rows} rows of {slots} slots each"
                ));
            }
            let partner = (0..ns).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
            let spring = r.vec3s(ns)?;
            let nw = r.count("wall springs", 24)?;
            let wall_spring = r.vec3s(nw)?;
            let nf = r.count("contact forces", 2 * 24 + 3 * 8)?;
            if nf != rows {
                return Err(format!("{nf} contact forces for {rows} rows"));
            }
            let force = r.vec3s(rows)?;
            let moment = r.vec3s(rows)?;
            let energy = (0..rows)
                .map(|_| Ok([r.f64()?, r.f64()?, r.f64()?]))
                .collect::<Decoded<Vec<[f64; 3]>>>()?;
            let (mesh_key, mesh_spring, wall_load) = if version >= 6 {
                let nk = r.count("mesh contact slots", 4 + 24)?;
                let keys = (0..nk).map(|_| r.u32()).collect::<Decoded<Vec<u32>>>()?;
                let springs = r.vec3s(nk)?;
                let nl = r.count("wall loads", 48)?;
                let loads = (0..nl)
                    .map(|_| Ok([r.vec3()?, r.vec3()?]))
                    .collect::<Decoded<Vec<[DVec3; 2]>>>()?;
                (keys, springs, loads)
            } else {
                (Vec::new(), Vec::new(), Vec::new())
            };
            let mut roll = [Vec::new(), Vec::new(), Vec::new()];
            if version >= 14 {
                for (name, v) in [
                    "rolling springs",
                    "wall rolling springs",
                    "mesh rolling springs",
                ]
                .into_iter()
                .zip(&mut roll)
                {
                    let k = r.count(name, 24)?;
                    *v = r.vec3s(k)?;
                }
            }
            let [roll, roll_wall, roll_mesh] = roll;
            let wall_held = if version >= 15 {
                let k = r.count("JKR wall flags", 1)?;
                (0..k).map(|_| r.u8()).collect::<Decoded<Vec<u8>>>()?
            } else {
                Vec::new()
            };
            Some(ContactState {
                wall_held,
                roll,
                roll_wall,
                roll_mesh,
                slots,
                ids,
                partner,
                spring,
                wall_spring,
                force,
                moment,
                energy,
                mesh_key,
                mesh_spring,
                wall_load,
            })
        }
        c => return Err(format!("contact-state flag {c}")),
    };
    let (bodies, body_compensation, body_device_position) = if version >= 4 {
        let nb = r.count("clump states", 6 * 24)?;
        if nb != n_bodies {
            return Err(format!(
                "the state has {nb} clumps but the scene has {n_bodies}"
            ));
        }
        let bodies = (0..nb)
            .map(|_| {
                Ok(BodyState {
                    x: r.vec3()?,
                    v: r.vec3()?,
                    alpha: r.vec3()?,
                    spin: r.vec3()?,
                    force: r.vec3()?,
                    moment: r.vec3()?,
                })
            })
            .collect::<Decoded<Vec<BodyState>>>()?;
        let mut terms = [Vec::new(), Vec::new()];
        for (what, t) in ["clump Kahan terms", "clump device coordinates"]
            .into_iter()
            .zip(&mut terms)
        {
            let nt = r.count(what, 4)?;
            *t = (0..nt)
                .map(|_| r.u32().map(f32::from_bits))
                .collect::<Decoded<Vec<f32>>>()?;
        }
        let [c, d] = terms;
        (bodies, c, d)
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    if let Some(k) = bodies.iter().position(|b| {
        ![b.x, b.v, b.alpha, b.spin, b.force, b.moment]
            .iter()
            .all(|v| v.is_finite())
    }) {
        return Err(format!("clump {k}'s state is not finite"));
    }
    let hard_impulses = if version >= 5 {
        let nh = r.count("hard-contact impulses", 8 + 24)?;
        (0..nh)
            .map(|_| {
                Ok(HardImpulse {
                    key: [r.u32()?, r.u32()?],
                    impulse: r.vec3()?,
                })
            })
            .collect::<Decoded<Vec<HardImpulse>>>()?
    } else {
        Vec::new()
    };
    let inserted = if version >= 7 {
        let ni = r.count("insertion counts", 16)?;
        (0..ni)
            .map(|_| {
                Ok(InsertCount {
                    inserted: r.u64()?,
                    skipped: r.u64()?,
                })
            })
            .collect::<Decoded<Vec<InsertCount>>>()?
    } else {
        Vec::new()
    };
    let exit_steps = if version >= 12 {
        let ne = r.count("exit steps", 8)?;
        (0..ne).map(|_| r.u64()).collect::<Decoded<Vec<u64>>>()?
    } else {
        Vec::new()
    };
    let broken = if version >= 16 {
        let nb = r.count("broken bonds", 8 + 12 + 40)?;
        (0..nb)
            .map(|_| {
                let (step, bond, i, j) = (r.u64()?, r.u32()?, r.u32()?, r.u32()?);
                let [tension, shear, bend, twist, energy] = [(); 5].map(|()| r.f64());
                Ok(crate::backend::BondBreak {
                    step,
                    bond,
                    i,
                    j,
                    loads: crate::physics::binder::BondLoads {
                        tension: tension?,
                        shear: shear?,
                        bend: bend?,
                        twist: twist?,
                    },
                    energy: energy?,
                })
            })
            .collect::<Decoded<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let state = StateSnapshot {
        broken,
        exit_steps,
        inserted,
        hard_impulses,
        contacts,
        removed,
        backend,
        backend_name,
        precision,
        step,
        integrator,
        dt,
        position,
        velocity,
        rotation,
        angular_velocity,
        compensation,
        origin,
        device_position,
        bodies,
        body_compensation,
        body_device_position,
    };
    state.check_len(n).map_err(|e| e.to_string())?;
    Ok(state)
}

/// The hard-contact parameters written by `encode_hard`.
fn decode_hard(r: &mut Reader) -> Decoded<crate::model::HardContact> {
    use crate::model::{FrictionModel, HardContact, HardSolver, OnNonconvergence};
    let friction_model = match r.u8()? {
        0 => FrictionModel::MaxDissipation,
        1 => FrictionModel::Coulomb,
        c => return Err(format!("friction model code {c}")),
    };
    let solver = match r.u8()? {
        0 => HardSolver::Nbgs,
        1 => HardSolver::Jacobi,
        2 => HardSolver::Colored,
        c => return Err(format!("hard-contact solver code {c}")),
    };
    let max_sweeps = r.u32()?;
    let tolerance = r.f64()?;
    let relaxation = r.f64()?;
    let error_reduction = r.f64()?;
    let flag = |v: u8, what: &str| match v {
        0 => Ok(false),
        1 => Ok(true),
        c => Err(format!("{what} flag {c}")),
    };
    let warm_start = flag(r.u8()?, "warm_start")?;
    let has_margin = flag(r.u8()?, "margin")?;
    let margin = r.f64()?;
    let on_nonconvergence = match r.u8()? {
        0 => OnNonconvergence::Warn,
        1 => OnNonconvergence::Error,
        c => return Err(format!("on_nonconvergence code {c}")),
    };
    let hard = HardContact {
        friction_model,
        solver,
        max_sweeps,
        tolerance,
        relaxation,
        error_reduction,
        warm_start,
        margin: has_margin.then_some(margin),
        on_nonconvergence,
    };
    hard.check()?;
    Ok(hard)
}

/// An inserter's radius distribution (format 13): a code, then its values.
fn decode_distribution(r: &mut Reader<'_>) -> Decoded<Option<RadiusDistribution>> {
    let law = match r.u8()? {
        0 => return Ok(None),
        1 => RadiusDistribution::LogNormal {
            median: r.f64()?,
            sigma: r.f64()?,
        },
        2 => {
            let by = match r.u8()? {
                0 => SizeBasis::Number,
                1 => SizeBasis::Mass,
                c => return Err(format!("unknown size basis code {c}")),
            };
            let n = r.count("radius table points", 16)?;
            let mut radius = Vec::with_capacity(n);
            let mut fraction = Vec::with_capacity(n);
            for _ in 0..n {
                radius.push(r.f64()?);
                fraction.push(r.f64()?);
            }
            RadiusDistribution::Table {
                radius,
                fraction,
                by,
            }
        }
        c => return Err(format!("unknown radius distribution code {c}")),
    };
    law.check("radius_distribution")?;
    Ok(Some(law))
}
