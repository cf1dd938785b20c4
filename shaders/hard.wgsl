// Hard contacts (Preclik, Eibl & Rüde §3.1), the impulse-velocity step on the GPU for
// spheres: the twin of src/cpu/hard.rs (step_hard) and src/cpu/kernels/hard.rs (the
// solvers). One step, in the order src/gpu/hard.rs encodes it:
//
//   hard_begin, hard_free          free velocities v* = v + hF/m, Ω* (and each speed)
//   hard_skin, grid kernels        the neighbour list, kept valid for the margin
//   hard_count, hard_scan_*        each particle's contacts counted, offsets scanned
//   hard_build, hard_incidence     contacts in the CPU's contact order; each body's
//                                  incidence list in ascending contact order
//   hard_color_* (colored)         Jones–Plassmann colouring, colour lists
//   hard_gather                    the warm-start impulses applied
//   sweeps                         jacobi: hard_update, hard_gather, hard_check;
//                                  colored: hard_color_sweep per colour, hard_check
//   hard_solve_end                 residual, convergence (and its error)
//   hard_advance, hard_save        x' = x + hv', α' = α ⊕ hΩ'; warm starts and counts
//   hard_row                       the step's solver.csv row
//
// No float atomics: sums over bodies follow each body's incidence list in ascending
// contact order (the CPU's order of hard_apply), maxima and sums of a step are tree
// reductions in one workgroup, counts are integer atomics. A contact's colour depends
// only on the colours of its earlier neighbours (contact_priority), so the colouring is
// the CPU's whatever order the rounds run in.

// The CPU's rounding. Drivers treat WGSL float arithmetic as free to contract and
// reassociate (llvmpipe fuses a·b + c into one FMA and rewrites v + (p − q) as
// (v + p) − q), which the CPU never does. A value multiplied by the uniform `one`
// (1 at run time, unknown to the compiler) is rounded on its own before it meets the
// next operation: fma(p, 1, c) = round(p + c), and no sum is reassociated across the
// multiplication. `pm`/`pv` are such products, `o`/`o3` such values; every product
// added to something and every sum on the right of another goes through them, so the
// kernels keep the CPU's bits (tests/gpu_hard.rs compares them).
fn o(x: real) -> real { return x * params.one; }
fn o3(x: vec3<real>) -> vec3<real> { return x * params.one; }
fn pm(a: real, b: real) -> real { return a * b * params.one; }
fn pv(a: real, v: vec3<real>) -> vec3<real> { return a * v * params.one; }
// glam's dot: (x x' + y y') + z z'.
fn dot3(a: vec3<real>, b: vec3<real>) -> real { return o(o(pm(a.x, b.x) + pm(a.y, b.y)) + pm(a.z, b.z)); }
// glam's cross: (y z' − y' z, z x' − z' x, x y' − x' y).
fn cross3(a: vec3<real>, b: vec3<real>) -> vec3<real> {
    return o3(vec3<real>(pm(a.y, b.z) - pm(b.y, a.z), pm(a.z, b.x) - pm(b.z, a.x), pm(a.x, b.y) - pm(b.x, a.y)));
}

const NONE: u32 = 0xffffffffu;
const WALL: u32 = 0xffffffffu;

fn h_normal(c: u32) -> vec4<real> { return contacts[H_NORMAL + c]; }
fn h_impulse(c: u32) -> vec4<real> { return contacts[H_IMPULSE + c]; }
fn h_delta(c: u32) -> vec4<real> { return contacts[H_DELTA + c]; }
fn body_v(i: u32) -> vec4<real> { return contacts[H_BODY_V + i]; }
fn body_w(i: u32) -> vec4<real> { return contacts[H_BODY_W + i]; }
// A clump body's inverse inertia tensor in the world frame at the step's start
// (diagonal; xy, xz, yz), with its kinetic energy at the free velocities and after
// the solve in the w's.
fn body_inv_d(b: u32) -> vec4<real> { return contacts[H_BODY_I + 2u * b]; }
fn body_inv_o(b: u32) -> vec4<real> { return contacts[H_BODY_I + 2u * b + 1u]; }
fn key_i(c: u32) -> u32 { return hard_words[W_KEY + 2u * c]; }
fn key_j(c: u32) -> u32 { return hard_words[W_KEY + 2u * c + 1u]; }
// The contact lists are laid out by id (issue 44: the CPU's order, whatever the storage):
// contacts are keyed by ids (a particle's, then its partner's or n + wall), and the
// offsets of a particle's own contacts and of its incidence list are at its id.
fn own_first(k: u32) -> u32 { return hard_words[W_OFF + k]; }
fn inc_first(k: u32) -> u32 { return hard_words[W_INC + k]; }
// The slot of the particle a contact key names.
fn key_slot(k: u32) -> u32 { return slot_of(k); }
fn state(k: u32) -> u32 { return hard_words[W_STATE + k]; }
fn set_state(k: u32, v: u32) { hard_words[W_STATE + k] = v; }
fn set_args(entry: u32, groups: u32) {
    hard_args[3u * entry] = groups;
    hard_args[3u * entry + 1u] = 1u;
    hard_args[3u * entry + 2u] = 1u;
}
fn groups_of(items: u32) -> u32 { return (items + WG - 1u) / WG; }
fn flag(bit: u32) -> bool { return (hard.flags & bit) != 0u; }

// The twin of cpu::kernels::hard::contact_priority.
fn contact_priority(i: u32, j: u32) -> u32 {
    var h = (i * 0x9E3779B1u) ^ (j * 0x85EBCA77u);
    h ^= h >> 16u;
    h *= 0x7FEB352Du;
    h ^= h >> 15u;
    h *= 0x846CA68Bu;
    return h ^ (h >> 16u);
}

// The twin of physics::hard::contact_frame: t and o of the unit normal n.
struct Frame { t: vec3<real>, o: vec3<real> }
fn contact_frame(n: vec3<real>) -> Frame {
    // copysign(1, n_z): −0 (the z of a normal −x̂, say) counts as negative.
    let positive = n.z > 0.0 || (n.z == 0.0 && real(1.0) / n.z > 0.0);
    let sign = select(real(-1.0), real(1.0), positive);
    let a = -1.0 / (sign + n.z);
    let b = pm(pm(n.x, n.y), a);
    let t = vec3<real>(1.0 + pm(pm(sign * n.x, n.x), a), sign * b, -sign * n.x);
    let o = vec3<real>(b, sign + pm(pm(n.y, n.y), a), -n.y);
    return Frame(t, o);
}

// The speculative margin of a pair with speeds si, sj (a wall: sj = 0): [contact]
// margin, or h(s_i + s_j) (CpuBackend::build_contacts).
fn pair_margin(si: real, sj: real) -> real {
    if (flag(HARD_FIXED_MARGIN)) { return hard.margin; }
    return hard.h * (si + sj);
}

fn speed_of(i: u32) -> real { return contacts[H_BODY_E + i].x; }
// 1/m of solver body b.
fn inv_mass(b: u32) -> real { return body_v(b).w; }
// The change of body b's angular velocity under the moment m: m/J for a free sphere,
// I⁻¹m for a clump (SolverBodies::turn).
fn turn(b: u32, m: vec3<real>) -> vec3<real> {
    if (b < N_FREE) { return pv(body_w(b).w, m); }
    return sym_mul(body_inv_d(b).xyz, body_inv_o(b).xyz, m);
}
// The solver bodies' particles: a free sphere itself, a clump its spheres.
fn body_particles(b: u32) -> vec2<u32> {
    if (b < N_FREE) { return vec2<u32>(b, 1u); }
    return clump_info(b - N_FREE).xy;
}
// Particle i's offset from its body's centre of mass: 0 for a free sphere, R(α)ρ for a
// clump's sphere at the step's start attitude.
fn body_lever(i: u32) -> vec3<real> {
    if (i < N_FREE) { return vec3<real>(0.0); }
    let k = i - N_FREE;
    return rotate(clump_get(particle_flags[O_MEMBER_BODY + k], CLUMP_A), member_offset(k));
}

