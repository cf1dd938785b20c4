// Granular contact laws shared by the kernels granular_forces (granular.wgsl) and the
// fused particle_forces_predict (particles.wgsl): Campello's Hertz–Mindlin contacts with
// history, walls, drag and near-field forces. The twin of src/cpu/kernels/granular.rs
// (GranularInputs::particle) and of src/physics/granular.rs (hertz_contact and
// helpers), operation for operation.
//
// Each particle computes its side of every touching pair in the canonical order (lower
// id first) and takes that side's force or its exact negative: f_ij = −f_ji bitwise, no
// atomics. Both partners keep the pair's spring in their own history rows, computed
// from the same inputs, so the two copies stay identical.

struct Side {
    x: vec3<real>,
    v: vec3<real>,
    r: real,
    dx: vec3<real>,
    dalpha: vec3<real>,
}

// The wall side of a contact at q on wall w: at rest all zero; a moving wall's material
// point at q, with the surface velocity v + ω × (q − c) and, after the first
// evaluation, the step's increments h v and h ω. The twin of cpu::walls::WallState::side.
fn wall_side(w: u32, q: vec3<real>) -> Side {
    if (MOVING_WALLS == 0u) { return moving_side(vec3<real>(0.0), vec3<real>(0.0), q, q); }
    let o = wall_pose_at(w);
    return moving_side(tables[o + 2u].xyz, tables[o + 3u].xyz, tables[o + 4u].xyz, q);
}

// The side at q of a wall moving at velocity `vel` and angular velocity `om` about
// `axis` (all zero: at rest).
fn moving_side(vel: vec3<real>, om: vec3<real>, axis: vec3<real>, q: vec3<real>) -> Side {
    var s: Side;
    s.x = vec3<real>(0.0);
    s.v = vec3<real>(0.0);
    s.r = 0.0;
    s.dx = vec3<real>(0.0);
    s.dalpha = vec3<real>(0.0);
    if (all(vel == vec3<real>(0.0)) && all(om == vec3<real>(0.0))) { return s; }
    let v = vel + cross(om, q - axis);
    s.x = q;
    s.v = v;
    if ((params.flags & PARAM_FIRST) == 0u) {
        s.dx = params.dt * v;
        s.dalpha = params.dt * om;
    }
    return s;
}

// The wall side of a contact at q on mesh m: wall_side's, from the mesh's pose (the
// twin of cpu::walls::WallState::side with the mesh's pose).
fn mesh_side(m: u32, q: vec3<real>) -> Side {
    if (MOVING_MESHES == 0u) { return moving_side(vec3<real>(0.0), vec3<real>(0.0), q, q); }
    let o = mesh_pose_at(m);
    return moving_side(tables[o + 5u].xyz, tables[o + 6u].xyz, tables[o + 7u].xyz, q);
}

