//! Encoding of a checkpoint's body: the snapshot header, the run parameters, the model
//! and the snapshot arrays, in the order of the format (see the module documentation of
//! `checkpoint`). Every struct is destructured in full, so that a new field is a compile
//! error here until the format (and `FORMAT_VERSION`) accounts for it.

use super::bytes::Writer;
use crate::backend::{BackendKind, BodyState, StateSnapshot};
use crate::integrators::IntegratorKind;
use crate::model::sizes::{RadiusDistribution, SizeBasis};
use crate::model::Precision;
use crate::model::{Batch, Inserter, MeshWall, Motion, Region, RollingModel, TriangleMesh};
use crate::model::{
    Bond, Clump, ClumpSphere, ClumpType, ContactLaw, ContactParams, Material, Model, Particles,
    RunLength, ShearForm, SimulationParams, Wall,
};
use crate::physics::granular::{Drag, NearField};

fn backend_code(k: BackendKind) -> u8 {
    match k {
        BackendKind::Auto => 0,
        BackendKind::Cpu => 1,
        BackendKind::Gpu => 2,
    }
}

fn precision_code(p: Precision) -> u8 {
    match p {
        Precision::F32 => 1,
        Precision::F64 => 2,
    }
}

fn integrator_code(k: IntegratorKind) -> u8 {
    match k {
        IntegratorKind::Variational => 0,
        IntegratorKind::VariationalExact => 1,
        IntegratorKind::SymplecticEuler => 2,
        IntegratorKind::CampelloTrapezoidal => 3,
        IntegratorKind::ImpulseVelocity => 4,
    }
}

pub(super) fn encode_state_header(
    w: &mut Writer,
    s: &StateSnapshot,
    checkpoint_every: Option<u64>,
) {
    let StateSnapshot {
        backend,
        backend_name,
        precision,
        step,
        integrator,
        dt,
        position: _,
        velocity: _,
        rotation: _,
        angular_velocity: _,
        compensation: _,
        origin: _,
        device_position: _,
        contacts: _,
        removed: _,
        exit_steps: _,
        bodies: _,
        body_compensation: _,
        body_device_position: _,
        hard_impulses: _,
        inserted: _,
        broken: _,
    } = s;
    w.u64(*step);
    w.u8(backend_code(*backend));
    w.str(backend_name);
    w.u8(precision_code(*precision));
    w.u8(integrator_code(*integrator));
    w.f64(*dt);
    w.u64(checkpoint_every.unwrap_or(0));
}

pub(super) fn encode_simulation(w: &mut Writer, sim: &SimulationParams) {
    let SimulationParams {
        dt,
        duration,
        integrator,
        output_every,
        precision,
        gpu_max_neighbors,
        gpu_bucket_capacity,
        trapezoidal,
        sort_every,
        checkpoint_every,
    } = sim;
    w.f64(*dt);
    match duration {
        RunLength::Steps(n) => {
            w.u8(0);
            w.u64(*n);
        }
        RunLength::EndTime(t) => {
            w.u8(1);
            w.f64(*t);
        }
    }
    w.u8(integrator_code(*integrator));
    w.u64(*output_every);
    w.u8(precision.map_or(0, precision_code));
    w.opt_u32(*gpu_max_neighbors);
    w.opt_u32(*gpu_bucket_capacity);
    w.f64(trapezoidal.phi);
    w.f64(trapezoidal.tolerance);
    w.u32(trapezoidal.max_iterations);
    // Format 11: 0 for none, else 1 + steps.
    w.u64(sort_every.map_or(0, |k| k.saturating_add(1)));
    // Format 13: the scene's checkpoint interval, 0 for none.
    w.u64(checkpoint_every.unwrap_or(0));
}