// A pair i < j: its gap and unit normal (from i to j; +z for coincident centres).
struct PairGeometry { gap: real, n: vec3<real> }
fn pair_geometry(i: u32, j: u32) -> PairGeometry {
    let d = separation(get_pos(i), get_pos_kahan(i), get_pos(j), get_pos_kahan(j));
    let dist = sqrt(dot3(d, d));
    let gap = o(dist - radius_of(i)) - radius_of(j);
    var n = vec3<real>(0.0, 0.0, 1.0);
    if (dist > 0.0) { n = d / dist; }
    return PairGeometry(gap, n);
}

// Whether pair i < j is a contact of the step: a gap below its margin, a body that
// can move, and neither removed (a particle that left stays in the list until its next
// build; CpuBackend::build_contacts skips it).
fn pair_active(i: u32, j: u32) -> bool {
    if (((particle_flags[i] | particle_flags[j]) & FLAG_REMOVED) != 0u) { return false; }
    let g = pair_geometry(i, j);
    return g.gap < pair_margin(speed_of(i), speed_of(j)) && inv_mass(solver_body(i)) + inv_mass(solver_body(j)) > 0.0;
}

fn wall_gap(w: u32, i: u32) -> real {
    let wall = wall_at(w);
    let nrm = vec3<real>(wall.normal_x, wall.normal_y, wall.normal_z);
    return dot3(wall_offset(wall, get_pos(i), get_pos_kahan(i)), nrm) - radius_of(i);
}

// Wall w's surface velocity at particle i's foot on it, x − d n (zero unless it moves;
// WallState::side's v).
fn wall_velocity(w: u32, i: u32) -> vec3<real> {
    let wall = wall_at(w);
    let nrm = vec3<real>(wall.normal_x, wall.normal_y, wall.normal_z);
    let d = dot3(wall_offset(wall, get_pos(i), get_pos_kahan(i)), nrm);
    return wall_side(w, get_pos(i) - d * nrm).v;
}

fn speed(v: vec3<real>) -> real { return sqrt(dot3(v, v)); }

// A moving wall closes a gap at its surface speed too: margin h(s_i + |v_w|).
fn wall_active(w: u32, i: u32) -> bool {
    return wall_gap(w, i) < pair_margin(speed_of(i), speed(wall_velocity(w, i))) && 0.0 + inv_mass(solver_body(i)) > 0.0;
}

// Mesh features (meshes at rest): the contacts the Hertz and binder laws find, searched
// a skin further (the step's margin is at most the skin, hard_skin; the cell grid
// reaches that far), each a wall contact keyed n + walls + feature key
// (CpuBackend::build_contacts, in its candidate order).
struct MeshHard { h: MeshHit, vw: vec3<real> }
fn mesh_hard_contact(i: u32, near: u32, nc: u32, s: u32) -> MeshHard {
    var out = MeshHard(mesh_contact(near, nc, s, get_pos(i), radius_of(i) + params.skin), vec3<real>(0.0));
    if (out.h.key != MESH_NONE) {
        let gap = out.h.distance - radius_of(i);
        out.vw = mesh_side(mesh_of(out.h.key / 8u), out.h.point).v;
        let margin = pair_margin(speed_of(i), speed(out.vw));
        // The cell grid reaches a skin beyond the sphere: a larger margin could miss a
        // contact (as hard_skin refuses a margin beyond the skin).
        if (margin > params.skin) { raise(ERR_HARD_SKIN, 0u); }
        if (!(gap < margin && 0.0 + inv_mass(solver_body(i)) > 0.0)) {
            out.h.key = MESH_NONE;
        }
    }
    return out;
}

fn neighbor_count(li: u32) -> u32 { return neighbors[li * (params.max_neighbors + 1u)]; }
fn neighbor_at(li: u32, s: u32) -> u32 { return neighbors[li * (params.max_neighbors + 1u) + 1u + s]; }

// One invocation: the step's counters and solver state start at zero.
@compute @workgroup_size(1)
fn hard_begin() {
    if (failed()) { return; }
    for (var k = 0u; k < A_MISC_LEN; k++) { atomicStore(&hard_atomic[A_MISC + k], 0u); }
    // hard_color_place leaves the cursors at the colours' counts.
    for (var k = 0u; k < HARD_MAX_COLORS; k++) { atomicStore(&hard_atomic[A_CURSOR + k], 0u); }
    set_state(S_SWEEPS, 0u);
    set_state(S_CONVERGED, 0u);
}

// The free velocities of CpuBackend::free_velocities: v* = v + (h/m)(m g + drag), Ω* =
// Ω + (h/J)·0 (no moments act on a free sphere); held particles and locked rotations
// get zero velocity and inverse mass. Also each particle's speed |v*| + |Ω*| r (an
// upper bound of all of them in f32 bits, for the rebuild test), its kinetic energy at
// v*, and the force of the state (the field's, which outputs show).
@compute @workgroup_size(WG)
fn hard_free(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_HARD_FREE);
    let i = gid.x;
    if (i >= params.n_particles + N_BODIES || failed()) { return; }
    if (i >= params.n_particles) {
        free_clump(i - params.n_particles);
        return;
    }
    if (i >= N_FREE) {
        // A clump's sphere: its body's speed with the body's reach; the field acts on
        // the body.
        let s = clump_free(particle_flags[O_MEMBER_BODY + i - N_FREE]).speed;
        set_force(i, vec3<real>(0.0));
        contacts[H_BODY_E + i] = vec4<real>(s, 0.0, 0.0, 0.0);
        note_speed(i, s);
        return;
    }
    let flags = particle_flags[i];
    let m = mass_of(i);
    let jj = inertia_of(i);
    let held = (flags & (FLAG_HELD | FLAG_REMOVED)) != 0u;
    let locked = (flags & (FLAG_NO_ROTATION | FLAG_REMOVED)) != 0u;
    let v0 = get_vel(i);
    let w0 = get_omega(i);
    let g = vec3<real>(0.0) + m * gravity();
    set_force(i, g);
    var force = g;
    if ((params.flags & PARAM_DRAG) != 0u) {
        let vf = vec3<real>(params.fluid_x, params.fluid_y, params.fluid_z);
        force = g + o3(pv(-params.drag_c, v0 - vf) + pv(params.magnus, cross3(w0, v0)));
    }
    var v = vec3<real>(0.0);
    var im = real(0.0);
    if (!held) {
        v = v0 + pv(hard.h / m, force);
        im = 1.0 / m;
    }
    var w = vec3<real>(0.0);
    var ij = real(0.0);
    if (!locked) {
        w = w0 + pv(hard.h / jj, vec3<real>(0.0));
        ij = 1.0 / jj;
    }
    var s = real(0.0);
    if ((flags & FLAG_REMOVED) == 0u) {
        s = sqrt(dot3(v, v)) + pm(sqrt(dot3(w, w)), radius_of(i));
    }
    var e = real(0.0);
    if (im > 0.0) { e += 0.5 * m * dot(v, v); }
    if (ij > 0.0) { e += 0.5 * jj * dot(w, w); }
    contacts[H_BODY_V + i] = vec4<real>(v, im);
    contacts[H_BODY_W + i] = vec4<real>(w, ij);
    contacts[H_BODY_E + i] = vec4<real>(s, e, 0.0, 0.0);
    note_speed(i, s);
}

