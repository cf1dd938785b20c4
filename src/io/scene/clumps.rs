//! `[[clump_type]]` and `[[clump]]` sections turned into model values (issue 24).
//!
//! ```toml
//! [[clump_type]]
//! name = "dimer"
//! spheres = [ { position = [-0.5e-3, 0.0, 0.0], radius = 1.0e-3 },
//!             { position = [ 0.6e-3, 0.0, 0.0], radius = 0.8e-3 } ]   # body frame (m)
//! material = "glass"      # contacts, and the density of computed mass properties
//! density = 2500.0        # optional: instead of the material's
//! mass = 1.2e-5           # optional (kg): overrides density × the union's volume
//! inertia = [1e-11, 2e-11, 2e-11]   # optional (kg m², about the centre of mass, body
//!                         # frame): 3 principal values, or 6 tensor entries
//!                         # [Jxx, Jyy, Jzz, Jxy, Jxz, Jyz]
//!
//! [[clump]]
//! type = "dimer"
//! position = [0.0, 0.0, 0.01]      # centre of mass (m)
//! rotation = [0.0, 0.0, 0.0]       # α of the body frame
//! velocity = [0.0, 0.0, 0.0]
//! angular_velocity = [0.0, 0.0, 0.0]   # spatial Ω
//! ```
//!
//! The centre of mass is the centroid of the union of the spheres (overlaps counted
//! once, uniform density; `model::mass_properties`), so the body frame's origin need not
//! be at it: `position` places the centre of mass and the spheres sit where the body
//! frame puts them. The 6-value inertia gives the tensor's entries (J_xy = −∫xy dm).

use glam::{DMat3, DVec3};

use super::checks::{finite_vec, fmt_vec, material_of, plural, positive, scene_error, shown};
use super::schema::{ClumpSection, ClumpTypeSection};
use crate::error::Result;
use crate::model::{Clump, ClumpType, Material, Model};

/// The `[[clump_type]]`s, every value checked and the mass properties computed.
pub(super) fn clump_types(
    sections: &[ClumpTypeSection],
    materials: &[Material],
    hertz: bool,
) -> Result<Vec<ClumpType>> {
    let mut types: Vec<ClumpType> = Vec::with_capacity(sections.len());
    for (k, t) in sections.iter().enumerate() {
        let who = format!("clump_type[{k}] ({})", shown(&t.name));
        if t.name.is_empty() {
            return Err(scene_error(format!(
                "clump_type[{k}].name: must not be empty"
            )));
        }
        if types.iter().any(|u| u.name == t.name) {
            return Err(scene_error(format!(
                "{who}.name: a clump type of that name is already defined"
            )));
        }
        if t.spheres.is_empty() {
            return Err(scene_error(format!(
                "{who}.spheres: empty; a clump needs at least one sphere"
            )));
        }
        let spheres = t
            .spheres
            .iter()
            .enumerate()
            .map(|(s, sp)| {
                let key = |f: &str| format!("{who}.spheres[{s}].{f}");
                Ok((
                    finite_vec(&key("position"), sp.position)?,
                    positive(&key("radius"), sp.radius)?,
                ))
            })
            .collect::<Result<Vec<(DVec3, f64)>>>()?;
        let material = material_of(&who, t.material.as_deref(), materials, hertz)?;
        let density = match (t.density, t.material.is_some() || hertz) {
            (Some(d), _) => Some(positive(&format!("{who}.density"), d)?),
            (None, true) => Some(materials[material as usize].density),
            (None, false) => None,
        };
        let mass = t
            .mass
            .map(|m| positive(&format!("{who}.mass"), m))
            .transpose()?;
        let inertia = t
            .inertia
            .as_deref()
            .map(|v| inertia_tensor(&format!("{who}.inertia"), v))
            .transpose()?;
        let kind = ClumpType::new(&t.name, &spheres, material, density, mass, inertia)
            .map_err(|e| scene_error(format!("{who}: {e}")))?;
        if !(kind.mass > 0.0 && kind.mass.is_finite()) {
            return Err(scene_error(format!(
                "{who}: the mass {:e} kg is not > 0 and finite (are the units SI?)",
                kind.mass
            )));
        }
        types.push(kind);
    }
    Ok(types)
}

