//! The step sequence: how one step, the force evaluation and a submission are encoded
//! as dispatches of the compiled kernels ([`KernelId`]), in the order of the CPU twin.

use super::plan::groups;
use super::{bind, GpuBackend};
use crate::error::Result;
use crate::gpu::kernels::KernelId;

impl GpuBackend {
    /// Finishes and submits `encoder`; a wgpu error in encoding or submission, or a
    /// lost device, becomes [`Error::Gpu`](crate::error::Error::Gpu) naming `what`.
    pub(super) fn submit(&self, what: &str, encoder: wgpu::CommandEncoder) -> Result<()> {
        self.ctx.scoped(&format!("submitting {what}"), || {
            self.ctx.queue.submit([encoder.finish()]);
        })
    }

    /// [`Self::submit`] for a submission of steps: while a profile is recorded, its
    /// timestamps are resolved at its end and read back into the profile.
    pub(super) fn submit_steps(&self, what: &str, mut encoder: wgpu::CommandEncoder) -> Result<()> {
        let queries = self
            .profiler
            .as_ref()
            .map_or(0, |p| p.resolve(&mut encoder));
        self.submit(what, encoder)?;
        if let Some(p) = &self.profiler {
            let raw = if queries > 0 {
                let bytes = u64::from(queries) * wgpu::QUERY_SIZE as u64;
                self.read_buffer_at(&p.resolve, 0, bytes)?
            } else {
                Vec::new()
            };
            p.collect(&raw[..raw.len().min(queries as usize * 8)]);
        }
        Ok(())
    }

    /// Runs `dispatch`, between two timestamps while a profile is recorded.
    pub(super) fn timed(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        dispatch: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) {
        match &self.profiler {
            Some(p) => p.around(pass, name, dispatch),
            None => dispatch(pass),
        }
    }

