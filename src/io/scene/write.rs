//! The way back: a resolved scene as an explicit TOML file that parses to the same
//! scene.

use glam::DVec3;

use super::overlaps::{worst_initial_overlap, MAX_INITIAL_OVERLAP};
use super::sections::SHEAR_FORMS;
use crate::integrators::IntegratorKind;
use crate::model::{Bond, ContactLaw, RunLength, Scene, DEFAULT_MAX_OVERLAP};

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

/// A wall's or mesh's `material` (or, under the binder law, `stiffness`: the other laws
/// refuse one) and motion keys.
fn write_wall_keys(
    s: &mut String,
    m: &crate::model::Model,
    material: Option<u32>,
    stiffness: f64,
    motion: &crate::model::Motion,
) {
    use std::fmt::Write as _;
    match material.and_then(|k| m.materials.get(k as usize)) {
        Some(mat) => {
            let _ = writeln!(s, "material = {:?}", mat.name);
        }
        None if matches!(m.contact.map(|c| c.law), Some(ContactLaw::Binder { .. })) => {
            let _ = writeln!(s, "stiffness = {}", toml_float(stiffness));
        }
        None => {}
    }
    write_motion(s, motion);
}

/// The motion keys of a wall or mesh that differ from the defaults.
fn write_motion(s: &mut String, m: &crate::model::Motion) {
    use std::fmt::Write as _;
    let d = crate::model::Motion::default();
    for (key, v, dv) in [
        ("velocity", m.velocity, d.velocity),
        ("angular_velocity", m.angular_velocity, d.angular_velocity),
        ("axis_point", m.axis_point, d.axis_point),
    ] {
        if v != dv {
            let _ = writeln!(s, "{key} = {}", toml_vec(v));
        }
    }
    if m.start != d.start {
        let _ = writeln!(s, "start = {}", toml_float(m.start));
    }
    if m.stop != d.stop {
        let _ = writeln!(s, "stop = {}", toml_float(m.stop));
    }
    if m.period != d.period {
        let _ = writeln!(s, "period = {}", toml_float(m.period));
    }
}

