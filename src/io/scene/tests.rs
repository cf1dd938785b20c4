//! Tests of the whole loader: the scene files of `scenes/`, the documented defaults and
//! the error messages, each naming its key, value and allowed range on one line.

use glam::DVec3;

use super::*;
use crate::integrators::IntegratorKind;
use crate::model::{ContactLaw, Precision, RunLength, ShearForm, FLAG_HELD, FLAG_PENDULUM};

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
    // 1e150: the largest speeds whose ½ m v² is finite (issue 49 refuses the others).
    let ok = ring("random_velocity").replace("1e308", "1e150");
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
            assert!(scene.model.sphere_count() > 0);
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "block-impact.toml",
            "bonded-column.toml",
            "brazilian.toml",
            "channel-small.toml",
            "channel.toml",
            "clump-pour.toml",
            "cohesive-heap.toml",
            "container.toml",
            "drum.toml",
            "hard-pile.toml",
            "hopper.toml",
            "painleve-rod.toml",
            "pendulum.toml",
            "pour.toml",
            "rolling-heap.toml",
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
        ("steps = 10", "steps = 10\nintegrator = \"rk4\"", "simulation.integrator = \"rk4\": unknown integrator (allowed: \"variational\", \"variational-exact\", \"symplectic-euler\", \"campello-trapezoidal\", \"impulse-velocity\")"),
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
        "contact.law = \"dmt\": unknown contact law (allowed: \"binder\", \"hertz\", \"hard\")",
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
    let bonds = "\n[[bond]]\ni = 0\nj = 1\n\n[[bond]]\ni = 1\nj = 2\n\n[[bond]]\ni = 2\nj = 17\n";
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
    // A normal whose length overflows is a direction, not zero (issue 49).
    let s = parse_scene(&chain(
        1,
        &format!("{contact}[[wall]]\npoint = [0.0, -1.0, 0.0]\nnormal = [1e300, 1e300, 0.0]\n"),
    ))
    .unwrap();
    let n = s.model.walls[0].normal;
    assert!(
        (n - DVec3::new(1.0, 1.0, 0.0).normalize()).length() < 1e-15,
        "{n}"
    );
}

