//! A granular bed as LIGGGHTS input (issue 27): the peer benchmark steps the same
//! settled state as varidem with the same materials, walls and time step.
//!
//! Two files: `bed.data` (`read_data`, `atom_style granular`: per sphere its id, type,
//! diameter, density and position, then its velocity and angular velocity) and
//! `in.bed`, which reads it and sets up Hertz–Mindlin with history (`pair_style gran
//! model hertz tangential history`, restitution and friction of the one material),
//! the planes as `wall/gran` primitives, gravity and `nve/sphere`, then runs
//! `${warmup}` untimed and `${steps}` timed steps (`-var warmup W -var steps S`),
//! printing the contact count and the kinetic energy.

use std::fmt::Write as _;
use std::path::Path;

use crate::backend::StateSnapshot;
use crate::error::{Error, Result};
use crate::model::{ContactLaw, Scene};

/// The data file's name.
pub const LIGGGHTS_DATA: &str = "bed.data";
/// The input script's name.
pub const LIGGGHTS_INPUT: &str = "in.bed";

/// Writes `scene` in the state `state` as LIGGGHTS input into `dir` (created if
/// needed): see the [module documentation](self). Only what LIGGGHTS's Hertz model
/// shares with varidem's is accepted: spheres of one material under the Hertz law,
/// planes normal to an axis, at rest, gravity along −z; anything else is an error
/// naming it.
pub fn write_liggghts(dir: &Path, scene: &Scene, state: &StateSnapshot) -> Result<()> {
    let m = &scene.model;
    let refuse = |what: &str| Err(Error::Scene(format!("LIGGGHTS export: {what}")));
    if !matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz)) {
        return refuse("the scene is not under the Hertz law");
    }
    if m.materials.len() != 1 {
        return refuse("the scene has more than one material");
    }
    if !m.bonds.is_empty() || !m.clumps.is_empty() || !m.meshes.is_empty() {
        return refuse("bonds, clumps and meshes have no counterpart here");
    }
    if m.gravity.x != 0.0 || m.gravity.y != 0.0 || m.gravity.z > 0.0 {
        return refuse("gravity must point along −z");
    }
    let p = &m.particles;
    let n = p.len();
    if state.position.len() != n {
        return refuse("the state's particle count is not the scene's");
    }
    let mat = &m.materials[0];
    let mut walls = String::new();
    for (k, w) in m.walls.iter().enumerate() {
        let axis = ["x", "y", "z"]
            .into_iter()
            .zip([w.normal.x, w.normal.y, w.normal.z])
            .find(|&(_, c)| c.abs() == 1.0)
            .map(|(a, _)| a);
        let Some(axis) = axis.filter(|_| w.motion.is_static()) else {
            return refuse(&format!(
                "wall[{k}] is not a plane normal to an axis, at rest"
            ));
        };
        let at = match axis {
            "x" => w.point.x,
            "y" => w.point.y,
            _ => w.point.z,
        };
        let _ = writeln!(
            walls,
            "fix wall{k} all wall/gran model hertz tangential history primitive type 1 {axis}plane {at:e}"
        );
    }
    // The box: every sphere, with room above the highest.
    let (mut lo, mut hi) = (state.position[0], state.position[0]);
    let mut r_max = 0.0f64;
    for (i, x) in state.position.iter().enumerate() {
        lo = lo.min(*x - glam::DVec3::splat(p.radius[i]));
        hi = hi.max(*x + glam::DVec3::splat(p.radius[i]));
        r_max = r_max.max(p.radius[i]);
    }
    for w in &m.walls {
        lo = lo.min(w.point);
        hi = hi.max(w.point);
    }
    hi.z += 4.0 * r_max;
    let mut data = String::new();
    let _ = writeln!(
        data,
        "LIGGGHTS data file written by varidem: {n} spheres at step {}\n\n{n} atoms\n1 atom types\n\n{:e} {:e} xlo xhi\n{:e} {:e} ylo yhi\n{:e} {:e} zlo zhi\n\nAtoms\n",
        state.step, lo.x, hi.x, lo.y, hi.y, lo.z, hi.z
    );
    for (i, x) in state.position.iter().enumerate() {
        let volume = 4.0 / 3.0 * std::f64::consts::PI * p.radius[i].powi(3);
        let _ = writeln!(
            data,
            "{} 1 {:e} {:e} {:e} {:e} {:e}",
            i + 1,
            2.0 * p.radius[i],
            p.mass[i] / volume,
            x.x,
            x.y,
            x.z
        );
    }
    let _ = writeln!(data, "\nVelocities\n");
    for i in 0..n {
        let (v, w) = (state.velocity[i], state.angular_velocity[i]);
        let _ = writeln!(
            data,
            "{} {:e} {:e} {:e} {:e} {:e} {:e}",
            i + 1,
            v.x,
            v.y,
            v.z,
            w.x,
            w.y,
            w.z
        );
    }
    let skin = m.contact.map_or(0.0, |c| c.skin);
    let input = format!(
        "# The bed varidem times (varidem bench --workload poured-bed), as LIGGGHTS input.
# Run: liggghts -in {LIGGGHTS_INPUT} -var warmup W -var steps S
atom_style granular
atom_modify map array
boundary f f f
newton off
communicate single vel yes
units si
read_data {LIGGGHTS_DATA}
neighbor {skin:e} bin
neigh_modify delay 0
fix m1 all property/global youngsModulus peratomtype {young:e}
fix m2 all property/global poissonsRatio peratomtype {poisson:e}
fix m3 all property/global coefficientRestitution peratomtypepair 1 {e:e}
fix m4 all property/global coefficientFriction peratomtypepair 1 {mu:e}
pair_style gran model hertz tangential history
pair_coeff * *
timestep {dt:e}
fix gravi all gravity {g:e} vector 0.0 0.0 -1.0
{walls}fix integr all nve/sphere
compute rke all erotate/sphere
compute cn all contact/atom
compute contacts all reduce sum c_cn
thermo_style custom step atoms ke c_rke c_contacts
thermo_modify lost ignore norm no
thermo ${{steps}}
run ${{warmup}}
run ${{steps}}
",
        young = mat.young,
        poisson = mat.poisson,
        e = mat.restitution,
        mu = mat.friction_static,
        dt = state.dt,
        g = -m.gravity.z,
    );
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (name, text) in [(LIGGGHTS_DATA, data), (LIGGGHTS_INPUT, input)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    }
    Ok(())
}
