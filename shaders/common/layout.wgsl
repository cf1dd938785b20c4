// Shared layout of every varidem kernel: the parameter block, the records, and the
// buffers (group 0). The host prepends `alias real = f32|f64;` and the constants WG
// (workgroup size), MAX_NEIGHBORS (private neighbour-list capacity) and MAX_REAL.
// The Rust twins of these structs live in src/gpu/layout.rs; tests/gpu_layout.rs checks
// sizes and offsets with naga.

// Run parameters, one uniform block. Size is a multiple of 16 in both precisions.
struct Params {
    n_particles: u32,
    n_bonds: u32,
    n_walls: u32,
    n_buckets: u32,
    bucket_capacity: u32,
    max_neighbors: u32,
    // PARAM_* bits.
    flags: u32,
    // 0 = variational (map 25), 1 = variational-exact (map 23), 2 = symplectic-euler (27).
    integrator: u32,
    // Number of partial sums reduce_final folds (particle groups + every bond chunk's).
    n_partials: u32,
    // Materials M: the granular pair table is M × M pairs, then W × M wall pairs.
    n_materials: u32,
    // Contact-history slots per particle.
    max_contacts: u32,
    pad_u2: u32,
    dt: real,
    k_pp: real,
    skin: real,
    inv_cell: real,
    gravity_x: real,
    gravity_y: real,
    gravity_z: real,
    // Always 1: hides the compensation algebra from the compiler (see comp_add).
    one: real,
    // Drag (Campello eq. 15) and Magnus (Remark 4).
    drag_c: real,
    fluid_x: real,
    fluid_y: real,
    fluid_z: real,
    magnus: real,
    // [domain] box (PARAM_DOMAIN).
    domain_min_x: real,
    domain_min_y: real,
    domain_min_z: real,
    domain_max_x: real,
    domain_max_y: real,
    domain_max_z: real,
    // Near-field Mie force (Campello eq. 17; PARAM_NEAR) and its cutoff, which is also
    // the smallest neighbour reach (0 without near field).
    nf_kappa_a: real,
    nf_lambda_a: real,
    nf_kappa_r: real,
    nf_lambda_r: real,
    nf_cutoff: real,
}

// Effective properties of a material pair (or material and wall): the layout of
// src/gpu/layout.rs `PairRecord`.
struct PairMat {
    e_star: real,
    g_star: real,
    xi: real,
    mu_s: real,
    mu_d: real,
    pad0: real,
    pad1: real,
    pad2: real,
}

// One chunk of the bond set. Bonds are split into chunks whose buffers each fit one
// storage binding (max_storage_buffer_binding_size); per-bond kernels run per chunk.
struct Chunk {
    // Bonds in this chunk.
    n_bonds: u32,
    // 1 for the first chunk: bond_gather starts the force sums from zero.
    first: u32,
    // First partial-sum slot of this chunk's bond energies (reduce_bond_partials).
    partial_base: u32,
    // Global id of the chunk's first bond.
    bond_base: u32,
}

// One chunk of the particle rows. The per-particle row buffers that only their owner
// reads or writes (neighbour rows, contact-history ids and springs, wall springs,
// gout, comp) are split into row chunks whose buffers each fit one storage binding;
// the kernels that touch them (integrate_predict, neighbor_build, granular_forces,
// particle_forces) run once per chunk over particles first .. first + count and index
// those buffers by i − first. Every particle's work is the same as in one dispatch, so
// the results are bitwise the same; state arrays read for partners (pos, vel, ...)
// stay whole.
struct Rows {
    // Global id of the chunk's first particle.
    first: u32,
    // Particles in the chunk.
    count: u32,
    pad0: u32,
    pad1: u32,
}

// A binder bond with its rest state: the layout of src/model/bonds.rs `Bond`.
struct Bond {
    i: u32,
    j: u32,
    k_bend: real,
    k_axial: real,
    k_shear: real,
    rest_length: real,
    rest_dir_i_x: real,
    rest_dir_i_y: real,
    rest_dir_i_z: real,
    rest_dir_j_x: real,
    rest_dir_j_y: real,
    rest_dir_j_z: real,
    rest_rotation_x: real,
    rest_rotation_y: real,
    rest_rotation_z: real,
}

