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

// Both halves are dispatched once per row chunk (struct Rows): the Kahan terms `comp`
// are a row buffer, at li = i − first.
@compute @workgroup_size(WG)
fn integrate_predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count) { return; }
    let i = rows.first + li;
    if (failed() || is_removed(i)) { return; }
    let h = params.dt;
    let m = mass_of(i);
    let jj = inertia_of(i);
    let f = get_force(i);
    let t = get_moment(i);
    let euler = params.integrator == 2u;
    let kv = select(0.5 * h / m, h / m, euler);
    let kw = select(0.5 * h / jj, h / jj, euler);
    let held = (pflags[i] & FLAG_HELD) != 0u;
    var x = get_pos(i);
    var v = vec3<real>(0.0);
    if (!held) {
        v = comp_add(1u, li, get_vel(i), kv * f);
        x = comp_add(0u, li, x, h * v);
    }
    if ((params.flags & PARAM_DOMAIN) != 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(x >= lo) && all(x <= hi))) {
            if ((params.flags & PARAM_DOMAIN_REMOVE) == 0u) {
                raise(ERR_LEFT_DOMAIN, i);
                return;
            }
            // Parked where it left, at rest, out of every contact (CPU: integrate_predict).
            pflags[i] = pflags[i] | FLAG_REMOVED;
            set_pos(i, x);
            set_vel(i, vec3<real>(0.0));
            set_omega(i, vec3<real>(0.0));
            return;
        }
    }
    if ((pflags[i] & FLAG_NO_ROTATION) != 0u) {
        // Rotation locked: α stays, Ω = 0 (integrators::predict).
        if (!(finite3(x) && finite3(v))) {
            raise(ERR_NON_FINITE, i);
            return;
        }
        set_pos(i, x);
        set_vel(i, v);
        set_omega(i, vec3<real>(0.0));
        if ((params.flags & PARAM_CONTACT) != 0u) {
            let moved = x - get_ref(i);
            let half = 0.5 * params.skin;
            if (dot(moved, moved) > half * half) {
                atomicOr(&status[STATUS_REBUILD], 1u);
            }
        }
        return;
    }
    let w = comp_add(2u, li, get_omega(i), kw * t);
    var da = h * w;
    if (params.integrator == 1u) {
        let q = h * h * dot(w, w);
        if (!(q < 1.0)) {
            raise(ERR_ROTATION_DOMAIN, i);
            return;
        }
        da = (2.0 * h / (1.0 + sqrt(1.0 - q))) * w;
    }
    let a = try_compose(get_rot(i), da);
    if (!a.ok) {
        raise(ERR_HALF_TURN, i);
        return;
    }
    if (!(finite3(x) && finite3(v) && finite3(a.value) && finite3(w))) {
        raise(ERR_NON_FINITE, i);
        return;
    }
    set_pos(i, x);
    set_vel(i, v);
    set_rot(i, a.value);
    set_omega(i, w);
    if ((params.flags & PARAM_CONTACT) != 0u) {
        let moved = x - get_ref(i);
        let half = 0.5 * params.skin;
        if (dot(moved, moved) > half * half) {
            atomicOr(&status[STATUS_REBUILD], 1u);
        }
    }
}
