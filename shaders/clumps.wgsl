// Clumps (issue 24): rigid bodies of overlapping spheres, coupled to their spheres in
// three kernels. The twins of src/cpu/clumps.rs (Bodies::predict_pose, which is
// clump_predict then clump_pose, and Bodies::gather_correct, which is clump_gather) and
// of src/integrators/rigid.rs (predict_rigid, correct_rigid, exact_increment,
// second_order_increment), with the same loops and operations; the spatial tensors
// R J Rᵀ are applied as rotations of body-frame products here and as matrices there, so
// f64 results agree to rounding, not bitwise (tests/gpu_clumps.rs).
//
// Data (src/gpu/plan.rs Sections, docs/gpu-architecture.md *Clumps*): a body's state is
// CLUMP_RECORD vec4 at O_CLUMP (slots CLUMP_*); its first sphere, sphere count and type
// are three words at O_CLUMP_INFO; a type is four vec4 at O_CLUMP_TYPES (mass, scalar
// moment or 0, sphere count | J's diagonal, J_xy | J_xz, J_yz, J⁻¹'s diagonal xx, yy |
// J⁻¹_zz, J⁻¹_xy, J⁻¹_xz, J⁻¹_yz). The spheres are the particles from N_FREE on,
// contiguous per body in the type's order; sphere k = i − N_FREE has its body-frame
// offset at O_MEMBER_OFFSET + k, its body at O_MEMBER_BODY + k and its contact side
// (end-of-step velocity, Δx, Δα, with the end-of-step spin in the three w) at
// O_MEMBER_SIDE + 3k, which side_at reads
// (common/contact.wgsl).

// The clumps' data helpers (ClumpType, clump_type, clump_info, clump_get/set,
// member_offset, sym_mul, spatial_mul, clump_omega) are in common/clump_data.wgsl.

// The rounding unit of `real` and the relative residual map (23)'s Newton iteration
// accepts when its updates stop shrinking (rigid::exact_increment: 1e-13 in f64, about
// 450 units; the same multiple in f32).
fn eps_real() -> real { return select(real(2.220446049250313e-16), real(1.1920928955078125e-7), COMPENSATE); }
fn newton_accept() -> real { return select(real(1e-13), real(5.4e-5), COMPENSATE); }
const MAX_NEWTON_ITERATIONS: u32 = 40u;

struct Increment {
    delta: vec3<real>,
    // NO_ERROR, ERR_CLUMP_ROTATION_DOMAIN or ERR_CLUMP_NO_CONVERGENCE.
    err: u32,
}

