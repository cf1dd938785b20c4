//! The WGSL Rodrigues helpers (`shaders/common/rodrigues.wgsl`) against their CPU twins
//! in `src/math/rodrigues.rs`, on random inputs, through a small test kernel.
//!
//! In f64, `atan_real` (argument reduction + odd polynomial, NOTES: Vulkan's atan is
//! undefined for f64) must match libm's `atan` to 1e-15 relative; composition and
//! rotation use only +, −, ×, ÷ in the CPU's order and must match to 1e-15 (they
//! measure equal).

mod gpu_common;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use varidem::gpu::shaders::{header, COMMON};
use varidem::gpu::Precision;
use varidem::math::rodrigues;

const KERNEL: &str = r#"
@group(0) @binding(0) var<storage, read> xs: array<f64>;
@group(0) @binding(1) var<storage, read_write> ys: array<f64>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&xs) / 7u) { return; }
    let s = xs[7u * i];
    let a = vec3<f64>(xs[7u * i + 1u], xs[7u * i + 2u], xs[7u * i + 3u]);
    let b = vec3<f64>(xs[7u * i + 4u], xs[7u * i + 5u], xs[7u * i + 6u]);
    let c = try_compose(a, b);
    let r = rotate(a, b);
    let t = to_rotation_vector(a);
    let o = 11u * i;
    ys[o] = atan_real(s);
    ys[o + 1u] = c.value.x; ys[o + 2u] = c.value.y; ys[o + 3u] = c.value.z;
    ys[o + 4u] = r.x; ys[o + 5u] = r.y; ys[o + 6u] = r.z;
    ys[o + 7u] = t.x; ys[o + 8u] = t.y; ys[o + 9u] = t.z;
    ys[o + 10u] = select(f64(0.0), f64(1.0), c.ok);
}
"#;

fn run_kernel(ctx: &varidem::gpu::context::GpuContext, input: &[f64], outputs: usize) -> Vec<f64> {
    run_kernel_src(ctx, KERNEL, input, outputs)
}

fn run_kernel_src(
    ctx: &varidem::gpu::context::GpuContext,
    kernel: &str,
    input: &[f64],
    outputs: usize,
) -> Vec<f64> {
    let src = format!("{}{}{}", header(Precision::F64), COMMON[1].1, kernel);
    let groups = (input.len() / 7).div_ceil(64) as u32;
    let out = gpu_common::run_kernel(ctx, &src, bytemuck::cast_slice(input), outputs * 8, groups);
    bytemuck::pod_collect_to_vec(&out)
}

#[test]
fn wgsl_rodrigues_matches_cpu() {
    let Some(ctx) = gpu_common::context_f64("wgsl_rodrigues_matches_cpu") else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let n = 4096;
    let mut input = Vec::with_capacity(7 * n);
    for k in 0..n {
        // atan arguments over 12 decades, both signs, plus exact special values.
        let s = match k {
            0 => 0.0,
            1 => 1.0,
            2 => -1.0,
            3 => 1e-300,
            _ => rng.random_range(-1.0..1.0f64).signum() * 10f64.powf(rng.random_range(-6.0..6.0)),
        };
        let mag = 10f64.powf(rng.random_range(-5.0..2.0));
        let a = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        ) * mag;
        let b = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        input.extend([s, a.x, a.y, a.z, b.x, b.y, b.z]);
    }
    let out = run_kernel(&ctx, &input, 11 * n);
    let (mut worst_atan, mut worst_theta, mut worst_vec) = (0.0f64, 0.0f64, 0.0f64);
    for k in 0..n {
        let x = &input[7 * k..7 * k + 7];
        let y = &out[11 * k..11 * k + 11];
        let s = x[0];
        let (a, b) = (DVec3::new(x[1], x[2], x[3]), DVec3::new(x[4], x[5], x[6]));
        let rel = |g: f64, c: f64| {
            if c == 0.0 {
                g.abs()
            } else {
                ((g - c) / c).abs()
            }
        };
        worst_atan = worst_atan.max(rel(y[0], s.atan()));
        let c = rodrigues::try_compose(a, b);
        assert_eq!(y[10] == 1.0, c.is_some(), "half-turn check differs at {k}");
        let vrel = |g: DVec3, c: DVec3| (g - c).length() / c.length().max(1e-300);
        if let Some(c) = c {
            worst_vec = worst_vec.max(vrel(DVec3::new(y[1], y[2], y[3]), c));
        }
        worst_vec = worst_vec.max(vrel(DVec3::new(y[4], y[5], y[6]), rodrigues::rotate(a, b)));
        worst_theta = worst_theta.max(vrel(
            DVec3::new(y[7], y[8], y[9]),
            rodrigues::to_rotation_vector(a),
        ));
    }
    println!(
        "atan {worst_atan:.2e}, rotation vector {worst_theta:.2e}, compose/rotate {worst_vec:.2e}"
    );
    assert!(worst_atan <= 1e-15, "atan_real: {worst_atan:e}");
    assert!(worst_theta <= 1e-15, "to_rotation_vector: {worst_theta:e}");
    assert!(worst_vec <= 1e-15, "compose/rotate: {worst_vec:e}");
}

