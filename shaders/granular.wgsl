// Kernel granular_forces: the granular forces of every particle (granular_sum,
// common/contact.wgsl) into `granular_out`, for particle_forces. Used by the steps that are not
// fused with their successor's predict, and by fused steps when the contact pass cannot
// be merged into particle_forces_predict (several bond chunks, whose partial sums
// bond_gather keeps in `force`; see granular_forces_merge in src/gpu/mod.rs).
//
// It runs after the neighbour list is current and before bond_gather/particle_forces,
// so `force`/`moment` still hold the previous step's totals F_k, RM_k: they carry the
// half-step velocities to the end of the step for damping and drag. particle_forces
// adds `granular_out` after the field (the CPU order).
//
// Dispatched once per row chunk (struct RowChunk). `energies`: also store the pair, wall and
// near-field energies (entry point granular_forces); granular_forces_no_energy skips
// them in the steps that end fused, whose energies nobody reads (the host reads them
// after the last step of an advance).
fn granular_forces_at(gid: vec3<u32>, energies: bool) {
    let li = gid.x;
    if (li >= rows.count || failed()) { return; }
    let g = granular_sum(rows.first + li, li, false);
    // Row li: (F, e_contact), (M, e_wall), (e_near, unused); without energies the w
    // are 0 and the third vec4 is not written (particle_forces reads them only with).
    let o = 3u * li;
    if (energies) {
        row_vec[rows.granular_out + o] = vec4<real>(g.f, g.e_contact);
        row_vec[rows.granular_out + o + 1u] = vec4<real>(g.t, g.e_wall);
        row_vec[rows.granular_out + o + 2u] = vec4<real>(g.e_near, 0.0, 0.0, 0.0);
    } else {
        row_vec[rows.granular_out + o] = vec4<real>(g.f, 0.0);
        row_vec[rows.granular_out + o + 1u] = vec4<real>(g.t, 0.0);
    }
}

@compute @workgroup_size(WG)
fn granular_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    granular_forces_at(gid, true);
}

@compute @workgroup_size(WG)
fn granular_forces_no_energy(@builtin(global_invocation_id) gid: vec3<u32>) {
    granular_forces_at(gid, false);
}