// Particle i's Hertz contacts with the mesh walls, added to f, t and e_wall:
// the twin of GranularInputs::mesh_sum (src/cpu/kernels/granular.rs). Its candidates are
// the triangles of its cell (neighbor::MeshCells); its feature-keyed slots (MESH_SLOTS,
// in hist after the particle slots) carry the springs, handed over to an adjacent
// feature by mesh_carried. The row itself is the scratch: the first pass writes the
// contacts' keys, mesh_carried their starting springs, the last pass the new springs.
// The last pass finds each contact's point again from its key (mesh_touch, the same
// operations as the search): holding the hits in private arrays, or looping to
// MESH_SLOTS rather than to the counts, made lavapipe's LLVM unroll Hertz contacts
// eightfold and take minutes to compile this kernel.
//
// `deep`: what the particle overlaps deeper than max_overlap so far (NO_PARTNER: nothing);
// if nothing yet, the lowest-index mesh touched that deep (n + n_walls + mesh), as
// GranularInputs::mesh_sum reports.
fn mesh_sum(i: u32, li: u32, side_i: Side, r_i: real, m_i: real, mat_i: u32, gone: bool,
            record: bool, f: ptr<function, vec3<real>>, t: ptr<function, vec3<real>>,
            e_wall: ptr<function, real>, deep: ptr<function, u32>) {
    mesh_new_row = rows.mesh_new + li * MESH_SLOTS;
    mesh_old_row = rows.mesh_old + li * MESH_SLOTS;
    // The particle's load on each mesh, summed over its contacts (w = 1: it touches).
    let loads = rows.wall_load + LOAD_VEC4 * (li * load_stride() + params.n_walls);
    if (record) {
        for (var mesh = 0u; mesh < N_MESHES; mesh++) {
            row_vec[loads + LOAD_VEC4 * mesh] = vec4<real>(0.0);
            row_vec[loads + LOAD_VEC4 * mesh + 1u] = vec4<real>(0.0);
        }
    }
    var count = 0u;
    let m = params.n_materials;
    // JKR: the search reaches past touching, and a contact in tension holds on a
    // feature touched at the last evaluation or adjacent to one (the handover of the
    // springs), down to its pull-off overlap.
    var reach = side_i.r;
    if (JKR != 0u) { reach = side_i.r + params.jkr_reach; }
    // The cell grid lies in the meshes' rest frame (mesh_passes).
    for (var mp = 0u; mp < mesh_passes() && !gone; mp++) {
        let n = mesh_pass_cell(mp, side_i.x);
        let near = mesh_near(mp, n, side_i.x, reach);
        var left = near;
        for (var s = mesh_next(&left, 31u); s < n; s = mesh_next(&left, s)) {
            if (s >= 32u && mesh_other_pass(mp, s)) { continue; }
            let h = mesh_contact(near, n, s, side_i.x, reach);
            if (h.key == MESH_NONE) { continue; }
            if (JKR != 0u && !(h.distance < side_i.r)) {
                var before = false;
                for (var o = 0u; o < MESH_SLOTS; o++) {
                    let k = hist[mesh_old_row + o].id;
                    if (k == MESH_NONE) { break; }
                    if (k == h.key || mesh_adjacent(k, h.key)) { before = true; break; }
                }
                let pm = pair_mat(m * m + (params.n_walls + mesh_of(h.key / 8u)) * m + mat_i);
                if (!(before && jkr_in_contact(side_i.r, pm.e_star, pm.gamma,
                                               side_i.r - h.distance, true))) { continue; }
            }
            if (count < MESH_SLOTS) {
                hist[mesh_new_row + count] = HistRecord(vec3<real>(0.0), h.key);
            }
            count++;
        }
    }
    if (count > MESH_SLOTS) {
        raise(ERR_MESH_OVERFLOW, id_of(i));
        count = MESH_SLOTS;
    }
    // Rows are compact: clear what the row held two steps ago beyond this step's count.
    for (var a = count; a < MESH_SLOTS; a++) {
        if (hist[mesh_new_row + a].id == MESH_NONE) { break; }
        hist[mesh_new_row + a] = HistRecord(vec3<real>(0.0), MESH_NONE);
    }
    if (count == 0u) { return; }
    var n_old = 0u;
    for (; n_old < MESH_SLOTS; n_old++) {
        if (hist[mesh_old_row + n_old].id == MESH_NONE) { break; }
    }
    mesh_carried(count, n_old);
    var deep_mesh = NO_PARTNER;
    for (var a = 0u; a < count; a++) {
        let rec = hist[mesh_new_row + a];
        let h = mesh_touch(rec.id, side_i.x);
        let mesh = mesh_of(h.key / 8u);
        let pm = pair_mat(m * m + (params.n_walls + mesh) * m + mat_i);
        let lever = h.distance;
        if (side_i.r - h.distance > params.max_overlap * side_i.r) {
            deep_mesh = min(deep_mesh, mesh);
        }
        let wall = mesh_side(mesh, h.point);
        let c = contact_law(pm, r_i, m_i, h.normal, side_i.r - h.distance, lever, 0.0,
                            side_i, wall, rec.spring);
        *f += c.force;
        *t += lever * cross(h.normal, c.friction);
        var roll = Rolling(vec3<real>(0.0), vec3<real>(0.0));
        if (ROLLING != 0u && pm.mu_r > 0.0) {
            roll = wall_rolling(pm, side_i, wall, c, h.normal, m_i, mesh_old_roll(a));
            *t += roll.torque;
            mesh_set_roll(a, roll.spring);
        }
        *e_wall += c.energy;
        hist[mesh_new_row + a] = HistRecord(c.spring, h.key);
        if (record) {
            // backend::loads::add_load, into the particle's sum for this mesh.
            let at = loads + LOAD_VEC4 * mesh;
            row_vec[at] = vec4<real>(row_vec[at].xyz - c.force, 1.0);
            row_vec[at + 1u] = vec4<real>(row_vec[at + 1u].xyz
                                          + glam_cross(h.point - mesh_axis(mesh), -c.force), 0.0);
            // The rolling torque's reaction (the CPU's mesh_sum: skipped when zero).
            if (any(roll.torque != vec3<real>(0.0))) {
                row_vec[at + 1u] = vec4<real>(row_vec[at + 1u].xyz - roll.torque, 0.0);
            }
        }
    }
    if (*deep == NO_PARTNER && deep_mesh != NO_PARTNER) {
        *deep = params.n_particles + params.n_walls + deep_mesh;
    }
}

struct Contact {
    force: vec3<real>,
    friction: vec3<real>,
    energy: real,
    spring: vec3<real>,
    // Normal load f_n ≥ 0 that caps friction and the rolling torque (the normal force
    // under Hertz, |F_el + 2F_po| under JKR).
    f_n: real,
    // Contact radius a: √(r*δ) under Hertz, JKR's a(δ).
    a: real,
}

// Rolling resistance of one contact (physics::rolling): the torque on a (b takes its
// exact negative) and the new rolling spring (EPSD; zero under CDT).
struct Rolling {
    torque: vec3<real>,
    spring: vec3<real>,
}

// physics::rolling::rolling_inertia: the two spheres' (7/5) m r² in series.
fn rolling_inertia(m_a: real, r_a: real, m_b: real, r_b: real) -> real {
    return (7.0 / 5.0) / (1.0 / (m_a * r_a * r_a) + 1.0 / (m_b * r_b * r_b));
}

