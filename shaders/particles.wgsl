// Kernel particle_forces: per particle, the bond results (earlier bond chunks summed by
// bond_gather, the last chunk's gathered here), contacts over the neighbour list
// (ascending id), walls and the field, then the correct half of the step
// (correct_half, common/integrator.wgsl). The twin of src/cpu/kernels/particles.rs (particle_force) followed
// by cpu::kernels::integrate::integrate_correct. Dispatched once per row chunk (struct RowChunk): it
// reads its particle's neighbour, granular_out and kahan rows at li = i − first, and the last
// bond chunk's results.

// The forces and moments on particle i (row li of its chunk), stored in force and
// moment (with its energies in penergy when `energies`); returned with its position.
struct Forces {
    f: vec3<real>,
    t: vec3<real>,
    x: vec3<real>,
    // False when a bond computed here (bond_terms) reached a half turn.
    ok: bool,
}

// The bond terms of particle i computed in this kernel (PARAM_INLINE_BONDS, fused steps
// with one bond chunk) instead of read from bond_out: per incident bond, in incidence
// order (ascending bond id), bond_law on the bond's own ends in its own order, so each
// term has the bits bond_forces would store and gather_bonds add. Each bond is computed
// by both ends, which costs arithmetic but no per-bond result traffic: no bond_out
// write (36 B per bond in f32) and no gather read (24 B per bond end). False, with the
// error raised naming the bond as bond_forces does, at a half turn.
fn bond_terms(i: u32, f: ptr<function, vec3<real>>, t: ptr<function, vec3<real>>) -> bool {
    let first = incidence[i];
    let last = incidence[i + 1u];
    let base = params.n_particles + 1u;
    let printed = (params.flags & PARAM_PRINTED_SHEAR) != 0u;
    var ok = true;
    for (var k = first; k < last; k++) {
        let e = incidence[base + k];
        let id = e >> 1u;
        let b = load_bond(id);
        let d = separation(get_pos(b.i), get_pos_kahan(b.i), get_pos(b.j), get_pos_kahan(b.j));
        let r = bond_law(b, d, get_rot(b.i), get_rot(b.j), printed);
        if (!r.ok) {
            raise(ERR_BOND_HALF_TURN, chunk.bond_base + id);
            ok = false;
        }
        let odd = (e & 1u) != 0u;
        *f += select(r.force_i, -r.force_i, odd);
        *t += select(r.moment_i, r.moment_j, odd);
    }
    return ok;
}

