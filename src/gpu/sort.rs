//! Sorting storage during a GPU run (issue 44): at least `[simulation] sort_every`
//! steps apart, the particles move to the slots of a sort along the neighbour grid's
//! cells, as the CPU backend's storage does at its rebuilds.
//!
//! The host reads the positions back (16 or 32 B a particle), orders the slots
//! ([`spatial_order`], the CPU's and the set-up's order) and uploads the order (8 B a
//! particle). The records move on the device: `permute_slots` (`shaders/storage.wgsl`,
//! twin `cpu::permute_slots`) copies every section that holds a record per slot, of
//! the shared buffers ([`Sections::slot_sections`](super::plan::Sections::slot_sections)) and of the row chunks
//! ([`Plan::row_sections`](super::plan::Plan::row_sections): neighbour rows, whose
//! entries it turns into new slots, Kahan terms, contact histories with their mesh and
//! rolling springs, wall springs and loads), from a copy of each buffer made on the
//! device. A particle may change row chunks. The id tables are written anew, and bond
//! records and incidence lists (static, their ends slots) are uploaded again. The
//! neighbour rows stay valid (ordered by partner id, which does not change), so the
//! sort needs no rebuild. The kernels speak ids, so the run goes on with the same bits
//! (`tests/gpu_storage_order.rs`).
//!
//! The clumps' spheres keep their slots (after the particles that move), as on the
//! CPU. Hard contacts are rebuilt at every step from the neighbour rows and keyed by
//! id, so nothing of theirs moves.

use std::time::Instant;

use super::bindings as bind;
use super::buffers::Field;
use super::context::GpuContext;
use super::kernels::compile_file;
use super::plan::{groups, SlotSection};
use super::shaders::{KernelFile, WORKGROUP_SIZE};
use super::{GpuBackend, Precision};
use crate::error::{Error, Result};
use crate::model::layout::{shuffled_order, spatial_order, Curve, Permute};

/// The storage permutation's kernel file (standalone: no engine header).
pub const STORAGE_FILE: KernelFile = KernelFile {
    name: "storage.wgsl",
    source: include_str!("../../shaders/storage.wgsl"),
    entry_points: &["permute_slots"],
};

/// `shaders/storage.wgsl` as compiled: the workgroup size, then the file.
pub fn storage_source() -> String {
    format!(
        "const WG: u32 = {WORKGROUP_SIZE}u;\n{}",
        STORAGE_FILE.source
    )
}

/// A run's sorting during the run.
#[derive(Clone, Debug)]
pub(super) struct Sorting {
    /// Steps between sorts (`sort_every`, above 0).
    pub every: u64,
    /// The step of the last sort (or of the set-up).
    pub last: u64,
    /// Sorts during the run so far that moved particles.
    pub sorts: u64,
    /// Whether the set-up sorted (its layout is not id order).
    pub set_up: bool,
    /// Sorts during the run so far, those that found every particle in place too.
    pub attempts: u64,
    /// Seconds they took (the read-back, the order, the moves on the device until
    /// they ended, the uploads).
    pub seconds: f64,
    /// The slots that move: those before the clumps' spheres.
    pub sortable: usize,
    /// The neighbour grid's cell edge (the sort's cells).
    pub cell: f64,
    /// The shared buffers' sections with a record per slot.
    pub slots: Vec<SlotSection>,
    /// Each row buffer's sections, words per particle.
    pub rows: [Vec<u32>; 4],
    /// Tests: each sort is a seeded random order instead (`GpuOptions::shuffle_storage`,
    /// the seed mixed with the step), so that every sort moves every particle.
    pub shuffle: Option<u64>,
}

impl Sorting {
    /// The step the next sort is due at.
    pub(super) fn due(&self) -> u64 {
        self.last.saturating_add(self.every)
    }
}

/// A sort's scratch buffers, made before anything moves (so that a device without room
/// for them leaves the run as it was): one the size of the largest shared buffer the
/// sort moves, which takes each in turn, and per row chunk one the size of its largest
/// row buffer, which takes each row buffer in turn (every chunk's copy at once: a chunk
/// takes its records from every chunk).
struct Scratch {
    shared: wgpu::Buffer,
    rows: Vec<wgpu::Buffer>,
}