const SPECIAL_KERNEL: &str = r#"
@group(0) @binding(0) var<storage, read> xs: array<f64>;
@group(0) @binding(1) var<storage, read_write> ys: array<f64>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&xs) / 7u) { return; }
    let x = xs[7u * i];
    let y = xs[7u * i + 1u];
    ys[3u * i] = ln_real(x);
    ys[3u * i + 1u] = exp_real(y);
    ys[3u * i + 2u] = pow_real(x, -y * 0.25);
}
"#;

/// The WGSL `ln_real`, `exp_real` and `pow_real` (for the near-field force in f64
/// kernels, where Vulkan's log/exp/pow are undefined) against libm on 4096 random
/// arguments over 24 decades: ln and exp to 1e-15 relative (ln: absolute near 1), pow
/// to 5e-14: its error is the rounding of y·ln x amplified by |y ln x|, which reaches
/// 207 here (207 × 1.1e-16 = 2.3e-14). Measured: 2.2e-16, 2.2e-16, 2.5e-14.
#[test]
fn wgsl_ln_exp_pow_match_cpu() {
    let Some(ctx) = gpu_common::context_f64("wgsl_ln_exp_pow_match_cpu") else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 4096;
    let mut input = Vec::with_capacity(7 * n);
    for k in 0..n {
        let x = match k {
            0 => 1.0,
            1 => 2.0,
            2 => 0.5,
            _ => 10f64.powf(rng.random_range(-12.0..12.0)),
        };
        let y = match k {
            0 => 0.0,
            1 => 1.0,
            _ => rng.random_range(-30.0..30.0),
        };
        input.extend([x, y, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }
    let out = run_kernel_src(&ctx, SPECIAL_KERNEL, &input, 3 * n);
    let (mut w_ln, mut w_exp, mut w_pow) = (0.0f64, 0.0f64, 0.0f64);
    for k in 0..n {
        let (x, y) = (input[7 * k], input[7 * k + 1]);
        let ln = x.ln();
        w_ln = w_ln.max((out[3 * k] - ln).abs() / ln.abs().max(1.0));
        w_exp = w_exp.max(((out[3 * k + 1] - y.exp()) / y.exp()).abs());
        let p = x.powf(-y * 0.25);
        w_pow = w_pow.max(((out[3 * k + 2] - p) / p).abs());
    }
    println!("ln {w_ln:.2e}, exp {w_exp:.2e}, pow {w_pow:.2e}");
    assert!(w_ln <= 1e-15, "ln_real: {w_ln:e}");
    assert!(w_exp <= 1e-15, "exp_real: {w_exp:e}");
    assert!(w_pow <= 5e-14, "pow_real: {w_pow:e}");
}

/// The WGSL closest point of a triangle (`shaders/common/triangle.wgsl`, for mesh walls
/// on the GPU) against `math::triangle::closest_point` in f64: the same point bit for
/// bit and the same feature, on random triangles and on points placed in each Voronoi
/// region (near corners, beside edges, over the face).
#[test]
fn wgsl_closest_point_matches_cpu() {
    use varidem::math::triangle::{closest_point, Feature};
    const TRIANGLE: &str = include_str!("../shaders/common/triangle.wgsl");
    const KERNEL: &str = r#"
@group(0) @binding(0) var<storage, read> xs: array<f64>;
@group(0) @binding(1) var<storage, read_write> ys: array<f64>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&xs) / 12u) { return; }
    let o = 12u * i;
    let p = vec3<f64>(xs[o], xs[o + 1u], xs[o + 2u]);
    let a = vec3<f64>(xs[o + 3u], xs[o + 4u], xs[o + 5u]);
    let b = vec3<f64>(xs[o + 6u], xs[o + 7u], xs[o + 8u]);
    let c = vec3<f64>(xs[o + 9u], xs[o + 10u], xs[o + 11u]);
    let r = closest_point(p, a, b, c);
    ys[4u * i] = r.q.x; ys[4u * i + 1u] = r.q.y; ys[4u * i + 2u] = r.q.z;
    ys[4u * i + 3u] = f64(r.feature);
}
"#;
    let Some(ctx) = gpu_common::context_f64("wgsl_closest_point_matches_cpu") else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut v = |s: f64| {
        DVec3::new(
            rng.random_range(-s..s),
            rng.random_range(-s..s),
            rng.random_range(-s..s),
        )
    };
    let n = 4096;
    let mut input = Vec::with_capacity(12 * n);
    let mut cases = Vec::with_capacity(n);
    for k in 0..n {
        let t = [v(1.0), v(1.0), v(1.0)];
        // Every fourth point near a corner or an edge's midpoint, the rest anywhere.
        let p = match k % 4 {
            0 => t[k % 3] + v(0.2),
            1 => 0.5 * (t[k % 3] + t[(k + 1) % 3]) + v(0.2),
            _ => v(1.5),
        };
        for q in [p, t[0], t[1], t[2]] {
            input.extend_from_slice(&q.to_array());
        }
        cases.push((p, t));
    }
    let src = format!("{}{TRIANGLE}{KERNEL}", header(Precision::F64));
    let groups = n.div_ceil(64) as u32;
    let out: Vec<f64> = bytemuck::pod_collect_to_vec(&gpu_common::run_kernel(
        &ctx,
        &src,
        bytemuck::cast_slice(&input),
        4 * n * 8,
        groups,
    ));
    let mut seen = [0usize; 7];
    for (k, (p, t)) in cases.iter().enumerate() {
        let (q, f) = closest_point(*p, *t);
        let local = match f {
            Feature::Face => 0,
            Feature::Edge(e) => 1 + e as usize,
            Feature::Vertex(c) => 4 + c as usize,
        };
        seen[local] += 1;
        let g = DVec3::new(out[4 * k], out[4 * k + 1], out[4 * k + 2]);
        assert_eq!(g, q, "case {k}: point");
        assert_eq!(out[4 * k + 3] as usize, local, "case {k}: feature");
    }
    // Every feature was exercised.
    assert!(seen.iter().all(|&s| s > 50), "{seen:?}");
}

