// Shared layout of every varidem kernel: the parameter block, the records, and the
// buffers (group 0). The host prepends `alias real = f32|f64;`, the constants WG
// (workgroup size), MAX_NEIGHBORS (private neighbour-list capacity) and MAX_REAL, and
// the section offsets O_* of the packed buffers (src/gpu/plan.rs Sections). After this
// file comes one of common/bonds_full.wgsl and common/bonds_compact.wgsl, which declare
// the bond records' binding. The Rust twins of these structs live in src/gpu/layout.rs;
// tests/gpu_shaders.rs checks sizes, offsets and binding numbers with naga.
//
// Portable limits: no kernel may use more than 16 storage buffers (Direct3D 12
// resource-binding tier 2; Metal allows 29, WebGPU's default is 8). Arrays of the same
// element type and lifetime therefore share one buffer in sections (`body`, `vecs`,
// `particle_flags`, `tables`, `motion`, `row_vec`), each section starting at a constant element
// offset O_* from the header, or, for the two copies swapped by step parity, at an
// offset in the per-chunk `rows` uniform. tests/gpu_shaders.rs counts every entry
// point's storage buffers through naga.

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
    // Particle ids, the reduction's leaves: n_particles, or more when storage is
    // compacted (slot_of gives NOT_STORED for an id not stored).
    n_ids: u32,
    dt: real,
    k_pp: real,
    skin: real,
    inv_cell: real,
    gravity_x: real,
    gravity_y: real,
    gravity_z: real,
    // Always 1: hides the compensation algebra from the compiler (see kahan_add).
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
    // [contact] max_overlap of the Hertz law (ERR_OVERLAP); how far past touching the
    // mesh search looks for JKR contacts in tension (0 without JKR); then padding to
    // 16 bytes.
    max_overlap: real,
    jkr_reach: real,
    pad_r1: real,
    pad_r2: real,
}