// A bond whose ends started with the same orientation (PARAM_COMPACT_BONDS): one rest
// direction, zero rest rotation, stiffnesses by row of bond_kinds. The layout of
// src/gpu/layout.rs `BondCompact`; load_bond unpacks it into a Bond.
struct BondCompact {
    rest_length: real,
    rest_dir_x: real,
    rest_dir_y: real,
    rest_dir_z: real,
    i: u32,
    j: u32,
    kind: u32,
}

// A planar wall: point, unit normal, stiffness.
struct Wall {
    point_x: real,
    point_y: real,
    point_z: real,
    normal_x: real,
    normal_y: real,
    normal_z: real,
    stiffness: real,
    pad0: real,
}

// Status words (u32), shared with the host (src/gpu/mod.rs STATUS_*).
const STATUS_STEP: u32 = 0u;       // steps completed
const STATUS_ERROR: u32 = 1u;      // bit set of error codes (0: no error)
const STATUS_REBUILD: u32 = 2u;    // neighbour list stale
const STATUS_BUILDS: u32 = 3u;     // neighbour-list builds so far
const STATUS_MAX_NEIGHBORS: u32 = 4u;
const STATUS_AHEAD: u32 = 5u;      // 1: the error was raised by a fused predict (next step)
const STATUS_FIRST_INDEX: u32 = 8u; // + code: lowest particle/bond index with that error
const ERR_ROTATION_DOMAIN: u32 = 0u;
const ERR_HALF_TURN: u32 = 1u;
const ERR_BOND_HALF_TURN: u32 = 2u;
const ERR_BUCKET_OVERFLOW: u32 = 3u;
const ERR_NEIGHBOR_OVERFLOW: u32 = 4u;
const ERR_NON_FINITE: u32 = 5u;
const ERR_CONTACT_OVERFLOW: u32 = 6u;
const ERR_LEFT_DOMAIN: u32 = 7u;

