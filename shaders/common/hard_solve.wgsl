// The single-contact problem of hard contacts for a general Delassus block (clumps):
// maximum dissipation (Preclik, Eibl & Rüde §3.2, Fig. 5, Appendix A) and the Coulomb
// (De Saxcé–Feng) variant. The line-by-line twin of src/physics/hard/{prep, poly,
// dissipation, coulomb}.rs: the same branches, loops and operations (+ − × ÷ √ only;
// angles as unit complex numbers), so f64 agrees with the CPU to rounding
// (tests/gpu_hard_solve.rs). Drivers may contract a·b + c into an FMA here (no `one`
// wrappers as in hard.wgsl): the iterations converge to the same points, so the
// results differ by rounding, not by branch.
//
// Conventions as on the CPU: A the 3×3 block in the contact frame (n, t, o), b the
// negated free relative velocity (b_n > 0 approaching); returns the impulse x, the
// post-impulse velocity being A x − b. Invalid input (non-finite, μ < 0, A not positive
// definite) gives 0. Needs `real`, MAX_REAL, TINY_REAL and COMPENSATE from the header.

// Tolerances of f64 (the CPU's) and their f32 counterparts.
fn hs_tol_aberth() -> real { return select(real(1e-15), real(1e-6), COMPENSATE); }
fn hs_tol_angle() -> real { return select(real(1e-16), real(1e-7), COMPENSATE); }
fn hs_tol_degree() -> real { return select(real(1e-14), real(1e-6), COMPENSATE); }
fn hs_tol_root() -> real { return select(real(1e-12), real(1e-5), COMPENSATE); }
fn hs_tol_cone() -> real { return select(real(1e-9), real(1e-5), COMPENSATE); }
fn hs_tol_across() -> real { return select(real(1e-8), real(1e-4), COMPENSATE); }
fn hs_tol_same() -> real { return select(real(1e-9), real(1e-4), COMPENSATE); }

fn hs_finite(x: real) -> bool { return abs(x) <= MAX_REAL; }