    pub(super) fn encoder(&self) -> wgpu::CommandEncoder {
        self.ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("varidem"),
            })
    }

    pub(super) fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId, groups: u32) {
        self.dispatch_chunk(pass, name, 0, groups);
    }

    /// Dispatches `name` with the bind group of bond or row chunk `chunk` (0 for
    /// unchunked kernels).
    pub(super) fn dispatch_chunk(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        chunk: usize,
        groups: u32,
    ) {
        self.bind(pass, name, chunk);
        self.timed(pass, name, |pass| pass.dispatch_workgroups(groups, 1, 1));
    }

    /// Sets `name`'s pipeline and its bind group of chunk `chunk`.
    fn bind(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId, chunk: usize) {
        let k = &self.kernels[&name];
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &k.bind_groups[chunk], &[]);
    }

    /// Dispatches `name` with the workgroup count at entry `entry` of `grid_args` (see
    /// [`grid_args`](super::plan::grid_args)): the grid kernels launch no invocation at all between rebuilds.
    pub(super) fn dispatch_grid(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        chunk: usize,
        entry: usize,
    ) {
        self.bind(pass, name, chunk);
        let offset = 4 * (1 + 3 * entry as u64);
        let args = &self.buffers[bind::GRID_ARGS as usize];
        self.timed(pass, name, |pass| {
            pass.dispatch_workgroups_indirect(args, offset)
        });
    }

    /// Dispatches a [`KernelId::row_chunked`] kernel once per row chunk, over its particles.
    /// Every particle's work does not depend on the chunking, so the results are the
    /// same bits as one dispatch over all particles.
    pub(super) fn dispatch_rows(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId) {
        self.dispatch_rows_from(pass, name, 0);
    }

    /// [`Self::dispatch_rows`] with the bind groups from `first` on: a kernel of
    /// [`KernelId::by_parity`] has the odd-step set after the even one.
    pub(super) fn dispatch_rows_from(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        name: KernelId,
        first: usize,
    ) {
        for (c, &(_, count)) in self.rows.iter().enumerate() {
            self.dispatch_chunk(pass, name, first + c, groups(count));
        }
    }

    /// The neighbour grid and lists, rebuilt when stale: `grid_gate` sets the grid
    /// kernels' workgroup counts, zero unless stale.
    pub(super) fn encode_grid(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.dispatch(pass, KernelId::GridGate, 1);
        self.dispatch_grid(pass, KernelId::GridClear, 0, 0);
        self.dispatch_grid(pass, KernelId::GridInsert, 0, 1);
        for c in 0..self.rows.len() {
            self.dispatch_grid(pass, KernelId::NeighborBuild, c, 2 + c);
        }
        self.dispatch(pass, KernelId::GridFinish, 1);
    }

    /// Grid (when stale), bond forces and particle forces.
    /// `step` is the step count once this evaluation's step has begun: its parity picks
    /// the history copy granular_forces writes.
    /// `fuse`: end in `particle_forces_predict` instead of `particle_forces`.
    pub(super) fn encode_forces(&self, pass: &mut wgpu::ComputePass<'_>, step: u64, fuse: bool) {
        // Moving meshes placed at this step, before any contact reads them.
        if self.sections.moving_meshes {
            let s = &self.sections;
            let items = (s.mesh_tris - s.mesh_verts).max(s.mesh_triangles);
            self.dispatch(pass, KernelId::MeshPlace, groups(items));
        }
        if self.contact {
            self.encode_grid(pass);
        }
        // A fused step's energies are never read (the host reads them after the last
        // step of an advance, which is not fused): its kernels do not store them.
        let (granular, bonds) = if fuse {
            (
                KernelId::GranularForcesNoEnergy,
                KernelId::BondForcesNoEnergy,
            )
        } else {
            (KernelId::GranularForces, KernelId::BondForces)
        };
        let parity = (step & 1) as usize;
        // Merged fused steps run the contact pass in particle_forces_predict.
        if self.granular && !(fuse && self.merged) {
            self.dispatch_rows_from(pass, granular, parity * self.rows.len());
        }
        // particle_forces gathers the last chunk's bond results itself, and fused steps
        // with inline bond terms compute them there (the one chunk).
        let last = self.chunks.len().saturating_sub(1);
        for (c, &len) in self.chunks.iter().enumerate() {
            if fuse && self.inline {
                break;
            }
            self.dispatch_chunk(pass, bonds, c, groups(len));
            if c < last {
                self.dispatch_chunk(pass, KernelId::BondGather, c, groups(self.n));
            }
        }
        if fuse {
            self.dispatch_rows_from(
                pass,
                KernelId::ParticleForcesPredict,
                parity * self.rows.len(),
            );
        } else {
            self.dispatch_rows(pass, KernelId::ParticleForces);
            // Breakable bonds (issue 47): the loads of the bonds that broke in this
            // evaluation leave the stored forces after the kick, chunk by chunk (steps
            // that can break bonds are never fused).
            if self.breakage.is_some() {
                for (c, &len) in self.chunks.iter().enumerate() {
                    if len > 0 {
                        self.dispatch_chunk(pass, KernelId::BondUnload, c, groups(self.n));
                    }
                }
            }
            // The bodies' loads from their spheres' forces, and their correct half.
            if self.sections.bodies > 0 {
                self.dispatch(pass, KernelId::ClumpGather, groups(self.sections.bodies));
            }
        }
    }

    /// One step: predict, forces, and the correct half, which ends particle_forces
    /// (except in the set-up evaluation, flagged `PARAM_FIRST`).
    ///
    /// `predicted`: the previous step ended in `particle_forces_predict`, which
    /// predicted this one, so only its positions are committed. `fuse`: end in
    /// `particle_forces_predict` (predict the next step); the last step of an advance
    /// does not, so the state read back afterwards is that of a completed step.
    pub(super) fn encode_step(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        step: u64,
        predicted: bool,
        fuse: bool,
    ) {
        self.dispatch(pass, KernelId::StepBegin, 1);
        if predicted {
            // Predicted in place (PARAM_POS_DIRECT): nothing to commit.
            if !self.direct {
                self.dispatch(pass, KernelId::CommitPos, groups(self.n));
            }
        } else {
            // Bound with the next step's parity: its `*_new` motion records are the
            // copy this step's merged contact pass reads.
            let parity = ((step + 1) & 1) as usize;
            if self.sections.bodies == 0 {
                self.dispatch_rows_from(pass, KernelId::IntegratePredict, parity * self.rows.len());
            } else {
                // Over the free particles only: a clump's spheres (the last particles)
                // are held, and clump_pose writes everything integrate_predict would
                // (the kernel also returns on FLAG_MEMBER, for the last workgroup).
                let free = self.sections.free;
                for (c, &(first, count)) in self.rows.iter().enumerate() {
                    let active = count.min(free.saturating_sub(first));
                    if active > 0 {
                        self.dispatch_chunk(
                            pass,
                            KernelId::IntegratePredict,
                            parity * self.rows.len() + c,
                            groups(active),
                        );
                    }
                }
            }
            // The bodies' predict, then their spheres placed (clump steps are never
            // fused, so this is the only predict path they take).
            if self.sections.bodies > 0 {
                self.dispatch(pass, KernelId::ClumpPredict, groups(self.sections.bodies));
                self.dispatch(
                    pass,
                    KernelId::ClumpPose,
                    groups(self.n - self.sections.free),
                );
            }
        }
        self.encode_forces(pass, step, fuse);
    }
}
