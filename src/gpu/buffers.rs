//! The device buffers: creating them from their [`Contents`] (an allocation failure is
//! a named refusal), and reading state back and writing it in place (fields, row
//! chunks, the contact state of checkpoints, test read-backs).

use glam::DVec3;

use super::bindings::{CHUNK_BINDINGS, ROW_BINDINGS};
use super::contents::{encode_hist_slots, Contents};
use super::context::GpuContext;
use super::layout::{hist_slot_bytes, HistRecord, Real};
use super::{bind, GpuBackend, Precision, STATUS_BUILDS, STATUS_MAX_NEIGHBORS};
use crate::backend::ContactState;
use crate::error::{Error, Result};
use crate::physics::granular::NO_PARTNER;

/// A per-particle vector array of the packed buffers, for read-back and upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    /// Positions (`body`, vec4 with the radius).
    Pos,
    /// Velocities (`body`, with the mass).
    Vel,
    /// Rotation vectors (`vecs`).
    Rot,
    /// Angular velocities (`body`, with the inertia).
    Omega,
    /// Forces (`body`).
    Force,
    /// Moments (`vecs`).
    Moment,
    /// Per-particle energies (`vecs`).
    Energy,
    /// The positions' Kahan terms (`body`, `f32` only).
    PosKahan,
}

/// Every buffer of a problem on the device.
pub(super) struct Buffers {
    /// The buffers bound whole, indexed by binding.
    pub shared: Vec<wgpu::Buffer>,
    /// Per bond chunk, the buffers of [`CHUNK_BINDINGS`] in that order.
    pub bond_chunks: Vec<Vec<wgpu::Buffer>>,
    /// Per row chunk, the buffers of [`ROW_BINDINGS`] but the uniform, in that order.
    pub row_chunks: Vec<Vec<wgpu::Buffer>>,
    /// Per row chunk, the `RowChunk` uniform of even and odd steps.
    pub row_uniforms: Vec<[wgpu::Buffer; 2]>,
    /// Per colour, the `hard_color` uniform of `hard_color_sweep`.
    pub hard_colors: Vec<wgpu::Buffer>,
}

impl Buffers {
    /// Creates and fills every buffer of `contents` (`total` bytes; `problem` names the
    /// problem in errors). Every buffer fits a binding, but together they may not fit
    /// the device's memory: an allocation failure becomes a clear refusal.
    pub(super) fn create<R: Real>(
        ctx: &GpuContext,
        contents: &Contents<R>,
        total: u64,
        problem: &str,
    ) -> Result<Self> {
        let device = &ctx.device;
        let make = |b: u32, label: &str, data: &[u8]| -> wgpu::Buffer {
            let usage = if [
                bind::PARAMS,
                bind::CHUNK,
                bind::ROWS,
                bind::HARD_PARAMS,
                bind::HARD_COLOR,
            ]
            .contains(&b)
            {
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
            } else if b == bind::GRID_ARGS || b == bind::HARD_ARGS {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_DST
            } else {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC
            };
            // Zero-sized bindings are not allowed: pad to one 256-byte block.
            let size = (data.len() as u64)
                .max(256)
                .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            });
            if !data.is_empty() {
                let padded = data
                    .len()
                    .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT as usize);
                let mut bytes = data.to_vec();
                bytes.resize(padded, 0);
                ctx.queue.write_buffer(&buf, 0, &bytes);
            }
            buf
        };
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let shared: Vec<wgpu::Buffer> = contents
            .shared
            .iter()
            .map(|(b, label, data)| make(*b, label, data))
            .collect();
        // One chunk's buffers (bond or row chunk), in its bindings' order.
        let make_set = |set: &[(u32, String, Vec<u8>)]| -> Vec<wgpu::Buffer> {
            set.iter()
                .map(|(b, label, data)| make(*b, label, data))
                .collect()
        };
        let bond_chunks = contents.bond_chunks.iter().map(|c| make_set(c)).collect();
        let row_chunks = contents.row_chunks.iter().map(|c| make_set(c)).collect();
        let row_uniforms = contents
            .row_uniforms
            .iter()
            .enumerate()
            .map(|(c, u)| {
                [0, 1].map(|q| {
                    make(
                        bind::ROWS,
                        &format!("rows[{c}, {q}]"),
                        bytemuck::bytes_of(&u[q]),
                    )
                })
            })
            .collect();
        let hard_colors = contents
            .hard_colors
            .iter()
            .map(|u| {
                make(
                    bind::HARD_COLOR,
                    &format!("hard_color[{}]", u.color),
                    bytemuck::bytes_of(u),
                )
            })
            .collect();
        if let Some(e) = pollster::block_on(out_of_memory.pop()) {
            return Err(Error::DeviceTooSmall(format!(
                "allocating {:.1} MiB of buffers ({problem}) on adapter {} failed: {e}",
                total as f64 / 1048576.0,
                ctx.summary.name
            )));
        }
        if let Some(e) = pollster::block_on(validation.pop()) {
            return Err(Error::Backend(format!("buffer set-up: {e}")));
        }
        Ok(Self {
            shared,
            bond_chunks,
            row_chunks,
            row_uniforms,
            hard_colors,
        })
    }
}

