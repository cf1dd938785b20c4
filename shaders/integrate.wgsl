// Integrators (Baker & Gonzalez maps 23, 25, 27) split into predict and correct halves:
// the twin of src/integrators/mod.rs and the kernel integrate_predict of src/cpu/mod.rs.
// The correct half (the twin of CpuBackend::integrate_correct) ends particle_forces:
// correct_particle in particles.wgsl.

// One invocation: counts the step (stops counting once an error is raised).
@compute @workgroup_size(1)
fn step_begin() {
    if (failed()) { return; }
    atomicAdd(&status[STATUS_STEP], 1u);
}

// Dispatched once per row chunk (struct Rows): the Kahan terms `comp` are a row
// buffer, at li = i − first. One exit: every outcome (normal, rotation locked, removed
// at the domain boundary) ends in the same stores, because lavapipe executes every arm
// of a divergent `if`, stores included.
const NO_ERROR: u32 = 0xffffffffu;

@compute @workgroup_size(WG)
fn integrate_predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count) { return; }
    let i = rows.first + li;
    let flags = pflags[i];
    if (failed() || (flags & FLAG_REMOVED) != 0u) { return; }
    let h = params.dt;
    let euler = params.integrator == 2u;
    var x = get_pos(i);
    var v = vec3<real>(0.0);
    if ((flags & FLAG_HELD) == 0u) {
        let kv = select(0.5 * h / mass_of(i), h / mass_of(i), euler);
        v = comp_add(1u, li, get_vel(i), kv * get_force(i));
        x = comp_add(0u, li, x, h * v);
    }
    var err = NO_ERROR;
    var removed = false;
    if ((params.flags & PARAM_DOMAIN) != 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(x >= lo) && all(x <= hi))) {
            // Removed: parked where it left, at rest, out of every contact (CPU:
            // integrate_predict); otherwise an error.
            removed = (params.flags & PARAM_DOMAIN_REMOVE) != 0u;
            err = select(ERR_LEFT_DOMAIN, NO_ERROR, removed);
        }
    }
    // Rotation locked (integrators::predict) or removed: α stays, Ω = 0.
    let turning = (flags & FLAG_NO_ROTATION) == 0u && !removed && err == NO_ERROR;
    var a = get_rot(i);
    var w = vec3<real>(0.0);
    if (turning) {
        let kw = select(0.5 * h / inertia_of(i), h / inertia_of(i), euler);
        w = comp_add(2u, li, get_omega(i), kw * get_moment(i));
        var da = h * w;
        if (params.integrator == 1u) {
            let q = h * h * dot(w, w);
            if (!(q < 1.0)) { err = ERR_ROTATION_DOMAIN; }
            da = (2.0 * h / (1.0 + sqrt(1.0 - q))) * w;
        }
        let c = try_compose(a, da);
        if (err == NO_ERROR && !c.ok) { err = ERR_HALF_TURN; }
        a = c.value;
    }
    if (removed) {
        v = vec3<real>(0.0);
    } else if (err == NO_ERROR && !(finite3(x) && finite3(v) && finite3(a) && finite3(w))) {
        err = ERR_NON_FINITE;
    }
    if (err != NO_ERROR) {
        raise(err, i);
        return;
    }
    set_pos(i, x);
    set_vel(i, v);
    set_rot(i, a);
    set_omega(i, w);
    if (removed) {
        pflags[i] = flags | FLAG_REMOVED;
    } else if ((params.flags & PARAM_CONTACT) != 0u) {
        let moved = x - get_ref(i);
        let half = 0.5 * params.skin;
        if (dot(moved, moved) > half * half) {
            atomicOr(&status[STATUS_REBUILD], 1u);
        }
    }
}
