//! Golden data: fixed small configurations per contact law with reference forces and
//! moments (LAMMPS-style regression data), checked on the CPU backend, the GPU in f64
//! and the GPU in f32.
//!
//! The configurations are the scenes `tests/golden/*.toml`; the reference values are
//! `tests/golden/{binder,hertz_mindlin,walls}.csv`, one row per recorded step and
//! particle: `scene,step,id,fx,fy,fz,mx,my,mz` (force and spatial moment on the particle
//! at the state after `step` steps, as [`Frame`] gives them), every value in `{:e}`, the
//! shortest text that reads back as the same `f64`.
//!
//! Regenerate with `VARIDEM_BLESS=1 cargo test --release --test golden`: the files are
//! then written from the CPU backend before any test of this binary reads them (review
//! the diff: a change of the values is a change of the physics).
//!
//! A component's error is its difference from the file divided by the largest force
//! (for moments: the larger of the largest moment and the largest force times the
//! largest radius) of the same scene and step. Tolerances:
//! * CPU 1e-12. The file was written by the CPU backend, whose results do not depend on
//!   the thread count: on the machine that wrote it the values are the same bits
//!   (measured 0). Elsewhere libm's `atan` (the bending strain, `math::rodrigues`) may
//!   differ by an ulp, which a few hundred steps of these small, smooth motions amplify
//!   little; the rest is +, −, ×, ÷ and `sqrt`, which IEEE fixes.
//! * GPU f64 1e-12. The kernels perform the CPU's operations in its order; a driver
//!   that contracts to FMA, and the WGSL `atan_real` against libm's `atan`, differ by an
//!   ulp now and then, which the run carries on. Measured on lavapipe (Mesa 22.3):
//!   1.5e-15 (binder), 0 (Hertz–Mindlin, walls).
//! * GPU f32 5e-4. An f32 centre holds ~1e-9 m, 1e-5 of the 1e-4 m Hertz overlaps, and
//!   the contact forces go as δ^{3/2}; the trajectories then part by f32 roundings per
//!   step. Measured on lavapipe: 4.8e-5 (binder), 5.7e-5 (Hertz–Mindlin), 5.2e-5
//!   (walls); the same on llvmpipe's OpenGL.
//!
//! The files are not only self-consistent: the `*_obey_the_laws` tests check them
//! against the laws evaluated by hand from the scene (Hertz `F = (4/3) E* √r* δ^{3/2}`,
//! the binder `U^pp` and wall forces at step 0) and against the physics functions at
//! the CPU's state at every recorded step (bond and contact sums; the Hertz–Mindlin
//! force `−f_n n − k_t s` from the stored spring, through stick and slip).

mod gpu_common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use glam::DVec3;
use varidem::backend::{Backend, Frame};
use varidem::cpu::CpuBackend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::io::parse_scene;
use varidem::model::{Scene, ShearForm};
use varidem::physics::{binder, contact};

/// One golden file and the configurations (scene name, recorded steps) it holds.
struct GoldenFile {
    /// File name under `tests/golden/`.
    file: &'static str,
    /// Scene names (`tests/golden/{name}.toml`) with the steps recorded, ascending.
    scenes: &'static [(&'static str, &'static [u64])],
}

/// Every golden file.
const FILES: [GoldenFile; 3] = [
    GoldenFile {
        file: "binder.csv",
        scenes: &[
            ("binder_objective", &[0, 1, 10, 50, 100, 200, 400]),
            ("binder_printed", &[0, 1, 10, 50, 100, 200, 400]),
        ],
    },
    GoldenFile {
        file: "hertz_mindlin.csv",
        scenes: &[(
            "hertz_mindlin",
            &[0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 100],
        )],
    },
    GoldenFile {
        file: "walls.csv",
        scenes: &[
            ("walls_binder", &[0, 1, 10, 50, 100, 120, 150, 200, 300]),
            ("walls_hertz", &[0, 1, 5, 10, 50, 100, 150, 200, 300]),
        ],
    },
];

/// Force and moment on one particle at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    /// Total force (N).
    force: DVec3,
    /// Total spatial moment (N m).
    moment: DVec3,
}

/// Rows by (scene, step, particle).
type Table = BTreeMap<(String, u64, usize), Row>;

