//! [`GpuBackend`] as a [`Backend`]: advancing by batches of submitted steps, the status
//! words and their faults, diagnostics by GPU reduction, and the state read back for
//! outputs and checkpoints.

use glam::DVec3;

use super::buffers::Field;
use super::plan::groups;
use super::profile::Profiler;
use super::{bind, contract, placement, GpuBackend, Precision};
use super::{STATUS_AHEAD, STATUS_ERROR, STATUS_FIRST_INDEX, STATUS_STEP, STATUS_WORDS};
use crate::backend::profile::KernelProfile;
use crate::backend::{Backend, BackendKind, Frame, StateSnapshot};
use crate::diagnostics::{Diagnostics, Potentials};
use crate::error::{Error, Fault, Result};
use crate::gpu::kernels::KernelId;
use crate::model::Particles;
use crate::neighbor::{contact_counts, NeighborList};

/// Steps encoded per command buffer.
const STEPS_PER_SUBMIT: u64 = 64;
// A batch's steps have their own wall-pose slots (`write_wall_poses`).
const _: () = assert!(STEPS_PER_SUBMIT <= contract::POSE_SLOTS as u64);

impl GpuBackend {
    pub(super) fn status(&self) -> Result<[u32; STATUS_WORDS]> {
        let raw = self.read(bind::STATUS, 4 * STATUS_WORDS as u64)?;
        let mut s = [0u32; STATUS_WORDS];
        s.copy_from_slice(&bytemuck::pod_collect_to_vec::<u8, u32>(
            &raw[..4 * STATUS_WORDS],
        ));
        Ok(s)
    }

    /// Reads the status words; turns a raised kernel error into its [`Error::Fault`].
    pub(super) fn check_status(&mut self) -> Result<()> {
        let s = self.status()?;
        // An error of a fused predict is the next step's (step_begin no longer counts it).
        self.steps = s[STATUS_STEP] as u64 + u64::from(s[STATUS_AHEAD] != 0);
        // Breaks of the steps advanced (of a failed advance too: they happened).
        self.sync_breaks(s[contract::STATUS_BREAKS as usize])?;
        let bits = s[STATUS_ERROR] & contract::ERROR_CODES;
        if bits == 0 {
            return Ok(());
        }
        let code = bits.trailing_zeros();
        let index = s[STATUS_FIRST_INDEX + code as usize];
        if code == contract::ERR_OVERLAP {
            if let Some(fault) = self.overlap_fault(index)? {
                return Err(Error::fault(self.steps, fault));
            }
        }
        let bonds = &self.model.bonds;
        let ends = |b: usize| bonds.get(b).map(|b| (b.i, b.j));
        let free = self.free_ids();
        match contract::fault(code, index, ends, self.max_contacts, free) {
            Some(fault) => Err(Error::fault(self.steps, fault)),
            None => Err(Error::Backend(format!(
                "step {}: a kernel raised the unknown error code {code} at index {index}",
                self.steps
            ))),
        }
    }
}

impl GpuBackend {
    /// The [`Fault::Overlap`] of `particle`, the lowest to raise
    /// [`contract::ERR_OVERLAP`]: what it overlaps is its word at
    /// [`contract::STATUS_DETAIL`]. `None` for a word that names nothing (a contract
    /// mismatch).
    fn overlap_fault(&self, particle: u32) -> Result<Option<Fault>> {
        if particle >= self.n {
            return Ok(None);
        }
        let at = 4 * (u64::from(contract::STATUS_DETAIL) + u64::from(particle));
        let raw = self.read_buffer_at(&self.buffers[bind::STATUS as usize], at, 4)?;
        let Some(word) = raw.get(..4).and_then(|b| b.try_into().ok()) else {
            return Ok(None);
        };
        let m = &self.model;
        let (walls, meshes) = (m.walls.len() as u32, m.meshes.len() as u32);
        let other = contract::overlap_partner(u32::from_le_bytes(word), self.n, walls, meshes);
        Ok(other.map(|other| Fault::Overlap {
            particle: particle as usize,
            other,
            fraction: None,
            limit: m.contact.map_or(f64::INFINITY, |c| c.max_overlap),
            dt: self.dt,
            recommended_dt: self.dt_advice,
        }))
    }
}

