//! Granular (Hertz–Mindlin) part of the CPU kernel `particle_forces`, and the contact
//! history it carries from step to step.
//!
//! History layout, shared with the GPU backend: every particle owns `K` slots
//! (`[contact] max_contacts`), each a partner id and a tangential spring, sorted by
//! partner id, unused slots [`NO_PARTNER`]. Both particles of a touching pair hold the
//! pair's spring in the canonical orientation (the lower id's), computed by both from
//! the same inputs in the same order, so the two copies stay identical without any
//! communication. Walls have one spring per particle and wall.

use glam::DVec3;

use super::ParticleForce;
use crate::integrators::{self, Body, IntegratorKind};
use crate::model::{ContactLaw, Model, Particles, FLAG_REMOVED};
pub use crate::physics::granular::PairTables;
use crate::physics::granular::{
    hertz_contact, pair_overlap, wall_overlap, ContactGeometry, ContactSide,
};

/// What a pair computation reads of one particle, gathered once per evaluation into
/// one record so a partner costs one or two cache lines, not one per field.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct SideScratch {
    /// The contact side: position, end-of-step velocity, radius, increments.
    side: ContactSide,
    /// Mass (kg).
    mass: f64,
    /// Material index.
    material: u32,
    /// Whether the particle was removed (it takes part in no contact).
    removed: bool,
}

/// Partner id of an unused history slot.
pub const NO_PARTNER: u32 = u32::MAX;

/// Contact history: springs of touching pairs and of particle–wall contacts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Slots per particle.
    pub slots: usize,
    /// Wall springs per particle: the number of walls, at least 1 (so rows are never
    /// empty).
    pub wall_stride: usize,
    /// Partner ids, `N × slots`.
    pub partner: Vec<u32>,
    /// Springs, `N × slots`.
    pub spring: Vec<DVec3>,
    /// Wall springs, `N × walls`.
    pub wall_spring: Vec<DVec3>,
}

impl History {
    /// Empty history (no contacts yet) for `n` particles.
    pub fn new(n: usize, slots: usize, walls: usize) -> Self {
        Self {
            slots,
            wall_stride: walls.max(1),
            partner: vec![NO_PARTNER; n * slots],
            spring: vec![DVec3::ZERO; n * slots],
            wall_spring: vec![DVec3::ZERO; n * walls.max(1)],
        }
    }
}

/// One particle's row of the new history, written by its force evaluation.
pub(super) struct HistoryRow<'a> {
    /// Partner ids of the row.
    pub partner: &'a mut [u32],
    /// Springs of the row.
    pub spring: &'a mut [DVec3],
    /// Wall springs of the row.
    pub wall_spring: &'a mut [DVec3],
}

/// Slot flag: the pair touches (contact) or is within the near-field cutoff.
const SLOT_ACTIVE: u32 = 1;

/// One listed pair's contact, computed once by its lower id `a` (kernel
/// `granular_pairs`) and added by both particles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PairSlot {
    /// Force on `a` (N); `b` takes its exact negative.
    force: DVec3,
    /// `n × f_t`: the moments are `ℓ_a n × f_t` on `a` and `ℓ_b n × f_t` on `b` (eq. 39).
    n_cross_friction: DVec3,
    /// The pair's new tangential spring (both rows store it).
    spring: DVec3,
    /// Hertz energy of the pair (J).
    energy: f64,
    /// Lever arm `ℓ_a = r_a − δ/2`.
    lever_a: f64,
    /// Lever arm `ℓ_b = r_b − δ/2`.
    lever_b: f64,
    /// [`SLOT_ACTIVE`] when touching, 0 otherwise (the rest is then stale).
    flags: u32,
}

/// One listed pair's near-field force (eq. 17), computed once by its lower id.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct NearSlot {
    /// Force on `a` (N).
    force: DVec3,
    /// Pair energy (J).
    energy: f64,
    /// [`SLOT_ACTIVE`] within the cutoff.
    flags: u32,
}

/// Granular forces on one particle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct GranularForce {
    /// Force (N).
    pub force: DVec3,
    /// Spatial moment (N m).
    pub moment: DVec3,
    /// Half of each contact pair's Hertz energy (J).
    pub e_contact: f64,
    /// Wall contact energy (J).
    pub e_wall: f64,
    /// Half of each near-field pair's energy (J).
    pub e_near: f64,
    /// Touching contacts beyond the slot capacity (0 when all fit).
    pub overflow: u32,
}

