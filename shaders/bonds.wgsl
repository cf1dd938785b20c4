// Per-bond kernels, dispatched once per bond chunk. The twins of cpu::kernels::bonds (bond_forces)
// and of the bond loop of cpu::kernels::particles (particle_force).

// Kernel bond_forces: one invocation per bond of the chunk, results into bond_out.
// `energies`: also store U^m, U^a, U^s (entry point bond_forces); bond_forces_no_energy
// skips them in the steps that end fused, whose energies nobody reads (the host reads
// them after the last step of an advance).
//
// Breakable bonds (BREAKABLE, issue 47): a bond that broke at an earlier step stores a
// zero result; one whose failure index reaches 1 breaks here (its status word takes the
// step, its loads and energy go to its break record) and stores its force and moments,
// which this evaluation's kick uses and bond_unload then takes out of the stored forces,
// with zero energies (they move to e_broken). A bond that broke at this very step (a
// restore at the break's step) is treated the same way, without a new record.
fn bond_forces_at(gid: vec3<u32>, energies: bool) {
    let k = gid.x;
    if (k >= chunk.n_bonds || failed()) { return; }
    // The result's layout: BOND_OUT_* of the contract (src/gpu/contract.rs).
    let o = BOND_OUT_STRIDE * k;
    var at = 0xffffffffu;
    var step = 0u;
    if (BREAKABLE != 0u) {
        at = atomicLoad(&status[bond_word(chunk.bond_base + k)]);
        step = atomicLoad(&status[STATUS_STEP]);
        if (at < step) {
            let zero = vec3<real>(0.0);
            set_bond_vec(o + BOND_OUT_FORCE_I, zero);
            set_bond_vec(o + BOND_OUT_MOMENT_I, zero);
            set_bond_vec(o + BOND_OUT_MOMENT_J, zero);
            bond_out[o + BOND_OUT_E_BEND] = 0.0;
            bond_out[o + BOND_OUT_E_AXIAL] = 0.0;
            bond_out[o + BOND_OUT_E_SHEAR] = 0.0;
            return;
        }
    }
    let b = load_bond(k);
    let d = separation(get_pos(b.i), get_pos_kahan(b.i), get_pos(b.j), get_pos_kahan(b.j));
    let r = bond_law(b, d, get_rot(b.i), get_rot(b.j),
                     (params.flags & PARAM_PRINTED_SHEAR) != 0u);
    if (!r.ok) {
        raise(ERR_BOND_HALF_TURN, chunk.bond_base + k);
        return;
    }
    var e = vec3<real>(r.e_bend, r.e_axial, r.e_shear);
    if (BREAKABLE != 0u) {
        let rec = break_record(k);
        if (at == step || failure_index(r, rec) >= 1.0) {
            if (at != step) {
                atomicStore(&status[bond_word(chunk.bond_base + k)], step);
                atomicAdd(&status[STATUS_BREAKS], 1u);
                atomicStore(&status[STATUS_BROKE_STEP], step);
                let l = rec + BOND_BREAK_LOADS;
                bond_out[l] = r.tension;
                bond_out[l + 1u] = r.shear;
                bond_out[l + 2u] = r.bend;
                bond_out[l + 3u] = r.twist;
                bond_out[rec + BOND_BREAK_ENERGY] = r.e_bend + r.e_axial + r.e_shear;
            }
            e = vec3<real>(0.0);
        }
    }
    set_bond_vec(o + BOND_OUT_FORCE_I, r.force_i);
    set_bond_vec(o + BOND_OUT_MOMENT_I, r.moment_i);
    set_bond_vec(o + BOND_OUT_MOMENT_J, r.moment_j);
    if (energies) {
        bond_out[o + BOND_OUT_E_BEND] = e.x;
        bond_out[o + BOND_OUT_E_AXIAL] = e.y;
        bond_out[o + BOND_OUT_E_SHEAR] = e.z;
    }
}

// The status word of bond k (global index): the step at which it broke, u32::MAX
// while it holds (BREAKABLE).
fn bond_word(k: u32) -> u32 { return STATUS_DETAIL + params.n_particles + k; }

// The break record of the chunk's bond k in bond_out, after the chunk's results.
fn break_record(k: u32) -> u32 { return BOND_OUT_STRIDE * chunk.n_bonds + BOND_BREAK_STRIDE * k; }

// max(0, T)/T_c + S/S_c + M_b/M_bc + |M_t|/M_tc with the inverse strengths of the
// break record at `rec`, in that order: physics::binder::BondLoads::failure_index.
fn failure_index(r: BondResult, rec: u32) -> real {
    let inv = rec + BOND_BREAK_INV;
    return max(r.tension, 0.0) * bond_out[inv] + abs(r.shear) * bond_out[inv + 1u]
        + abs(r.bend) * bond_out[inv + 2u] + abs(r.twist) * bond_out[inv + 3u];
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

// Kernel bond_unload (breakable bonds, issue 47): per particle, takes the results of
// the bound chunk's bonds that broke at this step out of its stored force and moment,
// in ascending bond id, after particle_forces' kick used them; the next predict starts
// from the forces without them. Dispatched for every bond chunk after particle_forces
// (steps that can break bonds are never fused); does nothing at a step without a
// break. The twin of cpu::kernels::bonds (bond_unload).
@compute @workgroup_size(WG)
fn bond_unload(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (BREAKABLE == 0u || i >= params.n_particles || failed()) { return; }
    let step = atomicLoad(&status[STATUS_STEP]);
    if (atomicLoad(&status[STATUS_BROKE_STEP]) != step) { return; }
    var f = get_force(i);
    var t = get_moment(i);
    let first = incidence[i];
    let last = incidence[i + 1u];
    let base = params.n_particles + 1u;
    for (var k = first; k < last; k++) {
        let e = incidence[base + k];
        let bk = e >> 1u;
        if (atomicLoad(&status[bond_word(chunk.bond_base + bk)]) != step) { continue; }
        let o = BOND_OUT_STRIDE * bk;
        let odd = (e & 1u) != 0u;
        let fb = bond_vec(o + BOND_OUT_FORCE_I);
        f -= select(fb, -fb, odd);
        t -= bond_vec(o + select(BOND_OUT_MOMENT_I, BOND_OUT_MOMENT_J, odd));
    }
    set_force(i, f);
    set_moment(i, t);
}