pub(super) fn encode_model(w: &mut Writer, m: &Model) {
    let Model {
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
        inserters,
    } = m;
    w.vec3(*gravity);
    w.u8(match shear {
        ShearForm::Objective => 0,
        ShearForm::Printed => 1,
    });
    match contact {
        None => w.u8(0),
        Some(ContactParams {
            law,
            skin,
            max_contacts,
            max_overlap,
            rolling: _,
            cohesion: _,
        }) => {
            w.u8(1);
            match law {
                ContactLaw::Binder { k_pp } => {
                    w.u8(0);
                    w.f64(*k_pp);
                }
                ContactLaw::Hertz => w.u8(1),
                ContactLaw::Hard(h) => {
                    w.u8(2);
                    encode_hard(w, h);
                }
            }
            w.f64(*skin);
            w.u32(*max_contacts);
            // Since version 10: the largest overlap allowed during the run.
            w.f64(*max_overlap);
        }
    }
    w.len(materials.len());
    for mat in materials {
        let Material {
            name,
            young,
            poisson,
            shear_modulus,
            density,
            restitution,
            friction_static,
            friction_dynamic,
            rolling_friction: _,
            rolling_damping: _,
            surface_energy: _,
        } = mat;
        w.str(name);
        for v in [
            young,
            poisson,
            shear_modulus,
            density,
            restitution,
            friction_static,
            friction_dynamic,
        ] {
            w.f64(*v);
        }
    }
    match domain {
        None => w.u8(0),
        Some(d) => {
            w.u8(1);
            w.vec3(d.min);
            w.vec3(d.max);
            w.u8(u8::from(d.remove));
        }
    }
    w.len(interactions.len());
    for it in interactions {
        w.u32(it.materials[0]);
        w.u32(it.materials[1]);
        for v in [it.restitution, it.friction_static, it.friction_dynamic] {
            match v {
                None => w.u8(0),
                Some(x) => {
                    w.u8(1);
                    w.f64(x);
                }
            }
        }
    }
    match drag {
        None => w.u8(0),
        Some(Drag {
            coefficient,
            fluid_velocity,
            magnus,
        }) => {
            w.u8(1);
            w.f64(*coefficient);
            w.vec3(*fluid_velocity);
            w.f64(*magnus);
        }
    }
    match near_field {
        None => w.u8(0),
        Some(NearField {
            kappa_attractive,
            lambda_attractive,
            kappa_repulsive,
            lambda_repulsive,
            cutoff,
        }) => {
            w.u8(1);
            for v in [
                kappa_attractive,
                lambda_attractive,
                kappa_repulsive,
                lambda_repulsive,
                cutoff,
            ] {
                w.f64(*v);
            }
        }
    }
    let Particles {
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
    } = particles;
    w.len(particles.len());
    for field in [
        position,
        velocity,
        rotation,
        angular_velocity,
        pendulum_offset,
    ] {
        field.iter().for_each(|v| w.vec3(*v));
    }
    for field in [mass, inertia, radius] {
        field.iter().for_each(|v| w.f64(*v));
    }
    flags.iter().for_each(|v| w.u32(*v));
    material.iter().for_each(|v| w.u32(*v));
    w.len(bonds.len());
    for b in bonds {
        let Bond {
            i,
            j,
            k_bend,
            k_axial,
            k_shear,
            rest_length,
            rest_dir_i,
            rest_dir_j,
            rest_rotation,
        } = b;
        w.u32(*i);
        w.u32(*j);
        for v in [k_bend, k_axial, k_shear, rest_length] {
            w.f64(*v);
        }
        for v in [rest_dir_i, rest_dir_j, rest_rotation] {
            w.vec3(*v);
        }
    }
    w.len(walls.len());
    for wall in walls {
        let Wall {
            point,
            normal,
            stiffness,
            material,
            motion: _,
        } = wall;
        w.vec3(*point);
        w.vec3(*normal);
        w.f64(*stiffness);
        w.opt_u32(*material);
    }
    // Since version 4: the clump types and the clumps at step 0.
    w.len(clump_types.len());
    for t in clump_types {
        let ClumpType {
            name,
            spheres,
            centroid,
            material,
            mass,
            inertia,
        } = t;
        w.str(name);
        w.len(spheres.len());
        for ClumpSphere { offset, radius } in spheres {
            w.vec3(*offset);
            w.f64(*radius);
        }
        w.vec3(*centroid);
        w.u32(*material);
        w.f64(*mass);
        // The body-frame tensor; its inverse and scalar form are recomputed from it
        // (Inertia::new, deterministic).
        inertia.body.to_cols_array().iter().for_each(|v| w.f64(*v));
    }
    w.len(clumps.len());
    for c in clumps {
        let Clump {
            kind,
            position,
            rotation,
            velocity,
            angular_velocity,
        } = c;
        w.u32(*kind);
        for v in [position, rotation, velocity, angular_velocity] {
            w.vec3(*v);
        }
    }
    // Since version 6: the walls' motions, then the mesh walls.
    walls.iter().for_each(|wall| encode_motion(w, &wall.motion));
    w.len(meshes.len());
    for m in meshes {
        let MeshWall {
            name,
            mesh: TriangleMesh {
                vertices,
                triangles,
            },
            material,
            stiffness,
            motion,
        } = m;
        w.str(name);
        w.len(vertices.len());
        vertices.iter().for_each(|v| w.vec3(*v));
        w.len(triangles.len());
        triangles.iter().flatten().for_each(|k| w.u32(*k));
        w.opt_u32(*material);
        w.f64(*stiffness);
        encode_motion(w, motion);
    }
    // Since version 7: the inserters.
    w.len(inserters.len());
    for ins in inserters {
        encode_inserter(w, ins);
    }
    // Since version 14: rolling resistance (issue 50).
    encode_rolling(w, contact.as_ref(), materials, interactions);
    // Since version 15: JKR cohesion (issue 50).
    encode_cohesion(w, contact.as_ref(), materials);
    // Since version 16: the bonds' strengths (issue 47), none or one per bond, each
    // term a flag and a value.
    w.len(bond_strength.len());
    for v in bond_strength.iter().flat_map(|b| b.values()) {
        w.u8(u8::from(v.is_some()));
        w.f64(v.unwrap_or(0.0));
    }
}

