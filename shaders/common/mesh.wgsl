// Sphere–mesh contacts: the twin of src/physics/mesh.rs MeshSurfaces::contacts (its
// closest, all_agree, feature_point, key_of and feature_vertices), the same operations
// in the same order. The including module defines the accessors of the mesh data:
//   mesh_corner(t, k) -> vec3<real>   corner k of triangle t, placed
//   mesh_plane(t) -> vec4<real>       unit normal n (xyz) and offset d (w) of t's plane
//   mesh_edge(t, k) -> vec4<real>     edge k's outward in-plane normal m (xyz), offset o (w)
//   mesh_tri(t, k) -> u32             vertex index of corner k
//   mesh_vertex(v) -> vec3<real>      vertex v, placed
//   mesh_key(t, j) -> u32             owner key of edge j (j < 3) or corner j − 3
//   mesh_candidate(s) -> u32          candidate s of the current list (ascending)

const MESH_NONE: u32 = 0xffffffffu;

// glam's cross, dot and normalize, spelled out (their operations in their order).
fn glam_cross(a: vec3<real>, b: vec3<real>) -> vec3<real> {
    return vec3<real>(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}
fn glam_dot(a: vec3<real>, b: vec3<real>) -> real { return a.x * b.x + a.y * b.y + a.z * b.z; }
fn glam_unit(a: vec3<real>) -> vec3<real> { return a * (1.0 / sqrt(glam_dot(a, a))); }


struct MeshHit {
    key: u32,
    point: vec3<real>,
    distance: real,
    normal: vec3<real>,
}

// The height of x above t's plane and how far its projection lies beyond the farthest
// edge line (Planes::height_and_outside).
fn mesh_height_outside(t: u32, x: vec3<real>) -> vec2<real> {
    let pl = mesh_plane(t);
    let h = dot(pl.xyz, x) - pl.w;
    var out = -MAX_REAL;
    for (var k = 0u; k < 3u; k++) {
        let e = mesh_edge(t, k);
        out = max(out, dot(e.xyz, x) - e.w);
    }
    return vec2<real>(h, out);
}

// closest: the projection when strictly inside the edge lines, else closest_point.
fn mesh_closest(t: u32, x: vec3<real>) -> Closest {
    let ho = mesh_height_outside(t, x);
    if (ho.y < 0.0) {
        return Closest(x - ho.x * mesh_plane(t).xyz, 0u);
    }
    return closest_point(x, mesh_corner(t, 0u), mesh_corner(t, 1u), mesh_corner(t, 2u));
}

fn mesh_key_of(t: u32, local: u32) -> u32 {
    if (local == 0u) { return 8u * t; }
    return mesh_key(t, local - 1u);
}

// The vertices of feature `key` in xyz (MESH_NONE beyond its count) and the count in w.
fn mesh_feature_vertices(key: u32) -> vec4<u32> {
    let t = key / 8u;
    let l = key % 8u;
    if (l == 0u) {
        return vec4<u32>(mesh_tri(t, 0u), mesh_tri(t, 1u), mesh_tri(t, 2u), 3u);
    }
    if (l <= 3u) {
        let k = l - 1u;
        return vec4<u32>(mesh_tri(t, k), mesh_tri(t, (k + 1u) % 3u), MESH_NONE, 2u);
    }
    return vec4<u32>(mesh_tri(t, l - 4u), MESH_NONE, MESH_NONE, 1u);
}

fn mesh_tri_contains(t: u32, v: u32) -> bool {
    return mesh_tri(t, 0u) == v || mesh_tri(t, 1u) == v || mesh_tri(t, 2u) == v;
}

// Whether triangle t may be within `reach` of x: mesh_contact's first test (a lower
// bound of the distance from the plane and edge lines, with its slack), alone.
fn mesh_may_touch(t: u32, x: vec3<real>, reach: real) -> bool {
    let ho = mesh_height_outside(t, x);
    let beyond = max(ho.y, 0.0);
    return !(ho.x * ho.x + beyond * beyond > reach * reach * (1.0 + 1e-9));
}

// The candidate to visit after s (start with s = 31): the lowest of the bits left in
// *near (cleared as taken), then every candidate from 32 on; ascending, as the CPU
// visits them.
fn mesh_next(near: ptr<function, u32>, s: u32) -> u32 {
    if (*near != 0u) {
        let k = countTrailingZeros(*near);
        *near &= *near - 1u;
        return k;
    }
    return max(s + 1u, 32u);
}

// Whether every candidate other than t that contains the edge or corner `key` finds
// its closest point to x on it. A triangle containing the feature is no further from
// x than the feature, which is within reach, so it is among the candidates `near`
// (mesh_near's bits, and every one from 32 on): the CPU's loop over all candidates
// (MeshSurfaces::all_agree) with the ones that cannot contain it skipped.
fn mesh_all_agree(near: u32, count: u32, x: vec3<real>, t: u32, key: u32) -> bool {
    let fv = mesh_feature_vertices(key);
    var bits = near;
    for (var s = mesh_next(&bits, 31u); s < count; s = mesh_next(&bits, s)) {
        let o = mesh_candidate(s);
        if (o == t) { continue; }
        var contains = true;
        for (var k = 0u; k < fv.w; k++) {
            if (!mesh_tri_contains(o, fv[k])) { contains = false; }
        }
        if (!contains) { continue; }
        if (mesh_key_of(o, mesh_closest(o, x).feature) != key) { return false; }
    }
    return true;
}

// The closest point to x of feature `key`, from the feature alone.
fn mesh_feature_point(key: u32, x: vec3<real>) -> vec3<real> {
    let fv = mesh_feature_vertices(key);
    if (fv.w == 3u) { return mesh_closest(key / 8u, x).q; }
    if (fv.w == 1u) { return mesh_vertex(fv.x); }
    let a = mesh_vertex(min(fv.x, fv.y));
    let b = mesh_vertex(max(fv.x, fv.y));
    let e = b - a;
    let s = clamp(dot(x - a, e) / dot(e, e), 0.0, 1.0);
    return a + s * e;
}

// Candidate s's contact with a sphere at x of reach `reach` (key MESH_NONE: none);
// `near`: the candidates below 32 that may touch (mesh_near).
fn mesh_contact(near: u32, count: u32, s: u32, x: vec3<real>, reach: real) -> MeshHit {
    var none: MeshHit;
    none.key = MESH_NONE;
    let reach2 = reach * reach;
    let far2 = reach2 * (1.0 + 1e-9);
    let t = mesh_candidate(s);
    let ho = mesh_height_outside(t, x);
    let beyond = max(ho.y, 0.0);
    if (ho.x * ho.x + beyond * beyond > far2) { return none; }
    var c: Closest;
    if (ho.y < 0.0) {
        c = Closest(x - ho.x * mesh_plane(t).xyz, 0u);
    } else {
        c = closest_point(x, mesh_corner(t, 0u), mesh_corner(t, 1u), mesh_corner(t, 2u));
    }
    let d2 = dot(c.q - x, c.q - x);
    if (!(d2 < reach2) || d2 == 0.0) { return none; }
    let key = mesh_key_of(t, c.feature);
    var point = c.q;
    if (c.feature != 0u) {
        if (key / 8u != t || !mesh_all_agree(near, count, x, t, key)) { return none; }
        point = mesh_feature_point(key, x);
    }
    let d = point - x;
    let dd = dot(d, d);
    if (!(dd < reach2) || dd == 0.0) { return none; }
    let distance = sqrt(dd);
    return MeshHit(key, point, distance, d / distance);
}

// The contact with feature `key` of a sphere at x that mesh_contact found: the same
// point, distance and normal, from the key alone.
fn mesh_touch(key: u32, x: vec3<real>) -> MeshHit {
    let point = mesh_feature_point(key, x);
    let d = point - x;
    let distance = sqrt(dot(d, d));
    return MeshHit(key, point, distance, d / distance);
}

const MESH_SLOTS: u32 = 8u;

// Whether features a and b share a vertex (MeshSurfaces::adjacent).
fn mesh_adjacent(a: u32, b: u32) -> bool {
    let va = mesh_feature_vertices(a);
    let vb = mesh_feature_vertices(b);
    for (var i = 0u; i < va.w; i++) {
        for (var j = 0u; j < vb.w; j++) {
            if (va[i] == vb[j]) { return true; }
        }
    }
    return false;
}

// The springs this step's `count` contacts start from, given the previous row's
// `n_old` slots: the twin of physics::mesh::carried_springs. A feature touched before
// keeps its spring; a new one takes over the spring of a vanished contact on an
// adjacent feature (the first in slot order, each at most once); otherwise zero. Rows
// are compact (slot 0 up to the first unused key), so the loops run to the counts and
// the slot sets are bit masks: no private arrays, nothing for the compiler to unroll.
// The including module defines the slot accessors:
//   mesh_now_key(a) -> u32              key of this step's contact a
//   mesh_old_key(s) -> u32              key of the previous row's slot s
//   mesh_old_spring(s) -> vec3<real>    its spring
//   mesh_set_start(a, spring)           contact a's starting spring
//   mesh_carry_roll(a, s)               contact a's rolling spring from old slot s
//                                       (MESH_NONE: zero), the same handover
fn mesh_carried(count: u32, n_old: u32) {
    var taken = 0u;
    var matched = 0u;
    // Exact matches first, so a handover never takes a spring that continues.
    for (var a = 0u; a < count; a++) {
        let k = mesh_now_key(a);
        mesh_set_start(a, vec3<real>(0.0));
        mesh_carry_roll(a, MESH_NONE);
        for (var s = 0u; s < n_old; s++) {
            if (mesh_old_key(s) == k) {
                mesh_set_start(a, mesh_old_spring(s));
                mesh_carry_roll(a, s);
                taken |= 1u << s;
                matched |= 1u << a;
                break;
            }
        }
    }
    for (var a = 0u; a < count; a++) {
        if ((matched & (1u << a)) != 0u) { continue; }
        for (var s = 0u; s < n_old; s++) {
            let k = mesh_old_key(s);
            if ((taken & (1u << s)) != 0u) { continue; }
            var still = false;
            for (var b = 0u; b < count; b++) {
                if (mesh_now_key(b) == k) { still = true; }
            }
            if (!still && mesh_adjacent(k, mesh_now_key(a))) {
                mesh_set_start(a, mesh_old_spring(s));
                mesh_carry_roll(a, s);
                taken |= 1u << s;
                break;
            }
        }
    }
}

// The cell of rest-frame point x in the mesh cell grid (origin, inverse edge, dims), or
// MESH_NONE outside it: the twin of neighbor::MeshCells::cell_of.
fn mesh_cell(x: vec3<real>, origin: vec3<real>, inv: real, dims: vec3<u32>) -> u32 {
    let c = floor((x - origin) * inv);
    if (any(c < vec3<real>(0.0)) || c.x >= real(dims.x) || c.y >= real(dims.y) || c.z >= real(dims.z)) {
        return MESH_NONE;
    }
    let k = vec3<u32>(c);
    return (k.z * dims.y + k.y) * dims.x + k.x;
}
