// Kernel particle_forces: per particle, the bond results (earlier bond chunks summed by
// bond_gather, the last chunk's gathered here), contacts over the neighbour list
// (ascending id), walls and the field, then the correct half of the step
// (correct_particle, below). The twin of CpuBackend::particle_force followed
// by CpuBackend::integrate_correct. Dispatched once per row chunk (struct Rows): it
// reads its particle's neighbour, gout and comp rows at li = i − first, and the last
// bond chunk's results.

// The correct half of maps (23) and (25) for particle i (row li of its chunk) with its
// new force f and moment t; map (27) has none. particle_forces applies it as soon as it
// has summed f and t: no kernel reads a velocity between the force sums and the end
// of the step, so the step needs no separate pass over the state. The twin of
// CpuBackend::integrate_correct.
fn correct_particle(i: u32, li: u32, f: vec3<real>, t: vec3<real>) {
    if (params.integrator == 2u || is_removed(i)) { return; }
    let h = params.dt;
    let flags = pflags[i];
    var v = vec3<real>(0.0);
    if ((flags & FLAG_HELD) == 0u) {
        v = comp_add(1u, li, get_vel(i), (0.5 * h / mass_of(i)) * f);
    }
    set_vel(i, v);
    var w = vec3<real>(0.0);
    if ((flags & FLAG_NO_ROTATION) == 0u) {
        w = comp_add(2u, li, get_omega(i), (0.5 * h / inertia_of(i)) * t);
    }
    set_omega(i, w);
}

@compute @workgroup_size(WG)
fn particle_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    var f = vec3<real>(0.0);
    var t = vec3<real>(0.0);
    if (params.n_bonds > 0u) {
        // The bound chunk is the last; bond_gather summed the others.
        if (chunk.first == 0u) {
            f = get_force(i);
            t = get_moment(i);
        }
        gather_bonds(i, &f, &t);
    }
    let x = get_pos(i);
    let r = radius_of(i);
    var e_contact = real(0.0);
    var e_wall = real(0.0);
    var e_near = real(0.0);
    if ((params.flags & PARAM_CONTACT) != 0u && (params.flags & PARAM_HERTZ) == 0u && !is_removed(i)) {
        let row = li * (params.max_neighbors + 1u);
        let n = neighbors[row];
        for (var s = 0u; s < n; s++) {
            let j = neighbors[row + 1u + s];
            if (is_removed(j)) { continue; }
            let c = binder_pair(params.k_pp, x, get_pos(j), r, radius_of(j));
            if (c.touching) {
                e_contact += 0.5 * c.energy;
                f += c.force;
            }
        }
        for (var w = 0u; w < params.n_walls; w++) {
            let c = binder_wall(walls[w], x, r);
            if (c.touching) {
                e_wall += c.energy;
                f += c.force;
            }
        }
    }
    let m = mass_of(i);
    let g = gravity();
    f += m * g;
    if ((pflags[i] & FLAG_PENDULUM) != 0u) {
        // U = −m a·(x + Rρ₀): moment m (Rρ₀) × a.
        t += m * cross(rotate(get_rot(i), get_pend(i)), g);
    }
    if ((params.flags & (PARAM_HERTZ | PARAM_DRAG | PARAM_NEAR)) != 0u) {
        // granular_forces ran before the bond kernels (it needs F_k); add its part
        // after the field, as the CPU does.
        let o = 9u * li;
        f += vec3<real>(gout[o], gout[o + 1u], gout[o + 2u]);
        t += vec3<real>(gout[o + 3u], gout[o + 4u], gout[o + 5u]);
        e_contact += gout[o + 6u];
        e_wall += gout[o + 7u];
        e_near = gout[o + 8u];
    }
    set_force(i, f);
    set_moment(i, t);
    penergy[3u * i] = e_contact;
    penergy[3u * i + 1u] = e_wall;
    penergy[3u * i + 2u] = e_near;
    // The first evaluation (set-up) computes the forces of the initial state only.
    if ((params.flags & PARAM_FIRST) == 0u) {
        correct_particle(i, li, f, t);
    }
}