impl Backend for GpuBackend {
    fn neighbor_builds(&mut self) -> Result<Option<u64>> {
        if !self.contact {
            return Ok(None);
        }
        Ok(Some(u64::from(self.neighbor_stats()?.0)))
    }

    fn listed_neighbors(&mut self) -> Result<Option<u64>> {
        if !self.contact {
            return Ok(None);
        }
        // Each row is its count, then the ids.
        let row = self.max_neighbors as usize + 1;
        let words: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_rows(bind::NEIGHBORS, 0, 4 * row)?);
        Ok(Some(words.chunks_exact(row).map(|r| u64::from(r[0])).sum()))
    }

    fn wall_loads(&mut self) -> Result<Option<Vec<crate::backend::WallLoad>>> {
        self.wall_loads_now()
    }

    fn bond_breaks(&mut self, after: u64) -> Result<Vec<crate::backend::BondBreak>> {
        Ok(self.breakage.as_ref().map_or_else(Vec::new, |b| {
            let from = b.log.partition_point(|x| x.step <= after);
            b.log[from..].to_vec()
        }))
    }

    fn exits(&mut self, after: u64) -> Result<Vec<crate::backend::Exit>> {
        let (removed, steps) = self.read_removals()?;
        let mut exits: Vec<(u64, u32)> = (steps.iter().zip(&removed))
            .filter(|&(&s, _)| s > after)
            .map(|(&s, &id)| (s, id))
            .collect();
        if exits.is_empty() {
            return Ok(Vec::new());
        }
        exits.sort_unstable();
        // Removal is refused with clumps: every row is a particle's.
        let p = self.spheres()?;
        Ok(exits
            .into_iter()
            .map(|(step, id)| crate::backend::Exit {
                step,
                id,
                position: p.position[id as usize],
                velocity: p.velocity[id as usize],
            })
            .collect())
    }

    fn insertion_counts(&self) -> Vec<crate::neighbor::InsertCount> {
        self.insertion
            .as_ref()
            .map_or_else(Vec::new, |i| i.counts.clone())
    }

    fn name(&self) -> String {
        format!("gpu ({}, {})", self.ctx.summary.name, self.precision)
    }

    fn take_solver_rows(&mut self) -> Vec<crate::backend::SolverRow> {
        self.hard
            .as_mut()
            .map_or_else(Vec::new, |h| std::mem::take(&mut h.rows))
    }

    fn kernel_profile(&mut self, n: u64) -> Result<Option<KernelProfile>> {
        let Some(profiler) = Profiler::new(&self.ctx.device, &self.ctx.queue) else {
            return Ok(None);
        };
        self.profiler = Some(profiler);
        let start = std::time::Instant::now();
        let result = self.advance(n);
        let wall_seconds = start.elapsed().as_secs_f64();
        let profiler = self.profiler.take();
        result?;
        Ok(profiler.map(|p| KernelProfile {
            steps: n,
            wall_seconds,
            ..p.totals()
        }))
    }

    fn storage_order(&self) -> Option<(u64, f64)> {
        if !self.contact {
            return None;
        }
        // Rows by id (read_rows), entries slots: the distance from the row's own slot.
        let row = self.max_neighbors as usize + 1;
        let raw = self.read_rows(bind::NEIGHBORS, 0, 4 * row).ok()?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&raw);
        let (mut total, mut entries) = (0u64, 0u64);
        for (i, r) in words.chunks_exact(row).enumerate() {
            let s = self.layout.slot(i) as i64;
            for &j in &r[1..1 + (r[0] as usize).min(row - 1)] {
                total += (i64::from(j) - s).unsigned_abs();
                entries += 1;
            }
        }
        // The set-up's sort (as the CPU counts it), then those during the run.
        let sorts = match &self.sorting {
            Some(s) => u64::from(s.set_up) + s.sorts,
            None => u64::from(!self.layout.is_identity()),
        };
        Some((sorts, total as f64 / entries.max(1) as f64))
    }

    fn sort_time(&self) -> Option<(u64, u64, f64)> {
        (self.sorting.as_ref()).map(|s| (s.attempts, s.sorts, s.seconds))
    }

    fn kernel_path(&self) -> Option<String> {
        if let Some(h) = &self.hard {
            return Some(format!("hard contacts, {} solver", h.params.solver.name()));
        }
        let mut parts = vec![if self.fuse {
            "fused steps"
        } else {
            "unfused steps"
        }];
        if !self.chunks.is_empty() {
            parts.push(if self.fuse && self.inline {
                "bond terms inline"
            } else {
                "bond terms from bond_forces"
            });
            parts.push(if self.compact {
                "compact bond records"
            } else {
                "full bond records"
            });
        }
        if self.granular {
            parts.push(if self.fuse && self.merged {
                "contact pass merged"
            } else {
                "contact pass split"
            });
        }
        if self.fuse {
            parts.push(if self.direct {
                "positions predicted in place"
            } else {
                "positions via pos_next"
            });
        }
        Some(parts.join(", "))
    }

    fn step_count(&self) -> u64 {
        self.steps
    }

    fn time(&self) -> f64 {
        self.steps as f64 * self.dt
    }

    /// Reads back the state and, in `f32`, the Kahan compensation terms (9 per
    /// particle: x's, then v's and Ω's) and the device's own positions (which the
    /// absolute ones, `x − c + O`, do not round back to).
    fn checkpoint_state(&mut self) -> Result<StateSnapshot> {
        // One read-back gives both the absolute positions and the device's own.
        let device = self.read_field(Field::Pos)?;
        let position_kahan = self.position_kahan()?;
        let (bodies, body_compensation, body_device_position) = self.body_snapshot()?;
        let (removed, exit_steps) = self.read_removals()?;
        let (compensation, device_position) = match self.precision {
            Precision::F32 => {
                let rows: Vec<f32> =
                    bytemuck::pod_collect_to_vec::<u8, f32>(&self.read_rows(bind::KAHAN, 0, 24)?);
                let narrow = |v: &DVec3| [v.x as f32, v.y as f32, v.z as f32];
                let compensation = position_kahan
                    .iter()
                    .zip(rows.chunks(6))
                    .flat_map(|(c, vw)| narrow(c).into_iter().chain(vw.iter().copied()))
                    .collect();
                (compensation, device.iter().flat_map(narrow).collect())
            }
            Precision::F64 => (Vec::new(), Vec::new()),
        };
        let mut snapshot = StateSnapshot {
            broken: self
                .breakage
                .as_ref()
                .map_or_else(Vec::new, |b| b.log.clone()),
            backend: BackendKind::Gpu,
            backend_name: self.name(),
            precision: self.precision,
            step: self.steps,
            integrator: self.integrator,
            dt: self.dt,
            position: self.absolute(&device, &position_kahan),
            velocity: self.read_field(Field::Vel)?,
            rotation: self.read_field(Field::Rot)?,
            angular_velocity: self.read_field(Field::Omega)?,
            compensation,
            origin: self.origin,
            device_position,
            contacts: self.contact_state()?,
            removed,
            exit_steps,
            bodies,
            body_compensation,
            body_device_position,
            hard_impulses: self.hard_impulses()?,
            inserted: self
                .insertion
                .as_ref()
                .map_or_else(Vec::new, |i| i.counts.clone()),
        };
        self.canonical_out_of_system(&mut snapshot);
        Ok(snapshot)
    }

    /// Advances in runs of steps between insertion events, each event run at the end
    /// of its step (`insert_due`).
    fn advance(&mut self, n: u64) -> Result<()> {
        let end = self.steps + n;
        while self.steps < end {
            // Runs end at insertion events and where a sort is due.
            let next = self
                .insertion
                .as_ref()
                .and_then(|ins| ins.next_event(self.steps))
                .map_or(end, |s| s.min(end))
                .min(self.sort_due().map_or(end, |d| d.max(self.steps + 1)));
            self.advance_steps(next - self.steps)?;
            self.insert_due()?;
            self.restore_storage()?;
            self.sort_if_due()?;
        }
        Ok(())
    }

    fn diagnostics(&mut self) -> Result<Diagnostics> {
        // The reduction skips the particles out of the system (dormant, removed): so does
        // the field energy's origin term. Only the host wakes particles, so without
        // removal its flags say which are out: no read-back.
        let mut masses = self.model.particles.mass[..self.free_ids()].to_vec();
        let removal = self.model.domain.is_some_and(|d| d.remove);
        if self.insertion.is_some() || removal {
            let flags = if removal {
                self.read_flags()?
            } else {
                self.model.particles.flags.clone()
            };
            for (m, &f) in masses.iter_mut().zip(&flags) {
                if !crate::backend::in_system(f) {
                    *m = 0.0;
                }
            }
        }
        let mut encoder = self.encoder();
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("reduce"),
                timestamp_writes: None,
            });
            // A leaf per id (more than the slots when storage is compacted).
            self.dispatch(
                &mut pass,
                KernelId::ReducePartials,
                groups(self.id_count() as u32),
            );
            for (c, &len) in self.chunks.iter().enumerate() {
                self.dispatch_chunk(&mut pass, KernelId::ReduceBondPartials, c, groups(len));
            }
            self.dispatch(&mut pass, KernelId::ReduceFinal, 1);
        }
        self.submit("the reductions", encoder)?;
        let q = self.read_reals(bind::RESULT, contract::Q_COUNT as usize)?;
        let at = |slot: u32| q[slot as usize];
        let vec = |slot: u32| DVec3::new(at(slot), at(slot + 1), at(slot + 2));
        let momentum = vec(contract::Q_MOMENTUM);
        let (o, g) = (self.origin, self.model.gravity);
        // The reduction skips clump spheres: their bodies count here, in absolute
        // coordinates (the CPU adds them the same way).
        let (k, r, p, l, f) = self
            .read_bodies()?
            .map_or((0.0, 0.0, DVec3::ZERO, DVec3::ZERO, 0.0), |b| {
                b.kinematic(g)
            });
        Ok(Diagnostics {
            e_broken: self
                .breakage
                .as_ref()
                .map_or(0.0, |b| crate::backend::broken_energy(&b.log)),
            step: self.steps,
            time: self.time(),
            e_kin: at(contract::Q_E_KIN) + k,
            e_rot: at(contract::Q_E_ROT) + r,
            momentum: momentum + p,
            angular_momentum: placement::absolute_angular_momentum(
                vec(contract::Q_ANGULAR_MOMENTUM),
                momentum,
                o,
            ) + l,
            potentials: Potentials {
                field: placement::absolute_field_energy(at(contract::Q_FIELD), &masses, g, o) + f,
                contact: at(contract::Q_CONTACT),
                wall: at(contract::Q_WALL),
                bend: at(contract::Q_BEND),
                axial: at(contract::Q_AXIAL),
                shear: at(contract::Q_SHEAR),
                near_field: at(contract::Q_NEAR_FIELD),
            },
        })
    }

    /// One row per body: the free particles, then one per clump (centre of mass,
    /// velocity, α and spatial Ω).
    fn particles(&mut self) -> Result<Particles> {
        let mut p = self.spheres()?;
        let free = self.sections.free as usize;
        if let Some(b) = self.read_bodies()? {
            p.truncate(free);
            p.extend(&b.rows());
        }
        Ok(p)
    }

    /// Reads back the state (every sphere of every clump), forces, moments and bond
    /// energies; counts the contacts on the host from the read-back positions (a cell
    /// grid with no skin).
    fn frame(&mut self) -> Result<Frame> {
        let particles = self.spheres()?;
        let (mut force, mut moment) = self.forces()?;
        crate::backend::unload_out_of_system(&particles.flags, &mut force, &mut moment);
        let bond_energy = self.bond_energies()?;
        let contact_count = if self.contact {
            let mut list = NeighborList::new(0.0);
            // A clump's spheres overlap each other: never counted as contacts.
            if let Some(b) = &self.bodies {
                list.body = b.body_ids(particles.len());
            }
            list.absent = particles
                .flags
                .iter()
                .map(|&f| crate::model::is_dormant(f))
                .collect();
            list.build(&particles.position, &particles.radius);
            // Moving walls where they are now.
            let walls = self.planes_now();
            contact_counts(&list, &particles.position, &particles.radius, &walls)
        } else {
            vec![0; particles.len()]
        };
        Ok(Frame {
            bond_broken: self.breakage.as_ref().map_or_else(Vec::new, |b| b.broken()),
            step: self.steps,
            time: self.time(),
            particles,
            force,
            moment,
            contact_count,
            bond_energy,
            body_id: self
                .bodies
                .as_ref()
                .map_or_else(Vec::new, |b| b.sphere_bodies(self.sections.free as usize)),
        })
    }
}