// Map (23)'s increment for a full tensor (rigid::exact_increment): the solution δ of
// 4/(4+|δ|²) [I δ + ½ δ × I δ] = h π by Newton's method from the isotropic closed form
// (eq. 23b), with I = R(α) J R(α)ᵀ given by its columns i0, i1, i2.
fn exact_increment(h: real, i0: vec3<real>, i1: vec3<real>, i2: vec3<real>, pi: vec3<real>, omega: vec3<real>) -> Increment {
    var out = Increment(vec3<real>(0.0), NO_ERROR);
    let b = h * pi;
    let q = h * h * dot(omega, omega);
    if (!(q < 1.0)) {
        out.err = ERR_CLUMP_ROTATION_DOMAIN;
        return out;
    }
    var delta = (2.0 * h / (1.0 + sqrt(1.0 - q))) * omega;
    let eps = eps_real();
    for (var it = 0u; it < MAX_NEWTON_ITERATIONS; it++) {
        let id = i0 * delta.x + i1 * delta.y + i2 * delta.z;
        let c = 4.0 / (4.0 + dot(delta, delta));
        let y = id + 0.5 * cross(delta, id);
        let g = c * y - b;
        // Column k of ∂(c y)/∂δ = c [I + ½(S(δ) I − S(Iδ))] − (c²/2) y δᵀ.
        let half_c2 = 0.5 * c * c;
        let j0 = c * (i0 + 0.5 * (cross(delta, i0) - cross(id, vec3<real>(1.0, 0.0, 0.0)))) - (half_c2 * delta.x) * y;
        let j1 = c * (i1 + 0.5 * (cross(delta, i1) - cross(id, vec3<real>(0.0, 1.0, 0.0)))) - (half_c2 * delta.y) * y;
        let j2 = c * (i2 + 0.5 * (cross(delta, i2) - cross(id, vec3<real>(0.0, 0.0, 1.0)))) - (half_c2 * delta.z) * y;
        let det = dot(j0, cross(j1, j2));
        if (det == 0.0 || !(abs(det) <= MAX_REAL)) { break; }
        // Cramer's rule for the update.
        let step = vec3<real>(dot(g, cross(j1, j2)), dot(j0, cross(g, j2)), dot(j0, cross(j1, g))) / det;
        delta = delta - step;
        if (!finite3(delta)) { break; }
        let id2 = i0 * delta.x + i1 * delta.y + i2 * delta.z;
        let r = (4.0 / (4.0 + dot(delta, delta))) * (id2 + 0.5 * cross(delta, id2)) - b;
        if (length(step) <= 4.0 * eps * length(delta) || length(r) <= 8.0 * eps * length(b)) {
            out.delta = delta;
            return out;
        }
    }
    let id = i0 * delta.x + i1 * delta.y + i2 * delta.z;
    let r = (4.0 / (4.0 + dot(delta, delta))) * (id + 0.5 * cross(delta, id)) - b;
    out.delta = delta;
    if (!(length(r) <= newton_accept() * max(length(b), real(1e-30)))) { out.err = ERR_CLUMP_NO_CONVERGENCE; }
    return out;
}

