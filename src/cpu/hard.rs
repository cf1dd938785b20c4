//! The `impulse-velocity` step of hard contacts (Preclik, Eibl & Rüde §3.1) on the CPU:
//! free velocities from the forces, contacts from the neighbour list (touching and
//! speculative), the global solver (`kernels::hard`), then `x' = x + h v'`,
//! `α' = α ⊕ hΩ'`, and the forces of the new state.

use glam::{DMat3, DVec3};

use super::kernels::hard::{
    color_contacts, hard_solve, hard_warm_start, Contacts, SolverBodies, WALL,
};
use super::CpuBackend;
use crate::backend::SolverRow;
use crate::error::{ClumpFault, Error, Fault, Result};
use crate::integrators::rigid::angular_velocity;
use crate::integrators::Kinematics;
use crate::math::rodrigues;
use crate::model::{
    ContactLaw, HardContact, Model, OnNonconvergence, FLAG_HELD, FLAG_NO_ROTATION, FLAG_REMOVED,
};
use crate::physics::granular::PairTables;
use crate::physics::hard::{contact_frame, delassus, ContactCase};
use crate::physics::rigid_body::member_velocity;

/// What the hard-contact step keeps between steps.
#[derive(Clone, Debug)]
pub(super) struct HardState {
    /// The law's parameters.
    pub params: HardContact,
    /// Pair friction coefficients.
    tables: PairTables,
    /// The last step's contacts (their impulses are the next warm start).
    pub contacts: Contacts,
    /// Bodies' velocities and inverse masses during a solve.
    bodies: SolverBodies,
    /// Warm-start impulses of the last step: keys ascending, impulses in the world
    /// frame (so a contact whose normal turned keeps its impulse).
    pub warm: Vec<([u32; 2], DVec3)>,
    /// `solver.csv` rows not yet taken by the driver (one per step until then).
    pub rows: Vec<SolverRow>,
    /// The scene's neighbour-list skin, which the list returns to when fast bodies
    /// slow down.
    base_skin: f64,
    /// Each particle's largest point speed at its free velocity, `|v*| + |Ω*|r` (a
    /// clump's sphere: its body's, with the body's reach): the default margin of a
    /// pair is `h(s_i + s_j)`.
    speed: Vec<f64>,
}

impl HardState {
    /// The state of `model`, when its contact law is hard.
    pub(super) fn new(model: &Model) -> Option<Self> {
        let Some(ContactLaw::Hard(params)) = model.contact.map(|c| c.law) else {
            return None;
        };
        Some(Self {
            params,
            tables: PairTables::friction(model),
            contacts: Contacts::default(),
            bodies: SolverBodies::default(),
            warm: Vec::new(),
            rows: Vec::new(),
            base_skin: model.contact.map_or(0.0, |c| c.skin),
            speed: Vec::new(),
        })
    }
}

impl HardState {
    /// Restores the warm-start impulses of a snapshot; keys must ascend, start with a
    /// particle (`i < n`), name a higher particle or a wall (`i < partner < bound`, the
    /// particles plus walls) and hold finite impulses.
    pub(super) fn restore(
        &mut self,
        stored: &[crate::backend::HardImpulse],
        n: usize,
        bound: usize,
    ) -> Result<()> {
        let mut warm = Vec::with_capacity(stored.len());
        for (k, s) in stored.iter().enumerate() {
            let [i, j] = s.key;
            let ordered = match warm.last() {
                Some((prev, _)) => *prev < s.key,
                None => true,
            };
            if i as usize >= n
                || i >= j
                || j as usize >= bound
                || !ordered
                || !s.impulse.is_finite()
            {
                return Err(Error::Snapshot(format!(
                    "hard-contact impulse {k} (key {:?}, impulse {:?}) is invalid for {bound} particles and walls",
                    s.key,
                    s.impulse.to_array()
                )));
            }
            warm.push((s.key, s.impulse));
        }
        self.warm = warm;
        Ok(())
    }
}

