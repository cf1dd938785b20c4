//! The bead of tests/mesh_walls.rs and tests/gpu_meshes.rs: a 2 cm glass bead sliding
//! and spinning across the diagonal of a floor that is a plane or the same plane as two
//! triangles.

const MATERIAL: &str = r#"
[[material]]
name = "glass"
density = 2500.0
young = 1e8
poisson = 0.25
restitution = RESTITUTION
friction_static = 0.4
friction_dynamic = 0.3
"#;

pub fn material(e: f64) -> String {
    MATERIAL.replace("RESTITUTION", &format!("{e:?}"))
}

/// The square `[-1, 1]²` at height 0 as two triangles split along the diagonal
/// `y = x` (normals up).
pub const SQUARE_MESH: &str = r#"
[[mesh]]
name = "floor"
vertices = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]
triangles = [[0, 1, 2], [0, 2, 3]]
"#;

pub const PLANE: &str = r#"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#;

/// A 2 cm glass bead dropped onto the floor, sliding and spinning across the diagonal.
pub fn bead_scene(floor: &str, law: &str, steps: u64) -> String {
    let contact = match law {
        "hertz" => "[contact]\nlaw = \"hertz\"\nskin = 0.002\n".to_owned() + &material(0.5),
        _ => "[contact]\nlaw = \"binder\"\nk_pp = 50.0\nskin = 0.002\n".to_owned(),
    };
    let extra = if law == "hertz" {
        "material = \"glass\""
    } else {
        "mass = 0.01"
    };
    format!(
        r#"
[simulation]
dt = 2e-6
steps = {steps}
gravity = [0.0, 0.0, -9.81]
{contact}
[[particle]]
position = [-0.3, 0.2, 0.0199]
velocity = [0.8, -0.9, -0.05]
angular_velocity = [30.0, 10.0, 5.0]
radius = 0.02
{extra}
{floor}
"#
    )
}
