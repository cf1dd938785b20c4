//! The CPU twin of `shaders/storage.wgsl`: the storage permutation the GPU backend
//! runs when it sorts during a run (issue 44). The CPU backend moves its own arrays
//! with [`crate::model::layout::permute_rows`]; this twin is the reference the device
//! kernel is tested against (`tests/gpu_storage_order.rs`), word for word.

use crate::model::layout::Permute;

/// `permute_slots`: one invocation per destination slot `p` of `permute` (see
/// [`Permute`]): if the source holds its old slot `order[dst_first + p]`, the
/// `stride` words of that slot's record are copied, and in neighbour rows (`remap`)
/// the listed partners' slots become their new ones (`order[n + old]`). `order` is the
/// old slot of each new slot, then the new slot of each old slot; `src` and `dst` are
/// whole buffers (or row chunks) as words.
pub fn permute_slots(permute: &Permute, order: &[u32], src: &[u32], dst: &mut [u32]) {
    for p in 0..permute.dst_count {
        let old = order[(permute.dst_first + p) as usize];
        if old < permute.src_first || old >= permute.src_first + permute.src_count {
            continue;
        }
        let src_at = (permute.src_offset + (old - permute.src_first) * permute.stride) as usize;
        let dst_at = (permute.dst_offset + p * permute.stride) as usize;
        let stride = permute.stride as usize;
        dst[dst_at..dst_at + stride].copy_from_slice(&src[src_at..src_at + stride]);
        if permute.remap != 0 && permute.stride > 0 {
            let count = src[src_at].min(permute.stride - 1) as usize;
            for k in 1..=count {
                dst[dst_at + k] = order[(permute.n + src[src_at + k]) as usize];
            }
        }
    }
}