#[test]
fn generators_are_checked_and_numbered_after_explicit_particles() {
    let binder = "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n";
    let gens = "[[block]]\ncounts = [2, 2, 1]\nspacing = 1.0\nradius = 0.25\ndensity = 1000.0\n\
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

/// A Hertz scene with a moving plane and a mesh from `file` (relative to the scene).
fn mesh_scene(mesh: &str) -> String {
    format!(
        "[simulation]\ndt = 1e-5\nsteps = 10\n[contact]\nlaw = \"hertz\"\n\
         [[material]]\nname = \"glass\"\ndensity = 2500.0\nyoung = 1e8\npoisson = 0.25\n\
         restitution = 0.5\nfriction_static = 0.4\nfriction_dynamic = 0.3\n\
         [[particle]]\nposition = [0.0, 0.0, 0.5]\nradius = 0.1\nmaterial = \"glass\"\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
         velocity = [0.1, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, 1.5]\naxis_point = [0.5, 0.0, 0.0]\nstop = 2.0\n\
         [[mesh]]\n{mesh}\n"
    )
}

#[test]
fn meshes_read_from_stl_place_and_write_back_inline() {
    let dir = tempfile::tempdir().unwrap();
    let tri = |a: [f32; 3], b: [f32; 3], c: [f32; 3]| stl_io::Triangle {
        normal: stl_io::Normal::new([0.0, 0.0, 1.0]),
        vertices: [a, b, c].map(stl_io::Vertex::new),
    };
    let t = [
        tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
        tri([0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    let mut file = std::fs::File::create(dir.path().join("square.stl")).unwrap();
    stl_io::write_stl(&mut file, t.iter()).unwrap();
    let text = mesh_scene(
        "file = \"square.stl\"\nscale = 2.0\nrotate = [0.0, 0.0, 2.0]\ntranslate = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\nangular_velocity = [0.0, 0.0, 3.0]\nstart = 0.5",
    );
    let scene = parse_scene_in(&text, dir.path()).unwrap();
    let m = &scene.model.meshes[0];
    assert_eq!(m.name, "square", "the file's stem names it");
    assert_eq!(m.mesh.triangles.len(), 2);
    // α = 2 ẑ is a quarter turn (2 tan(θ/2) = 2): (1, 0, 0) ↦ 2 (0, 1, 0) + ẑ.
    assert!(m
        .mesh
        .vertices
        .iter()
        .any(|v| (*v - DVec3::new(0.0, 2.0, 1.0)).length() < 1e-12));
    assert_eq!(m.motion.angular_velocity, DVec3::new(0.0, 0.0, 3.0));
    assert_eq!(m.motion.start, 0.5);
    assert_eq!(scene.model.walls[0].motion.stop, 2.0);
    // Relative to the scene: not found from elsewhere, and the error names the key.
    let e = parse_scene(&text).unwrap_err().to_string();
    assert!(e.contains("square.stl"), "{e}");
    // run.toml: inline, the same scene back.
    let back = parse_scene(&scene_to_toml(&scene)).unwrap();
    assert_eq!(back, scene);
}

#[test]
fn bad_meshes_and_motions_are_named_errors() {
    let ok =
        "vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\ntriangles = [[0, 1, 2]]";
    for (mesh, want) in [
        ("name = \"m\"", "mesh[0]: give either file"),
        (
            "vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]\ntriangles = [[0, 1, 2]]",
            "mesh[0]: triangle 0 is degenerate",
        ),
        (
            "vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\ntriangles = [[0, 1, 3]]",
            "mesh[0].triangles[0][2] = 3: must name a vertex",
        ),
        (
            "vertices = [[0.0, 0.0, nan], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\ntriangles = [[0, 1, 2]]",
            "mesh[0].vertices[0]",
        ),
        (&format!("{ok}\nscale = -1.0"), "mesh[0].scale = -1"),
        (&format!("{ok}\nstart = 2.0\nstop = 1.0"), "mesh[0].stop = 1: must be later than start = 2"),
        (&format!("{ok}\nstiffness = 5.0"), "mesh[0].stiffness = 5: only the \"binder\" law"),
        (&format!("{ok}\nmaterial = \"steel\""), "mesh[0].material"),
        ("file = \"missing.stl\"", "missing.stl"),
    ] {
        let e = error_of(&mesh_scene(mesh));
        assert!(e.contains(want), "{mesh}: {e}");
    }
    let two = mesh_scene(&format!("{ok}\nname = \"a\"\n[[mesh]]\n{ok}\nname = \"a\""));
    assert!(error_of(&two).contains("mesh[1].name = \"a\": mesh[0] has that name"));
}

/// Issue 49, item 3: every vector and index list has its exact length; too long is
/// refused like too short, with the line and the value (serde's arrays used to read
/// the first three values and drop the rest without a word).
#[test]
fn vectors_and_index_lists_have_their_exact_length() {
    let long = "invalid length 4, expected an array of length 3";
    assert_error(
        &chain(1, "").replace(
            "position = [0.0, 0.0, 0.0]",
            "position = [0.0, 0.0, 0.0, 5.0]",
        ),
        long,
    );
    assert_error(
        &chain(1, "").replace("position = [0.0, 0.0, 0.0]", "position = [0.0, 0.0]"),
        "invalid length 2, expected an array of length 3",
    );
    assert_error(&chain(1, "gravity = [0.0, 0.0, -9.81, 1.0]\n"), long);
    assert_error(
        &chain(1, "gravity = [0.0, 0.0, -9.81, 1.0]\n"),
        "gravity = [0.0, 0.0, -9.81, 1.0]",
    );
    let mesh = |v: &str, t: &str| {
        chain(
            1,
            &format!("[contact]\nlaw = \"binder\"\nk_pp = 1.0\n[[mesh]]\nvertices = {v}\ntriangles = {t}\n"),
        )
    };
    let v = "[[0.0, 0.0, -1.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]";
    assert!(
        parse_scene(&mesh(v, "[[0, 1, 2]]")).is_ok(),
        "{:?}",
        parse_scene(&mesh(v, "[[0, 1, 2]]")).err()
    );
    assert_error(&mesh(v, "[[0, 1, 2, 3]]"), long);
    assert_error(
        &mesh(v, "[[0, 1]]"),
        "invalid length 2, expected an array of length 3",
    );
    assert_error(
        &mesh(
            "[[0.0, 0.0, -1.0, 0.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]",
            "[[0, 1, 2]]",
        ),
        long,
    );
    let wall = |extra: &str| {
        chain(
            1,
            &format!("[contact]\nlaw = \"binder\"\nk_pp = 1.0\n[[wall]]\npoint = [0.0, 0.0, -1.0]\nnormal = [0.0, 0.0, 1.0]\n{extra}"),
        )
    };
    assert!(
        parse_scene(&wall("")).is_ok(),
        "{:?}",
        parse_scene(&wall("")).err()
    );
    assert_error(&wall("velocity = [0.0, 0.0, 1.0, 0.0]\n"), long);
}

/// Issue 49: a value that passes every check of its own but whose energy overflows
/// (½ m v² of a velocity of 1e160, m g·x of a huge field far from the origin) is
/// refused naming the item and the key, instead of filling energy.csv with inf.
#[test]
fn an_initial_energy_that_overflows_is_refused_naming_the_key() {
    let mut fast = chain(2, "");
    fast.push_str("velocity = [1e160, 0.0, 0.0]\n");
    assert_error(
        &fast,
        "particle[1]: its kinetic energy ½ m v² at t = 0 is inf, not finite (particle[1].velocity = [1e160, 0e0, 0e0])",
    );
    let mut spin = chain(1, "");
    spin.push_str("angular_velocity = [0.0, 1e200, 0.0]\ninertia = 1.0\n");
    assert_error(&spin, "particle[0]: its rotational energy");
    assert_error(
        &chain(3, "gravity = [1e308, 0.0, 0.0]\n"),
        "particle[2]: its field energy m g·x at t = 0 is inf, not finite (simulation.gravity = [1e308, 0e0, 0e0])",
    );
    let far = "[simulation]\ndt = 1e-3\nsteps = 10\ngravity = [0.0, 0.0, -1e300]\n\
               [[ring]]\ncount = 4\ndiameter = 2.0\ncenter = [0.0, 0.0, 1e10]\nmass = 1.0\nbond = false\n";
    assert_error(
        far,
        "particle 0 (of ring[0]): its field energy m g·x at t = 0 is -inf, not finite (simulation.gravity = [0e0, 0e0, -1e300])",
    );
    // Large but finite energies are accepted.
    parse_scene(&chain(2, "gravity = [0.0, 0.0, -1e300]\n")).unwrap();
    // Each particle's terms finite, their sums not (found by tests/fuzz_scene.rs): the
    // run's first row would say "linear momentum is not finite" at step 0.
    let heavy = "[simulation]\ndt = 1e-3\nsteps = 10\n\
                 [[ring]]\ncount = 80\ndiameter = 3.0\nmass = 1e308\nbond = false\n\
                 random_velocity = 0.1\nseed = 1\n";
    assert_error(
        heavy,
        "the initial state's total linear momentum (its square) is inf, not finite",
    );
    assert_error(heavy, "(of ring[0]), its mass = 1e308)");
}

/// Issue 49, item 9: an error echoes at most about 200 characters of a value, however
/// long the value or its line.
#[test]
fn errors_echo_at_most_about_200_characters_of_a_value() {
    let long = "x".repeat(100_000);
    let cases = [
        chain(1, &format!("integrator = \"{long}\"\n")),
        chain(1, "").replace(
            "radius = 0.1",
            &format!("radius = 0.1\nmaterial = \"{long}\""),
        ),
        chain(1, &format!("dt = \"{long}\"\n")).replacen("dt = 1e-3\n", "", 1),
        chain(
            1,
            &format!("gravity = [{}]\n", vec!["1.0"; 50_000].join(", ")),
        ),
    ];
    for text in cases {
        let msg = error_of(&text);
        assert!(
            msg.len() < 1200,
            "{} characters: {}",
            msg.len(),
            &msg[..300]
        );
        assert!(msg.contains('…'), "the cut is marked: {msg}");
    }
}

/// The inline unit triangle of the mesh tests, with `extra` keys.
const TRIANGLE: &str =
    "vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\ntriangles = [[0, 1, 2]]";

/// Issue 49, item 5: a mesh's name labels its walls.csv rows, so it is restricted to
/// letters, digits and `_ - .` (no comma, quote or blank to break the columns, no
/// brackets to pass for a plane's `wall[k]`), and unique; a file's stem is made such a
/// name rather than refused.
#[test]
fn mesh_names_are_restricted_and_unique() {
    let named = |name: &str| mesh_scene(&format!("{TRIANGLE}\nname = {name:?}"));
    assert!(parse_scene(&named("Hopper_v2-1.0")).is_ok());
    assert_error(
        &named("a,b"),
        "mesh[0].name = \"a,b\": ',' is not allowed; a name may use only ASCII letters, digits and `_`, `-`, `.`",
    );
    for bad in ["a b", "a\"b", "drum\n", "tab\t", "é", "x[1]"] {
        assert!(
            error_of(&named(bad)).contains("is not allowed"),
            "{bad:?}: {}",
            error_of(&named(bad))
        );
    }
    assert_error(&named(""), "mesh[0].name = \"\": must not be empty");
    // A plane's label, and another mesh's automatic one.
    assert_error(
        &named("wall[0]"),
        "mesh[0].name = \"wall[0]\": that is the label walls.csv gives the plane wall[0]",
    );
    assert_error(
        &named("mesh[3]"),
        "that is the label walls.csv gives mesh[3] when it is inline and unnamed",
    );
    // Its own label is what an unnamed inline mesh is called, and written back as.
    let unnamed = parse_scene(&mesh_scene(TRIANGLE)).unwrap();
    assert_eq!(unnamed.model.meshes[0].name, "mesh[0]");
    assert!(scene_to_toml(&unnamed).contains("name = \"mesh[0]\""));
    assert_eq!(parse_scene(&scene_to_toml(&unnamed)).unwrap(), unnamed);
    // Unique: named, and a file's stem against a name.
    let two = mesh_scene(&format!(
        "{TRIANGLE}\nname = \"a\"\n[[mesh]]\n{TRIANGLE}\nname = \"a\""
    ));
    assert_error(&two, "mesh[1].name = \"a\": mesh[0] has that name already");
    let dir = tempfile::tempdir().unwrap();
    let mut stl = Vec::new();
    let t = stl_io::Triangle {
        normal: stl_io::Normal::new([0.0, 0.0, 1.0]),
        vertices: [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]].map(stl_io::Vertex::new),
    };
    stl_io::write_stl(&mut stl, [t].iter()).unwrap();
    std::fs::write(dir.path().join("drum, v2.stl"), &stl).unwrap();
    let scene = parse_scene_in(&mesh_scene("file = \"drum, v2.stl\""), dir.path()).unwrap();
    assert_eq!(
        scene.model.meshes[0].name, "drum__v2",
        "the stem, sanitized"
    );
    let clash = mesh_scene(&format!(
        "{TRIANGLE}\nname = \"drum__v2\"\n[[mesh]]\nfile = \"drum, v2.stl\""
    ));
    let e = parse_scene_in(&clash, dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("mesh[1]: its default name \"drum__v2\" (the file's stem): mesh[0] has that name already"),
        "{e}"
    );
}

/// Issue 49, item 4: an inline mesh's vertices are welded, so a triangle repeated
/// through a copied vertex (or one a hair away) is refused, naming both triangles; a
/// seam through copies is one shared edge.
#[test]
fn inline_meshes_are_welded() {
    let square = |extra: &str| {
        mesh_scene(&format!(
            "name = \"m\"\nvertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], {extra}]\n\
             triangles = [[0, 1, 2], [4, 2, 3], [5, 2, 1]]"
        ))
    };
    // Vertex 4 copies vertex 0, vertex 5 copies 0 a rounding step away: triangle 2
    // welds onto triangle 0 (turned over).
    let e = error_of(&square("[0.0, 0.0, 0.0], [1e-17, 0.0, 0.0]"));
    assert!(
        e.contains("mesh[0]: triangle 2 repeats triangle 0: with corners within 1.414e-6 of each other welded"),
        "{e}"
    );
    // Vertex 5 elsewhere: the seam 0–2 (through the copy 4) is one edge.
    let scene = parse_scene(&square("[1e-7, 0.0, 0.0], [2.0, 0.0, 0.0]")).unwrap();
    let mesh = &scene.model.meshes[0].mesh;
    assert_eq!(mesh.vertices.len(), 5, "{:?}", mesh.vertices);
    assert_eq!(mesh.triangles[..2], [[0, 1, 2], [0, 2, 3]]);
    assert_eq!(mesh.edges()[&[0, 2]], vec![0, 1]);
    // A triangle whose corners weld together.
    let e = error_of(&mesh_scene(
        "vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1e-9, 0.0, 0.0]]\ntriangles = [[0, 1, 2], [0, 3, 2]]",
    ));
    assert!(e.contains("mesh[0]: triangle 1 has corners [0.0, 0.0, 0.0] and [1e-9, 0.0, 0.0] within the welding tolerance"), "{e}");
}

/// Issue 49, item 4: an STL file's errors name the `mesh[k].file` key, the path and
/// what is wrong.
#[test]
fn stl_errors_name_the_key_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let t = stl_io::Triangle {
        normal: stl_io::Normal::new([0.0, 0.0, 1.0]),
        vertices: [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]].map(stl_io::Vertex::new),
    };
    let mut two = Vec::new();
    stl_io::write_stl(&mut two, [t, t].iter()).unwrap();
    let mut count = two.clone();
    count[80] = 1;
    let ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    let files: [(&str, Vec<u8>); 4] = [
        ("count.stl", count),
        ("short.stl", two[..150].to_vec()),
        ("bom.stl", format!("\u{feff}{ascii}").into_bytes()),
        ("garbage.stl", b"not an STL file".to_vec()),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let error = |file: &str| {
        let text = mesh_scene(&format!("file = {file:?}"));
        let e = parse_scene_in(&text, dir.path()).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        let want = format!(
            "scene: mesh[0].file = {file:?}: {}: ",
            dir.path().join(file).display()
        );
        assert!(e.starts_with(&want), "{e}");
        e[want.len()..].to_owned()
    };
    assert_eq!(
        error("count.stl"),
        "the header's triangle count disagrees with the file's size (the triangles past the count would be lost): as a binary STL its header counts 1 triangle, so it should have 84 + 50 × 1 = 134 bytes, but it has 184 bytes, room for 2 triangles"
    );
    let e = error("short.stl");
    assert!(
        e.starts_with("truncated")
            && e.contains("counts 2 triangles, so it should have 84 + 50 × 2 = 184 bytes, but it has 150 bytes")
            && e.contains("room for 1 triangle and 16 bytes more"),
        "{e}"
    );
    assert!(error("bom.stl").starts_with("starts with a UTF-8 byte-order mark"));
    assert!(error("garbage.stl").starts_with("is not an STL file"));
    assert!(error("missing.stl").starts_with("cannot read it: "));
    // The same facet twice.
    std::fs::write(dir.path().join("twice.stl"), &two).unwrap();
    assert!(error("twice.stl").starts_with("triangle 1 repeats triangle 0"));
}

/// Issue 49, item 8: a sphere that starts overlapping a plane or a mesh by more than
/// `max_initial_overlap` of its radius, or wholly behind a plane, is refused naming
/// both; one within the allowance starts.
#[test]
fn spheres_overlapping_walls_at_t_0_are_refused_naming_both() {
    let contact = "[contact]\nlaw = \"binder\"\nk_pp = 50.0\n";
    // The chain's particle 0 is at the origin with radius 0.1.
    let plane = |z: f64| {
        chain(
            1,
            &format!("{contact}[[wall]]\npoint = [0.0, 0.0, {z}]\nnormal = [0.0, 0.0, 1.0]\n"),
        )
    };
    parse_scene(&plane(-0.1)).unwrap();
    parse_scene(&plane(-0.096)).unwrap();
    assert_error(
        &plane(-0.09),
        "particle 0 overlaps wall[0] by 1.000e-2 m at t = 0, more than 0.05 of its radius (5.000e-3 m)",
    );
    assert_error(
        &plane(0.5),
        "particle 0 lies wholly behind wall[0] at t = 0 (its centre -5.000e-1 m from the plane",
    );
    let allowed = plane(-0.09).replace(contact, &format!("{contact}max_initial_overlap = 0.2\n"));
    parse_scene(&allowed).unwrap();
    let mesh = |z: f64| {
        chain(
            1,
            &format!(
                "{contact}[[mesh]]\nname = \"floor\"\nvertices = [[-1.0, -1.0, {z}], [1.0, -1.0, {z}], [0.0, 1.0, {z}]]\ntriangles = [[0, 1, 2]]\n"
            ),
        )
    };
    parse_scene(&mesh(-0.1)).unwrap();
    assert_error(
        &mesh(-0.05),
        "particle 0 overlaps mesh[0] (floor) by 5.000e-2 m at t = 0, more than 0.05 of its radius",
    );
}

/// Rolling resistance keys (issue 50): read into the materials, interactions and the
/// contact's model, written back by `scene_to_toml`, and every bad value named.
#[test]
fn rolling_keys_are_read_checked_and_written_back() {
    let text = |m1: &str, m2: &str, extra: &str| {
        format!(
            "[simulation]\ndt = 1e-5\nsteps = 10\n[contact]\nlaw = \"hertz\"\n\
             [[material]]\nname = \"glass\"\nyoung = 1e8\npoisson = 0.3\ndensity = 2500.0\n\
             restitution = 0.5\nfriction_static = 0.5\n{m1}\
             [[material]]\nname = \"steel\"\nyoung = 2e8\npoisson = 0.3\ndensity = 7800.0\n\
             restitution = 0.5\nfriction_static = 0.5\n{m2}\
             [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.01\nmaterial = \"glass\"\n{extra}"
        )
    };
    let s = parse_scene(&text(
        "rolling_friction = 0.1\nrolling_model = \"epsd\"\nrolling_damping = 0.5\n",
        "rolling_friction = 0.2\n",
        "[[interaction]]\nmaterials = [\"glass\", \"steel\"]\nrolling_friction = 0.05\n",
    ))
    .unwrap();
    let m = &s.model;
    assert_eq!(m.materials[0].rolling_friction, 0.1);
    assert_eq!(m.materials[0].rolling_damping, 0.5);
    assert_eq!(m.materials[1].rolling_friction, 0.2);
    assert_eq!(
        m.materials[1].rolling_damping,
        crate::model::DEFAULT_ROLLING_DAMPING
    );
    assert_eq!(m.interactions[0].rolling_friction, Some(0.05));
    assert_eq!(m.rolling(), Some(crate::model::RollingModel::Epsd));
    let back = parse_scene(&super::write::scene_to_toml(&s)).unwrap();
    assert_eq!(back.model.materials, m.materials);
    assert_eq!(back.model.interactions, m.interactions);
    assert_eq!(back.model.contact, m.contact);
    // The default: CDT; no rolling friction, no rolling.
    let plain = parse_scene(&text("rolling_friction = 0.1\n", "", "")).unwrap();
    assert_eq!(plain.model.rolling(), Some(crate::model::RollingModel::Cdt));
    assert_eq!(
        parse_scene(&text("", "", "")).unwrap().model.rolling(),
        None
    );
    for (m1, m2, expected) in [
        ("rolling_friction = -0.1\n", "", "material[0].rolling_friction = -0.1: must be >= 0"),
        ("rolling_damping = -1.0\n", "", "material[0].rolling_damping = -1: must be >= 0"),
        ("rolling_model = \"sds\"\n", "", "material[0].rolling_model = \"sds\": must be \"cdt\" or \"epsd\""),
        (
            "rolling_model = \"cdt\"\n",
            "rolling_model = \"epsd\"\n",
            "material[1].rolling_model = \"epsd\": material[0] has \"cdt\" (one rolling model per scene)",
        ),
    ] {
        assert_error(&text(m1, m2, ""), expected);
    }
    assert_error(
        &text(
            "",
            "",
            "[[interaction]]\nmaterials = [\"glass\", \"steel\"]\nrolling_friction = -1.0\n",
        ),
        "interaction[0].rolling_friction = -1: must be >= 0",
    );
    let hard =
        text("rolling_friction = 0.1\n", "", "").replace("law = \"hertz\"", "law = \"hard\"");
    assert_error(
        &hard,
        "material[0].rolling_friction = 0.1: only the \"hertz\" law has rolling resistance",
    );
}

/// `scenes/channel-small.toml` (issue 48: a periodic plane, grid inserters with
/// velocity perturbations, a generated obstacle), 200 steps long.
fn channel_text() -> String {
    std::fs::read_to_string(scenes_dir().join("channel-small.toml"))
        .unwrap()
        .replace("t_end = 0.2", "t_end = 0.002")
}

#[test]
fn the_channel_keys_are_read_and_written_back() {
    let scene = parse_scene(&channel_text()).unwrap();
    let m = &scene.model;
    assert_eq!(m.walls[0].motion.period, 9.4e-4);
    assert!(m.walls[1].motion.period.is_infinite());
    let layer = &m.inserters[1];
    assert_eq!(
        layer.region,
        crate::model::Region::Grid {
            origin: DVec3::new(0.00047, 0.0005, 0.0005),
            spacing: DVec3::new(0.0, 0.001, 0.001),
            counts: [1, 21, 12],
        }
    );
    assert_eq!(layer.batch, crate::model::Batch::Count(252));
    assert_eq!(layer.velocity_perturbation, DVec3::new(0.0, 0.5, 0.5));
    // Sites a fastest: site 21 is the second row in z.
    assert_eq!(layer.region.site(21), DVec3::new(0.00047, 0.0005, 0.0015));
    // The obstacle: 128 facets over a turn, the half circle's 65 corners and the box's
    // two at each end, and the cap centres.
    assert_eq!(m.meshes[0].mesh.vertices.len(), 136);
    let back = parse_scene(&scene_to_toml(&scene)).unwrap();
    assert_eq!(back, scene);
}

#[test]
fn bad_channel_keys_are_named() {
    let text = channel_text();
    let cases = [
        ("period = 9.4e-4", "period = -1.0", "wall[0].period = -1"),
        (
            "counts = [1, 21, 12]",
            "counts = [1, 0, 12]",
            "inserter[1].grid.counts = [1, 0, 12]: each count must be >= 1",
        ),
        (
            "spacing = [0.0, 0.001, 0.001], counts = [1, 21, 12]",
            "spacing = [0.0, 0.0009, 0.001], counts = [1, 21, 12]",
            "inserter[1].grid.spacing = [0, 0.0009, 0.001]: along axis 1 (21 sites) the sites must be at least a sphere apart",
        ),
        (
            "velocity_perturbation = [0.0, 0.5, 0.5]\nseed = 2",
            "velocity_perturbation = [0.0, -0.5, 0.5]\nseed = 2",
            "inserter[1].velocity_perturbation = [0, -0.5, 0.5]: half-widths must be >= 0",
        ),
        (
            "interval = 9.4e-4",
            "interval = 9.4e-4\ncount = 3",
            "inserter[1]: a grid places one sphere per site at every event; leave out rate and count",
        ),
        (
            "box_side = [1.0, 0.0, 0.0]",
            "box_side = [1.0, 0.0, 0.5]",
            "mesh[0].cylinder.box_side = [1, 0, 0.5]: must be perpendicular to the axis",
        ),
        (
            "box_side = [1.0, 0.0, 0.0]",
            "box_side = [1.0, 0.0, 0.0], segments = 30",
            "mesh[0].cylinder.segments = 30: must be 8 to 2^20, a multiple of 4 with box_side",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(text.contains(from), "{from}");
        assert_error(&text.replacen(from, to, 1), expected);
    }
    // A still wall has nothing to repeat.
    let still = text.replacen(
        "normal = [1.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\n",
        "normal = [1.0, 0.0, 0.0]\n",
        1,
    );
    assert_error(&still, "wall[0].period = 0.00094: the wall does not move");
}
