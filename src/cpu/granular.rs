//! Granular (Hertz–Mindlin) part of the CPU kernel `particle_forces`, and the contact
//! history it carries from step to step.
//!
//! History: each listed pair's tangential spring is computed once, by its lower id, and
//! kept in the pair's half-list slot ([`PairSpring`], apart from the [`PairSlot`] the
//! gather reads) with a flag saying whether the pair touched; the next evaluation reads
//! it from the same slot. When the neighbour list is
//! rebuilt the springs move to the new list's slots through the per-particle layout
//! ([`History`]: every particle `K` slots, `[contact] max_contacts`, of partner ids and
//! springs sorted by partner id, unused slots [`NO_PARTNER`]), which is also the layout
//! of snapshots and of the GPU backend (where each particle keeps its own copy of its
//! pairs' springs). Walls have one spring per particle and wall.

use glam::DVec3;
use rayon::prelude::*;

use super::ParticleForce;
use crate::integrators::{self, Body, IntegratorKind};
use crate::model::{ContactLaw, Model, Particles, FLAG_REMOVED};
use crate::neighbor::NeighborList;
pub use crate::physics::granular::PairTables;
use crate::physics::granular::{
    hertz_contact, hertz_core, wall_overlap, ContactGeometry, ContactSide, HertzInputs,
    PairMaterial,
};

/// What a pair computation reads of one particle, gathered once per evaluation into
/// one record of two cache lines: the distance test of a partner reads only the first
/// (position and radius), a touching partner both.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
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

const _: () = assert!(std::mem::size_of::<SideScratch>() == 128);

/// Every particle's contact side, computed once per evaluation (each is used by the
/// particle and by each of its partners), and its end-of-step angular velocity for the
/// drag's Magnus term (empty without drag: only the particle itself reads it).
#[derive(Clone, Debug, Default)]
pub(super) struct Sides {
    /// Contact sides, one per particle.
    pub side: Vec<SideScratch>,
    /// End-of-step angular velocities, one per particle with drag, else empty.
    pub spin: Vec<DVec3>,
}

impl Sides {
    /// Sizes the arrays for `n` particles (none without granular forces; spins only
    /// with `drag`).
    pub(super) fn resize(&mut self, n: usize, granular: bool, drag: bool) {
        let n = if granular { n } else { 0 };
        self.side.resize(n, SideScratch::default());
        let spins = if drag { n } else { 0 };
        self.spin.resize(spins, DVec3::ZERO);
    }

    /// Stores particle `i`'s side and end-of-step angular velocity.
    pub(super) fn set(&mut self, i: usize, (side, spin): (SideScratch, DVec3)) {
        self.side[i] = side;
        if let Some(w) = self.spin.get_mut(i) {
            *w = spin;
        }
    }
}

/// A particle's contact side and end-of-step angular velocity after an explicit step
/// that left it at `x` with the half-step velocities `v`, `omega`, taken with the
/// forces `f` (what [`GranularInputs::sides`] computes from the stored state,
/// to the bit; `integrate_predict` calls it while it still holds the new state).
#[expect(
    clippy::too_many_arguments,
    reason = "one contact side's kinematics, as the WGSL twin's arguments"
)]
#[inline]
pub(super) fn stepped_side(
    kind: IntegratorKind,
    h: f64,
    body: Body,
    x: DVec3,
    r: f64,
    material: u32,
    flags: u32,
    v: DVec3,
    omega: DVec3,
    f: &ParticleForce,
) -> (SideScratch, DVec3) {
    let (v_end, w_end) = integrators::correct(kind, h, body, v, omega, f.force, f.moment);
    let (dx, dalpha) = integrators::increments(kind, h, v, omega);
    (
        SideScratch {
            side: ContactSide {
                x,
                v: v_end,
                r,
                dx,
                dalpha,
            },
            mass: body.mass,
            material,
            removed: flags & FLAG_REMOVED != 0,
        },
        w_end,
    )
}

/// [`stepped_side`] of particle `i` from its stored state (position, half-step
/// velocities) after an explicit step taken with the forces `f`.
pub(super) fn stored_side(
    kind: IntegratorKind,
    h: f64,
    p: &Particles,
    i: usize,
    f: &ParticleForce,
) -> (SideScratch, DVec3) {
    stepped_side(
        kind,
        h,
        super::body(p, i),
        p.position[i],
        p.radius[i],
        p.material[i],
        p.flags[i],
        p.velocity[i],
        p.angular_velocity[i],
        f,
    )
}