// ---- complex numbers (poly.rs)
fn cx_mul(a: vec2<real>, b: vec2<real>) -> vec2<real> {
    return vec2<real>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
fn cx_conj(a: vec2<real>) -> vec2<real> { return vec2<real>(a.x, -a.y); }
fn cx_abs(a: vec2<real>) -> real { return sqrt(a.x * a.x + a.y * a.y); }
fn cx_finite(a: vec2<real>) -> bool { return hs_finite(a.x) && hs_finite(a.y); }
// Smith's algorithm.
fn cx_div(a: vec2<real>, o: vec2<real>) -> vec2<real> {
    if (abs(o.x) >= abs(o.y)) {
        let r = o.y / o.x;
        let d = o.x + o.y * r;
        return vec2<real>((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    let r = o.x / o.y;
    let d = o.x * r + o.y;
    return vec2<real>((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
fn cx_sqrt(a: vec2<real>) -> vec2<real> {
    let r = cx_abs(a);
    if (r == 0.0) { return vec2<real>(0.0, 0.0); }
    let re = sqrt((r + abs(a.x)) * 0.5);
    if (a.x >= 0.0) { return vec2<real>(re, a.y / (2.0 * re)); }
    // copysign(re, im): −0 counts as negative.
    let negative = a.y < 0.0 || (a.y == 0.0 && real(1.0) / a.y < 0.0);
    return vec2<real>(abs(a.y) / (2.0 * re), select(re, -re, negative));
}
// u e^{−iδ} by the Cayley transform (poly.rs `turn`).
fn cx_turn(u: vec2<real>, delta: real) -> vec2<real> {
    let q = 0.25 * delta * delta;
    let w = vec2<real>((1.0 - q) / (1.0 + q), -delta / (1.0 + q));
    return cx_mul(u, w);
}

struct Horner { v: vec2<real>, d: vec2<real> }
fn hs_horner(p: array<vec2<real>, 5>, z: vec2<real>) -> Horner {
    var v = vec2<real>(0.0, 0.0);
    var d = vec2<real>(0.0, 0.0);
    for (var k = 0u; k < 5u; k++) {
        d = cx_mul(d, z) + v;
        v = cx_mul(v, z) + p[k];
    }
    return Horner(v, d);
}

fn hs_quadratic_roots(a: vec2<real>, b: vec2<real>, c: vec2<real>) -> array<vec2<real>, 2> {
    let disc = cx_sqrt(cx_mul(b, b) - cx_mul(a, c) * 4.0);
    var s = b - disc;
    if (b.x * disc.x + b.y * disc.y >= 0.0) { s = b + disc; }
    let q = s * -0.5;
    if (cx_abs(q) == 0.0) { return array<vec2<real>, 2>(vec2<real>(0.0, 0.0), vec2<real>(0.0, 0.0)); }
    return array<vec2<real>, 2>(cx_div(q, a), cx_div(c, q));
}

// Aberth–Ehrlich, then three Newton polishes per root (poly.rs quartic_roots).
fn hs_quartic_roots(p: array<vec2<real>, 5>) -> array<vec2<real>, 4> {
    let lead = p[0];
    var monic: array<vec2<real>, 5>;
    for (var k = 0u; k < 5u; k++) { monic[k] = cx_div(p[k], lead); }
    var r0 = sqrt(sqrt(cx_abs(monic[4])));
    if (!(hs_finite(r0) && r0 > TINY_REAL)) { r0 = 1.0; }
    // cos 0.4, sin 0.4 (poly.rs START).
    let c = real(0.9210609940028851);
    let s = real(0.3894183423086505);
    let dirs = array<vec2<real>, 4>(vec2<real>(c, s), vec2<real>(-s, c), vec2<real>(-c, -s), vec2<real>(s, -c));
    var z: array<vec2<real>, 4>;
    for (var k = 0u; k < 4u; k++) { z[k] = dirs[k] * (r0 * (1.0 + 0.01 * real(k))); }
    for (var it = 0u; it < 200u; it++) {
        var worst = real(0.0);
        for (var k = 0u; k < 4u; k++) {
            let hv = hs_horner(monic, z[k]);
            if (cx_abs(hv.v) == 0.0) { continue; }
            let w = cx_div(hv.v, hv.d);
            var sum = vec2<real>(0.0, 0.0);
            for (var j = 0u; j < 4u; j++) {
                if (j != k) {
                    let diff = z[k] - z[j];
                    if (cx_abs(diff) > 0.0) { sum = sum + cx_div(vec2<real>(1.0, 0.0), diff); }
                }
            }
            let den = vec2<real>(1.0, 0.0) - cx_mul(w, sum);
            var step = w;
            if (cx_abs(den) > 0.0) { step = cx_div(w, den); }
            if (cx_finite(step)) {
                z[k] = z[k] - step;
                worst = max(worst, cx_abs(step) / max(cx_abs(z[k]), TINY_REAL));
            }
        }
        if (worst <= hs_tol_aberth()) { break; }
    }
    for (var k = 0u; k < 4u; k++) {
        for (var it = 0u; it < 3u; it++) {
            let hv = hs_horner(monic, z[k]);
            if (cx_abs(hv.d) == 0.0) { break; }
            let step = cx_div(hv.v, hv.d);
            if (!cx_finite(step) || cx_abs(step) > 1e-3 * max(cx_abs(z[k]), TINY_REAL)) { break; }
            z[k] = z[k] - step;
        }
    }
    return z;
}

// g(α) = c₀ + Re(C₁e^{iα}) + Re(C₂e^{2iα}) (poly.rs Trig2).
struct Trig2 { c0: real, c1: vec2<real>, c2: vec2<real> }
fn trig2_eval(t: Trig2, u: vec2<real>) -> vec2<real> {
    let p1 = cx_mul(t.c1, u);
    let p2 = cx_mul(t.c2, cx_mul(u, u));
    return vec2<real>(t.c0 + p1.x + p2.x, -p1.y - 2.0 * p2.y);
}

struct Dirs { dir: array<vec2<real>, 8>, count: u32 }
fn trig2_root_dirs(t: Trig2) -> Dirs {
    var out: Dirs;
    out.count = 0u;
    let scale = max(max(abs(t.c0), cx_abs(t.c1)), cx_abs(t.c2));
    if (scale == 0.0 || !hs_finite(scale)) { return out; }
    let tiny = hs_tol_degree() * scale;
    let c0 = vec2<real>(2.0 * t.c0, 0.0);
    var roots: array<vec2<real>, 4>;
    var count = 0u;
    if (cx_abs(t.c2) > tiny) {
        roots = hs_quartic_roots(array<vec2<real>, 5>(t.c2, t.c1, c0, cx_conj(t.c1), cx_conj(t.c2)));
        count = 4u;
    } else if (cx_abs(t.c1) > tiny) {
        let q = hs_quadratic_roots(t.c1, c0, cx_conj(t.c1));
        roots[0] = q[0];
        roots[1] = q[1];
        count = 2u;
    }
    for (var k = 0u; k < count; k++) {
        let r = roots[k];
        let m = cx_abs(r);
        if (!cx_finite(r) || m == 0.0) { continue; }
        let u0 = vec2<real>(r.x / m, r.y / m);
        out.dir[out.count] = u0;
        out.count += 1u;
        var u = u0;
        var gv = trig2_eval(t, u).x;
        for (var it = 0u; it < 30u; it++) {
            let e = trig2_eval(t, u);
            if (e.y == 0.0 || !hs_finite(e.y)) { break; }
            let step = e.x / e.y;
            if (!hs_finite(step) || abs(step) > 0.5) { break; }
            u = cx_turn(u, step);
            gv = e.x;
            if (abs(step) <= hs_tol_angle()) { break; }
        }
        let gp = trig2_eval(t, u).x;
        if (abs(gp) <= abs(gv) || abs(gp) < hs_tol_root() * scale) {
            out.dir[out.count] = u;
            out.count += 1u;
        }
    }
    return out;
}

// The k-th of 256 directions on a square's perimeter, normalised (poly.rs scan_dir).
fn hs_scan_dir(k: u32) -> vec2<real> {
    let t = real(k % 64u) / 32.0 - 1.0;
    var p = vec2<real>(t, -1.0);
    switch (k / 64u) {
        case 0u: { p = vec2<real>(1.0, t); }
        case 1u: { p = vec2<real>(-t, 1.0); }
        case 2u: { p = vec2<real>(-1.0, -t); }
        default: {}
    }
    let m = cx_abs(p);
    return vec2<real>(p.x / m, p.y / m);
}

// ---- the prepared problem (prep.rs)
struct HsPrep {
    a: array<vec3<real>, 3>,
    b: vec3<real>,
    mu: real,
    x_scale: real,
    // Schur complement Â = [[x, y], [y, z]] and b̂.
    ah: vec3<real>,
    bh: vec2<real>,
    ok: bool,
}

fn hs_prep(a: array<vec3<real>, 3>, b_in: vec3<real>, mu: real) -> HsPrep {
    var p: HsPrep;
    p.ok = false;
    if (!hs_finite(mu) || mu < 0.0) { return p; }
    var s: array<vec3<real>, 3>;
    var sa = real(0.0);
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            s[i][j] = 0.5 * a[i][j] + 0.5 * a[j][i];
            if (!hs_finite(s[i][j])) { return p; }
            sa = max(sa, abs(s[i][j]));
        }
    }
    var sb = real(0.0);
    for (var i = 0u; i < 3u; i++) {
        if (!hs_finite(b_in[i])) { return p; }
        sb = max(sb, abs(b_in[i]));
    }
    if (sa == 0.0) { return p; }
    if (sb == 0.0) { sb = 1.0; }
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) { s[i][j] = s[i][j] / sa; }
    }
    let b = vec3<real>(b_in.x / sb, b_in.y / sb, b_in.z / sb);
    let ann = s[0][0];
    if (ann <= 0.0) { return p; }
    let ant = s[0][1];
    let ano = s[0][2];
    let ah = vec3<real>(s[1][1] - ant * ant / ann, s[1][2] - ant * ano / ann, s[2][2] - ano * ano / ann);
    let det = ah.x * ah.z - ah.y * ah.y;
    if (ah.x <= 0.0 || ah.z <= 0.0 || det <= 0.0 || !hs_finite(det)) { return p; }
    p.a = s;
    p.b = b;
    p.mu = mu;
    p.x_scale = sb / sa;
    p.ah = ah;
    p.bh = vec2<real>(b.y - ant * b.x / ann, b.z - ano * b.x / ann);
    p.ok = true;
    return p;
}

fn hs_ann(p: HsPrep) -> real { return p.a[0][0]; }
fn hs_c(p: HsPrep) -> vec2<real> { return vec2<real>(p.a[0][1], p.a[0][2]); }

fn hs_reduced_obj(p: HsPrep, y: vec2<real>) -> real {
    let ay = vec2<real>(p.ah.x * y.x + p.ah.y * y.y, p.ah.y * y.x + p.ah.z * y.y);
    return 0.5 * (y.x * ay.x + y.y * ay.y) - (y.x * p.bh.x + y.y * p.bh.y);
}

fn hs_lift(p: HsPrep, y: vec2<real>) -> vec3<real> {
    let c = hs_c(p);
    return vec3<real>((p.b.x - c.x * y.x - c.y * y.y) / hs_ann(p), y.x, y.y);
}

fn hs_x0(p: HsPrep) -> vec3<real> {
    let det = p.ah.x * p.ah.z - p.ah.y * p.ah.y;
    let y = vec2<real>((p.ah.z * p.bh.x - p.ah.y * p.bh.y) / det, (p.ah.x * p.bh.y - p.ah.y * p.bh.x) / det);
    return hs_lift(p, y);
}

fn hs_in_cone(p: HsPrep, x: vec3<real>) -> bool {
    return x.x >= 0.0 && sqrt(x.y * x.y + x.z * x.z) <= p.mu * x.x;
}

fn hs_appendix_a(p: HsPrep) -> Trig2 {
    let ann = p.a[0][0];
    let ant = p.a[0][1];
    let ano = p.a[0][2];
    let att = p.a[1][1];
    let ato = p.a[1][2];
    let aoo = p.a[2][2];
    let bn = p.b.x;
    let bt = p.b.y;
    let bo = p.b.z;
    let mu = p.mu;
    let mu2 = mu * mu;
    let c0 = 1.5 * mu * ann * (ano * bt - ant * bo);
    let y1 = mu2 * ((ano * ato - ant * aoo) * bn - ano * ano * bt + ant * ano * bo) - ann * ann * bt + ann * ant * bn;
    let x1 = mu2 * ((ant * ato - ano * att) * bn + ant * ano * bt - ant * ant * bo) - ann * ann * bo + ann * ano * bn;
    let y2 = (att - aoo) * bn - ant * bt + ano * bo;
    let x2 = 2.0 * ato * bn - ano * bt - ant * bo;
    return Trig2(c0, vec2<real>(x1, y1), vec2<real>(x2, y2) * (0.5 * mu * ann));
}

// Gaussian elimination with partial pivoting (the last of equal pivots, as max_by).
struct Solve3 { z: vec3<real>, ok: bool }
fn hs_solve3(m: array<vec3<real>, 3>, r: vec3<real>) -> Solve3 {
    var a: array<vec4<real>, 3>;
    for (var i = 0u; i < 3u; i++) { a[i] = vec4<real>(m[i], r[i]); }
    for (var col = 0u; col < 3u; col++) {
        var piv = col;
        for (var i = col + 1u; i < 3u; i++) {
            if (abs(a[i][col]) >= abs(a[piv][col])) { piv = i; }
        }
        let tmp = a[col];
        a[col] = a[piv];
        a[piv] = tmp;
        if (a[col][col] == 0.0 || !hs_finite(a[col][col])) { return Solve3(vec3<real>(0.0), false); }
        let pivot = a[col];
        for (var row = col + 1u; row < 3u; row++) {
            let f = a[row][col] / pivot[col];
            for (var k = col; k < 4u; k++) { a[row][k] = a[row][k] - f * pivot[k]; }
        }
    }
    var z = vec3<real>(0.0);
    for (var ii = 0u; ii < 3u; ii++) {
        let i = 2u - ii;
        var acc = a[i][3];
        for (var k = i + 1u; k < 3u; k++) { acc = acc - a[i][k] * z[k]; }
        z[i] = acc / a[i][i];
    }
    return Solve3(z, hs_finite(z.x) && hs_finite(z.y) && hs_finite(z.z));
}

fn hs_residual_velocity(p: HsPrep, x: vec3<real>) -> vec3<real> {
    var u = vec3<real>(0.0);
    for (var i = 0u; i < 3u; i++) { u[i] = p.a[i][0] * x.x + p.a[i][1] * x.y + p.a[i][2] * x.z - p.b[i]; }
    return u;
}

fn hs_objective(p: HsPrep, x: vec3<real>) -> real {
    var f = real(0.0);
    for (var i = 0u; i < 3u; i++) {
        let ax = p.a[i][0] * x.x + p.a[i][1] * x.y + p.a[i][2] * x.z;
        f = f + x[i] * (0.5 * ax - p.b[i]);
    }
    return f;
}

fn hs_max_abs_a(p: HsPrep) -> real {
    var an = real(0.0);
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) { an = max(an, abs(p.a[i][j])); }
    }
    return an;
}

// The systems Newton polishes (dissipation.rs kkt_polish's, coulomb.rs coulomb_polish's):
// residual, Jacobian and scaled norm at z, or ok = false.
const HS_KKT: u32 = 0u;
const HS_COULOMB: u32 = 1u;
struct HsSys { r: vec3<real>, j: array<vec3<real>, 3>, norm: real, ok: bool }

// kk = (k_t, k_o, m, ‖Â‖₁) of the KKT system.
fn hs_kkt_sys(p: HsPrep, kk: vec4<real>, z: vec3<real>) -> HsSys {
    var out: HsSys;
    out.ok = false;
    let y = z.xy;
    let lam = z.z;
    let r = sqrt(y.x * y.x + y.y * y.y);
    if (r == 0.0 || !hs_finite(r) || lam != lam || lam < 0.0) { return out; }
    let ah = p.ah;
    let bh = p.bh;
    let e = vec2<real>(y.x / r, y.y / r);
    let nc = vec2<real>(e.x + kk.x, e.y + kk.y);
    let g = vec2<real>(ah.x * y.x + ah.y * y.y - bh.x, ah.y * y.x + ah.z * y.y - bh.y);
    out.r = vec3<real>(g.x + lam * nc.x, g.y + lam * nc.y, r + kk.x * y.x + kk.y * y.y - kk.z);
    let s = lam / r;
    out.j[0] = vec3<real>(ah.x + s * (1.0 - e.x * e.x), ah.y - s * e.x * e.y, nc.x);
    out.j[1] = vec3<real>(ah.y - s * e.x * e.y, ah.z + s * (1.0 - e.y * e.y), nc.y);
    out.j[2] = vec3<real>(nc.x, nc.y, 0.0);
    let s1 = kk.w * r + abs(bh.x) + abs(bh.y) + lam * (abs(nc.x) + abs(nc.y));
    let s2 = r + abs(kk.x * y.x) + abs(kk.y * y.y) + kk.z;
    out.norm = (abs(out.r.x) + abs(out.r.y)) / s1 + abs(out.r.z) / s2;
    out.ok = hs_finite(out.norm);
    return out;
}

fn hs_coulomb_sys(p: HsPrep, x: vec3<real>) -> HsSys {
    var out: HsSys;
    out.ok = false;
    let u = hs_residual_velocity(p, x);
    let w = sqrt(u.y * u.y + u.z * u.z);
    if (w == 0.0 || !hs_finite(w) || x.x != x.x || x.x <= 0.0) { return out; }
    let uh = vec2<real>(u.y / w, u.z / w);
    let mu = p.mu;
    out.r = vec3<real>(u.x, w * x.y + mu * x.x * u.y, w * x.z + mu * x.x * u.z);
    out.j[0] = p.a[0];
    for (var i = 0u; i < 2u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let dw = uh.x * p.a[1][j] + uh.y * p.a[2][j];
            var v = x[1u + i] * dw + mu * x.x * p.a[1u + i][j];
            if (j == 1u + i) { v = v + w; }
            if (j == 0u) { v = v + mu * u[1u + i]; }
            out.j[1u + i][j] = v;
        }
    }
    let nx = abs(x.x) + abs(x.y) + abs(x.z);
    let an = hs_max_abs_a(p);
    let nb = abs(p.b.x) + abs(p.b.y) + abs(p.b.z);
    out.norm = (abs(out.r.x) + (abs(out.r.y) + abs(out.r.z)) / (nx * (1.0 + mu))) / (an * nx + nb);
    out.ok = hs_finite(out.norm);
    return out;
}

