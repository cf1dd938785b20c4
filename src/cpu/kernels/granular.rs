//! Twin of `shaders/granular.wgsl` and `shaders/common/contact.wgsl`: the granular
//! (Hertz–Mindlin, near-field, drag) forces. Kernel `granular_pairs` computes each
//! listed pair once, by its lower id, into the pair's half-list slot ([`PairSlot`],
//! [`NearSlot`]); `granular_sum` then adds, for one particle, its slots, its wall
//! contacts and the drag, in ascending partner order (the order of the GPU's
//! `granular_sum`).

use glam::DVec3;
use rayon::prelude::*;

use crate::backend::loads::{add_load, add_load_with_moment};
use crate::cpu::contact_history::{PairSpring, RollSlot, SLOT_ACTIVE};
use crate::cpu::contact_sides::{stored_side, SideScratch, Sides};
use crate::cpu::forces::ParticleForce;
use crate::cpu::pair_batch::{PairBatch, LANES};
use crate::cpu::parallel::{dispatch_into, MIN_CHUNK};
use crate::cpu::walls::{WallState, MESH_SLOTS};
use crate::error::Contacted;
use crate::integrators::{self, Body, IntegratorKind};
use crate::model::{ContactLaw, Model, Particles, RollingModel, FLAG_REMOVED};
use crate::neighbor::NeighborList;
use crate::physics::granular::{
    hertz_contact, wall_overlap, ContactGeometry, ContactSide, PairTables,
};
use crate::physics::mesh::carried_springs;
use crate::physics::rolling::{rolling_torque, wall_rolling_inertia, RollingInputs};

/// A particle's mesh slots as `mesh_sum` writes them: feature keys, springs, rolling
/// springs (empty without rolling resistance), and the loads on the meshes.
type MeshRow<'a> = (
    &'a mut [u32],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [[DVec3; 2]],
);

/// One listed pair's contact, computed once by its lower id `a` (kernel
/// `granular_pairs`) and added by both particles: what the gather reads, in one 64-byte
/// cache line (the pair's spring is kept apart, in [`PairSpring`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(in crate::cpu) struct PairSlot {
    /// Force on `a` (N); `b` takes its exact negative.
    pub(in crate::cpu) force: DVec3,
    /// `n × f_t`: the moments are `ℓ_a n × f_t` on `a` and `ℓ_b n × f_t` on `b` (eq. 39),
    /// with the lever arms `ℓ = r − δ/2` each particle forms from its own radius.
    pub(in crate::cpu) n_cross_friction: DVec3,
    /// Hertz energy of the pair (J).
    pub(in crate::cpu) energy: f64,
    /// Overlap `δ` of a touching pair; NaN when the pair does not touch (the rest is
    /// then stale). A touching pair's overlap is finite.
    pub(in crate::cpu) overlap: f64,
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

/// One listed pair's near-field force (eq. 17), computed once by its lower id.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(in crate::cpu) struct NearSlot {
    /// Force on `a` (N).
    pub(in crate::cpu) force: DVec3,
    /// Pair energy (J).
    pub(in crate::cpu) energy: f64,
    /// [`SLOT_ACTIVE`] within the cutoff.
    pub(in crate::cpu) flags: u32,
}

/// Granular forces on one particle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(in crate::cpu) struct GranularForce {
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
    /// Mesh contacts beyond [`MESH_SLOTS`] (0 when all fit).
    pub mesh_overflow: u32,
    /// The particle's first contact deeper than `[contact] max_overlap` (a pair counts
    /// for its lower id): its lowest-id partner, else its first wall, else its
    /// lowest-index mesh; with the overlap as a fraction of the smaller radius. `None`
    /// when none is.
    pub overlap: Option<(Contacted, f64)>,
    /// Whether the particle added a load to a plane or mesh (it touched one).
    pub loaded: bool,
}