// `merged`: compute the granular forces here (granular_sum) instead of adding the granular_out
// row of granular_forces (PARAM_MERGED, fused steps only). `inline_bonds`: compute the bond
// terms here (bond_terms) instead of gathering bond_out (PARAM_INLINE_BONDS, fused
// steps only).
fn forces_on(i: u32, li: u32, energies: bool, merged: bool, inline_bonds: bool) -> Forces {
    var f = vec3<real>(0.0);
    var t = vec3<real>(0.0);
    var ok = true;
    if (params.n_bonds > 0u) {
        if (inline_bonds) {
            ok = bond_terms(i, &f, &t);
        } else {
            // The bound chunk is the last; bond_gather summed the others.
            if (chunk.first == 0u) {
                f = get_force(i);
                t = get_moment(i);
            }
            gather_bonds(i, &f, &t);
        }
    }
    let x = get_pos(i);
    let cx = get_pos_kahan(i);
    let r = radius_of(i);
    var e_contact = real(0.0);
    var e_wall = real(0.0);
    var e_near = real(0.0);
    if ((params.flags & PARAM_CONTACT) != 0u && (params.flags & PARAM_HERTZ) == 0u && !is_removed(i)) {
        let row = li * (params.max_neighbors + 1u);
        let n = neighbors[row];
        for (var s = 0u; s < n; s++) {
            let j = neighbors[row + 1u + s];
            let k_j = get_pos_kahan4(j);
            if ((flags_with(j, k_j) & FLAG_REMOVED) != 0u) { continue; }
            let d = separation(get_pos(j), k_j.xyz, x, cx);
            let c = binder_pair(params.k_pp, d, r, radius_of(j));
            if (c.touching) {
                e_contact += 0.5 * c.energy;
                f += c.force;
            }
        }
        for (var w = 0u; w < params.n_walls; w++) {
            let wall = wall_at(w);
            let c = binder_wall(wall, wall_offset(wall, x, cx), r);
            if (c.touching) {
                e_wall += c.energy;
                f += c.force;
            }
        }
        // Mesh walls: every contact of the sphere (no history under this law), in
        // candidate order, as the CPU sums them (physics::contact::binder_surface).
        for (var mp = 0u; mp < mesh_passes() && N_MESH_TRIS > 0u; mp++) {
            let n = mesh_pass_cell(mp, x);
            let near = mesh_near(mp, n, x, r);
            var left = near;
            for (var s = mesh_next(&left, 31u); s < n; s = mesh_next(&left, s)) {
                if (s >= 32u && mesh_other_pass(mp, s)) { continue; }
                let h = mesh_contact(near, n, s, x, r);
                if (h.key == MESH_NONE) { continue; }
                let k = tables[mesh_info(mesh_of(h.key / 8u)) + 1u].x;
                let c = binder_surface(k, h.distance, h.normal, r);
                e_wall += c.energy;
                f += c.force;
            }
        }
    }
    let m = mass_of(i);
    let g = gravity();
    // A clump's sphere: the field acts on its body (clump_gather).
    if (i < N_FREE) { f += m * g; }
    if ((particle_flags[i] & FLAG_PENDULUM) != 0u) {
        // U = −m a·(x + Rρ₀): moment m (Rρ₀) × a.
        t += m * cross(rotate(get_rot(i), get_pend(i)), g);
    }
    if (merged) {
        // The contacts of this particle, read before `force` and `moment` are
        // overwritten below (it needs F_k, M_k), added after the field as the CPU does.
        let g = granular_sum(i, li, true);
        f += g.f;
        t += g.t;
    } else if ((params.flags & (PARAM_HERTZ | PARAM_DRAG | PARAM_NEAR)) != 0u) {
        // granular_forces ran before the bond kernels (it needs F_k); add its part
        // after the field, as the CPU does.
        let o = 3u * li;
        let gf = row_vec[rows.granular_out + o];
        let gt = row_vec[rows.granular_out + o + 1u];
        f += gf.xyz;
        t += gt.xyz;
        if (energies) {
            e_contact += gf.w;
            e_wall += gt.w;
            e_near = row_vec[rows.granular_out + o + 2u].x;
        }
    }
    // Fused steps (energies off) of scenes without granular forces store no F and M: no
    // kernel reads them before the next step overwrites them (the correct and predict
    // halves take them from registers; the host reads them after the last step of an
    // advance, which is not fused). The granular contact passes read F_k, M_k of the
    // step before.
    if (energies || (params.flags & (PARAM_HERTZ | PARAM_DRAG | PARAM_NEAR)) != 0u) {
        set_force(i, f);
        set_moment(i, t);
    }
    if (energies) {
        set_energy(i, vec3<real>(e_contact, e_wall, e_near));
    }
    return Forces(f, t, x, ok);
}

// The correct half (correct_half, common/integrator.wgsl) ends the step: no kernel reads
// a velocity between the force sums and the end of the step, so the step needs no
// separate pass over the state. The twin of cpu::kernels::integrate::integrate_correct.
@compute @workgroup_size(WG)
fn particle_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_PARTICLE_FORCES);
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    let e = forces_on(i, li, true, false, false);
    // The first evaluation (set-up) computes the forces of the initial state only.
    if ((params.flags & PARAM_FIRST) != 0u || params.integrator == INTEGRATOR_SYMPLECTIC_EULER || is_removed(i)) {
        return;
    }
    let flags = particle_flags[i];
    let s = Velocities(get_vel(i), get_omega(i), load_kahan(li, 0u), load_kahan(li, 1u));
    let m = mass_of(i);
    let jj = inertia_of(i);
    let c = correct_half(flags, m, jj, s, e.f, e.t);
    store_kahan(li, 0u, c.cv);
    store_kahan(li, 1u, c.cw);
    set_vel(i, c.v, m);
    set_omega(i, c.w, jj);
}

