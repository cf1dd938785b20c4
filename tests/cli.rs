//! The `varidem` binary end to end: `run` writes energy.csv with the documented header
//! and cadence and a final.csv equal bit for bit to the library's own run of the same
//! scene; bad scenes fail with exit code 1 and one line naming the key.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::io::{parse_scene, read_energy_csv, read_final_csv, FINAL_CSV_HEADER};

fn varidem(args: &[&str]) -> Output {
    varidem_env(args, &[])
}

fn scenes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

/// `scenes/pendulum.toml` shortened to `steps` steps with an energy row every `every`.
fn short_pendulum(steps: i64, every: i64) -> String {
    let text = std::fs::read_to_string(scenes().join("pendulum.toml")).unwrap();
    let mut doc: toml::Table = toml::from_str(&text).unwrap();
    let sim = doc["simulation"].as_table_mut().unwrap();
    assert!(sim.remove("t_end").is_some(), "pendulum.toml gives t_end");
    sim.insert("steps".into(), steps.into());
    sim.insert("output_every".into(), every.into());
    toml::to_string(&doc).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn run_writes_energy_rows_and_a_bitwise_final_state() {
    let dir = tempfile::tempdir().unwrap();
    for (steps, every, expected) in [
        (50, 20, vec![0.0, 20.0, 40.0, 50.0]),
        (40, 20, vec![0.0, 20.0, 40.0]),
    ] {
        let text = short_pendulum(steps, every);
        let scene_path = dir.path().join(format!("pendulum-{steps}.toml"));
        std::fs::write(&scene_path, &text).unwrap();
        let out = dir.path().join(format!("out-{steps}"));
        let o = varidem(&[
            "run",
            scene_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ]);
        assert!(o.status.success(), "varidem run failed: {}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains(&format!("{steps} steps")), "{stdout}");
        assert!(
            stdout.contains("energy.csv") && stdout.contains("final.csv"),
            "{stdout}"
        );

        let energy_text = std::fs::read_to_string(out.join("energy.csv")).unwrap();
        assert!(energy_text
            .lines()
            .next()
            .unwrap()
            .starts_with("step,t,e_kin,e_rot,e_pot,e_total,px,py,pz,lx,ly,lz"));
        let energy = read_energy_csv(&out.join("energy.csv")).unwrap();
        assert_eq!(energy.column("step").unwrap(), expected);
        let t = energy.column("t").unwrap();
        assert_eq!(*t.last().unwrap(), steps as f64 * 1e-3);
        // The pendulum's energy is nearly conserved over 50 steps.
        let e = energy.column("e_total").unwrap();
        assert!((e[e.len() - 1] - e[0]).abs() < 1e-6, "{e:?}");

        let final_text = std::fs::read_to_string(out.join("final.csv")).unwrap();
        assert_eq!(final_text.lines().next().unwrap(), FINAL_CSV_HEADER);
        let rows = read_final_csv(&out.join("final.csv")).unwrap();

        // The same scene, run by the library in one call.
        let scene = parse_scene(&text).unwrap();
        let mut cpu = CpuBackend::new(&scene).unwrap();
        cpu.advance(steps as u64).unwrap();
        let p = cpu.particles().unwrap();
        assert_eq!(rows.len(), p.len());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.id as usize, i);
            for (a, b) in [
                (r.position, p.position[i]),
                (r.velocity, p.velocity[i]),
                (r.rotation, p.rotation[i]),
                (r.angular_velocity, p.angular_velocity[i]),
            ] {
                for (x, y) in a.to_array().into_iter().zip(b.to_array()) {
                    assert_eq!(x.to_bits(), y.to_bits(), "particle {i}: {x:e} vs {y:e}");
                }
            }
        }
        // The pendulum has rotated away from its initial attitude.
        assert_ne!(rows[0].rotation, scene.model.particles.rotation[0]);
    }
}

#[test]
fn bad_scenes_fail_with_one_line_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            short_pendulum(50, 20).replace("mass = 1.0", "mass = -1.0"),
            "particle[0].mass = -1: must be > 0 and finite",
        ),
        (
            short_pendulum(50, 20).replace("[simulation]", "[simulation]\ntimestep = 1.0"),
            "unknown field `timestep`",
        ),
    ];
    for (k, (text, expected)) in cases.iter().enumerate() {
        assert!(text.contains("-1.0") || text.contains("timestep"), "{text}");
        let path = dir.path().join(format!("bad-{k}.toml"));
        std::fs::write(&path, text).unwrap();
        for args in [
            vec![
                "run",
                path.to_str().unwrap(),
                "--out",
                dir.path().to_str().unwrap(),
            ],
            vec!["check", path.to_str().unwrap()],
        ] {
            let o = varidem(&args);
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            let err = stderr(&o);
            let line = err
                .lines()
                .find(|l| l.starts_with("error: "))
                .unwrap_or_else(|| panic!("no error line in {err:?}"));
            assert!(line.contains(expected), "{line:?} lacks {expected:?}");
            assert!(
                line.contains(&format!("bad-{k}.toml")),
                "{line:?} lacks the file"
            );
        }
    }
    // A missing file is an error too.
    let o = varidem(&["check", dir.path().join("nope.toml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nope.toml"));
}