/// What a granular force evaluation reads besides the model.
pub(in crate::cpu) struct GranularInputs<'a> {
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
    /// Moving and mesh walls, placed at this evaluation's time; `None`: every wall a
    /// plane at rest.
    pub walls: Option<&'a WallState>,
    /// The previous evaluation's mesh contact slots: feature keys and springs,
    /// `N × MESH_SLOTS` (empty without meshes).
    pub old_mesh: (&'a [u32], &'a [DVec3]),
    /// Rolling resistance ([`Model::rolling`]): the model, and the previous
    /// evaluation's rolling springs of the pairs (beside `old_springs`), walls (beside
    /// `old_walls`) and mesh slots (beside `old_mesh`).
    pub rolling: Option<RollingModel>,
    /// See [`GranularInputs::rolling`].
    pub old_rolls: (&'a [RollSlot], &'a [DVec3], &'a [DVec3]),
    /// The previous evaluation's JKR wall flags (`N × wall_stride`, 1 where the
    /// contact held; empty without JKR cohesion).
    pub old_held: &'a [u8],
    /// How far past touching the mesh search looks for JKR contacts in tension (0
    /// without JKR cohesion).
    pub jkr_reach: f64,
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
    /// `[contact] max_overlap` under the Hertz law (∞ otherwise): a contact deeper than
    /// this fraction of the smaller radius is reported ([`GranularForce::overlap`]).
    pub max_overlap: f64,
    /// `max_overlap` times the smallest radius: no pair is shallower than it and
    /// deeper than the limit, so shallower ones need not look up the partner's radius.
    pub overlap_floor: f64,
}