// physics::rolling::rolling_torque for `model` (the scene's ROLLING: 1 CDT, 2 EPSD):
// Ai et al. (2011) models A and C, with Δθ the part of dalpha = Δα_a − Δα_b in the
// contact plane and the cap μ_r R* f_n.
fn rolling_torque(model: u32, pm: PairRecord, r_star: real, a: real, f_n: real,
                  n: vec3<real>, dalpha: vec3<real>, inertia: real,
                  spring: vec3<real>) -> Rolling {
    var out: Rolling;
    let dtheta = dalpha - dot(dalpha, n) * n;
    let cap = pm.mu_r * r_star * f_n;
    if (model == 1u) {
        let len = sqrt(dot(dtheta, dtheta));
        out.torque = vec3<real>(0.0);
        if (len > 0.0) { out.torque = (-(cap / len)) * dtheta; }
        out.spring = vec3<real>(0.0);
        return out;
    }
    let k_n = (4.0 / 3.0) * pm.e_star * a;
    let k_r = 2.25 * k_n * pm.mu_r * pm.mu_r * r_star * r_star;
    let trial = carry_spring(spring, n) - k_r * dtheta;
    let len = sqrt(dot(trial, trial));
    if (len <= cap) {
        let damping = pm.eta_r * 2.0 * sqrt(inertia * k_r);
        out.torque = trial - (damping / params.dt) * dtheta;
        out.spring = trial;
    } else {
        out.spring = (cap / len) * trial;
        out.torque = out.spring;
    }
    return out;
}

// The rolling torque of particle i's contact c with a plane or mesh (the twin of
// GranularInputs::wall_rolling): zero torque and spring where the pair's μ_r is 0.
fn wall_rolling(pm: PairRecord, side_i: Side, wall: Side, c: Contact, n: vec3<real>,
                m_i: real, spring: vec3<real>) -> Rolling {
    if (!(pm.mu_r > 0.0)) { return Rolling(vec3<real>(0.0), vec3<real>(0.0)); }
    return rolling_torque(ROLLING, pm, side_i.r, c.a, c.f_n, n, side_i.dalpha - wall.dalpha,
                          (7.0 / 5.0) * (m_i * side_i.r * side_i.r), spring);
}

// (R(α) − I) v = c [α × v + ½ α × (α × v)], c = 4/(4 + |α|²).
fn rotate_minus_identity(alpha: vec3<real>, v: vec3<real>) -> vec3<real> {
    let c = 4.0 / (4.0 + dot(alpha, alpha));
    let av = cross(alpha, v);
    return c * (av + 0.5 * cross(alpha, av));
}

// The stored spring carried into the plane of n, length kept.
fn carry_spring(s: vec3<real>, n: vec3<real>) -> vec3<real> {
    let len2 = dot(s, s);
    if (len2 == 0.0) { return s; }
    let t = s - dot(s, n) * n;
    let tl2 = dot(t, t);
    if (tl2 == 0.0) { return vec3<real>(0.0); }
    return t * sqrt(len2 / tl2);
}

// Mindlin's tangential spring with the Coulomb cap (Campello eqs. 28–37): the slip of
// the two contact points added to the carried spring, sticking below μ_s·load, else
// sliding at μ_d·load along the trial direction. Returns the contact's friction and
// spring (the law that calls it sets the rest). Shared by hertz_contact and
// jkr_contact, as physics::granular::hertz_core and physics::jkr::jkr_core perform it.
fn mindlin(pm: PairRecord, n: vec3<real>, lever_a: real, lever_b: real, a: Side, b: Side,
           spring: vec3<real>, k_t: real, load: real) -> Contact {
    var c: Contact;
    let carried = carry_spring(spring, n);
    let slip = a.dx - b.dx + rotate_minus_identity(a.dalpha, lever_a * n)
        + rotate_minus_identity(b.dalpha, lever_b * n);
    let ds = slip - dot(slip, n) * n;
    let trial = carried + ds;
    let trial_len = sqrt(dot(trial, trial));
    if (k_t * trial_len <= pm.mu_s * load) {
        c.friction = (-k_t) * trial;
        c.spring = trial;
    } else {
        let tau = trial / trial_len;
        let f = pm.mu_d * load;
        c.spring = vec3<real>(0.0);
        if (k_t > 0.0) { c.spring = (f / k_t) * tau; }
        c.friction = (-f) * tau;
    }
    return c;
}

// Campello eqs. (19), (22), (28)–(37) with NOTES' signs: see physics::granular::hertz_contact.
fn hertz_contact(pm: PairRecord, r_star: real, m_star: real, n: vec3<real>, overlap: real,
                 lever_a: real, lever_b: real, a: Side, b: Side, spring: vec3<real>) -> Contact {
    let sqrt_rd = sqrt(r_star * overlap);
    let f_el = (4.0 / 3.0) * pm.e_star * sqrt_rd * overlap;
    let damp = 2.0 * pm.xi * sqrt(2.0 * pm.e_star * m_star * sqrt_rd);
    let approach = dot(a.v - b.v, n);
    let f_n = max(f_el + damp * approach, 0.0);
    var c = mindlin(pm, n, lever_a, lever_b, a, b, spring, 8.0 * pm.g_star * sqrt_rd, f_n);
    c.energy = (8.0 / 15.0) * pm.e_star * sqrt_rd * overlap * overlap;
    c.force = (-f_n) * n + c.friction;
    c.f_n = f_n;
    c.a = sqrt_rd;
    return c;
}