/// Partner ids and springs of history slots ([`HistRecord`]) read back as bytes.
pub(super) fn decode_hist_slots<R: Real>(raw: &[u8]) -> (Vec<u32>, Vec<DVec3>) {
    bytemuck::pod_collect_to_vec::<u8, HistRecord<R>>(raw)
        .iter()
        .map(|h| {
            let [x, y, z] = h.spring.map(R::to_f64);
            (h.id, DVec3::new(x, y, z))
        })
        .unzip()
}

/// The xyz of each `stride` reals of `v` (3: vectors of three reals, 4: vec4).
pub(super) fn vec3s(v: &[f64], stride: usize) -> Vec<DVec3> {
    v.chunks_exact(stride)
        .map(|c| DVec3::new(c[0], c[1], c[2]))
        .collect()
}

impl GpuBackend {
    /// Copies the first `bytes` of the buffer bound at `binding` to the host (blocking).
    pub(super) fn read(&self, binding: u32, bytes: u64) -> Result<Vec<u8>> {
        self.read_buffer(&self.buffers[binding as usize], bytes)
    }

    /// Copies the first `bytes` of `buffer` (rounded up to the copy alignment) to the
    /// host (blocking).
    pub(super) fn read_buffer(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        self.read_buffer_at(buffer, 0, bytes)
    }