/// The mesh data of the WGSL mesh tests: `xs` holds the triangle and vertex counts,
/// two reals for the test, the vertices, then per triangle its corners, plane, edge
/// lines, vertex indices and owner keys (34 reals), then the test's own data.
const MESH_ACCESSORS: &str = r#"
@group(0) @binding(0) var<storage, read> xs: array<f64>;
@group(0) @binding(1) var<storage, read_write> ys: array<f64>;
fn nt() -> u32 { return u32(xs[0]); }
fn nv() -> u32 { return u32(xs[1]); }
fn tri_base(t: u32) -> u32 { return 4u + 3u * nv() + 34u * t; }
fn data_base() -> u32 { return tri_base(nt()); }
fn v3(o: u32) -> vec3<f64> { return vec3<f64>(xs[o], xs[o + 1u], xs[o + 2u]); }
fn mesh_vertex(v: u32) -> vec3<f64> { return v3(4u + 3u * v); }
fn mesh_corner(t: u32, k: u32) -> vec3<f64> { return v3(tri_base(t) + 3u * k); }
fn mesh_plane(t: u32) -> vec4<f64> {
    let o = tri_base(t) + 9u;
    return vec4<f64>(xs[o], xs[o + 1u], xs[o + 2u], xs[o + 3u]);
}
fn mesh_edge(t: u32, k: u32) -> vec4<f64> {
    let o = tri_base(t) + 13u + 4u * k;
    return vec4<f64>(xs[o], xs[o + 1u], xs[o + 2u], xs[o + 3u]);
}
fn mesh_tri(t: u32, k: u32) -> u32 { return u32(xs[tri_base(t) + 25u + k]); }
fn mesh_key(t: u32, j: u32) -> u32 { return u32(xs[tri_base(t) + 28u + j]); }
fn mesh_candidate(s: u32) -> u32 { return s; }
// mesh_carried's slots (wgsl_carried_springs_match_cpu's cases: the current keys at
// case_base, the previous keys after them, then the previous springs; the starting
// springs out at out_base). Every kernel defines them: WGSL needs every function a
// module calls.
var<private> case_base: u32;
var<private> out_base: u32;
fn mesh_now_key(a: u32) -> u32 { return u32(xs[case_base + a]); }
fn mesh_old_key(s: u32) -> u32 { return u32(xs[case_base + 8u + s]); }
fn mesh_old_spring(s: u32) -> vec3<f64> { return v3(case_base + 16u + 3u * s); }
fn mesh_set_start(a: u32, spring: vec3<f64>) {
    ys[out_base + 3u * a] = spring.x;
    ys[out_base + 3u * a + 1u] = spring.y;
    ys[out_base + 3u * a + 2u] = spring.z;
}
// The EPSD rolling springs' handover: called beside every mesh_set_start with the same
// slot, so these cases need nothing of it (the engine's is tested by
// tests/gpu_rolling.rs, whose mesh rolling springs match the CPU's).
fn mesh_carry_roll(a: u32, s: u32) {}
"#;