fn hs_sys(p: HsPrep, mode: u32, kk: vec4<real>, z: vec3<real>) -> HsSys {
    if (mode == HS_KKT) { return hs_kkt_sys(p, kk, z); }
    return hs_coulomb_sys(p, z);
}

// prep.rs newton_polish: a step is kept only if it at least halves the scaled norm.
fn hs_newton_polish(p: HsPrep, mode: u32, kk: vec4<real>, z0: vec3<real>) -> vec3<real> {
    var z = z0;
    var s = hs_sys(p, mode, kk, z);
    if (!s.ok) { return z; }
    for (var it = 0u; it < 12u; it++) {
        if (s.norm == 0.0) { break; }
        let d = hs_solve3(s.j, -s.r);
        if (!d.ok) { break; }
        let zn = z + d.z;
        let sn = hs_sys(p, mode, kk, zn);
        if (!(sn.ok && sn.norm < 0.5 * s.norm)) { break; }
        z = zn;
        s = sn;
    }
    return z;
}

// ---- maximum dissipation (dissipation.rs)
fn hs_wedge_edge(p: HsPrep, side: real) -> vec2<real> {
    let c = hs_c(p);
    let nc = sqrt(c.x * c.x + c.y * c.y);
    let u = vec2<real>(-c.x / nc, -c.y / nc);
    let ju = vec2<real>(-u.y, u.x);
    let cb = min(hs_ann(p) / (p.mu * nc), 1.0);
    let sb = sqrt(max(1.0 - cb * cb, 0.0));
    return vec2<real>(cb * u.x + side * sb * ju.x, cb * u.y + side * sb * ju.y);
}

