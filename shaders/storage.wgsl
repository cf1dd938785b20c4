// Storage permutation on the device (issue 44): a sort during a run moves every
// particle's records to its new slot. The twin of src/cpu/kernels/storage.rs
// (`permute_slots`). Standalone (no engine header): it sees every buffer as words, so
// one kernel moves f32 and f64 records, vec4 and scalar sections, and row chunks alike,
// bit for bit.
//
// One dispatch moves one section of one buffer: the slots `dst_first ..
// dst_first + dst_count` of the destination (a whole buffer, or one row chunk) take
// the records of their old slots `order[s]` that the source (a copy of the buffer or
// of one row chunk, slots `src_first .. src_first + src_count`) holds. A row chunk's
// destination takes from every chunk in turn, so a particle may change chunks.
// `remap` marks a neighbour row (a count, then slots): its entries become the
// partners' new slots, the second half of `order`.

struct Permute {
    // Slots the dispatch writes: the first and how many.
    dst_first: u32,
    dst_count: u32,
    // Slots the source holds: the first and how many.
    src_first: u32,
    src_count: u32,
    // First word of the section in the destination and in the source.
    dst_offset: u32,
    src_offset: u32,
    // Words per slot.
    stride: u32,
    // 1: neighbour rows (entries remapped through the second half of `order`).
    remap: u32,
    // Slots in all (the length of each half of `order`).
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> permute: Permute;
// The old slot of each new slot, then the new slot of each old slot.
@group(0) @binding(1) var<storage, read> order: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WG)
fn permute_slots(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if (p >= permute.dst_count) { return; }
    let old = order[permute.dst_first + p];
    if (old < permute.src_first || old >= permute.src_first + permute.src_count) { return; }
    let src_at = permute.src_offset + (old - permute.src_first) * permute.stride;
    let dst_at = permute.dst_offset + p * permute.stride;
    for (var k = 0u; k < permute.stride; k++) {
        dst[dst_at + k] = src[src_at + k];
    }
    if (permute.remap != 0u && permute.stride > 0u) {
        let count = min(src[src_at], permute.stride - 1u);
        for (var k = 1u; k <= count; k++) {
            dst[dst_at + k] = order[permute.n + src[src_at + k]];
        }
    }
}
