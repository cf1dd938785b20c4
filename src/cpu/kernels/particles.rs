//! Twin of `shaders/particles.wgsl`: kernel `particle_forces`, the per-particle gather
//! of bond results (incidence list, ascending bond id), contacts (neighbour list,
//! ascending id), walls and the field, with `integrate_correct` applied to each particle
//! as soon as its force is complete; and the force evaluation that runs `bond_forces`,
//! `granular_pairs` and `particle_forces` in that order.

use glam::DVec3;
use rayon::prelude::*;

use super::granular::{GranularInputs, NearSlot, PairSlot};
use crate::cpu::contact_history::{PairSpring, RollSlot};
use crate::cpu::forces::{history_slots, mesh_slots, wall_stride, ForceState, ParticleForce};
use crate::cpu::MESH_SLOTS;

/// What a chunk of the force gather reports: touching contacts beyond the slots (pair
/// and mesh counts), or a contact deeper than `[contact] max_overlap` (what, and the
/// overlap's fraction of the smaller radius).
#[derive(Clone, Copy, Debug)]
enum ForceFault {
    Overflow(u32, u32),
    Overlap((Contacted, f64)),
}

/// A chunk's wall springs (and rolling springs), mesh slots (keys, springs, rolling
/// springs) and wall loads.
type WallRows<'a> = (
    (&'a mut [DVec3], &'a mut [DVec3], &'a mut [u8]),
    (&'a mut [u32], &'a mut [DVec3], &'a mut [DVec3]),
    &'a mut [[DVec3; 2]],
);
use crate::cpu::kernels::integrate::{body_of, integrate_correct};
use crate::cpu::parallel::{
    prefetch_slots, row_chunks, run_chunks, CorrectChunk, RowChunk, MIN_CHUNK, PAR_THRESHOLD,
    PREFETCH_AHEAD,
};
use crate::cpu::CpuBackend;
use crate::error::{Contacted, Error, Fault, Result};
use crate::model::{ContactLaw, FLAG_MEMBER, FLAG_PENDULUM, FLAG_REMOVED};
use crate::physics::{contact, field, BondResult};

impl CpuBackend {
    /// Evaluates every force of the current state into `out`; `first`: no step has
    /// been taken yet (zero increments for the contact springs).
    ///
    /// `increments`: the step's `(Δx, Δα)` per particle when the integrator gives them
    /// explicitly (the implicit one); `None` derives them from the velocities.
    ///
    /// `correct`: the particles' velocities `v`, `Ω` (lent by an explicit step, whose
    /// model holds none meanwhile), to which kernel `integrate_correct` is applied as
    /// each particle's force is complete.
    ///
    /// The loads of bonds that broke in the evaluation are taken out of the stored
    /// forces after the kick ([`CpuBackend::bond_unload`]).
    pub(in crate::cpu) fn evaluate_forces(
        &self,
        out: &mut ForceState,
        step: u64,
        first: bool,
        increments: Option<&[(DVec3, DVec3)]>,
        correct: Option<(&mut [DVec3], &mut [DVec3])>,
    ) -> Result<()> {
        self.gather_forces(out, step, first, increments, correct)?;
        if !out.breaks.unload.is_empty() {
            self.bond_unload(&mut out.bonds, &mut out.particles, &out.breaks);
        }
        Ok(())
    }

    /// [`CpuBackend::evaluate_forces`] before the broken bonds' loads are taken out.
    fn gather_forces(
        &self,
        out: &mut ForceState,
        step: u64,
        first: bool,
        increments: Option<&[(DVec3, DVec3)]>,
        correct: Option<(&mut [DVec3], &mut [DVec3])>,
    ) -> Result<()> {
        self.bond_forces(&mut out.bonds, &mut out.breaks, step)?;
        let bonds = &out.bonds;
        let (kind, h) = (self.integrator, self.dt);
        let p = &self.model.particles;
        let correct_one = |i: usize, f: &ParticleForce, v: &mut DVec3, w: &mut DVec3| {
            // A removed particle keeps the velocity it left with (the GPU's
            // particle_forces skips it the same way).
            if p.flags[i] & FLAG_REMOVED == 0 {
                integrate_correct(kind, h, body_of(&p.mass, &p.inertia, &p.flags, i), f, v, w);
            }
        };
        let (v, w) = correct.unwrap_or_default();
        let (mut v_chunks, mut w_chunks) = (v.chunks_mut(MIN_CHUNK), w.chunks_mut(MIN_CHUNK));
        let Some(tables) = &self.tables else {
            let chunks: Vec<_> = out
                .particles
                .chunks_mut(MIN_CHUNK)
                .enumerate()
                .map(|(c, f)| {
                    let (v, w) = (v_chunks.next(), w_chunks.next());
                    (
                        c * MIN_CHUNK,
                        (f, ()),
                        v.unwrap_or_default(),
                        w.unwrap_or_default(),
                    )
                })
                .collect();
            let kernel = |(lo, (f, ()), v, w): CorrectChunk<'_, ()>| {
                for (l, f) in f.iter_mut().enumerate() {
                    *f = self.particle_force(bonds, lo + l);
                    if let (Some(v), Some(w)) = (v.get_mut(l), w.get_mut(l)) {
                        correct_one(lo + l, f, v, w);
                    }
                }
                None::<(usize, ())>
            };
            run_chunks(chunks, p.len(), kernel);
            return Ok(());
        };
        let inputs = GranularInputs {
            model: &self.model,
            tables,
            old_springs: &self.forces.springs,
            old_walls: &self.forces.wall_spring,
            wall_stride: wall_stride(&self.model),
            walls: self.walls.as_ref(),
            old_mesh: (&self.forces.mesh_key, &self.forces.mesh_spring),
            rolling: self.model.rolling(),
            old_rolls: (
                &self.forces.rolls,
                &self.forces.wall_roll,
                &self.forces.mesh_roll,
            ),
            old_held: &self.forces.wall_held,
            jkr_reach: self.jkr_reach,
            slots: history_slots(&self.model),
            kind: self.integrator,
            h: self.dt,
            increments,
            first,
            old_forces: &self.forces.particles,
            max_overlap: self.max_overlap(),
            overlap_floor: self.max_overlap() * self.min_radius,
        };
        if !std::mem::take(&mut out.sides_ready) || increments.is_some() || first {
            inputs.sides(&mut out.sides);
        }
        let sides = &out.sides;
        // Kernel `granular_pairs`: each listed pair once, by its lower id.
        let list = &self.neighbors;
        let contacts = self.model.contact.is_some();
        let n_pairs = if contacts { list.pairs() } else { 0 };
        out.pairs.resize(n_pairs, PairSlot::default());
        out.springs.resize(n_pairs, PairSpring::default());
        let rolling = self.model.rolling().is_some();
        out.rolls
            .resize(if rolling { n_pairs } else { 0 }, RollSlot::default());
        out.near.resize(
            if self.model.near_field.is_some() {
                n_pairs
            } else {
                0
            },
            NearSlot::default(),
        );
        if n_pairs > 0 {
            let half = &list.half_offsets;
            let slots = (&mut out.pairs[..], &mut out.springs[..], &mut out.rolls[..]);
            let chunks = row_chunks(half, slots, &mut out.near, MIN_CHUNK);
            let pass = |(lo, hi, pairs, near): RowChunk<'_>| {
                inputs.granular_pairs(lo..hi, list, pairs, near, &sides.side);
            };
            if self.model.particles.len() < PAR_THRESHOLD {
                chunks.into_iter().for_each(pass);
            } else {
                chunks.into_par_iter().for_each(pass);
            }
        }
        let (pairs, rolls, near) = (&out.pairs, &out.rolls, &out.near);
        let nw = wall_stride(&self.model);
        let nm = mesh_slots(&self.model);
        let (mut key_chunks, mut spring_chunks, mut mesh_roll_chunks) = (
            out.mesh_key.chunks_mut((MIN_CHUNK * nm).max(1)),
            out.mesh_spring.chunks_mut((MIN_CHUNK * nm).max(1)),
            out.mesh_roll.chunks_mut((MIN_CHUNK * nm).max(1)),
        );
        let mut wall_roll_chunks = out.wall_roll.chunks_mut(MIN_CHUNK * nw);
        let mut wall_held_chunks = out.wall_held.chunks_mut(MIN_CHUNK * nw);
        let n_loads = self.model.walls.len() + self.model.meshes.len();
        out.wall_loads.fill([DVec3::ZERO; 2]);
        let mut load_chunks = out.wall_loads.chunks_mut(n_loads.max(1));
        let chunks: Vec<_> = out
            .particles
            .chunks_mut(MIN_CHUNK)
            .zip(out.wall_spring.chunks_mut(MIN_CHUNK * nw))
            .enumerate()
            .map(|(c, (f, walls))| {
                let (v, w) = (v_chunks.next(), w_chunks.next());
                let mesh = (
                    key_chunks.next().unwrap_or_default(),
                    spring_chunks.next().unwrap_or_default(),
                    mesh_roll_chunks.next().unwrap_or_default(),
                );
                let walls = (
                    walls,
                    wall_roll_chunks.next().unwrap_or_default(),
                    wall_held_chunks.next().unwrap_or_default(),
                );
                (
                    c * MIN_CHUNK,
                    (f, (walls, mesh, load_chunks.next().unwrap_or_default())),
                    v.unwrap_or_default(),
                    w.unwrap_or_default(),
                )
            })
            .collect();
        // Each chunk reports its first particle with more touching contacts than slots,
        // else its first with a contact deeper than max_overlap (errors: the lowest over
        // all chunks is named, an overflow before any overlap, keyed n + i, as the GPU
        // reports the lower error code first).
        // Keys by id (with compaction, ids outnumber the slots).
        let n = self.storage.layout.id_count(p.len());
        // Wall loads are summed in id order: in place when slots are ids, else each
        // particle's loads (summed over its contacts from zero, as they would join the
        // chunk's) are listed by id and added after the pass (`WallLoads`).
        let layout = &self.storage.layout;
        let by_id = !layout.is_identity() && n_loads > 0;
        let listed = std::sync::Mutex::new(Vec::<(u32, u32, [DVec3; 2])>::new());
        let kernel = |(
            lo,
            (f, ((walls, wall_rolls, wall_helds), (keys, springs, mesh_rolls), loads)),
            v,
            w,
        ): CorrectChunk<'_, WallRows<'_>>| {
            let mut fault: Option<(usize, ForceFault)> = None;
            let mut mine = vec![[DVec3::ZERO; 2]; if by_id { n_loads } else { 0 }];
            let mut list_of_chunk = Vec::new();
            for (l, f) in f.iter_mut().enumerate() {
                let i = lo + l;
                let id = layout.id(i);
                if contacts {
                    prefetch_slots(list, pairs, i + PREFETCH_AHEAD);
                }
                let mut pf = self.particle_force(bonds, i);
                let (neighbors, slots) = if contacts {
                    let r = list.offsets[i] as usize..list.offsets[i + 1] as usize;
                    (
                        (&list.neighbors[r.clone()], list.below(i)),
                        &list.pair_index[r],
                    )
                } else {
                    ((&[][..], 0), &[][..])
                };
                let wall_spring = (
                    &mut walls[l * nw..(l + 1) * nw],
                    wall_rolls.get_mut(l * nw..(l + 1) * nw).unwrap_or_default(),
                    wall_helds.get_mut(l * nw..(l + 1) * nw).unwrap_or_default(),
                );
                let mesh_row = (
                    keys.get_mut(l * nm..(l + 1) * nm).unwrap_or_default(),
                    springs.get_mut(l * nm..(l + 1) * nm).unwrap_or_default(),
                    mesh_rolls.get_mut(l * nm..(l + 1) * nm).unwrap_or_default(),
                );
                // `mine` is all zero here (cleared after each particle that loaded it).
                let target = if by_id { &mut mine[..] } else { &mut *loads };
                let g = inputs.granular_sum(
                    i,
                    neighbors,
                    slots,
                    (pairs, rolls),
                    near,
                    wall_spring,
                    mesh_row,
                    target,
                    sides,
                );
                if by_id && g.loaded {
                    for (k, l) in mine.iter_mut().enumerate() {
                        // Adding a zero load leaves a sum starting from +0 unchanged.
                        if *l != [DVec3::ZERO; 2] {
                            list_of_chunk.push((id as u32, k as u32, *l));
                            *l = [DVec3::ZERO; 2];
                        }
                    }
                }
                pf.force += g.force;
                pf.moment += g.moment;
                pf.e_contact += g.e_contact;
                pf.e_wall += g.e_wall;
                pf.e_near = g.e_near;
                pf.overflow = g.overflow;
                pf.mesh_overflow = g.mesh_overflow;
                *f = pf;
                // The lowest id is named, an overflow before any overlap.
                let found = if f.overflow > 0 || f.mesh_overflow > 0 {
                    Some((id, ForceFault::Overflow(f.overflow, f.mesh_overflow)))
                } else {
                    g.overlap.map(|c| (n + id, ForceFault::Overlap(c)))
                };
                if let Some(c) = found.filter(|c| fault.map_or(true, |(k, _)| c.0 < k)) {
                    fault = Some(c);
                }
                if let (Some(v), Some(w)) = (v.get_mut(l), w.get_mut(l)) {
                    correct_one(i, f, v, w);
                }
            }
            if !list_of_chunk.is_empty() {
                if let Ok(mut all) = listed.lock() {
                    all.extend(list_of_chunk);
                }
            }
            fault
        };
        let found = run_chunks(chunks, p.len(), kernel);
        if by_id {
            // (id, load) is unique: the order the chunks listed them in does not matter.
            let mut all = listed.into_inner().unwrap_or_default();
            all.sort_unstable_by_key(|e| (e.0, e.1));
            for (id, k, l) in all {
                let at = (id as usize / MIN_CHUNK) * n_loads + k as usize;
                if let Some(t) = out.wall_loads.get_mut(at) {
                    t[0] += l[0];
                    t[1] += l[1];
                }
            }
        }
        let Some((key, fault)) = found else {
            return Ok(());
        };
        let particle = key % n;
        let slots = history_slots(&self.model);
        let fault = match fault {
            ForceFault::Overlap((other, fraction)) => {
                let other = match other {
                    Contacted::Particle(j) => Contacted::Particle(layout.id(j)),
                    c => c,
                };
                self.overlap_fault(particle, other, Some(fraction))
            }
            ForceFault::Overflow(0, mesh_over) => Fault::MeshContactOverflow {
                particle,
                contacts: MESH_SLOTS + mesh_over as usize,
                capacity: MESH_SLOTS,
            },
            ForceFault::Overflow(over, _) => Fault::ContactOverflow {
                particle,
                contacts: Some(slots + over as usize),
                capacity: slots,
            },
        };
        Err(Error::fault(step, fault))
    }

    /// [`Fault::Overlap`] for `particle` and `other`, with this run's limit, time step
    /// and `varidem check`'s recommended one.
    pub(in crate::cpu) fn overlap_fault(
        &self,
        particle: usize,
        other: Contacted,
        fraction: Option<f64>,
    ) -> Fault {
        Fault::Overlap {
            particle,
            other,
            fraction,
            limit: self.max_overlap(),
            dt: self.dt,
            recommended_dt: self.dt_advice,
        }
    }

    /// `[contact] max_overlap` under the Hertz law; ∞ otherwise (no limit).
    pub(in crate::cpu) fn max_overlap(&self) -> f64 {
        match self.model.contact {
            Some(c) if c.law == ContactLaw::Hertz => c.max_overlap,
            _ => f64::INFINITY,
        }
    }

    /// Kernel `particle_forces` for particle `i`: the gather of bond results (CSR
    /// incidence, ascending bond id), contacts (neighbour list, ascending id), walls
    /// and the field. Scenes without bonds, binder contacts or pendulums have only the
    /// field ([`CpuBackend::field_force`], the same bits).
    #[inline]
    pub(in crate::cpu) fn particle_force(
        &self,
        bonds: &[Option<BondResult>],
        i: usize,
    ) -> ParticleForce {
        if self.field_only {
            return self.field_force(i);
        }
        self.particle_force_general(bonds, i)
    }

    /// [`CpuBackend::particle_force`] of any scene.
    pub(in crate::cpu) fn particle_force_general(
        &self,
        bonds: &[Option<BondResult>],
        i: usize,
    ) -> ParticleForce {
        let m = &self.model;
        let p = &m.particles;
        let inc = &self.incidence;
        let mut force = DVec3::ZERO;
        let mut moment = DVec3::ZERO;
        for &e in &inc.entries[inc.offsets[i] as usize..inc.offsets[i + 1] as usize] {
            let Some(r) = &bonds[(e >> 1) as usize] else {
                continue;
            };
            if e & 1 == 0 {
                force += r.force_i;
                moment += r.moment_i;
            } else {
                force -= r.force_i;
                moment += r.moment_j;
            }
        }
        let (x, rad) = (p.position[i], p.radius[i]);
        let mut e_contact = 0.0;
        let mut e_wall = 0.0;
        let removed = |k: usize| p.flags[k] & FLAG_REMOVED != 0;
        if let Some(ContactLaw::Binder { k_pp }) = m.contact.map(|c| c.law).filter(|_| !removed(i))
        {
            for &j in self.neighbors.of(i) {
                let j = j as usize;
                if removed(j) {
                    continue;
                }
                if let Some((e, fi)) =
                    contact::binder_pair(k_pp, x, p.position[j], rad, p.radius[j])
                {
                    e_contact += 0.5 * e;
                    force += fi;
                }
            }
            for w in &m.walls {
                if let Some((e, fw)) = contact::binder_wall(w, x, rad) {
                    e_wall += e;
                    force += fw;
                }
            }
            if let Some(ws) = &self.walls {
                ws.surfaces.contacts(ws.list.of(i), x, rad, |c| {
                    let k = m.meshes[c.mesh as usize].stiffness;
                    let (e, f) = contact::binder_surface(k, c.distance, c.normal, rad);
                    e_wall += e;
                    force += f;
                });
            }
        }
        if p.flags[i] & FLAG_PENDULUM != 0 {
            let (_, ff, mf) =
                field::pendulum(p.mass[i], m.gravity, x, p.rotation[i], p.pendulum_offset[i]);
            force += ff;
            moment += mf;
        } else if p.flags[i] & FLAG_MEMBER == 0 {
            // A clump's sphere: the field acts on its body (cpu::clumps).
            force += field::gravity(p.mass[i], m.gravity, x).1;
        }
        ParticleForce {
            force,
            moment,
            e_contact,
            e_wall,
            e_near: 0.0,
            overflow: 0,
            mesh_overflow: 0,
        }
    }

    /// [`CpuBackend::particle_force_general`] of a particle that has no bonds, no binder
    /// contacts and no pendulum: the uniform field, with the same operations (its
    /// bits).
    #[inline]
    pub(in crate::cpu) fn field_force(&self, i: usize) -> ParticleForce {
        let p = &self.model.particles;
        let g = if p.flags[i] & FLAG_MEMBER == 0 {
            field::gravity(p.mass[i], self.model.gravity, p.position[i]).1
        } else {
            DVec3::ZERO
        };
        ParticleForce {
            force: DVec3::ZERO + g,
            ..ParticleForce::default()
        }
    }
}
