// Clumps' data, shared by clumps.wgsl and hard.wgsl: a body's record (CLUMP_RECORD vec4
// at O_CLUMP, slots CLUMP_*), its first sphere, sphere count and type (O_CLUMP_INFO), a
// type's mass properties (O_CLUMP_TYPES), each sphere's body-frame offset
// (O_MEMBER_OFFSET) and body (O_MEMBER_BODY); see clumps.wgsl for the layout.

struct ClumpType {
    mass: real,
    // j when J = j I (the sphere path), 0 otherwise.
    scalar: real,
    j_diag: vec3<real>,
    // xy, xz, yz.
    j_off: vec3<real>,
    inv_diag: vec3<real>,
    inv_off: vec3<real>,
}

fn clump_type(t: u32) -> ClumpType {
    let o = O_CLUMP_TYPES + 4u * t;
    let a = tables[o];
    let b = tables[o + 1u];
    let c = tables[o + 2u];
    let d = tables[o + 3u];
    return ClumpType(a.x, a.y, b.xyz, vec3<real>(b.w, c.x, c.y), vec3<real>(c.z, c.w, d.x), d.yzw);
}

// First sphere, sphere count and type of body b.
fn clump_info(b: u32) -> vec3<u32> {
    let o = O_CLUMP_INFO + 3u * b;
    return vec3<u32>(particle_flags[o], particle_flags[o + 1u], particle_flags[o + 2u]);
}
// Whether body b is dormant: reserved by an inserter, not inserted yet (its spheres
// are flagged FLAG_DORMANT by the host, which alone wakes them). A dormant body stands
// still with no load (Bodies::dormant).
fn clump_dormant(b: u32) -> bool {
    return (particle_flags[clump_info(b).x] & FLAG_DORMANT) != 0u;
}

fn clump_get(b: u32, slot: u32) -> vec3<real> { return body[O_CLUMP + CLUMP_RECORD * b + slot].xyz; }
fn clump_set(b: u32, slot: u32, v: vec3<real>) { body[O_CLUMP + CLUMP_RECORD * b + slot] = vec4<real>(v, 0.0); }

fn member_offset(k: u32) -> vec3<real> { return tables[O_MEMBER_OFFSET + k].xyz; }

// S v for the symmetric S with diagonal d and off-diagonal o = (xy, xz, yz).
fn sym_mul(d: vec3<real>, o: vec3<real>, v: vec3<real>) -> vec3<real> {
    return vec3<real>(d.x * v.x + o.x * v.y + o.y * v.z,
                      o.x * v.x + d.y * v.y + o.z * v.z,
                      o.y * v.x + o.z * v.y + d.z * v.z);
}

// R(α) S R(α)ᵀ v: a body-frame tensor applied in space (Inertia::spatial).
fn spatial_mul(a: vec3<real>, d: vec3<real>, o: vec3<real>, v: vec3<real>) -> vec3<real> {
    return rotate(a, sym_mul(d, o, rotate_inverse(a, v)));
}

// Ω from the spin variable (integrators::rigid::angular_velocity).
fn clump_omega(t: ClumpType, a: vec3<real>, spin: vec3<real>) -> vec3<real> {
    if (t.scalar != 0.0) { return spin; }
    return spatial_mul(a, t.inv_diag, t.inv_off, spin);
}

// The solver body of particle i under hard contacts: itself when free, N_FREE + its
// clump's index for a clump's sphere (cpu::hard's `owner`).
fn solver_body(i: u32) -> u32 {
    if (i < N_FREE) { return i; }
    return N_FREE + particle_flags[O_MEMBER_BODY + i - N_FREE];
}