/// The directory of the golden files.
fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The golden configuration `name` (`tests/golden/{name}.toml`).
fn scene(name: &str) -> Scene {
    let path = dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    parse_scene(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Steps `backend` to each of `steps` in turn (ascending) and records its frames.
fn frames(backend: &mut dyn Backend, steps: &[u64]) -> Vec<Frame> {
    steps
        .iter()
        .map(|&s| {
            let now = backend.step_count();
            if s > now {
                backend.advance(s - now).unwrap();
            }
            backend.frame().unwrap()
        })
        .collect()
}

/// The rows of `frames` of scene `name`.
fn rows(name: &str, frames: &[Frame]) -> Table {
    let mut t = Table::new();
    for f in frames {
        for (i, (force, moment)) in f.force.iter().zip(&f.moment).enumerate() {
            t.insert(
                (name.to_string(), f.step, i),
                Row {
                    force: *force,
                    moment: *moment,
                },
            );
        }
    }
    t
}

/// Every configuration of `file` run on the CPU backend.
fn cpu_table(file: &GoldenFile) -> Table {
    let mut t = Table::new();
    for &(name, steps) in file.scenes {
        let mut cpu = CpuBackend::new(&scene(name)).unwrap();
        t.extend(rows(name, &frames(&mut cpu, steps)));
    }
    t
}

/// The CSV text of `table`.
fn to_csv(table: &Table) -> String {
    let mut s = String::from("scene,step,id,fx,fy,fz,mx,my,mz\n");
    for ((name, step, id), r) in table {
        let [fx, fy, fz] = r.force.to_array();
        let [mx, my, mz] = r.moment.to_array();
        writeln!(
            s,
            "{name},{step},{id},{fx:e},{fy:e},{fz:e},{mx:e},{my:e},{mz:e}"
        )
        .unwrap();
    }
    s
}

/// The table of a golden CSV file.
fn parse_csv(file: &str, text: &str) -> Table {
    let mut t = Table::new();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("scene,step,id,fx,fy,fz,mx,my,mz"),
        "{file}: header"
    );
    for (k, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 9, "{file} line {}: {line}", k + 2);
        let num = |s: &str| -> f64 {
            s.parse()
                .unwrap_or_else(|e| panic!("{file} line {}: {s}: {e}", k + 2))
        };
        let key = (
            f[0].to_string(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        let row = Row {
            force: DVec3::new(num(f[3]), num(f[4]), num(f[5])),
            moment: DVec3::new(num(f[6]), num(f[7]), num(f[8])),
        };
        t.insert(key, row);
    }
    t
}

/// Whether the golden files are to be rewritten (`VARIDEM_BLESS=1`).
fn blessing() -> bool {
    std::env::var("VARIDEM_BLESS").is_ok_and(|v| v == "1")
}

/// The reference table of `file`; under `VARIDEM_BLESS=1` every file is first written
/// from the CPU backend (once per test binary, before any test reads one).
fn golden(file: &GoldenFile) -> Table {
    static BLESSED: OnceLock<()> = OnceLock::new();
    BLESSED.get_or_init(|| {
        if blessing() {
            for f in &FILES {
                let path = dir().join(f.file);
                std::fs::write(&path, to_csv(&cpu_table(f))).unwrap();
                eprintln!("VARIDEM_BLESS=1: wrote {path:?} from the CPU backend");
            }
        }
    });
    let path = dir().join(file.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{path:?}: {e} (VARIDEM_BLESS=1 cargo test --test golden writes it)")
    });
    parse_csv(file.file, &text)
}

/// The largest scaled differences of `actual` from `golden` (force, moment) and where the
/// worse of the two is; panics if a row is missing or the error exceeds `tol`.
fn compare(label: &str, file: &GoldenFile, golden: &Table, actual: &Table, tol: f64) -> [f64; 2] {
    assert_eq!(
        golden.keys().collect::<Vec<_>>(),
        actual.keys().collect::<Vec<_>>(),
        "{label}: {} has other rows (scene, step, particle) than the run",
        file.file
    );
    let mut worst = [0.0f64; 2];
    let mut worst_at = String::new();
    let mut worst_any = 0.0;
    for &(name, steps) in file.scenes {
        let r_max = scene(name)
            .model
            .particles
            .radius
            .iter()
            .fold(0.0, |a: f64, &b| a.max(b));
        for &step in steps {
            let at_step: Vec<(&(String, u64, usize), &Row)> = golden
                .iter()
                .filter(|((n, s, _), _)| n == name && *s == step)
                .collect();
            let f_scale = at_step
                .iter()
                .map(|(_, r)| r.force.length())
                .fold(0.0, f64::max);
            let m_scale = at_step
                .iter()
                .map(|(_, r)| r.moment.length())
                .fold(f_scale * r_max, f64::max);
            for (key, g) in at_step {
                let a = &actual[key];
                for (k, (what, gv, av, scale)) in [
                    ("force", g.force, a.force, f_scale),
                    ("moment", g.moment, a.moment, m_scale),
                ]
                .into_iter()
                .enumerate()
                {
                    for c in 0..3 {
                        let e = if gv[c] == av[c] {
                            0.0
                        } else {
                            (gv[c] - av[c]).abs() / scale.max(f64::MIN_POSITIVE)
                        };
                        worst[k] = worst[k].max(e);
                        if e > worst_any || e.is_nan() {
                            worst_any = e;
                            worst_at = format!(
                                "{}: scene {name}, step {step}, particle {}, {what} {}: {:e} against {:e} (scale {scale:.3e})",
                                file.file, key.2, ["x", "y", "z"][c], av[c], gv[c]
                            );
                        }
                    }
                }
            }
        }
    }
    println!(
        "{label}: {} force {:.2e}, moment {:.2e} (tolerance {tol:e}){}",
        file.file,
        worst[0],
        worst[1],
        if worst_any > 0.0 {
            format!("; worst at {worst_at}")
        } else {
            String::new()
        }
    );
    assert!(
        worst_any <= tol,
        "{label}: error {worst_any:e} > {tol:e} at {worst_at}"
    );
    worst
}

/// The CPU backend reproduces the golden files. Tolerance 1e-12 (module doc); measured
/// 0 on the machine that wrote them (same bits).
#[test]
fn cpu_matches_golden() {
    for file in &FILES {
        compare("cpu", file, &golden(file), &cpu_table(file), 1e-12);
    }
}

/// Every configuration of `file` on the GPU in `precision`, or `None` when the test is
/// skipped ([`gpu_common::context_for`]).
fn gpu_table(test: &str, file: &GoldenFile, precision: Precision) -> Option<Table> {
    let mut t = Table::new();
    for &(name, steps) in file.scenes {
        let sc = scene(name);
        let ctx = gpu_common::context_for(test, precision)?;
        let opts = GpuOptions {
            precision,
            ..Default::default()
        };
        let mut gpu = GpuBackend::with_context(
            ctx,
            sc.model.clone(),
            sc.simulation.integrator,
            sc.simulation.dt,
            &opts,
        )
        .unwrap();
        t.extend(rows(name, &frames(&mut gpu, steps)));
    }
    Some(t)
}

/// The GPU in f64 reproduces the golden files to 1e-12 of each step's force scale
/// (module doc). Measured on lavapipe: force 7.7e-16 and moment 1.5e-15 (binder.csv),
/// 0 (hertz_mindlin.csv, walls.csv).
#[test]
fn gpu_f64_matches_golden() {
    for file in &FILES {
        let Some(t) = gpu_table("gpu_f64_matches_golden", file, Precision::F64) else {
            return;
        };
        compare("gpu f64", file, &golden(file), &t, 1e-12);
    }
}

/// The GPU in f32 reproduces the golden files to 5e-4 of each step's force scale
/// (module doc). Measured on lavapipe: force 4.8e-5, moment 7.4e-6 (binder.csv);
/// 5.7e-5, 7.0e-6 (hertz_mindlin.csv); 5.2e-5, 1.2e-5 (walls.csv).
#[test]
fn gpu_f32_matches_golden() {
    for file in &FILES {
        let Some(t) = gpu_table("gpu_f32_matches_golden", file, Precision::F32) else {
            return;
        };
        compare("gpu f32", file, &golden(file), &t, 5e-4);
    }
}

/// `|a − b|` relative to `scale`, asserted at most 1e-12 (the laws evaluated in another
/// order than the backend's sum: a few ulps).
fn assert_close(what: &str, a: DVec3, b: DVec3, scale: f64) {
    let e = (a - b).length() / scale;
    assert!(e <= 1e-12, "{what}: {a} against {b}, relative error {e:e}");
}

/// The golden file's rows of scene `name`.
fn scene_rows<'a>(table: &'a Table, name: &'a str) -> impl Iterator<Item = (u64, usize, &'a Row)> {
    table
        .iter()
        .filter(move |((n, _, _), _)| n == name)
        .map(|((_, s, i), r)| (*s, *i, r))
}

