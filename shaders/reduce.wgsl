// Deterministic tree reduction of the diagnostics (energies and momenta), run only at
// output steps. The twin of src/diagnostics.rs (kinematic) and CpuBackend::potentials.
// Quantities, in order: e_kin, e_rot, px, py, pz, lx, ly, lz, e_field, e_contact,
// e_wall, e_bend, e_axial, e_shear, e_near_field (NQ = 15, padded to 16).

const NQ: u32 = 16u;
var<workgroup> scratch: array<array<real, 16>, WG>;

fn contributions(i: u32) -> array<real, 16> {
    var q: array<real, 16>;
    if (i < params.n_particles) {
        let m = mass_of(i);
        let jj = inertia_of(i);
        let x = get_pos(i);
        let v = get_vel(i);
        let w = get_omega(i);
        q[0] = 0.5 * m * dot(v, v);
        q[1] = 0.5 * jj * dot(w, w);
        let p = m * v;
        q[2] = p.x; q[3] = p.y; q[4] = p.z;
        let l = cross(x, p) + jj * w;
        q[5] = l.x; q[6] = l.y; q[7] = l.z;
        var at = x;
        if ((pflags[i] & FLAG_PENDULUM) != 0u) {
            at = x + rotate(get_rot(i), get_pend(i));
        }
        q[8] = -m * dot(gravity(), at);
        let e = get_energy(i);
        q[9] = e.x;
        q[10] = e.y;
        q[14] = e.z;
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
    scratch[lid.x] = contributions(gid.x);
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
    var q: array<real, 16>;
    let k = gid.x;
    if (k < chunk.n_bonds) {
        q[11] = bond_out[12u * k + 9u];
        q[12] = bond_out[12u * k + 10u];
        q[13] = bond_out[12u * k + 11u];
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
    var acc: array<real, 16>;
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
