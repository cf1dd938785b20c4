//! The contact history the granular kernels carry from step to step.
//!
//! Each listed pair's tangential spring is computed once, by its lower id, and kept in
//! the pair's half-list slot ([`PairSpring`], apart from the
//! [`PairSlot`](super::kernels::granular::PairSlot) the gather reads) with a flag saying
//! whether the pair touched; the next evaluation reads it from the same slot. When the
//! neighbour list is rebuilt the springs move to the new list's slots
//! ([`remap_springs`]); snapshots and the GPU backend use the per-particle layout
//! ([`History`]: `K` slots, `[contact] max_contacts`, of partner ids and springs sorted
//! by partner id, unused slots [`NO_PARTNER`], for each particle of the GPU's storage
//! and, in snapshots, for each particle in the system; each GPU particle keeps its own
//! copy of its pairs' springs). Walls have one spring per particle and wall.

use glam::DVec3;
use rayon::prelude::*;

use super::parallel::PAR_THRESHOLD;
use crate::neighbor::NeighborList;

pub use crate::physics::granular::NO_PARTNER;

/// Contact history in the per-particle layout of snapshots and of the GPU backend:
/// springs of touching pairs and of particle–wall contacts, a row for each particle in
/// the system (those out of it touch nothing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Slots per particle.
    pub slots: usize,
    /// Wall springs per particle: the number of walls, at least 1 (so rows are never
    /// empty).
    pub wall_stride: usize,
    /// The particle id of each row, ascending.
    pub ids: Vec<u32>,
    /// Partner ids, `rows × slots`, ascending within a row and ended by
    /// [`NO_PARTNER`] unless full.
    pub partner: Vec<u32>,
    /// Springs, `rows × slots` (zero after the end of a row).
    pub spring: Vec<DVec3>,
    /// Wall springs, `rows × walls`.
    pub wall_spring: Vec<DVec3>,
    /// Rolling springs of the pairs (EPSD, [`crate::physics::rolling`]), `rows × slots`
    /// beside `spring`; empty without rolling resistance ([`crate::model::Model::rolling`]).
    pub roll: Vec<DVec3>,
    /// Rolling springs against the walls, `rows × walls`; empty without rolling
    /// resistance.
    pub wall_roll: Vec<DVec3>,
    /// Whether each JKR contact with a wall held, `rows × walls` (1 held); empty
    /// without JKR cohesion ([`crate::model::Model::jkr`]).
    pub wall_held: Vec<u8>,
}

impl History {
    /// The rows of the particles `rows` (id and slot, ascending by id) of the pair
    /// springs held in `pairs` (the half-list slots of `list`, [`PairSpring`]) with the
    /// wall springs `walls` (`wall_stride` per particle, by slot): each particle's
    /// touching partners in ascending id, at most `slots`. Partners are ids (`layout`
    /// maps the list's slots to them).
    ///
    /// With rolling resistance (`rolls` and `wall_rolls` not empty) the rolling springs
    /// come along in [`History::roll`] and [`History::wall_roll`].
    pub(in crate::cpu) fn from_pairs(
        list: &NeighborList,
        (pairs, rolls): (&[PairSpring], &[RollSlot]),
        slots: usize,
        (walls, wall_rolls, wall_held, wall_stride): (&[DVec3], &[DVec3], &[u8], usize),
        layout: &crate::model::Layout,
        rows: &[(u32, usize)],
    ) -> Self {
        let n = rows.len();
        let rolling = !rolls.is_empty() || !wall_rolls.is_empty();
        let mut h = Self {
            slots,
            wall_stride,
            ids: rows.iter().map(|r| r.0).collect(),
            partner: vec![NO_PARTNER; n * slots],
            spring: vec![DVec3::ZERO; n * slots],
            wall_spring: Vec::with_capacity(n * wall_stride),
            roll: if rolling {
                vec![DVec3::ZERO; n * slots]
            } else {
                Vec::new()
            },
            wall_roll: Vec::new(),
            wall_held: Vec::new(),
        };
        for (row, &(_, s)) in rows.iter().enumerate() {
            let range = s * wall_stride..(s + 1) * wall_stride;
            if !wall_held.is_empty() {
                let apart = vec![0u8; wall_stride];
                h.wall_held
                    .extend_from_slice(wall_held.get(range.clone()).unwrap_or(&apart));
            }
            let zeros = [DVec3::ZERO].repeat(wall_stride);
            h.wall_spring
                .extend_from_slice(walls.get(range.clone()).unwrap_or(&zeros));
            if rolling {
                h.wall_roll
                    .extend_from_slice(wall_rolls.get(range).unwrap_or(&zeros));
            }
            let Some(r) = list.offsets.get(s..s + 2) else {
                continue;
            };
            let r = r[0] as usize..r[1] as usize;
            let mut used = 0;
            for (&j, &p) in list.neighbors[r.clone()].iter().zip(&list.pair_index[r]) {
                match pairs.get(p as usize) {
                    Some(c) if c.flags != 0 && used < slots => {
                        h.partner[row * slots + used] = layout.id(j as usize) as u32;
                        h.spring[row * slots + used] = c.spring;
                        if let Some(r) = rolls.get(p as usize).filter(|_| rolling) {
                            h.roll[row * slots + used] = r.spring;
                        }
                        used += 1;
                    }
                    _ => {}
                }
            }
        }
        h
    }

