// Integrators (Baker & Gonzalez maps 23, 25, 27) split into predict and correct halves:
// the twin of src/integrators/mod.rs and the kernel integrate_predict of src/cpu/kernels/integrate.rs.
// The correct half (the twin of cpu::kernels::integrate::integrate_correct) ends particle_forces
// (particles.wgsl); both halves are the functions of common/integrator.wgsl.

// One invocation: counts the step (stops counting once an error is raised), and seals
// a raised error, so that no kernel of this or a later step runs on through it (see
// `failed`, common/layout.wgsl).
@compute @workgroup_size(1)
fn step_begin() {
    if (failed()) {
        atomicOr(&status[STATUS_ERROR], ERROR_SEALED);
        return;
    }
    atomicAdd(&status[STATUS_STEP], 1u);
}

// Dispatched once per row chunk (struct RowChunk): the Kahan terms `kahan` are a row
// buffer, at li = i − first. The arithmetic is predict_half (common/integrator.wgsl),
// which the fused particle_forces_predict shares. One exit: every outcome (normal,
// rotation locked, removed at the domain boundary) ends in the same stores, because
// lavapipe executes every arm of a divergent `if`, stores included.
@compute @workgroup_size(WG)
fn integrate_predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_INTEGRATE_PREDICT);
    let li = gid.x;
    if (li >= rows.count) { return; }
    let i = rows.first + li;
    let flags = particle_flags[i];
    // A clump's sphere: clump_pose writes its state and runs its rebuild test (the
    // dispatch stops at N_FREE, but the last workgroup may reach past it).
    if (failed() || (flags & (FLAG_REMOVED | FLAG_MEMBER)) != 0u) { return; }
    let s = Velocities(get_vel(i), get_omega(i), load_kahan(li, 0u), load_kahan(li, 1u));
    let m = mass_of(i);
    let jj = inertia_of(i);
    let f = get_force(i);
    let p = predict_half(flags, m, jj, get_pos(i), get_rot(i), s,
                         get_pos_kahan(i), f, get_moment(i));
    store_predicted_kahan(li, p);
    if (p.err != NO_ERROR) {
        raise(p.err, id_of(i));
        return;
    }
    set_pos(i, p.x);
    set_pos_kahan(i, p.cx);
    set_vel(i, p.v, m);
    set_rot(i, p.a);
    set_omega(i, p.w, jj);
    // The motion record the merged contact pass of this step reads for its partners
    // (bound with the next step's parity: the copy this step reads).
    if ((params.flags & (PARAM_MERGED | PARAM_HERTZ)) == (PARAM_MERGED | PARAM_HERTZ)) {
        store_motion(i, p.v, p.w, f, m, flags);
    }
    if (p.removed) {
        set_flags(i, flags | FLAG_REMOVED);
        // removed.csv's step (CPU: integrate_predict's exit_steps); its state at exit
        // is the x and v stored above.
        particle_flags[O_EXIT_STEP + i] = atomicLoad(&status[STATUS_STEP]);
    } else if ((params.flags & PARAM_CONTACT) != 0u) {
        check_skin(i, p.x);
    }
}

// Kernel commit_pos: after a fused particle_forces_predict, the predicted positions
// (pos_next, with their Kahan terms in f32; partners' positions were still being read
// while they were written) become the positions of the step. Its CPU twin is the position store of
// cpu::kernels::integrate (integrate_predict) (the CPU predicts in a pass of its own, in place); a
// copy, so the bits are those integrate_predict stores. The CPU parity tests of
// tests/gpu_parity.rs and gpu_granular.rs run fused steps, and
// fused_steps_equal_single_steps checks them against the unfused kernels bit for bit.
@compute @workgroup_size(WG)
fn commit_pos(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n_particles || failed()) { return; }
    set_pos(i, get_pos_next(i));
    set_pos_kahan(i, get_pos_kahan_next(i));
    // And α, when the fused pass computed bond terms, which read partners' α.
    if ((params.flags & PARAM_INLINE_BONDS) != 0u) {
        set_rot(i, get_rot_next(i));
    }
}