struct HsPoint { y: vec2<real>, f: real }
fn hs_ray_min(p: HsPrep, e: vec2<real>) -> HsPoint {
    let ae = vec2<real>(p.ah.x * e.x + p.ah.y * e.y, p.ah.y * e.x + p.ah.z * e.y);
    let q = e.x * ae.x + e.y * ae.y;
    let r = max((e.x * p.bh.x + e.y * p.bh.y) / q, 0.0);
    let y = vec2<real>(r * e.x, r * e.y);
    return HsPoint(y, hs_reduced_obj(p, y));
}

fn hs_grazing(p: HsPrep) -> vec3<real> {
    let c = hs_c(p);
    let nc = sqrt(c.x * c.x + c.y * c.y);
    if (hs_ann(p) > p.mu * nc) { return vec3<real>(0.0); }
    let p1 = hs_ray_min(p, hs_wedge_edge(p, -1.0));
    let p2 = hs_ray_min(p, hs_wedge_edge(p, 1.0));
    if (p2.f < p1.f) { return hs_lift(p, p2.y); }
    return hs_lift(p, p1.y);
}

fn hs_kkt_polish(p: HsPrep, y: vec2<real>) -> vec2<real> {
    let c = hs_c(p);
    let ann = hs_ann(p);
    let k = vec2<real>(p.mu * c.x / ann, p.mu * c.y / ann);
    let m = p.mu * p.b.x / ann;
    let ah = p.ah;
    let bh = p.bh;
    let r0 = sqrt(y.x * y.x + y.y * y.y);
    if (r0 == 0.0) { return y; }
    let nc0 = vec2<real>(y.x / r0 + k.x, y.y / r0 + k.y);
    let g0 = vec2<real>(ah.x * y.x + ah.y * y.y - bh.x, ah.y * y.x + ah.z * y.y - bh.y);
    let lam0 = -(g0.x * nc0.x + g0.y * nc0.y) / (nc0.x * nc0.x + nc0.y * nc0.y);
    let anorm = abs(ah.x) + abs(ah.y) + abs(ah.z);
    if (lam0 != lam0 || lam0 < 0.0) { return y; }
    let z = hs_newton_polish(p, HS_KKT, vec4<real>(k, m, anorm), vec3<real>(y, lam0));
    return z.xy;
}