/// JKR cohesion (format 15): the contact's cohesion (`u8`, 0 none, 1 JKR) and each
/// material's surface energy.
fn encode_cohesion(w: &mut Writer, contact: Option<&ContactParams>, materials: &[Material]) {
    w.u8(match contact.map(|c| c.cohesion) {
        Some(crate::model::Cohesion::Jkr) => 1,
        _ => 0,
    });
    for mat in materials {
        w.f64(mat.surface_energy);
    }
}

/// Rolling resistance (format 14): the contact's rolling model (`u8`, 0 for none or
/// CDT, 1 for EPSD), each material's μ_r and η_r, each interaction's optional μ_r.
fn encode_rolling(
    w: &mut Writer,
    contact: Option<&ContactParams>,
    materials: &[Material],
    interactions: &[crate::model::Interaction],
) {
    w.u8(match contact.map(|c| c.rolling) {
        Some(RollingModel::Epsd) => 1,
        _ => 0,
    });
    for mat in materials {
        w.f64(mat.rolling_friction);
        w.f64(mat.rolling_damping);
    }
    for it in interactions {
        match it.rolling_friction {
            None => w.u8(0),
            Some(x) => {
                w.u8(1);
                w.f64(x);
            }
        }
    }
}

fn encode_inserter(w: &mut Writer, ins: &Inserter) {
    let Inserter {
        region,
        batch,
        interval,
        start,
        stop,
        velocity,
        seed,
        first,
        capacity,
        live_limit,
        attempts,
        max_radius,
        radius,
        radius_jitter,
        distribution,
        density,
        material,
        clump,
        velocity_perturbation,
    } = ins;
    match *region {
        Region::Box { min, max } => {
            w.u8(0);
            w.vec3(min);
            w.vec3(max);
        }
        Region::Disc {
            center,
            normal,
            radius,
        } => {
            w.u8(1);
            w.vec3(center);
            w.vec3(normal);
            w.f64(radius);
        }
        // Since version 17 (issue 48).
        Region::Grid {
            origin,
            spacing,
            counts,
        } => {
            w.u8(2);
            w.vec3(origin);
            w.vec3(spacing);
            for c in counts {
                w.u32(c);
            }
        }
    }
    match *batch {
        Batch::Rate(rate) => {
            w.u8(0);
            w.f64(rate);
        }
        Batch::Count(count) => {
            w.u8(1);
            w.u64(count);
        }
    }
    for v in [interval, start, stop] {
        w.f64(*v);
    }
    w.vec3(*velocity);
    w.u64(*seed);
    w.u32(*first);
    w.u32(*capacity);
    w.u32(*attempts);
    for v in [max_radius, radius, radius_jitter, density] {
        w.f64(*v);
    }
    w.u32(*material);
    // Since version 8: the clump type (u32::MAX: spheres).
    w.u32(clump.unwrap_or(u32::MAX));
    // Since version 13: the live limit (0: none, else 1 + limit) and the radius
    // distribution (0: none, 1: lognormal, 2: table).
    w.u64(live_limit.map_or(0, |k| u64::from(k) + 1));
    match distribution {
        None => w.u8(0),
        Some(RadiusDistribution::LogNormal { median, sigma }) => {
            w.u8(1);
            w.f64(*median);
            w.f64(*sigma);
        }
        Some(RadiusDistribution::Table {
            radius,
            fraction,
            by,
        }) => {
            w.u8(2);
            w.u8(match by {
                SizeBasis::Number => 0,
                SizeBasis::Mass => 1,
            });
            w.len(radius.len());
            for (r, f) in radius.iter().zip(fraction) {
                w.f64(*r);
                w.f64(*f);
            }
        }
    }
    // Since version 17: the velocity perturbation (issue 48).
    w.vec3(*velocity_perturbation);
}

fn encode_motion(w: &mut Writer, m: &Motion) {
    let Motion {
        velocity,
        angular_velocity,
        axis_point,
        start,
        stop,
        period,
    } = m;
    for v in [velocity, angular_velocity, axis_point] {
        w.vec3(*v);
    }
    w.f64(*start);
    w.f64(*stop);
    // Since version 17 (issue 48).
    w.f64(*period);
}