/// One dispatch of `permute_slots`: the source and destination buffers, and what it
/// moves.
struct Move<'a> {
    src: &'a wgpu::Buffer,
    dst: &'a wgpu::Buffer,
    permute: Permute,
}

impl GpuBackend {
    /// The step the next sort is due at (`None`: the run does not sort).
    pub(super) fn sort_due(&self) -> Option<u64> {
        self.sorting.as_ref().map(Sorting::due)
    }

    /// Sorts storage now if a sort is due (see the module's notes).
    pub(super) fn sort_if_due(&mut self) -> Result<()> {
        match self.sort_due() {
            Some(due) if self.steps >= due => self.sort_storage(),
            _ => Ok(()),
        }
    }

    /// Sorts storage along the neighbour grid's cells now (see the module's notes).
    pub(super) fn sort_storage(&mut self) -> Result<()> {
        let Some(sorting) = self.sorting.clone() else {
            return Ok(());
        };
        let started = Instant::now();
        let n = self.n as usize;
        let position = self.read_field_by_slot(Field::Pos)?;
        let order = match sorting.shuffle {
            Some(seed) => shuffled_order(n, sorting.sortable, seed ^ self.steps),
            None => spatial_order(&position, sorting.sortable, sorting.cell, Curve::from_env()),
        };
        let moved = order.iter().enumerate().any(|(s, &o)| s as u32 != o);
        if moved {
            let Some(scratch) = self.sort_scratch(&sorting) else {
                // The copies a sort makes do not fit beside the run: it goes on unsorted
                // (results do not depend on storage), and says so.
                log::warn!(
                    "step {}: sorting storage needs room for a copy of the largest buffers beside them, and the device has none; the run goes on without sorting",
                    self.steps
                );
                self.sorting = None;
                return Ok(());
            };
            self.permute_storage(&order, &sorting, &scratch)?;
            self.wait_for_device()?;
        }
        if let Some(s) = &mut self.sorting {
            s.last = self.steps;
            s.sorts += u64::from(moved);
            s.attempts += 1;
            s.seconds += started.elapsed().as_secs_f64();
        }
        log::debug!(
            "step {}: storage sorted on the device ({n} slots, {:.1} ms)",
            self.steps,
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }

    /// Moves the particle of old slot `order[s]` to slot `s`, for every slot: the
    /// records on the device, the id tables, the bonds' ends, the host's layout.
    fn permute_storage(
        &mut self,
        order: &[u32],
        sorting: &Sorting,
        scratch: &Scratch,
    ) -> Result<()> {
        let n = self.n as usize;
        let mut table = order.to_vec();
        table.resize(2 * n, 0);
        for (s, &o) in order.iter().enumerate() {
            table[n + o as usize] = s as u32;
        }
        let order_buffer = upload_words(
            &self.ctx,
            "storage order",
            &table,
            wgpu::BufferUsages::empty(),
        );
        let pipeline = permute_pipeline(&self.ctx)?;
        let layout = self.layout.kept(order, n);

        // The shared buffers, one submission each (copied into the one scratch buffer).
        let mut bindings: Vec<u32> = sorting.slots.iter().map(|s| s.binding).collect();
        bindings.dedup();
        for b in bindings {
            let buffer = &self.buffers[b as usize];
            let copy = &scratch.shared;
            let moves: Vec<Move> = (sorting.slots.iter().filter(|s| s.binding == b))
                .map(|s| Move {
                    src: copy,
                    dst: buffer,
                    permute: Permute {
                        dst_first: 0,
                        dst_count: n as u32,
                        src_first: 0,
                        src_count: n as u32,
                        dst_offset: s.first as u32,
                        src_offset: s.first as u32,
                        stride: s.words,
                        remap: 0,
                        n: n as u32,
                        pad: [0; 3],
                    },
                })
                .collect();
            let mut encoder = self.encoder();
            encoder.copy_buffer_to_buffer(buffer, 0, copy, 0, buffer.size());
            encode_moves(&self.ctx, &mut encoder, &pipeline, &order_buffer, &moves);
            self.submit("the storage sort", encoder)?;
        }

        // The row buffers: each chunk takes its slots' records from every chunk.
        for (k, sections) in sorting.rows.iter().enumerate() {
            if sections.is_empty() {
                continue;
            }
            let copies = &scratch.rows;
            let mut encoder = self.encoder();
            for (chunk, src) in self.row_buffers.iter().zip(copies) {
                encoder.copy_buffer_to_buffer(&chunk[k], 0, src, 0, chunk[k].size());
            }
            let mut moves = Vec::new();
            for (d, &(dst_first, dst_count)) in self.rows.iter().enumerate() {
                for (s, &(src_first, src_count)) in self.rows.iter().enumerate() {
                    let (mut dst_offset, mut src_offset) = (0u32, 0u32);
                    for &words in sections {
                        moves.push(Move {
                            src: &copies[s],
                            dst: &self.row_buffers[d][k],
                            permute: Permute {
                                dst_first,
                                dst_count,
                                src_first,
                                src_count,
                                dst_offset,
                                src_offset,
                                stride: words,
                                remap: u32::from(k == 0),
                                n: n as u32,
                                pad: [0; 3],
                            },
                        });
                        dst_offset += words * dst_count;
                        src_offset += words * src_count;
                    }
                }
            }
            encode_moves(&self.ctx, &mut encoder, &pipeline, &order_buffer, &moves);
            self.submit("the storage sort's rows", encoder)?;
        }

        // The id tables, the bonds' ends, the host's layout.
        let ids = super::contents::id_table_words(&layout, n, true, self.id_count());
        let at = 4 * u64::from(self.sections.id_of);
        self.ctx.queue.write_buffer(
            &self.buffers[bind::PARTICLE_FLAGS as usize],
            at,
            bytemuck::cast_slice(&ids),
        );
        self.layout = layout;
        if !self.model.bonds.is_empty() {
            match self.precision {
                Precision::F32 => self.upload_bonds::<f32>()?,
                Precision::F64 => self.upload_bonds::<f64>()?,
            }
        }
        self.ctx.check("sorting storage")
    }

    /// Waits until the device has run what was submitted: the sort's time then counts
    /// its moves.
    fn wait_for_device(&self) -> Result<()> {
        (self.ctx.device)
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Gpu {
                during: "sorting storage".into(),
                message: format!("device lost or timed out: {e}"),
            })
    }

