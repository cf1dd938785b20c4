// Kernel particle_forces: per particle, after bond_gather has summed the bond results,
// contacts over the neighbour list (ascending id), walls and the field. With
// bond_gather, the twin of CpuBackend::particle_force. Dispatched once per row chunk
// (struct Rows): it reads its particle's neighbour row and gout row at li = i − first.

@compute @workgroup_size(WG)
fn particle_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let i = rows.first + li;
    // Bond contributions were summed by bond_gather (chunk by chunk).
    var f = vec3<real>(0.0);
    var t = vec3<real>(0.0);
    if (params.n_bonds > 0u) {
        f = get_force(i);
        t = get_moment(i);
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
}