/// binder.csv against the laws. At step 0 of `binder_objective` the bonds are at their
/// rest state (no force, no moment) and every touching pair pushes with the `U^pp` force
/// `(K^pp/R) s^{3/2} d/|d|`, `s = 1 − |d|/R` (eq. 57), written out here from the scene;
/// at every recorded step each particle's force and moment is the sum of
/// `physics::binder::bond_forces` over its bonds, `physics::contact::binder_pair` over
/// touching partners and the field, at the CPU's state.
#[test]
fn binder_golden_obeys_the_laws() {
    let table = golden(&FILES[0]);
    for &(name, steps) in FILES[0].scenes {
        let sc = scene(name);
        let m = &sc.model;
        let k_pp = match m.contact.map(|c| c.law) {
            Some(varidem::model::ContactLaw::Binder { k_pp }) => Some(k_pp),
            _ => None,
        };
        let shear = m.shear;
        // Step 0 by hand, where the bonds are at their rest state: in the objective
        // form (the printed one is not zero at rest when the ends start rotated, NOTES).
        let p = &m.particles;
        let scale = scene_rows(&table, name)
            .filter(|(s, _, _)| *s == 0)
            .map(|(_, _, r)| r.force.length())
            .fold(0.0, f64::max);
        for (step, i, row) in scene_rows(&table, name) {
            if step != 0 || shear != ShearForm::Objective {
                continue;
            }
            let mut f = p.mass[i] * m.gravity;
            if let Some(k) = k_pp {
                for j in 0..p.len() {
                    let d = p.position[i] - p.position[j];
                    let reach = p.radius[i] + p.radius[j];
                    if j != i && d.length() < reach {
                        let s = 1.0 - d.length() / reach;
                        f += k / reach * s.powf(1.5) * d / d.length();
                    }
                }
            }
            assert_close(
                &format!("{name} step 0 particle {i} force"),
                row.force,
                f,
                scale,
            );
            assert_close(
                &format!("{name} step 0 particle {i} moment"),
                row.moment,
                DVec3::ZERO,
                scale * p.radius[i],
            );
        }
        // Every step: the laws at the CPU's state.
        let mut cpu = CpuBackend::new(&sc).unwrap();
        for frame in frames(&mut cpu, steps) {
            let q = &frame.particles;
            let mut force: Vec<DVec3> = (0..q.len()).map(|i| q.mass[i] * m.gravity).collect();
            let mut moment = vec![DVec3::ZERO; q.len()];
            for b in &m.bonds {
                let (i, j) = (b.i as usize, b.j as usize);
                let r = binder::bond_forces(
                    b,
                    q.position[i],
                    q.position[j],
                    q.rotation[i],
                    q.rotation[j],
                    shear,
                )
                .unwrap();
                force[i] += r.force_i;
                force[j] -= r.force_i;
                moment[i] += r.moment_i;
                moment[j] += r.moment_j;
            }
            if let Some(k) = k_pp {
                for (i, f_i) in force.iter_mut().enumerate() {
                    for j in (0..q.len()).filter(|&j| j != i) {
                        let (x, r) = (&q.position, &q.radius);
                        if let Some((_, f)) = contact::binder_pair(k, x[i], x[j], r[i], r[j]) {
                            *f_i += f;
                        }
                    }
                }
            }
            let scale = force.iter().map(|f| f.length()).fold(0.0, f64::max);
            for i in 0..q.len() {
                let row = &table[&(name.to_string(), frame.step, i)];
                let what = format!("{name} step {} particle {i}", frame.step);
                assert_close(&format!("{what} force"), row.force, force[i], scale);
                assert_close(
                    &format!("{what} moment"),
                    row.moment,
                    moment[i],
                    scale * q.radius[i],
                );
            }
        }
    }
}