// Effective properties of a material pair (or material and wall): the layout of
// src/gpu/layout.rs `PairRecord`.
struct PairRecord {
    e_star: real,
    g_star: real,
    xi: real,
    mu_s: real,
    mu_d: real,
    // Rolling friction μ_r and EPSD damping ratio η_r (physics::rolling).
    mu_r: real,
    eta_r: real,
    // JKR surface energy γ (0: the Hertz law; physics::jkr).
    gamma: real,
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
// granular_out, kahan) are split into row chunks whose buffers each fit one storage binding;
// the kernels that touch them (integrate_predict, neighbor_build, granular_forces,
// particle_forces) run once per chunk over particles first .. first + count and index
// those buffers by i − first. Every particle's work is the same as in one dispatch, so
// the results are bitwise the same; state arrays read for partners (pos, vel, ...)
// stay whole.
//
// The host binds one RowChunk block per row chunk and step parity: the offsets of the copy
// the evaluation writes (`*_new`) and of the one it reads (`*_old`) of the contact
// history (in `hist`), of the wall springs (in `row_vec`) and of the motion records (v
// in `body`, Δx and Δα in `motion`) swap with the parity of the step, so that kernels
// never branch on it (src/gpu/mod.rs BY_PARITY).
struct RowChunk {
    // Global id of the chunk's first particle.
    first: u32,
    // Particles in the chunk.
    count: u32,
    // History slots of this chunk: first slot of the written and of the read copy.
    hist_new: u32,
    hist_old: u32,
    // Wall springs of this chunk in row_vec: first element of each copy.
    wall_new: u32,
    wall_old: u32,
    // This chunk's granular output (three vec4 per particle) in row_vec.
    granular_out: u32,
    // Motion records: v and m (vec4) in body, Δx and Δα (three reals each) in motion.
    mv_new: u32,
    mv_old: u32,
    mdx_new: u32,
    mdx_old: u32,
    mda_new: u32,
    mda_old: u32,
    // First wall-load record in the chunk's row_vec (0: loads are not recorded).
    wall_load: u32,
    // Mesh slots (MESH_SLOTS per particle, keyed by feature) of the written and the
    // read copy, in hist after both copies of the particle slots.
    mesh_new: u32,
    mesh_old: u32,
    // EPSD rolling springs (ROLLING == 2, physics::rolling), two copies each like the
    // tangential ones: of the particle slots (in hist after the mesh slots), of the
    // mesh slots (in hist after those) and of the walls (in row_vec after the loads).
    roll_new: u32,
    roll_old: u32,
    mroll_new: u32,
    mroll_old: u32,
    wroll_new: u32,
    wroll_old: u32,
    pad0: u32,
    pad1: u32,
}

// A binder bond with its rest state: the layout of src/model/bonds.rs `Bond`.
struct BondRecord {
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
// src/gpu/layout.rs `BondCompact`; load_bond unpacks it into a BondRecord.
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
struct WallRecord {
    point_x: real,
    point_y: real,
    point_z: real,
    normal_x: real,
    normal_y: real,
    normal_z: real,
    stiffness: real,
    pad0: real,
}

// Hard contacts (shaders/hard.wgsl, the impulse-velocity integrator): the solver's
// parameters. The layout of src/gpu/layout.rs `HardParams`.
struct HardParams {
    // Contact capacity C (the sections of `contacts` and `hard_words` hold C each).
    capacity: u32,
    // [contact] max_sweeps.
    max_sweeps: u32,
    // HARD_* bits.
    flags: u32,
    // Workgroups of the contact-count scan over n + 1 items.
    scan_groups: u32,
    // Time step h, error reduction ε, tolerance (m/s), Jacobi relaxation ω and the
    // fixed margin (HARD_FIXED_MARGIN).
    h: real,
    eps: real,
    tol: real,
    relaxation: real,
    margin: real,
    pad0: real,
    pad1: real,
    pad2: real,
}

// One colour of the colored solver: hard_color_sweep is bound once per colour.
struct HardColor {
    color: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// The status words (STATUS_*), kernel error codes (ERR_*), particle flags (FLAG_*),
// parameter flags (PARAM_*), integrator codes (INTEGRATOR_*) and NO_PARTNER are
// constants of the generated header, from src/gpu/contract.rs.

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
//
// body, N vec4 per section: x and r | v and m | Ω and J | F | the two copies of the
// motion records' v and m (merged contact passes only; offsets in `rows`) | the
// positions' Kahan terms (f32 builds, w unused: see separation() below).
@group(0) @binding(2) var<storage, read_write> body: array<vec4<real>>;
// vecs, 3 reals per particle per section: α | M | pendulum offsets (scenes with
// pendulum particles) | positions at the last neighbour-list build (contact scenes) |
// energies (half of each contact pair's, the wall's, half of each near-field pair's) |
// the shift the rebuild test discounts (3 reals in all: particle 0's displacement since
// the last build, taken by grid_finish before the predict moves it, src/neighbor
// NeighborList::shift) | x predicted by a fused particle_forces_predict (pos_next,
// committed by commit_pos) | α predicted with inline bond terms (rot_next) | the Kahan
// terms of pos_next (f32 builds with pos_next).
@group(0) @binding(3) var<storage, read_write> vecs: array<real>;
// particle_flags, N words per section: particle flags (integrate_predict sets FLAG_REMOVED on
// particles leaving the domain) | materials (granular scenes) | then the clump and mesh
// words (src/gpu/plan.rs) | the step at which each removed particle left (O_EXIT_STEP,
// scenes with removal) | the id of each storage slot (O_ID) and the slot of each id
// (O_SLOT), when storage is not in id order (IDS, issue 44).
@group(0) @binding(4) var<storage, read_write> particle_flags: array<u32>;
// Constant tables: the granular pair table (M × M pairs, then W × M wall pairs; two
// vec4 per PairRecord) | the walls (two vec4 per WallRecord) | compact bond kinds (K^m, K^a, K^s).
@group(0) @binding(5) var<storage, read> tables: array<vec4<real>>;
// Motion records' Δx and Δα (three reals per particle), two copies by step parity
// (offsets in `rows`). See struct Motion (common/contact.wgsl).
@group(0) @binding(6) var<storage, read_write> motion: array<real>;
// Binding 7, the chunk's bond records, is declared by common/bonds_full.wgsl or
// common/bonds_compact.wgsl. Bindings 7-10 are bound per bond chunk.
// Per bond of the chunk: F_i (3), RM_i (3), RM_j (3), U^m, U^a, U^s.
@group(0) @binding(8) var<storage, read_write> bond_out: array<real>;
// The chunk's CSR incidence: offsets[0..=N] then entries 2·(bond in chunk) + side,
// ascending bond id per particle.
@group(0) @binding(9) var<storage, read> incidence: array<u32>;
@group(0) @binding(10) var<uniform> chunk: Chunk;
// Bindings 11-15 are bound per row chunk (struct RowChunk): their rows are those of the
// chunk's particles, indexed from rows.first.
// Per particle of the row chunk a row of 1 + max_neighbors: count, then ascending ids.
@group(0) @binding(11) var<storage, read_write> neighbors: array<u32>;
// Compensation terms of v and Ω (Kahan): used only when COMPENSATE (f32 builds), so
// that per-step rounding does not accumulate in the state (momentum conservation in
// f32). In f64 builds the updates are plain, as on the CPU. Six reals per particle
// (streamed every step, so not padded: see body above). The positions' terms are in
// body (section O_POS_KAHAN), where partners read them.
@group(0) @binding(12) var<storage, read_write> kahan: array<real>;
// One contact-history slot (host twin: src/gpu/layout.rs HistRecord): the pair's spring
// and the partner's id (NO_PARTNER ends a row), in one record (16 B in f32, 32 B in f64) so that a slot is one load and one
// store (on llvmpipe 1.08–1.17× the bed's speed, with the rank-slot lookup of
// granular_sum, against ids and springs in two arrays).
struct HistRecord {
    spring: vec3<real>,
    id: u32,
}
// Granular (granular.wgsl): the contact history in two copies (A, B) that alternate by
// step parity, max_contacts slots per particle each; the evaluation of step s writes
// copy s & 1 and reads the other, at the offsets rows.hist_new and rows.hist_old.
@group(0) @binding(13) var<storage, read_write> hist: array<HistRecord>;
// row_vec: the wall springs in two copies by parity like the history (one vec4 per
// particle and wall, w unused; rows.wall_new, rows.wall_old) | the granular kernel's
// output per particle, three vec4: (force, e_contact), (moment, e_wall), (e_near,
// unused) (rows.granular_out) | under the Hertz law with walls, the wall loads of the
// step status[STATUS_LOADS] names, LOAD_VEC4 vec4 per particle and wall: (force on the
// wall, 1 if touching), (contact point, 0) and with rolling resistance (the rolling
// torques' reaction, 0) (rows.wall_load; summed on the host as the CPU sums them,
// backend::loads) | the walls' EPSD rolling springs in two copies (rows.wroll_*).
@group(0) @binding(14) var<storage, read_write> row_vec: array<vec4<real>>;
@group(0) @binding(15) var<uniform> rows: RowChunk;
@group(0) @binding(16) var<storage, read_write> bucket_count: array<atomic<u32>>;
@group(0) @binding(17) var<storage, read_write> bucket_items: array<u32>;
// Indirect-dispatch arguments of the grid kernels (src/gpu/mod.rs grid_args): the count
// K, K triples (x, 1, 1) that grid_gate fills, then the K workgroup counts of a rebuild.
@group(0) @binding(18) var<storage, read_write> grid_args: array<u32>;
@group(0) @binding(19) var<storage, read_write> partials: array<real>;
@group(0) @binding(20) var<storage, read_write> result: array<real>;

// Hard contacts (shaders/hard.wgsl; sections H_*, W_*, A_*, ARG_* of src/gpu/hard.rs
// HardSections in the generated header).
@group(0) @binding(21) var<uniform> hard: HardParams;
// contacts, vec4 per item: per contact its normal and gap term | impulse λ and μ | the
// last change δ and residual | the warm-start impulse (world frame); per particle the
// solver's v and 1/m | Ω and 1/J | speed, kinetic energies; per step of a submission
// the solver.csv reals.
@group(0) @binding(22) var<storage, read_write> contacts: array<vec4<real>>;
// hard_words: offsets, keys, incidence lists, colour lists, solver.csv words, state.
@group(0) @binding(23) var<storage, read_write> hard_words: array<u32>;
// hard_atomic: each contact's colour, the colours' cursors, the solver's counters.
@group(0) @binding(24) var<storage, read_write> hard_atomic: array<atomic<u32>>;
// Indirect-dispatch triples of the hard kernels (ARG_*), zeroed once the solve is done.
@group(0) @binding(25) var<storage, read_write> hard_args: array<u32>;
@group(0) @binding(26) var<uniform> hard_color: HardColor;

fn get_pos(i: u32) -> vec3<real> { return body[i].xyz; }
// Positions are stored component by component: the radius in w stays, and commit_pos
// need not read it.
fn set_pos(i: u32, v: vec3<real>) { body[i].x = v.x; body[i].y = v.y; body[i].z = v.z; }
fn get3(o: u32) -> vec3<real> { return vec3<real>(vecs[o], vecs[o + 1u], vecs[o + 2u]); }
fn set3(o: u32, v: vec3<real>) { vecs[o] = v.x; vecs[o + 1u] = v.y; vecs[o + 2u] = v.z; }
fn get_pos_next(i: u32) -> vec3<real> { return get3(O_POS_NEXT + 3u * i); }
fn set_pos_next(i: u32, v: vec3<real>) { set3(O_POS_NEXT + 3u * i, v); }
// The Kahan vec4 of particle i (f32 builds; zero in f64): in xyz the term c of its
// position, which is x − c to about u² |x| where x alone carries u |x| (u = 2⁻²⁴; see
// separation()); in w its flags as a real (exact: flags < 2²⁴), kept equal to
// particle_flags by set_flags, so that a contact partner's flags come with its term in
// one load instead of two (flags_with).
fn get_pos_kahan4(i: u32) -> vec4<real> {
    if (!COMPENSATE) { return vec4<real>(0.0); }
    return body[O_POS_KAHAN + i];
}
fn get_pos_kahan(i: u32) -> vec3<real> { return get_pos_kahan4(i).xyz; }
// Stored by component, as positions are: the flags in w stay.
fn set_pos_kahan(i: u32, c: vec3<real>) {
    if (!COMPENSATE) { return; }
    let o = O_POS_KAHAN + i;
    body[o].x = c.x; body[o].y = c.y; body[o].z = c.z;
}
// Particle i's flags, in particle_flags and (f32 builds) the w of its Kahan vec4.
fn set_flags(i: u32, flags: u32) {
    particle_flags[i] = flags;
    if (COMPENSATE) { body[O_POS_KAHAN + i].w = real(flags); }
}
// The flags of partner j whose Kahan vec4 k was loaded: its w in f32 builds,
// particle_flags in f64 (where k is zero and was not loaded).
fn flags_with(j: u32, k: vec4<real>) -> u32 {
    if (COMPENSATE) { return u32(k.w); }
    return particle_flags[j];
}
fn get_pos_kahan_next(i: u32) -> vec3<real> {
    if (!COMPENSATE) { return vec3<real>(0.0); }
    return get3(O_POS_KAHAN_NEXT + 3u * i);
}
fn set_pos_kahan_next(i: u32, c: vec3<real>) {
    if (!COMPENSATE) { return; }
    set3(O_POS_KAHAN_NEXT + 3u * i, c);
}
// The separation x_b − x_a of two positions with Kahan terms c_a, c_b: in f32 builds
// (x_b − x_a) − (c_b − c_a). For nearby positions x_b − x_a is exact (Sterbenz: within
// a factor 2 of each other, per component) and c_b − c_a is at most u·|x| in size, so
// the separation is accurate to u·|x_b − x_a| + u²·|x|: relative to the pair's
// distance, not to the coordinates' magnitude (issue 29; docs/physics.md, *Single
// precision and placement*). In f64 builds it is x_b − x_a, the CPU's bits.
fn separation(x_a: vec3<real>, c_a: vec3<real>, x_b: vec3<real>, c_b: vec3<real>) -> vec3<real> {
    if (!COMPENSATE) { return x_b - x_a; }
    return (x_b - x_a) - (c_b - c_a);
}
fn get_vel(i: u32) -> vec3<real> { return body[O_VEL + i].xyz; }
// m, jj: the particle's mass and inertia (the unchanged w).
fn set_vel(i: u32, v: vec3<real>, m: real) { body[O_VEL + i] = vec4<real>(v, m); }
fn get_rot(i: u32) -> vec3<real> { return get3(3u * i); }
fn set_rot(i: u32, v: vec3<real>) { set3(3u * i, v); }
fn get_rot_next(i: u32) -> vec3<real> { return get3(O_ROT_NEXT + 3u * i); }
fn set_rot_next(i: u32, v: vec3<real>) { set3(O_ROT_NEXT + 3u * i, v); }
fn get_omega(i: u32) -> vec3<real> { return body[O_OMEGA + i].xyz; }
fn set_omega(i: u32, v: vec3<real>, jj: real) { body[O_OMEGA + i] = vec4<real>(v, jj); }
fn get_force(i: u32) -> vec3<real> { return body[O_FORCE + i].xyz; }
fn set_force(i: u32, v: vec3<real>) { body[O_FORCE + i] = vec4<real>(v, 0.0); }
fn get_moment(i: u32) -> vec3<real> { return get3(O_MOMENT + 3u * i); }
fn set_moment(i: u32, v: vec3<real>) { set3(O_MOMENT + 3u * i, v); }
fn get_pend(i: u32) -> vec3<real> { return get3(O_PENDULUM + 3u * i); }
fn get_ref(i: u32) -> vec3<real> { return get3(O_REF + 3u * i); }
fn set_ref(i: u32, v: vec3<real>) { set3(O_REF + 3u * i, v); }
fn get_energy(i: u32) -> vec3<real> { return get3(O_ENERGY + 3u * i); }
fn set_energy(i: u32, e: vec3<real>) { set3(O_ENERGY + 3u * i, e); }
fn get_skin_shift() -> vec3<real> { return get3(O_SKIN); }
fn set_skin_shift(u: vec3<real>) { set3(O_SKIN, u); }
fn material_of(i: u32) -> u32 { return particle_flags[O_MATERIAL + i]; }
// Record k of the pair table.
fn pair_mat(k: u32) -> PairRecord {
    let a = tables[2u * k];
    let b = tables[2u * k + 1u];
    return PairRecord(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
fn wall_at(w: u32) -> WallRecord {
    let a = tables[O_WALLS + 2u * w];
    let b = tables[O_WALLS + 2u * w + 1u];
    // A scene with moving walls reads every wall's point and normal at this step from
    // the pose the host wrote (WallState::place's; a wall at rest keeps its own).
    if (MOVING_WALLS != 0u) {
        let o = wall_pose_at(w);
        let p = tables[o];
        let n = tables[o + 1u];
        return WallRecord(p.x, p.y, p.z, n.x, n.y, n.z, b.z, b.w);
    }
    return WallRecord(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
// The mesh walls' data (sections O_MESH_*, src/gpu/contents.rs MeshData): the
// accessors common/mesh.wgsl reads. `mesh_first` is the first item of the cell being
// searched (set by the caller before mesh_contact).
var<private> mesh_first: u32;
// vec4 k of the meshes' vertex and triangle data (tables index, O_MESH_VERTS on): at
// rest in `tables`; placed at the current step (by mesh_place, in `vecs`) if some mesh
// moves.
fn mesh_data(k: u32) -> vec4<real> {
    if (MOVING_MESHES == 0u) { return tables[k]; }
    let o = O_MESH_PLACED + 4u * (k - O_MESH_VERTS);
    return vec4<real>(vecs[o], vecs[o + 1u], vecs[o + 2u], vecs[o + 3u]);
}
fn mesh_vertex(v: u32) -> vec3<real> { return mesh_data(O_MESH_VERTS + v).xyz; }
fn mesh_corner(t: u32, k: u32) -> vec3<real> { return mesh_data(O_MESH_TRIS + 7u * t + k).xyz; }
fn mesh_plane(t: u32) -> vec4<real> { return mesh_data(O_MESH_TRIS + 7u * t + 3u); }
fn mesh_edge(t: u32, k: u32) -> vec4<real> { return mesh_data(O_MESH_TRIS + 7u * t + 4u + k); }
fn mesh_tri(t: u32, k: u32) -> u32 { return particle_flags[O_MESH_IDS + 10u * t + k]; }
fn mesh_key(t: u32, j: u32) -> u32 { return particle_flags[O_MESH_IDS + 10u * t + 3u + j]; }
fn mesh_of(t: u32) -> u32 { return particle_flags[O_MESH_IDS + 10u * t + 9u]; }
fn mesh_candidate(s: u32) -> u32 { return particle_flags[O_MESH_ITEMS + mesh_first + s]; }
// The first vec4 of mesh m's pose at the current step (step_begin has counted it):
// rotation columns, centre (w: 1 if the mesh moves), translation, velocity, angular
// velocity, axis point. Only if some mesh moves.
fn mesh_pose_at(m: u32) -> u32 {
    let slot = atomicLoad(&status[STATUS_STEP]) % POSE_SLOTS;
    return O_MESH_POSES + MESH_POSE_VEC4 * (slot * N_MESHES + m);
}
// Mesh m's two records after the grid's: its axis point at rest (w: the end of its
// vertices), then its binder stiffness K^pp (x).
fn mesh_info(m: u32) -> u32 { return O_MESH_GRID + 2u + 2u * m; }
// Mesh m's axis point now: moments of its load are taken about it.
fn mesh_axis(m: u32) -> vec3<real> {
    if (MOVING_MESHES == 0u) { return tables[mesh_info(m)].xyz; }
    return tables[mesh_pose_at(m) + 7u].xyz;
}
// Mesh m's pose applied to a point: R (x − c) + c + t (model::Pose::place, its order).
fn mesh_place_point(o: u32, x: vec3<real>) -> vec3<real> {
    let c = tables[o + 3u].xyz;
    let d = x - c;
    let r = tables[o].xyz * d.x + tables[o + 1u].xyz * d.y + tables[o + 2u].xyz * d.z;
    return r + c + tables[o + 4u].xyz;
}
// How many passes the mesh contact search makes: one per mesh if some mesh moves
// (each from the sphere's place in that mesh's rest frame, over its own triangles),
// else one over them all.
fn mesh_passes() -> u32 {
    if (MOVING_MESHES != 0u) { return N_MESHES; }
    return 1u;
}
// The candidates of pass mp for a sphere at x: sets mesh_first and returns how many
// (0 outside the grid). Triangle ids ascend mesh by mesh: the CPU's candidate order.
fn mesh_pass_cell(mp: u32, x: vec3<real>) -> u32 {
    let g0 = tables[O_MESH_GRID];
    let g1 = tables[O_MESH_GRID + 1u];
    let cell = mesh_cell(mesh_rest_point(mp, x), g0.xyz, g0.w, vec3<u32>(g1.xyz));
    if (cell == MESH_NONE) { return 0u; }
    mesh_first = particle_flags[O_MESH_CELLS + cell];
    return particle_flags[O_MESH_CELLS + cell + 1u] - mesh_first;
}
// Whether candidate s belongs to another pass's mesh.
fn mesh_other_pass(mp: u32, s: u32) -> bool {
    return MOVING_MESHES != 0u && mesh_of(mesh_candidate(s)) != mp;
}
// The candidates of pass mp's cell (n of them) that may be within `reach` of x
// (mesh_may_touch), as bits for the first 32 (mesh_next visits the rest in order);
// other passes' meshes are left out. The search proper (closest_point,
// mesh_all_agree) then loops over the few that pass instead of the whole cell: on SIMD
// lanes that run both arms of every branch (lavapipe), each turn of those loops costs
// its every arm.
fn mesh_near(mp: u32, n: u32, x: vec3<real>, reach: real) -> u32 {
    var bits = 0u;
    for (var s = 0u; s < min(n, 32u); s++) {
        if (!mesh_other_pass(mp, s) && mesh_may_touch(mesh_candidate(s), x, reach)) {
            bits |= 1u << s;
        }
    }
    return bits;
}
// x in mesh m's rest frame, where its cell grid lies: Rᵀ (x − t − c) + c.
fn mesh_rest_point(m: u32, x: vec3<real>) -> vec3<real> {
    if (MOVING_MESHES == 0u) { return x; }
    let o = mesh_pose_at(m);
    let c = tables[o + 3u].xyz;
    let d = x - tables[o + 4u].xyz - c;
    return vec3<real>(dot(tables[o].xyz, d), dot(tables[o + 1u].xyz, d),
                      dot(tables[o + 2u].xyz, d)) + c;
}
// Load records per particle (rows.wall_load): LOAD_VEC4 vec4 for each plane, then each
// mesh: (force, 1 if touching), (contact point, or the mesh's moment sum), and with
// rolling resistance (a plane's rolling-torque reaction, 0).
// LOAD_VEC4 (2, or 3 with rolling resistance) is in the generated header.
fn load_stride() -> u32 { return params.n_walls + N_MESHES; }
// The accessors of mesh_carried: the mesh slots of the particle being summed, in the
// written (`mesh_new_row`) and the read (`mesh_old_row`) copy of hist.
var<private> mesh_new_row: u32;
var<private> mesh_old_row: u32;
fn mesh_now_key(a: u32) -> u32 { return hist[mesh_new_row + a].id; }
fn mesh_old_key(s: u32) -> u32 { return hist[mesh_old_row + s].id; }
fn mesh_old_spring(s: u32) -> vec3<real> { return hist[mesh_old_row + s].spring; }
fn mesh_set_start(a: u32, spring: vec3<real>) { hist[mesh_new_row + a].spring = spring; }
// EPSD rolling springs of the mesh slots (ROLLING == 2), handed over with the
// tangential ones: contact a's starts from old slot s (MESH_NONE: zero).
fn mesh_carry_roll(a: u32, s: u32) {
    if (ROLLING != 2u) { return; }
    var v = vec3<real>(0.0);
    if (s != MESH_NONE) { v = hist[mesh_old_row - rows.mesh_old + rows.mroll_old + s].spring; }
    hist[mesh_new_row - rows.mesh_new + rows.mroll_new + a] = HistRecord(v, 0u);
}
fn mesh_old_roll(a: u32) -> vec3<real> {
    if (ROLLING != 2u) { return vec3<real>(0.0); }
    return hist[mesh_new_row - rows.mesh_new + rows.mroll_new + a].spring;
}
fn mesh_set_roll(a: u32, v: vec3<real>) {
    if (ROLLING == 2u) { hist[mesh_new_row - rows.mesh_new + rows.mroll_new + a].spring = v; }
}
// The first vec4 of wall w's pose at the current step (the step being evaluated:
// step_begin has counted it): point, normal, velocity, angular velocity, axis point.
fn wall_pose_at(w: u32) -> u32 {
    let slot = atomicLoad(&status[STATUS_STEP]) % POSE_SLOTS;
    return O_WALL_POSES + POSE_VEC4 * (slot * params.n_walls + w);
}
// K^m, K^a, K^s of compact bond kind `kind`.
fn bond_kind(kind: u32) -> vec3<real> { return tables[O_KINDS + kind].xyz; }
fn bond_vec(o: u32) -> vec3<real> { return vec3<real>(bond_out[o], bond_out[o + 1u], bond_out[o + 2u]); }
fn set_bond_vec(o: u32, v: vec3<real>) { bond_out[o] = v.x; bond_out[o + 1u] = v.y; bond_out[o + 2u] = v.z; }

// Adds the bound bond chunk's results for particle i to f and t, in ascending bond id
// (the CPU gather's order). Branch-free: lavapipe executes both arms of a divergent
// `if`, loads included; x − y is x + (−y) in IEEE arithmetic, so the sums are the same.
fn gather_bonds(i: u32, f: ptr<function, vec3<real>>, t: ptr<function, vec3<real>>) {
    let first = incidence[i];
    let last = incidence[i + 1u];
    let base = params.n_particles + 1u;
    for (var k = first; k < last; k++) {
        let e = incidence[base + k];
        let o = BOND_OUT_STRIDE * (e >> 1u);
        let odd = (e & 1u) != 0u;
        let fb = bond_vec(o + BOND_OUT_FORCE_I);
        *f += select(fb, -fb, odd);
        *t += bond_vec(o + select(BOND_OUT_MOMENT_I, BOND_OUT_MOMENT_J, odd));
    }
}

fn mass_of(i: u32) -> real { return body[O_VEL + i].w; }
fn inertia_of(i: u32) -> real { return body[O_OMEGA + i].w; }
fn radius_of(i: u32) -> real { return body[i].w; }
fn gravity() -> vec3<real> { return vec3<real>(params.gravity_x, params.gravity_y, params.gravity_z); }

// The phase of this invocation's kernel, set by `enter` at the top of the kernels whose
// invocations raise errors at their own index (0: a kernel without one). Distinct per
// entry point, except that the variants with and without energies of one kernel share
// theirs (a step dispatches one of them); a dispatch is told apart from the step's
// others by its phase.
var<private> own_phase: u32;
const PHASE_INTEGRATE_PREDICT: u32 = 1u;
const PHASE_CLUMP_PREDICT: u32 = 2u;
const PHASE_GRID_INSERT: u32 = 3u;
const PHASE_NEIGHBOR_BUILD: u32 = 4u;
const PHASE_BOND_FORCES: u32 = 5u;
const PHASE_GRANULAR_FORCES: u32 = 6u;
const PHASE_PARTICLE_FORCES: u32 = 7u;
const PHASE_PARTICLE_FORCES_PREDICT: u32 = 8u;
const PHASE_HARD_FREE: u32 = 9u;
const PHASE_HARD_COLOR_ROUND: u32 = 10u;
const PHASE_HARD_ADVANCE: u32 = 11u;
const PHASE_HARD_ADVANCE_CLUMPS: u32 = 12u;
fn enter(phase: u32) { own_phase = phase; }

// An error stops every later kernel; the lowest index per code is kept. The raising
// dispatch's phase goes into the same word as the code (ERROR_PHASE_SHIFT), so that
// `failed` lets that dispatch run to its end: then the invocations that run, and so the
// lowest index, do not depend on the order in which workgroups run (deterministic).
fn raise(code: u32, index: u32) {
    atomicMin(&status[STATUS_FIRST_INDEX + code], index);
    atomicOr(&status[STATUS_ERROR], (1u << code) | (own_phase << ERROR_PHASE_SHIFT));
}

// The rigid body of particle i for the neighbour list (NeighborList::body): itself, or
// for a clump's sphere n + its body, so that no two spheres of one clump are listed.
fn body_of(i: u32) -> u32 {
    if (i < N_FREE) { return i; }
    return params.n_particles + particle_flags[O_MEMBER_BODY + i - N_FREE];
}

// The permanent id of the particle in slot s, and the slot of id i (issue 44). Results
// depend on ids, not on storage: rows ascend by partner id, a pair belongs to its lower
// id, sums and faults follow ids. IDS is a header constant: storage in id order (the
// default of scenes that never sort) reads no table.
fn id_of(s: u32) -> u32 {
    if (IDS == 0u) { return s; }
    return particle_flags[O_ID + s];
}
fn slot_of(i: u32) -> u32 {
    if (IDS == 0u) { return i; }
    return particle_flags[O_SLOT + i];
}

fn is_removed(i: u32) -> bool { return (particle_flags[i] & FLAG_REMOVED) != 0u; }

// An error was raised by an earlier dispatch: the kernel stops. Errors of its own
// dispatch (same phase, before step_begin seals the word) do not stop a kernel that
// called `enter`: an early return there would depend on which workgroup ran first.
// Dispatches are ordered (wgpu puts a barrier between dispatches that write the same
// storage buffer), so an earlier dispatch's error is always seen.
fn failed() -> bool {
    let e = atomicLoad(&status[STATUS_ERROR]);
    if (e == 0u) { return false; }
    return own_phase == 0u || (e & ~ERROR_CODES) != (own_phase << ERROR_PHASE_SHIFT);
}

fn finite3(v: vec3<real>) -> bool {
    return all(v == v) && all(abs(v) <= vec3<real>(MAX_REAL));
}
