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