/// Writes a resolved scene as TOML: `[simulation]`, `[binder]` (shear form only),
/// `[contact]`, then every particle, bond and wall explicitly, with every default
/// filled in. Floats use their shortest round-trip form, so
/// [`parse_scene`](super::parse_scene) of the result gives back an equal [`Scene`].
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
    if let Some(k) = sim.checkpoint_every {
        let _ = writeln!(s, "checkpoint_every = {k}");
    }
    if let Some(k) = sim.sort_every {
        let _ = writeln!(s, "sort_every = {k}");
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
            ContactLaw::Hard(h) => write_hard(&mut s, &h),
        }
        let _ = writeln!(s, "skin = {}", toml_float(c.skin));
        let _ = writeln!(s, "max_contacts = {}", c.max_contacts);
        if c.law == ContactLaw::Hertz && c.max_overlap != DEFAULT_MAX_OVERLAP {
            let _ = writeln!(s, "max_overlap = {}", toml_float(c.max_overlap));
        }
        if c.cohesion != Default::default() {
            let _ = writeln!(s, "cohesion = \"{}\"", c.cohesion.name());
        }
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
            ("rolling_friction", it.rolling_friction),
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
            ("rolling_friction", mat.rolling_friction),
            ("rolling_damping", mat.rolling_damping),
            ("surface_energy", mat.surface_energy),
        ] {
            let _ = writeln!(s, "{k} = {}", toml_float(v));
        }
        // The scene's one rolling model, on every material (CDT is the default).
        if let Some(c) = m
            .contact
            .as_ref()
            .filter(|c| c.rolling != Default::default())
        {
            let _ = writeln!(s, "rolling_model = \"{}\"", c.rolling.name());
        }
    }

    let p = &m.particles;
    // Inserters' reserved particles are written as their [[inserter]]s.
    for i in (0..p.len()).filter(|&i| !crate::model::is_dormant(p.flags[i])) {
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
    for (k, b) in m.bonds.iter().enumerate() {
        if Bond::from_current(p, b.i, b.j, b.stiffness()).as_ref() != Ok(b) {
            stale += 1;
        }
        let _ = writeln!(s, "\n[[bond]]\ni = {}\nj = {}", b.i, b.j);
        let _ = writeln!(s, "k_bend = {}", toml_float(b.k_bend));
        let _ = writeln!(s, "k_axial = {}", toml_float(b.k_axial));
        let _ = writeln!(s, "k_shear = {}", toml_float(b.k_shear));
        // Each bond's own strength (a generator's scatter included).
        if let Some(strength) = m.bond_strength.get(k) {
            for (name, v) in super::sections::BREAK_KEYS.iter().zip(strength.values()) {
                if let Some(x) = v {
                    let _ = writeln!(s, "{name} = {}", toml_float(x));
                }
            }
        }
    }
    if stale > 0 {
        log::warn!(
            target: super::LOG_TARGET,
            "scene_to_toml: {stale} of {} bonds have rest states other than the current configuration's; the TOML re-derives them from it",
            m.bonds.len()
        );
    }

    for w in &m.walls {
        let _ = writeln!(s, "\n[[wall]]");
        let _ = writeln!(s, "point = {}", toml_vec(w.point));
        let _ = writeln!(s, "normal = {}", toml_vec(w.normal));
        write_wall_keys(&mut s, m, w.material, w.stiffness, &w.motion);
    }

    // Meshes inline, as placed: the file is not needed to read the scene back.
    for mw in &m.meshes {
        let _ = writeln!(s, "\n[[mesh]]\nname = {:?}", mw.name);
        let v: Vec<String> = mw.mesh.vertices.iter().map(|&v| toml_vec(v)).collect();
        let _ = writeln!(s, "vertices = [{}]", v.join(", "));
        let t: Vec<String> = mw
            .mesh
            .triangles
            .iter()
            .map(|t| format!("[{}, {}, {}]", t[0], t[1], t[2]))
            .collect();
        let _ = writeln!(s, "triangles = [{}]", t.join(", "));
        write_wall_keys(&mut s, m, mw.material, mw.stiffness, &mw.motion);
    }

    for ins in &m.inserters {
        write_inserter(&mut s, m, ins);
    }

    // Clump types with their spheres where they were written (centroid + offset) and
    // the mass and tensor stated, so that reading them back does not depend on the
    // quadrature; then the clumps.
    for t in &m.clump_types {
        let _ = writeln!(s, "\n[[clump_type]]\nname = {:?}", t.name);
        let spheres: Vec<String> = t
            .spheres
            .iter()
            .map(|sp| {
                format!(
                    "{{ position = {}, radius = {} }}",
                    toml_vec(t.centroid + sp.offset),
                    toml_float(sp.radius)
                )
            })
            .collect();
        let _ = writeln!(s, "spheres = [{}]", spheres.join(", "));
        if let Some(mat) = m.materials.get(t.material as usize) {
            let _ = writeln!(s, "material = {:?}", mat.name);
        }
        let j = t.inertia.body;
        let _ = writeln!(s, "mass = {}", toml_float(t.mass));
        let _ = writeln!(
            s,
            "inertia = [{}]",
            [j.x_axis.x, j.y_axis.y, j.z_axis.z, j.y_axis.x, j.z_axis.x, j.z_axis.y]
                .map(toml_float)
                .join(", ")
        );
    }
    // Clumps reserved by inserters are written as their [[inserter]]s.
    for (_, c) in m
        .clumps
        .iter()
        .enumerate()
        .filter(|(k, _)| !m.reserved_clump(*k))
    {
        let _ = writeln!(s, "\n[[clump]]");
        let _ = writeln!(s, "type = {:?}", m.clump_types[c.kind as usize].name);
        let _ = writeln!(s, "position = {}", toml_vec(c.position));
        let _ = writeln!(s, "rotation = {}", toml_vec(c.rotation));
        let _ = writeln!(s, "velocity = {}", toml_vec(c.velocity));
        let _ = writeln!(s, "angular_velocity = {}", toml_vec(c.angular_velocity));
    }
    s
}