// JKR cohesion (physics::jkr, the twins of its functions). WGSL has no cube root: the
// real power of a positive argument.
const JKR_PI = 3.141592653589793;
// √3 and √6, the f64 values Rust's sqrt gives (naga does not fold sqrt of an f64).
const SQRT_3 = 1.7320508075688772;
const SQRT_6 = 2.449489742783178;

fn jkr_cbrt(x: real) -> real { return pow_real(x, 1.0 / 3.0); }

// The contact radius a(δ) on the stable branch (physics::jkr::contact_radius).
fn jkr_contact_radius(r: real, e: real, gamma: real, delta: real) -> real {
    let dr = delta * r;
    let r2 = r * r;
    let t0 = gamma * gamma * r2 * r2 * e;
    let t1 = 27.0 * JKR_PI * JKR_PI * t0;
    let t2 = 8.0 * dr * dr * dr * e * e * e;
    let t3 = 4.0 * dr * dr * e;
    let s1 = max(t0 * (t1 + 2.0 * t2), 0.0);
    let t4 = jkr_cbrt(t1 + t2 + 3.0 * SQRT_3 * JKR_PI * sqrt(s1));
    let t5 = t3 / t4 + t4 / e;
    let t6 = sqrt(max(2.0 * dr + t5, 0.0));
    let s3 = max(4.0 * dr - t5 + 6.0 * SQRT_6 * gamma * JKR_PI * r2 / (e * t6), 0.0);
    return (t6 + sqrt(s3)) / SQRT_6;
}

// δ(a) = a²/R − 2√(πγa/E*) (physics::jkr::overlap).
fn jkr_overlap(r: real, e: real, gamma: real, a: real) -> real {
    return a * a / r - 2.0 * sqrt(JKR_PI * gamma * a / e);
}

// F(a) = 4E*a³/(3R) − 4√(πγE*a³) (physics::jkr::force).
fn jkr_force(r: real, e: real, gamma: real, a: real) -> real {
    return (4.0 / 3.0) * e * a * a * a / r - 4.0 * sqrt(JKR_PI * gamma * e * a * a * a);
}

// U(a) (physics::jkr::energy).
fn jkr_energy(r: real, e: real, gamma: real, a: real) -> real {
    let a2 = a * a;
    return (8.0 / 15.0) * e * a2 * a2 * a / (r * r)
        - (4.0 / 3.0) * sqrt(4.0 * JKR_PI * gamma * e) * a2 * sqrt(a) * a / r
        + 2.0 * JKR_PI * gamma * a2;
}

// The pull-off overlap δ_c (physics::jkr::pull_off_overlap).
fn jkr_pull_off_overlap(r: real, e: real, gamma: real) -> real {
    let a_c = jkr_cbrt(JKR_PI * gamma * r * r / (4.0 * e));
    return jkr_overlap(r, e, gamma, a_c);
}

// Whether a pair is in contact at overlap δ given whether it was at the last
// evaluation (physics::jkr::in_contact): touching, or held down to δ_c.
fn jkr_in_contact(r: real, e: real, gamma: real, overlap: real, touched: bool) -> bool {
    return overlap > 0.0
        || (touched && gamma > 0.0 && overlap > jkr_pull_off_overlap(r, e, gamma));
}

// The Hertz–Mindlin law with the JKR normal force (physics::jkr::jkr_core).
fn jkr_contact(pm: PairRecord, r_star: real, m_star: real, n: vec3<real>, overlap: real,
               lever_a: real, lever_b: real, a: Side, b: Side, spring: vec3<real>) -> Contact {
    let r = r_star;
    let e = pm.e_star;
    let gamma = pm.gamma;
    let ra = jkr_contact_radius(r, e, gamma, overlap);
    let f_el = jkr_force(r, e, gamma, ra);
    let damp = 2.0 * pm.xi * sqrt(2.0 * pm.e_star * m_star * ra);
    let approach = dot(a.v - b.v, n);
    let f_n = f_el + damp * approach;
    let load = abs(f_el + 2.0 * (3.0 * JKR_PI * gamma * r));
    var c = mindlin(pm, n, lever_a, lever_b, a, b, spring, 8.0 * pm.g_star * ra, load);
    c.energy = jkr_energy(r, e, gamma, ra);
    c.force = (-f_n) * n + c.friction;
    c.f_n = load;
    c.a = ra;
    return c;
}

// The contact law of a pair (physics::granular::contact_core): JKR where the pair has a
// surface energy, Hertz otherwise.
fn contact_law(pm: PairRecord, r_star: real, m_star: real, n: vec3<real>, overlap: real,
               lever_a: real, lever_b: real, a: Side, b: Side, spring: vec3<real>) -> Contact {
    if (JKR != 0u && pm.gamma > 0.0) {
        return jkr_contact(pm, r_star, m_star, n, overlap, lever_a, lever_b, a, b, spring);
    }
    return hertz_contact(pm, r_star, m_star, n, overlap, lever_a, lever_b, a, b, spring);
}

fn body_held(flags: u32) -> bool { return (flags & (FLAG_HELD | FLAG_REMOVED)) != 0u; }

// Velocity for damping and drag: v_{k+½} carried to the end of the step with the
// previous force f = F_k (the correct half, integrators::correct), except on the first
// evaluation and for map (27).
fn end_velocity(v: vec3<real>, f: vec3<real>, mass: real, flags: u32) -> vec3<real> {
    if ((params.flags & PARAM_FIRST) != 0u || params.integrator == INTEGRATOR_SYMPLECTIC_EULER) { return v; }
    if (body_held(flags)) { return vec3<real>(0.0); }
    return v + (0.5 * params.dt / mass) * f;
}

