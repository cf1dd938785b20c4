// Per-bond kernels, dispatched once per bond chunk. The twins of cpu::kernels::bonds (bond_forces)
// and of the bond loop of cpu::kernels::particles (particle_force).

// Kernel bond_forces: one invocation per bond of the chunk, results into bond_out.
// `energies`: also store U^m, U^a, U^s (entry point bond_forces); bond_forces_no_energy
// skips them in the steps that end fused, whose energies nobody reads (the host reads
// them after the last step of an advance).
fn bond_forces_at(gid: vec3<u32>, energies: bool) {
    let k = gid.x;
    if (k >= chunk.n_bonds || failed()) { return; }
    let b = load_bond(k);
    let d = separation(get_pos(b.i), get_pos_kahan(b.i), get_pos(b.j), get_pos_kahan(b.j));
    let r = bond_law(b, d, get_rot(b.i), get_rot(b.j),
                     (params.flags & PARAM_PRINTED_SHEAR) != 0u);
    if (!r.ok) {
        raise(ERR_BOND_HALF_TURN, chunk.bond_base + k);
        return;
    }
    // The result's layout: BOND_OUT_* of the contract (src/gpu/contract.rs).
    let o = BOND_OUT_STRIDE * k;
    set_bond_vec(o + BOND_OUT_FORCE_I, r.force_i);
    set_bond_vec(o + BOND_OUT_MOMENT_I, r.moment_i);
    set_bond_vec(o + BOND_OUT_MOMENT_J, r.moment_j);
    if (energies) {
        bond_out[o + BOND_OUT_E_BEND] = r.e_bend;
        bond_out[o + BOND_OUT_E_AXIAL] = r.e_axial;
        bond_out[o + BOND_OUT_E_SHEAR] = r.e_shear;
    }
}

@compute @workgroup_size(WG)
fn bond_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_BOND_FORCES);
    bond_forces_at(gid, true);
}

@compute @workgroup_size(WG)
fn bond_forces_no_energy(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_BOND_FORCES);
    bond_forces_at(gid, false);
}

// Kernel bond_gather: per particle, adds the chunk's bond results in ascending bond id
// to the running force and moment (chunks are contiguous id ranges, so the summation
// order is that of the CPU gather). Dispatched for every bond chunk but the last, whose
// results particle_forces gathers itself (gather_bonds).
@compute @workgroup_size(WG)
fn bond_gather(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n_particles) { return; }
    var f = vec3<real>(0.0);
    var t = vec3<real>(0.0);
    if (chunk.first == 0u) {
        f = get_force(i);
        t = get_moment(i);
    }
    gather_bonds(i, &f, &t);
    set_force(i, f);
    set_moment(i, t);
}