// The largest speed: the next f32 up bounds s from above; non-negative floats order as
// their bits.
fn note_speed(i: u32, s: real) {
    if (s == s) {
        atomicMax(&hard_atomic[A_MISC + M_UMAX], bitcast<u32>(f32(s)) + 1u);
    } else {
        raise(ERR_NON_FINITE, i);
    }
}

// A clump's free velocities (CpuBackend::free_velocities): v* = v + (h/M)F with its
// load F = M g (its spheres carry no field force, and nothing else acts under hard
// contacts), and Ω* = Ω for a scalar tensor, I(α)⁻¹π for a full one (τ = 0); its
// inverse tensor in the world frame, its largest point speed |v*| + |Ω*| reach and
// kinetic energy.
struct ClumpFree { v: vec3<real>, w: vec3<real>, inv_d: vec3<real>, inv_o: vec3<real>, speed: real, e: real }
fn clump_free(k: u32) -> ClumpFree {
    let info = clump_info(k);
    let t = clump_type(info.z);
    let a = clump_get(k, CLUMP_A);
    // A dormant body has no load (Bodies::gather_loads skips it): it stays at rest.
    var v = clump_get(k, CLUMP_V);
    if (!clump_dormant(k)) { v = v + (hard.h / t.mass) * (t.mass * gravity()); }
    let spin = clump_get(k, CLUMP_SPIN);
    var out: ClumpFree;
    out.v = v;
    var iw: vec3<real>;
    if (t.scalar != 0.0) {
        out.w = spin;
        out.inv_d = vec3<real>(1.0 / t.scalar);
        out.inv_o = vec3<real>(0.0);
        iw = t.scalar * spin;
    } else {
        out.w = spatial_mul(a, t.inv_diag, t.inv_off, spin);
        let c0 = spatial_mul(a, t.inv_diag, t.inv_off, vec3<real>(1.0, 0.0, 0.0));
        let c1 = spatial_mul(a, t.inv_diag, t.inv_off, vec3<real>(0.0, 1.0, 0.0));
        let c2 = spatial_mul(a, t.inv_diag, t.inv_off, vec3<real>(0.0, 0.0, 1.0));
        out.inv_d = vec3<real>(c0.x, c1.y, c2.z);
        out.inv_o = vec3<real>(c1.x, c2.x, c2.y);
        iw = spin;
    }
    var reach = real(0.0);
    for (var l = 0u; l < info.y; l++) {
        let i = info.x + l;
        reach = max(reach, length(member_offset(i - N_FREE)) + radius_of(i));
    }
    out.speed = length(out.v) + length(out.w) * reach;
    out.e = 0.5 * t.mass * dot(v, v) + 0.5 * dot(out.w, iw);
    return out;
}

// Per clump: its solver body N_FREE + k (velocities, 1/M, inverse tensor, energy) and
// its load for the outputs.
fn free_clump(k: u32) {
    let f = clump_free(k);
    let t = clump_type(clump_info(k).z);
    let b = N_FREE + k;
    contacts[H_BODY_V + b] = vec4<real>(f.v, 1.0 / t.mass);
    contacts[H_BODY_W + b] = vec4<real>(f.w, 0.0);
    contacts[H_BODY_I + 2u * b] = vec4<real>(f.inv_d, f.e);
    contacts[H_BODY_I + 2u * b + 1u] = vec4<real>(f.inv_o, 0.0);
    clump_set(k, CLUMP_F, select(t.mass * gravity(), vec3<real>(0.0), clump_dormant(k)));
    clump_set(k, CLUMP_M, vec3<real>(0.0));
}

// The rebuild test with the step's margin: the list holds every pair whose gap is
// below the margin as long as no particle moved more than (skin − margin)/2 relative
// to the common shift (NeighborList::update with `reserve`). A margin beyond the skin
// cannot be kept by this list: an error naming the skin.
@compute @workgroup_size(WG)
fn hard_skin(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n_particles || failed()) { return; }
    var reserve = hard.margin;
    if (!flag(HARD_FIXED_MARGIN)) {
        let u = real(bitcast<f32>(atomicLoad(&hard_atomic[A_MISC + M_UMAX])));
        // Rounding of 2hu in the kernel's precision, with room to spare.
        reserve = 2.0 * hard.h * u * real(1.000001);
    }
    if (reserve > params.skin) {
        raise(ERR_HARD_SKIN, 0u);
        return;
    }
    let moved = (get_pos(i) - get_ref(i)) - get_skin_shift();
    let half = 0.5 * (params.skin - reserve);
    if (dot(moved, moved) > half * half) {
        atomicOr(&status[STATUS_REBUILD], 1u);
    }
}

// Per particle (one row chunk): its own contacts (higher-id neighbours, then walls)
// into W_OFF, and its incidences (lower-id neighbours' contacts with it, then its own)
// into W_INC, for the scan.
@compute @workgroup_size(WG)
fn hard_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    var own = 0u;
    var upper = 0u;
    for (var s = 0u; s < neighbor_count(li); s++) {
        let j = neighbor_at(li, s);
        if (id_of(j) > id_of(i)) {
            if (pair_active(i, j)) { own++; }
        } else if (pair_active(j, i)) {
            upper++;
        }
    }
    for (var w = 0u; w < params.n_walls; w++) {
        if (wall_active(w, i)) { own++; }
    }
    for (var mp = 0u; mp < mesh_passes() && N_MESH_TRIS > 0u; mp++) {
        let nc = mesh_pass_cell(mp, get_pos(i));
        let near = mesh_near(mp, nc, get_pos(i), radius_of(i) + params.skin);
        var left = near;
        for (var s = mesh_next(&left, 31u); s < nc; s = mesh_next(&left, s)) {
            if (s >= 32u && mesh_other_pass(mp, s)) { continue; }
            if (mesh_hard_contact(i, near, nc, s).h.key != MESH_NONE) { own++; }
        }
    }
    hard_words[W_OFF + id_of(i)] = own;
    hard_words[W_INC + id_of(i)] = own + upper;
}

var<workgroup> scan_rows: array<vec2<u32>, WG>;

// Exclusive scan of the counts within each workgroup (items 0..=n; item n counts 0,
// so its offset is the total), and each workgroup's sum.
@compute @workgroup_size(WG)
fn hard_scan_local(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                   @builtin(workgroup_id) wid: vec3<u32>) {
    let t = gid.x;
    let n = params.n_particles;
    var own = vec2<u32>(0u);
    if (t < n) { own = vec2<u32>(hard_words[W_OFF + t], hard_words[W_INC + t]); }
    scan_rows[lid.x] = own;
    // Hillis–Steele inclusive scan (integers: exact).
    for (var stride = 1u; stride < WG; stride = stride * 2u) {
        workgroupBarrier();
        var add = vec2<u32>(0u);
        if (lid.x >= stride) { add = scan_rows[lid.x - stride]; }
        workgroupBarrier();
        scan_rows[lid.x] = scan_rows[lid.x] + add;
    }
    workgroupBarrier();
    if (t <= n) {
        let ex = scan_rows[lid.x] - own;
        hard_words[W_OFF + t] = ex.x;
        hard_words[W_INC + t] = ex.y;
    }
    if (lid.x == WG - 1u) {
        hard_words[W_GROUPS + 2u * wid.x] = scan_rows[lid.x].x;
        hard_words[W_GROUPS + 2u * wid.x + 1u] = scan_rows[lid.x].y;
    }
}

