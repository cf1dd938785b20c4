// Physical laws as pure functions: the WGSL twins of src/physics/{binder,contact,field}.rs.
// Moments are spatial (RM). Equation numbers: Baker & Gonzalez.

fn vlen(v: vec3<real>) -> real { return sqrt(dot(v, v)); }

// Per-bond result: F_i (F_j = −F_i), RM_i, RM_j, U^m, U^a, U^s, and the loads its
// strength is compared with (issue 47; physics::binder::BondLoads): the tension
// K^a ε/L₀, the shear force |F^s|, and the moment K^m θ split about the bond axis ê
// (twist M·ê, bend |M − (M·ê)ê|).
struct BondResult {
    force_i: vec3<real>,
    moment_i: vec3<real>,
    moment_j: vec3<real>,
    e_bend: real,
    e_axial: real,
    e_shear: real,
    tension: real,
    shear: real,
    bend: real,
    twist: real,
    ok: bool,
}

// All binder potentials of one bond (eqs. 44-55; objective shear per NOTES), of the
// separation d = x_j − x_i (formed by the caller with separation(), compensated in f32
// builds) and the rotations: physics::binder::bond_forces(x_i, x_j) with its d.
fn bond_law(b: BondRecord, d: vec3<real>, ai: vec3<real>, aj: vec3<real>, printed: bool) -> BondResult {
    var r: BondResult;
    // Bending/torsion: γ = (−α_i) ⊕ c₀ ⊕ α_j, θ = 2 atan(|γ|/2) γ/|γ|, RM_i = K^m θ.
    let c0 = vec3<real>(b.rest_rotation_x, b.rest_rotation_y, b.rest_rotation_z);
    let g1 = try_compose(-ai, c0);
    let g2 = try_compose(g1.value, aj);
    r.ok = g1.ok && g2.ok;
    let theta = to_rotation_vector(g2.value);
    r.e_bend = 0.5 * b.k_bend * dot(theta, theta);
    let m_bend = b.k_bend * theta;
    // Axial: U^a = ½K^a (|d|/L₀ − 1)², d = x_j − x_i.
    let len = vlen(d);
    let strain = len / b.rest_length - 1.0;
    let f_axial = (b.k_axial * strain / (b.rest_length * len)) * d;
    r.e_axial = 0.5 * b.k_axial * strain * strain;
    let e = d / len;
    let ui = vec3<real>(b.rest_dir_i_x, b.rest_dir_i_y, b.rest_dir_i_z);
    if (printed) {
        // Eq. (53) as printed: c = 1 − (R_i u_i)·(R_j ê).
        let a = rotate(ai, ui);
        let bb = rotate(aj, e);
        let c = 1.0 - dot(a, bb);
        let g = rotate_inverse(aj, a);
        let f_j = (b.k_shear * c / len) * (g - e * dot(g, e));
        let m = (b.k_shear * c) * cross(a, bb);
        r.e_shear = 0.5 * b.k_shear * c * c;
        r.force_i = f_axial - f_j;
        r.moment_i = m_bend + m;
        r.moment_j = -m - m_bend;
        r.shear = vlen(f_j);
    } else {
        // Objective: U^s = ½K^s Σ_k c_k², c_k = 1 − (R_k u_k)·ê.
        let uj = vec3<real>(b.rest_dir_j_x, b.rest_dir_j_y, b.rest_dir_j_z);
        let a_i = rotate(ai, ui);
        let a_j = rotate(aj, uj);
        let c_i = 1.0 - dot(a_i, e);
        let c_j = 1.0 - dot(a_j, e);
        let p_i = a_i - e * dot(a_i, e);
        let p_j = a_j - e * dot(a_j, e);
        let f_j = (b.k_shear / len) * (c_i * p_i + c_j * p_j);
        r.e_shear = 0.5 * b.k_shear * (c_i * c_i + c_j * c_j);
        r.force_i = f_axial - f_j;
        r.moment_i = m_bend + (b.k_shear * c_i) * cross(a_i, e);
        r.moment_j = (b.k_shear * c_j) * cross(a_j, e) - m_bend;
        r.shear = vlen(f_j);
    }
    r.tension = b.k_axial * strain / b.rest_length;
    r.twist = dot(m_bend, e);
    r.bend = vlen(m_bend - r.twist * e);
    return r;
}

// U^pp of eqs. (56)-(57), prefactor 2/5: returns (F_i, U) with U < 0 when not touching.
// Symmetric in i and j but for the sign of d, so the two sides cancel bitwise.
struct PairResult { force: vec3<real>, energy: real, touching: bool }

// Of d = x_i − x_j (separation(), compensated in f32 builds): the twin of
// physics::contact::binder_pair(x_i, x_j) with its d.
fn binder_pair(k: real, d: vec3<real>, ri: real, rj: real) -> PairResult {
    var out: PairResult;
    let dist2 = dot(d, d);
    let reach = ri + rj;
    out.touching = dist2 < reach * reach;
    if (!out.touching) { return out; }
    let dist = sqrt(dist2);
    let s = 1.0 - dist / reach;
    let s32 = s * sqrt(s);
    out.energy = 0.4 * k * s * s32;
    if (dist > 0.0) {
        out.force = (k * s32 / (reach * dist)) * d;
    }
    return out;
}

// The offset x − p of a position x with Kahan term c (zero in f64 builds) from wall w's
// point p, (x − p) − c: for an axis-aligned wall the one component that counts is
// exact near the plane (as in separation()); a tilted wall's distance carries u·|x − p|.
fn wall_offset(w: WallRecord, x: vec3<real>, c: vec3<real>) -> vec3<real> {
    let o = x - vec3<real>(w.point_x, w.point_y, w.point_z);
    if (!COMPENSATE) { return o; }
    return o - c;
}

// A mesh feature at `distance` from the centre, in direction `toward` (unit), as a
// zero-diameter partner: the twin of physics::contact::binder_surface.
fn binder_surface(k: real, distance: real, toward: vec3<real>, r: real) -> PairResult {
    var out: PairResult;
    out.touching = true;
    let s = 1.0 - distance / r;
    let s32 = s * sqrt(s);
    out.energy = 0.4 * k * s * s32;
    out.force = -(k * s32 / r) * toward;
    return out;
}

// The wall as a zero-diameter partner on the plane: R = r, |d| = signed distance h, of
// the offset o = x − p (wall_offset): the twin of physics::contact::binder_wall(x).
fn binder_wall(w: WallRecord, o: vec3<real>, r: real) -> PairResult {
    var out: PairResult;
    let n = vec3<real>(w.normal_x, w.normal_y, w.normal_z);
    let h = dot(o, n);
    out.touching = h < r;
    if (!out.touching) { return out; }
    let s = 1.0 - h / r;
    let s32 = s * sqrt(s);
    out.energy = 0.4 * w.stiffness * s * s32;
    out.force = (w.stiffness * s32 / r) * n;
    return out;
}
