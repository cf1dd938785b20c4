//! `[[wall]]` planes and `[[mesh]]` triangle meshes, with their prescribed motions.

use std::path::Path;

use super::checks::{
    finite_vec, material_index, non_negative, nonzero_vec, positive, scene_error, unit,
};
use super::schema::{MeshSection, Vec3, WallSection};
use crate::error::Result;
use crate::model::{ContactLaw, Material, MeshWall, Model, Motion, TriangleMesh, Wall};

/// The motion keys shared by `[[wall]]` and `[[mesh]]`.
struct MotionKeys {
    velocity: Option<Vec3>,
    angular_velocity: Option<Vec3>,
    axis_point: Option<Vec3>,
    start: Option<f64>,
    stop: Option<f64>,
}

/// The motion of section `$s` (a `[[wall]]` or `[[mesh]]`, which share the keys).
macro_rules! motion_of {
    ($who:expr, $s:expr) => {
        motion(
            $who,
            MotionKeys {
                velocity: $s.velocity,
                angular_velocity: $s.angular_velocity,
                axis_point: $s.axis_point,
                start: $s.start,
                stop: $s.stop,
            },
        )
    };
}

/// The material index named at `key`, if any.
fn wall_material(key: &str, name: Option<&str>, materials: &[Material]) -> Result<Option<u32>> {
    name.map(|name| material_index(key, name, materials))
        .transpose()
}

/// The prescribed motion of `who` (`wall[k]`, `mesh[k]`): finite velocities, a finite
/// axis point (default the origin), `0 ≤ start < stop` (default 0 and never).
fn motion(who: &str, m: MotionKeys) -> Result<Motion> {
    let key = |field: &str| format!("{who}.{field}");
    let vec = |field: &str, v: Option<Vec3>| {
        v.map_or(Ok(glam::DVec3::ZERO), |v| finite_vec(&key(field), v))
    };
    let start = match m.start {
        Some(t) => non_negative(&key("start"), t)?,
        None => 0.0,
    };
    let stop = match m.stop {
        Some(t) if t.is_nan() || t <= start => {
            return Err(scene_error(format!(
                "{} = {t}: must be later than start = {start}",
                key("stop")
            )))
        }
        Some(t) => t,
        None => f64::INFINITY,
    };
    Ok(Motion {
        velocity: vec("velocity", m.velocity)?,
        angular_velocity: vec("angular_velocity", m.angular_velocity)?,
        axis_point: vec("axis_point", m.axis_point)?,
        start,
        stop,
    })
}

/// The `K^pp` of a wall or mesh `who`: its own `stiffness` under the binder law (default
/// `[contact] k_pp`); no other law takes one.
fn stiffness(who: &str, given: Option<f64>, law: Option<ContactLaw>) -> Result<f64> {
    let key = format!("{who}.stiffness");
    match (given, law) {
        (Some(s), Some(ContactLaw::Hard(_))) => Err(scene_error(format!(
            "{key} = {s}: only the \"binder\" law uses it; hard contacts have no stiffness"
        ))),
        (Some(s), Some(ContactLaw::Hertz)) => Err(scene_error(format!(
            "{key} = {s}: only the \"binder\" law uses it; under \"hertz\" give the wall a material (or none: rigid)"
        ))),
        (Some(s), _) => non_negative(&key, s),
        (None, Some(ContactLaw::Binder { k_pp })) => Ok(k_pp),
        // Hertz and hard walls take their properties from the materials.
        (None, _) => Ok(0.0),
    }
}

/// Walls and meshes act only through a contact law.
fn need_law(who: &str, law: Option<ContactLaw>) -> Result<()> {
    match law {
        Some(_) => Ok(()),
        None => Err(scene_error(format!(
            "{who}: walls act only through the contact law, but the scene has no [contact] section"
        ))),
    }
}