// One invocation: the workgroups' offsets, the totals, the capacity check and the
// dispatch sizes of the step's contact kernels.
@compute @workgroup_size(1)
fn hard_scan_top() {
    if (failed()) { return; }
    var acc = vec2<u32>(0u);
    for (var g = 0u; g < hard.scan_groups; g++) {
        let s = vec2<u32>(hard_words[W_GROUPS + 2u * g], hard_words[W_GROUPS + 2u * g + 1u]);
        hard_words[W_GROUPS + 2u * g] = acc.x;
        hard_words[W_GROUPS + 2u * g + 1u] = acc.y;
        acc = acc + s;
    }
    let total = acc.x;
    set_state(S_TOTAL, total);
    if (total > hard.capacity || acc.y > 2u * hard.capacity) {
        raise(ERR_HARD_CAPACITY, total);
        return;
    }
    let live = total > 0u;
    let jacobi = flag(HARD_JACOBI) && live;
    set_args(ARG_CONTACTS, groups_of(total));
    set_args(ARG_ROUND, select(0u, groups_of(total), flag(HARD_COLORED) && live));
    set_args(ARG_SOLVE_CONTACTS, select(0u, groups_of(total), jacobi));
    set_args(ARG_SOLVE_BODIES, select(0u, groups_of(params.n_particles), jacobi));
    for (var k = 0u; k < HARD_MAX_COLORS; k++) { set_args(ARG_COLOR + k, 0u); }
    // No contacts: solved without a sweep (hard_solve on the CPU).
    if (!live) { set_state(S_CONVERGED, 1u); }
}

@compute @workgroup_size(WG)
fn hard_scan_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if (t > params.n_particles || failed()) { return; }
    let g = t / WG;
    hard_words[W_OFF + t] += hard_words[W_GROUPS + 2u * g];
    hard_words[W_INC + t] += hard_words[W_GROUPS + 2u * g + 1u];
}

// The twin of physics::hard::project_cone (sqrt(t² + o²) for hypot).
fn project_cone(x: vec3<real>, mu: real) -> vec3<real> {
    let r = sqrt(pm(x.y, x.y) + pm(x.z, x.z));
    if (r <= mu * x.x) { return x; }
    if (mu * r <= -x.x) { return vec3<real>(0.0); }
    let xn = (x.x + pm(mu, r)) / (1.0 + pm(mu, mu));
    if (r == 0.0) { return vec3<real>(max(xn, 0.0), 0.0, 0.0); }
    let k = mu * xn / r;
    return vec3<real>(xn, k * x.y, k * x.z);
}

// Writes contact c of particle i (a slot) with partner `partner` (a particle id, or n +
// wall), keyed by i's id and `partner`:
// key, normal and gap term, the warm-start impulse (also its first δ), μ and the wall's
// surface velocity `vw` (zero for a pair or a wall at rest).
fn write_contact(c: u32, i: u32, partner: u32, n: vec3<real>, gap: real, mu: real,
                 vw: vec3<real>) {
    contacts[H_WALL_V + c] = vec4<real>(vw, 0.0);
    hard_words[W_KEY + 2u * c] = id_of(i);
    hard_words[W_KEY + 2u * c + 1u] = partner;
    var gap_term = -hard.eps * gap / hard.h;
    if (gap > 0.0) { gap_term = -gap / hard.h; }
    contacts[H_NORMAL + c] = vec4<real>(n, gap_term);
    var lam = vec3<real>(0.0);
    if (flag(HARD_WARM)) {
        let last = hard_words[W_WARM_OFF + id_of(i) + 1u];
        for (var k = hard_words[W_WARM_OFF + id_of(i)]; k < last; k++) {
            if (hard_words[W_WARM_KEY + k] == partner) {
                let pw = contacts[H_WARM + k].xyz;
                let f = contact_frame(n);
                lam = project_cone(vec3<real>(dot3(pw, n), dot3(pw, f.t), dot3(pw, f.o)), mu);
                break;
            }
        }
    }
    contacts[H_IMPULSE + c] = vec4<real>(lam, mu);
    contacts[H_DELTA + c] = vec4<real>(lam, 0.0);
    atomicStore(&hard_atomic[A_COLOR + c], NONE);
}

// Per particle (one row chunk): its own contacts at its offset, in the CPU's contact
// order (higher-id neighbours ascending, then walls), and their entries at the end of
// its incidence list (after its lower-id neighbours' contacts, hard_incidence).
@compute @workgroup_size(WG)
fn hard_build(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    let ki = id_of(i);
    let first = own_first(ki);
    let own = own_first(ki + 1u) - first;
    let upper = (inc_first(ki + 1u) - inc_first(ki)) - own;
    let list = inc_first(ki) + upper;
    let m = params.n_materials;
    let mat_i = material_of(i);
    var k = 0u;
    for (var s = 0u; s < neighbor_count(li); s++) {
        let j = neighbor_at(li, s);
        if (id_of(j) <= ki || !pair_active(i, j)) { continue; }
        let g = pair_geometry(i, j);
        let c = first + k;
        write_contact(c, i, id_of(j), g.n, g.gap, pair_mat(mat_i * m + material_of(j)).mu_s,
                      vec3<real>(0.0));
        hard_words[W_LIST + list + k] = 2u * c;
        k++;
    }
    for (var w = 0u; w < params.n_walls; w++) {
        if (!wall_active(w, i)) { continue; }
        let wall = wall_at(w);
        let c = first + k;
        write_contact(c, i, params.n_particles + w,
                      vec3<real>(wall.normal_x, wall.normal_y, wall.normal_z), wall_gap(w, i),
                      pair_mat(m * m + w * m + mat_i).mu_s, wall_velocity(w, i));
        // Against a wall the particle is the side the normal points to.
        hard_words[W_LIST + list + k] = 2u * c + 1u;
        k++;
    }
    for (var mp = 0u; mp < mesh_passes() && N_MESH_TRIS > 0u; mp++) {
        let nc = mesh_pass_cell(mp, get_pos(i));
        let near = mesh_near(mp, nc, get_pos(i), radius_of(i) + params.skin);
        var left = near;
        for (var s = mesh_next(&left, 31u); s < nc; s = mesh_next(&left, s)) {
            if (s >= 32u && mesh_other_pass(mp, s)) { continue; }
            let mh = mesh_hard_contact(i, near, nc, s);
            let h = mh.h;
            if (h.key == MESH_NONE) { continue; }
            let c = first + k;
            // From the wall into the particle.
            let mesh = mesh_of(h.key / 8u);
            write_contact(c, i, params.n_particles + params.n_walls + h.key, -h.normal,
                          h.distance - radius_of(i),
                          pair_mat(m * m + (params.n_walls + mesh) * m + mat_i).mu_s, mh.vw);
            hard_words[W_LIST + list + k] = 2u * c + 1u;
            k++;
        }
    }
}

// Per particle (one row chunk): the head of its incidence list, its lower-id
// neighbours' contacts with it in ascending neighbour id (so ascending contact id).
@compute @workgroup_size(WG)
fn hard_incidence(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let b = rows.first + li;
    let kb = id_of(b);
    var u = inc_first(kb);
    for (var s = 0u; s < neighbor_count(li); s++) {
        let kj = id_of(neighbor_at(li, s));
        if (kj >= kb) { break; }
        let last = own_first(kj + 1u);
        for (var c = own_first(kj); c < last; c++) {
            if (key_j(c) == kb) {
                hard_words[W_LIST + u] = 2u * c + 1u;
                u++;
                break;
            }
        }
    }
}