impl CpuBackend {
    /// One step of the `impulse-velocity` integrator. On error the state is that of the
    /// last completed step.
    pub(super) fn step_hard(&mut self) -> Result<()> {
        let step = self.step + 1;
        let h = self.dt;
        let mut hard = self
            .hard
            .take()
            .ok_or_else(|| Error::Backend("hard-contact state missing".into()))?;
        let result = self.step_hard_with(&mut hard, step, h);
        self.hard = Some(hard);
        // The walls where the step leaves them (as a resume at this step places them).
        self.place_walls(if result.is_ok() { step } else { self.step });
        let row = result?;
        if let Some(hs) = &mut self.hard {
            hs.rows.push(row);
        }
        self.step = step;
        Ok(())
    }

    /// The free velocities `v* = v + h F/m`, `Ω* = Ω + h τ/J` of the free spheres (`F`
    /// with the drag of `[drag]` at the step's start velocities, Campello eq. 15) and,
    /// for the clumps, `π* = π + h τ`, `Ω* = I(α)⁻¹π*` (the spatial angular momentum is
    /// the state, so a torque-free body keeps it exactly); returns the largest speed of
    /// a body's point, `|v| + |Ω| reach`.
    fn free_velocities(&self, b: &mut SolverBodies, speed: &mut Vec<f64>, h: f64) -> f64 {
        let p = &self.model.particles;
        speed.clear();
        speed.resize(p.len(), 0.0);
        let f = &self.forces.particles;
        b.v.clear();
        b.w.clear();
        b.inv_mass.clear();
        b.inv_inertia.clear();
        b.inv_tensor.clear();
        b.angular_impulse.clear();
        b.free = self.free;
        let mut u_max = 0f64;
        for (i, fi) in f.iter().enumerate().take(self.free) {
            let flags = p.flags[i];
            let held = flags & (FLAG_HELD | FLAG_REMOVED) != 0;
            let locked = flags & (FLAG_NO_ROTATION | FLAG_REMOVED) != 0;
            let (v, im) = if held {
                (DVec3::ZERO, 0.0)
            } else {
                let force = match &self.model.drag {
                    Some(d) => fi.force + d.force(p.velocity[i], p.angular_velocity[i]),
                    None => fi.force,
                };
                (p.velocity[i] + (h / p.mass[i]) * force, 1.0 / p.mass[i])
            };
            let (w, ij) = if locked {
                (DVec3::ZERO, 0.0)
            } else {
                (
                    p.angular_velocity[i] + (h / p.inertia[i]) * fi.moment,
                    1.0 / p.inertia[i],
                )
            };
            if flags & FLAG_REMOVED == 0 {
                speed[i] = v.length() + w.length() * p.radius[i];
                u_max = u_max.max(speed[i]);
            }
            b.v.push(v);
            b.w.push(w);
            b.inv_mass.push(im);
            b.inv_inertia.push(ij);
        }
        if let Some(bodies) = &self.bodies {
            for (k, s) in bodies.state.iter().enumerate() {
                let t = &bodies.types[bodies.kind[k] as usize];
                let (force, moment) = bodies.load[k];
                let v = s.v + (h / t.mass) * force;
                let (w, inv) = match t.inertia.scalar {
                    Some(j) => (
                        s.omega + (h / j) * moment,
                        DMat3::from_diagonal(DVec3::splat(1.0 / j)),
                    ),
                    None => {
                        let inv = t.inertia.spatial_inverse(s.alpha);
                        (inv * (s.omega + h * moment), inv)
                    }
                };
                let s_body = v.length() + w.length() * t.reach();
                let first = bodies.first[k] as usize;
                speed[first..first + t.spheres.len()].fill(s_body);
                u_max = u_max.max(s_body);
                b.v.push(v);
                b.w.push(w);
                b.inv_mass.push(1.0 / t.mass);
                b.inv_inertia.push(0.0);
                b.inv_tensor.push(inv);
                b.angular_impulse.push(DVec3::ZERO);
            }
        }
        u_max
    }