pub use crate::physics::granular::NO_PARTNER;

/// Contact history in the per-particle layout of snapshots and of the GPU backend:
/// springs of touching pairs and of particle–wall contacts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Slots per particle.
    pub slots: usize,
    /// Wall springs per particle: the number of walls, at least 1 (so rows are never
    /// empty).
    pub wall_stride: usize,
    /// Partner ids, `N × slots`, ascending within a row and ended by [`NO_PARTNER`]
    /// unless full.
    pub partner: Vec<u32>,
    /// Springs, `N × slots` (zero after the end of a row).
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

    /// The per-particle rows of the pair springs held in `pairs` (the half-list slots of
    /// `list`, [`PairSpring`]) with the wall springs `walls` (`wall_stride` per
    /// particle): each particle's touching partners in ascending order, at most `slots`.
    pub(super) fn from_pairs(
        list: &NeighborList,
        pairs: &[PairSpring],
        slots: usize,
        walls: &[DVec3],
        wall_stride: usize,
    ) -> Self {
        let n = list.offsets.len().saturating_sub(1);
        let mut h = Self::new(n, slots, 0);
        h.wall_stride = wall_stride;
        h.wall_spring = walls.to_vec();
        for i in 0..n {
            let r = list.offsets[i] as usize..list.offsets[i + 1] as usize;
            let mut used = 0;
            for (&j, &s) in list.neighbors[r.clone()].iter().zip(&list.pair_index[r]) {
                match pairs.get(s as usize) {
                    Some(c) if c.flags != 0 && used < slots => {
                        h.partner[i * slots + used] = j;
                        h.spring[i * slots + used] = c.spring;
                        used += 1;
                    }
                    _ => {}
                }
            }
        }
        h
    }

    /// The pair springs of these rows in the half-list slots of `list` (`out` resized
    /// to its pairs): a slot whose pair is in its lower id's row takes that spring and
    /// is flagged touching; the others are cleared.
    pub(super) fn to_pairs(&self, list: &NeighborList, out: &mut Vec<PairSpring>) {
        out.clear();
        out.resize(list.pairs(), PairSpring::default());
        let k = self.slots;
        let n = list.offsets.len().saturating_sub(1);
        for a in 0..n {
            let (first, partners) = list.half_row(a);
            let row = &self.partner[a * k..(a + 1) * k];
            let mut cur = 0;
            for (s, &j) in (first..).zip(partners) {
                while cur < k && row[cur] < j {
                    cur += 1;
                }
                if cur < k && row[cur] == j {
                    out[s].spring = self.spring[a * k + cur];
                    out[s].flags = SLOT_ACTIVE;
                }
            }
        }
    }
}

/// The pair springs `springs` (in the half-list slots of `old`) moved to the half-list
/// slots of `new`, a rebuild of the list: a pair `(a, b)`, `b > a`, sits in `a`'s half
/// row in both, so each row is a merge by partner id (both ascending). A pair new to
/// the list starts without a spring. In parallel over runs of rows.
pub(super) fn remap_springs(
    old: &NeighborList,
    springs: &[PairSpring],
    new: &NeighborList,
    out: &mut Vec<PairSpring>,
) {
    const ROWS: usize = 1024;
    out.clear();
    out.resize(new.pairs(), PairSpring::default());
    let n = new.half_offsets.len().saturating_sub(1);
    let chunks = crate::neighbor::row_runs(&new.half_offsets, out, ROWS);
    let rows_old = old.half_offsets.len().saturating_sub(1);
    let kernel = |(lo, hi, mine): (usize, usize, &mut [PairSpring])| {
        let base = new.half_offsets[lo] as usize;
        for a in (lo..hi).filter(|&a| a < rows_old) {
            let (first_old, partners_old) = old.half_row(a);
            let (first, partners) = new.half_row(a);
            let mut cur = 0;
            for (s, &j) in (first - base..).zip(partners) {
                while cur < partners_old.len() && partners_old[cur] < j {
                    cur += 1;
                }
                if partners_old.get(cur) == Some(&j) {
                    if let Some(c) = springs.get(first_old + cur).filter(|c| c.flags != 0) {
                        mine[s] = *c;
                    }
                }
            }
        }
    };
    if n < super::PAR_THRESHOLD {
        chunks.into_iter().for_each(kernel);
    } else {
        chunks.into_par_iter().for_each(kernel);
    }
}