// The bodies [a, b] of contact c: b is the side n points to (the higher particle, or
// the particle of a wall contact), a the other (WALL for a wall).
fn contact_bodies(c: u32) -> vec2<u32> {
    let i = key_slot(key_i(c));
    let j = key_j(c);
    if (j >= params.n_particles) { return vec2<u32>(WALL, solver_body(i)); }
    return vec2<u32>(solver_body(i), solver_body(key_slot(j)));
}

// Whether contact c2 (priority p2) comes before c (priority p) in the colouring.
fn colored_first(p2: u32, c2: u32, p: u32, c: u32) -> bool {
    return p2 > p || (p2 == p && c2 < c);
}

// The colours of c's earlier neighbours as a 64-bit set (x: 0..31, y: 32..63), or
// ready = false when one of them has none yet.
struct Taken { bits: vec2<u32>, ready: bool }
fn earlier_colors(c: u32) -> Taken {
    let p = contact_priority(key_i(c), key_j(c));
    let ab = contact_bodies(c);
    var out = Taken(vec2<u32>(0u), true);
    for (var side = 0u; side < 2u; side++) {
        let body = ab[side];
        if (body == WALL) { continue; }
        let range = body_particles(body);
        for (var q = range.x; q < range.x + range.y; q++) {
            let kq = id_of(q);
            let last = inc_first(kq + 1u);
            for (var e = inc_first(kq); e < last; e++) {
                let c2 = hard_words[W_LIST + e] >> 1u;
                if (c2 == c) { continue; }
                if (!colored_first(contact_priority(key_i(c2), key_j(c2)), c2, p, c)) { continue; }
                let col = atomicLoad(&hard_atomic[A_COLOR + c2]);
                if (col == NONE) {
                    out.ready = false;
                    return out;
                }
                if (col < 32u) { out.bits.x |= 1u << col; } else if (col < 64u) { out.bits.y |= 1u << (col - 32u); }
            }
        }
    }
    return out;
}

// Colours c if all its earlier neighbours have colours: the lowest colour none of them
// has. Returns whether c is coloured.
fn color_one(c: u32) -> bool {
    if (atomicLoad(&hard_atomic[A_COLOR + c]) != NONE) { return true; }
    let t = earlier_colors(c);
    if (!t.ready) { return false; }
    var col = countTrailingZeros(~t.bits.x);
    if (col == 32u) { col = 32u + countTrailingZeros(~t.bits.y); }
    if (col >= HARD_MAX_COLORS) {
        raise(ERR_HARD_COLORS, c);
        col = HARD_MAX_COLORS - 1u;
    }
    atomicStore(&hard_atomic[A_COLOR + c], col);
    return true;
}

// A Jones–Plassmann round over the uncoloured contacts. A contact that is not ready is
// counted (M_LEFT) so that hard_color_gate can stop the rounds.
@compute @workgroup_size(WG)
fn hard_color_round(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_HARD_COLOR_ROUND);
    let c = gid.x;
    if (c >= state(S_TOTAL) || failed()) { return; }
    if (!color_one(c)) { atomicAdd(&hard_atomic[A_MISC + M_LEFT], 1u); }
}

// One invocation after each round: no contact left, no more rounds.
@compute @workgroup_size(1)
fn hard_color_gate() {
    if (atomicLoad(&hard_atomic[A_MISC + M_LEFT]) == 0u) { set_args(ARG_ROUND, 0u); }
    atomicStore(&hard_atomic[A_MISC + M_LEFT], 0u);
}

// One invocation after the last round: contacts still uncoloured (a long chain of
// decreasing priorities) are coloured by the same rule, pass after pass.
@compute @workgroup_size(1)
fn hard_color_rest() {
    if (failed() || hard_args[3u * ARG_ROUND] == 0u) { return; }
    let total = state(S_TOTAL);
    for (var round = 0u; round < total; round++) {
        var left = false;
        for (var c = 0u; c < total; c++) {
            if (!color_one(c)) { left = true; }
        }
        if (!left) { break; }
    }
}

@compute @workgroup_size(WG)
fn hard_color_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= state(S_TOTAL) || failed()) { return; }
    atomicAdd(&hard_atomic[A_CURSOR + atomicLoad(&hard_atomic[A_COLOR + c])], 1u);
}

// One invocation: the colours' offsets and dispatch sizes; the cursors restart.
@compute @workgroup_size(1)
fn hard_color_finish() {
    if (failed()) { return; }
    // The colours are 0..used: more than the host encodes per sweep, and the step is
    // taken again with more.
    var used = 0u;
    for (var k = 0u; k < HARD_MAX_COLORS; k++) {
        if (atomicLoad(&hard_atomic[A_CURSOR + k]) > 0u) { used = k + 1u; }
    }
    if (used > state(S_COLOR_BUDGET)) {
        raise(ERR_HARD_COLOR_BUDGET, used);
        return;
    }
    var at = 0u;
    for (var k = 0u; k < HARD_MAX_COLORS; k++) {
        hard_words[W_COFF + k] = at;
        let count = atomicLoad(&hard_atomic[A_CURSOR + k]);
        atomicStore(&hard_atomic[A_CURSOR + k], 0u);
        set_args(ARG_COLOR + k, groups_of(count));
        at += count;
    }
    hard_words[W_COFF + HARD_MAX_COLORS] = at;
}

// Each contact into its colour's list (the order within a colour does not matter: its
// contacts share no body).
@compute @workgroup_size(WG)
fn hard_color_place(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= state(S_TOTAL) || failed()) { return; }
    let col = atomicLoad(&hard_atomic[A_COLOR + c]);
    let s = atomicAdd(&hard_atomic[A_CURSOR + col], 1u);
    hard_words[W_CLIST + hard_words[W_COFF + col] + s] = c;
}

// The impulse p (world frame) of a change d (contact frame) at normal n.
fn world_of(d: vec3<real>, n: vec3<real>) -> vec3<real> {
    let f = contact_frame(n);
    return o3(o3(pv(d.x, n) + pv(d.y, f.t)) + pv(d.z, f.o));
}

// Kernel hard_gather (the bodies' side of hard_apply): body b adds its contacts' last
// change δ in ascending contact order, +p on the side n points to, −p on the other:
// v += p/m, Ω += (r × p)/J. Warm start (δ = λ) and every Jacobi sweep.
@compute @workgroup_size(WG)
fn hard_gather(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= params.n_particles || failed()) { return; }
    if (b >= N_FREE) {
        if (b < N_FREE + N_BODIES) { gather_clump(b); }
        return;
    }
    let sv = body_v(b);
    let sw = body_w(b);
    var v = sv.xyz;
    var w = sw.xyz;
    let r = radius_of(b);
    let kb = id_of(b);
    let last = inc_first(kb + 1u);
    for (var e = inc_first(kb); e < last; e++) {
        let entry = hard_words[W_LIST + e];
        let c = entry >> 1u;
        let n = h_normal(c).xyz;
        let p = world_of(h_delta(c).xyz, n);
        if ((entry & 1u) == 1u) {
            let m = cross3((-r) * n, p);
            v = v + pv(sv.w, p);
            w = w + pv(sw.w, m);
        } else {
            let m = cross3(r * n, p);
            v = v - pv(sv.w, p);
            w = w - pv(sw.w, m);
        }
    }
    contacts[H_BODY_V + b] = vec4<real>(v, sv.w);
    contacts[H_BODY_W + b] = vec4<real>(w, sw.w);
}