    /// The scratch buffers of a sort (see [`Scratch`]), or `None` when the device has
    /// no room for them.
    fn sort_scratch(&self, sorting: &Sorting) -> Option<Scratch> {
        let device = &self.ctx.device;
        let make = |size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("storage sort copy"),
                size: size.max(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let shared = (sorting.slots.iter())
            .map(|s| self.buffers[s.binding as usize].size())
            .max()
            .unwrap_or(0);
        let moved: Vec<usize> = (0..sorting.rows.len())
            .filter(|&k| !sorting.rows[k].is_empty())
            .collect();
        let scratch = Scratch {
            shared: make(shared),
            rows: (self.row_buffers.iter())
                .map(|chunk| make(moved.iter().map(|&k| chunk[k].size()).max().unwrap_or(0)))
                .collect(),
        };
        pollster::block_on(out_of_memory.pop())
            .is_none()
            .then_some(scratch)
    }

    /// Uploads the bonds' records and incidence lists again with their ends in the
    /// current layout's slots (they are static on the device).
    fn upload_bonds<R: super::layout::Real>(&self) -> Result<()> {
        let mut bonds = self.model.bonds.clone();
        for b in &mut bonds {
            b.i = self.layout.slot(b.i as usize) as u32;
            b.j = self.layout.slot(b.j as usize) as u32;
        }
        let compact = if self.compact {
            Some(
                super::layout::CompactBonds::<R>::new(&bonds).ok_or_else(|| {
                    Error::Backend(
                        "sorting storage: the bonds no longer fit compact records".into(),
                    )
                })?,
            )
        } else {
            None
        };
        let mut first = 0usize;
        for (c, &count) in self.chunks.iter().enumerate() {
            let range = first..first + count as usize;
            let (records, incidence) = super::contents::bond_chunk_bytes(
                &bonds,
                self.n as usize,
                range.clone(),
                compact.as_ref(),
            );
            let q = &self.ctx.queue;
            q.write_buffer(&self.chunk_buffers[c][0], 0, &records);
            q.write_buffer(&self.chunk_buffers[c][2], 0, &incidence);
            first = range.end;
        }
        Ok(())
    }
}

/// Encodes one `permute_slots` dispatch per move, each with its own uniform.
fn encode_moves(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    order: &wgpu::Buffer,
    moves: &[Move],
) {
    let device = &ctx.device;
    let layout = pipeline.get_bind_group_layout(0);
    let groups_of: Vec<(wgpu::BindGroup, u32)> = moves
        .iter()
        .map(|m| {
            let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("permute"),
                size: std::mem::size_of::<Permute>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            ctx.queue
                .write_buffer(&uniform, 0, bytemuck::bytes_of(&m.permute));
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("permute_slots"),
                layout: &layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: uniform.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: order.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: m.src.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: m.dst.as_entire_binding(),
                    },
                ],
            });
            (group, groups(m.permute.dst_count))
        })
        .collect();
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("storage sort"),
        timestamp_writes: None,
    });
    pass.set_pipeline(pipeline);
    for (group, count) in &groups_of {
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(*count, 1, 1);
    }
}