// The boundary point in the direction u, f = MAX_REAL for α outside 𝓘.
fn hs_boundary_point(p: HsPrep, u: vec2<real>) -> HsPoint {
    let c = hs_c(p);
    let fr = hs_ann(p) + p.mu * (c.x * u.x + c.y * u.y);
    if (fr <= 0.0) { return HsPoint(vec2<real>(0.0), MAX_REAL); }
    let r = p.mu * p.b.x / fr;
    let y = vec2<real>(r * u.x, r * u.y);
    let f = hs_reduced_obj(p, y);
    if (!hs_finite(f)) { return HsPoint(vec2<real>(0.0), MAX_REAL); }
    return HsPoint(y, f);
}

fn hs_sliding(p: HsPrep) -> vec3<real> {
    let dirs = trig2_root_dirs(hs_appendix_a(p));
    var found = false;
    var best = HsPoint(vec2<real>(0.0), MAX_REAL);
    for (var k = 0u; k < dirs.count; k++) {
        let q = hs_boundary_point(p, dirs.dir[k]);
        if (q.f < MAX_REAL && (!found || q.f < best.f)) { best = q; found = true; }
    }
    if (!found) {
        for (var k = 0u; k < 256u; k++) {
            let q = hs_boundary_point(p, hs_scan_dir(k));
            if (q.f < MAX_REAL && (!found || q.f < best.f)) { best = q; found = true; }
        }
    }
    if (!found) { return vec3<real>(0.0); }
    return hs_lift(p, hs_kkt_polish(p, best.y));
}