// hard_gather for clump body b: its spheres' contacts in sphere order, each sphere's in
// ascending contact order; v += p/M per contact, Ω += I⁻¹ Σ(r × p) once (the CPU turns
// per contact: the same sum up to rounding).
fn gather_clump(b: u32) {
    let sv = body_v(b);
    var v = sv.xyz;
    var mom = vec3<real>(0.0);
    let range = body_particles(b);
    for (var q = range.x; q < range.x + range.y; q++) {
        let lever = body_lever(q);
        let r = radius_of(q);
        let kq = id_of(q);
        let last = inc_first(kq + 1u);
        for (var e = inc_first(kq); e < last; e++) {
            let entry = hard_words[W_LIST + e];
            let c = entry >> 1u;
            let n = h_normal(c).xyz;
            let p = world_of(h_delta(c).xyz, n);
            if ((entry & 1u) == 1u) {
                v = v + pv(sv.w, p);
                mom = mom + cross3(lever - r * n, p);
            } else {
                v = v - pv(sv.w, p);
                mom = mom - cross3(lever + r * n, p);
            }
        }
    }
    contacts[H_BODY_V + b] = vec4<real>(v, sv.w);
    contacts[H_BODY_W + b] = vec4<real>(body_w(b).xyz + turn(b, mom), 0.0);
}

// Velocity of body k at lever r, zero for a wall.
fn point_velocity(k: u32, r: vec3<real>) -> vec3<real> {
    if (k == WALL) { return vec3<real>(0.0); }
    return o3(body_v(k).xyz + cross3(body_w(k).xyz, r));
}

// The twin of physics::hard::solve_sphere_contact: the impulse of block diag(a, c, c).
fn solve_sphere_contact(a: real, c: real, b: vec3<real>, mu: real) -> vec3<real> {
    if (b.x <= 0.0 || !finite3(b)) { return vec3<real>(0.0); }
    let xn = b.x / a;
    if (mu == 0.0) { return vec3<real>(xn, 0.0, 0.0); }
    let xt = b.y / c;
    let xo = b.z / c;
    let norm = sqrt(pm(xt, xt) + pm(xo, xo));
    let limit = mu * xn;
    if (norm <= limit) { return vec3<real>(xn, xt, xo); }
    let s = limit / norm;
    return vec3<real>(xn, s * xt, s * xo);
}

// A contact's update (the twin of hard_contact_update, sphere branch): the new impulse
// from the bodies' current velocities and the residual ‖A(λ' − λ)‖.
struct Update { x: vec3<real>, lam: vec3<real>, residual: real, n: vec3<real>, ra: vec3<real>, rb: vec3<real>, ab: vec2<u32> }
fn contact_update(c: u32) -> Update {
    let ab = contact_bodies(c);
    if (ab.y >= N_FREE || (ab.x != WALL && ab.x >= N_FREE)) { return general_update(c, ab); }
    let nv = h_normal(c);
    let n = nv.xyz;
    let f = contact_frame(n);
    let li = h_impulse(c);
    let lam = li.xyz;
    let mu = li.w;
    var ra = vec3<real>(0.0);
    var ma = real(0.0);
    var ja = real(0.0);
    if (ab.x != WALL) {
        ra = radius_of(ab.x) * n;
        ma = inv_mass(ab.x);
        ja = pm(body_w(ab.x).w, dot3(ra, ra));
    }
    let rb = (-radius_of(ab.y)) * n;
    let mb = inv_mass(ab.y);
    let jb = pm(body_w(ab.y).w, dot3(rb, rb));
    // A wall's surface velocity is zero unless it moves (and x − 0 is x).
    let u = point_velocity(ab.y, rb) - point_velocity(ab.x, ra) - contacts[H_WALL_V + c].xyz;
    let ba = ma + mb;
    let bc = o(ba + ja) + jb;
    let rhs = vec3<real>(o(pm(ba, lam.x) - dot3(u, n)) + nv.w, pm(bc, lam.y) - dot3(u, f.t), pm(bc, lam.z) - dot3(u, f.o));
    let x = solve_sphere_contact(ba, bc, rhs, mu);
    let d = vec3<real>(ba * (x.x - lam.x), bc * (x.y - lam.y), bc * (x.z - lam.z));
    let residual = sqrt(o(pm(d.x, d.x) + pm(d.y, d.y)) + pm(d.z, d.z));
    return Update(x, lam, residual, n, ra, rb, ab);
}

// Body k's share of a Delassus block (physics::hard::delassus): m⁻¹ eᵢ·eⱼ +
// (r × eᵢ)·I⁻¹(r × eⱼ) for the frame e = (n, t, o).
fn delassus_add(a: ptr<function, array<vec3<real>, 3>>, k: u32, r: vec3<real>, e: array<vec3<real>, 3>) {
    if (k == WALL) { return; }
    let im = inv_mass(k);
    var g: array<vec3<real>, 3>;
    var ig: array<vec3<real>, 3>;
    for (var j = 0u; j < 3u; j++) {
        g[j] = cross(r, e[j]);
        ig[j] = turn(k, g[j]);
    }
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            var add = dot(g[i], ig[j]);
            if (i == j) { add = add + im; }
            (*a)[i][j] = (*a)[i][j] + add;
        }
    }
}

// A contact with a clump's sphere (the twin of hard_contact_update's general branch):
// the block from the bodies' masses, inverse tensors and levers, b = Aλ − u + gap term,
// the single-contact solver of the scene's friction model (common/hard_solve.wgsl).
fn general_update(c: u32, ab: vec2<u32>) -> Update {
    let i = key_slot(key_i(c));
    let nv = h_normal(c);
    let n = nv.xyz;
    let f = contact_frame(n);
    let li = h_impulse(c);
    let lam = li.xyz;
    let mu = li.w;
    var ra = vec3<real>(0.0);
    var rb: vec3<real>;
    if (ab.x == WALL) {
        rb = body_lever(i) - radius_of(i) * n;
    } else {
        let j = key_slot(key_j(c));
        ra = body_lever(i) + radius_of(i) * n;
        rb = body_lever(j) - radius_of(j) * n;
    }
    let e = array<vec3<real>, 3>(n, f.t, f.o);
    var a = array<vec3<real>, 3>(vec3<real>(0.0), vec3<real>(0.0), vec3<real>(0.0));
    delassus_add(&a, ab.x, ra, e);
    delassus_add(&a, ab.y, rb, e);
    // A wall's surface velocity is zero unless it moves (and x − 0 is x).
    let u = point_velocity(ab.y, rb) - point_velocity(ab.x, ra) - contacts[H_WALL_V + c].xyz;
    let al = vec3<real>(dot(a[0], lam), dot(a[1], lam), dot(a[2], lam));
    let rhs = vec3<real>(al.x - dot(u, n) + nv.w, al.y - dot(u, f.t), al.z - dot(u, f.o));
    var x: vec3<real>;
    if (flag(HARD_COULOMB)) {
        x = solve_contact_coulomb(a, rhs, mu);
    } else {
        x = solve_contact_md(a, rhs, mu);
    }
    let dx = x - lam;
    let d = vec3<real>(dot(a[0], dx), dot(a[1], dx), dot(a[2], dx));
    return Update(x, lam, length(d), n, ra, rb, ab);
}

