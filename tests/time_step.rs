//! Output by time and an automatic time step (issue 50 item 4): `[simulation]
//! output_interval` and `checkpoint_interval` (seconds) beside `output_every` and
//! `checkpoint_every` (steps), and `dt = "auto"`, the step `varidem check` recommends
//! (Campello eq. 50: the Hertz collision time / 20), at the scene's largest expected
//! impact speed or at `auto_dt_velocity`.

use std::path::PathBuf;
use std::process::Command;

use varidem::io::{parse_scene, scene_to_toml};
use varidem::model::Scene;
use varidem::physics::granular::{time_step_advice, time_step_advice_at};

/// A glass bead 5 cm above a floor under gravity, with `simulation` lines added and
/// `dt` as given (`dt = 1e-5`, `dt = "auto"`).
fn bead(dt: &str, simulation: &str, extra: &str) -> String {
    format!(
        r#"
[simulation]
{dt}
t_end = 0.01
gravity = [0.0, 0.0, -9.81]
{simulation}

[contact]
law = "hertz"

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.5
friction_static = 0.5
friction_dynamic = 0.4

[[particle]]
position = [0.0, 0.0, 0.05]
radius = 0.002
material = "glass"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
{extra}
"#
    )
}

fn scene(text: &str) -> Scene {
    parse_scene(text).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    match parse_scene(text) {
        Ok(_) => panic!("the scene parsed:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// `dt = "auto"` is the step `check` recommends for the same scene with any step: the
/// bead's fall of 4.8 cm gives √(2 g h) ≈ 0.97 m/s against the floor.
#[test]
fn auto_is_the_recommended_step() {
    let fixed = scene(&bead("dt = 1e-5", "", ""));
    let advice = time_step_advice(&fixed.model).unwrap();
    let auto = scene(&bead("dt = \"auto\"", "", ""));
    assert_eq!(auto.simulation.dt, advice.dt_max);
    let fall = (2.0 * 9.81 * 0.048f64).sqrt();
    assert!((advice.v_rel - fall).abs() < 1e-12, "{}", advice.v_rel);
    // t_end stays the run's length: the steps follow the step.
    assert_eq!(
        auto.simulation.steps(),
        (0.01 / advice.dt_max).round() as u64
    );
}

/// At `auto_dt_velocity` the step follows the Hertz collision time, `t ∝ v^(-1/5)`
/// (Campello eq. 50): twice the speed, 2^(-1/5) the step (to rounding: 1e-12).
#[test]
fn auto_dt_velocity_sets_the_impact_speed() {
    let at = |v: f64| {
        scene(&bead(
            "dt = \"auto\"",
            &format!("auto_dt_velocity = {v}"),
            "",
        ))
        .simulation
        .dt
    };
    let (one, two) = (at(1.0), at(2.0));
    let ratio = two / one;
    assert!((ratio - 2f64.powf(-0.2)).abs() < 1e-12, "{ratio}");
    let model = scene(&bead("dt = 1e-5", "", "")).model;
    assert_eq!(one, time_step_advice_at(&model, Some(1.0)).unwrap().dt_max);
}

/// A moving wall's surface speed counts: a bead at rest without gravity beside a plane
/// sliding at 3 m/s collides at 3 m/s, and at 3 + 2·0.5 m/s once the plane also turns
/// at 2 rad/s about an axis 0.5 m from the bead.
#[test]
fn moving_walls_count_in_the_impact_speed() {
    let wall = |motion: &str| {
        let text = bead("dt = 1e-5", "", "").replace("gravity = [0.0, 0.0, -9.81]", "")
            + &format!(
                "\n[[wall]]\npoint = [0.0, 0.0, 0.2]\nnormal = [0.0, 0.0, -1.0]\nmaterial = \"glass\"\n{motion}\n"
            );
        time_step_advice(&scene(&text).model).map(|a| a.v_rel)
    };
    assert_eq!(wall(""), None, "nothing moves");
    assert_eq!(wall("velocity = [3.0, 0.0, 0.0]"), Some(3.0));
    let turning = wall(
        "velocity = [3.0, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, 2.0]\naxis_point = [0.5, 0.0, 0.05]",
    )
    .unwrap();
    assert!((turning - 4.0).abs() < 1e-12, "{turning}");
}

/// What `dt = "auto"` cannot do is refused, naming the key and what to give instead.
#[test]
fn auto_refusals_name_the_key() {
    let e = error(&bead("dt = \"fast\"", "", ""));
    assert!(
        e.contains("simulation.dt = \"fast\"") && e.contains("\"auto\""),
        "{e}"
    );
    let e = error(&bead("dt = 1e-5", "auto_dt_velocity = 2.0", ""));
    assert!(
        e.contains("simulation.auto_dt_velocity: only read with dt = \"auto\""),
        "{e}"
    );
    let e = error(&bead("dt = \"auto\"", "auto_dt_velocity = -1.0", ""));
    assert!(
        e.contains("simulation.auto_dt_velocity = -1: must be > 0"),
        "{e}"
    );
    // Nothing moves: no gravity, no velocity, no inserter.
    let still = bead("dt = \"auto\"", "", "").replace("gravity = [0.0, 0.0, -9.81]", "");
    let e = error(&still);
    assert!(e.contains("give auto_dt_velocity"), "{e}");
    // No Hertz law.
    let e = error(
        "[simulation]\ndt = \"auto\"\nsteps = 10\n[[particle]]\nposition = [0.0, 0.0, 0.0]\nmass = 1.0\nradius = 0.1\n",
    );
    assert!(
        e.contains("law = \"hertz\"") && e.contains("give dt"),
        "{e}"
    );
}

/// Intervals in seconds become whole steps (rounded, at least one); giving a quantity
/// both ways is refused; the resolved scene (run.toml) reads back the same.
#[test]
fn intervals_become_steps() {
    let s = scene(&bead(
        "dt = 1e-5",
        "output_interval = 0.0010000001\ncheckpoint_interval = 0.002",
        "",
    ));
    assert_eq!(s.simulation.output_every, 100);
    assert_eq!(s.simulation.checkpoint_every, Some(200));
    let tiny = scene(&bead("dt = 1e-5", "output_interval = 1e-9", ""));
    assert_eq!(tiny.simulation.output_every, 1);
    assert_eq!(
        scene(&bead("dt = 1e-5", "checkpoint_every = 7", ""))
            .simulation
            .checkpoint_every,
        Some(7)
    );
    assert_eq!(
        scene(&bead("dt = 1e-5", "", ""))
            .simulation
            .checkpoint_every,
        None
    );
    let e = error(&bead(
        "dt = 1e-5",
        "output_every = 10\noutput_interval = 0.001",
        "",
    ));
    assert!(
        e.contains("output_every (steps) and output_interval (s) are both given"),
        "{e}"
    );
    let e = error(&bead(
        "dt = 1e-5",
        "checkpoint_every = 10\ncheckpoint_interval = 0.001",
        "",
    ));
    assert!(
        e.contains("checkpoint_every (steps) and checkpoint_interval (s)"),
        "{e}"
    );
    let e = error(&bead("dt = 1e-5", "checkpoint_interval = 0.0", ""));
    assert!(
        e.contains("simulation.checkpoint_interval = 0: must be > 0"),
        "{e}"
    );
    let back = scene(&scene_to_toml(&s));
    assert_eq!(back.simulation, s.simulation);
    let auto = scene(&bead("dt = \"auto\"", "output_interval = 0.002", ""));
    assert_eq!(scene(&scene_to_toml(&auto)).simulation, auto.simulation);
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("varidem_time_step_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `varidem run` writes a checkpoint every `checkpoint_interval` of the scene without
/// being asked on the command line, and `--checkpoint-every` overrides it (0: none).
#[test]
fn the_scene_asks_for_checkpoints() {
    let dir = temp_dir("checkpoints");
    let path = dir.join("bead.toml");
    std::fs::write(&path, bead("dt = 1e-5", "checkpoint_interval = 0.004", "")).unwrap();
    let run = |out: &str, extra: &[&str]| {
        let status = Command::new(env!("CARGO_BIN_EXE_varidem"))
            .args([
                "run",
                path.to_str().unwrap(),
                "--backend",
                "cpu",
                "--no-vtk",
            ])
            .args(["--out", dir.join(out).to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let mut names: Vec<String> = std::fs::read_dir(dir.join(out).join("checkpoints"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    assert_eq!(
        run("scene", &[]),
        ["checkpoint_00000400.vdc", "checkpoint_00000800.vdc"]
    );
    assert_eq!(
        run("flag", &["--checkpoint-every", "500"]),
        ["checkpoint_00000500.vdc", "checkpoint_00001000.vdc"]
    );
    assert!(run("off", &["--checkpoint-every", "0"]).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scene that pours only clumps from an inserter: its spheres count with the clump's
/// mass, so `dt = "auto"` is a positive step (a clump inserter has no density of its
/// own: its spheres once counted as massless, which made the estimate 0).
#[test]
fn auto_step_of_a_clump_inserter_is_positive() {
    let text = bead("dt = \"auto\"", "", "")
        .replace(
            "[[particle]]\nposition = [0.0, 0.0, 0.05]\nradius = 0.002\nmaterial = \"glass\"\n",
            "",
        )
        + "\n[[clump_type]]\nname = \"dimer\"\nspheres = [ { position = [-1.0e-3, 0.0, 0.0], radius = 1.5e-3 }, { position = [1.2e-3, 0.0, 0.0], radius = 1.2e-3 } ]\nmaterial = \"glass\"\n\n[[inserter]]\nbox = { min = [-0.02, -0.02, 0.03], max = [0.02, 0.02, 0.04] }\ncount = 5\ninterval = 0.002\nclump_type = \"dimer\"\nseed = 1\n";
    let s = scene(&text);
    assert!(!s.model.clumps.is_empty() && s.model.inserters[0].clump.is_some());
    assert!(
        s.simulation.dt > 0.0 && s.simulation.dt.is_finite(),
        "{}",
        s.simulation.dt
    );
    let fixed = scene(&text.replace("dt = \"auto\"", "dt = 1e-5"));
    assert_eq!(
        s.simulation.dt,
        time_step_advice(&fixed.model).unwrap().dt_max
    );
}