fn end_omega(i: u32, w: vec3<real>, flags: u32) -> vec3<real> {
    if ((params.flags & PARAM_FIRST) != 0u || params.integrator == INTEGRATOR_SYMPLECTIC_EULER) { return w; }
    if ((flags & (FLAG_NO_ROTATION | FLAG_REMOVED)) != 0u) { return vec3<real>(0.0); }
    return w + (0.5 * params.dt / inertia_of(i)) * get_moment(i);
}

// What a contact side takes from the particle's motion: the velocity at the end of the
// step (for damping) and the increments Δx, Δα of the step just taken (eqs. 25–28,
// integrators::increments). A function of v_{k+½}, Ω_{k+½}, F_k, mass and flags only,
// so the predict kernels can compute it once per particle for the partners of the
// next evaluation (the `motion_*` buffers), with the bits side_at computes.
struct Motion {
    v: vec3<real>,
    dx: vec3<real>,
    dalpha: vec3<real>,
    // The particle's mass, carried in the record (the w of motion_v) so that the merged
    // pass reads nothing of `vel`, which that dispatch writes.
    m: real,
}

fn motion_of(v: vec3<real>, w: vec3<real>, f: vec3<real>, m: real, flags: u32) -> Motion {
    var s: Motion;
    s.m = m;
    s.v = end_velocity(v, f, m, flags);
    s.dx = vec3<real>(0.0);
    s.dalpha = vec3<real>(0.0);
    if ((params.flags & PARAM_FIRST) == 0u) {
        let h = params.dt;
        s.dx = h * v;
        if (params.integrator == INTEGRATOR_VARIATIONAL_EXACT) {
            let q = h * h * dot(w, w);
            s.dalpha = (2.0 * h / (1.0 + sqrt(max(1.0 - q, 0.0)))) * w;
        } else {
            s.dalpha = h * w;
        }
    }
    return s;
}

// The motion record of partner j written by the previous step's predict (binding
// parity: the copy this step reads).
fn old_motion(j: u32) -> Motion {
    let vm = body[rows.mv_old + j];
    let dx = rows.mdx_old + 3u * j;
    let da = rows.mda_old + 3u * j;
    return Motion(
        vm.xyz,
        vec3<real>(motion[dx], motion[dx + 1u], motion[dx + 2u]),
        vec3<real>(motion[da], motion[da + 1u], motion[da + 2u]),
        vm.w);
}

// Particle i's motion record from the v, Ω and F the caller has just computed and
// stored, for the next evaluation. The inputs pass through a multiply by the uniform
// `one` (exact), so that a compiler that treats float arithmetic as reassociable (Mesa's
// NIR does) cannot merge end_velocity's v + cF with the v = v₀ + cF it sees in
// registers: the record must hold the bits side_at computes from the stored v. A guard:
// lavapipe gave the same bits without it when tried, other compilers need not.
fn store_motion(i: u32, v: vec3<real>, w: vec3<real>, f: vec3<real>, m: real, flags: u32) {
    let one = params.one;
    set_motion(i, motion_of(v * one, w * one, f * one, m, flags));
}

// Stores particle i's motion record for the next evaluation (the copy it will read).
fn set_motion(i: u32, s: Motion) {
    body[rows.mv_new + i] = vec4<real>(s.v, s.m);
    let dx = rows.mdx_new + 3u * i;
    let da = rows.mda_new + 3u * i;
    motion[dx] = s.dx.x; motion[dx + 1u] = s.dx.y; motion[dx + 2u] = s.dx.z;
    motion[da] = s.dalpha.x; motion[da + 1u] = s.dalpha.y; motion[da + 2u] = s.dalpha.z;
}

fn side_from(x: vec3<real>, r: real, s: Motion) -> Side {
    return Side(x, s.v, r, s.dx, s.dalpha);
}

// The side of particle i at position x with radius r and mass m (already loaded by the
// caller), from its state arrays: each is read once.
fn side_at(i: u32, x: vec3<real>, r: real, m: real, flags: u32) -> Side {
    if (posed_member(i)) {
        let o = member_side_at(i);
        return Side(x, body[o].xyz, r, body[o + 1u].xyz, body[o + 2u].xyz);
    }
    return side_from(x, r, motion_of(get_vel(i), get_omega(i), get_force(i), m, flags));
}

// A clump's sphere after the set-up evaluation: its contact side (end-of-step velocity,
// Δx, Δα) and end-of-step spin (in the three w) are its body's, which clump_pose wrote
// at member_side_at(i) (shaders/clumps.wgsl; the CPU's cpu::clumps::predict_pose).
fn posed_member(i: u32) -> bool { return i >= N_FREE && (params.flags & PARAM_FIRST) == 0u; }
fn member_side_at(i: u32) -> u32 { return O_MEMBER_SIDE + 3u * select(0u, i - N_FREE, i >= N_FREE); }
fn member_spin(i: u32) -> vec3<real> {
    let o = member_side_at(i);
    return vec3<real>(body[o].w, body[o + 1u].w, body[o + 2u].w);
}

