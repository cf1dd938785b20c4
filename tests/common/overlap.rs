//! Scenes stepped with a time step ~100 times the Hertz collision duration (issue 49,
//! item 11): the first step into contact drives the beads deep into each other or into
//! the floor, which `[contact] max_overlap` turns into a named fault.

/// Bead radius (m).
pub const R: f64 = 0.005;
/// Time step (s): `varidem check` gives t_col ≈ 8e-4 s for these soft 1 cm beads at
/// 2 m/s, so about 120 collision durations (the tests assert ≥ 100).
pub const DT: f64 = 0.1;

const MATERIAL: &str = "[[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\n\
    density = 2500.0\nrestitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n";

/// Two beads head on at 1 m/s each, `2 v dt + R/2` apart: after one step their centres
/// are `R/2` apart, an overlap of 1.5 R. With `[domain] on_exit = "remove"` the Hertz
/// force of that overlap throws both out of the box, and without the overlap check the
/// run "succeeds" with every bead removed. `extra` goes into `[contact]`.
pub fn head_on(extra: &str) -> String {
    let x = 0.5 * (2.0 * DT + 0.5 * R);
    format!(
        "[simulation]\ndt = {DT:?}\nsteps = 20\noutput_every = 5\n\
         [contact]\nlaw = \"hertz\"\n{extra}\n{MATERIAL}\
         [domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, 1.0, 1.0]\non_exit = \"remove\"\n\
         [[particle]]\nposition = [{a:?}, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]\nradius = {R:?}\nmaterial = \"glass\"\n\
         [[particle]]\nposition = [{x:?}, 0.0, 0.0]\nvelocity = [-1.0, 0.0, 0.0]\nradius = {R:?}\nmaterial = \"glass\"\n",
        a = -x
    )
}

/// The first bead of [`onto`] to land in the first step.
pub const FIRST_LANDING: usize = 70;

/// 150 beads falling at 1 m/s onto `floor` (z = 0), a 15 × 10 grid 3 cm apart: beads
/// from [`FIRST_LANDING`] on start `dt·v + R/4` above it, so the first step puts their
/// centres R/4 above the floor (overlap 0.75 R); the first 70 start a step higher and
/// land a step later. So on the GPU the lowest raising particle is not in the first
/// workgroup, and others raise in the same dispatch. No domain: the GPU fuses the steps.
pub fn onto(floor: &str) -> String {
    let mut beads = String::new();
    for k in 0..150 {
        let (x, y) = (
            0.03 * (k % 15) as f64 - 0.21,
            0.03 * (k / 15) as f64 - 0.135,
        );
        let z = if k < FIRST_LANDING { 2.0 * DT } else { DT } + 0.25 * R;
        beads += &format!(
            "[[particle]]\nposition = [{x:?}, {y:?}, {z:?}]\nvelocity = [0.0, 0.0, -1.0]\nradius = {R:?}\nmaterial = \"glass\"\n"
        );
    }
    format!(
        "[simulation]\ndt = {DT:?}\nsteps = 20\noutput_every = 5\n\
         [contact]\nlaw = \"hertz\"\n{MATERIAL}{beads}{floor}"
    )
}

/// The floor z = 0 as a plane wall.
pub const PLANE: &str = "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n";

/// The floor z = 0 as the second mesh (after one the beads never reach, so that the
/// index shows), two triangles over [-0.5, 0.5]².
pub const MESH: &str = r#"
[[mesh]]
name = "aside"
vertices = [[0.3, 0.3, 0.3], [0.4, 0.3, 0.3], [0.3, 0.4, 0.3]]
triangles = [[0, 1, 2]]
[[mesh]]
name = "floor"
vertices = [[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [-0.5, 0.5, 0.0]]
triangles = [[0, 1, 2], [0, 2, 3]]
"#;