    fn step_hard_with(&mut self, hard: &mut HardState, step: u64, h: f64) -> Result<SolverRow> {
        let u_max = self.free_velocities(&mut hard.bodies, &mut hard.speed, h);
        // Two bodies close at most h(s_i + s_j) in the step at their free velocities
        // (each pair is filtered by its own bound in build_contacts); the list must
        // hold every pair within the largest, so the skin is at least twice that. A
        // larger skin is rebuilt at once; a smaller one (fast bodies slowed down) only
        // tightens the rebuild test, which keeps every pair within the margin listed.
        let margin = hard.params.margin.unwrap_or(2.0 * h * u_max);
        let skin = hard.base_skin.max(2.0 * margin);
        let x0 = self.reference_position();
        self.neighbors.reserve = margin;
        // Walls at the step's start; a moving wall closes gaps at its surface speed
        // too, so the mesh list keeps that much more of its skin.
        if let Some(ws) = &mut self.walls {
            let p = &self.model.particles;
            let wall_margin = hard
                .params
                .margin
                .unwrap_or(2.0 * h * (u_max + ws.max_surface_speed(&p.position)));
            ws.list.reserve = wall_margin;
            ws.list.skin = hard.base_skin.max(2.0 * wall_margin);
        }
        self.place_walls(self.step);
        let grown = skin > self.neighbors.skin;
        self.neighbors.skin = skin;
        let stale = grown || {
            let shift = self.list_shift(x0.unwrap_or_default());
            self.neighbors
                .is_stale(&self.model.particles.position, shift)
        };
        if stale {
            // With compaction the removed particles leave storage here, and a due sort
            // reorders it (`sort_every`; contacts are built and keyed by id below):
            // the solver's bodies, by slot, are then taken again.
            let (dropped, sorts) = (self.storage.dropped, self.storage.sorts);
            let sort = self.storage.due(self.step);
            self.rebuild_sorted(sort, self.step);
            if self.storage.dropped != dropped || self.storage.sorts != sorts {
                self.free_velocities(&mut hard.bodies, &mut hard.speed, h);
            }
        }

        self.build_contacts(hard, h);
        let e_free = self.kinetic(&hard.bodies);
        let colors = if hard.params.solver == crate::model::HardSolver::Colored {
            color_contacts(&hard.contacts, hard.bodies.v.len())
        } else {
            Vec::new()
        };
        hard_warm_start(&hard.contacts, &mut hard.bodies);
        let solved = hard_solve(&hard.params, &mut hard.contacts, &mut hard.bodies, &colors);
        if !solved.converged && hard.params.on_nonconvergence == OnNonconvergence::Error {
            return Err(Error::fault(
                step,
                Fault::SolverNoConvergence {
                    sweeps: solved.sweeps,
                    residual: solved.residual,
                    tolerance: hard.params.tolerance,
                    contacts: hard.contacts.len(),
                },
            ));
        }
        let e_dissipated = e_free - self.kinetic(&hard.bodies);

        // x' = x + h v', α' = α ⊕ hΩ', checked before anything is committed.
        let p = &self.model.particles;
        let sb = &hard.bodies;
        let mut x_new = p.position[..self.free].to_vec();
        let mut a_new = p.rotation[..self.free].to_vec();
        // In id order, so that a fault names the lowest id whatever the storage.
        let layout = &self.storage.layout;
        // Slots leaving the domain under `on_exit = "remove"`, ascending by id.
        let mut leaving = Vec::new();
        // (The clumps' spheres, after the free particles, follow their bodies below.)
        for i in (layout.slots_by_id(layout.id_count(self.free))).filter(|&i| i < self.free) {
            let id = layout.id(i);
            let x = p.position[i] + h * sb.v[i];
            let mut alpha = if sb.inv_inertia[i] > 0.0 {
                rodrigues::try_compose(p.rotation[i], h * sb.w[i])
                    .ok_or_else(|| Error::fault(step, Fault::HalfTurn { particle: id }))?
            } else {
                p.rotation[i]
            };
            if let Some(d) = self.model.domain {
                if p.flags[i] & FLAG_REMOVED == 0 && !d.contains(x) {
                    if !d.remove {
                        return Err(Error::fault(
                            step,
                            Fault::LeftDomain {
                                particle: id,
                                position: Some(x.to_array()),
                            },
                        ));
                    }
                    // Parked where it left with the velocity it left with, its rotation
                    // as before the step and not spinning (as integrate_predict and
                    // the GPU's hard_advance park it).
                    alpha = p.rotation[i];
                    leaving.push(i);
                }
            }
            x_new[i] = x;
            a_new[i] = alpha;
        }
        let mut body_new = Vec::new();
        if let Some(bodies) = &self.bodies {
            for (k, s) in bodies.state.iter().enumerate() {
                let t = &bodies.types[bodies.kind[k] as usize];
                let j = self.free + k;
                let x = s.x + h * sb.v[j];
                let alpha = rodrigues::try_compose(s.alpha, h * sb.w[j])
                    .ok_or_else(|| Error::fault(step, bodies.fault(k, ClumpFault::HalfTurn)))?;
                if let Some(d) = self.model.domain {
                    if !d.contains(x) {
                        let position = Some(x.to_array());
                        return Err(Error::fault(
                            step,
                            bodies.fault(k, ClumpFault::LeftDomain { position }),
                        ));
                    }
                }
                // The state's spin variable: π' = π* + Σ r × p exactly (a tensor), Ω'
                // itself (a scalar tensor, the sphere path).
                let spin = match t.inertia.scalar {
                    Some(_) => sb.w[j],
                    None => s.omega + h * bodies.load[k].1 + sb.angular_impulse[k],
                };
                body_new.push(Kinematics {
                    x,
                    v: sb.v[j],
                    alpha,
                    omega: spin,
                });
            }
        }
        let p = &mut self.model.particles;
        p.position[..self.free].copy_from_slice(&x_new);
        p.rotation[..self.free].copy_from_slice(&a_new);
        // A removed particle keeps the state it left with (removed.csv's, whenever it
        // is read); the solver held it at rest.
        for i in 0..self.free {
            if p.flags[i] & FLAG_REMOVED == 0 {
                p.velocity[i] = sb.v[i];
                p.angular_velocity[i] = sb.w[i];
            }
        }
        for &i in &leaving {
            // Out of every contact from the next step on (build_contacts, the list).
            p.flags[i] |= FLAG_REMOVED;
            p.angular_velocity[i] = DVec3::ZERO;
            let id = self.storage.layout.id(i);
            self.exit_steps.insert(id as u32, step);
            log::debug!("step {step}: particle {id} left the domain and was removed");
        }
        if let Some(bodies) = &mut self.bodies {
            // Each body's spheres follow it.
            for (k, s) in body_new.into_iter().enumerate() {
                let t = &bodies.types[bodies.kind[k] as usize];
                // The body's Ω at its new attitude (what its output row shows), as
                // clump_gather gives its spheres.
                let w = angular_velocity(&t.inertia, s.alpha, s.omega);
                let first = bodies.first[k] as usize;
                for (l, sphere) in t.spheres.iter().enumerate() {
                    let i = first + l;
                    let lever = rodrigues::rotate(s.alpha, sphere.offset);
                    p.position[i] = s.x + lever;
                    p.velocity[i] = member_velocity(s.v, w, lever);
                    p.rotation[i] = s.alpha;
                    p.angular_velocity[i] = w;
                }
                bodies.state[k] = s;
            }
            bodies.saved.clone_from(&bodies.state);
        }

        // (The neighbour list learns of them at its next build: `rebuild_sorted` marks
        // the absent first.)
        // Warm start of the next step, in the world frame.
        let c = &hard.contacts;
        hard.warm.clear();
        for k in 0..c.len() {
            let [ln, lt, lo] = c.impulse[k];
            if [ln, lt, lo] != [0.0; 3] {
                let [nn, t, o] = c.frame[k];
                hard.warm.push((c.key[k], ln * nn + lt * t + lo * o));
            }
        }
        let row = self.solver_row(hard, step, solved, e_dissipated);

        let mut f = std::mem::take(&mut self.spare_forces);
        let result = self.evaluate_forces(&mut f, step, false, None, None);
        match result {
            Ok(()) => {
                if let Some(b) = &mut self.bodies {
                    b.gather_loads(&f.particles, self.model.gravity);
                }
                self.spare_forces = std::mem::replace(&mut self.forces, f);
                Ok(row)
            }
            Err(e) => {
                self.spare_forces = f;
                Err(e)
            }
        }
    }