/// Slot flag: the pair touches (contact) or is within the near-field cutoff.
const SLOT_ACTIVE: u32 = 1;

/// One listed pair's contact, computed once by its lower id `a` (kernel
/// `granular_pairs`) and added by both particles: what the gather reads, in one 64-byte
/// cache line (the pair's spring is kept apart, in [`PairSpring`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(super) struct PairSlot {
    /// Force on `a` (N); `b` takes its exact negative.
    force: DVec3,
    /// `n × f_t`: the moments are `ℓ_a n × f_t` on `a` and `ℓ_b n × f_t` on `b` (eq. 39),
    /// with the lever arms `ℓ = r − δ/2` each particle forms from its own radius.
    n_cross_friction: DVec3,
    /// Hertz energy of the pair (J).
    energy: f64,
    /// Overlap `δ` of a touching pair; NaN when the pair does not touch (the rest is
    /// then stale). A touching pair's overlap is finite.
    overlap: f64,
}

impl Default for PairSlot {
    /// A pair that does not touch.
    fn default() -> Self {
        Self {
            force: DVec3::ZERO,
            n_cross_friction: DVec3::ZERO,
            energy: 0.0,
            overlap: f64::NAN,
        }
    }
}

/// One listed pair's contact history: the tangential spring its last evaluation left
/// and whether the pair touched then (read by the next evaluation, and turned into the
/// per-particle rows of [`History`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PairSpring {
    /// The spring (canonical orientation: the lower id's).
    spring: DVec3,
    /// [`SLOT_ACTIVE`] when the pair touched, 0 otherwise (the spring is then stale).
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
    /// The previous evaluation's pair springs and touching flags (the pair history), in
    /// the half-list slots of the current list; empty before the first evaluation.
    pub old_springs: &'a [PairSpring],
    /// The previous evaluation's wall springs, `N × wall_stride`.
    pub old_walls: &'a [DVec3],
    /// Wall springs per particle.
    pub wall_stride: usize,
    /// History slots per particle: more touching contacts is an overflow.
    pub slots: usize,
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
    /// Every particle's contact side and end-of-step angular velocity ([`Sides`]).
    pub(super) fn sides(&self, out: &mut Sides) {
        let p = &self.model.particles;
        out.resize(p.len(), true, self.model.drag.is_some());
        let side = |i: usize| {
            if !self.first && self.increments.is_none() {
                return stored_side(self.kind, self.h, p, i, &self.old_forces[i]);
            }
            let (v, omega) = self.velocity(p, i);
            let s = SideScratch {
                side: self.side(p, i, v),
                mass: p.mass[i],
                material: p.material[i],
                removed: p.flags[i] & FLAG_REMOVED != 0,
            };
            (s, omega)
        };
        if out.spin.is_empty() {
            super::dispatch_into(&mut out.side, |i, s| *s = side(i).0);
        } else {
            // With drag: both from one computation of each side.
            out.side
                .par_iter_mut()
                .zip(out.spin.par_iter_mut())
                .with_min_len(super::MIN_CHUNK)
                .enumerate()
                .for_each(|(i, (s, w))| (*s, *w) = side(i));
        }
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

    /// Kernel `granular_pairs` for particles `lo..hi`: every listed pair `(a, b)` with
    /// `b > a` is computed once, by `a`, into `out` (the half-list slots of the rows
    /// `lo..hi`, in row order) and `near` (near-field results, empty without a near
    /// field). Both particles then add the slot in [`GranularInputs::particle`].
    ///
    /// Touching pairs are queued and their contact law runs [`LANES`] at a time
    /// ([`PairBatch`]), which the compiler turns into SIMD; the results are the same
    /// bits as one [`hertz_contact`] per pair.
    pub(super) fn pairs(
        &self,
        rows: std::ops::Range<usize>,
        list: &NeighborList,
        (out, springs): (&mut [PairSlot], &mut [PairSpring]),
        near: &mut [NearSlot],
        sides: &[SideScratch],
    ) {
        let m = self.model;
        let hertz = matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        // Global index of the chunk's first slot.
        let base = list.half_offsets[rows.start] as usize;
        let mut batch = PairBatch::default();
        // One material: every pair's record is the same, set in every lane once.
        if self.tables.materials == 1 {
            batch.set_material(self.tables.pair(0, 0));
        }
        let mut slot = 0usize;
        for a in rows {
            let particle = &sides[a];
            // The half row: the last entries of `a`'s row (partners above `a`).
            let (_, partners) = list.half_row(a);
            let first = slot;
            slot += partners.len();
            // A removed particle takes part in no contact.
            if particle.removed {
                out[first..slot].fill(PairSlot::default());
                springs[first..slot].fill(PairSpring::default());
                if let Some(near) = near.get_mut(first..slot) {
                    near.iter_mut().for_each(|n| n.flags = 0);
                }
                continue;
            }
            if let Some(nf) = &m.near_field {
                for (s, &j) in (first..slot).zip(partners) {
                    let partner = &sides[j as usize];
                    near[s] = match nf.pair(particle.side.x, partner.side.x) {
                        Some((e, f)) if !partner.removed => NearSlot {
                            force: f,
                            energy: e,
                            flags: SLOT_ACTIVE,
                        },
                        _ => NearSlot::default(),
                    };
                }
            }
            // The pair's spring from the previous evaluation, in the same slot (zero
            // when the pair did not touch).
            let old = self
                .old_springs
                .get(base + first..base + slot)
                .unwrap_or_default();
            for (s, &j) in (first..slot).zip(partners) {
                let partner = &sides[j as usize];
                out[s].overlap = f64::NAN;
                springs[s].flags = 0;
                if !hertz {
                    continue;
                }
                // pair_overlap's test; the rest of its geometry runs in the batch.
                let (sa, sb) = (&particle.side, &partner.side);
                let d = sb.x - sa.x;
                let dist2 = d.length_squared();
                let reach = sa.r + sb.r;
                if dist2 >= reach * reach || dist2.is_nan() || dist2 == 0.0 || partner.removed {
                    continue;
                }
                let spring = match old.get(s - first) {
                    Some(o) if o.flags != 0 => o.spring,
                    _ => DVec3::ZERO,
                };
                let pm = self.tables.pair(particle.material, partner.material);
                batch.push(s, d, dist2, particle, partner, pm, spring);
                if batch.len == LANES {
                    batch.run(out, springs);
                }
            }
        }
        batch.run(out, springs);
    }

    /// Kernel `particle_forces`, granular part, for particle `i` with neighbours
    /// `neighbors` (ascending) whose pairs sit in the half-list slots `slots` (one per
    /// neighbour, [`crate::neighbor::NeighborList::pair_index`]) of `pairs` and `near`:
    /// the contact and near-field results are summed in neighbour order, `i` taking a
    /// pair's force when it is the lower id and its exact negative otherwise (so
    /// `f_ij = −f_ji` bitwise); then walls and drag. Writes `i`'s new wall springs;
    /// touching pairs beyond [`GranularInputs::slots`] count as overflow.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel twin's outputs are separate slices, as the shader's bindings"
    )]
    pub(super) fn particle(
        &self,
        i: usize,
        neighbors: &[u32],
        slots: &[u32],
        pairs: &[PairSlot],
        near: &[NearSlot],
        wall_spring: &mut [DVec3],
        sides: &Sides,
    ) -> GranularForce {
        let m = self.model;
        let p = &m.particles;
        let hertz = matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let mut out = GranularForce::default();
        let side_i = &sides.side[i].side;
        let mut used = 0usize;
        let removed = |k: usize| p.flags[k] & FLAG_REMOVED != 0;
        // The row ascends: partners below `i` (whose slots are theirs: `i` takes the
        // negative of the force and lever arm `ℓ_b`), then those above (`i`'s own
        // slots: the force and `ℓ_a`). `x + (−1·f)` is `x − f` to the bit.
        let below = neighbors.partition_point(|&j| (j as usize) < i);
        for (k, &slot) in slots.iter().enumerate() {
            let lower = k >= below;
            if let Some(nf) = near.get(slot as usize).filter(|s| s.flags != 0) {
                out.force = if lower {
                    out.force + nf.force
                } else {
                    out.force - nf.force
                };
                out.e_near += 0.5 * nf.energy;
            }
            let c = &pairs[slot as usize];
            if c.overlap.is_nan() {
                continue;
            }
            // `ℓ_a` or `ℓ_b` as the pair kernel formed it, from the same radius.
            let lever = side_i.r - 0.5 * c.overlap;
            if lower {
                out.force += c.force;
            } else {
                out.force -= c.force;
            }
            out.moment += lever * c.n_cross_friction;
            out.e_contact += 0.5 * c.energy;
            if used >= self.slots {
                out.overflow += 1;
            }
            used += 1;
        }
        let nw = self.wall_stride;
        for (w, wall) in m.walls.iter().enumerate() {
            let mut new = DVec3::ZERO;
            if hertz && !removed(i) {
                if let Some((n, overlap, lever)) = wall_overlap(wall, side_i.x, side_i.r) {
                    let pm = self.tables.wall(w, p.material[i]);
                    let g = ContactGeometry {
                        r_star: side_i.r,
                        m_star: p.mass[i],
                    };
                    let r = hertz_contact(
                        pm,
                        g,
                        n,
                        overlap,
                        lever,
                        0.0,
                        side_i,
                        &ContactSide::default(),
                        self.old_walls[i * nw + w],
                    );
                    out.force += r.force;
                    out.moment += lever * n.cross(r.friction);
                    out.e_wall += r.energy;
                    new = r.spring;
                }
            }
            wall_spring[w] = new;
        }
        if let Some(d) = &m.drag {
            out.force += d.force(side_i.v, sides.spin[i]);
        }
        out
    }
}