/// An inertia tensor from 3 principal values or 6 entries.
fn inertia_tensor(key: &str, v: &[f64]) -> Result<DMat3> {
    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
        return Err(scene_error(format!("{key}: {x} is not finite")));
    }
    match *v {
        [a, b, c] => Ok(DMat3::from_diagonal(DVec3::new(a, b, c))),
        [xx, yy, zz, xy, xz, yz] => Ok(DMat3::from_cols(
            DVec3::new(xx, xy, xz),
            DVec3::new(xy, yy, yz),
            DVec3::new(xz, yz, zz),
        )),
        _ => Err(scene_error(format!(
            "{key}: {} values; give 3 (principal) or 6 ([Jxx, Jyy, Jzz, Jxy, Jxz, Jyz])",
            v.len()
        ))),
    }
}

/// The index of the clump type named `name`, or an error for `key` listing the names.
pub(super) fn clump_type_index(key: &str, name: &str, types: &[ClumpType]) -> Result<u32> {
    types
        .iter()
        .position(|t| t.name == name)
        .map(|i| i as u32)
        .ok_or_else(|| {
            let known: Vec<&str> = types.iter().map(|t| t.name.as_str()).collect();
            let name = shown(name);
            scene_error(format!(
                "{key} = {name}: unknown clump type ({})",
                if known.is_empty() {
                    "no [[clump_type]] is defined".to_owned()
                } else {
                    format!("{}: {}", plural(known.len(), "type"), known.join(", "))
                }
            ))
        })
}

/// The explicit `[[clump]]`s, in file order.
pub(super) fn add_clumps(model: &mut Model, sections: &[ClumpSection]) -> Result<()> {
    for (k, c) in sections.iter().enumerate() {
        let key = |f: &str| format!("clump[{k}].{f}");
        let kind = clump_type_index(&key("type"), &c.kind, &model.clump_types)?;
        model.clumps.push(Clump {
            kind,
            position: finite_vec(&key("position"), c.position)?,
            rotation: finite_vec(&key("rotation"), c.rotation)?,
            velocity: finite_vec(&key("velocity"), c.velocity)?,
            angular_velocity: finite_vec(&key("angular_velocity"), c.angular_velocity)?,
        });
    }
    Ok(())
}

/// The name of sphere `s` of the combined list of [`sphere_list`]: a particle, or a
/// clump's sphere.
pub(super) fn sphere_name(model: &Model, s: usize) -> String {
    let n = model.particles.len();
    if s < n {
        return format!("particle {s}");
    }
    let mut rest = s - n;
    for (c, clump) in model.clumps.iter().enumerate() {
        let count = model.clump_types[clump.kind as usize].spheres.len();
        if rest < count {
            return format!("clump {c} (sphere {rest})");
        }
        rest -= count;
    }
    format!("sphere {s}")
}

/// Every sphere of the model at `t = 0`: the particles, then each clump's spheres, as
/// (centre, radius, body) with body the particle's id or `n + clump index`.
pub(super) fn sphere_list(model: &Model) -> Vec<(DVec3, f64, usize)> {
    let p = &model.particles;
    let n = p.len();
    let mut out: Vec<(DVec3, f64, usize)> =
        (0..n).map(|i| (p.position[i], p.radius[i], i)).collect();
    for (c, clump) in model.clumps.iter().enumerate() {
        let kind = &model.clump_types[clump.kind as usize];
        for (x, s) in clump.sphere_centres(kind).zip(&kind.spheres) {
            out.push((x, s.radius, n + c));
        }
    }
    out
}