/// A ridge of two faces (convex edge), a pyramid (convex apex, concave corners at its
/// base) and a flat patch: faces, edges and corners of every kind; and its data as
/// [`MESH_ACCESSORS`] reads it, with `a`, `b` the test's two reals.
fn test_mesh(a: f64, b: f64) -> (varidem::physics::mesh::MeshSurfaces, Vec<f64>) {
    let v = |x: f64, y: f64, z: f64| DVec3::new(x, y, z);
    let vertices = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(1.0, 1.0, 0.0),
        v(0.0, 1.0, 0.0),
        v(0.5, 0.5, 0.4),
        v(2.0, 0.0, 0.0),
        v(2.0, 1.0, 0.0),
        v(1.5, 0.0, 0.3),
        v(1.5, 1.0, 0.3),
    ];
    let triangles = vec![
        [0, 1, 4],
        [1, 2, 4],
        [2, 3, 4],
        [3, 0, 4],
        [1, 7, 8],
        [1, 8, 2],
        [7, 5, 6],
        [7, 6, 8],
    ];
    mesh_data(vertices, triangles, a, b)
}

/// A bumpy `k` × `k` grid over the unit square (z a smooth bump, each square split in
/// two): 2k² triangles, more than the 32 candidates `mesh_near` keeps as bits.
fn bumpy_grid(k: u32) -> (Vec<DVec3>, Vec<[u32; 3]>) {
    let h = |x: f64, y: f64| 0.15 * (3.0 * x).sin() * (2.0 * y).cos();
    let s = f64::from(k);
    let vertices = (0..=k)
        .flat_map(|j| (0..=k).map(move |i| (f64::from(i) / s, f64::from(j) / s)))
        .map(|(x, y)| DVec3::new(x, y, h(x, y)))
        .collect();
    let at = |i: u32, j: u32| j * (k + 1) + i;
    let triangles = (0..k)
        .flat_map(|j| (0..k).map(move |i| (i, j)))
        .flat_map(|(i, j)| {
            [
                [at(i, j), at(i + 1, j), at(i + 1, j + 1)],
                [at(i, j), at(i + 1, j + 1), at(i, j + 1)],
            ]
        })
        .collect();
    (vertices, triangles)
}

/// The mesh of `vertices` and `triangles` and its data as [`MESH_ACCESSORS`] reads it,
/// with `a`, `b` the test's two reals.
fn mesh_data(
    vertices: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    a: f64,
    b: f64,
) -> (varidem::physics::mesh::MeshSurfaces, Vec<f64>) {
    use varidem::model::{MeshWall, Motion, TriangleMesh};
    let wall = MeshWall {
        name: "m".into(),
        mesh: TriangleMesh::new(vertices, triangles).unwrap(),
        material: None,
        stiffness: 0.0,
        motion: Motion::default(),
    };
    let surfaces = varidem::physics::mesh::MeshSurfaces::new(&[wall]);
    let nt = surfaces.triangles.len() as u32;
    let mut input = vec![f64::from(nt), surfaces.vertices.len() as f64, a, b];
    for x in &surfaces.vertices {
        input.extend_from_slice(&x.to_array());
    }
    for t in 0..nt {
        for c in surfaces.corners(t) {
            input.extend_from_slice(&c.to_array());
        }
        let (normal, d, edges) = surfaces.plane(t);
        input.extend_from_slice(&normal.extend(d).to_array());
        for (m, o) in edges {
            input.extend_from_slice(&m.extend(o).to_array());
        }
        input.extend(surfaces.triangles[t as usize].iter().map(|&k| f64::from(k)));
        input.extend(surfaces.keys[t as usize].iter().map(|&k| f64::from(k)));
    }
    (surfaces, input)
}