/// Contacts per batch of the pair kernel: 8 `f64` lanes fill two AVX2 registers (or
/// one AVX-512 register) per operation.
pub(super) const LANES: usize = 8;

/// Three components of `LANES` vectors.
type Lanes3 = [[f64; LANES]; 3];

/// Touching pairs queued for [`GranularInputs::pairs`], stored component by component
/// (structure of arrays) so that the lane loop of [`PairBatch::compute`] vectorizes.
#[derive(Clone, Debug, Default)]
pub(super) struct PairBatch {
    /// Queued pairs.
    len: usize,
    /// Slot of each pair in the caller's `out`.
    slot: [usize; LANES],
    /// `x_b − x_a`.
    d: Lanes3,
    /// `|x_b − x_a|²`.
    dist2: [f64; LANES],
    /// Radii of `a` and `b`.
    r: [[f64; LANES]; 2],
    /// Masses of `a` and `b`.
    mass: [[f64; LANES]; 2],
    /// Pair material: `E*`, `G*`, `ξ`, `μ_s`, `μ_d`.
    pm: [[f64; LANES]; 5],
    /// `v_a − v_b`.
    rel_v: Lanes3,
    /// `Δx_a − Δx_b`.
    rel_dx: Lanes3,
    /// `Δα_a`.
    dalpha_a: Lanes3,
    /// `Δα_b`.
    dalpha_b: Lanes3,
    /// Old spring.
    spring: Lanes3,
    /// Results: force on `a`, `n × f_t`, new spring.
    out3: [Lanes3; 3],
    /// Results: energy and overlap.
    out1: [[f64; LANES]; 2],
    /// Every lane has the same pair material, set once ([`PairBatch::set_material`]):
    /// `push` does not copy it.
    uniform: bool,
}

