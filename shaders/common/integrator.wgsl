// The two halves of the integrators (Baker & Gonzalez maps 23, 25, 27) for one particle,
// as pure functions of its state held in registers: the twins of predict and correct in
// src/integrators/mod.rs. integrate_predict (integrate.wgsl) and particle_forces
// (particles.wgsl) load the state, call them and store the result; the fused
// particle_forces_predict chains the correct half of one step and the predict half of
// the next without a store and reload in between, so all three compute the same bits.

// A compensated sum: the value and its Kahan term.
struct Sum {
    value: vec3<real>,
    kahan: vec3<real>,
}

// Compensated x + d (Kahan): c holds the rounding lost so far, negated; f32 builds
// keep one such term per component of x (body, O_POS_KAHAN), v and Ω (the row buffer
// `kahan`), so per-step rounding does not accumulate in the state, and x − c is the
// position to about u²|x| (separation(), common/layout.wgsl). Plain x + d in f64
// builds, as on the CPU.
fn kahan_add(x: vec3<real>, d: vec3<real>, c: vec3<real>) -> Sum {
    if (!COMPENSATE) { return Sum(x + d, c); }
    let y = d - c;
    let t = x + y;
    // Kahan's c = (t − x) − y is 0 in real arithmetic, and shader compilers that treat
    // float math as inexact (Mesa's NIR) fold it away. Multiplying by a uniform that is
    // 1 at run time keeps the algebra opaque while computing the same IEEE values.
    return Sum(t, (t * params.one - x) - y);
}

// Row k (0: v, 1: Ω) of the Kahan terms of the row chunk's particle li.
fn load_kahan(li: u32, k: u32) -> vec3<real> {
    if (!COMPENSATE) { return vec3<real>(0.0); }
    let o = 6u * li + 3u * k;
    return vec3<real>(kahan[o], kahan[o + 1u], kahan[o + 2u]);
}

fn store_kahan(li: u32, k: u32, c: vec3<real>) {
    if (!COMPENSATE) { return; }
    let o = 6u * li + 3u * k;
    kahan[o] = c.x; kahan[o + 1u] = c.y; kahan[o + 2u] = c.z;
}

// Velocities and angular velocities with their Kahan terms.
struct Velocities {
    v: vec3<real>,
    w: vec3<real>,
    cv: vec3<real>,
    cw: vec3<real>,
}

// The correct half of maps (23) and (25): v += h F/(2m), Ω += h RM/(2J) with the new
// forces (a held particle keeps v = 0, a rotation-locked one Ω = 0). Map (27) has none
// and removed particles do not move: the callers skip it for both.
fn correct_half(flags: u32, m: real, jj: real, s: Velocities, f: vec3<real>, t: vec3<real>) -> Velocities {
    let h = params.dt;
    var out = Velocities(vec3<real>(0.0), vec3<real>(0.0), s.cv, s.cw);
    if ((flags & FLAG_HELD) == 0u) {
        let a = kahan_add(s.v, (0.5 * h / m) * f, s.cv);
        out.v = a.value;
        out.cv = a.kahan;
    }
    if ((flags & FLAG_NO_ROTATION) == 0u) {
        let a = kahan_add(s.w, (0.5 * h / jj) * t, s.cw);
        out.w = a.value;
        out.cw = a.kahan;
    }
    return out;
}

const NO_ERROR: u32 = 0xffffffffu;

// The predict half of a step for one particle, and what went wrong (err, NO_ERROR if
// nothing). On an error the caller stores the Kahan terms of v and Ω (as the step
// before this function's split did) but not the state; x's term goes with x.
struct Predicted {
    x: vec3<real>,
    v: vec3<real>,
    a: vec3<real>,
    w: vec3<real>,
    cx: vec3<real>,
    cv: vec3<real>,
    cw: vec3<real>,
    err: u32,
    removed: bool,
}