/// `n` points uniform in the box `lo..hi` drawn from `seed`, appended to `input`.
fn random_points(
    seed: u64,
    n: usize,
    lo: [f64; 3],
    hi: [f64; 3],
    input: &mut Vec<f64>,
) -> Vec<DVec3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let points: Vec<DVec3> = (0..n)
        .map(|_| DVec3::from_array([0, 1, 2].map(|a| rng.random_range(lo[a]..hi[a]))))
        .collect();
    for x in &points {
        input.extend_from_slice(&x.to_array());
    }
    points
}

/// Runs `kernel` (after the headers, the triangle and mesh functions and
/// [`MESH_ACCESSORS`]) over `groups` workgroups on `input`, returning `outputs` reals.
fn run_mesh_kernel(
    ctx: &varidem::gpu::context::GpuContext,
    kernel: &str,
    input: &[f64],
    outputs: usize,
    groups: u32,
) -> Vec<f64> {
    const TRIANGLE: &str = include_str!("../shaders/common/triangle.wgsl");
    const MESH: &str = include_str!("../shaders/common/mesh.wgsl");
    let src = format!(
        "{}{TRIANGLE}{MESH}{MESH_ACCESSORS}{kernel}",
        header(Precision::F64)
    );
    bytemuck::pod_collect_to_vec(&gpu_common::run_kernel(
        ctx,
        &src,
        bytemuck::cast_slice(input),
        outputs * 8,
        groups,
    ))
}

/// The WGSL sphere–mesh contact search (`shaders/common/mesh.wgsl`) against
/// `MeshSurfaces::contacts` in f64: spheres at random places around [`test_mesh`],
/// every triangle a candidate. The same contacts in the same order, keys, points,
/// distances and normals bit for bit.
#[test]
fn wgsl_mesh_contacts_match_cpu() {
    let Some(ctx) = gpu_common::context_f64("wgsl_mesh_contacts_match_cpu") else {
        return;
    };
    let n = 2048;
    let (surfaces, mut input) = test_mesh(n as f64, 0.3);
    let points = random_points(8, n, [-0.3, -0.3, -0.3], [2.3, 1.3, 0.7], &mut input);
    let (faces, others) = mesh_contacts_match(&ctx, &surfaces, &input, &points, 0.3);
    assert!(
        faces > 100 && others > 100,
        "{faces} face and {others} edge or corner contacts"
    );
}

/// [`wgsl_mesh_contacts_match_cpu`] on a mesh of 72 triangles ([`bumpy_grid`]): the
/// candidates from 32 on, which `mesh_near` does not hold as bits and the search and
/// `mesh_all_agree` then visit one by one, as the CPU's `near_order` does.
#[test]
fn wgsl_mesh_contacts_beyond_32_candidates_match_cpu() {
    let Some(ctx) = gpu_common::context_f64("wgsl_mesh_contacts_beyond_32_candidates_match_cpu")
    else {
        return;
    };
    let n = 2048;
    let (vertices, triangles) = bumpy_grid(6);
    let (surfaces, mut input) = mesh_data(vertices, triangles, n as f64, 0.12);
    let points = random_points(9, n, [-0.1, -0.1, -0.3], [1.1, 1.1, 0.3], &mut input);
    let (faces, others) = mesh_contacts_match(&ctx, &surfaces, &input, &points, 0.12);
    // Contacts on triangles 32.. (keys are 8 t + feature): half the grid.
    let beyond = points
        .iter()
        .filter(|x| {
            let all: Vec<u32> = (0..surfaces.triangles.len() as u32).collect();
            let mut late = false;
            surfaces.contacts(&all, **x, 0.12, |c| late |= c.key / 8 >= 32);
            late
        })
        .count();
    assert!(
        faces > 100 && others > 100 && beyond > 200,
        "{faces} face and {others} edge or corner contacts, {beyond} spheres touching triangles from 32 on"
    );
}