impl PairBatch {
    /// Sets pair material `pm` in every lane, for good: the batch then serves only
    /// pairs of that material.
    fn set_material(&mut self, pm: &PairMaterial) {
        for (f, v) in self.pm.iter_mut().zip(Self::material_fields(pm)) {
            *f = [v; LANES];
        }
        self.uniform = true;
    }

    /// The fields of `pm` the lanes hold, in the order of [`PairBatch::pm`].
    fn material_fields(pm: &PairMaterial) -> [f64; 5] {
        [pm.e_star, pm.g_star, pm.xi, pm.mu_s, pm.mu_d]
    }

    /// Queues the touching pair `(a, b)` for slot `slot`.
    #[expect(
        clippy::too_many_arguments,
        reason = "a queued pair's fields, pushed into the batch's columns"
    )]
    #[inline]
    fn push(
        &mut self,
        slot: usize,
        d: DVec3,
        dist2: f64,
        a: &SideScratch,
        b: &SideScratch,
        pm: &PairMaterial,
        spring: DVec3,
    ) {
        let l = self.len;
        self.slot[l] = slot;
        let set = |v: &mut Lanes3, x: DVec3| {
            v[0][l] = x.x;
            v[1][l] = x.y;
            v[2][l] = x.z;
        };
        set(&mut self.d, d);
        self.dist2[l] = dist2;
        self.r[0][l] = a.side.r;
        self.r[1][l] = b.side.r;
        self.mass[0][l] = a.mass;
        self.mass[1][l] = b.mass;
        if self.uniform {
            // Only pairs of the material set in every lane may be queued.
            debug_assert!(self
                .pm
                .iter()
                .zip(Self::material_fields(pm))
                .all(|(f, v)| f[l] == v));
        } else {
            for (f, v) in self.pm.iter_mut().zip(Self::material_fields(pm)) {
                f[l] = v;
            }
        }
        // The differences hertz_contact forms first, formed the same way.
        set(&mut self.rel_v, a.side.v - b.side.v);
        set(&mut self.rel_dx, a.side.dx - b.side.dx);
        set(&mut self.dalpha_a, a.side.dalpha);
        set(&mut self.dalpha_b, b.side.dalpha);
        set(&mut self.spring, spring);
        self.len += 1;
    }

    /// Computes the queued pairs, stores them in their slots of `out` and empties the
    /// queue.
    fn run(&mut self, out: &mut [PairSlot], springs: &mut [PairSpring]) {
        if self.len == 0 {
            return;
        }
        self.compute();
        let v3 = |v: &Lanes3, l: usize| DVec3::new(v[0][l], v[1][l], v[2][l]);
        for l in 0..self.len {
            out[self.slot[l]] = PairSlot {
                force: v3(&self.out3[0], l),
                n_cross_friction: v3(&self.out3[1], l),
                energy: self.out1[0][l],
                overlap: self.out1[1][l],
            };
            springs[self.slot[l]] = PairSpring {
                spring: v3(&self.out3[2], l),
                flags: SLOT_ACTIVE,
            };
        }
        self.len = 0;
    }

    /// All lanes (those past `len` hold stale or zero inputs; their results are never
    /// read), with the widest SIMD the CPU has.
    fn compute(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { self.compute_avx2() };
            return;
        }
        self.compute_lanes();
    }

    /// [`PairBatch::compute_lanes`] compiled for AVX2 (no FMA: the operations and their
    /// rounding are those of the scalar code).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn compute_avx2(&mut self) {
        self.compute_lanes();
    }

    /// The lane loop: `pair_overlap`'s geometry, the pair's `r*`, `m*` and lever arms,
    /// then [`hertz_core`], as [`GranularInputs::pairs`] did pair by pair.
    #[inline(always)]
    fn compute_lanes(&mut self) {
        for l in 0..LANES {
            let v3 = |v: &Lanes3| DVec3::new(v[0][l], v[1][l], v[2][l]);
            let (ra, rb) = (self.r[0][l], self.r[1][l]);
            let (ma, mb) = (self.mass[0][l], self.mass[1][l]);
            let dist = self.dist2[l].sqrt();
            let n = v3(&self.d) / dist;
            let overlap = (ra + rb) - dist;
            let (lever_a, lever_b) = (ra - 0.5 * overlap, rb - 0.5 * overlap);
            let r = hertz_core(&HertzInputs {
                pm: PairMaterial {
                    e_star: self.pm[0][l],
                    g_star: self.pm[1][l],
                    xi: self.pm[2][l],
                    restitution: 0.0,
                    mu_s: self.pm[3][l],
                    mu_d: self.pm[4][l],
                },
                g: ContactGeometry {
                    r_star: ra * rb / (ra + rb),
                    m_star: ma * mb / (ma + mb),
                },
                n,
                overlap,
                lever_a,
                lever_b,
                relative_v: v3(&self.rel_v),
                relative_dx: v3(&self.rel_dx),
                dalpha_a: v3(&self.dalpha_a),
                dalpha_b: v3(&self.dalpha_b),
                spring: v3(&self.spring),
            });
            let ncf = r.normal.cross(r.friction);
            for (o, v) in self.out3.iter_mut().zip([r.force, ncf, r.spring]) {
                o[0][l] = v.x;
                o[1][l] = v.y;
                o[2][l] = v.z;
            }
            self.out1[0][l] = r.energy;
            self.out1[1][l] = overlap;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::granular::pair_overlap;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A batch whose pair material is set once in every lane (one-material scenes,
    /// [`PairBatch::set_material`]) gives the same bits as one that copies the same
    /// record with every pair, on random sticking and slipping pairs. A lane left
    /// without the material (zero stiffness) would differ.
    #[test]
    fn uniform_material_batch_matches_per_pair_copies() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut v = |s: f64| {
            DVec3::new(
                rng.random_range(-s..s),
                rng.random_range(-s..s),
                rng.random_range(-s..s),
            )
        };
        let pm = PairMaterial {
            e_star: 3e8,
            g_star: 1e8,
            xi: 0.3,
            restitution: 0.5,
            mu_s: 0.5,
            mu_d: 0.4,
        };
        let mut uniform = PairBatch::default();
        uniform.set_material(&pm);
        let mut copied = PairBatch::default();
        let n = 61;
        let mut out = [vec![PairSlot::default(); n], vec![PairSlot::default(); n]];
        let mut springs = [
            vec![PairSpring::default(); n],
            vec![PairSpring::default(); n],
        ];
        for case in 0..n {
            let side = |x: DVec3, v: &mut dyn FnMut(f64) -> DVec3| SideScratch {
                side: ContactSide {
                    x,
                    v: v(1.0),
                    r: 1e-3,
                    dx: v(1e-5),
                    dalpha: v(1e-2),
                },
                mass: 1e-5,
                material: 0,
                removed: false,
            };
            let a = side(v(1.0), &mut v);
            let dir = v(1.0).normalize();
            let b = side(a.side.x + dir * 2e-3 * 0.99, &mut v);
            let d = b.side.x - a.side.x;
            let spring = v(1e-5);
            uniform.push(case, d, d.length_squared(), &a, &b, &pm, spring);
            copied.push(case, d, d.length_squared(), &a, &b, &pm, spring);
            if uniform.len == LANES || case == n - 1 {
                uniform.run(&mut out[0], &mut springs[0]);
                copied.run(&mut out[1], &mut springs[1]);
            }
        }
        let bits = |o: &[PairSlot], h: &[PairSpring]| -> Vec<u64> {
            o.iter()
                .zip(h)
                .flat_map(|(s, h)| {
                    let mut v: Vec<u64> = [s.force, s.n_cross_friction, h.spring]
                        .iter()
                        .flat_map(|x| x.to_array().map(f64::to_bits))
                        .collect();
                    v.extend([s.energy, s.overlap].map(f64::to_bits));
                    v
                })
                .collect()
        };
        assert_eq!(bits(&out[0], &springs[0]), bits(&out[1], &springs[1]));
        assert!(out[0].iter().all(|s| s.force.length() > 0.0));
    }

    /// The batched pair kernel gives the same bits as one branching [`hertz_contact`]
    /// per pair (what `granular_pairs` computed before the batch), on random pairs that
    /// stick and slip, approach and separate (the normal force clamped at 0), with zero
    /// springs, springs along the normal (carried to zero), zero shear stiffness, and a
    /// partly filled batch; and the portable lane loop (CPUs without AVX2) gives the
    /// same bits as the AVX2 one. Bitwise because all compute the same operations in
    /// the same order; a difference would show the SIMD code rounding differently (FMA
    /// contraction, reassociation).
    #[test]
    fn batch_matches_scalar_contact_law_bitwise() {
        fn v(rng: &mut ChaCha8Rng, s: f64) -> DVec3 {
            DVec3::new(
                rng.random_range(-s..s),
                rng.random_range(-s..s),
                rng.random_range(-s..s),
            )
        }
        fn side(rng: &mut ChaCha8Rng, x: DVec3) -> SideScratch {
            SideScratch {
                side: ContactSide {
                    x,
                    v: v(rng, 2.0),
                    r: rng.random_range(0.5e-3..1.5e-3),
                    dx: v(rng, 1e-5),
                    dalpha: v(rng, 1e-2),
                },
                mass: rng.random_range(1e-6..1e-5),
                material: 0,
                removed: false,
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut batch = PairBatch::default();
        let mut expected = Vec::new();
        let mut out = vec![PairSlot::default(); 1000];
        let mut springs = vec![PairSpring::default(); 1000];
        let mut kinds = [0usize; 4];
        for case in 0..1000 {
            let x = v(&mut rng, 1.0);
            let a = side(&mut rng, x);
            let dir = v(&mut rng, 1.0).normalize();
            let mut b = side(&mut rng, DVec3::ZERO);
            let reach = a.side.r + b.side.r;
            b.side.x = a.side.x + dir * reach * rng.random_range(0.97..0.9999);
            let n = (b.side.x - a.side.x).normalize();
            let spring = match case % 4 {
                0 => DVec3::ZERO,
                1 => rng.random_range(-1e-5..1e-5) * n,
                _ => {
                    let s = rng.random_range(1e-9..1e-4);
                    v(&mut rng, s)
                }
            };
            let pm = PairMaterial {
                e_star: rng.random_range(1e6..1e9),
                g_star: if case % 7 == 0 {
                    0.0
                } else {
                    rng.random_range(1e5..1e8)
                },
                xi: rng.random_range(0.0..1.0),
                restitution: 0.5,
                mu_s: rng.random_range(0.0..1.0),
                mu_d: rng.random_range(0.0..1.0),
            };
            let d = b.side.x - a.side.x;
            let dist2 = d.length_squared();
            let (normal, overlap) = pair_overlap(a.side.x, b.side.x, a.side.r, b.side.r).unwrap();
            let (la, lb) = (a.side.r - 0.5 * overlap, b.side.r - 0.5 * overlap);
            let g = ContactGeometry {
                r_star: a.side.r * b.side.r / (a.side.r + b.side.r),
                m_star: a.mass * b.mass / (a.mass + b.mass),
            };
            let r = hertz_contact(&pm, g, normal, overlap, la, lb, &a.side, &b.side, spring);
            kinds[usize::from(r.slipping) + 2 * usize::from(r.force.dot(normal) == 0.0)] += 1;
            // The gather forms the lever arms `r − δ/2` from the stored overlap: the
            // bits of `la` and `lb` above.
            expected.push((
                PairSlot {
                    force: r.force,
                    n_cross_friction: r.normal.cross(r.friction),
                    energy: r.energy,
                    overlap,
                },
                PairSpring {
                    spring: r.spring,
                    flags: SLOT_ACTIVE,
                },
            ));
            batch.push(case, d, dist2, &a, &b, &pm, spring);
            // A partial batch at the end (1000 = 125 × 8: force one earlier).
            if batch.len == LANES || case == 995 {
                // The portable lane loop (what a CPU without AVX2 runs) gives the same
                // bits as the dispatched one (AVX2 where the CPU has it).
                let mut portable = batch.clone();
                portable.compute_lanes();
                batch.compute();
                let lanes = |b: &PairBatch| -> Vec<u64> {
                    let flat = b.out3.iter().flatten().chain(&b.out1);
                    flat.flat_map(|l| l.map(f64::to_bits)).collect()
                };
                assert_eq!(lanes(&portable), lanes(&batch), "case {case}");
                batch.run(&mut out, &mut springs);
            }
        }
        batch.run(&mut out, &mut springs);
        let bits = |(s, h): (&PairSlot, &PairSpring)| {
            let mut v = Vec::new();
            for x in [s.force, s.n_cross_friction, h.spring] {
                v.extend(x.to_array().map(f64::to_bits));
            }
            v.extend([s.energy, s.overlap].map(f64::to_bits));
            v.push(u64::from(h.flags));
            v
        };
        for (i, (got, want)) in out.iter().zip(&springs).zip(&expected).enumerate() {
            assert_eq!(
                bits(got),
                bits((&want.0, &want.1)),
                "pair {i}: {got:?} != {want:?}"
            );
        }
        // Every branch was taken: sticking, slipping, and separating (f_n clamped).
        assert!(
            kinds[0] > 50 && kinds[1] > 50 && kinds[2] + kinds[3] > 50,
            "{kinds:?}"
        );
    }
}