    /// Kinetic energy of the solver's velocities (translation and rotation), static
    /// bodies skipped.
    fn kinetic(&self, bodies: &SolverBodies) -> f64 {
        let p = &self.model.particles;
        let mut e = 0.0;
        // In id order, whatever the storage (compacted, ids run past the slots).
        let layout = &self.storage.layout;
        for i in (layout.slots_by_id(layout.id_count(self.free))).filter(|&i| i < self.free) {
            if bodies.inv_mass[i] > 0.0 {
                e += 0.5 * p.mass[i] * bodies.v[i].length_squared();
            }
            if bodies.inv_inertia[i] > 0.0 {
                e += 0.5 * p.inertia[i] * bodies.w[i].length_squared();
            }
        }
        if let Some(b) = &self.bodies {
            for (k, s) in b.state.iter().enumerate() {
                let t = &b.types[b.kind[k] as usize];
                let (v, w) = (bodies.v[self.free + k], bodies.w[self.free + k]);
                e += 0.5 * t.mass * v.length_squared();
                e += 0.5 * w.dot(t.inertia.spatial(s.alpha) * w);
            }
        }
        e
    }

    /// The body of particle `i` in the solver (itself, or `free + clump`) with its
    /// centre of mass.
    fn owner(&self, owners: &[u32], i: usize) -> (u32, DVec3) {
        if i < self.free {
            return (i as u32, self.model.particles.position[i]);
        }
        let k = owners[i] as usize;
        let x = self.bodies.as_ref().map_or(DVec3::ZERO, |b| b.state[k].x);
        ((self.free + k) as u32, x)
    }