// Maps (25)/(23): v_{k+½} = v_k + h F_k/(2m), x_{k+1} = x_k + h v_{k+½}, Ω likewise,
// α_{k+1} = α_k ⊕ Δα (Δα = hΩ, or eq. 23's exact increment); map (27) kicks by the whole
// step. A particle leaving the [domain] is removed (parked where it left with the
// velocity it left with, not spinning, α unchanged) or an error; a non-finite result
// is an error.
fn predict_half(flags: u32, m: real, jj: real, x0: vec3<real>, a0: vec3<real>, s: Velocities, cx0: vec3<real>, f: vec3<real>, t: vec3<real>) -> Predicted {
    let h = params.dt;
    let euler = params.integrator == INTEGRATOR_SYMPLECTIC_EULER;
    var p: Predicted;
    p.x = x0;
    p.v = vec3<real>(0.0);
    p.cx = cx0;
    p.cv = s.cv;
    p.cw = s.cw;
    if ((flags & FLAG_HELD) == 0u) {
        let kv = select(0.5 * h / m, h / m, euler);
        let v = kahan_add(s.v, kv * f, s.cv);
        p.v = v.value;
        p.cv = v.kahan;
        let x = kahan_add(x0, h * p.v, cx0);
        p.x = x.value;
        p.cx = x.kahan;
    }
    p.err = NO_ERROR;
    p.removed = false;
    // A clump's sphere is checked by its body (clump_predict), as on the CPU.
    if ((params.flags & PARAM_DOMAIN) != 0u && (flags & FLAG_MEMBER) == 0u) {
        let lo = vec3<real>(params.domain_min_x, params.domain_min_y, params.domain_min_z);
        let hi = vec3<real>(params.domain_max_x, params.domain_max_y, params.domain_max_z);
        if (!(all(p.x >= lo) && all(p.x <= hi))) {
            // Removed: parked where it left with its exit velocity, out of every
            // contact and diagnostic (CPU: integrate_predict); otherwise an error.
            p.removed = (params.flags & PARAM_DOMAIN_REMOVE) != 0u;
            p.err = select(ERR_LEFT_DOMAIN, NO_ERROR, p.removed);
        }
    }
    // Rotation locked (integrators::predict) or removed: α stays, Ω = 0.
    let turning = (flags & FLAG_NO_ROTATION) == 0u && !p.removed && p.err == NO_ERROR;
    p.a = a0;
    p.w = vec3<real>(0.0);
    if (turning) {
        let kw = select(0.5 * h / jj, h / jj, euler);
        let w = kahan_add(s.w, kw * t, s.cw);
        p.w = w.value;
        p.cw = w.kahan;
        var da = h * p.w;
        if (params.integrator == INTEGRATOR_VARIATIONAL_EXACT) {
            let q = h * h * dot(p.w, p.w);
            if (!(q < 1.0)) { p.err = ERR_ROTATION_DOMAIN; }
            da = (2.0 * h / (1.0 + sqrt(1.0 - q))) * p.w;
        }
        let c = try_compose(a0, da);
        if (p.err == NO_ERROR && !c.ok) { p.err = ERR_HALF_TURN; }
        p.a = c.value;
    }
    if (!p.removed && p.err == NO_ERROR && !(finite3(p.x) && finite3(p.v) && finite3(p.a) && finite3(p.w))) {
        p.err = ERR_NON_FINITE;
    }
    return p;
}

// Stores the Kahan terms of v and Ω after predict_half, error or not (the state itself
// is stored only without an error; x's term with x, by the caller).
fn store_predicted_kahan(li: u32, p: Predicted) {
    store_kahan(li, 0u, p.cv);
    store_kahan(li, 1u, p.cw);
}

// Raises the neighbour-list rebuild when x has moved more than half the skin since the
// last build.
fn check_skin(i: u32, x: vec3<real>) {
    // Relative to one common vector, which keeps the list valid (NeighborList::update).
    let moved = (x - get_ref(i)) - get_skin_shift();
    let half = 0.5 * params.skin;
    if (dot(moved, moved) > half * half) {
        atomicOr(&status[STATUS_REBUILD], 1u);
    }
}
