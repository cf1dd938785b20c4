// Deterministic tree reduction of the diagnostics (energies and momenta), run only at
// output steps. The twin of src/diagnostics.rs (kinematic) and src/cpu/kernels/reduce.rs (potentials).
// Quantities, in order: e_kin, e_rot, px, py, pz, lx, ly, lz, e_field, e_contact,
// e_wall, e_bend, e_axial, e_shear, e_near_field: the slots Q_* of the contract
// (src/gpu/contract.rs, in the generated header), Q_COUNT reals per row.

const NQ: u32 = Q_COUNT;
var<workgroup> scratch: array<array<real, Q_COUNT>, WG>;

fn contributions(i: u32) -> array<real, Q_COUNT> {
    var q: array<real, Q_COUNT>;
    // A clump's sphere counts its contact energies only: its body's motion and field
    // energy the host adds (integrators::bodies::Bodies::kinematic; the CPU skips the
    // spheres in diagnostics::kinematic the same way, and dormant particles).
    // A dormant particle (reserved by an inserter) is not yet in the system, a removed
    // one no longer (a dormant one carries FLAG_REMOVED too).
    if (i < N_FREE && (particle_flags[i] & FLAG_REMOVED) == 0u) {
        let m = mass_of(i);
        let jj = inertia_of(i);
        let x = get_pos(i);
        let v = get_vel(i);
        let w = get_omega(i);
        q[Q_E_KIN] = 0.5 * m * dot(v, v);
        q[Q_E_ROT] = 0.5 * jj * dot(w, w);
        let p = m * v;
        q[Q_MOMENTUM] = p.x; q[Q_MOMENTUM + 1u] = p.y; q[Q_MOMENTUM + 2u] = p.z;
        let l = cross(x, p) + jj * w;
        q[Q_ANGULAR_MOMENTUM] = l.x; q[Q_ANGULAR_MOMENTUM + 1u] = l.y; q[Q_ANGULAR_MOMENTUM + 2u] = l.z;
        var at = x;
        if ((particle_flags[i] & FLAG_PENDULUM) != 0u) {
            at = x + rotate(get_rot(i), get_pend(i));
        }
        q[Q_FIELD] = -m * dot(gravity(), at);
    }
    if (i < params.n_particles) {
        let e = get_energy(i);
        q[Q_CONTACT] = e.x;
        q[Q_WALL] = e.y;
        q[Q_NEAR_FIELD] = e.z;
    }
    return q;
}

// Tree over the workgroup's scratch rows; row 0 ends with the sum. Fixed pairing order.
fn tree(lid: u32) {
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (lid < stride) {
            for (var k = 0u; k < NQ; k++) {
                scratch[lid][k] = scratch[lid][k] + scratch[lid + stride][k];
            }
        }
    }
    workgroupBarrier();
}

// Pass 1a: one partial sum per workgroup over the particles.
@compute @workgroup_size(WG)
fn reduce_partials(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                   @builtin(workgroup_id) wid: vec3<u32>) {
    // Leaf k is the particle of id k, wherever it is stored: the tree sums in id order
    // (issue 44), as the CPU does. An id not stored (compacted storage: its slot is
    // NOT_STORED) and the padding past the ids contribute nothing.
    var i = params.n_particles;
    if (gid.x < params.n_ids) { i = slot_of(gid.x); }
    scratch[lid.x] = contributions(i);
    tree(lid.x);
    if (lid.x == 0u) {
        for (var k = 0u; k < NQ; k++) {
            partials[wid.x * NQ + k] = scratch[0][k];
        }
    }
}

// Pass 1b, per bond chunk: partial sums of the bond energies after the particles'.
@compute @workgroup_size(WG)
fn reduce_bond_partials(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                        @builtin(workgroup_id) wid: vec3<u32>) {
    var q: array<real, Q_COUNT>;
    let k = gid.x;
    if (k < chunk.n_bonds) {
        q[Q_BEND] = bond_out[BOND_OUT_STRIDE * k + BOND_OUT_E_BEND];
        q[Q_AXIAL] = bond_out[BOND_OUT_STRIDE * k + BOND_OUT_E_AXIAL];
        q[Q_SHEAR] = bond_out[BOND_OUT_STRIDE * k + BOND_OUT_E_SHEAR];
    }
    scratch[lid.x] = q;
    tree(lid.x);
    if (lid.x == 0u) {
        for (var j = 0u; j < NQ; j++) {
            partials[(chunk.partial_base + wid.x) * NQ + j] = scratch[0][j];
        }
    }
}

// Pass 2: one workgroup folds the partials (thread t takes t, t+WG, … in order).
@compute @workgroup_size(WG)
fn reduce_final(@builtin(local_invocation_id) lid: vec3<u32>) {
    let count = params.n_partials;
    var acc: array<real, Q_COUNT>;
    for (var p = lid.x; p < count; p += WG) {
        for (var k = 0u; k < NQ; k++) {
            acc[k] = acc[k] + partials[p * NQ + k];
        }
    }
    scratch[lid.x] = acc;
    tree(lid.x);
    if (lid.x == 0u) {
        for (var k = 0u; k < NQ; k++) {
            result[k] = scratch[0][k];
        }
    }
}
