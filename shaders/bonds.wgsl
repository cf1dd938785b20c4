// Kernel bond_forces: one invocation per bond, results into bond_out. The twin of
// CpuBackend::bond_forces.

@compute @workgroup_size(WG)
fn bond_forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= params.n_bonds || failed()) { return; }
    let b = bonds[k];
    let r = bond_law(b, get_pos(b.i), get_pos(b.j), get_rot(b.i), get_rot(b.j),
                     (params.flags & PARAM_PRINTED_SHEAR) != 0u);
    if (!r.ok) {
        raise(ERR_BOND_HALF_TURN, k);
        return;
    }
    let o = 12u * k;
    bond_out[o] = r.force_i.x; bond_out[o + 1u] = r.force_i.y; bond_out[o + 2u] = r.force_i.z;
    bond_out[o + 3u] = r.moment_i.x; bond_out[o + 4u] = r.moment_i.y; bond_out[o + 5u] = r.moment_i.z;
    bond_out[o + 6u] = r.moment_j.x; bond_out[o + 7u] = r.moment_j.y; bond_out[o + 8u] = r.moment_j.z;
    bond_out[o + 9u] = r.e_bend; bond_out[o + 10u] = r.e_axial; bond_out[o + 11u] = r.e_shear;
}