    /// The pair springs of these rows in the half-list slots of `list` (`out` resized
    /// to its pairs; `layout` maps its slots to ids): a slot whose pair is in its lower
    /// id's row takes that spring and is flagged touching; the others are cleared. The
    /// rolling springs likewise into `rolls` (left empty when the rows have none).
    pub(in crate::cpu) fn to_pairs(
        &self,
        list: &NeighborList,
        layout: &crate::model::Layout,
        (out, rolls): (&mut Vec<PairSpring>, &mut Vec<RollSlot>),
    ) {
        out.clear();
        out.resize(list.pairs(), PairSpring::default());
        rolls.clear();
        if !self.roll.is_empty() {
            rolls.resize(list.pairs(), RollSlot::default());
        }
        let k = self.slots;
        let n = list.offsets.len().saturating_sub(1);
        for a in 0..n {
            let Ok(i) = self.ids.binary_search(&(layout.id(a) as u32)) else {
                continue;
            };
            let (first, partners) = list.half_row(a);
            let row = &self.partner[i * k..(i + 1) * k];
            let mut cur = 0;
            for (s, &j) in (first..).zip(partners) {
                let j = layout.id(j as usize) as u32;
                while cur < k && row[cur] < j {
                    cur += 1;
                }
                if cur < k && row[cur] == j {
                    out[s].spring = self.spring[i * k + cur];
                    out[s].flags = SLOT_ACTIVE;
                    if let Some(r) = rolls.get_mut(s) {
                        r.spring = self.roll[i * k + cur];
                    }
                }
            }
        }
    }
}

/// The pair springs `springs` (in the half-list slots of `old`) moved to the half-list
/// slots of `new`, a rebuild of the list: a pair `(a, b)`, `b` of higher id, sits in
/// `a`'s half row in both, so each row is a merge by partner id (both ascending). A
/// pair new to the list starts without a spring. `moved[s]` is the slot in `old` of
/// the particle in slot `s` of `new` (empty: the same slot; a rebuild that sorted
/// storage, [`crate::model::layout`]). In parallel over runs of rows.
///
/// Generic over the slot's record: the springs ([`PairSpring`], kept when `keep` says
/// the pair touched) and the rolling springs ([`RollSlot`], all kept: they are read only
/// where the pair's [`PairSpring`] says it touched).
pub(in crate::cpu) fn remap_springs<T: Copy + Default + Send + Sync>(
    old: &NeighborList,
    springs: &[T],
    new: &NeighborList,
    moved: &[u32],
    out: &mut Vec<T>,
    keep: impl Fn(&T) -> bool + Sync,
) {
    const ROWS: usize = 1024;
    out.clear();
    out.resize(new.pairs(), T::default());
    let n = new.half_offsets.len().saturating_sub(1);
    let chunks = crate::neighbor::row_runs(&new.half_offsets, out, ROWS);
    let rows_old = old.half_offsets.len().saturating_sub(1);
    let kernel = |(lo, hi, mine): (usize, usize, &mut [T])| {
        let base = new.half_offsets[lo] as usize;
        for a in lo..hi {
            let a_old = moved.get(a).map_or(a, |&o| o as usize);
            if a_old >= rows_old {
                continue;
            }
            let (first_old, partners_old) = old.half_row(a_old);
            let (first, partners) = new.half_row(a);
            let mut cur = 0;
            for (s, &j) in (first - base..).zip(partners) {
                let id = new.id_of(j as usize);
                while cur < partners_old.len() && old.id_of(partners_old[cur] as usize) < id {
                    cur += 1;
                }
                let same = partners_old
                    .get(cur)
                    .is_some_and(|&k| old.id_of(k as usize) == id);
                if same {
                    if let Some(c) = springs.get(first_old + cur).filter(|c| keep(c)) {
                        mine[s] = *c;
                    }
                }
            }
        }
    };
    if n < PAR_THRESHOLD {
        chunks.into_iter().for_each(kernel);
    } else {
        chunks.into_par_iter().for_each(kernel);
    }
}

/// Slot flag: the pair touches (contact) or is within the near-field cutoff.
pub(in crate::cpu) const SLOT_ACTIVE: u32 = 1;

/// One listed pair's contact history: the tangential spring its last evaluation left
/// and whether the pair touched then (read by the next evaluation, and turned into the
/// per-particle rows of [`History`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(in crate::cpu) struct PairSpring {
    /// The spring (canonical orientation: the lower id's).
    pub(in crate::cpu) spring: DVec3,
    /// [`SLOT_ACTIVE`] when the pair touched, 0 otherwise (the spring is then stale).
    pub(in crate::cpu) flags: u32,
}

/// One listed pair's rolling resistance, in models with it
/// ([`crate::model::Model::rolling`]): the torque on the lower id that `granular_pairs`
/// computed (the gather adds it to `a` and its negative to `b`) and the rolling spring
/// it left (EPSD; zero under CDT), beside the pair's [`PairSpring`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(in crate::cpu) struct RollSlot {
    /// Rolling torque on `a` (N m).
    pub(in crate::cpu) torque: DVec3,
    /// Rolling spring (canonical orientation: the lower id's).
    pub(in crate::cpu) spring: DVec3,
}