const FLAG_HELD: u32 = 1u;
const FLAG_PENDULUM: u32 = 2u;
const FLAG_NO_ROTATION: u32 = 4u;
const FLAG_REMOVED: u32 = 8u;
const PARAM_CONTACT: u32 = 1u;
const PARAM_PRINTED_SHEAR: u32 = 2u;
const PARAM_HERTZ: u32 = 8u;      // granular Hertz–Mindlin contacts
const PARAM_DRAG: u32 = 16u;      // drag / Magnus forces
const PARAM_FIRST: u32 = 32u;     // first force evaluation: zero increments
const PARAM_DOMAIN: u32 = 64u;    // [domain] box checked in integrate_predict
const PARAM_DOMAIN_REMOVE: u32 = 128u; // leaving particles are removed, not an error
const PARAM_NEAR: u32 = 256u;     // near-field Mie forces
const PARAM_MERGED: u32 = 512u;   // fused steps: particle_forces_predict runs the contacts
const PARAM_POS_DIRECT: u32 = 1024u; // particle_forces_predict predicts x in pos, not pos_next
const PARAM_INLINE_BONDS: u32 = 2048u; // fused steps: particle_forces_predict computes its bonds
const PARAM_COMPACT_BONDS: u32 = 4096u; // bonds are BondCompact records (bonds_compact)

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> status: array<atomic<u32>>;
// The state a contact partner is read for is stored one vec4 per particle, with the
// constant the same readers need in w: position and radius, velocity and mass, Ω and
// the moment of inertia; the force, which partners read too, has w unused (0). A
// partner's x and r (every listed neighbour, every grid candidate) or v and m (every
// touching one) are then one 16- or 32-byte load instead of four scalar ones: fewer
// load instructions on GPUs, and on llvmpipe, which turns each scalar load of a
// per-invocation address into one access per SIMD lane, 1.5× faster partner reads
// (examples/gpu_loads). The w constants are set at upload and never change: set_vel and
// set_omega take them from the caller, which has them loaded, and store whole
// vectors; positions are stored by component. Arrays that no kernel reads for partners
// keep three reals per particle: padding them would add 4 B of memory traffic per
// particle and pass (a whole array is streamed every step) for no fewer partner loads.
// (Binding 9, formerly the mass, inertia and radius array these w hold, is free.)
@group(0) @binding(2) var<storage, read_write> pos: array<vec4<real>>;
@group(0) @binding(3) var<storage, read_write> vel: array<vec4<real>>;
@group(0) @binding(4) var<storage, read_write> rot: array<real>;
@group(0) @binding(5) var<storage, read_write> omega: array<vec4<real>>;
@group(0) @binding(6) var<storage, read_write> force: array<vec4<real>>;
@group(0) @binding(7) var<storage, read_write> moment: array<real>;
@group(0) @binding(8) var<storage, read> pend: array<real>;
// Particle flags; integrate_predict sets FLAG_REMOVED on particles leaving the domain.
@group(0) @binding(10) var<storage, read_write> pflags: array<u32>;
// Per particle: half of its contact pairs' energy, its wall energy, half of its
// near-field pairs' energy.
@group(0) @binding(11) var<storage, read_write> penergy: array<real>;
@group(0) @binding(12) var<storage, read_write> ref_pos: array<real>;
// The chunk's bonds (bindings 13, 14, 15 and 23 are bound per chunk).
@group(0) @binding(13) var<storage, read> bonds: array<Bond>;
// Per bond of the chunk: F_i (3), RM_i (3), RM_j (3), U^m, U^a, U^s.
@group(0) @binding(14) var<storage, read_write> bond_out: array<real>;
// The chunk's CSR incidence: offsets[0..=N] then entries 2·(bond in chunk) + side,
// ascending bond id per particle.
@group(0) @binding(15) var<storage, read> incidence: array<u32>;
@group(0) @binding(16) var<storage, read> walls: array<Wall>;
@group(0) @binding(17) var<storage, read_write> bucket_count: array<atomic<u32>>;
@group(0) @binding(18) var<storage, read_write> bucket_items: array<u32>;
// Per particle of the row chunk a row of 1 + max_neighbors: count, then ascending ids.
@group(0) @binding(19) var<storage, read_write> neighbors: array<u32>;
@group(0) @binding(20) var<storage, read_write> partials: array<real>;
@group(0) @binding(21) var<storage, read_write> result: array<real>;
// Compensation terms of x, v and Ω (Kahan): used only when COMPENSATE (f32 builds), so
// that per-step rounding does not accumulate in the state (momentum conservation and
// contact overlaps in f32). In f64 builds the updates are plain, as on the CPU.
// Bound per row chunk (struct Rows), rows indexed from rows.first: nine reals per
// particle (streamed every step, so not padded: see the vec4 state arrays above).
@group(0) @binding(22) var<storage, read_write> comp: array<real>;
@group(0) @binding(23) var<uniform> chunk: Chunk;
// One contact-history slot (host twin: src/gpu/layout.rs HistRecord): the pair's spring
// and the partner's id (NO_PARTNER ends a row), in one record (16 B in f32, 32 B in f64) so that a slot is one load and one
// store (on llvmpipe 1.08–1.17× the bed's speed, with the rank-slot lookup of
// granular_sum, against ids and springs in two arrays).
struct HistSlot {
    spring: vec3<real>,
    id: u32,
}