/// The `[[wall]]`s: normals made unit, stiffnesses from the wall or the contact law.
pub(super) fn add_walls(
    model: &mut Model,
    sections: &[WallSection],
    law: Option<ContactLaw>,
    materials: &[Material],
) -> Result<()> {
    for (k, w) in sections.iter().enumerate() {
        let who = format!("wall[{k}]");
        need_law(&who, law)?;
        let key = |field: &str| format!("{who}.{field}");
        let point = finite_vec(&key("point"), w.point)?;
        let normal = unit(nonzero_vec(
            &key("normal"),
            w.normal,
            "it points into the domain",
        )?);
        let material = wall_material(&key("material"), w.material.as_deref(), materials)?;
        model.walls.push(Wall {
            point,
            normal,
            stiffness: stiffness(&who, w.stiffness, law)?,
            material,
            motion: motion_of!(&who, w)?,
        });
    }
    Ok(())
}

/// The `[[mesh]]`es: read from `file` (relative to `base`, the scene file's directory)
/// or given inline, placed (scale, rotation α, translation) and checked; names unique.
pub(super) fn add_meshes(
    model: &mut Model,
    sections: &[MeshSection],
    law: Option<ContactLaw>,
    materials: &[Material],
    base: &Path,
) -> Result<()> {
    for (k, m) in sections.iter().enumerate() {
        let who = format!("mesh[{k}]");
        need_law(&who, law)?;
        let key = |field: &str| format!("{who}.{field}");
        let (mesh, default_name) = match (&m.file, &m.vertices, &m.triangles) {
            (Some(file), None, None) => {
                let path = base.join(file);
                let mesh = crate::io::stl::read_mesh(&path).map_err(|e| match e {
                    crate::error::Error::Scene(msg) => {
                        scene_error(format!("{}: {msg}", key("file")))
                    }
                    other => other,
                })?;
                let stem = Path::new(file)
                    .file_stem()
                    .map_or_else(|| who.clone(), |s| s.to_string_lossy().into_owned());
                (mesh, stem)
            }
            (None, Some(vertices), Some(triangles)) => {
                (inline(&who, vertices, triangles)?, who.clone())
            }
            _ => {
                return Err(scene_error(format!(
                    "{who}: give either file = \"path.stl\" or both vertices and triangles"
                )))
            }
        };
        let scale = match m.scale {
            Some(s) => positive(&key("scale"), s)?,
            None => 1.0,
        };
        let rotate = finite_vec(&key("rotate"), m.rotate)?;
        let translate = finite_vec(&key("translate"), m.translate)?;
        let placed = mesh.placed(scale, rotate, translate);
        // Placement keeps areas' ratios; rounding could still make a sliver degenerate.
        let mesh = TriangleMesh::new(placed.vertices, placed.triangles)
            .map_err(|e| scene_error(format!("{who}: once placed, {e}")))?;
        let name = m.name.clone().unwrap_or(default_name);
        if name.trim().is_empty() {
            return Err(scene_error(format!(
                "{} = {name:?}: must not be empty",
                key("name")
            )));
        }
        if let Some(j) = model.meshes.iter().position(|o| o.name == name) {
            return Err(scene_error(format!(
                "{} = {name:?}: mesh[{j}] has that name already; names must be unique (they label walls.csv)",
                key("name")
            )));
        }
        let material = wall_material(&key("material"), m.material.as_deref(), materials)?;
        model.meshes.push(MeshWall {
            name,
            mesh,
            material,
            stiffness: stiffness(&who, m.stiffness, law)?,
            motion: motion_of!(&who, m)?,
        });
    }
    Ok(())
}

/// An inline mesh: finite vertices, triangle indices in range.
fn inline(who: &str, vertices: &[Vec3], triangles: &[[i64; 3]]) -> Result<TriangleMesh> {
    let v = vertices
        .iter()
        .enumerate()
        .map(|(i, &v)| finite_vec(&format!("{who}.vertices[{i}]"), v))
        .collect::<Result<Vec<_>>>()?;
    let mut t = Vec::with_capacity(triangles.len());
    for (i, tri) in triangles.iter().enumerate() {
        let mut out = [0u32; 3];
        for (c, &idx) in tri.iter().enumerate() {
            if idx < 0 || idx as usize >= v.len() {
                return Err(scene_error(format!(
                    "{who}.triangles[{i}][{c}] = {idx}: must name a vertex, 0..{}",
                    v.len()
                )));
            }
            out[c] = idx as u32;
        }
        t.push(out);
    }
    TriangleMesh::new(v, t).map_err(|e| scene_error(format!("{who}: {e}")))
}
