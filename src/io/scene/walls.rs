//! `[[wall]]` planes and `[[mesh]]` triangle meshes, with their prescribed motions.

use std::path::Path;

use super::checks::{
    finite_vec, fmt_vec, material_index, non_negative, nonzero_vec, positive, scene_error, shown,
    unit,
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
    period: Option<f64>,
}

/// The motion of section `$s` (a `[[wall]]` or `[[mesh]]`, which share the keys but
/// `period`, a plane's only: a mesh's contact lists assume it does not jump).
macro_rules! motion_of {
    ($who:expr, $s:expr) => {
        motion_of!($who, $s, $s.period)
    };
    ($who:expr, $s:expr, $period:expr) => {
        motion(
            $who,
            MotionKeys {
                velocity: $s.velocity,
                angular_velocity: $s.angular_velocity,
                axis_point: $s.axis_point,
                start: $s.start,
                stop: $s.stop,
                period: $period,
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
    let velocity = vec("velocity", m.velocity)?;
    let angular_velocity = vec("angular_velocity", m.angular_velocity)?;
    let period = match m.period {
        Some(p) => {
            let p = positive(&key("period"), p)?;
            if !p.is_finite() {
                return Err(scene_error(format!(
                    "{} = {p}: must be finite",
                    key("period")
                )));
            }
            if velocity == glam::DVec3::ZERO && angular_velocity == glam::DVec3::ZERO {
                return Err(scene_error(format!(
                    "{} = {p}: the wall does not move (give it a velocity or angular_velocity)",
                    key("period")
                )));
            }
            p
        }
        None => f64::INFINITY,
    };
    Ok(Motion {
        velocity,
        angular_velocity,
        axis_point: vec("axis_point", m.axis_point)?,
        start,
        stop,
        period,
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
        let sources = (&m.file, &m.vertices, &m.triangles);
        let (mesh, default_name) = match (sources, &m.cylinder) {
            ((None, None, None), Some(c)) => (cylinder(&key("cylinder"), c)?, who.clone()),
            (_, Some(_)) => {
                return Err(scene_error(format!(
                    "{who}: give one of file, vertices and triangles, or cylinder"
                )));
            }
            ((Some(file), None, None), None) => {
                let path = base.join(file);
                let mesh = crate::io::stl::read_mesh(&path).map_err(|e| {
                    scene_error(format!(
                        "{} = {}: {}: {e}",
                        key("file"),
                        shown(file),
                        path.display()
                    ))
                })?;
                // The stem names the mesh unless `name` does, its other characters
                // made `_` (a file `drum, v2.stl` is the mesh `drum__v2`).
                let stem = Path::new(file)
                    .file_stem()
                    .map(|s| sanitized(&s.to_string_lossy()))
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| who.clone());
                (mesh, stem)
            }
            ((None, Some(vertices), Some(triangles)), None) => {
                (inline(&who, vertices, triangles)?, who.clone())
            }
            _ => {
                return Err(scene_error(format!(
                    "{who}: give either file = \"path.stl\", both vertices and triangles, or cylinder = {{ ... }}"
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
        let name = match &m.name {
            Some(name) => {
                check_name(&key("name"), name, k)?;
                name.clone()
            }
            None => default_name,
        };
        if let Some(j) = model.meshes.iter().position(|o| o.name == name) {
            let given = if m.name.is_some() {
                format!("{} = {}", key("name"), shown(&name))
            } else {
                format!("{who}: its default name {} (the file's stem)", shown(&name))
            };
            return Err(scene_error(format!(
                "{given}: mesh[{j}] has that name already; names must be unique (they label walls.csv rows): give each mesh its own `name`"
            )));
        }
        let material = wall_material(&key("material"), m.material.as_deref(), materials)?;
        model.meshes.push(MeshWall {
            name,
            mesh,
            material,
            stiffness: stiffness(&who, m.stiffness, law)?,
            motion: motion_of!(&who, m, None)?,
        });
    }
    Ok(())
}

/// Default facets of a generated cylinder over a full turn: the facets lie within
/// `r (1 − cos(π/128)) = 3·10⁻⁴ r` of the circle.
pub(super) const CYLINDER_SEGMENTS: u32 = 128;

/// The mesh of `cylinder = { ... }` at `key`: a positive radius and length, a non-zero
/// axis, at least 8 segments (a multiple of 4 with `box_side`, so that the half circle
/// ends on the box), `box_side` perpendicular to the axis.
fn cylinder(key: &str, c: &super::schema::CylinderSection) -> Result<TriangleMesh> {
    let k = |field: &str| format!("{key}.{field}");
    let center = finite_vec(&k("center"), c.center)?;
    let axis = unit(nonzero_vec(&k("axis"), c.axis, "the cylinder's axis")?);
    let radius = positive(&k("radius"), c.radius)?;
    let length = positive(&k("length"), c.length)?;
    if !(radius.is_finite() && length.is_finite()) {
        return Err(scene_error(format!(
            "{key}: radius = {radius} and length = {length} must be finite"
        )));
    }
    let box_side = match c.box_side {
        Some(v) => {
            let s = unit(nonzero_vec(&k("box_side"), v, "the box's side")?);
            if s.dot(axis).abs() > 1e-9 {
                return Err(scene_error(format!(
                    "{} = {}: must be perpendicular to the axis {}",
                    k("box_side"),
                    fmt_vec(v),
                    fmt_vec(c.axis)
                )));
            }
            // Exactly perpendicular, so the box's faces are the axis's planes.
            Some((s - s.dot(axis) * axis).normalize())
        }
        None => None,
    };
    let segments = match c.segments {
        None => CYLINDER_SEGMENTS,
        Some(n) => u32::try_from(n)
            .ok()
            .filter(|&n| (8..=1 << 20).contains(&n) && (box_side.is_none() || n % 4 == 0))
            .ok_or_else(|| {
                scene_error(format!(
                    "{} = {n}: must be 8 to 2^20{}",
                    k("segments"),
                    if box_side.is_some() {
                        ", a multiple of 4 with box_side"
                    } else {
                        ""
                    }
                ))
            })?,
    };
    crate::model::shapes::Cylinder {
        center,
        axis,
        radius,
        length,
        segments,
        box_side,
    }
    .mesh()
    .map_err(|e| scene_error(format!("{key}: {e}")))
}

/// The characters a mesh's `name` may use besides ASCII letters and digits. The name
/// labels the mesh's rows of `walls.csv` and is written back into TOML: without commas,
/// quotes, blanks or control characters it needs no quoting in either, and without
/// brackets it cannot be a plane's label (`wall[k]`) or an unnamed inline mesh's
/// (`mesh[k]`).
const NAME_PUNCTUATION: &str = "_-.";

/// Whether `c` may appear in a mesh's name ([`NAME_PUNCTUATION`]).
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(c)
}

/// `s` with every character a name may not use replaced by `_`.
fn sanitized(s: &str) -> String {
    s.chars()
        .map(|c| if name_char(c) { c } else { '_' })
        .collect()
}

/// The automatic label `s` is, if it is one: `wall[k]` (the k-th plane) or `mesh[k]`
/// (the k-th mesh, inline and unnamed).
fn automatic_label(s: &str) -> Option<(&str, &str)> {
    let (kind, rest) = s.split_once('[')?;
    let index = rest.strip_suffix(']')?;
    (matches!(kind, "wall" | "mesh")
        && !index.is_empty()
        && index.bytes().all(|b| b.is_ascii_digit()))
    .then_some((kind, index))
}

/// Checks `name`, given at `key` for the `k`-th mesh: not empty, only
/// [`name_char`]s. Its own automatic label `mesh[k]` is accepted too: `scene_to_toml`
/// writes it back so for an unnamed inline mesh.
fn check_name(key: &str, name: &str, k: usize) -> Result<()> {
    if name.is_empty() {
        return Err(scene_error(format!("{key} = \"\": must not be empty")));
    }
    let allowed = "only ASCII letters, digits and `_`, `-`, `.` (names label walls.csv rows)";
    match automatic_label(name) {
        Some(("mesh", i)) if i == k.to_string() => return Ok(()),
        Some((kind, i)) => {
            let whose = if kind == "wall" {
                format!("the plane wall[{i}]")
            } else {
                format!("mesh[{i}] when it is inline and unnamed")
            };
            return Err(scene_error(format!(
                "{key} = {}: that is the label walls.csv gives {whose}; a mesh's name may use {allowed}",
                shown(name)
            )));
        }
        None => {}
    }
    if let Some(c) = name.chars().find(|&c| !name_char(c)) {
        return Err(scene_error(format!(
            "{key} = {}: {c:?} is not allowed; a name may use {allowed}",
            shown(name)
        )));
    }
    Ok(())
}

/// An inline mesh: finite vertices, triangle indices in range, vertices welded within
/// [`TriangleMesh::weld_tolerance`] (a vertex given twice is one vertex, so a triangle
/// repeated through the copy is refused).
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
    let tol = TriangleMesh::weld_tolerance(&v);
    TriangleMesh::welded(v, t, tol).map_err(|e| scene_error(format!("{who}: {e}")))
}
