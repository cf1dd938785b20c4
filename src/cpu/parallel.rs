//! How a CPU kernel is spread over threads: fixed chunks of items, each written by one
//! task into its own slots, so results never depend on the number of threads; and the
//! prefetching of the gather's pair slots.

use glam::DVec3;
use rayon::prelude::*;

use super::contact_history::{PairSpring, RollSlot};
use super::contact_sides::SideScratch;
use super::forces::ParticleForce;
use super::kernels::granular::{NearSlot, PairSlot};
use crate::integrators::Kinematics;
use crate::neighbor::{self, NeighborList};

/// Below this many items a kernel runs on the calling thread: waking the rayon pool
/// costs more than it saves. Results are identical either way (each item is computed
/// independently and written to its own slot).
pub(super) const PAR_THRESHOLD: usize = 2048;
/// Minimum items per rayon task.
pub(super) const MIN_CHUNK: usize = 256;
// The force gather's chunks are the wall-load chunks both backends sum by.
const _: () = assert!(MIN_CHUNK == crate::backend::loads::LOAD_CHUNK);

/// Runs `f` for every index on its slot `out[i]`, in place: the CPU analogue of a
/// one-invocation-per-item GPU dispatch.
pub(super) fn dispatch_into<T: Send>(out: &mut [T], f: impl Fn(usize, &mut T) + Sync + Send) {
    if out.len() < PAR_THRESHOLD {
        for (i, o) in out.iter_mut().enumerate() {
            f(i, o);
        }
    } else {
        out.par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(i, o)| f(i, o));
    }
}

/// A run of particles' force records (with `E`, further outputs of the gather) from
/// index `lo`, and their velocities `v`, `Ω` to correct (empty when not correcting).
pub(super) type CorrectChunk<'a, E> = (
    usize,
    (&'a mut [ParticleForce], E),
    &'a mut [DVec3],
    &'a mut [DVec3],
);

/// Runs `kernel` on every chunk: in parallel for `n` ≥ [`PAR_THRESHOLD`] items, else on
/// the calling thread (each chunk writes its own slices, so the results are the same).
/// A chunk may report a fault at an item index; the lowest index is returned, so the
/// report does not depend on the number of threads.
pub(super) fn run_chunks<T: Send, R: Send>(
    chunks: Vec<T>,
    n: usize,
    kernel: impl Fn(T) -> Option<(usize, R)> + Sync + Send,
) -> Option<(usize, R)> {
    if n < PAR_THRESHOLD {
        chunks.into_iter().filter_map(kernel).min_by_key(|f| f.0)
    } else {
        chunks
            .into_par_iter()
            .filter_map(kernel)
            .min_by_key(|f| f.0)
    }
}

/// A run of particles' state fields, saved copies and contact sides (empty for models
/// without granular forces), from index `lo` (`integrate_predict`).
pub(super) type PredictChunk<'a> = (
    usize,
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [DVec3],
    &'a mut [Kinematics],
    &'a mut [SideScratch],
    &'a mut [DVec3],
);

/// Particles `lo..hi` with their half-list contact, rolling and near-field slots.
pub(super) type RowChunk<'a> = (
    usize,
    usize,
    (&'a mut [PairSlot], &'a mut [PairSpring], &'a mut [RollSlot]),
    &'a mut [NearSlot],
);

/// Splits the half-list slots (`pairs`, and `rolls` and `near` when they are not
/// empty) into disjoint runs of `chunk` particles' rows (`half`: row offsets), for a
/// parallel pass that writes each row once.
pub(super) fn row_chunks<'a>(
    half: &[u32],
    (pairs, springs, rolls): (&'a mut [PairSlot], &'a mut [PairSpring], &'a mut [RollSlot]),
    near: &'a mut [NearSlot],
    chunk: usize,
) -> Vec<RowChunk<'a>> {
    let springs = neighbor::row_runs(half, springs, chunk);
    let mut rolls = if rolls.is_empty() {
        Vec::new()
    } else {
        neighbor::row_runs(half, rolls, chunk)
    }
    .into_iter();
    // Without a near field every chunk gets an empty run.
    let mut near = if near.is_empty() {
        Vec::new()
    } else {
        neighbor::row_runs(half, near, chunk)
    }
    .into_iter();
    neighbor::row_runs(half, pairs, chunk)
        .into_iter()
        .zip(springs)
        .map(|((lo, hi, p), (_, _, s))| {
            let n = near.next().map_or(&mut [][..], |(_, _, n)| n);
            let r = rolls.next().map_or(&mut [][..], |(_, _, r)| r);
            (lo, hi, (p, s, r), n)
        })
        .collect()
}

/// Particles ahead of the gather whose pair slots are prefetched: 4 and 16 measured
/// no better than 8, and prefetching the pair kernel's partner sides gained nothing.
pub(super) const PREFETCH_AHEAD: usize = 8;

/// Asks the cache for the `lines` cache lines from `items[k]` (nothing when `k` is out
/// of range). The gather reads its pair slots in up to four streams (the particle's
/// row and its lower partners' rows), more than the hardware prefetcher follows among
/// the pass's other streams.
#[inline(always)]
pub(super) fn prefetch<T>(items: &[T], k: usize, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = items.get(k) {
        let p: *const i8 = (x as *const T).cast();
        for l in 0..lines {
            // SAFETY: a prefetch reads nothing and never faults, whatever the address.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * l));
            }
        }
    }
}

/// Prefetches the pair slots particle `i`'s gather will read.
#[inline]
pub(super) fn prefetch_slots(list: &NeighborList, pairs: &[PairSlot], i: usize) {
    if let Some(r) = list.offsets.get(i..i + 2) {
        for &s in &list.pair_index[r[0] as usize..r[1] as usize] {
            prefetch(pairs, s as usize, 1);
        }
    }
}
