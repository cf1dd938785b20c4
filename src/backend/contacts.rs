//! The granular contacts of a state, pair by pair: which particles touch and the
//! normal and tangential forces between them, for inspection (the Python binding's
//! `Simulation.contacts()`). The backends sum these forces per particle and keep only
//! the sums and the tangential springs ([`ContactState`]); this module evaluates the
//! Hertz–Mindlin law ([`hertz_core`]) once per touching pair of a snapshot.

use glam::DVec3;

use super::{ContactState, StateSnapshot};
use crate::model::{Model, FLAG_REMOVED};
use crate::physics::granular::{
    hertz_core, pair_overlap, ContactGeometry, HertzInputs, PairTables, NO_PARTNER,
};

/// The touching pairs of a state and their forces, each pair once (`i < j`), in
/// ascending `(i, j)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactForces {
    /// Lower particle id of each pair.
    pub i: Vec<u32>,
    /// Higher particle id.
    pub j: Vec<u32>,
    /// Unit normal from `i` to `j`.
    pub normal: Vec<DVec3>,
    /// Overlap `δ > 0` (m).
    pub overlap: Vec<f64>,
    /// Normal force on `i` (N); `j` receives its opposite.
    pub normal_force: Vec<DVec3>,
    /// Tangential (friction) force on `i` (N); `j` receives its opposite.
    pub tangential_force: Vec<DVec3>,
}

/// The particle-particle contacts of `snapshot` under `model`'s Hertz–Mindlin law;
/// `None` when the snapshot has no granular contact state (a scene without the Hertz
/// law).
///
/// Each pair that overlaps in the snapshot's state and has a history slot is evaluated
/// at that state: the normal force with the current approach rate `(v_i − v_j)·n`
/// (elastic and damping parts, clamped at zero), the tangential force from the stored
/// spring (`−k_t s`, limited by Coulomb friction) with no further slip. These are the
/// forces of the state as it stands; the per-particle sums the backends integrate were
/// evaluated during the step that led to it (with its half-step velocities and
/// increments), so they may differ from the sums of these by the damping and slip of
/// that step.
pub fn contact_forces(model: &Model, snapshot: &StateSnapshot) -> Option<ContactForces> {
    let state: &ContactState = snapshot.contacts.as_ref()?;
    let tables = PairTables::new(model);
    let p = &model.particles;
    let slots = state.slots as usize;
    let n = snapshot.position.len().min(p.len());
    let mut out = ContactForces::default();
    for (row, &a) in state.ids.iter().enumerate() {
        let a = a as usize;
        if a >= n || p.flags[a] & FLAG_REMOVED != 0 || crate::model::is_dormant(p.flags[a]) {
            continue;
        }
        for k in row * slots..(row + 1) * slots {
            let Some(&b) = state.partner.get(k) else {
                break;
            };
            if b == NO_PARTNER {
                continue;
            }
            let bu = b as usize;
            if bu <= a || bu >= n || p.flags[bu] & FLAG_REMOVED != 0 {
                continue;
            }
            let (ra, rb) = (p.radius[a], p.radius[bu]);
            let (xa, xb) = (snapshot.position[a], snapshot.position[bu]);
            let Some((normal, overlap)) = pair_overlap(xa, xb, ra, rb) else {
                continue;
            };
            let (ma, mb) = (p.mass[a], p.mass[bu]);
            let r = hertz_core(&HertzInputs {
                pm: *tables.pair(p.material[a], p.material[bu]),
                g: ContactGeometry {
                    r_star: ra * rb / (ra + rb),
                    m_star: ma * mb / (ma + mb),
                },
                n: normal,
                overlap,
                lever_a: ra - 0.5 * overlap,
                lever_b: rb - 0.5 * overlap,
                relative_v: snapshot.velocity[a] - snapshot.velocity[bu],
                relative_dx: DVec3::ZERO,
                dalpha_a: DVec3::ZERO,
                dalpha_b: DVec3::ZERO,
                spring: state.spring.get(k).copied().unwrap_or(DVec3::ZERO),
            });
            out.i.push(a as u32);
            out.j.push(b);
            out.normal.push(normal);
            out.overlap.push(overlap);
            out.normal_force.push(r.force - r.friction);
            out.tangential_force.push(r.friction);
        }
    }
    Some(out)
}