// Kernel clump_predict, per body (Bodies::predict_pose's predict_rigid): the predict
// half with the body's last load. Translation as a sphere's (integrators::predict); the
// rotation of a scalar tensor as a sphere's (the same bits as predict_half's), of a
// full one π ← π + kick RM, Ω = I_k⁻¹ π, Δα by exact_increment (map 23) or to second
// order, Δα = hΩ − ½h² I_k⁻¹(Ω × π) (maps 25, 27), and α ← α ⊕ Δα. A failure, or a
// body that leaves the [domain], raises an ERR_CLUMP_* code at the body's index.
@compute @workgroup_size(WG)
fn clump_predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_CLUMP_PREDICT);
    let b = gid.x;
    if (b >= N_BODIES || failed() || clump_dormant(b)) { return; }
    let info = clump_info(b);
    let t = clump_type(info.z);
    let h = params.dt;
    let euler = params.integrator == INTEGRATOR_SYMPLECTIC_EULER;
    let a0 = clump_get(b, CLUMP_A);
    let f = clump_get(b, CLUMP_F);
    let m = clump_get(b, CLUMP_M);
    let kv = select(0.5 * h / t.mass, h / t.mass, euler);
    let v = kahan_add(clump_get(b, CLUMP_V), kv * f, clump_get(b, CLUMP_CV));
    let x = kahan_add(clump_get(b, CLUMP_X), h * v.value, clump_get(b, CLUMP_CX));
    var err = NO_ERROR;
    var spin: Sum;
    var da: vec3<real>;
    if (t.scalar != 0.0) {
        let kw = select(0.5 * h / t.scalar, h / t.scalar, euler);
        spin = kahan_add(clump_get(b, CLUMP_SPIN), kw * m, clump_get(b, CLUMP_CSPIN));
        let w = spin.value;
        da = h * w;
        if (params.integrator == INTEGRATOR_VARIATIONAL_EXACT) {
            let q = h * h * dot(w, w);
            if (!(q < 1.0)) { err = ERR_CLUMP_ROTATION_DOMAIN; }
            da = (2.0 * h / (1.0 + sqrt(1.0 - q))) * w;
        }
    } else {
        let kick = select(0.5 * h, h, euler);
        spin = kahan_add(clump_get(b, CLUMP_SPIN), kick * m, clump_get(b, CLUMP_CSPIN));
        let pi = spin.value;
        let omega = spatial_mul(a0, t.inv_diag, t.inv_off, pi);
        if (params.integrator == INTEGRATOR_VARIATIONAL_EXACT) {
            let i0 = spatial_mul(a0, t.j_diag, t.j_off, vec3<real>(1.0, 0.0, 0.0));
            let i1 = spatial_mul(a0, t.j_diag, t.j_off, vec3<real>(0.0, 1.0, 0.0));
            let i2 = spatial_mul(a0, t.j_diag, t.j_off, vec3<real>(0.0, 0.0, 1.0));
            let inc = exact_increment(h, i0, i1, i2, pi, omega);
            da = inc.delta;
            err = inc.err;
        } else {
            da = h * omega - (0.5 * h * h) * spatial_mul(a0, t.inv_diag, t.inv_off, cross(omega, pi));
        }
    }
    let c = try_compose(a0, da);
    if (err == NO_ERROR && !c.ok) { err = ERR_CLUMP_HALF_TURN; }
    if (err == NO_ERROR && !(finite3(x.value) && finite3(v.value) && finite3(c.value) && finite3(spin.value))) {
        err = ERR_CLUMP_NON_FINITE;
    }
    if (err == NO_ERROR && (params.flags & PARAM_DOMAIN) != 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(x.value >= lo) && all(x.value <= hi))) { err = ERR_CLUMP_LEFT_DOMAIN; }
    }
    if (err != NO_ERROR) {
        // Every clump error names the clump (Fault::Clump).
        raise(err, b);
        return;
    }
    clump_set(b, CLUMP_X, x.value);
    clump_set(b, CLUMP_CX, x.kahan);
    clump_set(b, CLUMP_V, v.value);
    clump_set(b, CLUMP_CV, v.kahan);
    clump_set(b, CLUMP_A_OLD, a0);
    clump_set(b, CLUMP_A, c.value);
    clump_set(b, CLUMP_SPIN, spin.value);
    clump_set(b, CLUMP_CSPIN, spin.kahan);
}

// The correct half's spin (rigid::correct_rigid) from spin with moment m.
fn corrected_spin(t: ClumpType, spin: vec3<real>, m: vec3<real>) -> vec3<real> {
    let h = params.dt;
    if (params.integrator == INTEGRATOR_SYMPLECTIC_EULER) { return spin; }
    if (t.scalar != 0.0) { return spin + (0.5 * h / t.scalar) * m; }
    return spin + (0.5 * h) * m;
}