/// hertz_mindlin.csv against the Hertz–Mindlin law, on the pair 0–1 (particle 0 touches
/// nothing else; material "elastic": restitution 1, so no damping). At each recorded
/// step, from the CPU's state (positions and the pair's stored spring `s`, the lower
/// id's): `F₀ = −f_n n − k_t s`, `M₀ = (r₀ − δ/2) n × (−k_t s)` with
/// `f_n = (4/3) E* √r* δ^{3/2}` and `k_t = 8 G* √(r* δ)` written out from the scene's
/// moduli (`E* = E/(2(1 − ν²))`, Mindlin's `G* = G/(2(2 − ν))`). In stick the spring is
/// the trial elongation and `k_t|s| < μ_s f_n`; in slip `k_t|s| = μ_d f_n`: the test
/// requires both, stick first. At step 0 the spring is zero: `F₀ = −f_n n`.
#[test]
fn hertz_golden_obeys_the_laws() {
    let table = golden(&FILES[1]);
    let (name, steps) = FILES[1].scenes[0];
    let sc = scene(name);
    let mat = &sc.model.materials[0];
    let (e, nu, g) = (mat.young, mat.poisson, mat.shear_modulus);
    let e_star = 1.0 / (2.0 * (1.0 - nu * nu) / e);
    let g_star = 1.0 / (2.0 * (2.0 - nu) / g);
    let (mu_s, mu_d) = (mat.friction_static, mat.friction_dynamic);
    let mut cpu = CpuBackend::new(&sc).unwrap();
    let (mut stuck, mut slipped) = (Vec::new(), Vec::new());
    for &step in steps {
        let now = cpu.step_count();
        if step > now {
            cpu.advance(step - now).unwrap();
        }
        let snap = cpu.checkpoint_state().unwrap();
        let r = &sc.model.particles.radius;
        let d = snap.position[1] - snap.position[0];
        let overlap = r[0] + r[1] - d.length();
        let row = &table[&(name.to_string(), step, 0)];
        assert!(overlap > 0.0, "step {step}: the pair 0-1 should touch");
        let n = d / d.length();
        let r_star = r[0] * r[1] / (r[0] + r[1]);
        let f_n = 4.0 / 3.0 * e_star * r_star.sqrt() * overlap.powf(1.5);
        let k_t = 8.0 * g_star * (r_star * overlap).sqrt();
        let c = snap.contacts.as_ref().unwrap();
        let slots = c.slots as usize;
        let spring = (0..slots)
            .find(|&k| c.partner[k] == 1)
            .map_or(DVec3::ZERO, |k| c.spring[k]);
        if step == 0 {
            assert_eq!(spring, DVec3::ZERO);
        }
        let friction = -k_t * spring;
        let what = format!("{name} step {step} particle 0");
        assert_close(
            &format!("{what} force"),
            row.force,
            -f_n * n + friction,
            f_n,
        );
        assert_close(
            &format!("{what} moment"),
            row.moment,
            (r[0] - 0.5 * overlap) * n.cross(friction),
            f_n * r[0],
        );
        let f_t = k_t * spring.length();
        if (f_t - mu_d * f_n).abs() <= 1e-9 * mu_d * f_n {
            slipped.push(step);
        } else if f_t < mu_s * f_n {
            stuck.push(step);
        } else {
            panic!("step {step}: |f_t| = {f_t:e} neither sticks nor slides (f_n {f_n:e})");
        }
    }
    println!("{name}: pair 0-1 sticks at steps {stuck:?}, slides at {slipped:?}");
    assert!(
        stuck.len() >= 3 && slipped.len() >= 3 && stuck[1] < slipped[0],
        "stick {stuck:?}, slip {slipped:?}"
    );
}

