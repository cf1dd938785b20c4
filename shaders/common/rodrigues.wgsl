// Rescaled Rodrigues rotations: the WGSL twin of src/math/rodrigues.rs.
// R(α₁ ⊕ α₂) = R(α₂) R(α₁) (Baker & Gonzalez eq. 5, NOTES).

const COMPOSE_SINGULAR_TOL = 1e-13;

// R(α) v = v + 4/(4+|α|²) [α×v + ½ α×(α×v)]  (eq. 4).
fn rotate(a: vec3<real>, v: vec3<real>) -> vec3<real> {
    let c = 4.0 / (4.0 + dot(a, a));
    let av = cross(a, v);
    return v + c * (av + 0.5 * cross(a, av));
}

fn rotate_inverse(a: vec3<real>, v: vec3<real>) -> vec3<real> { return rotate(-a, v); }

// α₁ ⊕ α₂ (eq. 5) with the half-turn check of try_compose: `ok` false when
// |4 − α₁·α₂| ≤ tol (4 + |α₁·α₂|).
struct Composed { value: vec3<real>, ok: bool }

fn try_compose(a1: vec3<real>, a2: vec3<real>) -> Composed {
    let d = dot(a1, a2);
    let den = 4.0 - d;
    let ok = abs(den) > real(COMPOSE_SINGULAR_TOL) * (4.0 + abs(d));
    let c = select(real(0.0), 4.0 / den, ok);
    return Composed(c * (a1 + a2 - 0.5 * cross(a1, a2)), ok);
}

// atan(x) from +, −, ×, ÷ and sqrt only: Vulkan's GLSL.std.450 Atan is undefined for
// f64 (NOTES). Reduction atan(x) = π/2 − atan(1/x) for x > 1, then two half-angle steps
// atan(t) = 2 atan(t / (1 + √(1 + t²))) bring |t| ≤ tan(π/16) ≈ 0.199, where the odd
// Taylor series to t²³ is below 1e-17 relative. Accurate to a few ulps in f64.
fn atan_real(x: real) -> real {
    let ax = abs(x);
    let inv = ax > 1.0;
    var t = select(ax, 1.0 / ax, inv);
    t = t / (1.0 + sqrt(1.0 + t * t));
    t = t / (1.0 + sqrt(1.0 + t * t));
    let t2 = t * t;
    var s = real(1.0 / 23.0);
    s = real(1.0 / 21.0) - t2 * s;
    s = real(1.0 / 19.0) - t2 * s;
    s = real(1.0 / 17.0) - t2 * s;
    s = real(1.0 / 15.0) - t2 * s;
    s = real(1.0 / 13.0) - t2 * s;
    s = real(1.0 / 11.0) - t2 * s;
    s = real(1.0 / 9.0) - t2 * s;
    s = real(1.0 / 7.0) - t2 * s;
    s = real(1.0 / 5.0) - t2 * s;
    s = real(1.0 / 3.0) - t2 * s;
    s = 1.0 - t2 * s;
    var r = 4.0 * t * s;
    r = select(r, real(1.5707963267948966) - r, inv);
    return select(r, -r, x < 0.0);
}

// 2 atan(a/2)/a with the series 1 − a²/12 + a⁴/80 below a = 1e-4.
fn theta_over_alpha(a: real) -> real {
    if (a < 1e-4) {
        let a2 = a * a;
        return 1.0 - a2 / 12.0 + a2 * a2 / 80.0;
    }
    return 2.0 * atan_real(0.5 * a) / a;
}

fn to_rotation_vector(a: vec3<real>) -> vec3<real> { return a * theta_over_alpha(length(a)); }

// ln, exp and pow from +, −, ×, ÷ only (NOTES: GLSL.std.450 Log, Exp and Pow are
// undefined for f64 on Vulkan). Used by the near-field force (Campello eq. 17).
// ln2 split as in fdlibm, so that e·ln2 stays exact for |e| < 2^20.
const LN2_HI = 6.93147180369123816490e-01;
const LN2_LO = 1.90821492927058770002e-10;

// ln(x), x > 0: x = m·2^e with m in [√½, √2) by exact scaling with powers of two, then
// ln m = 2 atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.1716, odd series to s^31 (< 1e-17).
fn ln_real(x: real) -> real {
    if (!(x > 0.0) || !(x <= MAX_REAL)) { return x; }
    var m = x;
    var e = real(0.0);
    while (m > 4294967296.0) { m = m * real(2.3283064365386963e-10); e += 32.0; }
    while (m < 2.3283064365386963e-10) { m = m * 4294967296.0; e -= 32.0; }
    while (m > 1.4142135623730951) { m = m * 0.5; e += 1.0; }
    while (m < 0.7071067811865476) { m = m * 2.0; e -= 1.0; }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    var t = real(1.0 / 31.0);
    t = real(1.0 / 29.0) + s2 * t;
    t = real(1.0 / 27.0) + s2 * t;
    t = real(1.0 / 25.0) + s2 * t;
    t = real(1.0 / 23.0) + s2 * t;
    t = real(1.0 / 21.0) + s2 * t;
    t = real(1.0 / 19.0) + s2 * t;
    t = real(1.0 / 17.0) + s2 * t;
    t = real(1.0 / 15.0) + s2 * t;
    t = real(1.0 / 13.0) + s2 * t;
    t = real(1.0 / 11.0) + s2 * t;
    t = real(1.0 / 9.0) + s2 * t;
    t = real(1.0 / 7.0) + s2 * t;
    t = real(1.0 / 5.0) + s2 * t;
    t = real(1.0 / 3.0) + s2 * t;
    t = 1.0 + s2 * t;
    return e * real(LN2_HI) + (e * real(LN2_LO) + 2.0 * s * t);
}

// exp(y): y = k ln2 + r, |r| ≤ ln2/2, Taylor to r^18/18! (< 1e-17), times 2^k by exact
// binary powering.
fn exp_real(y: real) -> real {
    if (y != y) { return y; }
    if (y > 709.0) { return MAX_REAL; }
    if (y < -745.0) { return real(0.0); }
    let k = i32(y * real(1.4426950408889634) + select(real(-0.5), real(0.5), y > 0.0));
    let kr = real(k);
    let r = (y - kr * real(LN2_HI)) - kr * real(LN2_LO);
    var p = real(1.0);
    for (var n = 18; n >= 1; n--) {
        p = 1.0 + r * p / real(n);
    }
    var b = select(real(2.0), real(0.5), k < 0);
    var q = u32(abs(k));
    var scale = real(1.0);
    while (q > 0u) {
        if ((q & 1u) != 0u) { scale = scale * b; }
        b = b * b;
        q = q >> 1u;
    }
    return p * scale;
}

// x^y for x > 0.
fn pow_real(x: real, y: real) -> real { return exp_real(y * ln_real(x)); }