/// Runs the contact search kernel at `points` (already in `input`) with `reach`, every
/// triangle of `surfaces` a candidate, and checks every sphere's contacts against the
/// CPU's bit for bit; returns the face and the edge or corner contacts seen.
fn mesh_contacts_match(
    ctx: &varidem::gpu::context::GpuContext,
    surfaces: &varidem::physics::mesh::MeshSurfaces,
    input: &[f64],
    points: &[DVec3],
    reach: f64,
) -> (usize, usize) {
    const KERNEL: &str = r#"
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    let n = u32(xs[2]);
    if (i >= n) { return; }
    let reach = xs[3];
    let x = v3(data_base() + 3u * i);
    let o = 65u * i;
    var hits = 0u;
    // mesh_near's bits (this test's candidates are every triangle, one pass).
    var near = 0u;
    for (var s = 0u; s < min(nt(), 32u); s++) {
        if (mesh_may_touch(mesh_candidate(s), x, reach)) { near |= 1u << s; }
    }
    for (var s = 0u; s < nt(); s++) {
        let h = mesh_contact(near, nt(), s, x, reach);
        if (h.key == MESH_NONE || hits >= 8u) { continue; }
        let at = o + 1u + 8u * hits;
        ys[at] = f64(h.key);
        ys[at + 1u] = h.point.x; ys[at + 2u] = h.point.y; ys[at + 3u] = h.point.z;
        ys[at + 4u] = h.distance;
        ys[at + 5u] = h.normal.x; ys[at + 6u] = h.normal.y; ys[at + 7u] = h.normal.z;
        hits++;
    }
    ys[o] = f64(hits);
}
"#;
    let n = points.len();
    let out = run_mesh_kernel(ctx, KERNEL, input, 65 * n, (n as u32).div_ceil(64));
    let candidates: Vec<u32> = (0..surfaces.triangles.len() as u32).collect();
    let (mut faces, mut others) = (0, 0);
    for (i, x) in points.iter().enumerate() {
        let mut cpu = Vec::new();
        surfaces.contacts(&candidates, *x, reach, |c| cpu.push(c));
        assert!(
            cpu.len() <= 8,
            "point {i}: {} contacts, the kernel keeps 8",
            cpu.len()
        );
        let o = 65 * i;
        assert_eq!(out[o] as usize, cpu.len(), "point {i} at {x}: contacts");
        for (h, c) in cpu.iter().enumerate() {
            let at = o + 1 + 8 * h;
            assert_eq!(out[at] as u32, c.key, "point {i}: key");
            assert_eq!(
                DVec3::new(out[at + 1], out[at + 2], out[at + 3]),
                c.point,
                "point {i}"
            );
            assert_eq!(out[at + 4], c.distance, "point {i}");
            assert_eq!(
                DVec3::new(out[at + 5], out[at + 6], out[at + 7]),
                c.normal,
                "point {i}"
            );
            if c.key % 8 == 0 {
                faces += 1;
            } else {
                others += 1;
            }
        }
    }
    (faces, others)
}