struct NearResult {
    force: vec3<real>,
    energy: real,
}

// ∫_d^cut κ s^{−λ} ds (physics::granular::NearField::term_energy).
fn near_term(kappa: real, lambda: real, d: real, cut: real) -> real {
    if (abs(lambda - 1.0) < 1e-12) { return kappa * ln_real(cut / d); }
    return kappa * (pow_real(cut, 1.0 - lambda) - pow_real(d, 1.0 - lambda)) / (1.0 - lambda);
}

// Near-field force on a from b (d = x_b − x_a) and its pair energy: Campello eq. (17),
// the twin of NearField::pair.
fn near_field(d: vec3<real>) -> NearResult {
    var r: NearResult;
    r.force = vec3<real>(0.0);
    r.energy = 0.0;
    let dist = sqrt(dot(d, d));
    if (!(dist < params.nf_cutoff) || dist == 0.0) { return r; }
    let n = d / dist;
    let mag = params.nf_kappa_a * pow_real(dist, -params.nf_lambda_a)
        - params.nf_kappa_r * pow_real(dist, -params.nf_lambda_r);
    r.energy = -near_term(params.nf_kappa_a, params.nf_lambda_a, dist, params.nf_cutoff)
        + near_term(params.nf_kappa_r, params.nf_lambda_r, dist, params.nf_cutoff);
    r.force = mag * n;
    return r;
}

// Slot k of the row chunk's history copy that this evaluation reads, and the one it
// writes.
fn old_slot(k: u32) -> HistRecord { return hist[rows.hist_old + k]; }
fn old_id(k: u32) -> u32 { return hist[rows.hist_old + k].id; }
fn set_slot(k: u32, s: HistRecord) { hist[rows.hist_new + k] = s; }
fn end_row(k: u32) { hist[rows.hist_new + k].id = NO_PARTNER; }
fn old_wall_s(k: u32) -> vec3<real> {
    return row_vec[rows.wall_old + k].xyz;
}
fn set_wall_s(k: u32, v: vec3<real>, held: bool) {
    row_vec[rows.wall_new + k] = vec4<real>(v, select(real(0.0), real(1.0), held));
}
// Whether the JKR contact with the wall held at the last evaluation (the w of its
// spring; physics::jkr::wall_overlap_held).
fn old_wall_held(k: u32) -> bool {
    return JKR != 0u && row_vec[rows.wall_old + k].w != 0.0;
}
// EPSD rolling springs (ROLLING == 2; physics::rolling), beside the tangential ones:
// the pair slots' in hist at rows.roll_*, the walls' in row_vec at rows.wroll_*, the
// mesh slots' in hist at rows.mroll_*. Zero (and nothing stored) under CDT.
fn old_roll_at(slot: u32) -> vec3<real> {
    if (ROLLING != 2u || slot == NO_PARTNER) { return vec3<real>(0.0); }
    return hist[rows.roll_old + slot].spring;
}
fn set_roll(k: u32, v: vec3<real>) {
    if (ROLLING == 2u) { hist[rows.roll_new + k] = HistRecord(v, 0u); }
}
fn old_wall_roll(k: u32) -> vec3<real> {
    if (ROLLING != 2u) { return vec3<real>(0.0); }
    return row_vec[rows.wroll_old + k].xyz;
}
fn set_wall_roll(k: u32, v: vec3<real>) {
    row_vec[rows.wroll_new + k] = vec4<real>(v, 0.0);
}

// A particle's granular force, moment and energies (half of each pair's).
struct GranularSum {
    f: vec3<real>,
    t: vec3<real>,
    e_contact: real,
    e_wall: real,
    e_near: real,
}