/// walls.csv against the wall laws. `walls_binder`: at step 0, written out from the
/// scene, `F = Σ_walls (K/r) s^{3/2} n + m g`, `s = 1 − h/r` (the wall as a
/// zero-diameter partner, eq. 57), no moment; at every recorded step, the sum of
/// `physics::contact::binder_wall` and `binder_pair` and the field at the CPU's state.
/// `walls_hertz` at step 0: particle 0 rests on the rigid floor with no normal velocity
/// and no spring yet, `F = (4/3) E/(1 − ν²) √r δ^{3/2} ẑ + m g` (a rigid wall: `E* =
/// E/(1 − ν²)`, `r* = r`), no moment; particle 2 touches nothing, `F = m g`.
#[test]
fn walls_golden_obey_the_laws() {
    let table = golden(&FILES[2]);
    // Binder walls.
    let (name, steps) = FILES[2].scenes[0];
    let sc = scene(name);
    let m = &sc.model;
    let Some(varidem::model::ContactLaw::Binder { k_pp }) = m.contact.map(|c| c.law) else {
        panic!("{name}: binder law expected");
    };
    let p = &m.particles;
    let scale = scene_rows(&table, name)
        .filter(|(s, _, _)| *s == 0)
        .map(|(_, _, r)| r.force.length())
        .fold(0.0, f64::max);
    let mut touching = 0;
    for (step, i, row) in scene_rows(&table, name) {
        if step != 0 {
            continue;
        }
        let mut f = p.mass[i] * m.gravity;
        for w in &m.walls {
            let h = (p.position[i] - w.point).dot(w.normal);
            if h < p.radius[i] {
                touching += 1;
                let s = 1.0 - h / p.radius[i];
                f += w.stiffness / p.radius[i] * s.powf(1.5) * w.normal;
            }
        }
        assert_close(
            &format!("{name} step 0 particle {i} force"),
            row.force,
            f,
            scale,
        );
        assert_eq!(row.moment, DVec3::ZERO, "{name} step 0 particle {i} moment");
    }
    assert!(touching >= 3, "{name}: {touching} wall contacts at step 0");
    let mut cpu = CpuBackend::new(&sc).unwrap();
    for frame in frames(&mut cpu, steps) {
        let q = &frame.particles;
        let force: Vec<DVec3> = (0..q.len())
            .map(|i| {
                let mut f = DVec3::ZERO;
                for j in (0..q.len()).filter(|&j| j != i) {
                    let pair = contact::binder_pair(
                        k_pp,
                        q.position[i],
                        q.position[j],
                        q.radius[i],
                        q.radius[j],
                    );
                    f += pair.map_or(DVec3::ZERO, |(_, f)| f);
                }
                for w in &m.walls {
                    f += contact::binder_wall(w, q.position[i], q.radius[i])
                        .map_or(DVec3::ZERO, |(_, f)| f);
                }
                f + q.mass[i] * m.gravity
            })
            .collect();
        let scale = force.iter().map(|f| f.length()).fold(0.0, f64::max);
        for (i, f) in force.iter().enumerate() {
            let row = &table[&(name.to_string(), frame.step, i)];
            let what = format!("{name} step {} particle {i}", frame.step);
            assert_close(&format!("{what} force"), row.force, *f, scale);
            assert_eq!(row.moment, DVec3::ZERO, "{what} moment");
        }
    }
    // Hertz walls, step 0.
    let (name, _) = FILES[2].scenes[1];
    let sc = scene(name);
    let m = &sc.model;
    let p = &m.particles;
    let mat = &m.materials[p.material[0] as usize];
    let floor = &m.walls[0];
    assert!(floor.material.is_none() && p.velocity[0].dot(floor.normal) == 0.0);
    let (r, h) = (p.radius[0], floor.distance(p.position[0]));
    let overlap = r - h;
    let e_star = mat.young / (1.0 - mat.poisson * mat.poisson);
    let f_n = 4.0 / 3.0 * e_star * r.sqrt() * overlap.powf(1.5);
    let row = &table[&(name.to_string(), 0, 0)];
    let want = f_n * floor.normal + p.mass[0] * m.gravity;
    assert_close(
        &format!("{name} step 0 particle 0 force"),
        row.force,
        want,
        f_n,
    );
    assert_eq!(row.moment, DVec3::ZERO, "{name} step 0 particle 0 moment");
    let row = &table[&(name.to_string(), 0, 2)];
    assert_eq!(row.force, p.mass[2] * m.gravity, "{name} step 0 particle 2");
    assert_eq!(row.moment, DVec3::ZERO);
}