/// The WGSL spring handover (`mesh_carried`) against `physics::mesh::carried_springs`:
/// random previous slots and current contacts drawn from [`test_mesh`]'s features
/// (faces, edges, corners, some kept, some new, some adjacent), springs bit for bit.
#[test]
fn wgsl_carried_springs_match_cpu() {
    use varidem::physics::granular::NO_PARTNER;
    use varidem::physics::mesh::{carried_springs, MeshContact, MESH_SLOTS};
    const KERNEL: &str = r#"
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= u32(xs[2])) { return; }
    case_base = data_base() + 40u * i;
    out_base = 24u * i;
    var count = 0u;
    while (count < MESH_SLOTS && mesh_now_key(count) != 0xffffffffu) { count++; }
    var n_old = 0u;
    while (n_old < MESH_SLOTS && mesh_old_key(n_old) != 0xffffffffu) { n_old++; }
    for (var k = 0u; k < MESH_SLOTS; k++) { mesh_set_start(k, vec3<f64>(0.0)); }
    mesh_carried(count, n_old);
}
"#;
    let Some(ctx) = gpu_common::context_f64("wgsl_carried_springs_match_cpu") else {
        return;
    };
    let n = 1024;
    let (surfaces, mut input) = test_mesh(n as f64, 0.0);
    // Every feature key of the mesh (each owned key once).
    let mut features: Vec<u32> = (0..surfaces.triangles.len() as u32)
        .flat_map(|t| std::iter::once(8 * t).chain(surfaces.keys[t as usize]))
        .collect();
    features.sort_unstable();
    features.dedup();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut cases = Vec::with_capacity(n);
    for _ in 0..n {
        let pick = |rng: &mut ChaCha8Rng| -> Vec<u32> {
            let count = rng.random_range(0..5);
            let mut v: Vec<u32> = (0..count)
                .map(|_| features[rng.random_range(0..features.len())])
                .collect();
            v.sort_unstable();
            v.dedup();
            v.resize(MESH_SLOTS, NO_PARTNER);
            v
        };
        let (old, now) = (pick(&mut rng), pick(&mut rng));
        let springs: Vec<DVec3> = (0..MESH_SLOTS)
            .map(|_| DVec3::new(rng.random(), rng.random(), rng.random()))
            .collect();
        input.extend(now.iter().map(|&k| f64::from(k)));
        input.extend(old.iter().map(|&k| f64::from(k)));
        for s in &springs {
            input.extend_from_slice(&s.to_array());
        }
        cases.push((now, old, springs));
    }
    let out = run_mesh_kernel(&ctx, KERNEL, &input, 24 * n, (n as u32).div_ceil(64));
    let mut handovers = 0;
    for (i, (now, old, springs)) in cases.iter().enumerate() {
        let contacts: Vec<Option<MeshContact>> = now
            .iter()
            .map(|&key| {
                (key != NO_PARTNER).then_some(MeshContact {
                    key,
                    mesh: 0,
                    point: DVec3::ZERO,
                    distance: 1.0,
                    normal: DVec3::X,
                })
            })
            .collect();
        let cpu = carried_springs(&surfaces, &contacts, old, springs);
        for a in 0..MESH_SLOTS {
            let g = DVec3::new(
                out[24 * i + 3 * a],
                out[24 * i + 3 * a + 1],
                out[24 * i + 3 * a + 2],
            );
            assert_eq!(g, cpu[a], "case {i}, slot {a}");
            if now[a] != NO_PARTNER && !old.contains(&now[a]) && cpu[a] != DVec3::ZERO {
                handovers += 1;
            }
        }
    }
    assert!(handovers > 50, "{handovers} handovers to adjacent features");
}

/// The WGSL cell lookup (`mesh_cell`) against `MeshCells::cell_of`: random points in and
/// around a grid, the same cell (or none).
#[test]
fn wgsl_mesh_cell_matches_cpu() {
    use varidem::neighbor::MeshCells;
    const KERNEL: &str = r#"
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= u32(xs[2])) { return; }
    let o = data_base();
    let origin = v3(o);
    let inv = xs[o + 3u];
    let dims = vec3<u32>(u32(xs[o + 4u]), u32(xs[o + 5u]), u32(xs[o + 6u]));
    ys[i] = f64(mesh_cell(v3(o + 7u + 3u * i), origin, inv, dims));
}
"#;
    let Some(ctx) = gpu_common::context_f64("wgsl_mesh_cell_matches_cpu") else {
        return;
    };
    let n = 4096;
    let (surfaces, mut input) = test_mesh(n as f64, 0.0);
    let cells = MeshCells::new(&surfaces, 0.07);
    input.extend_from_slice(&cells.origin.to_array());
    input.push(cells.inv);
    input.extend(cells.dims.map(f64::from));
    let points = random_points(4, n, [-0.5, -0.5, -0.5], [2.5, 1.5, 1.0], &mut input);
    let out = run_mesh_kernel(&ctx, KERNEL, &input, n, (n as u32).div_ceil(64));
    let mut inside = 0;
    for (i, x) in points.iter().enumerate() {
        let cpu = cells.cell_of(*x).map_or(u32::MAX, |c| c as u32);
        assert_eq!(out[i] as u32, cpu, "point {i} at {x}");
        inside += usize::from(cpu != u32::MAX);
    }
    assert!(inside > n / 10 && inside < n, "{inside} of {n} inside");
}