// Kernel clump_pose, per clump sphere (after clump_predict): the sphere placed by its
// body, x = x_b + R(α)ρ (with its Kahan term from the body's), moving with it
// (v_b + Ω × R(α)ρ, Ω at the half step), and its contact side for this step's
// evaluation: the body's velocities carried to the end of the step with its last
// load, and the step's increments Δx = h v_b + R(α_{k+1})ρ − R(α_k)ρ and Δα (the
// body's; integrators::increments for a scalar tensor). Then the rebuild test.
@compute @workgroup_size(WG)
fn clump_pose(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= params.n_particles - N_FREE || failed()) { return; }
    let i = N_FREE + k;
    let b = particle_flags[O_MEMBER_BODY + k];
    if (clump_dormant(b)) { return; }
    let t = clump_type(clump_info(b).z);
    let h = params.dt;
    let a = clump_get(b, CLUMP_A);
    let a_old = clump_get(b, CLUMP_A_OLD);
    let v = clump_get(b, CLUMP_V);
    let spin = clump_get(b, CLUMP_SPIN);
    let rho = member_offset(k);
    let lever = rotate(a, rho);
    let x = kahan_add(clump_get(b, CLUMP_X), lever, clump_get(b, CLUMP_CX));
    var v_end = v;
    if (params.integrator != INTEGRATOR_SYMPLECTIC_EULER) {
        v_end = v + (0.5 * h / t.mass) * clump_get(b, CLUMP_F);
    }
    let w_half = clump_omega(t, a, spin);
    let w_end = clump_omega(t, a, corrected_spin(t, spin, clump_get(b, CLUMP_M)));
    var dalpha: vec3<real>;
    if (t.scalar != 0.0) {
        dalpha = h * w_half;
        if (params.integrator == INTEGRATOR_VARIATIONAL_EXACT) {
            let q = h * h * dot(w_half, w_half);
            dalpha = (2.0 * h / (1.0 + sqrt(max(1.0 - q, 0.0)))) * w_half;
        }
    } else {
        // rodrigues::relative(α_k, α_{k+1}).
        dalpha = try_compose(-a_old, a).value;
    }
    let dx = h * v + (lever - rotate(a_old, rho));
    set_pos(i, x.value);
    set_pos_kahan(i, x.kahan);
    set_vel(i, v + cross(w_half, lever), mass_of(i));
    set_rot(i, a);
    set_omega(i, w_half, inertia_of(i));
    let o = O_MEMBER_SIDE + 3u * k;
    body[o] = vec4<real>(v_end + cross(w_end, lever), w_end.x);
    body[o + 1u] = vec4<real>(dx, w_end.y);
    body[o + 2u] = vec4<real>(dalpha, w_end.z);
    if ((params.flags & PARAM_CONTACT) != 0u) {
        check_skin(i, x.value);
    }
}

// Kernel clump_gather, per body (after particle_forces; Bodies::gather_correct): the
// force and moment about the centre of mass from its spheres' (physics::rigid_body::
// gather, in the type's order, no atomics: the spheres are a contiguous range) and the
// field on its mass; then, except in the set-up evaluation, the correct half
// (rigid::correct_rigid) and the spheres' velocities and spins from the body's.
@compute @workgroup_size(WG)
fn clump_gather(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= N_BODIES || failed() || clump_dormant(b)) { return; }
    let info = clump_info(b);
    let t = clump_type(info.z);
    let a = clump_get(b, CLUMP_A);
    var f = vec3<real>(0.0);
    var m = vec3<real>(0.0);
    for (var l = 0u; l < info.y; l++) {
        let i = info.x + l;
        let lever = rotate(a, member_offset(i - N_FREE));
        let fs = get_force(i);
        f = f + fs;
        m = m + (cross(lever, fs) + get_moment(i));
    }
    f = f + t.mass * gravity();
    clump_set(b, CLUMP_F, f);
    clump_set(b, CLUMP_M, m);
    if ((params.flags & PARAM_FIRST) != 0u) { return; }
    var v = clump_get(b, CLUMP_V);
    var spin = clump_get(b, CLUMP_SPIN);
    if (params.integrator != INTEGRATOR_SYMPLECTIC_EULER) {
        let h = params.dt;
        let vs = kahan_add(v, (0.5 * h / t.mass) * f, clump_get(b, CLUMP_CV));
        var kw = 0.5 * h;
        if (t.scalar != 0.0) { kw = 0.5 * h / t.scalar; }
        let ss = kahan_add(spin, kw * m, clump_get(b, CLUMP_CSPIN));
        v = vs.value;
        spin = ss.value;
        clump_set(b, CLUMP_V, v);
        clump_set(b, CLUMP_CV, vs.kahan);
        clump_set(b, CLUMP_SPIN, spin);
        clump_set(b, CLUMP_CSPIN, ss.kahan);
    }
    let w = clump_omega(t, a, spin);
    for (var l = 0u; l < info.y; l++) {
        let i = info.x + l;
        let lever = rotate(a, member_offset(i - N_FREE));
        set_vel(i, v + cross(w, lever), mass_of(i));
        set_omega(i, w, inertia_of(i));
    }
}
