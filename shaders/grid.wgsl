// Neighbour finding on the GPU: a hashed uniform grid of fixed-capacity buckets, rebuilt
// only when integrate_predict has flagged a particle that moved more than skin/2 relative
// to particle 0 (grid_finish, check_skin). The
// twin of src/neighbor/mod.rs: the same cell edge (2 r_max + skin), the same cutoff
// (r_i + r_j + skin) and the same output, each particle's neighbours in ascending id.
// Bucket slots are claimed with integer atomics in arbitrary order; sorting each list
// makes the result deterministic.

fn rebuilding() -> bool { return atomicLoad(&status[STATUS_REBUILD]) != 0u && !failed(); }

fn cell_of(x: vec3<real>) -> vec3<i32> { return vec3<i32>(floor(x * params.inv_cell)); }

// A linear hash (mod 2^32, then mod n_buckets, a power of two ≥ 32): the 27 cells around
// any cell fall in 27 distinct buckets, because the offsets dx·P₁ + dy·P₂ + dz·P₃
// (dx, dy, dz ∈ {−1, 0, 1}) are distinct mod every 2^k with k ≥ 5 (checked in
// src/gpu/mod.rs tests). neighbor_build therefore visits no bucket twice without
// checking.
fn bucket_of(c: vec3<i32>) -> u32 {
    let h = bitcast<u32>(c.x) * HASH_P1 + bitcast<u32>(c.y) * HASH_P2 + bitcast<u32>(c.z) * HASH_P3;
    return h & (params.n_buckets - 1u);
}

// One invocation before the grid kernels: their workgroup counts (indirect dispatch)
// are those of a rebuild when the list is stale and zero otherwise, so between rebuilds
// they launch nothing (rather than every invocation reading the flags and returning).
@compute @workgroup_size(1)
fn grid_gate() {
    let on = rebuilding();
    let k = grid_args[0];
    for (var e = 0u; e < k; e++) {
        grid_args[1u + 3u * e] = select(0u, grid_args[1u + 3u * k + e], on);
    }
}

@compute @workgroup_size(WG)
fn grid_clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.n_buckets || !rebuilding()) { return; }
    atomicStore(&bucket_count[gid.x], 0u);
}

@compute @workgroup_size(WG)
fn grid_insert(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_GRID_INSERT);
    let i = gid.x;
    if (i >= params.n_particles || !rebuilding()) { return; }
    // Particles out of the system are in no bucket (NeighborList::absent): dormant ones
    // (reserved by an inserter, flagged removed too) and removed ones, frozen where they
    // left (a pile of them at an outlet would overflow the rows; the CPU's compacted
    // storage drops them at the same rebuilds). They take part in no contact.
    if ((particle_flags[i] & FLAG_REMOVED) != 0u) { return; }
    let b = bucket_of(cell_of(get_pos(i)));
    let slot = atomicAdd(&bucket_count[b], 1u);
    if (slot < params.bucket_capacity) {
        bucket_items[b * params.bucket_capacity + slot] = i;
    } else {
        raise(ERR_BUCKET_OVERFLOW, id_of(i));
    }
}

// Dispatched once per row chunk (struct RowChunk): writes the rows of particles
// rows.first .. rows.first + rows.count, each particle's own row only.
@compute @workgroup_size(WG)
fn neighbor_build(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_NEIGHBOR_BUILD);
    let li = gid.x;
    if (li >= rows.count || !rebuilding()) { return; }
    let i = rows.first + li;
    let x = get_pos(i);
    let r = radius_of(i);
    let body_i = body_of(i);
    let c = cell_of(x);
    var list: array<u32, MAX_NEIGHBORS>;
    var n = 0u;
    var overflow = false;
    // The row of a particle out of the system (dormant or removed) stays empty.
    let dormant = (particle_flags[i] & FLAG_REMOVED) != 0u;
    for (var dz = select(-1, 2, dormant); dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let b = bucket_of(c + vec3<i32>(dx, dy, dz));
                let count = min(atomicLoad(&bucket_count[b]), params.bucket_capacity);
                for (var s = 0u; s < count; s++) {
                    let j = bucket_items[b * params.bucket_capacity + s];
                    if (j == i || body_of(j) == body_i) { continue; }
                    let d = x - get_pos(j);
                    let reach = max(r + radius_of(j), params.nf_cutoff) + params.skin;
                    if (dot(d, d) < reach * reach) {
                        if (n >= params.max_neighbors) {
                            overflow = true;
                            continue;
                        }
                        // Insertion into the list ascending by id (the list holds
                        // ids, turned into slots when written). Written as a load, a
                        // `break` and a store, not `while (p > 0u && list[p - 1u] > j)
                        // { list[p] = list[p - 1u]; ... }`: naga turns that `&&` into
                        // an if/else on a bool, and Mesa's GLSL path (llvmpipe GL 4.5,
                        // Mesa 22.3) then miscompiles the shift of the private array:
                        // shifted entries read back as 0 (partners lost, a particle
                        // paired with particle 0). Lavapipe (Vulkan) got it right.
                        let key = id_of(j);
                        var p = n;
                        while (p > 0u) {
                            let prev = list[p - 1u];
                            if (prev <= key) { break; }
                            list[p] = prev;
                            p--;
                        }
                        list[p] = key;
                        n++;
                    }
                }
            }
        }
    }
    if (overflow) {
        raise(ERR_NEIGHBOR_OVERFLOW, id_of(i));
        return;
    }
    let row = li * (params.max_neighbors + 1u);
    neighbors[row] = n;
    for (var s = 0u; s < n; s++) {
        neighbors[row + 1u + s] = slot_of(list[s]);
    }
    set_ref(i, x);
    // Most lists are not the longest: read before the (contended) read-modify-write.
    if (n > atomicLoad(&status[STATUS_MAX_NEIGHBORS])) {
        atomicMax(&status[STATUS_MAX_NEIGHBORS], n);
    }
}

// One invocation after neighbor_build, every step: particle 0's displacement since the
// last build, which the next predict's check_skin discounts (the twin of
// NeighborList::shift: particle 0's position before the step that moves it, against the
// current reference), read while no kernel moves particle 0, so every invocation of the
// predict tests against the same vector; then, after a rebuild, the list is fresh again.
@compute @workgroup_size(1)
fn grid_finish() {
    if (failed()) { return; }
    // Particle 0 by id, wherever it is stored (as the CPU's NeighborList::shift); no
    // shift when it is not stored (compacted storage: any shift keeps the list valid).
    let r = slot_of(0u);
    var u = vec3<real>(0.0);
    if (r < params.n_particles) {
        u = get_pos(r) - get_ref(r);
    }
    set_skin_shift(u);
    if (!rebuilding()) { return; }
    atomicStore(&status[STATUS_REBUILD], 0u);
    atomicAdd(&status[STATUS_BUILDS], 1u);
}