// The granular forces on particle i (row li of its row chunk): contacts over the
// neighbour list, walls, drag; the twin of GranularInputs::granular_sum (src/cpu/kernels/granular.rs)
// with the pairs it gathers. Writes i's new history row and wall springs. Called by
// granular_forces (which stores the sums in granular_out for particle_forces) and, `merged`, by
// particle_forces_predict itself (PARAM_MERGED; partners' motion then comes from the
// motion records, see granular_forces_merge in src/gpu/mod.rs).
//
// Every row it reads or writes (neighbour row, history rows, wall springs) is its own
// particle's, at li = i − first: a
// partner's history is never read (each side keeps its own copy of the pair's spring),
// so the rows can be split into chunks bound one at a time.
//
// Each array is read once per particle and partner: the particle's own position,
// radius, mass and material are loaded before the loop, and the old history row is
// walked with one cursor, because both it and the neighbour row ascend by partner id
// (the CPU twin scans the row per contact and finds the same slot). Where the CPU
// orders a pair (lower id first), the expressions keep that order; sums and products
// of two terms are commutative in IEEE arithmetic, so swapping their operands is exact.
fn granular_sum(i: u32, li: u32, merged: bool) -> GranularSum {
    let flags_i = particle_flags[i];
    // Ids, not slots, order the pair, key the history and name faults (issue 44).
    let id_i = id_of(i);
    let x_i = get_pos(i);
    let c_i = get_pos_kahan(i);
    let r_i = radius_of(i);
    let m_i = mass_of(i);
    // With one material every pair and wall record is the table's first entry.
    var mat_i = 0u;
    if (params.n_materials > 1u) { mat_i = material_of(i); }
    let side_i = side_at(i, x_i, r_i, m_i, flags_i);
    var f = vec3<real>(0.0);
    var t = vec3<real>(0.0);
    var e_contact = real(0.0);
    var e_wall = real(0.0);
    var e_near = real(0.0);
    let hertz = (params.flags & PARAM_HERTZ) != 0u;
    let near = (params.flags & PARAM_NEAR) != 0u;
    let k = params.max_contacts;
    let m = params.n_materials;
    var used = 0u;
    let gone = (flags_i & FLAG_REMOVED) != 0u;
    // The first contact deeper than max_overlap × the smaller radius (a pair found by its
    // lower id): a partner j, else n + wall, else n + n_walls + mesh (ERR_OVERLAP).
    var deep = NO_PARTNER;
    if (hertz || near) {
        let row = li * (params.max_neighbors + 1u);
        // The old history row is sorted by partner and ended by NO_PARTNER unless full.
        // While every touching partner so far was in the slot of its own rank (the
        // usual case: the contacts of the last step), the next one is looked for in
        // the next slot (one load); after the first that was not, a cursor scans on
        // from the slot after the last one found. Slots before `cur` hold partners
        // below the current one.
        var aligned = true;
        var cur = 0u;
        // A removed particle takes part in no contact.
        let nn = select(neighbors[row], 0u, gone);
        for (var s = 0u; s < nn; s++) {
            let j = neighbors[row + 1u + s];
            let id_j = id_of(j);
            // The pair in the CPU's order: a = the lower id, b = the other, d = x_b − x_a
            // (compensated in f32 builds: separation(), common/layout.wgsl).
            let lower = id_i < id_j;
            let x_j = get_pos(j);
            let k_j = get_pos_kahan4(j);
            let c_j = k_j.xyz;
            let d = select(separation(x_j, c_j, x_i, c_i), separation(x_i, c_i, x_j, c_j), lower);
            let sign = select(real(-1.0), real(1.0), lower);
            // A removed partner takes part in nothing. Its flags are read only where
            // they matter: before the near field, and for touching pairs (most listed
            // neighbours do not touch).
            if (near) {
                if ((flags_with(j, k_j) & FLAG_REMOVED) != 0u) { continue; }
                let nf = near_field(d);
                f += sign * nf.force;
                e_near += 0.5 * nf.energy;
            }
            if (!hertz) { continue; }
            let dist2 = dot(d, d);
            let r_j = radius_of(j);
            let reach = r_i + r_j;
            // JKR: a pair that held at the last evaluation holds in tension down to its
            // pull-off overlap, at most jkr_reach past touching.
            let within = dist2 < reach * reach;
            let far = reach + params.jkr_reach;
            if (!(within || (JKR != 0u && dist2 < far * far)) || dist2 == 0.0) { continue; }
            let flags_j = flags_with(j, k_j);
            if ((flags_j & FLAG_REMOVED) != 0u) { continue; }
            let dist = sqrt(dist2);
            let n = d / dist;
            let overlap = reach - dist;
            // Fused into particle_forces_predict (`merged`), partners' v, Ω and F are
            // being overwritten: their motion and mass come from the record of the last
            // predict.
            var side_j: Side;
            var m_j: real;
            if (merged) {
                let mo = old_motion(j);
                m_j = mo.m;
                side_j = side_from(x_j, r_j, mo);
            } else {
                m_j = mass_of(j);
                side_j = side_at(j, x_j, r_j, m_j, flags_j);
            }
            var sa = side_i;
            var sb = side_j;
            if (!lower) { sa = side_j; sb = side_i; }
            // One material (the common case): the table's only pair, at an address
            // every invocation shares (one load, not one gather per SIMD lane).
            var pm: PairRecord;
            if (m == 1u) {
                pm = pair_mat(0u);
            } else {
                let mat_j = material_of(j);
                pm = pair_mat(select(mat_j * m + mat_i, mat_i * m + mat_j, lower));
            }
            let r_star = r_i * r_j / (r_i + r_j);
            let m_star = m_i * m_j / (m_i + m_j);
            // The old spring with j (zero if the pair did not touch). An aligned row
            // holds partners up to slot `used` (never a stale slot past its end marker).
            var spring = vec3<real>(0.0);
            var found = false;
            // The old slot of the pair (NO_PARTNER: none), for its rolling spring.
            var found_at = NO_PARTNER;
            if (aligned && used < k) {
                let slot = old_slot(li * k + used);
                if (slot.id == id_j) {
                    spring = slot.spring;
                    found = true;
                    found_at = li * k + used;
                    cur = used + 1u;
                }
            }
            if (!found) {
                aligned = false;
                var cur_id = NO_PARTNER;
                if (cur < k) { cur_id = old_id(li * k + cur); }
                while (cur_id < id_j) {
                    cur += 1u;
                    cur_id = NO_PARTNER;
                    if (cur < k) { cur_id = old_id(li * k + cur); }
                }
                if (cur_id == id_j) {
                    spring = old_slot(li * k + cur).spring;
                    found_at = li * k + cur;
                }
            }
            if (!within && !(found_at != NO_PARTNER
                             && jkr_in_contact(r_star, pm.e_star, pm.gamma, overlap, true))) {
                continue;
            }
            if (lower && deep == NO_PARTNER && overlap > params.max_overlap * min(r_i, r_j)) {
                deep = id_j;
            }
            let c = contact_law(pm, r_star, m_star, n, overlap, sa.r - 0.5 * overlap,
                                sb.r - 0.5 * overlap, sa, sb, spring);
            f += sign * c.force;
            t += (r_i - 0.5 * overlap) * cross(n, c.friction);
            // The pair's rolling torque in the CPU's order (a = the lower id), taken by
            // a and negated for b; zero (+0, as the CPU's slot) where μ_r is 0.
            if (ROLLING != 0u) {
                var roll = Rolling(vec3<real>(0.0), vec3<real>(0.0));
                if (pm.mu_r > 0.0) {
                    let ma = select(m_j, m_i, lower);
                    let mb = select(m_i, m_j, lower);
                    roll = rolling_torque(ROLLING, pm, r_star, c.a, c.f_n, n,
                                          sa.dalpha - sb.dalpha,
                                          rolling_inertia(ma, sa.r, mb, sb.r),
                                          old_roll_at(found_at));
                }
                t += sign * roll.torque;
                if (used < k) { set_roll(li * k + used, roll.spring); }
            }
            e_contact += 0.5 * c.energy;
            if (used < k) {
                set_slot(li * k + used, HistRecord(c.spring, id_j));
            }
            used += 1u;
        }
        // End marker; the slots after it keep stale values that are never read. More
        // touching partners than slots is an error (raised once, after the loop: an
        // atomic inside it would be paid by every SIMD lane on every contact).
        if (used < k && hertz) {
            end_row(li * k + used);
        }
        if (used > k) {
            raise(ERR_CONTACT_OVERFLOW, id_i);
        }
    }
    let nw = max(params.n_walls, 1u);
    // The evaluation of the step the host asked loads of records them (rows.wall_load).
    let record = rows.wall_load != 0u
        && atomicLoad(&status[STATUS_STEP]) == atomicLoad(&status[STATUS_LOADS]);
    for (var w = 0u; w < params.n_walls; w++) {
        var new_s = vec3<real>(0.0);
        var new_roll = vec3<real>(0.0);
        var load_f = vec4<real>(0.0);
        var load_q = vec4<real>(0.0);
        // The rolling torque's reaction on the plane (ROLLING: a third vec4).
        var load_m = vec4<real>(0.0);
        var held = false;
        if (hertz && !gone) {
            let wall = wall_at(w);
            let normal = vec3<real>(wall.normal_x, wall.normal_y, wall.normal_z);
            let h = dot(wall_offset(wall, x_i, c_i), normal);
            let pm = pair_mat(m * m + w * m + mat_i);
            var touching = h < r_i;
            // JKR: a contact that held at the last evaluation holds in tension.
            if (!touching && old_wall_held(li * nw + w)) {
                touching = jkr_in_contact(r_i, pm.e_star, pm.gamma, r_i - h, true);
            }
            if (touching) {
                held = true;
                let n = -normal;
                let overlap = r_i - h;
                if (deep == NO_PARTNER && overlap > params.max_overlap * r_i) {
                    deep = params.n_particles + w;
                }
                let q = side_i.x + h * n;
                let wall = wall_side(w, q);
                let c = contact_law(pm, r_i, m_i, n, overlap, h, 0.0, side_i,
                                    wall, old_wall_s(li * nw + w));
                f += c.force;
                t += h * cross(n, c.friction);
                if (ROLLING != 0u && pm.mu_r > 0.0) {
                    let roll = wall_rolling(pm, side_i, wall, c, n, m_i,
                                            old_wall_roll(li * nw + w));
                    t += roll.torque;
                    new_roll = roll.spring;
                    load_m = vec4<real>(-roll.torque, 0.0);
                }
                e_wall += c.energy;
                new_s = c.spring;
                load_f = vec4<real>(-c.force, 1.0);
                load_q = vec4<real>(q, 0.0);
            }
        }
        set_wall_s(li * nw + w, new_s, held);
        if (ROLLING == 2u) { set_wall_roll(li * nw + w, new_roll); }
        if (record) {
            let at = rows.wall_load + LOAD_VEC4 * (li * load_stride() + w);
            row_vec[at] = load_f;
            row_vec[at + 1u] = load_q;
            if (ROLLING != 0u) { row_vec[at + 2u] = load_m; }
        }
    }
    if (hertz && N_MESH_TRIS > 0u) {
        mesh_sum(i, li, side_i, r_i, m_i, mat_i, gone, record, &f, &t, &e_wall, &deep);
    }
    // Raised once, after the loops (as ERR_CONTACT_OVERFLOW): the detail word first,
    // which only this particle writes.
    if (deep != NO_PARTNER) {
        atomicStore(&status[STATUS_DETAIL + id_i], deep);
        raise(ERR_OVERLAP, id_i);
    }
    if ((params.flags & PARAM_DRAG) != 0u) {
        var om = end_omega(i, get_omega(i), flags_i);
        if (posed_member(i)) { om = member_spin(i); }
        let vf = vec3<real>(params.fluid_x, params.fluid_y, params.fluid_z);
        f += (-params.drag_c) * (side_i.v - vf) + params.magnus * cross(om, side_i.v);
    }
    return GranularSum(f, t, e_contact, e_wall, e_near);
}