#[test]
fn check_prints_the_scene_contents() {
    let o = varidem(&[
        "check",
        scenes().join("torus-impact.toml").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("80 particles, 80 bonds, 1 wall,")
            && stdout.contains("35000 steps (t_end = 35 s)"),
        "{stdout}"
    );
}

/// `check` on a granular scene prints the Hertz collision duration (Campello eq. 50) and
/// the recommended time step. The figure is the shortest over the scene's material
/// pairs and walls at the speed eq. 50 assumes (for the three-spheres scene 4.66 ms);
/// it is an estimate, not the duration of a particular collision (the spheres' mutual
/// collision lasts 4.70 ms in `three_spheres_section_5_2`, the paper's 0.0047 s).
#[test]
fn check_prints_the_time_step_advice() {
    let o = varidem(&[
        "check",
        scenes().join("three-spheres.toml").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("t_col = 4.66")
            && stdout.contains("recommended dt <= t_col/20 = 2.33")
            && stdout.contains("46.7 steps per collision"),
        "{stdout}"
    );
}

/// `check` names the rolling-resistance model and each material's μ_r, and the heap
/// scene's time step is within the advice (no "TOO LARGE").
#[test]
fn check_prints_the_rolling_resistance() {
    let o = varidem(&[
        "check",
        scenes().join("rolling-heap.toml").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("rolling resistance: epsd (rolling_friction: glass 0.2)")
            && stdout.contains("steps per collision")
            && !stdout.contains("TOO LARGE"),
        "{stdout}"
    );
}

/// `check` names JKR cohesion, each material's surface energy and the largest pull-off
/// separation beside the skin.
#[test]
fn check_prints_the_jkr_cohesion() {
    let o = varidem(&[
        "check",
        scenes().join("cohesive-heap.toml").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(
            "cohesion: jkr (surface_energy: glass 0.05 J/m²); largest pull-off separation 2.564e-6 m"
        ) && stdout.contains("(skin 2.000e-4 m)"),
        "{stdout}"
    );
}

/// `check` on a scene of clumps only prints the advice too: a clump's spheres count
/// with their body's mass (the smallest, the trimer's 0.6 mm sphere, sets t_col).
#[test]
fn check_advises_a_time_step_for_clumps() {
    let o = varidem(&["check", scenes().join("clump-pour.toml").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("300 clumps") && stdout.contains("t_col = 2.3098e-4"),
        "{stdout}"
    );
    // `check` counts particles as `run` does: every sphere, a clump's included.
    let count = |text: &str, before: &str| -> u64 {
        let at = text.find(" particles").expect("a particle count");
        let head = &text[..at];
        let start = head.rfind(before).map_or(0, |p| p + before.len());
        head[start..]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{text}"))
    };
    let checked = count(&stdout, ": ");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scene = scenes().join("clump-pour.toml");
    let o = varidem(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--no-vtk",
        "--steps",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ran = String::from_utf8_lossy(&o.stdout);
    assert_eq!(count(&ran, " of "), checked, "{stdout}\n{ran}");
}

/// `run` warns when dt is above t_col/20.
#[test]
fn run_warns_about_a_large_granular_time_step() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenes().join("spinning-sphere.toml"))
        .unwrap()
        .replace("dt = 1e-4\nt_end = 5.0", "dt = 1e-3\nt_end = 0.01");
    let path = dir.path().join("coarse.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.path().join("out");
    let o = varidem(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--no-vtk",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("above the recommended t_col/20"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn info_lists_the_cpu_threads_and_the_adapters() {
    let o = varidem(&["info"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("CPU backend: f64 reference, "), "{stdout}");
    let adapters = varidem::gpu::context::list_adapters();
    if adapters.is_empty() {
        assert!(stdout.contains("no GPU adapter found"), "{stdout}");
        assert!(stdout.contains("mesa-vulkan-drivers"), "{stdout}");
    } else {
        assert!(
            stdout.contains(&format!("GPU adapters: {}", adapters.len())),
            "{stdout}"
        );
        for a in &adapters {
            assert!(stdout.contains(&a.name), "{stdout} lacks {}", a.name);
        }
        for key in [
            "backend:",
            "device type:",
            "driver:",
            "f64 (SHADER_F64):",
            "max storage-buffer binding size:",
            "max buffer size:",
            "storage buffers per stage:",
            "max invocations per workgroup:",
            "workgroup memory:",
        ] {
            assert!(stdout.contains(key), "{stdout} lacks {key}");
        }
    }
}

/// The number after `key` on the line of `text` that starts with it.
fn value_after(text: &str, key: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no line starting {key:?} in {text}"));
    line[key.len()..]
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[test]
fn bench_prints_the_throughput_of_the_bonded_block() {
    let o = varidem(&["bench", "--n", "1000", "--steps", "5", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("particle-steps/s: ")),
        "{stdout}"
    );
    assert!(value_after(&stdout, "particle-steps/s: ") > 0.0, "{stdout}");
    assert!(value_after(&stdout, "bond-steps/s: ") > 0.0, "{stdout}");
    assert_eq!(value_after(&stdout, "particles: "), 1000.0, "{stdout}");
    assert!(value_after(&stdout, "bonds: ") > 0.0, "{stdout}");
    assert!(stdout.contains("backend: cpu"), "{stdout}");
    // A simple cubic block: up to 6 lattice neighbours each, fewer at the faces.
    let listed = value_after(&stdout, "listed neighbours per particle: ");
    assert!((4.0..=6.5).contains(&listed), "{stdout}");

    // f32 on the CPU: it still runs (in f64), with a warning.
    let o = varidem(&[
        "bench",
        "--n",
        "8",
        "--steps",
        "1",
        "--backend",
        "cpu",
        "--precision",
        "f32",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("the CPU backend is the f64 reference"));
}

#[test]
fn run_on_the_gpu_in_f64_or_falls_back_to_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let text = short_pendulum(30, 10);
    let scene_path = dir.path().join("pendulum.toml");
    std::fs::write(&scene_path, &text).unwrap();
    let out = dir.path().join("out");
    let o = varidem(&[
        "run",
        scene_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "gpu",
        "--precision",
        "f64",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "varidem run failed: {err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let on_gpu = stdout.contains("on the gpu (") && stdout.contains(", f64) backend");
    let fell_back =
        stdout.contains("on the cpu backend") && err.contains("falling back to the CPU backend");
    assert!(
        on_gpu || fell_back,
        "neither on the GPU nor a warned fallback:\n{stdout}\n{err}"
    );
    // Where a GPU is required (CI), the fallback is a failure: the checks below would
    // then compare the CPU backend with itself. An adapter without SHADER_F64 (OpenGL)
    // must fall back, saying why, unless VARIDEM_REQUIRE_F64=1 makes that a failure too.
    let set = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
    let adapter = varidem::gpu::context::list_adapters().into_iter().next();
    if let Some(a) = adapter.filter(|a| !a.f64) {
        assert!(
            !set("VARIDEM_REQUIRE_F64"),
            "VARIDEM_REQUIRE_F64=1 but adapter {} has no SHADER_F64",
            a.name
        );
        assert!(fell_back && err.contains("SHADER_F64"), "{stdout}\n{err}");
        eprintln!(
            "run_on_the_gpu_in_f64_or_falls_back_to_the_cpu: adapter {} has no SHADER_F64: checked the fallback only",
            a.name
        );
        return;
    }
    if set("VARIDEM_REQUIRE_GPU") {
        assert!(
            on_gpu,
            "VARIDEM_REQUIRE_GPU=1 but the run fell back to the CPU:\n{stdout}\n{err}"
        );
    } else if fell_back {
        eprintln!("run_on_the_gpu_in_f64_or_falls_back_to_the_cpu: fell back to the CPU backend (no GPU check made); set VARIDEM_REQUIRE_GPU=1 to make this a failure");
    }

    let energy = read_energy_csv(&out.join("energy.csv")).unwrap();
    assert_eq!(energy.column("step").unwrap(), [0.0, 10.0, 20.0, 30.0]);
    let rows = read_final_csv(&out.join("final.csv")).unwrap();
    let scene = parse_scene(&text).unwrap();
    let mut cpu = CpuBackend::new(&scene).unwrap();
    cpu.advance(30).unwrap();
    let p = cpu.particles().unwrap();
    assert_eq!(rows.len(), p.len());
    // f64 kernels follow the f64 reference closely (the GPU parity tests are tighter).
    for (r, (a, w)) in rows.iter().zip(p.rotation.iter().zip(&p.angular_velocity)) {
        assert!((r.rotation - *a).length() <= 1e-9, "{r:?} vs {a}");
        assert!((r.angular_velocity - *w).length() <= 1e-9, "{r:?} vs {w}");
    }
}

#[test]
fn an_unknown_precision_fails_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let text = short_pendulum(10, 10).replace("[simulation]", "[simulation]\nprecision = \"f16\"");
    assert!(text.contains("f16"), "{text}");
    let path = dir.path().join("f16.toml");
    std::fs::write(&path, text).unwrap();
    for args in [
        vec![
            "run",
            path.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
            "--backend",
            "cpu",
        ],
        vec!["check", path.to_str().unwrap()],
        vec!["bench", path.to_str().unwrap(), "--backend", "cpu"],
    ] {
        let o = varidem(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        let line = err
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("no error line in {err:?}"));
        assert!(
            line.contains("f16.toml")
                && line.contains(
                    "simulation.precision = \"f16\": unknown precision (allowed: \"f32\", \"f64\")"
                ),
            "{line:?}"
        );
    }
}

/// A problem larger than the machine's memory is refused before it is allocated, with
/// what it needs and what is available, instead of the process being killed: a
/// generated bench of 10¹¹ particles (≈ 14 TiB of model alone), and a scene whose
/// `[[block]]` would hold 4·10⁹ particles.
#[test]
fn problems_larger_than_memory_are_refused_before_allocation() {
    let o = varidem(&[
        "bench",
        "--n",
        "100000000000",
        "--workload",
        "settling-bed",
        "--backend",
        "cpu",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("host memory: --n 100000000000") && err.contains("GiB is available"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    std::fs::write(
        &path,
        "[simulation]\ndt = 1e-3\nsteps = 1\n\
         [[block]]\norigin = [0.0, 0.0, 0.0]\ncounts = [1600, 1600, 1600]\nspacing = 1.0\n\
         radius = 0.4\ndensity = 1000.0\n",
    )
    .unwrap();
    let o = varidem(&["check", path.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("block[0]: a scene of 4096000000 particles needs at least"),
        "{err}"
    );
}

/// `varidem` with extra environment variables.
fn varidem_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varidem"))
        .args(args)
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("the varidem binary runs")
}

/// Whether this machine has a GPU adapter; under `VARIDEM_REQUIRE_GPU=1` a missing one
/// fails the calling test.
fn has_adapter(test: &str) -> bool {
    if !varidem::gpu::context::list_adapters().is_empty() {
        return true;
    }
    assert!(
        !std::env::var("VARIDEM_REQUIRE_GPU").is_ok_and(|v| v == "1"),
        "{test}: VARIDEM_REQUIRE_GPU=1 but no GPU adapter"
    );
    eprintln!("SKIPPED {test}: no GPU adapter");
    false
}

/// Portability issue, item 4: a device whose limits are below what a kernel needs (4
/// storage buffers per stage) or too small for the problem (1 KiB bindings) gives a
/// named error, never a panic: `bench --backend gpu` exits 1 with one `error:` line
/// naming the kernel or buffer and the limit; `run --backend gpu` falls back to the
/// CPU with a warning and still writes its outputs.
#[test]
fn gpu_limit_errors_are_named_and_never_panic() {
    if !has_adapter("gpu_limit_errors_are_named_and_never_panic") {
        return;
    }
    let bench = ["bench", "--backend", "gpu", "--n", "500", "--steps", "2"];
    for (limits, expect) in [
        (
            "minimum,storage_buffers=4",
            vec![
                "error: gpu: kernel ",
                "storage buffers per shader stage",
                "allows 4",
            ],
        ),
        (
            "minimum,binding_bytes=1024",
            vec![
                "error: gpu: the problem does not fit the device",
                "binds at most 1024 bytes",
            ],
        ),
    ] {
        let o = varidem_env(&bench, &[("VARIDEM_GPU_LIMITS", limits)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{limits}: {err}");
        assert!(!err.contains("panicked"), "{limits}: {err}");
        for e in expect {
            assert!(err.contains(e), "{limits}: {err} lacks {e:?}");
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let scene_path = dir.path().join("pendulum.toml");
    std::fs::write(&scene_path, short_pendulum(20, 10)).unwrap();
    let out = dir.path().join("out");
    let o = varidem_env(
        &[
            "run",
            scene_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "gpu",
        ],
        &[("VARIDEM_GPU_LIMITS", "minimum,storage_buffers=4")],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("falling back to the CPU backend"), "{err}");
    assert!(err.contains("storage buffers per shader stage"), "{err}");
    assert!(out.join("final.csv").exists());

    // A malformed request is named too.
    let o = varidem_env(&bench, &[("VARIDEM_GPU_LIMITS", "smallest")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("VARIDEM_GPU_LIMITS=smallest"),
        "{}",
        stderr(&o)
    );
}

/// Item 4 for `render`: a picture larger than the device's textures (a device opened
/// with 32-pixel textures) is a named error with exit code 1, not a panic (the other
/// GPU errors of `render` go through error scopes: `Error::Gpu`).
#[test]
fn render_errors_are_named_and_never_panic() {
    if !has_adapter("render_errors_are_named_and_never_panic") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scene_path = dir.path().join("pendulum.toml");
    std::fs::write(&scene_path, short_pendulum(10, 10)).unwrap();
    let out = dir.path().join("out");
    let o = varidem(&[
        "run",
        scene_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = varidem_env(
        &[
            "render",
            out.to_str().unwrap(),
            "--width",
            "64",
            "--height",
            "48",
        ],
        &[("VARIDEM_GPU_LIMITS", "minimum,texture_size=32")],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(
            "error: render: a 64×48 picture does not fit the adapter (1 to 32 pixels a side)"
        ),
        "{err}"
    );
}

/// Item 5: `info` says whether each adapter meets varidem's minimum limits and prints
/// none of lavapipe's `XDG_RUNTIME_DIR` complaints, even without that variable.
#[test]
fn info_checks_the_minimum_limits_quietly() {
    let o = Command::new(env!("CARGO_BIN_EXE_varidem"))
        .arg("info")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!all.contains("XDG_RUNTIME_DIR"), "{all}");
    assert!(
        all.contains("varidem's minimum: 16 storage buffers per shader stage"),
        "{all}"
    );
    for a in varidem::gpu::context::list_adapters() {
        let verdict = if a.shortfalls.is_empty() {
            "yes".to_string()
        } else {
            format!("no: {}", a.shortfalls.join("; "))
        };
        assert!(all.contains(&verdict), "{all} lacks {verdict}");
    }
}

/// `--adapter` also takes a backend: `gl` picks an OpenGL adapter (listed with
/// ` (OpenGL)` after its name, since Mesa's llvmpipe has one name through Vulkan and
/// OpenGL) and `vulkan` a Vulkan one, each when `info` lists one; otherwise the error
/// names the adapters there are.
#[test]
fn an_adapter_can_be_picked_by_its_backend() {
    if !has_adapter("an_adapter_can_be_picked_by_its_backend") {
        return;
    }
    let adapters = varidem::gpu::context::list_adapters();
    for (flag, backend) in [("gl", "OpenGL"), ("vulkan", "Vulkan")] {
        let bench = [
            "bench",
            "--backend",
            "gpu",
            "--adapter",
            flag,
            "--n",
            "200",
            "--steps",
            "1",
        ];
        let o = varidem(&bench);
        let stdout = String::from_utf8_lossy(&o.stdout);
        match adapters.iter().find(|a| a.backend == backend) {
            Some(a) => {
                assert!(o.status.success(), "{flag}: {}", stderr(&o));
                assert!(
                    stdout.contains(&format!("backend: gpu ({}, f32)", a.name)),
                    "{flag}: {stdout}"
                );
                assert_eq!(a.name.ends_with(" (OpenGL)"), backend == "OpenGL");
            }
            None => {
                assert_eq!(o.status.code(), Some(1), "{flag}: {stdout}");
                assert!(
                    stderr(&o).contains(&format!("no adapter matches '{flag}'")),
                    "{flag}: {}",
                    stderr(&o)
                );
            }
        }
    }
}

/// `scenes/hopper.toml` through the binary, shortened to 0.02 s (the beads are still
/// falling into the hopper): it reads its STL relative to the scene, writes
/// `walls.csv` with the gate and the hopper at every output step, on either backend;
/// `--backend gpu --precision f64` ends in the CPU's `final.csv` to the bit (or falls
/// back to the CPU, with a warning, on an adapter without f64).
#[test]
fn a_mesh_scene_runs_and_writes_walls_csv_on_either_backend_choice() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenes().join("hopper.toml"))
        .unwrap()
        .replace("t_end = 1.5", "t_end = 0.02")
        .replace("output_every = 3000", "output_every = 500")
        .replace(
            "meshes/hopper.stl",
            &scenes().join("meshes/hopper.stl").display().to_string(),
        );
    let scene = dir.path().join("hopper.toml");
    std::fs::write(&scene, text).unwrap();
    let mut finals = Vec::new();
    for backend in ["cpu", "gpu"] {
        if backend == "gpu"
            && !has_adapter("a_mesh_scene_runs_and_writes_walls_csv_on_either_backend_choice")
        {
            continue;
        }
        let out = dir.path().join(backend);
        let o = varidem(&[
            "run",
            scene.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
            "--precision",
            "f64",
            "--no-vtk",
        ]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        // The GPU runs meshes: a fallback may only be for want of f64.
        let err = stderr(&o);
        assert!(
            !err.contains("falling back") || err.contains("f64") || err.contains("F64"),
            "{err}"
        );
        let csv = std::fs::read_to_string(out.join("walls.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("step,t,wall,fx,fy,fz,mx,my,mz"));
        let rows: Vec<&str> = lines.collect();
        // Steps 0, 500, …, 1333 (0.02 s at 1.5e-5 s): 4 output steps, 2 walls each.
        assert_eq!(rows.len(), 8, "{csv}");
        assert!(rows[0].starts_with("0,0.0000000000000000e0,wall[0],"));
        assert!(rows[1].starts_with("0,0.0000000000000000e0,hopper,"));
        finals.push(std::fs::read(out.join("final.csv")).unwrap());
    }
    if finals.len() == 2 {
        assert!(
            finals[0] == finals[1],
            "GPU f64 final.csv differs from the CPU's"
        );
    }
}

/// `bench --workload poured-bed` (issue 27): the first run pours and caches the bed in
/// `VARIDEM_CACHE_DIR`, the next reads it; both backends time stepping from it (the
/// GPU restores the CPU's settled state) and report the bed's contacts.
#[test]
fn bench_poured_bed_pours_once_then_reads_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let args = [
        "bench",
        "--workload",
        "poured-bed",
        "--n",
        "300",
        "--steps",
        "5",
        "--backend",
        "cpu",
    ];
    let first = varidem_env(&args, &[("VARIDEM_CACHE_DIR", cache)]);
    let out = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(out.contains("bed: poured and cached in"), "{out}");
    assert!(out.contains("particles: 300"), "{out}");
    assert!(
        out.contains("contacts per particle (walls included): "),
        "{out}"
    );
    let mut backends = vec!["cpu"];
    if has_adapter("bench_poured_bed_pours_once_then_reads_the_cache") {
        backends.push("gpu");
    }
    for backend in backends {
        let mut args = args;
        args[8] = backend;
        let again = varidem_env(&args, &[("VARIDEM_CACHE_DIR", cache)]);
        let out = String::from_utf8_lossy(&again.stdout);
        assert!(
            again.status.success(),
            "{out}{}",
            String::from_utf8_lossy(&again.stderr)
        );
        assert!(out.contains("bed: read from"), "{out}");
        assert!(out.contains(&format!("backend: {backend}")), "{out}");

        // Issue 43: a larger bed tiled from the cached one, and where its GPU time
        // goes (the CPU says it measures none).
        let tiled = [
            "bench",
            "--workload",
            "poured-bed",
            "--n",
            "1200",
            "--tile-from",
            "300",
            "--steps",
            "3",
            "--profile-steps",
            "2",
            "--backend",
            backend,
        ];
        let o = varidem_env(&tiled, &[("VARIDEM_CACHE_DIR", cache)]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.contains("bed: 2 × 2 copies of the settled bed of 300 spheres: 1200 spheres"),
            "{out}"
        );
        assert!(out.contains("particles: 1200"), "{out}");
        assert!(
            out.contains("contacts per particle between spheres: "),
            "{out}"
        );
        if backend == "cpu" {
            assert!(
                out.contains("gpu time per step: not measured (the CPU backend)"),
                "{out}"
            );
        } else {
            assert!(
                out.contains("gpu time per step: ") && out.contains("over 2 profiled steps"),
                "{out}"
            );
            assert!(out.contains("gpu time, contacts: "), "{out}");
            assert!(out.contains("gpu time, predict: "), "{out}");
        }
    }
    let o = varidem_env(
        &[
            "bench",
            "--workload",
            "block",
            "--n",
            "100",
            "--tile-from",
            "50",
            "--backend",
            "cpu",
        ],
        &[("VARIDEM_CACHE_DIR", cache)],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--tile-from tiles the poured bed"),
        "{}",
        stderr(&o)
    );
}

/// `run --steps N` (issue 43) stops a scene after N steps, and run.toml records the
/// shortened run; the summary's time has no float noise (9 · 10⁻³ is
/// 0.009000000000000001 in f64; issue 49 item 12).
#[test]
fn run_steps_shortens_a_scene() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scene = scenes().join("torus-impact.toml");
    let o = varidem(&[
        "run",
        scene.to_str().unwrap(),
        "--steps",
        "9",
        "--out",
        out.to_str().unwrap(),
        "--no-vtk",
        "--backend",
        "cpu",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", stderr(&o));
    assert!(text.starts_with("9 steps (t = 0.009 s)"), "{text}");
    let record = std::fs::read_to_string(out.join("run.toml")).unwrap();
    assert!(record.contains("steps = 9"), "{record}");
}

/// Usage errors (issue 49, item 9) exit 1 with one `error:` line, as README promises
/// for every error; `--help` and `--version` still exit 0.
#[test]
fn usage_errors_are_one_error_line_and_exit_1() {
    for (args, want) in [
        (
            vec!["run", "--frobnicate"],
            "unexpected argument '--frobnicate'",
        ),
        (
            vec!["bench", "--workload", "nope"],
            "[possible values: bonded-block",
        ),
        (vec!["run", "--steps", "0"], "--steps"),
        (
            vec!["resume"],
            "required arguments were not provided: --out <DIR>, <CHECKPOINT>",
        ),
        (vec!["resume", "c.vdc"], "--out <DIR>"),
        (vec![], "a command is required: run, resume, check"),
    ] {
        let o = varidem(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{args:?}: {err}"
        );
    }
    for args in [vec!["--version"], vec!["run", "--help"]] {
        let o = varidem(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty());
    }
}

/// Issue 49, item 1: `resume` into another run's directory is refused before anything
/// is written, naming the checkpoint and the directory's record; into the run's own
/// directory or an empty one it goes on (in place, the same bytes as the uninterrupted
/// run).
#[test]
fn resume_refuses_another_runs_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let run = |scene: &str, out: &Path, extra: &[&str]| {
        let path = scenes().join(scene);
        let mut args = vec![
            "run",
            path.to_str().unwrap(),
            "--steps",
            "300",
            "--out",
            out.to_str().unwrap(),
            "--no-vtk",
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        let o = varidem(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run("torus-impact.toml", &a, &["--checkpoint-every", "100"]);
    run("pendulum.toml", &b, &[]);
    let read = |p: &Path| std::fs::read(p).unwrap();
    let (b_energy, a_energy, a_final) = (
        read(&b.join("energy.csv")),
        read(&a.join("energy.csv")),
        read(&a.join("final.csv")),
    );
    let ckpt = a.join("checkpoints").join("checkpoint_00000100.vdc");
    let resume = |out: &Path| {
        varidem(&[
            "resume",
            ckpt.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-vtk",
            "--backend",
            "cpu",
        ])
    };
    let o = resume(&b);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("checkpoint_00000100.vdc") && err.contains("run.toml"),
        "{err}"
    );
    assert!(err.contains("another run"), "{err}");
    assert_eq!(
        read(&b.join("energy.csv")),
        b_energy,
        "b's outputs were touched"
    );

    let o = resume(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(&a.join("energy.csv")), a_energy);
    assert_eq!(read(&a.join("final.csv")), a_final);
    let o = resume(&c);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(&c.join("final.csv")), a_final);

    // Outputs without a record cannot be told to be the run's: refused too.
    let d = dir.path().join("d");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("energy.csv"), "step,t\n").unwrap();
    let o = resume(&d);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no run.toml"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("energy.csv")).unwrap(),
        "step,t\n"
    );
}

/// Issue 49, item 1: two runs of the same scene are still two runs: the run identity in
/// checkpoints and `run.toml` refuses a resume into the other one's directory, which
/// the scene alone could not tell apart.
#[test]
fn resume_tells_two_runs_of_one_scene_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let path = scenes().join("pendulum.toml");
    for out in [&a, &b] {
        let o = varidem(&[
            "run",
            path.to_str().unwrap(),
            "--steps",
            "200",
            "--out",
            out.to_str().unwrap(),
            "--no-vtk",
            "--checkpoint-every",
            "100",
            "--backend",
            "cpu",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let record = |d: &Path| std::fs::read_to_string(d.join("run.toml")).unwrap();
    let id = |d: &Path| {
        let r = record(d);
        let line = r.lines().find(|l| l.starts_with("run_id = ")).unwrap();
        line.to_owned()
    };
    assert_ne!(id(&a), id(&b), "two runs drew the same identity");
    let b_energy = std::fs::read(b.join("energy.csv")).unwrap();
    let ckpt = a.join("checkpoints").join("checkpoint_00000100.vdc");
    let o = varidem(&[
        "resume",
        ckpt.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let theirs = id(&b)
        .trim_start_matches("run_id = ")
        .trim_matches('"')
        .to_owned();
    let ours = id(&a)
        .trim_start_matches("run_id = ")
        .trim_matches('"')
        .to_owned();
    assert!(err.contains(&theirs) && err.contains(&ours), "{err}");
    assert_eq!(std::fs::read(b.join("energy.csv")).unwrap(), b_energy);

    // A checkpoint without an identity (format 8 and older, or taken by a program
    // outside a run) cannot show it belongs to b's run: refused too, into an empty
    // directory accepted.
    let mut anon = varidem::checkpoint::Checkpoint::read(&ckpt).unwrap();
    anon.run_id = None;
    let anon_path = dir.path().join("anon.vdc");
    anon.write(&anon_path).unwrap();
    let resume_anon = |out: &Path| {
        varidem(&[
            "resume",
            anon_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ])
    };
    let o = resume_anon(&b);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&theirs) && err.contains("no run identity"),
        "{err}"
    );
    assert_eq!(std::fs::read(b.join("energy.csv")).unwrap(), b_energy);
    let o = resume_anon(&dir.path().join("fresh"));
    assert!(o.status.success(), "{}", stderr(&o));

    // Resumed in place, the run keeps its identity and its --no-vtk (no flag given).
    let o = varidem(&[
        "resume",
        ckpt.to_str().unwrap(),
        "--out",
        a.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(record(&a).contains(&ours), "{}", record(&a));
    assert!(record(&a).contains("vtk = false"), "{}", record(&a));
    assert!(!a.join("vtk").exists() && !a.join("particles.pvd").exists());

    // run.toml is a scene file as it is: check and run accept it.
    let rec = a.join("run.toml");
    let o = varidem(&["check", rec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = dir.path().join("c");
    let o = varidem(&[
        "run",
        rec.to_str().unwrap(),
        "--steps",
        "10",
        "--out",
        c.to_str().unwrap(),
        "--no-vtk",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 49, item 1: a file that is not a checkpoint fails on its header at once, in
/// bounded memory: `/dev/zero` used to be read until memory ran out.
#[test]
fn resume_of_an_endless_file_fails_on_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let o = varidem(&[
        "resume",
        "/dev/zero",
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("not a varidem checkpoint"),
        "{err}"
    );
    assert!(
        start.elapsed().as_secs_f64() < 10.0,
        "{:?}",
        start.elapsed()
    );
}

/// Issue 49, item 1: `render` reads only the frames of the run the directory's record
/// describes: a `--no-vtk` run draws its final.csv, not frames another run left.
#[test]
fn render_ignores_frames_a_no_vtk_run_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let run = |scene: &str, out: &Path, vtk: bool| {
        let path = scenes().join(scene);
        let mut args = vec![
            "run",
            path.to_str().unwrap(),
            "--steps",
            "20",
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ];
        if !vtk {
            args.push("--no-vtk");
        }
        let o = varidem(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run("torus-impact.toml", &a, true);
    run("pendulum.toml", &b, false);
    // Frames of another run planted where b has none.
    std::fs::create_dir_all(b.join("vtk")).unwrap();
    for e in std::fs::read_dir(a.join("vtk")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), b.join("vtk").join(e.file_name())).unwrap();
    }
    let png = dir.path().join("b.png");
    let o = varidem(&[
        "render",
        b.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
        "--width",
        "64",
        "--height",
        "48",
    ]);
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{all}");
    assert!(all.contains("final.csv"), "{all}");
    assert!(!all.contains(".vtp"), "{all}");
}

/// Issue 49, item 12: removals are summarised, a line per output step that removed
/// some, not a line per particle (the hopper printed 887).
#[test]
fn removals_are_summarised_per_output_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "[simulation]\ndt = 1e-3\nsteps = 30\noutput_every = 10\n\
         [domain]\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, 1.0, 1.0]\non_exit = \"remove\"\n",
    );
    // 12 spheres leave through x = 1 between steps 5 and 16, at 100 m/s.
    for k in 0..12 {
        let x = 0.5 + 0.1 * k as f64 / 12.0;
        text.push_str(&format!(
            "[[particle]]\nposition = [{x}, {}, 0.0]\nvelocity = [{}, 0.0, 0.0]\nmass = 1.0\nradius = 0.01\n",
            -0.9 + 0.1 * k as f64,
            50.0 + 2.0 * k as f64
        ));
    }
    let scene = dir.path().join("leave.toml");
    std::fs::write(&scene, text).unwrap();
    let out = dir.path().join("out");
    let o = varidem_env(
        &[
            "run",
            scene.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
            "--no-vtk",
        ],
        &[("RUST_LOG", "info")],
    );
    let log = stderr(&o);
    assert!(o.status.success(), "{log}");
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("left the domain"))
        .collect();
    assert!(
        !lines.is_empty() && lines.len() <= 3,
        "one line per output step: {lines:?}"
    );
    assert!(lines.last().unwrap().contains("(12 in all)"), "{lines:?}");
}

/// Issue 49, item 9: `--out` naming a file says so (it said `DIR/energy.csv: Not a
/// directory`), on run and resume, before anything is set up; and a reader of stdout
/// that goes away (`varidem check … | head -1`) ends the command quietly, no panic.
#[test]
fn out_naming_a_file_says_so_and_a_closed_stdout_is_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    for out in [file.clone(), file.join("sub")] {
        let o = varidem(&["run", "--out", out.to_str().unwrap(), "--backend", "cpu"]);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(e.contains(&format!("{}: is a file", file.display())), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");

    use std::io::Read as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_varidem"))
        .args(["check", scenes().join("pour.toml").to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the pipe before the command writes: its first line meets a broken pipe.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
}

/// Issue 49, item 6: `render` draws a `--no-vtk` run of clumps from its final.csv, one
/// row per body, each clump as its spheres posed by its body (here the 300 dimers and
/// trimers of clump-pour, 750 spheres).
#[test]
fn render_draws_a_no_vtk_clump_run() {
    if !has_adapter("render_draws_a_no_vtk_clump_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scene = scenes().join("clump-pour.toml");
    let o = varidem(&[
        "run",
        scene.to_str().unwrap(),
        "--steps",
        "20",
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--no-vtk",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.join("vtk").exists());
    let rows = read_final_csv(&out.join("final.csv")).unwrap();
    assert_eq!(rows.len(), 300, "one row per clump");
    let png = dir.path().join("clumps.png");
    let o = varidem(&[
        "render",
        out.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
        "--width",
        "160",
        "--height",
        "120",
    ]);
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{all}");
    assert!(all.contains("step 20"), "{all}");
    assert!(
        all.contains("750 particles from") && all.contains("final.csv"),
        "{all}"
    );
    // The picture decodes to its size and shows spheres: many pixels off the background.
    let file = std::fs::File::open(&png).unwrap();
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (160, 120));
    let channels = info.color_type.samples();
    let drawn = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .filter(|px| px[..3] != varidem::render::BACKGROUND)
        .count();
    assert!(
        drawn > 160 * 120 / 20,
        "{drawn} of {} pixels drawn",
        160 * 120
    );
}

/// Issue 49, item 11: `varidem run` of a scene whose time step is ~100 collision
/// durations long (two beads head on, `on_exit = "remove"`) exits 1 with one `error:`
/// line naming the step, the pair and the time step `varidem check` recommends, the
/// figure `check` prints; the outputs are kept and the last good state saved.
#[test]
fn a_far_too_large_time_step_fails_naming_the_recommended_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("head-on.toml");
    std::fs::write(&path, common::overlap::head_on("")).unwrap();
    let check = varidem(&["check", path.to_str().unwrap()]);
    assert!(check.status.success(), "{}", stderr(&check));
    let text = String::from_utf8_lossy(&check.stdout).into_owned();
    let recommended = text
        .split("recommended dt <= t_col/20 = ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap_or_else(|| panic!("no recommendation in {text}"))
        .trim_end_matches(';')
        .to_owned();
    let out = dir.path().join("out");
    let o = varidem(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(
        line.starts_with("error: step 1, particles 0 and 1 overlap by 150 % of the smaller radius")
            && line.contains(&format!("varidem check recommends dt <= {recommended} s"))
            && line.contains("varidem resume"),
        "{line:?} (check said {recommended})"
    );
    assert!(out.join("energy.csv").is_file() && out.join("final.csv").is_file());
}

/// Issue 49, item 9: a mesh too large for the GPU's storage bindings is named in the
/// error (here a 4 608-triangle floor against bindings of 64 KiB, requested through
/// `VARIDEM_GPU_LIMITS`; the run then falls back to the CPU as documented).
#[test]
fn a_mesh_too_large_for_the_gpu_is_named() {
    if !has_adapter("a_mesh_too_large_for_the_gpu_is_named") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let n: u32 = 48;
    let mut stl = vec![0u8; 80];
    stl.extend_from_slice(&(2 * n * n).to_le_bytes());
    let at = |i: u32| i as f32 / n as f32 - 0.5;
    for i in 0..n {
        for j in 0..n {
            let c = [
                (at(i), at(j)),
                (at(i + 1), at(j)),
                (at(i + 1), at(j + 1)),
                (at(i), at(j + 1)),
            ];
            for t in [[0, 1, 2], [0, 2, 3]] {
                for x in [0.0f32, 0.0, 1.0] {
                    stl.extend_from_slice(&x.to_le_bytes());
                }
                for k in t {
                    for x in [c[k].0, c[k].1, 0.0] {
                        stl.extend_from_slice(&x.to_le_bytes());
                    }
                }
                stl.extend_from_slice(&[0, 0]);
            }
        }
    }
    std::fs::write(dir.path().join("floor.stl"), stl).unwrap();
    let scene = dir.path().join("floor.toml");
    std::fs::write(
        &scene,
        "[simulation]\ndt = 1e-5\nsteps = 1\n[contact]\nlaw = \"hertz\"\n\
         [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\nrestitution = 0.5\nfriction_static = 0.4\n\
         [[particle]]\nposition = [0.0, 0.0, 0.01]\nradius = 0.002\nmaterial = \"glass\"\n\
         [[mesh]]\nfile = \"floor.stl\"\nname = \"floor\"\nmaterial = \"glass\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = varidem_env(
        &[
            "run",
            scene.to_str().unwrap(),
            "--backend",
            "gpu",
            "--no-vtk",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("VARIDEM_GPU_LIMITS", "adapter,binding_bytes=65536")],
    );
    let e = stderr(&o);
    assert!(
        e.contains("does not fit the device") && e.contains("mesh[0] (floor) 4608 triangles"),
        "{e}"
    );
}

/// Issue 49, item 13: README's synopsis lists every flag of every command, so a flag
/// added later (as `bench --sort-every` was) cannot go missing from it again.
#[test]
fn readme_synopsis_lists_every_flag() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for command in ["run", "resume", "check", "info", "bench", "plot", "render"] {
        let prefix = format!("varidem {command}");
        let line = readme
            .lines()
            .find(|l| *l == prefix || l.starts_with(&format!("{prefix} ")))
            .unwrap_or_else(|| panic!("README has no synopsis line for `{prefix}`"));
        let o = varidem(&[command, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        // The options are the help's lines that start with a flag (`-s, --long <V>`).
        let flags: Vec<&str> = (help.lines().map(str::trim_start))
            .filter(|l| l.starts_with("--") || l.get(2..4) == Some(", "))
            .filter_map(|l| l.split([' ', ',', '=']).find(|w| w.starts_with("--")))
            .filter(|f| !["--help", "--version"].contains(f))
            .collect();
        assert!(
            !flags.is_empty() || command == "check" || command == "info",
            "{command}: {help}"
        );
        for flag in flags {
            assert!(
                line.split(|c: char| !(c.is_alphanumeric() || c == '-'))
                    .any(|w| w == flag),
                "README's synopsis of `{prefix}` lacks {flag}: {line}"
            );
        }
    }
}