pub(super) fn encode_state_arrays(w: &mut Writer, s: &StateSnapshot) {
    w.len(s.position.len());
    for field in [&s.position, &s.velocity, &s.rotation, &s.angular_velocity] {
        field.iter().for_each(|v| w.vec3(*v));
    }
    w.len(s.compensation.len());
    s.compensation.iter().for_each(|c| w.u32(c.to_bits()));
    // Since version 3: the f32 GPU backend's device origin and relative positions.
    w.vec3(s.origin);
    w.len(s.device_position.len());
    s.device_position.iter().for_each(|c| w.u32(c.to_bits()));
    w.len(s.removed.len());
    s.removed.iter().for_each(|i| w.u32(*i));
    match &s.contacts {
        None => w.u8(0),
        Some(c) => {
            w.u8(1);
            w.u32(c.slots);
            // Since version 13: the rows' ids (the particles in the system).
            w.len(c.ids.len());
            c.ids.iter().for_each(|v| w.u32(*v));
            w.len(c.partner.len());
            c.partner.iter().for_each(|v| w.u32(*v));
            c.spring.iter().for_each(|v| w.vec3(*v));
            w.len(c.wall_spring.len());
            c.wall_spring.iter().for_each(|v| w.vec3(*v));
            w.len(c.force.len());
            c.force.iter().for_each(|v| w.vec3(*v));
            c.moment.iter().for_each(|v| w.vec3(*v));
            c.energy.iter().flatten().for_each(|v| w.f64(*v));
            // Since version 6: the mesh contact slots.
            w.len(c.mesh_key.len());
            c.mesh_key.iter().for_each(|v| w.u32(*v));
            c.mesh_spring.iter().for_each(|v| w.vec3(*v));
            w.len(c.wall_load.len());
            c.wall_load.iter().flatten().for_each(|v| w.vec3(*v));
            // Since version 14: the rolling springs (each array's length, then it).
            for roll in [&c.roll, &c.roll_wall, &c.roll_mesh] {
                w.len(roll.len());
                roll.iter().for_each(|v| w.vec3(*v));
            }
            // Since version 15: the JKR wall flags.
            w.len(c.wall_held.len());
            c.wall_held.iter().for_each(|v| w.u8(*v));
        }
    }
    // Since version 4: the clumps' state.
    w.len(s.bodies.len());
    for b in &s.bodies {
        let BodyState {
            x,
            v,
            alpha,
            spin,
            force,
            moment,
        } = b;
        for q in [x, v, alpha, spin, force, moment] {
            w.vec3(*q);
        }
    }
    for terms in [&s.body_compensation, &s.body_device_position] {
        w.len(terms.len());
        terms.iter().for_each(|c| w.u32(c.to_bits()));
    }
    // Since version 5: hard contacts' warm-start impulses.
    w.len(s.hard_impulses.len());
    for h in &s.hard_impulses {
        w.u32(h.key[0]);
        w.u32(h.key[1]);
        w.vec3(h.impulse);
    }
    // Since version 7: the inserters' counts.
    w.len(s.inserted.len());
    for c in &s.inserted {
        w.u64(c.inserted);
        w.u64(c.skipped);
    }
    // Since version 12: the step at which each removed particle left.
    w.len(s.exit_steps.len());
    s.exit_steps.iter().for_each(|k| w.u64(*k));
    // Since version 16: the broken bonds (issue 47).
    w.len(s.broken.len());
    for b in &s.broken {
        w.u64(b.step);
        w.u32(b.bond);
        w.u32(b.i);
        w.u32(b.j);
        let l = &b.loads;
        for v in [l.tension, l.shear, l.bend, l.twist, b.energy] {
            w.f64(v);
        }
    }
}

/// The hard-contact parameters: the enums as codes in declaration order, then the
/// numbers; `margin` as a flag and a value.
fn encode_hard(w: &mut Writer, h: &crate::model::HardContact) {
    use crate::model::{FrictionModel, HardSolver, OnNonconvergence};
    w.u8(match h.friction_model {
        FrictionModel::MaxDissipation => 0,
        FrictionModel::Coulomb => 1,
    });
    w.u8(match h.solver {
        HardSolver::Nbgs => 0,
        HardSolver::Jacobi => 1,
        HardSolver::Colored => 2,
    });
    w.u32(h.max_sweeps);
    w.f64(h.tolerance);
    w.f64(h.relaxation);
    w.f64(h.error_reduction);
    w.u8(h.warm_start as u8);
    w.u8(h.margin.is_some() as u8);
    w.f64(h.margin.unwrap_or(0.0));
    w.u8(match h.on_nonconvergence {
        OnNonconvergence::Warn => 0,
        OnNonconvergence::Error => 1,
    });
}