/// An `[[inserter]]` with every key written.
fn write_inserter(s: &mut String, m: &crate::model::Model, ins: &crate::model::Inserter) {
    use crate::model::{Batch, Region};
    use std::fmt::Write as _;
    let _ = writeln!(s, "\n[[inserter]]");
    match ins.region {
        Region::Box { min, max } => {
            let _ = writeln!(
                s,
                "box = {{ min = {}, max = {} }}",
                toml_vec(min),
                toml_vec(max)
            );
        }
        Region::Disc {
            center,
            normal,
            radius,
        } => {
            let _ = writeln!(
                s,
                "disc = {{ center = {}, normal = {}, radius = {} }}",
                toml_vec(center),
                toml_vec(normal),
                toml_float(radius)
            );
        }
        Region::Grid {
            origin,
            spacing,
            counts,
        } => {
            let _ = writeln!(
                s,
                "grid = {{ origin = {}, spacing = {}, counts = [{}, {}, {}] }}",
                toml_vec(origin),
                toml_vec(spacing),
                counts[0],
                counts[1],
                counts[2]
            );
        }
    }
    match ins.batch {
        // A grid's batch is its sites.
        _ if matches!(ins.region, Region::Grid { .. }) => {}
        Batch::Rate(rate) => {
            let _ = writeln!(s, "rate = {}", toml_float(rate));
        }
        Batch::Count(count) => {
            let _ = writeln!(s, "count = {count}");
        }
    }
    for (k, v) in [
        ("interval", ins.interval),
        ("start", ins.start),
        ("stop", ins.stop),
    ] {
        let _ = writeln!(s, "{k} = {}", toml_float(v));
    }
    match ins.clump {
        Some(kind) => {
            let _ = writeln!(s, "clump_type = {:?}", m.clump_types[kind as usize].name);
        }
        None => {
            match &ins.distribution {
                None => {
                    let _ = writeln!(s, "radius = {}", toml_float(ins.radius));
                    let _ = writeln!(s, "radius_jitter = {}", toml_float(ins.radius_jitter));
                }
                Some(law) => {
                    let _ = writeln!(s, "radius_distribution = {}", distribution_toml(law));
                }
            }
            let _ = writeln!(s, "density = {}", toml_float(ins.density));
            if let Some(mat) = m.materials.get(ins.material as usize) {
                let _ = writeln!(s, "material = {:?}", mat.name);
            }
        }
    }
    let _ = writeln!(s, "velocity = {}", toml_vec(ins.velocity));
    if ins.velocity_perturbation != glam::DVec3::ZERO {
        let _ = writeln!(
            s,
            "velocity_perturbation = {}",
            toml_vec(ins.velocity_perturbation)
        );
    }
    let _ = writeln!(s, "seed = {}", ins.seed);
    // A live limit is the `capacity` the scene gave (the reserve follows from it); with
    // removal and none, the reserve is the schedule's and `capacity` is left out (given,
    // it would become a live limit).
    let removal = m.domain.is_some_and(|d| d.remove);
    match ins.live_limit {
        Some(l) => {
            let _ = writeln!(s, "capacity = {l}");
        }
        None if removal && ins.clump.is_none() => {}
        None => {
            let _ = writeln!(s, "capacity = {}", ins.capacity);
        }
    }
    let _ = writeln!(s, "attempts = {}", ins.attempts);
}

/// A radius distribution as the inline table `radius_distribution` takes.
fn distribution_toml(law: &crate::model::sizes::RadiusDistribution) -> String {
    use crate::model::sizes::RadiusDistribution;
    match law {
        RadiusDistribution::LogNormal { median, sigma } => format!(
            "{{ lognormal = {{ median = {}, sigma = {} }} }}",
            toml_float(*median),
            toml_float(*sigma)
        ),
        RadiusDistribution::Table {
            radius,
            fraction,
            by,
        } => {
            let points: Vec<String> = (radius.iter().zip(fraction))
                .map(|(r, f)| format!("[{}, {}]", toml_float(*r), toml_float(*f)))
                .collect();
            format!(
                "{{ table = [{}], by = \"{}\" }}",
                points.join(", "),
                by.name()
            )
        }
    }
}

/// The `[contact]` keys of the hard-contact law, every one written (so the file does not
/// depend on the defaults of the version that reads it).
fn write_hard(s: &mut String, h: &crate::model::HardContact) {
    use std::fmt::Write as _;
    let _ = writeln!(s, "law = \"hard\"");
    let _ = writeln!(s, "friction_model = \"{}\"", h.friction_model.name());
    let _ = writeln!(s, "solver = \"{}\"", h.solver.name());
    let _ = writeln!(s, "max_sweeps = {}", h.max_sweeps);
    let _ = writeln!(s, "tolerance = {}", toml_float(h.tolerance));
    let _ = writeln!(s, "relaxation = {}", toml_float(h.relaxation));
    let _ = writeln!(s, "error_reduction = {}", toml_float(h.error_reduction));
    let _ = writeln!(s, "warm_start = {}", h.warm_start);
    if let Some(m) = h.margin {
        let _ = writeln!(s, "margin = {}", toml_float(m));
    }
    let on = match h.on_nonconvergence {
        crate::model::OnNonconvergence::Warn => "warn",
        crate::model::OnNonconvergence::Error => "error",
    };
    let _ = writeln!(s, "on_nonconvergence = \"{on}\"");
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::io::scene::{load_scene, parse_scene};
    use crate::model::Precision;

    fn scenes_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
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
            [[wall]]\npoint = [0.0, 0.0, 20.0]\nnormal = [-1.0, -2.0, -3.0]\nstiffness = 3.0\n\
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
