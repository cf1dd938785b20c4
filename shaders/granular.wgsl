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
    enter(PHASE_GRANULAR_FORCES);
    granular_forces_at(gid, true);
}

@compute @workgroup_size(WG)
fn granular_forces_no_energy(@builtin(global_invocation_id) gid: vec3<u32>) {
    enter(PHASE_GRANULAR_FORCES);
    granular_forces_at(gid, false);
}

// Kernel mesh_place: the meshes placed at the current step (after step_begin, before
// any contact reads them), into `vecs` at O_MESH_PLACED, if some mesh moves: the twin
// of physics::mesh::MeshSurfaces::place (Pose::place of each vertex, then each
// triangle's corners and Planes::new, in their operations and order). A mesh at rest
// is copied as it is (the CPU never moves it). One invocation per vertex and triangle.
@compute @workgroup_size(WG)
fn mesh_place(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (MOVING_MESHES == 0u || failed()) { return; }
    let k = gid.x;
    let nv = O_MESH_TRIS - O_MESH_VERTS;
    if (k < nv) {
        // Its mesh: the first whose vertices end after k (the axis records' w).
        var m = 0u;
        while (m + 1u < N_MESHES && real(k) >= tables[mesh_info(m)].w) { m++; }
        var x = tables[O_MESH_VERTS + k].xyz;
        let o = mesh_pose_at(m);
        if (tables[o + 3u].w != 0.0) { x = mesh_place_point(o, x); }
        set_mesh_placed(O_MESH_VERTS + k, vec4<real>(x, 0.0));
    }
    if (k < N_MESH_TRIS) {
        let base = O_MESH_TRIS + 7u * k;
        let o = mesh_pose_at(mesh_of(k));
        if (tables[o + 3u].w == 0.0) {
            for (var j = 0u; j < 7u; j++) { set_mesh_placed(base + j, tables[base + j]); }
            return;
        }
        var c: array<vec3<real>, 3>;
        for (var j = 0u; j < 3u; j++) {
            c[j] = mesh_place_point(o, tables[base + j].xyz);
            set_mesh_placed(base + j, vec4<real>(c[j], 0.0));
        }
        let n = glam_unit(glam_cross(c[1] - c[0], c[2] - c[0]));
        set_mesh_placed(base + 3u, vec4<real>(n, glam_dot(n, c[0])));
        for (var j = 0u; j < 3u; j++) {
            let p = c[j];
            let q = c[(j + 1u) % 3u];
            // (q − p) × n points out of a right-handed triangle.
            let e = glam_unit(glam_cross(q - p, n));
            set_mesh_placed(base + 4u + j, vec4<real>(e, glam_dot(e, p)));
        }
    }
}

// Writes vec4 k of the mesh data (tables index) placed.
fn set_mesh_placed(k: u32, v: vec4<real>) {
    let o = O_MESH_PLACED + 4u * (k - O_MESH_VERTS);
    vecs[o] = v.x;
    vecs[o + 1u] = v.y;
    vecs[o + 2u] = v.z;
    vecs[o + 3u] = v.w;
}