// The predicted position of particle i: in pos_next, for commit_pos, while partners'
// positions are read in this dispatch (binder contacts, a merged contact pass); in pos
// itself otherwise (PARAM_POS_DIRECT, direct_positions in src/gpu/mod.rs), where no
// later kernel of the step reads positions.
// With it, its Kahan term c (f32 builds), where partners read it in turn.
fn store_next_pos(i: u32, x: vec3<real>, c: vec3<real>) {
    if ((params.flags & PARAM_POS_DIRECT) != 0u) {
        set_pos(i, x);
        set_pos_kahan(i, c);
    } else {
        set_pos_next(i, x);
        set_pos_kahan_next(i, c);
    }
}

// Kernel particle_forces_predict: particle_forces followed by the next step's
// integrate_predict for the same particle, with its state kept in registers (one pass
// over the particles per step instead of two, and no reload of v, Ω, F, M and the Kahan
// terms). The twin of cpu::kernels::particles (particle_force), integrate_correct and
// integrate_predict in turn, with the same functions, so the bits are those of the
// separate kernels. Where partners' positions are read by the contacts of this very
// dispatch, the new position goes to pos_next, which commit_pos copies into pos at
// the start of the next step; elsewhere to pos (store_next_pos). The host fuses every
// step of an advance but the last (whose state it reads back), and none when particles
// can be removed at the domain boundary (the removal flag would be written while
// partners read it). A predict error belongs to the next step: STATUS_AHEAD tells the
// host. Energies are not stored: the host reads them after the last step, which is
// never fused.
//
// With PARAM_MERGED (granular scenes with at most one bond chunk) it also runs the
// contact pass of granular_forces for its particle, so a step makes one pass over the
// particles and their neighbours, not two, and no granular_out round trip. Partners' v, Ω and F
// are overwritten in this very dispatch, so their contact sides come from the motion
// records (common/contact.wgsl) that the previous predict wrote; this kernel writes its
// particle's record for the next step, with the bits side_at would compute from the
// stored v, Ω and F.
@compute @workgroup_size(WG)
fn particle_forces_predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_PARTICLE_FORCES_PREDICT);
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    let merged = (params.flags & PARAM_MERGED) != 0u;
    let inline_bonds = (params.flags & PARAM_INLINE_BONDS) != 0u;
    let e = forces_on(i, li, false, merged, inline_bonds);
    // A bond of this particle reached a half turn (raised): the run stops here.
    if (!e.ok) { return; }
    let flags = particle_flags[i];
    if ((flags & FLAG_REMOVED) != 0u) {
        store_next_pos(i, e.x, get_pos_kahan(i));
        if (inline_bonds) { set_rot_next(i, get_rot(i)); }
        return;
    }
    let m = mass_of(i);
    let jj = inertia_of(i);
    var s = Velocities(get_vel(i), get_omega(i), load_kahan(li, 0u), load_kahan(li, 1u));
    if (params.integrator != INTEGRATOR_SYMPLECTIC_EULER) {
        s = correct_half(flags, m, jj, s, e.f, e.t);
    }
    let p = predict_half(flags, m, jj, e.x, get_rot(i), s, get_pos_kahan(i), e.f, e.t);
    store_predicted_kahan(li, p);
    if (p.err != NO_ERROR) {
        // This step is complete (corrected velocities); the next one failed.
        set_vel(i, s.v, m);
        set_omega(i, s.w, jj);
        store_next_pos(i, e.x, get_pos_kahan(i));
        atomicOr(&status[STATUS_AHEAD], 1u);
        raise(p.err, id_of(i));
        return;
    }
    store_next_pos(i, p.x, p.cx);
    set_vel(i, p.v, m);
    // Partners' bond terms in this dispatch read α (PARAM_INLINE_BONDS): the new α waits
    // in rot_next for commit_pos, as x does in pos_next.
    if (inline_bonds) {
        set_rot_next(i, p.a);
    } else {
        set_rot(i, p.a);
    }
    set_omega(i, p.w, jj);
    if (merged && (params.flags & PARAM_HERTZ) != 0u) {
        store_motion(i, p.v, p.w, e.f, m, flags);
    }
    if ((params.flags & PARAM_CONTACT) != 0u) {
        check_skin(i, p.x);
    }
}