    /// The step's contacts: every listed pair (and particle–wall pair) with a gap below
    /// its margin (`[contact] margin`, else `h(s_i + s_j)`, `h s_i` against a wall), in
    /// contact order, with frame, levers, block, gap term, μ and warm-start
    /// impulse.
    fn build_contacts(&self, hard: &mut HardState, h: f64) {
        let p = &self.model.particles;
        let speed = &hard.speed;
        let fixed = hard.params.margin;
        let pair_margin = |i: usize, j: Option<usize>| {
            fixed.unwrap_or_else(|| h * (speed[i] + j.map_or(0.0, |j| speed[j])))
        };
        // A wall's margin adds its surface speed at the particle (zero at rest).
        let wall_margin =
            |i: usize, vw: DVec3| fixed.unwrap_or_else(|| h * (speed[i] + vw.length()));
        let n = p.len();
        let eps = hard.params.error_reduction;
        let gap_term = |xi: f64| if xi > 0.0 { -xi / h } else { -eps * xi / h };
        // Each clump sphere's clump.
        let mut owners = vec![0u32; n];
        if let Some(b) = &self.bodies {
            for (k, (&first, &kind)) in b.first.iter().zip(&b.kind).enumerate() {
                let count = b.types[kind as usize].spheres.len();
                owners[first as usize..first as usize + count].fill(k as u32);
            }
        }
        let bodies = &hard.bodies;
        let tables = &hard.tables;
        let c = &mut hard.contacts;
        c.clear();
        let removed = |k: usize| p.flags[k] & FLAG_REMOVED != 0;
        // One body's share of the block: (1/m, I⁻¹ in the world frame).
        let share = |k: u32| -> (f64, DMat3) {
            if k == WALL {
                (0.0, DMat3::ZERO)
            } else if (k as usize) < bodies.free {
                let k = k as usize;
                (
                    bodies.inv_mass[k],
                    DMat3::from_diagonal(DVec3::splat(bodies.inv_inertia[k])),
                )
            } else {
                let k = k as usize;
                (bodies.inv_mass[k], bodies.inv_tensor[k - bodies.free])
            }
        };
        let mut push = |body: [u32; 2],
                        key: [u32; 2],
                        nrm: DVec3,
                        lever: [DVec3; 2],
                        xi,
                        mu,
                        wall_velocity: DVec3| {
            let [a, b] = body;
            let sphere = [a, b]
                .iter()
                .all(|&k| k == WALL || (k as usize) < bodies.free);
            let (ma, ia) = share(a);
            let (mb, ib) = share(b);
            if ma + mb <= 0.0 {
                // Two held particles: no normal impulse can act.
                return;
            }
            let [fx, fy, fz] = contact_frame(nrm.to_array());
            let block = if sphere {
                // diag(a, c, c): the levers are along n.
                let j = |k: u32, r: DVec3| {
                    if k == WALL {
                        0.0
                    } else {
                        bodies.inv_inertia[k as usize] * r.length_squared()
                    }
                };
                let an = ma + mb;
                let ct = an + j(a, lever[0]) + j(b, lever[1]);
                [[an, 0.0, 0.0], [0.0, ct, 0.0], [0.0, 0.0, ct]]
            } else {
                let m3 = |m: DMat3| m.transpose().to_cols_array_2d();
                delassus(
                    &[
                        (ma, m3(ia), lever[0].to_array()),
                        (mb, m3(ib), lever[1].to_array()),
                    ],
                    [fx, fy, fz],
                )
            };
            c.body.push(body);
            c.key.push(key);
            c.frame.push([
                DVec3::from_array(fx),
                DVec3::from_array(fy),
                DVec3::from_array(fz),
            ]);
            c.lever.push(lever);
            c.block.push(block);
            c.sphere.push(sphere);
            c.gap_term.push(gap_term(xi));
            c.gap.push(xi);
            c.mu.push(mu);
            c.impulse.push([0.0; 3]);
            c.wall_velocity.push(wall_velocity);
            c.case.push(ContactCase::Separating);
        };
        // Particles in id order, each pair by its lower id, keyed by ids: the contact
        // order (the NBGS sweep's, the colouring's) and the warm-start keys do not
        // depend on the storage (issue 44).
        let layout = &self.storage.layout;
        // Wall and mesh keys count from the ids, not the slots (compaction changes
        // the slot count, not the ids).
        let n_ids = self.id_count();
        for i in layout.slots_by_id(layout.id_count(n)) {
            if removed(i) {
                continue;
            }
            let id_i = layout.id(i) as u32;
            let (xi_pos, ri) = (p.position[i], p.radius[i]);
            let (bi, ci) = self.owner(&owners, i);
            for &j in self.neighbors.of(i) {
                let j = j as usize;
                let id_j = layout.id(j) as u32;
                if id_j <= id_i || removed(j) {
                    continue;
                }
                let d = p.position[j] - xi_pos;
                let dist = d.length();
                let gap = dist - ri - p.radius[j];
                if gap >= pair_margin(i, Some(j)) {
                    continue;
                }
                // Coincident centres have no normal; any unit vector serves.
                let nrm = if dist > 0.0 { d / dist } else { DVec3::Z };
                let (bj, cj) = self.owner(&owners, j);
                // A free sphere's lever is r n exactly; a clump sphere's adds its offset.
                let ra = if i < self.free {
                    ri * nrm
                } else {
                    (xi_pos - ci) + ri * nrm
                };
                let rb = if j < self.free {
                    -p.radius[j] * nrm
                } else {
                    (p.position[j] - cj) - p.radius[j] * nrm
                };
                let mu = tables.pair(p.material[i], p.material[j]).mu_s;
                push([bi, bj], [id_i, id_j], nrm, [ra, rb], gap, mu, DVec3::ZERO);
            }
            for (w, wall) in self.model.walls.iter().enumerate() {
                let dist = wall.distance(xi_pos);
                let gap = dist - ri;
                let vw = match &self.walls {
                    Some(ws) => ws.plane_poses[w].surface_velocity(xi_pos - dist * wall.normal),
                    None => DVec3::ZERO,
                };
                if gap >= wall_margin(i, vw) {
                    continue;
                }
                let nrm = wall.normal;
                let rb = if i < self.free {
                    -ri * nrm
                } else {
                    (xi_pos - ci) - ri * nrm
                };
                let mu = tables.wall(w, p.material[i]).mu_s;
                push(
                    [WALL, bi],
                    [id_i, (n_ids + w) as u32],
                    nrm,
                    [DVec3::ZERO, rb],
                    gap,
                    mu,
                    vw,
                );
            }
            // Mesh features: keys N + walls + feature key (ascending in candidate
            // order: a feature is emitted by its own triangle).
            if let Some(ws) = &self.walls {
                let nw = self.model.walls.len();
                // The list's reserve bounds every wall contact's margin.
                let reach = ri + ws.list.reserve;
                ws.surfaces.contacts(ws.list.of(i), xi_pos, reach, |mc| {
                    let gap = mc.distance - ri;
                    let vw = ws.surfaces.poses[mc.mesh as usize].surface_velocity(mc.point);
                    if gap >= wall_margin(i, vw) {
                        return;
                    }
                    // From the wall into the particle.
                    let nrm = -mc.normal;
                    let rb = if i < self.free {
                        -ri * nrm
                    } else {
                        (xi_pos - ci) - ri * nrm
                    };
                    let mu = tables.mesh(mc.mesh as usize, p.material[i]).mu_s;
                    push(
                        [WALL, bi],
                        [id_i, (n_ids + nw) as u32 + mc.key],
                        nrm,
                        [DVec3::ZERO, rb],
                        gap,
                        mu,
                        vw,
                    );
                });
            }
        }
        if hard.params.warm_start {
            // Both key lists ascend: a merge.
            let mut k = 0;
            for (slot, key) in c.key.iter().enumerate() {
                while k < hard.warm.len() && hard.warm[k].0 < *key {
                    k += 1;
                }
                if k < hard.warm.len() && hard.warm[k].0 == *key {
                    let pw = hard.warm[k].1;
                    let [nn, t, o] = c.frame[slot];
                    let lam = [pw.dot(nn), pw.dot(t), pw.dot(o)];
                    c.impulse[slot] = crate::physics::hard::project_cone(lam, c.mu[slot]);
                }
            }
        }
    }