/// What a granular force evaluation reads besides the model.
pub(super) struct GranularInputs<'a> {
    /// The model (state included).
    pub model: &'a Model,
    /// Material tables.
    pub tables: &'a PairTables,
    /// History of the previous step.
    pub old: &'a History,
    /// Integrator and step, for the increments `Δx`, `Δα` of the step just taken.
    pub kind: IntegratorKind,
    /// Time step.
    pub h: f64,
    /// Explicit increments per particle (the implicit integrator's iterates); `None`:
    /// derived from the velocities ([`integrators::increments`]).
    pub increments: Option<&'a [(DVec3, DVec3)]>,
    /// First evaluation of a run: no step has been taken, the increments are zero.
    pub first: bool,
    /// Forces of the previous evaluation, to carry the half-step velocities to the end
    /// of the step for the velocity-dependent forces.
    pub old_forces: &'a [ParticleForce],
}

impl GranularInputs<'_> {
    /// Every particle's contact side and end-of-step angular velocity, computed once per
    /// evaluation (each is used by the particle and by each of its partners).
    pub(super) fn sides(&self, out: &mut Vec<(SideScratch, DVec3)>) {
        let p = &self.model.particles;
        out.resize(p.len(), Default::default());
        super::dispatch(out, |i| {
            let (v, omega) = self.velocity(p, i);
            let s = SideScratch {
                side: self.side(p, i, v),
                mass: p.mass[i],
                material: p.material[i],
                removed: p.flags[i] & FLAG_REMOVED != 0,
            };
            (s, omega)
        });
    }

    fn side(&self, p: &Particles, i: usize, v: DVec3) -> ContactSide {
        let (dx, dalpha) = if self.first {
            (DVec3::ZERO, DVec3::ZERO)
        } else if let Some(inc) = self.increments {
            inc[i]
        } else {
            integrators::increments(self.kind, self.h, p.velocity[i], p.angular_velocity[i])
        };
        ContactSide {
            x: p.position[i],
            v,
            r: p.radius[i],
            dx,
            dalpha,
        }
    }

    /// Velocities for the velocity-dependent forces (damping, drag, Magnus): the
    /// particle's velocities carried to the end of the step with the previous forces,
    /// `v_{k+½} + h F_k/(2m)` for the variational maps (the correct half with the old
    /// forces, [`integrators::correct`]). Using `v_{k+½}` itself lags half a step and
    /// costs first order in the restitution (1.6 % at e = 0.1 and 100 steps per
    /// collision); the extrapolation is second order. The symplectic Euler map holds
    /// `v_{k+1}` already.
    fn velocity(&self, p: &Particles, i: usize) -> (DVec3, DVec3) {
        if self.first || self.increments.is_some() {
            return (p.velocity[i], p.angular_velocity[i]);
        }
        let body = Body {
            mass: p.mass[i],
            inertia: p.inertia[i],
            held: p.flags[i] & (crate::model::FLAG_HELD | FLAG_REMOVED) != 0,
            fixed_rotation: p.flags[i] & (crate::model::FLAG_NO_ROTATION | FLAG_REMOVED) != 0,
        };
        let f = &self.old_forces[i];
        integrators::correct(
            self.kind,
            self.h,
            body,
            p.velocity[i],
            p.angular_velocity[i],
            f.force,
            f.moment,
        )
    }

    /// The old spring of `i`'s contact with `j`, if `i`'s row has one.
    ///
    /// Both rows of a pair hold the same spring, so the lower id's row serves.
    ///
    /// Rows are sorted by partner and end at the first [`NO_PARTNER`] (or at the row's
    /// end): the scan stops at the first id above `j`, so slots after the end marker
    /// are never read (and need not be cleared).
    fn old_spring(&self, i: usize, j: u32) -> DVec3 {
        let k = self.old.slots;
        let row = &self.old.partner[i * k..(i + 1) * k];
        for (s, &p) in row.iter().enumerate() {
            if p == j {
                return self.old.spring[i * k + s];
            }
            if p > j {
                break;
            }
        }
        DVec3::ZERO
    }

    /// Kernel `granular_pairs` for particle `a`: every listed pair `(a, b)` with
    /// `b > a` (`partners`, ascending) is computed once, here, into `out` (one slot per
    /// partner) and `near` (near-field results, empty without a near field). Both
    /// particles then add the slot in [`GranularInputs::particle`].
    pub(super) fn pairs(
        &self,
        a: usize,
        partners: &[u32],
        out: &mut [PairSlot],
        near: &mut [NearSlot],
        sides: &[(SideScratch, DVec3)],
    ) {
        let m = self.model;
        let hertz = matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let me = &sides[a].0;
        for (s, &j) in partners.iter().enumerate() {
            let other = &sides[j as usize].0;
            // A removed particle takes part in no contact.
            out[s].flags = 0;
            if me.removed || other.removed {
                if let Some(n) = near.get_mut(s) {
                    n.flags = 0;
                }
                continue;
            }
            let (sa, sb) = (&me.side, &other.side);
            if let Some(nf) = &m.near_field {
                near[s] = match nf.pair(sa.x, sb.x) {
                    Some((e, f)) => NearSlot {
                        force: f,
                        energy: e,
                        flags: SLOT_ACTIVE,
                    },
                    None => NearSlot::default(),
                };
            }
            if !hertz {
                continue;
            }
            let Some((n, overlap)) = pair_overlap(sa.x, sb.x, sa.r, sb.r) else {
                continue;
            };
            let pm = self.tables.pair(me.material, other.material);
            let g = ContactGeometry {
                r_star: sa.r * sb.r / (sa.r + sb.r),
                m_star: me.mass * other.mass / (me.mass + other.mass),
            };
            let (lever_a, lever_b) = (sa.r - 0.5 * overlap, sb.r - 0.5 * overlap);
            let r = hertz_contact(
                pm,
                g,
                n,
                overlap,
                lever_a,
                lever_b,
                sa,
                sb,
                self.old_spring(a, j),
            );
            out[s] = PairSlot {
                force: r.force,
                n_cross_friction: r.normal.cross(r.friction),
                spring: r.spring,
                energy: r.energy,
                lever_a,
                lever_b,
                flags: SLOT_ACTIVE,
            };
        }
    }

    /// Kernel `particle_forces`, granular part, for particle `i` with neighbours
    /// `neighbors` (ascending) whose pairs sit in the half-list slots `slots` (one per
    /// neighbour, [`crate::neighbor::NeighborList::pair_index`]) of `pairs` and `near`:
    /// the contact and near-field results are summed in neighbour order, `i` taking a
    /// pair's force when it is the lower id and its exact negative otherwise (so
    /// `f_ij = −f_ji` bitwise); then walls and drag. Writes `i`'s new history row.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn particle(
        &self,
        i: usize,
        neighbors: &[u32],
        slots: &[u32],
        pairs: &[PairSlot],
        near: &[NearSlot],
        row: HistoryRow<'_>,
        sides: &[(SideScratch, DVec3)],
    ) -> GranularForce {
        let m = self.model;
        let p = &m.particles;
        let hertz = matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let mut out = GranularForce::default();
        let me = sides[i].0.side;
        let mut used = 0usize;
        let removed = |k: usize| p.flags[k] & FLAG_REMOVED != 0;
        for (&j, &slot) in neighbors.iter().zip(slots) {
            let lower = i < j as usize;
            let sign = if lower { 1.0 } else { -1.0 };
            if let Some(nf) = near.get(slot as usize).filter(|s| s.flags != 0) {
                out.force += sign * nf.force;
                out.e_near += 0.5 * nf.energy;
            }
            let Some(c) = pairs.get(slot as usize).filter(|s| s.flags != 0) else {
                continue;
            };
            out.force += sign * c.force;
            out.moment += if lower { c.lever_a } else { c.lever_b } * c.n_cross_friction;
            out.e_contact += 0.5 * c.energy;
            if used < row.partner.len() {
                row.partner[used] = j;
                row.spring[used] = c.spring;
            } else {
                out.overflow += 1;
            }
            used += 1;
        }
        // End marker; the slots after it keep stale values that are never read.
        if used < row.partner.len() {
            row.partner[used] = NO_PARTNER;
        }
        let nw = self.old.wall_stride;
        for (w, wall) in m.walls.iter().enumerate() {
            let mut new = DVec3::ZERO;
            if hertz && !removed(i) {
                if let Some((n, overlap, lever)) = wall_overlap(wall, me.x, me.r) {
                    let pm = self.tables.wall(w, p.material[i]);
                    let g = ContactGeometry {
                        r_star: me.r,
                        m_star: p.mass[i],
                    };
                    let r = hertz_contact(
                        pm,
                        g,
                        n,
                        overlap,
                        lever,
                        0.0,
                        &me,
                        &ContactSide::default(),
                        self.old.wall_spring[i * nw + w],
                    );
                    out.force += r.force;
                    out.moment += lever * n.cross(r.friction);
                    out.e_wall += r.energy;
                    new = r.spring;
                }
            }
            row.wall_spring[w] = new;
        }
        if let Some(d) = &m.drag {
            out.force += d.force(me.v, sides[i].1);
        }
        out
    }
}