    /// Copies `bytes` of `buffer` from byte `offset` (a multiple of 4) to the host
    /// (blocking); the length is rounded up to the copy alignment.
    pub(super) fn read_buffer_at(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<u8>> {
        self.ctx.read_buffer_at(buffer, offset, bytes)
    }

    pub(super) fn read_reals(&self, binding: u32, count: usize) -> Result<Vec<f64>> {
        self.read_buffer_reals(&self.buffers[binding as usize], count)
    }

    /// Where `field` lives: its buffer, its first byte and its reals per particle.
    pub(super) fn field_place(&self, field: Field) -> (u32, u64, usize) {
        let rs = self.real_size() as u64;
        let s = &self.sections;
        let (binding, offset, stride) = match field {
            Field::Pos => (bind::BODY, 0, 4),
            Field::Vel => (bind::BODY, s.vel, 4),
            Field::Omega => (bind::BODY, s.omega, 4),
            Field::Force => (bind::BODY, s.force, 4),
            Field::Rot => (bind::VECS, 0, 3),
            Field::Moment => (bind::VECS, s.moment, 3),
            Field::Energy => (bind::VECS, s.energy, 3),
            Field::PosKahan => (bind::BODY, s.pos_kahan, 4),
        };
        // body is indexed by vec4, vecs by real.
        let unit = if binding == bind::BODY { 4 * rs } else { rs };
        (binding, u64::from(offset) * unit, stride)
    }

    /// Every stored particle's `field` by slot, widened to `f64` (the xyz of vec4
    /// fields).
    pub(super) fn read_field_by_slot(&self, field: Field) -> Result<Vec<DVec3>> {
        let (binding, offset, stride) = self.field_place(field);
        let count = stride * self.n as usize;
        let raw = self.read_buffer_at(
            &self.buffers[binding as usize],
            offset,
            (count * self.real_size()) as u64,
        )?;
        Ok(vec3s(&self.reals_from_bytes(&raw, count), stride))
    }

    /// Every particle's `field` by id, widened to `f64` (the xyz of vec4 fields).
    pub(super) fn read_field(&self, field: Field) -> Result<Vec<DVec3>> {
        let by_slot = self.read_field_by_slot(field)?;
        if !self.layout.has_holes() {
            return Ok(self.layout.into_ids(by_slot, 1));
        }
        // Compacted storage: the ids not stored as the host's model has them (their
        // state does not change: reserved, or removed and frozen), without loads.
        let mut by_id = self.layout.to_ids_filled(&by_slot, 1, DVec3::ZERO);
        let p = &self.model.particles;
        for i in self.unstored() {
            by_id[i] = match field {
                Field::Pos => p.position[i] - self.origin,
                Field::Vel => p.velocity[i],
                Field::Rot => p.rotation[i],
                Field::Omega => p.angular_velocity[i],
                _ => DVec3::ZERO,
            };
        }
        Ok(by_id)
    }

    /// Particles by id: more than the slots when storage is compacted.
    pub(super) fn id_count(&self) -> usize {
        self.model.particles.len()
    }

    /// The ids of the particles that are not clumps' spheres: `0..free_ids()` (as many
    /// as the slots before the spheres, or more when storage is compacted).
    pub(super) fn free_ids(&self) -> usize {
        self.id_count() - (self.n - self.sections.free) as usize
    }

    /// The ids not stored (compacted storage), ascending.
    pub(super) fn unstored(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self.n as usize;
        let holes = self.layout.has_holes();
        (0..if holes { self.id_count() } else { 0 })
            .filter(move |&i| self.layout.try_slot(i, n).is_none())
    }

    /// Every particle's absolute position: the device's, less its Kahan term in `f32`,
    /// plus the origin ([`super::placement`]).
    pub(super) fn positions(&self) -> Result<Vec<DVec3>> {
        let device = self.read_field(Field::Pos)?;
        Ok(self.absolute(&device, &self.position_kahan()?))
    }

    /// The positions' Kahan terms (`f32`; empty in `f64`, which has none).
    pub(super) fn position_kahan(&self) -> Result<Vec<DVec3>> {
        match self.precision {
            Precision::F32 => self.read_field(Field::PosKahan),
            Precision::F64 => Ok(Vec::new()),
        }
    }

    /// Absolute positions from device ones and their Kahan terms `kahan` (empty: none):
    /// `(x − c) + origin` in `f64`, where `x − c` is exact. Without terms and with a
    /// zero origin they are the device's as they are (adding 0 would turn −0 into +0).
    pub(super) fn absolute(&self, device: &[DVec3], kahan: &[DVec3]) -> Vec<DVec3> {
        let compensated: Vec<DVec3> = if kahan.len() == device.len() {
            device.iter().zip(kahan).map(|(&x, &c)| x - c).collect()
        } else {
            device.to_vec()
        };
        let mut absolute = if self.origin == DVec3::ZERO {
            compensated
        } else {
            compensated.iter().map(|&x| x + self.origin).collect()
        };
        // The ids not stored: the host's positions, exactly.
        if absolute.len() == self.id_count() {
            for i in self.unstored() {
                absolute[i] = self.model.particles.position[i];
            }
        }
        absolute
    }

    /// Uploads `values`, one per storage slot, into `field` (`w` of vec4 fields: 0),
    /// rounded to the kernel precision.
    pub(super) fn write_field_by_slot(&self, field: Field, values: &[DVec3]) {
        let (binding, offset, stride) = self.field_place(field);
        let flat: Vec<f64> = values
            .iter()
            .flat_map(|a| {
                let v = a.extend(0.0).to_array();
                v.into_iter().take(stride)
            })
            .collect();
        self.ctx.queue.write_buffer(
            &self.buffers[binding as usize],
            offset,
            &self.real_bytes(&flat),
        );
    }

    /// Bytes per real of the kernels.
    pub(super) fn real_size(&self) -> usize {
        match self.precision {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// The first `count` reals of `raw` (kernel precision), widened to `f64`.
    pub(super) fn reals_from_bytes(&self, raw: &[u8], count: usize) -> Vec<f64> {
        match self.precision {
            Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(&raw[..count * 4])
                .iter()
                .map(|&v| v as f64)
                .collect(),
            Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(&raw[..count * 8]),
        }
    }

    /// `values` rounded to the kernel precision, as bytes.
    pub(super) fn real_bytes(&self, values: &[f64]) -> Vec<u8> {
        match self.precision {
            Precision::F32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                bytemuck::cast_slice(&v).to_vec()
            }
            Precision::F64 => bytemuck::cast_slice(values).to_vec(),
        }
    }

    /// The first `count` reals of `buffer`, widened to `f64`.
    pub(super) fn read_buffer_reals(
        &self,
        buffer: &wgpu::Buffer,
        count: usize,
    ) -> Result<Vec<f64>> {
        let raw = self.read_buffer(buffer, (count * self.real_size()) as u64)?;
        Ok(self.reals_from_bytes(&raw, count))
    }

    /// The buffers of row binding `binding` (one of [`ROW_BINDINGS`]), one per row chunk,
    /// with the particle count of each.
    pub(super) fn row_chunk_buffers(&self, binding: u32) -> Result<Vec<(&wgpu::Buffer, usize)>> {
        let slot = ROW_BINDINGS
            .iter()
            .position(|&b| b == binding)
            .ok_or_else(|| Error::Backend(format!("binding {binding} is not a row binding")))?;
        Ok(self
            .row_buffers
            .iter()
            .zip(&self.rows)
            .map(|(bufs, &(_, count))| (&bufs[slot], count as usize))
            .collect())
    }

    /// Every particle's row of one section of row binding `binding` (`bytes_per_row`
    /// each), read from each row chunk's buffer and concatenated in id order.
    /// The section starts after `skip_per_row` bytes per particle of the chunk (earlier
    /// sections: a copy of the history, the wall springs).
    pub(super) fn read_rows(
        &self,
        binding: u32,
        skip_per_row: usize,
        bytes_per_row: usize,
    ) -> Result<Vec<u8>> {
        let out = self.read_rows_by_slot(binding, skip_per_row, bytes_per_row)?;
        Ok(self.by_id_filled(out, bytes_per_row, 0u8))
    }

    /// [`Self::read_rows`] by storage slot.
    pub(super) fn read_rows_by_slot(
        &self,
        binding: u32,
        skip_per_row: usize,
        bytes_per_row: usize,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.n as usize * bytes_per_row);
        for (buffer, count) in self.row_chunk_buffers(binding)? {
            let bytes = count * bytes_per_row;
            if bytes > 0 {
                let at = (count * skip_per_row) as u64;
                out.extend_from_slice(&self.read_buffer_at(buffer, at, bytes as u64)?[..bytes]);
            }
        }
        Ok(out)
    }

    /// Rows by slot (`stride` items each) by id, `fill` for the ids not stored.
    pub(super) fn by_id_filled<T: Clone>(&self, by_slot: Vec<T>, stride: usize, fill: T) -> Vec<T> {
        if self.layout.has_holes() {
            self.layout.to_ids_filled(&by_slot, stride, fill)
        } else {
            self.layout.into_ids(by_slot, stride)
        }
    }

    /// Uploads `by_slot`, every stored particle's row of one section of row binding
    /// `binding` in storage order (`bytes_per_row` each, after `skip_per_row` bytes per
    /// particle of each chunk as in [`Self::read_rows`]), into the row chunks' buffers.
    pub(super) fn write_rows_by_slot(
        &self,
        binding: u32,
        skip_per_row: usize,
        bytes_per_row: usize,
        by_slot: &[u8],
    ) -> Result<()> {
        let mut rest = by_slot;
        for (buffer, count) in self.row_chunk_buffers(binding)? {
            let (part, tail) = rest.split_at((count * bytes_per_row).min(rest.len()));
            if !part.is_empty() {
                let at = (count * skip_per_row) as u64;
                self.ctx.queue.write_buffer(buffer, at, part);
            }
            rest = tail;
        }
        Ok(())
    }

    /// The stored particles' flags as they are on the device, by slot.
    pub(super) fn read_flags_by_slot(&self) -> Result<Vec<u32>> {
        let n = self.n as usize;
        let raw = self.read(bind::PARTICLE_FLAGS, 4 * n as u64)?;
        Ok(bytemuck::pod_collect_to_vec::<u8, u32>(&raw[..4 * n]))
    }

    /// The particle flags as they are on the device (removals included), by id.
    pub(super) fn read_flags(&self) -> Result<Vec<u32>> {
        let by_slot = self.read_flags_by_slot()?;
        let mut flags = self.by_id_filled(by_slot, 1, 0);
        for i in self.unstored() {
            flags[i] = self.model.particles.flags[i];
        }
        Ok(flags)
    }

    /// The removed particles (ascending ids) and the step at which each left, as on the
    /// device; none without removal.
    pub(super) fn read_removals(&self) -> Result<(Vec<u32>, Vec<u64>)> {
        if !self.model.domain.is_some_and(|d| d.remove) {
            return Ok((Vec::new(), Vec::new()));
        }
        let removed = crate::model::removed_ids(&self.read_flags()?);
        if removed.is_empty() {
            return Ok((removed, Vec::new()));
        }
        let steps = self.read_exit_steps()?;
        let at = removed
            .iter()
            .map(|&i| u64::from(steps[i as usize]))
            .collect();
        Ok((removed, at))
    }

    /// Every particle's word of the `O_EXIT_STEP` section, by id.
    fn read_exit_steps(&self) -> Result<Vec<u32>> {
        let n = self.n as usize;
        let buffer = &self.buffers[bind::PARTICLE_FLAGS as usize];
        let raw =
            self.read_buffer_at(buffer, 4 * u64::from(self.sections.exit_step), 4 * n as u64)?;
        let by_slot = bytemuck::pod_collect_to_vec::<u8, u32>(&raw[..4 * n]);
        let mut steps = self.by_id_filled(by_slot, 1, 0);
        if let Some(c) = &self.compaction {
            for (&i, &step) in &c.exit_steps {
                if let Some(w) = steps.get_mut(i as usize) {
                    *w = u32::try_from(step).unwrap_or(u32::MAX);
                }
            }
        }
        Ok(steps)
    }

    /// Writes the exit steps of a restored run's removed particles (`removed`,
    /// `steps`: a snapshot's; an unknown step, of an older checkpoint, is `at`).
    pub(super) fn write_exit_steps(&self, removed: &[u32], steps: &[u64], at: u64) -> Result<()> {
        if !self.model.domain.is_some_and(|d| d.remove) || removed.is_empty() {
            return Ok(());
        }
        let mut words = vec![0u32; self.id_count()];
        for (k, &i) in removed.iter().enumerate() {
            let step = steps.get(k).copied().unwrap_or(at);
            if let Some(w) = words.get_mut(i as usize) {
                *w = u32::try_from(step).unwrap_or(u32::MAX);
            }
        }
        let words = self.layout.slots_of(&words, 1);
        let buffer = &self.buffers[bind::PARTICLE_FLAGS as usize];
        let offset = 4 * u64::from(self.sections.exit_step);
        self.ctx
            .queue
            .write_buffer(buffer, offset, bytemuck::cast_slice(&words));
        Ok(())
    }

    /// Wall springs per particle in the wall-spring rows (none without history).
    pub(super) fn wall_stride(&self) -> usize {
        if self.max_contacts > 0 {
            self.model.walls.len().max(1)
        } else {
            0
        }
    }

    /// The history and wall-spring copy the last force evaluation wrote (the
    /// evaluation of step `s` writes copy `s & 1`).
    pub(super) fn history_copy(&self) -> usize {
        (self.steps & 1) as usize
    }

    /// Bytes per particle of one copy of the wall springs in `row_vec`.
    pub(super) fn wall_row_bytes(&self) -> usize {
        // granular_sum keeps a spring per wall in every granular scene.
        let walls = if self.granular {
            self.model.walls.len().max(1)
        } else {
            0
        };
        4 * walls * self.real_size()
    }

    /// The stored particles in the system (flags by slot, as on the device) with their
    /// slots, ascending by id: the rows of a snapshot's contact state.
    fn rows_in_system(&self, flags: &[u32]) -> Vec<(u32, usize)> {
        (self.layout.ids_and_slots(self.n as usize))
            .filter(|&(_, s)| crate::backend::in_system(flags[s]))
            .map(|(i, s)| (i as u32, s))
            .collect()
    }

    /// The granular contact state (history and current forces) for a snapshot: a row
    /// for each particle in the system.
    pub(super) fn contact_state(&self) -> Result<Option<ContactState>> {
        if !self.granular {
            return Ok(None);
        }
        let rows = self.rows_in_system(&self.read_flags_by_slot()?);
        let k = self.max_contacts as usize;
        let stride = self.wall_stride();
        let rs = self.real_size();
        let copy = self.history_copy();
        let slot_row = k * hist_slot_bytes(rs);
        // History slots of the rows' slots, decoded (partners are ids on the device).
        let hist = |raw: Vec<u8>, row_bytes: usize| -> (Vec<u32>, Vec<DVec3>) {
            let picked: Vec<u8> = (rows.iter())
                .flat_map(|&(_, s)| raw[s * row_bytes..(s + 1) * row_bytes].iter().copied())
                .collect();
            match self.precision {
                Precision::F32 => decode_hist_slots::<f32>(&picked),
                Precision::F64 => decode_hist_slots::<f64>(&picked),
            }
        };
        let (partner, spring) = hist(
            self.read_rows_by_slot(bind::HIST, copy * slot_row, slot_row)?,
            slot_row,
        );
        // Wall springs are one vec4 each (w: under JKR the held flag, else unused).
        let wall_row = self.wall_row_bytes();
        let wall_reals = self.reals_from_bytes(
            &self.read_rows_by_slot(bind::ROW_VEC, copy * wall_row, 4 * stride * rs)?,
            4 * self.n as usize * stride,
        );
        let walls = vec3s(&wall_reals, 4);
        let wall_spring = (rows.iter())
            .flat_map(|&(_, s)| walls[s * stride..(s + 1) * stride].iter().copied())
            .collect();
        let wall_held = if self.jkr {
            (rows.iter())
                .flat_map(|&(_, s)| s * stride..(s + 1) * stride)
                .map(|k| u8::from(wall_reals[4 * k + 3] != 0.0))
                .collect()
        } else {
            Vec::new()
        };
        // The mesh slots, after both copies of the particle slots (as the CPU's).
        let (mesh_key, mesh_spring) = if self.mesh_slots > 0 {
            let mesh_row = self.mesh_slots as usize * hist_slot_bytes(rs);
            let raw =
                self.read_rows_by_slot(bind::HIST, 2 * slot_row + copy * mesh_row, mesh_row)?;
            hist(raw, mesh_row)
        } else {
            (Vec::new(), Vec::new())
        };
        let pick = |v: Vec<DVec3>| -> Vec<DVec3> { rows.iter().map(|&(_, s)| v[s]).collect() };
        // EPSD rolling springs: the pair and mesh slots' after both copies of both, the
        // walls' after the loads (`RowChunk::roll_new` and the rest).
        let (roll, roll_wall, roll_mesh) = if self.roll_history.0 {
            let mesh_row = self.mesh_slots as usize * hist_slot_bytes(rs);
            let base = 2 * slot_row + 2 * mesh_row;
            let mut roll = hist(
                self.read_rows_by_slot(bind::HIST, base + copy * slot_row, slot_row)?,
                slot_row,
            )
            .1;
            // Slots from a row's end marker on hold stale values: zero, as the CPU's.
            for (r, p) in roll.chunks_mut(k.max(1)).zip(partner.chunks(k.max(1))) {
                let end = p.iter().position(|&id| id == NO_PARTNER).unwrap_or(p.len());
                r[end..].fill(DVec3::ZERO);
            }
            let mut roll_mesh = if mesh_row > 0 {
                let at = base + 2 * slot_row + copy * mesh_row;
                hist(self.read_rows_by_slot(bind::HIST, at, mesh_row)?, mesh_row).1
            } else {
                Vec::new()
            };
            for (r, key) in roll_mesh.iter_mut().zip(&mesh_key) {
                if *key == NO_PARTNER {
                    *r = DVec3::ZERO;
                }
            }
            let at = self.wall_roll_skip() + copy * wall_row;
            let walls = vec3s(
                &self.reals_from_bytes(
                    &self.read_rows_by_slot(bind::ROW_VEC, at, 4 * stride * rs)?,
                    4 * self.n as usize * stride,
                ),
                4,
            );
            let roll_wall = (rows.iter())
                .flat_map(|&(_, s)| walls[s * stride..(s + 1) * stride].iter().copied())
                .collect();
            (roll, roll_wall, roll_mesh)
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        Ok(Some(ContactState {
            slots: self.max_contacts,
            ids: rows.iter().map(|r| r.0).collect(),
            partner,
            spring,
            wall_spring,
            force: pick(self.read_field_by_slot(Field::Force)?),
            moment: pick(self.read_field_by_slot(Field::Moment)?),
            energy: pick(self.read_field_by_slot(Field::Energy)?)
                .iter()
                .map(|e| e.to_array())
                .collect(),
            mesh_key,
            mesh_spring,
            wall_load: self.hertz_loads()?.unwrap_or_default(),
            roll,
            roll_wall,
            roll_mesh,
            wall_held,
        }))
    }

    /// Bytes per particle in `row_vec` before the walls' EPSD rolling springs: both
    /// copies of the wall springs, the granular output and the loads.
    fn wall_roll_skip(&self) -> usize {
        (2 * self.wall_stride() + 3 + self.roll_history.1) * 4 * self.real_size()
    }

    /// Puts a snapshot's contact state in place of what the set-up evaluation computed:
    /// its rows in their particles' slots, the other slots without contacts or loads.
    pub(super) fn restore_contacts(&mut self, c: &ContactState) -> Result<()> {
        let stride = self.wall_stride();
        let mesh = self.mesh_slots as usize;
        if c.slots != self.max_contacts {
            return Err(Error::Snapshot(format!(
                "the contact state has {} history slots per particle, the scene {}",
                c.slots, self.max_contacts
            )));
        }
        c.check_rows(self.id_count(), stride, mesh)?;
        if !c.wall_load.is_empty() {
            let nl = self.model.walls.len() + self.model.meshes.len();
            if c.wall_load.len() != nl {
                return Err(Error::Snapshot(format!(
                    "the snapshot has the loads of {} walls, the scene {nl} planes and meshes",
                    c.wall_load.len()
                )));
            }
            self.restored_loads = Some((self.steps, c.wall_load.clone()));
        }
        // The row of each slot (`None`: no contacts, no load).
        let n = self.n as usize;
        let row_of: Vec<Option<usize>> = (0..n).map(|s| c.row(self.layout.id(s) as u32)).collect();
        let spread = |v: &[DVec3], per: usize| -> Vec<DVec3> {
            let mut out = vec![DVec3::ZERO; n * per];
            for (s, r) in row_of.iter().enumerate() {
                if let Some(r) = *r {
                    out[s * per..(s + 1) * per].copy_from_slice(&v[r * per..(r + 1) * per]);
                }
            }
            out
        };
        let spread_keys = |v: &[u32], per: usize| -> Vec<u32> {
            let mut out = vec![NO_PARTNER; n * per];
            for (s, r) in row_of.iter().enumerate() {
                if let Some(r) = *r {
                    out[s * per..(s + 1) * per].copy_from_slice(&v[r * per..(r + 1) * per]);
                }
            }
            out
        };
        let copy = self.history_copy();
        let k = c.slots as usize;
        let rs = self.real_size();
        let encode = |keys: &[u32], springs: &[DVec3]| match self.precision {
            Precision::F32 => encode_hist_slots::<f32>(keys, springs),
            Precision::F64 => encode_hist_slots::<f64>(keys, springs),
        };
        let slot_row = k * hist_slot_bytes(rs);
        if k > 0 {
            let slots = encode(&spread_keys(&c.partner, k), &spread(&c.spring, k));
            self.write_rows_by_slot(bind::HIST, copy * slot_row, slot_row, &slots)?;
        }
        if mesh > 0 && !c.mesh_key.is_empty() {
            let slots = encode(
                &spread_keys(&c.mesh_key, mesh),
                &spread(&c.mesh_spring, mesh),
            );
            let mesh_row = mesh * hist_slot_bytes(rs);
            self.write_rows_by_slot(bind::HIST, 2 * slot_row + copy * mesh_row, mesh_row, &slots)?;
        }
        if stride > 0 {
            // Wall springs are one vec4 each (w: under JKR the held flag, else 0).
            let held: Vec<DVec3> = if self.jkr && !c.wall_held.is_empty() {
                let flags = c.wall_held.iter().map(|&f| DVec3::splat(f64::from(f)));
                spread(&flags.collect::<Vec<_>>(), stride)
            } else {
                vec![DVec3::ZERO; n * stride]
            };
            let flat: Vec<f64> = (spread(&c.wall_spring, stride).iter())
                .zip(&held)
                .flat_map(|(a, h)| a.extend(h.x).to_array())
                .collect();
            self.write_rows_by_slot(
                bind::ROW_VEC,
                copy * self.wall_row_bytes(),
                4 * stride * rs,
                &self.real_bytes(&flat),
            )?;
        }
        // EPSD rolling springs (a state without them starts them at zero, as the
        // device's rows already are after set-up).
        if self.roll_history.0 && !c.roll.is_empty() {
            let mesh_row = mesh * hist_slot_bytes(rs);
            let base = 2 * slot_row + 2 * mesh_row;
            let zero_ids = |len: usize| vec![0u32; len];
            if k > 0 {
                let slots = encode(&zero_ids(n * k), &spread(&c.roll, k));
                self.write_rows_by_slot(bind::HIST, base + copy * slot_row, slot_row, &slots)?;
            }
            if mesh > 0 && !c.roll_mesh.is_empty() {
                let slots = encode(&zero_ids(n * mesh), &spread(&c.roll_mesh, mesh));
                let at = base + 2 * slot_row + copy * mesh_row;
                self.write_rows_by_slot(bind::HIST, at, mesh_row, &slots)?;
            }
            if stride > 0 {
                let flat: Vec<f64> = (spread(&c.roll_wall, stride).iter())
                    .flat_map(|a| a.extend(0.0).to_array())
                    .collect();
                let at = self.wall_roll_skip() + copy * self.wall_row_bytes();
                self.write_rows_by_slot(
                    bind::ROW_VEC,
                    at,
                    4 * stride * rs,
                    &self.real_bytes(&flat),
                )?;
            }
        }
        let energy: Vec<DVec3> = c.energy.iter().map(|e| DVec3::from_array(*e)).collect();
        self.write_field_by_slot(Field::Force, &spread(&c.force, 1));
        self.write_field_by_slot(Field::Moment, &spread(&c.moment, 1));
        self.write_field_by_slot(Field::Energy, &spread(&energy, 1));
        Ok(())
    }

    /// Neighbour-list builds so far and the largest list seen.
    pub fn neighbor_stats(&self) -> Result<(u32, u32)> {
        let s = self.status()?;
        Ok((s[STATUS_BUILDS], s[STATUS_MAX_NEIGHBORS]))
    }

    /// Forces and moments of the current state (for parity tests).
    pub fn forces(&self) -> Result<(Vec<DVec3>, Vec<DVec3>)> {
        Ok((
            self.read_field(Field::Force)?,
            self.read_field(Field::Moment)?,
        ))
    }

    /// Strain energy `U^m + U^a + U^s` of every bond at the current state (J), in bond
    /// order: read from each chunk's `bond_out` (the `contract::BOND_OUT_*` layout).
    pub fn bond_energies(&self) -> Result<Vec<f64>> {
        use super::contract::{
            BOND_OUT_E_AXIAL, BOND_OUT_E_BEND, BOND_OUT_E_SHEAR, BOND_OUT_STRIDE,
        };
        let slot = CHUNK_BINDINGS
            .iter()
            .position(|&b| b == bind::BOND_OUT)
            .ok_or_else(|| Error::Backend("bond_out is not a per-chunk binding".into()))?;
        let stride = BOND_OUT_STRIDE as usize;
        let mut out = Vec::with_capacity(self.model.bonds.len());
        for (buffers, &len) in self.chunk_buffers.iter().zip(&self.chunks) {
            if len == 0 {
                continue;
            }
            let r = self.read_buffer_reals(&buffers[slot], stride * len as usize)?;
            out.extend(r.chunks_exact(stride).map(|b| {
                b[BOND_OUT_E_BEND as usize]
                    + b[BOND_OUT_E_AXIAL as usize]
                    + b[BOND_OUT_E_SHEAR as usize]
            }));
        }
        Ok(out)
    }

    /// Each particle's neighbour list (for parity tests): rows by id, partner ids in
    /// ascending order; empty without contacts.
    pub fn neighbor_lists(&self) -> Result<Vec<Vec<u32>>> {
        if !self.contact {
            return Ok(Vec::new());
        }
        let row = self.max_neighbors as usize + 1;
        let words: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_rows(bind::NEIGHBORS, 0, 4 * row)?);
        let id = |s: &u32| self.layout.id(*s as usize) as u32;
        Ok(words
            .chunks_exact(row)
            .map(|r| r[1..1 + r[0] as usize].iter().map(id).collect())
            .collect())
    }

    /// Which id each storage slot holds (issue 44).
    pub fn layout(&self) -> &crate::model::Layout {
        &self.layout
    }
}