    /// The `solver.csv` row of a step just taken (positions already advanced).
    fn solver_row(
        &self,
        hard: &HardState,
        step: u64,
        solved: super::kernels::hard::SolveResult,
        e_dissipated: f64,
    ) -> SolverRow {
        let c = &hard.contacts;
        let p = &self.model.particles;
        let mut row = SolverRow {
            step,
            sweeps: solved.sweeps,
            residual: solved.residual,
            converged: solved.converged,
            contacts: c.len() as u32,
            e_dissipated,
            ..SolverRow::default()
        };
        // Keys count walls from the ids (build_contacts).
        let n = self.id_count();
        for k in 0..c.len() {
            // By the impulse itself: none, inside the cone, or on its boundary (a
            // frictionless contact with a normal impulse counts as sliding).
            let [ln, lt, lo] = c.impulse[k];
            let tangential = (lt * lt + lo * lo).sqrt();
            if ln <= 0.0 && tangential == 0.0 {
                row.separating += 1;
            } else if tangential < c.mu[k] * ln * (1.0 - 1e-9) {
                row.sticking += 1;
            } else {
                row.sliding += 1;
            }
            // The pair's particles (not its solver bodies: a clump is one body).
            // Keys are ids; the particles' slots hold their state.
            let [i, j] = c.key[k].map(|x| x as usize);
            let i = self.storage.layout.slot(i);
            let (xi, ri) = (p.position[i], p.radius[i]);
            let nw = self.model.walls.len();
            let gap = if j >= n + nw {
                match &self.walls {
                    Some(ws) => {
                        (ws.surfaces.feature_point((j - n - nw) as u32, xi) - xi).length() - ri
                    }
                    None => 0.0,
                }
            } else if j >= n {
                self.model.walls[j - n].distance(xi) - ri
            } else {
                let j = self.storage.layout.slot(j);
                (p.position[j] - xi).length() - ri - p.radius[j]
            };
            row.max_penetration = row.max_penetration.max(-gap);
        }
        row
    }
}