// physics::hard::solve_contact: the maximum-dissipation impulse.
fn solve_contact_md(a: array<vec3<real>, 3>, b: vec3<real>, mu: real) -> vec3<real> {
    let p = hs_prep(a, b, mu);
    if (!p.ok) { return vec3<real>(0.0); }
    let bn = p.b.x;
    if (bn < 0.0) { return vec3<real>(0.0); }
    if (p.mu == 0.0) { return vec3<real>(bn / hs_ann(p), 0.0, 0.0) * p.x_scale; }
    // P1 before the b_n = 0 branch.
    let x0 = hs_x0(p);
    if (hs_in_cone(p, x0)) { return x0 * p.x_scale; }
    if (bn == 0.0) { return hs_grazing(p) * p.x_scale; }
    return hs_sliding(p) * p.x_scale;
}

// ---- Coulomb (coulomb.rs)
fn hs_coulomb_valid(p: HsPrep, an: real, nb: real, x: vec3<real>) -> bool {
    let u = hs_residual_velocity(p, x);
    let r = sqrt(x.y * x.y + x.z * x.z);
    let scale = an * (abs(x.x) + r) + nb;
    let along = -(u.y * x.y + u.z * x.z) / r;
    let across = (u.y * x.z - u.z * x.y) / r;
    return x.x > 0.0 && abs(r - p.mu * x.x) <= hs_tol_cone() * r && along > 0.0 && abs(across) <= hs_tol_across() * scale;
}