impl GranularInputs<'_> {
    /// The axis point of plane `w` now (moment loads are taken about it).
    #[inline]
    fn plane_axis(&self, w: usize) -> DVec3 {
        match self.walls {
            Some(ws) => ws.plane_poses[w].axis(),
            None => self.model.walls[w].motion.axis_point,
        }
    }

    /// The Hertz contacts of particle `i` with the meshes, added to `out`, their springs
    /// and keys written to `keys`, `springs` (the particle's [`MESH_SLOTS`]); returns
    /// the contacts beyond the slots.
    fn mesh_sum(
        &self,
        ws: &WallState,
        i: usize,
        side_i: &ContactSide,
        (keys, springs, rolls, loads): MeshRow<'_>,
        out: &mut GranularForce,
        removed: bool,
    ) -> u32 {
        // Rows fill from slot 0 and end at the first unused key: clearing the used
        // prefix clears the row (most particles touch no mesh: nothing to write).
        for (a, k) in keys.iter_mut().enumerate() {
            if *k == crate::physics::granular::NO_PARTNER {
                break;
            }
            *k = crate::physics::granular::NO_PARTNER;
            springs[a] = DVec3::ZERO;
            if let Some(r) = rolls.get_mut(a) {
                *r = DVec3::ZERO;
            }
        }
        if removed || ws.list.of(i).is_empty() {
            return 0;
        }
        let p = &self.model.particles;
        let mut now = [None; MESH_SLOTS];
        // JKR: contacts in tension hold on the features touched at the last
        // evaluation or adjacent to one (a sphere sliding across an edge stays held, as
        // the springs are handed over), down to their pull-off overlap.
        let old_keys = self.old_mesh.0.get(i * MESH_SLOTS..(i + 1) * MESH_SLOTS);
        let old_keys = old_keys.unwrap_or_default();
        let material = p.material[i];
        let count = if self.jkr_reach > 0.0 {
            let held = |c: &crate::physics::mesh::MeshContact| {
                let pm = self.tables.mesh(c.mesh as usize, material);
                c.distance < side_i.r
                    || (old_keys.iter().any(|&k| {
                        k != crate::physics::granular::NO_PARTNER
                            && (k == c.key || ws.surfaces.adjacent(k, c.key))
                    }) && crate::physics::jkr::in_contact(
                        side_i.r,
                        pm.e_star,
                        pm.gamma,
                        side_i.r - c.distance,
                        true,
                    ))
            };
            ws.mesh_contacts(i, side_i.x, side_i.r + self.jkr_reach, held, &mut now)
        } else {
            ws.mesh_contacts(i, side_i.x, side_i.r, |_| true, &mut now)
        };
        if count == 0 {
            return 0;
        }
        let row = i * MESH_SLOTS..(i + 1) * MESH_SLOTS;
        let start = match (
            self.old_mesh.0.get(row.clone()),
            self.old_mesh.1.get(row.clone()),
        ) {
            (Some(k), Some(s)) => carried_springs(&ws.surfaces, &now, k, s),
            _ => [DVec3::ZERO; MESH_SLOTS],
        };
        // The rolling springs are handed over with the tangential ones.
        let roll_start = match (self.old_mesh.0.get(row.clone()), self.old_rolls.2.get(row)) {
            (Some(k), Some(s)) if !rolls.is_empty() => carried_springs(&ws.surfaces, &now, k, s),
            _ => [DVec3::ZERO; MESH_SLOTS],
        };
        // The particle's load on each mesh it touches, summed over its contacts before
        // they join the chunk's (the GPU records one such sum per particle and mesh).
        let mut mine = [(u32::MAX, [DVec3::ZERO; 2]); MESH_SLOTS];
        // The lowest-index mesh touched deeper than max_overlap × the radius, and the
        // deepest of its contacts.
        let mut deep = (u32::MAX, 0.0f64);
        for (a, c) in now.iter().enumerate() {
            let Some(c) = c else { continue };
            let (overlap, lever) = (side_i.r - c.distance, c.distance);
            if overlap > self.max_overlap * side_i.r && c.mesh <= deep.0 {
                let fraction = overlap / side_i.r;
                deep.1 = if c.mesh == deep.0 {
                    deep.1.max(fraction)
                } else {
                    fraction
                };
                deep.0 = c.mesh;
            }
            let pm = self.tables.mesh(c.mesh as usize, p.material[i]);
            let g = ContactGeometry {
                r_star: side_i.r,
                m_star: p.mass[i],
            };
            let wall_side = ws.side(&ws.surfaces.poses[c.mesh as usize], c.point, self.first);
            let r = hertz_contact(
                pm, g, c.normal, overlap, lever, 0.0, side_i, &wall_side, start[a],
            );
            out.force += r.force;
            out.moment += lever * c.normal.cross(r.friction);
            out.e_wall += r.energy;
            keys[a] = c.key;
            springs[a] = r.spring;
            // The rolling torque, whose reaction the mesh's load takes (when not zero).
            let mut torque = DVec3::ZERO;
            if let Some(roll) =
                self.wall_rolling(pm, (side_i, &wall_side), &r, p.mass[i], roll_start[a])
            {
                out.moment += roll.torque;
                torque = roll.torque;
                if let Some(s) = rolls.get_mut(a) {
                    *s = roll.spring;
                }
            }
            if !loads.is_empty() {
                if let Some(e) = mine.iter_mut().find(|e| e.0 == c.mesh || e.0 == u32::MAX) {
                    e.0 = c.mesh;
                    let axis = ws.surfaces.poses[c.mesh as usize].axis();
                    add_load(&mut e.1, axis, c.point, -r.force);
                    if torque != DVec3::ZERO {
                        e.1[1] -= torque;
                    }
                }
            }
        }
        for (mesh, l) in mine.iter().take_while(|e| e.0 != u32::MAX) {
            out.loaded = true;
            if let Some(total) = loads.get_mut(*mesh as usize) {
                total[0] += l[0];
                total[1] += l[1];
            }
        }
        if out.overlap.is_none() && deep.0 != u32::MAX {
            out.overlap = Some((Contacted::Mesh(deep.0 as usize), deep.1));
        }
        count.saturating_sub(MESH_SLOTS) as u32
    }

    /// The rolling torque and spring of a particle's contact `r` with a plane or mesh
    /// (`sides`: the particle's, the wall's at the contact point; `mass` the
    /// particle's), `spring` the rolling spring it had; `None` without rolling
    /// resistance on this pair. The twin of `wall_rolling` (shaders/common/contact.wgsl).
    #[inline]
    fn wall_rolling(
        &self,
        pm: &crate::physics::granular::PairMaterial,
        (side_i, wall): (&ContactSide, &ContactSide),
        r: &crate::physics::granular::ContactResult,
        mass: f64,
        spring: DVec3,
    ) -> Option<crate::physics::rolling::RollingResult> {
        let model = self.rolling.filter(|_| pm.mu_r > 0.0)?;
        Some(rolling_torque(&RollingInputs {
            model,
            mu_r: pm.mu_r,
            eta_r: pm.eta_r,
            r_star: side_i.r,
            e_star: pm.e_star,
            contact_radius: r.contact_radius,
            f_n: r.normal_force,
            n: r.normal,
            dalpha: side_i.dalpha - wall.dalpha,
            inertia: wall_rolling_inertia(mass, side_i.r),
            h: self.h,
            spring,
        }))
    }

    /// Every particle's contact side and end-of-step angular velocity ([`Sides`]).
    pub(in crate::cpu) fn sides(&self, out: &mut Sides) {
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
            dispatch_into(&mut out.side, |i, s| *s = side(i).0);
        } else {
            // With drag: both from one computation of each side.
            out.side
                .par_iter_mut()
                .zip(out.spin.par_iter_mut())
                .with_min_len(MIN_CHUNK)
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
    /// field). Both particles then add the slot in [`GranularInputs::granular_sum`].
    ///
    /// Touching pairs are queued and their contact law runs [`LANES`] at a time
    /// ([`PairBatch`]), which the compiler turns into SIMD; the results are the same
    /// bits as one [`hertz_contact`] per pair.
    pub(in crate::cpu) fn granular_pairs(
        &self,
        rows: std::ops::Range<usize>,
        list: &NeighborList,
        (out, springs, rolls): (&mut [PairSlot], &mut [PairSpring], &mut [RollSlot]),
        near: &mut [NearSlot],
        sides: &[SideScratch],
    ) {
        let m = self.model;
        let hertz = matches!(m.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        // Global index of the chunk's first slot.
        let base = list.half_offsets[rows.start] as usize;
        let jkr = !self.old_held.is_empty() || m.jkr();
        let mut batch = PairBatch {
            rolling: self.rolling.map(|m| (m, self.h)),
            jkr,
            ..PairBatch::default()
        };
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
            let old_rolls = (self.old_rolls.0)
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
                if dist2.is_nan() || dist2 == 0.0 || partner.removed {
                    continue;
                }
                let pm = self.tables.pair(particle.material, partner.material);
                // JKR: a pair that held at the last evaluation holds in tension down to
                // its pull-off overlap (looked at only past the touching reach).
                if dist2 >= reach * reach {
                    let touched = old.get(s - first).is_some_and(|o| o.flags != 0);
                    if !(jkr && touched) {
                        continue;
                    }
                    let r_star = sa.r * sb.r / (sa.r + sb.r);
                    let overlap = reach - dist2.sqrt();
                    if !crate::physics::jkr::in_contact(r_star, pm.e_star, pm.gamma, overlap, true)
                    {
                        continue;
                    }
                }
                let (spring, roll) = match old.get(s - first) {
                    Some(o) if o.flags != 0 => (
                        o.spring,
                        old_rolls.get(s - first).map_or(DVec3::ZERO, |r| r.spring),
                    ),
                    _ => (DVec3::ZERO, DVec3::ZERO),
                };
                batch.push(s, d, dist2, particle, partner, pm, (spring, roll));
                if batch.len == LANES {
                    batch.run(out, springs, rolls);
                }
            }
        }
        batch.run(out, springs, rolls);
    }

    /// Kernel `granular_sum` (the granular part of `particle_forces`) for particle `i`
    /// with neighbours
    /// `neighbors` (ascending id; with the count of those below `i`'s id) whose pairs sit in the half-list slots `slots` (one per
    /// neighbour, [`crate::neighbor::NeighborList::pair_index`]) of `pairs` and `near`:
    /// the contact and near-field results are summed in neighbour order, `i` taking a
    /// pair's force when it is the lower id and its exact negative otherwise (so
    /// `f_ij = −f_ji` bitwise); then walls, meshes and drag. Writes `i`'s new wall
    /// springs and mesh slots; touching pairs beyond [`GranularInputs::slots`] count
    /// as overflow, and the first contact deeper than [`GranularInputs::max_overlap`]
    /// is [`GranularForce::overlap`].
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel twin's outputs are separate slices, as the shader's bindings"
    )]
    pub(in crate::cpu) fn granular_sum(
        &self,
        i: usize,
        neighbors: (&[u32], usize),
        slots: &[u32],
        (pairs, rolls): (&[PairSlot], &[RollSlot]),
        near: &[NearSlot],
        (wall_spring, wall_roll, wall_held): (&mut [DVec3], &mut [DVec3], &mut [u8]),
        mesh_row: (&mut [u32], &mut [DVec3], &mut [DVec3]),
        loads: &mut [[DVec3; 2]],
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
        let (neighbors, below) = neighbors;
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
            // A pair deeper than max_overlap × the smaller radius, found by its lower id.
            if lower && out.overlap.is_none() && c.overlap > self.overlap_floor {
                let j = neighbors[k] as usize;
                let smaller = side_i.r.min(sides.side[j].side.r);
                if c.overlap > self.max_overlap * smaller {
                    out.overlap = Some((Contacted::Particle(j), c.overlap / smaller));
                }
            }
            // `ℓ_a` or `ℓ_b` as the pair kernel formed it, from the same radius.
            let lever = side_i.r - 0.5 * c.overlap;
            if lower {
                out.force += c.force;
            } else {
                out.force -= c.force;
            }
            out.moment += lever * c.n_cross_friction;
            // The pair's rolling torque: `a`'s, or its exact negative for `b`.
            if let Some(r) = rolls.get(slot as usize) {
                out.moment = if lower {
                    out.moment + r.torque
                } else {
                    out.moment - r.torque
                };
            }
            out.e_contact += 0.5 * c.energy;
            if used >= self.slots {
                out.overflow += 1;
            }
            used += 1;
        }
        let nw = self.wall_stride;
        for (w, wall) in m.walls.iter().enumerate() {
            let mut new = DVec3::ZERO;
            let mut new_roll = DVec3::ZERO;
            let mut held = 0u8;
            if hertz && !removed(i) {
                let pm = self.tables.wall(w, p.material[i]);
                let geometry = if self.old_held.is_empty() {
                    wall_overlap(wall, side_i.x, side_i.r)
                } else {
                    // JKR: a contact that held at the last evaluation holds in tension.
                    let before = self.old_held.get(i * nw + w).is_some_and(|&f| f != 0);
                    crate::physics::jkr::wall_overlap_held(wall, side_i.x, side_i.r, pm, before)
                };
                if let Some((n, overlap, lever)) = geometry {
                    held = 1;
                    if out.overlap.is_none() && overlap > self.max_overlap * side_i.r {
                        out.overlap = Some((Contacted::Wall(w), overlap / side_i.r));
                    }
                    let g = ContactGeometry {
                        r_star: side_i.r,
                        m_star: p.mass[i],
                    };
                    // A moving wall's contact point moves with it (`WallState::side`).
                    let wall_side = match self.walls {
                        Some(ws) => ws.side(&ws.plane_poses[w], side_i.x + lever * n, self.first),
                        None => ContactSide::default(),
                    };
                    let r = hertz_contact(
                        pm,
                        g,
                        n,
                        overlap,
                        lever,
                        0.0,
                        side_i,
                        &wall_side,
                        self.old_walls[i * nw + w],
                    );
                    out.force += r.force;
                    out.moment += lever * n.cross(r.friction);
                    let old_roll = self.old_rolls.1.get(i * nw + w).copied();
                    let roll = old_roll.and_then(|s| {
                        self.wall_rolling(pm, (side_i, &wall_side), &r, p.mass[i], s)
                    });
                    let mut torque = DVec3::ZERO;
                    if let Some(roll) = roll {
                        out.moment += roll.torque;
                        new_roll = roll.spring;
                        torque = roll.torque;
                    }
                    out.e_wall += r.energy;
                    new = r.spring;
                    if let Some(l) = loads.get_mut(w) {
                        let q = side_i.x + lever * n;
                        // With the rolling torque's reaction in the contact's moment
                        // (as the GPU's loads add it).
                        add_load_with_moment(l, self.plane_axis(w), q, -r.force, -torque);
                        out.loaded = true;
                    }
                }
            }
            wall_spring[w] = new;
            if let Some(s) = wall_roll.get_mut(w) {
                *s = new_roll;
            }
            if let Some(f) = wall_held.get_mut(w) {
                *f = held;
            }
        }
        if let (Some(ws), true) = (self.walls, hertz && !mesh_row.0.is_empty()) {
            let mesh_loads = loads.get_mut(m.walls.len()..).unwrap_or_default();
            out.mesh_overflow = self.mesh_sum(
                ws,
                i,
                side_i,
                (mesh_row.0, mesh_row.1, mesh_row.2, mesh_loads),
                &mut out,
                removed(i),
            );
        }
        if let Some(d) = &m.drag {
            out.force += d.force(side_i.v, sides.spin[i]);
        }
        out
    }
}