// Granular (granular.wgsl): pair table, particle materials, the contact history in two
// copies (A, B) that alternate by step parity, the wall springs likewise (one vec4 each,
// w unused), and the granular kernel's output per particle, three vec4: (force,
// e_contact), (moment, e_wall), (e_near, unused). The evaluation of step s writes copy
// s & 1 and reads the other: the host binds that copy at the *_new bindings and the
// other at *_old (two bind groups, chosen per step), so the kernel never branches on
// the parity. Bindings 19, 22, 28-32 and 33 are bound per row chunk (struct Rows):
// their rows are those of the chunk's particles, indexed from rows.first. (Bindings
// 26 and 27, formerly the history ids, are free.)
@group(0) @binding(24) var<storage, read> pair_table: array<PairMat>;
@group(0) @binding(25) var<storage, read> pmaterial: array<u32>;
@group(0) @binding(28) var<storage, read_write> hist_new: array<HistSlot>;
@group(0) @binding(29) var<storage, read_write> hist_old: array<HistSlot>;
@group(0) @binding(30) var<storage, read_write> wall_s_new: array<vec4<real>>;
@group(0) @binding(31) var<storage, read_write> wall_s_old: array<vec4<real>>;
@group(0) @binding(32) var<storage, read_write> gout: array<vec4<real>>;
@group(0) @binding(33) var<uniform> rows: Rows;
// Indirect-dispatch arguments of the grid kernels (src/gpu/mod.rs grid_args): the count
// K, K triples (x, 1, 1) that grid_gate fills, then the K workgroup counts of a rebuild.
@group(0) @binding(34) var<storage, read_write> grid_args: array<u32>;
// Positions predicted by the fused particle_forces_predict, committed to pos by
// commit_pos at the start of the next step.
@group(0) @binding(35) var<storage, read_write> pos_next: array<real>;
// Motion records (struct Motion, common/contact.wgsl): per particle the end-of-step
// velocity with the mass (one vec4) and the increments Δx, Δα that its contact
// partners use, written by the predict of the step before (integrate_predict,
// particle_forces_predict) and read by the merged contact pass of
// particle_forces_predict, which overwrites v, Ω and F while partners read them. Two copies bound by step parity like the history (A at the even
// binding): `*_new` is written, `*_old` read.
@group(0) @binding(36) var<storage, read_write> motion_v_new: array<vec4<real>>;
@group(0) @binding(37) var<storage, read_write> motion_v_old: array<vec4<real>>;
@group(0) @binding(38) var<storage, read_write> motion_dx_new: array<real>;
@group(0) @binding(39) var<storage, read_write> motion_dx_old: array<real>;
@group(0) @binding(40) var<storage, read_write> motion_da_new: array<real>;
@group(0) @binding(41) var<storage, read_write> motion_da_old: array<real>;
// Rotations predicted by a fused particle_forces_predict that computes its bond terms
// itself (PARAM_INLINE_BONDS): partners' α are read in that dispatch, so the new α waits
// here, like x in pos_next, until commit_pos.
@group(0) @binding(42) var<storage, read_write> rot_next: array<real>;
// Compact bond records (PARAM_COMPACT_BONDS; bound per bond chunk like bonds, which is
// then empty) and their stiffness table: K^m, K^a, K^s per kind.
@group(0) @binding(43) var<storage, read> bond_kinds: array<real>;
@group(0) @binding(44) var<storage, read> bonds_compact: array<BondCompact>;
// The displacement the rebuild test discounts (check_skin): particle 0's since the last
// build, taken by grid_finish before the predict moves it (src/neighbor NeighborList::shift).
@group(0) @binding(45) var<storage, read_write> skin_shift: array<real>;