impl GpuBackend {
    /// Steps encoded per submission: one while a profile is recorded, so that its
    /// timestamps fit one query set.
    fn steps_per_submit(&self) -> u64 {
        if self.profiler.is_some() {
            1
        } else {
            STEPS_PER_SUBMIT
        }
    }

    /// Advances `n` steps in batches of [`STEPS_PER_SUBMIT`] (or under hard contacts).
    fn advance_steps(&mut self, n: u64) -> Result<()> {
        if self.hard.is_some() {
            return self.advance_hard(n);
        }
        let mut left = n;
        while left > 0 {
            let batch = left.min(self.steps_per_submit());
            // The batch evaluates the forces of steps s + 1 ..= s + batch; the last
            // step of the call records the wall loads.
            self.write_wall_poses(self.steps + (n - left) + 1);
            self.write_mesh_poses(self.steps + (n - left) + 1);
            self.record_loads_at(self.steps + n);
            let mut encoder = self.encoder();
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("steps"),
                    timestamp_writes: None,
                });
                // Step numbers as step_begin counts them (an error stops the count, and
                // every later kernel with it, so a stale parity is never used).
                let done = n - left;
                for k in 0..batch {
                    let index = done + k;
                    self.encode_step(
                        &mut pass,
                        self.steps + index + 1,
                        self.fuse && index > 0,
                        self.fuse && index + 1 < n,
                    );
                }
            }
            self.submit_steps(&format!("{batch} steps"), encoder)?;
            left -= batch;
        }
        self.check_status()
    }

    /// [`Backend::advance`] under hard contacts: batches of steps, each followed by
    /// its `solver.csv` rows; an unconverged solve with `on_nonconvergence = "error"`
    /// stops the run at its step (the rows before it kept).
    fn advance_hard(&mut self, n: u64) -> Result<()> {
        let Some(hard) = self.hard.take() else {
            return Ok(());
        };
        let mut hard = hard;
        let result = self.advance_hard_with(&mut hard, n);
        let rows = result.as_ref().map(|r| r.0.clone()).unwrap_or_default();
        hard.rows.extend(rows);
        self.hard = Some(hard);
        match result {
            Ok((_, None)) => Ok(()),
            Ok((_, Some(e))) | Err(e) => Err(e),
        }
    }

    /// The batches of [`Self::advance_hard`]: the rows read back, and the error that
    /// stopped the run.
    fn advance_hard_with(
        &mut self,
        hard: &mut super::hard::HardGpu,
        n: u64,
    ) -> Result<(Vec<crate::backend::SolverRow>, Option<Error>)> {
        let batch_max = u64::from(contract::HARD_ROWS).min(self.steps_per_submit());
        let mut rows = Vec::new();
        let mut left = n;
        while left > 0 {
            let batch = left.min(batch_max);
            let before = self.steps;
            // The walls' poses of the batch's steps (a batch has at most POSE_SLOTS).
            self.write_wall_poses(self.steps + 1);
            self.write_mesh_poses(self.steps + 1);
            let mut encoder = self.encoder();
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("hard steps"),
                    timestamp_writes: None,
                });
                for _ in 0..batch {
                    self.encode_hard_step(&mut pass, hard);
                }
            }
            self.submit_steps(&format!("{batch} hard-contact steps"), encoder)?;
            left -= batch;
            let status = self.status()?;
            let bits = status[STATUS_ERROR] & contract::ERROR_CODES;
            if bits == 1 << contract::ERR_HARD_SKIN {
                // The margin outran the skin at this step, before anything moved: the
                // skin grows and the step is taken again.
                let step = u64::from(status[STATUS_STEP]);
                if step > before + 1 {
                    rows.extend(self.read_hard_rows(&hard.sections, before + 1, step - 1)?);
                }
                if self.grow_hard_skin(hard, step)? {
                    left += before + batch - (step - 1);
                    continue;
                }
            }
            let budget = [
                contract::ERR_HARD_SWEEP_BUDGET,
                contract::ERR_HARD_COLOR_BUDGET,
            ]
            .into_iter()
            .find(|&code| bits == 1 << code);
            if let Some(code) = budget {
                // The step needed more sweeps or colours than were encoded, before
                // anything moved: more are encoded and the step is taken again.
                let step = u64::from(status[STATUS_STEP]);
                if step > before + 1 {
                    rows.extend(self.read_hard_rows(&hard.sections, before + 1, step - 1)?);
                }
                let index = status[STATUS_FIRST_INDEX + code as usize];
                self.grow_hard_budget(hard, step, code, index);
                left += before + batch - (step - 1);
                continue;
            }
            let no_convergence = 1 << contract::ERR_HARD_NO_CONVERGENCE;
            if bits & no_convergence != 0
                && bits.trailing_zeros() == contract::ERR_HARD_NO_CONVERGENCE
            {
                let step = u64::from(
                    status[STATUS_FIRST_INDEX + contract::ERR_HARD_NO_CONVERGENCE as usize],
                );
                if step > before + 1 {
                    rows.extend(self.read_hard_rows(&hard.sections, before + 1, step - 1)?);
                }
                self.steps = step;
                let e = self.hard_no_convergence(hard, step)?;
                return Ok((rows, Some(e)));
            }
            if let Err(e) = self.check_status() {
                // The rows of the steps completed before the one that failed.
                let done = self.steps.saturating_sub(1);
                if done > before {
                    rows.extend(self.read_hard_rows(&hard.sections, before + 1, done)?);
                }
                return Ok((rows, Some(e)));
            }
            rows.extend(self.read_hard_rows(&hard.sections, before + 1, self.steps)?);
        }
        Ok((rows, None))
    }

    /// Every particle's state, a clump's spheres included.
    pub(super) fn spheres(&mut self) -> Result<Particles> {
        let mut p = self.model.particles.clone();
        p.position = self.positions()?;
        p.velocity = self.read_field(Field::Vel)?;
        p.rotation = self.read_field(Field::Rot)?;
        p.angular_velocity = self.read_field(Field::Omega)?;
        if self.model.domain.is_some_and(|d| d.remove) || self.insertion.is_some() {
            p.flags = self.read_flags()?;
        }
        Ok(p)
    }
}