/// `permute_slots`' pipeline, compiled once per device (the context's cache).
fn permute_pipeline(ctx: &GpuContext) -> Result<wgpu::ComputePipeline> {
    let source = storage_source();
    let cached = (ctx.pipelines.lock().ok()).and_then(|c| c.get(&source).cloned());
    let compiled = match cached {
        Some(c) => c,
        None => {
            let limits = ctx.limits();
            let c = compile_file(ctx, &STORAGE_FILE, source.clone(), Precision::F32, &limits)?;
            if let Ok(mut cache) = ctx.pipelines.lock() {
                cache.insert(source, c.clone());
            }
            c
        }
    };
    compiled
        .into_iter()
        .next()
        .map(|(p, _)| p)
        .ok_or_else(|| Error::Backend("storage.wgsl has no entry point".into()))
}

/// Runs one `permute_slots` dispatch on `ctx`'s device: `dst` (words) after the move
/// `permute` from `src` with the order table `order` (the old slot of each new slot,
/// then the new slot of each old slot). The test hook that compares the kernel with
/// its CPU twin, `cpu::permute_slots` (`tests/gpu_storage_order.rs`).
pub fn permute_on_device(
    ctx: &GpuContext,
    permute: &Permute,
    order: &[u32],
    src: &[u32],
    dst: &[u32],
) -> Result<Vec<u32>> {
    let none = wgpu::BufferUsages::empty();
    let order = upload_words(ctx, "order", order, none);
    let src = upload_words(ctx, "src", src, none);
    let out = upload_words(ctx, "dst", dst, wgpu::BufferUsages::COPY_SRC);
    let pipeline = permute_pipeline(ctx)?;
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let moves = [Move {
        src: &src,
        dst: &out,
        permute: *permute,
    }];
    encode_moves(ctx, &mut encoder, &pipeline, &order, &moves);
    ctx.scoped("the storage permutation's test", || {
        ctx.queue.submit([encoder.finish()]);
    })?;
    let bytes = ctx.read_buffer_at(&out, 0, 4 * dst.len() as u64)?;
    Ok(bytemuck::pod_collect_to_vec::<u8, u32>(&bytes)[..dst.len()].to_vec())
}

/// A storage buffer holding `words` (at least 16 bytes), with the usages `extra` too.
fn upload_words(
    ctx: &GpuContext,
    label: &str,
    words: &[u32],
    extra: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let bytes: &[u8] = bytemuck::cast_slice(words);
    let size = (bytes.len() as u64)
        .max(16)
        .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
        mapped_at_creation: false,
    });
    ctx.queue.write_buffer(&buffer, 0, bytes);
    buffer
}