fn get_pos(i: u32) -> vec3<real> { return pos[i].xyz; }
// Positions are stored component by component: the radius in w stays, and commit_pos
// need not read it.
fn set_pos(i: u32, v: vec3<real>) { pos[i].x = v.x; pos[i].y = v.y; pos[i].z = v.z; }
fn set_pos_next(i: u32, v: vec3<real>) { pos_next[3u * i] = v.x; pos_next[3u * i + 1u] = v.y; pos_next[3u * i + 2u] = v.z; }
fn get_vel(i: u32) -> vec3<real> { return vel[i].xyz; }
// m, jj: the particle's mass and inertia (the unchanged w).
fn set_vel(i: u32, v: vec3<real>, m: real) { vel[i] = vec4<real>(v, m); }
fn get_rot(i: u32) -> vec3<real> { return vec3<real>(rot[3u * i], rot[3u * i + 1u], rot[3u * i + 2u]); }
fn set_rot(i: u32, v: vec3<real>) { rot[3u * i] = v.x; rot[3u * i + 1u] = v.y; rot[3u * i + 2u] = v.z; }
fn set_rot_next(i: u32, v: vec3<real>) { rot_next[3u * i] = v.x; rot_next[3u * i + 1u] = v.y; rot_next[3u * i + 2u] = v.z; }
fn get_omega(i: u32) -> vec3<real> { return omega[i].xyz; }
fn set_omega(i: u32, v: vec3<real>, jj: real) { omega[i] = vec4<real>(v, jj); }
fn get_force(i: u32) -> vec3<real> { return force[i].xyz; }
fn set_force(i: u32, v: vec3<real>) { force[i] = vec4<real>(v, 0.0); }
fn get_moment(i: u32) -> vec3<real> { return vec3<real>(moment[3u * i], moment[3u * i + 1u], moment[3u * i + 2u]); }
fn set_moment(i: u32, v: vec3<real>) { moment[3u * i] = v.x; moment[3u * i + 1u] = v.y; moment[3u * i + 2u] = v.z; }
fn get_pend(i: u32) -> vec3<real> { return vec3<real>(pend[3u * i], pend[3u * i + 1u], pend[3u * i + 2u]); }
fn get_ref(i: u32) -> vec3<real> { return vec3<real>(ref_pos[3u * i], ref_pos[3u * i + 1u], ref_pos[3u * i + 2u]); }
fn set_ref(i: u32, v: vec3<real>) { ref_pos[3u * i] = v.x; ref_pos[3u * i + 1u] = v.y; ref_pos[3u * i + 2u] = v.z; }
// Bond k of the bound chunk, from whichever record form the scene uses: a compact
// record unpacks to the values of the full one (src/gpu/layout.rs CompactBonds), so
// the bond law computes the same bits.
fn load_bond(k: u32) -> Bond {
    if ((params.flags & PARAM_COMPACT_BONDS) == 0u) {
        return bonds[k];
    }
    let c = bonds_compact[k];
    let o = 3u * c.kind;
    return Bond(c.i, c.j, bond_kinds[o], bond_kinds[o + 1u], bond_kinds[o + 2u], c.rest_length,
                c.rest_dir_x, c.rest_dir_y, c.rest_dir_z, c.rest_dir_x, c.rest_dir_y, c.rest_dir_z,
                0.0, 0.0, 0.0);
}
fn bond_vec(o: u32) -> vec3<real> { return vec3<real>(bond_out[o], bond_out[o + 1u], bond_out[o + 2u]); }

// Adds the bound bond chunk's results for particle i to f and t, in ascending bond id
// (the CPU gather's order). Branch-free: lavapipe executes both arms of a divergent
// `if`, loads included; x − y is x + (−y) in IEEE arithmetic, so the sums are the same.
fn gather_bonds(i: u32, f: ptr<function, vec3<real>>, t: ptr<function, vec3<real>>) {
    let first = incidence[i];
    let last = incidence[i + 1u];
    let base = params.n_particles + 1u;
    for (var k = first; k < last; k++) {
        let e = incidence[base + k];
        let o = 12u * (e >> 1u);
        let odd = (e & 1u) != 0u;
        let fb = bond_vec(o);
        *f += select(fb, -fb, odd);
        *t += bond_vec(o + select(3u, 6u, odd));
    }
}

fn mass_of(i: u32) -> real { return vel[i].w; }
fn inertia_of(i: u32) -> real { return omega[i].w; }
fn radius_of(i: u32) -> real { return pos[i].w; }
fn gravity() -> vec3<real> { return vec3<real>(params.gravity_x, params.gravity_y, params.gravity_z); }

// An error stops every later kernel; the lowest index per code is kept (deterministic).
fn raise(code: u32, index: u32) {
    atomicOr(&status[STATUS_ERROR], 1u << code);
    atomicMin(&status[STATUS_FIRST_INDEX + code], index);
}

fn is_removed(i: u32) -> bool { return (pflags[i] & FLAG_REMOVED) != 0u; }

fn failed() -> bool { return atomicLoad(&status[STATUS_ERROR]) != 0u; }

fn finite3(v: vec3<real>) -> bool {
    return all(v == v) && all(abs(v) <= vec3<real>(MAX_REAL));
}