fn note_residual(r: real) {
    if (!(r <= hard.tol)) { atomicStore(&hard_atomic[A_MISC + M_FLAG], 1u); }
}

// Kernel hard_update (Jacobi): every contact from the sweep's starting velocities;
// λ += ω(λ' − λ), whose change hard_gather then applies.
@compute @workgroup_size(WG)
fn hard_update(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= state(S_TOTAL) || failed()) { return; }
    let up = contact_update(c);
    let om = hard.relaxation;
    let d = vec3<real>(pm(om, up.x.x - up.lam.x), pm(om, up.x.y - up.lam.y), pm(om, up.x.z - up.lam.z));
    contacts[H_IMPULSE + c] = vec4<real>(up.lam + d, h_impulse(c).w);
    contacts[H_DELTA + c] = vec4<real>(d, up.residual);
    note_residual(up.residual);
}

// Kernel hard_color_sweep: the contacts of one colour (hard_color.color) updated from
// the velocities at its start and applied at once to their bodies, which no other
// contact of the colour touches (commit in cpu::kernels::hard).
@compute @workgroup_size(WG)
fn hard_color_sweep(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = hard_color.color;
    let t = gid.x;
    let first = hard_words[W_COFF + k];
    if (t >= hard_words[W_COFF + k + 1u] - first || failed()) { return; }
    let c = hard_words[W_CLIST + first + t];
    let up = contact_update(c);
    let p = world_of(up.x - up.lam, up.n);
    let b = up.ab.y;
    let sv = body_v(b);
    let sw = body_w(b);
    contacts[H_BODY_V + b] = vec4<real>(sv.xyz + pv(sv.w, p), sv.w);
    contacts[H_BODY_W + b] = vec4<real>(sw.xyz + turn(b, cross3(up.rb, p)), sw.w);
    let a = up.ab.x;
    if (a != WALL) {
        let av = body_v(a);
        let aw = body_w(a);
        contacts[H_BODY_V + a] = vec4<real>(av.xyz - pv(av.w, p), av.w);
        contacts[H_BODY_W + a] = vec4<real>(aw.xyz - turn(a, cross3(up.ra, p)), aw.w);
    }
    contacts[H_IMPULSE + c] = vec4<real>(up.x, h_impulse(c).w);
    contacts[H_DELTA + c] = vec4<real>(up.x - up.lam, up.residual);
    note_residual(up.residual);
}

// One invocation after each sweep: a sweep with no residual above the tolerance ends
// the solve; the later sweeps' dispatches get zero workgroups.
@compute @workgroup_size(1)
fn hard_check() {
    if (failed() || state(S_CONVERGED) != 0u) { return; }
    set_state(S_SWEEPS, state(S_SWEEPS) + 1u);
    if (atomicLoad(&hard_atomic[A_MISC + M_FLAG]) == 0u) {
        set_state(S_CONVERGED, 1u);
        set_args(ARG_SOLVE_CONTACTS, 0u);
        set_args(ARG_SOLVE_BODIES, 0u);
        for (var k = 0u; k < HARD_MAX_COLORS; k++) { set_args(ARG_COLOR + k, 0u); }
    }
    atomicStore(&hard_atomic[A_MISC + M_FLAG], 0u);
}

var<workgroup> reduce_rows: array<vec4<real>, WG>;

// Tree over reduce_rows: sums in x, y and maxima in z, w. Fixed pairing order.
fn reduce_tree(lid: u32) -> vec4<real> {
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (lid < stride) {
            let a = reduce_rows[lid];
            let b = reduce_rows[lid + stride];
            reduce_rows[lid] = vec4<real>(a.x + b.x, a.y + b.y, max(a.z, b.z), max(a.w, b.w));
        }
    }
    workgroupBarrier();
    return reduce_rows[0];
}

fn row_slot() -> u32 { return (atomicLoad(&status[STATUS_STEP]) - 1u) % HARD_ROWS; }

// One workgroup after the solve: the last sweep's largest residual, and the row's
// solver words; with on_nonconvergence = "error" an unconverged solve stops the run
// here, before the state moves.
@compute @workgroup_size(WG)
fn hard_solve_end(@builtin(local_invocation_id) lid: vec3<u32>) {
    let total = state(S_TOTAL);
    var r = real(0.0);
    for (var c = lid.x; c < total; c += WG) { r = max(r, h_delta(c).w); }
    reduce_rows[lid.x] = vec4<real>(0.0, 0.0, r, 0.0);
    let q = reduce_tree(lid.x);
    if (lid.x != 0u || failed()) { return; }
    let converged = state(S_CONVERGED);
    // Every encoded sweep used, fewer than max_sweeps: the host encodes more and takes
    // the step again (nothing of the state has moved).
    if (converged == 0u && state(S_SWEEPS) < hard.max_sweeps) {
        raise(ERR_HARD_SWEEP_BUDGET, state(S_SWEEPS));
        return;
    }
    let slot = row_slot();
    let o = W_ROWS + HARD_ROW_WORDS * slot;
    hard_words[o + ROW_SWEEPS] = state(S_SWEEPS);
    hard_words[o + ROW_CONVERGED] = converged;
    hard_words[o + ROW_CONTACTS] = total;
    hard_words[o + ROW_STEP] = atomicLoad(&status[STATUS_STEP]);
    contacts[H_ROWS + slot] = vec4<real>(q.z, 0.0, 0.0, 0.0);
    if (converged == 0u && flag(HARD_ON_ERROR)) {
        raise(ERR_HARD_NO_CONVERGENCE, atomicLoad(&status[STATUS_STEP]));
    }
}

// x' = x + hv', α' = α ⊕ hΩ' (a locked rotation keeps α), with the domain and
// half-turn checks of step_hard_with; the state's v and Ω become the solver's; the
// kinetic energy after the solve; this step's contact offsets kept for the next warm
// start.
@compute @workgroup_size(WG)
fn hard_advance(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_HARD_ADVANCE);
    let i = gid.x;
    if (i > params.n_particles || failed()) { return; }
    hard_words[W_WARM_OFF + i] = own_first(i);
    // A clump's sphere follows its body (hard_advance_clumps, hard_follow).
    if (i >= N_FREE) { return; }
    let flags = particle_flags[i];
    if ((flags & FLAG_REMOVED) != 0u) {
        // Removed (or not inserted yet): it keeps its state, as step_hard_with keeps
        // it (the solver held it: no energy).
        contacts[H_BODY_E + i].z = 0.0;
        return;
    }
    let sv = body_v(i);
    let sw = body_w(i);
    let m = mass_of(i);
    let jj = inertia_of(i);
    let x = kahan_add(get_pos(i), pv(hard.h, sv.xyz), get_pos_kahan(i));
    var a = get_rot(i);
    if (sw.w > 0.0) {
        let c = try_compose(a, hard.h * sw.xyz);
        if (!c.ok) {
            raise(ERR_HALF_TURN, i);
            return;
        }
        a = c.value;
    }
    var leaves = false;
    if ((params.flags & PARAM_DOMAIN) != 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(x.value >= lo) && all(x.value <= hi))) {
            if ((params.flags & PARAM_DOMAIN_REMOVE) == 0u) {
                raise(ERR_LEFT_DOMAIN, i);
                return;
            }
            leaves = true;
        }
    }
    if (!(finite3(x.value) && finite3(sv.xyz) && finite3(a) && finite3(sw.xyz))) {
        raise(ERR_NON_FINITE, i);
        return;
    }
    set_pos(i, x.value);
    set_pos_kahan(i, x.kahan);
    set_vel(i, sv.xyz, m);
    // Removed (step_hard_with): parked where it left with the velocity it left with,
    // its rotation as before the step and not spinning; removed.csv's step.
    set_omega(i, select(sw.xyz, vec3<real>(0.0), leaves), jj);
    set_rot(i, select(a, get_rot(i), leaves));
    if (leaves) {
        set_flags(i, flags | FLAG_REMOVED);
        particle_flags[O_EXIT_STEP + i] = atomicLoad(&status[STATUS_STEP]);
    }
    var e = real(0.0);
    if (sv.w > 0.0) { e += 0.5 * m * dot(sv.xyz, sv.xyz); }
    if (sw.w > 0.0) { e += 0.5 * jj * dot(sw.xyz, sw.xyz); }
    contacts[H_BODY_E + i].z = e;
}