/// Refuses a `[domain]` that does not hold every clump's centre of mass.
pub(super) fn check_clumps_in_domain(model: &Model) -> Result<()> {
    let Some(d) = &model.domain else {
        return Ok(());
    };
    match model.clumps.iter().position(|c| !d.contains(c.position)) {
        Some(c) => Err(scene_error(format!(
            "clump {c} at {} starts outside the domain",
            fmt_vec(model.clumps[c].position.to_array())
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use crate::io::scene::{parse_scene, scene_to_toml};

    const GLASS: &str = "[[material]]\nname = \"glass\"\nyoung = 6e10\npoisson = 0.2\n\
        density = 2500.0\nrestitution = 0.5\nfriction_static = 0.4\n";

    /// The issue's dimer: two spheres in the body frame, material glass.
    fn dimer(extra_type: &str, clumps: &str) -> String {
        format!(
            "[simulation]\ndt = 1e-6\nsteps = 10\n[contact]\nlaw = \"hertz\"\n{GLASS}\n\
             [[clump_type]]\nname = \"dimer\"\n\
             spheres = [ {{ position = [-0.5e-3, 0.0, 0.0], radius = 1.0e-3 }},\n\
                         {{ position = [ 0.6e-3, 0.0, 0.0], radius = 0.8e-3 }} ]\n\
             material = \"glass\"\n{extra_type}\n{clumps}"
        )
    }

    const ONE: &str = "[[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.01]\n";

    fn error_of(text: &str) -> String {
        match parse_scene(text) {
            Ok(_) => panic!("parsed but should not have:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_issue_dimer_gets_its_union_mass_properties() {
        let s = parse_scene(&dimer("", ONE)).unwrap();
        let m = &s.model;
        assert_eq!((m.clump_types.len(), m.clumps.len()), (1, 1));
        let t = &m.clump_types[0];
        // The lens: spheres 1.1 mm apart with radii 1 and 0.8 mm.
        let (r1, r2, d) = (1.0e-3f64, 0.8e-3f64, 1.1e-3f64);
        let lens = std::f64::consts::PI
            * (r1 + r2 - d).powi(2)
            * (d * d + 2.0 * d * r2 - 3.0 * r2 * r2 + 2.0 * d * r1 + 6.0 * r1 * r2 - 3.0 * r1 * r1)
            / (12.0 * d);
        let volume = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) + r2.powi(3)) - lens;
        assert!(
            (t.mass / (2500.0 * volume) - 1.0).abs() < 1e-5,
            "{}",
            t.mass
        );
        // On the x axis to the quadrature's accuracy (measured 1.2·10⁻⁶ of the 1 mm
        // size; the mass properties are held to 10⁻⁵, the issue asks 10⁻⁴).
        assert!(
            t.centroid.y.abs() < 1e-5 * 1e-3 && t.centroid.z.abs() < 1e-5 * 1e-3,
            "{}",
            t.centroid
        );
        let back = t.centroid + t.spheres[0].offset;
        assert!((back - DVec3::new(-0.5e-3, 0.0, 0.0)).length() < 1e-18);
        // The clump's position is its centre of mass.
        assert_eq!(m.clumps[0].position, DVec3::new(0.0, 0.0, 0.01));
        // Contact skin defaults from the largest sphere (0.1 × 1 mm).
        assert!((m.contact.unwrap().skin - 1e-4).abs() < 1e-18);
    }

    #[test]
    fn given_mass_and_inertia_are_used() {
        let s = parse_scene(&dimer(
            "mass = 1.2e-5\ninertia = [1e-11, 2e-11, 2e-11]\n",
            ONE,
        ))
        .unwrap();
        let t = &s.model.clump_types[0];
        assert_eq!(t.mass, 1.2e-5);
        assert_eq!(t.inertia.body.y_axis.y, 2e-11);
        let six = parse_scene(&dimer(
            "mass = 1.0\ninertia = [2.0, 2.0, 3.0, 0.5, 0.0, 0.0]\n",
            ONE,
        ))
        .unwrap();
        let j = six.model.clump_types[0].inertia.body;
        assert_eq!((j.x_axis.y, j.y_axis.x), (0.5, 0.5));
    }

    #[test]
    fn bad_clumps_are_named_errors() {
        let cases = [
            (
                dimer(
                    "",
                    "[[clump]]\ntype = \"trimer\"\nposition = [0.0, 0.0, 0.0]\n",
                ),
                "clump[0].type = \"trimer\": unknown clump type (1 type: dimer)",
            ),
            (
                dimer("inertia = [1.0, 1.0, 3.0]\n", ONE),
                "clump_type[0] (\"dimer\"): inertia: the principal moments",
            ),
            (
                dimer("inertia = [1.0, -1.0, 1.0]\n", ONE),
                "not positive definite",
            ),
            (
                dimer("inertia = [1.0, 1.0, 1.0, 1.0]\n", ONE),
                "clump_type[0] (\"dimer\").inertia: 4 values; give 3",
            ),
            (
                dimer("mass = -1.0\n", ONE),
                "clump_type[0] (\"dimer\").mass = -1",
            ),
            (
                "[simulation]\ndt = 1e-3\nsteps = 1\n[[clump_type]]\nname = \"e\"\nspheres = []\n\
                 density = 1.0\n[[clump]]\ntype = \"e\"\nposition = [0.0, 0.0, 0.0]\n"
                    .to_owned(),
                "clump_type[0] (\"e\").spheres: empty",
            ),
            (
                "[simulation]\ndt = 1e-3\nsteps = 1\n[[clump_type]]\nname = \"e\"\n\
                 spheres = [{ position = [0.0, 0.0, 0.0], radius = 1.0 }]\n\
                 [[clump]]\ntype = \"e\"\nposition = [0.0, 0.0, 0.0]\n"
                    .to_owned(),
                "clump_type[0] (\"e\"): has no mass: give mass, or a material with a density",
            ),
            (
                dimer(
                    "",
                    "[[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.0]\n\
                     [[clump]]\ntype = \"dimer\"\nposition = [0.5e-3, 0.0, 0.0]\n",
                ),
                "clump 0 (sphere 0) and clump 1 (sphere 0) overlap",
            ),
            (
                dimer(
                    "",
                    "[[cloud]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.01, 0.01, 0.01]\ncount = 3\n\
                     clump_type = \"dimer\"\nradius = 1e-3\n",
                ),
                "cloud[0].radius: not used with clump_type",
            ),
            (
                "[simulation]\ndt = 1e-3\nsteps = 1\n[[cloud]]\nmin = [0.0, 0.0, 0.0]\n\
                 max = [1.0, 1.0, 1.0]\ncount = 3\ndensity = 1.0\n"
                    .to_owned(),
                "cloud[0].radius: missing (give radius or radius_distribution, or clump_type to pour clumps)",
            ),
            (
                dimer(
                    "",
                    "[[particle]]\nposition = [0.0, 0.0, 0.02]\nradius = 1e-3\nmaterial = \"glass\"\n\
                     [[clump]]\ntype = \"dimer\"\nposition = [0.0, 0.0, 0.0]\n\
                     [[bond]]\ni = 0\nj = 1\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n",
                ),
                "bond[0].j = 1: no such particle (1 particle; clumps cannot be bonded)",
            ),
            // What the backends cannot run is refused by the loader (issue 49: `check`
            // accepted them and `run` then refused).
            (
                dimer("", ONE).replacen(
                    "steps = 10\n",
                    "steps = 10\nintegrator = \"campello-trapezoidal\"\n",
                    1,
                ),
                "simulation.integrator = \"campello-trapezoidal\": it does not run clumps",
            ),
            (
                dimer(
                    "",
                    &format!("{ONE}[domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, 1.0, 1.0]\non_exit = \"remove\"\n"),
                ),
                "domain.on_exit = \"remove\" is not supported for clumps yet",
            ),
        ];
        for (text, want) in cases {
            let msg = error_of(&text);
            assert!(msg.contains(want), "{msg:?} does not contain {want:?}");
            assert!(!msg.contains('\n'), "not one line: {msg:?}");
        }
    }

    /// The spheres of one clump overlap by design; only other bodies count.
    #[test]
    fn a_clump_does_not_overlap_itself() {
        assert!(parse_scene(&dimer("", ONE)).is_ok());
    }

    #[test]
    fn a_clump_cloud_pours_seeded_random_orientations() {
        let cloud = "[[cloud]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.02, 0.02, 0.02]\ncount = 40\n\
                     clump_type = \"dimer\"\nseed = 7\nvelocity = [0.0, 0.0, -1.0]\n";
        let a = parse_scene(&dimer("", cloud)).unwrap();
        let b = parse_scene(&dimer("", cloud)).unwrap();
        assert_eq!(a.model.clumps, b.model.clumps);
        assert_eq!(a.model.clumps.len(), 40);
        assert!(a.model.particles.is_empty());
        let rotations: Vec<DVec3> = a.model.clumps.iter().map(|c| c.rotation).collect();
        assert!(rotations.windows(2).all(|w| w[0] != w[1]));
        assert!(a
            .model
            .clumps
            .iter()
            .all(|c| c.velocity == DVec3::new(0.0, 0.0, -1.0)));
        // Explicit clumps come first, then the cloud's.
        let both = parse_scene(&dimer(
            "",
            &format!("{ONE}{cloud}")
                .replace("position = [0.0, 0.0, 0.01]", "position = [0.0, 0.0, 0.05]"),
        ))
        .unwrap();
        assert_eq!(both.model.clumps[0].position, DVec3::new(0.0, 0.0, 0.05));
        assert_eq!(both.model.clumps.len(), 41);
    }

    #[test]
    fn clump_scenes_round_trip_through_toml() {
        let s = parse_scene(&dimer("", ONE)).unwrap();
        let text = scene_to_toml(&s);
        let back = parse_scene(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (a, b) = (&s.model, &back.model);
        assert_eq!(a.clumps, b.clumps);
        let (ta, tb) = (&a.clump_types[0], &b.clump_types[0]);
        assert_eq!((ta.mass, ta.inertia.body), (tb.mass, tb.inertia.body));
        for (x, y) in ta.spheres.iter().zip(&tb.spheres) {
            assert!((x.offset - y.offset).length() < 1e-18 && x.radius == y.radius);
        }
    }
}