struct Slides { x: array<vec3<real>, 8>, count: u32 }
fn hs_coulomb_sliding(p: HsPrep) -> Slides {
    var out: Slides;
    out.count = 0u;
    let ann = p.a[0][0];
    let ant = p.a[0][1];
    let ano = p.a[0][2];
    let att = p.a[1][1];
    let ato = p.a[1][2];
    let aoo = p.a[2][2];
    let bn = p.b.x;
    let bt = p.b.y;
    let bo = p.b.z;
    let mu = p.mu;
    if (mu == 0.0 || bn == 0.0) { return out; }
    let k0 = 0.5 * mu * (ant * bo - ano * bt);
    let k1c = bn * ano - ann * bo;
    let k1s = -bn * ant + ann * bt;
    let k2c = -mu * bn * ato + 0.5 * mu * (ant * bo + ano * bt);
    let k2s = -0.5 * mu * bn * (aoo - att) + 0.5 * mu * (ano * bo - ant * bt);
    let dirs = trig2_root_dirs(Trig2(k0, vec2<real>(k1c, -k1s), vec2<real>(k2c, -k2s)));
    let an = hs_max_abs_a(p);
    let nb = max(max(abs(bn), abs(bt)), abs(bo));
    for (var k = 0u; k < dirs.count; k++) {
        let e = dirs.dir[k];
        let d = ann - mu * (ant * e.x + ano * e.y);
        let xn = bn / d;
        if (!(xn > 0.0 && hs_finite(xn))) { continue; }
        let raw = vec3<real>(xn, -mu * xn * e.x, -mu * xn * e.y);
        let polished = hs_newton_polish(p, HS_COULOMB, vec4<real>(0.0), raw);
        var x = raw;
        if (hs_coulomb_valid(p, an, nb, polished)) {
            x = polished;
        } else if (!hs_coulomb_valid(p, an, nb, raw)) {
            continue;
        }
        let nx = abs(x.x) + abs(x.y) + abs(x.z);
        var fresh = true;
        for (var s = 0u; s < out.count; s++) {
            let y = out.x[s];
            if (abs(x.x - y.x) + abs(x.y - y.y) + abs(x.z - y.z) <= hs_tol_same() * nx) { fresh = false; }
        }
        if (fresh) {
            out.x[out.count] = x;
            out.count += 1u;
        }
    }
    return out;
}

// physics::hard::solve_contact_coulomb: the Coulomb impulse (the sliding solution of
// lowest objective; the maximum-dissipation one if none is found).
fn solve_contact_coulomb(a: array<vec3<real>, 3>, b: vec3<real>, mu: real) -> vec3<real> {
    let p = hs_prep(a, b, mu);
    if (!p.ok) { return vec3<real>(0.0); }
    let bn = p.b.x;
    if (bn < 0.0) { return vec3<real>(0.0); }
    if (p.mu == 0.0) { return vec3<real>(bn / hs_ann(p), 0.0, 0.0) * p.x_scale; }
    let x0 = hs_x0(p);
    if (hs_in_cone(p, x0)) { return x0 * p.x_scale; }
    if (bn == 0.0) { return vec3<real>(0.0); }
    let sl = hs_coulomb_sliding(p);
    var found = false;
    var best = vec3<real>(0.0);
    var fb = real(0.0);
    for (var k = 0u; k < sl.count; k++) {
        let f = hs_objective(p, sl.x[k]);
        if (!found || f < fb) { best = sl.x[k]; fb = f; found = true; }
    }
    if (!found) { best = hs_sliding(p); }
    return best * p.x_scale;
}