// Per clump after hard_advance: x' = x + hv', α' = α ⊕ hΩ' with the checks of
// step_hard_with (errors name the clump); the spin variable π' = I(α)Ω' (π* plus the
// angular impulse received, to rounding) or Ω' for a scalar tensor; the kinetic energy
// after the solve at the step's start attitude, as the CPU's.
@compute @workgroup_size(WG)
fn hard_advance_clumps(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_HARD_ADVANCE_CLUMPS);
    let k = gid.x;
    if (k >= N_BODIES || failed() || clump_dormant(k)) { return; }
    let b = N_FREE + k;
    let t = clump_type(clump_info(k).z);
    let v = body_v(b).xyz;
    let w = body_w(b).xyz;
    let a0 = clump_get(k, CLUMP_A);
    let x = kahan_add(clump_get(k, CLUMP_X), hard.h * v, clump_get(k, CLUMP_CX));
    let c = try_compose(a0, hard.h * w);
    if (!c.ok) {
        raise(ERR_CLUMP_HALF_TURN, k);
        return;
    }
    if ((params.flags & PARAM_DOMAIN) != 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(x.value >= lo) && all(x.value <= hi))) {
            raise(ERR_CLUMP_LEFT_DOMAIN, k);
            return;
        }
    }
    var spin = w;
    var iw = t.scalar * w;
    if (t.scalar == 0.0) {
        spin = spatial_mul(a0, t.j_diag, t.j_off, w);
        iw = spin;
    }
    if (!(finite3(x.value) && finite3(v) && finite3(c.value) && finite3(spin))) {
        raise(ERR_CLUMP_NON_FINITE, k);
        return;
    }
    clump_set(k, CLUMP_X, x.value);
    clump_set(k, CLUMP_CX, x.kahan);
    clump_set(k, CLUMP_V, v);
    clump_set(k, CLUMP_CV, vec3<real>(0.0));
    clump_set(k, CLUMP_A_OLD, a0);
    clump_set(k, CLUMP_A, c.value);
    clump_set(k, CLUMP_SPIN, spin);
    clump_set(k, CLUMP_CSPIN, vec3<real>(0.0));
    contacts[H_BODY_I + 2u * b + 1u].w = 0.5 * t.mass * dot(v, v) + 0.5 * dot(w, iw);
}

// Per clump sphere after hard_advance_clumps: placed and moving with its body at its
// new pose (x_b + R(α')ρ, v_b + Ω × R(α')ρ, Ω at the new attitude), as step_hard_with
// places them.
@compute @workgroup_size(WG)
fn hard_follow(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= params.n_particles - N_FREE || failed()) { return; }
    let i = N_FREE + k;
    let b = particle_flags[O_MEMBER_BODY + k];
    if (clump_dormant(b)) { return; }
    let t = clump_type(clump_info(b).z);
    let a = clump_get(b, CLUMP_A);
    let lever = rotate(a, member_offset(k));
    let x = kahan_add(clump_get(b, CLUMP_X), lever, clump_get(b, CLUMP_CX));
    let w = clump_omega(t, a, clump_get(b, CLUMP_SPIN));
    set_pos(i, x.value);
    set_pos_kahan(i, x.kahan);
    set_vel(i, clump_get(b, CLUMP_V) + cross(w, lever), mass_of(i));
    set_rot(i, a);
    set_omega(i, w, inertia_of(i));
}

// Per contact after the advance: the warm start of the next step (the impulse in the
// world frame, under the partner's key), the branch counts by the impulse itself, and
// the penetration at the new positions (solver_row).
@compute @workgroup_size(WG)
fn hard_save(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= state(S_TOTAL) || failed()) { return; }
    let nv = h_normal(c);
    let li = h_impulse(c);
    let lam = li.xyz;
    contacts[H_WARM + c] = vec4<real>(world_of(lam, nv.xyz), 0.0);
    let i = key_slot(key_i(c));
    let j = key_j(c);
    hard_words[W_WARM_KEY + c] = j;
    let tangential = sqrt(pm(lam.y, lam.y) + pm(lam.z, lam.z));
    if (lam.x <= 0.0 && tangential == 0.0) {
        atomicAdd(&hard_atomic[A_MISC + M_SEPARATING], 1u);
    } else if (tangential < pm(pm(li.w, lam.x), 1.0 - 1e-9)) {
        atomicAdd(&hard_atomic[A_MISC + M_STICKING], 1u);
    } else {
        atomicAdd(&hard_atomic[A_MISC + M_SLIDING], 1u);
    }
    var gap: real;
    if (j >= params.n_particles + params.n_walls) {
        // A mesh feature: the distance to it (SolverRow's max_penetration).
        let d = mesh_feature_point(j - params.n_particles - params.n_walls, get_pos(i)) - get_pos(i);
        gap = sqrt(glam_dot(d, d)) - radius_of(i);
    } else if (j >= params.n_particles) {
        gap = wall_gap(j - params.n_particles, i);
    } else {
        gap = pair_geometry(i, key_slot(j)).gap;
    }
    contacts[H_NORMAL + c].w = -gap;
}

// One workgroup after hard_save: the row's energy lost in the solve (kinetic energy at
// the free velocities minus after), largest penetration and branch counts.
@compute @workgroup_size(WG)
fn hard_row(@builtin(local_invocation_id) lid: vec3<u32>) {
    let total = state(S_TOTAL);
    var q = vec4<real>(0.0);
    // Over ids (the same sums whatever the storage).
    for (var k = lid.x; k < params.n_particles; k += WG) {
        let e = contacts[H_BODY_E + slot_of(k)];
        q.x += e.y;
        q.y += e.z;
    }
    for (var k = lid.x; k < N_BODIES; k += WG) {
        q.x += body_inv_d(N_FREE + k).w;
        q.y += body_inv_o(N_FREE + k).w;
    }
    for (var c = lid.x; c < total; c += WG) { q.w = max(q.w, contacts[H_NORMAL + c].w); }
    reduce_rows[lid.x] = q;
    let s = reduce_tree(lid.x);
    if (lid.x != 0u || failed()) { return; }
    let slot = row_slot();
    let o = W_ROWS + HARD_ROW_WORDS * slot;
    hard_words[o + ROW_STICKING] = atomicLoad(&hard_atomic[A_MISC + M_STICKING]);
    hard_words[o + ROW_SLIDING] = atomicLoad(&hard_atomic[A_MISC + M_SLIDING]);
    hard_words[o + ROW_SEPARATING] = atomicLoad(&hard_atomic[A_MISC + M_SEPARATING]);
    contacts[H_ROWS + slot].y = s.w;
    contacts[H_ROWS + slot].z = s.x - s.y;
}
