//! Checkpoint and restart: a run resumed from a checkpoint writes the same bytes as the
//! run that never stopped (CPU, GPU f64 and GPU f32 with its Kahan terms), and damaged
//! or foreign checkpoint files are refused with an error naming the file.
//!
//! Two scenes exercise every piece of state a step depends on:
//! * the torus impact (80 bonded particles, contacts between neighbours and with the
//!   wall from step ≈ 50 on, a neighbour-list rebuild every few steps) cut to 600
//!   steps;
//! * a seeded random cluster (60 jittered spheres, 329 bonds, random velocities and
//!   spins, gravity, a floor, 1000 steps), in which the neighbour list rebuilt at the
//!   resume holds other far pairs than the uninterrupted run's list at that step
//!   (asserted): the forces are still the same bits, because only touching pairs
//!   contribute and each list is summed in ascending id.

mod common;
mod gpu_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use varidem::backend::{Backend, BackendKind};
use varidem::checkpoint::{self, checkpoint_path, Checkpoint, FORMAT_VERSION, MAGIC};
use varidem::cpu::CpuBackend;
use varidem::diagnostics::Diagnostics;
use varidem::gpu::context::GpuContext;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::integrators::IntegratorKind;
use varidem::io::load_scene;
use varidem::model::{RunLength, Scene, ShearForm, SimulationParams};
use varidem::run::{run_with, OutputOptions, ENERGY_CSV, FINAL_CSV};

/// `scenes/torus-impact.toml` cut to 600 steps, an energy row every `every`.
fn torus(every: u64) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/torus-impact.toml");
    let mut scene = load_scene(&path).unwrap();
    scene.simulation.duration = RunLength::Steps(600);
    scene.simulation.output_every = every;
    scene
}

/// A seeded random bonded cluster (as in `gpu_parity`): a 5×4×3 jittered block with
/// random velocities and spins, gravity, contacts and a floor; 1000 steps of 2·10⁻⁴ s,
/// an energy row every 50.
fn cluster() -> Scene {
    let m = common::random_cluster(7, ShearForm::Objective);
    Scene {
        simulation: SimulationParams {
            dt: 2e-4,
            duration: RunLength::Steps(1000),
            integrator: IntegratorKind::Variational,
            output_every: 50,
            precision: None,
            gpu_max_neighbors: None,
            gpu_bucket_capacity: None,
            sort_every: None,
            checkpoint_every: None,
            trapezoidal: Default::default(),
        },
        model: m,
    }
}

/// A small frictional pour (Hertz–Mindlin with history, two materials, drag, walls,
/// spinning and sheared): the contact history and the velocity-dependent forces are
/// state that a resume must carry.
fn granular() -> Scene {
    let text = "[simulation]\ndt = 2e-5\nsteps = 400\noutput_every = 50\n\
        gravity = [0.0, 0.0, -9.81]\nmax_neighbors = 32\n\
        [contact]\nlaw = \"hertz\"\nskin = 0.001\nmax_contacts = 12\n\
        [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
        restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n\
        [[material]]\nname = \"steel\"\nyoung = 2e8\npoisson = 0.28\ndensity = 7800.0\n\
        restitution = 0.8\nfriction_static = 0.3\n\
        [drag]\ncoefficient = 1e-4\n\
        [[block]]\ncounts = [5, 4, 4]\nspacing = 0.0099\nradius = 0.005\nradius_jitter = 0.01\n\
        material = \"glass\"\norigin = [0.0, 0.0, 0.004995]\nseed = 5\n\
        velocity = [0.3, -0.1, 0.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"steel\"\n\
        [[wall]]\npoint = [0.045, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n";
    varidem::io::parse_scene(text).unwrap()
}

/// The granular pour onto a turning two-triangle tray with a side wall closing in
/// (issue 26): the walls' poses are functions of the step, and the mesh contact slots
/// are history a resume must carry.
fn moving_mesh() -> Scene {
    let text = "[simulation]\ndt = 2e-5\nsteps = 400\noutput_every = 50\n\
        gravity = [0.0, 0.0, -9.81]\n\
        [contact]\nlaw = \"hertz\"\nskin = 0.001\nmax_contacts = 12\n\
        [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
        restitution = 0.5\nfriction_static = 0.5\nfriction_dynamic = 0.4\n\
        [[block]]\ncounts = [5, 4, 4]\nspacing = 0.0099\nradius = 0.005\nradius_jitter = 0.01\n\
        material = \"glass\"\norigin = [0.0, 0.0, 0.004995]\nseed = 5\n\
        [[mesh]]\nname = \"tray\"\n\
        vertices = [[-0.05, -0.05, 0.0], [0.1, -0.05, 0.0], [0.1, 0.1, 0.0], [-0.05, 0.1, 0.0]]\n\
        triangles = [[0, 1, 2], [0, 2, 3]]\n\
        angular_velocity = [0.0, 0.0, 5.0]\naxis_point = [0.02, 0.015, 0.0]\n\
        velocity = [0.0, 0.0, 0.01]\nstop = 0.004\n\
        [[wall]]\npoint = [0.045, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n\
        velocity = [-0.5, 0.0, 0.0]\nstart = 0.002\n";
    varidem::io::parse_scene(text).unwrap()
}

/// A hard-contact pile (issue 25): 36 spheres with jittered radii and two dimers
/// dropped into a walled corner, NBGS with warm starts. The warm-start impulses are the
/// state a resume must carry beyond the particles' and the bodies'.
fn hard() -> Scene {
    varidem::io::parse_scene(&hard_text()).unwrap()
}

fn hard_text() -> String {
    let text = "[simulation]\ndt = 1e-3\nsteps = 300\noutput_every = 50\n\
        integrator = \"impulse-velocity\"\ngravity = [0.0, 0.0, -9.81]\n\
        [contact]\nlaw = \"hard\"\ntolerance = 1e-6\nmax_sweeps = 60\n\
        [[material]]\nname = \"glass\"\nyoung = 63e9\npoisson = 0.2\ndensity = 2500.0\n\
        restitution = 0.0\nfriction_static = 0.4\n\
        [[block]]\ncounts = [3, 3, 4]\nspacing = 0.0105\nradius = 0.005\nradius_jitter = 0.02\n\
        material = \"glass\"\norigin = [0.0051, 0.0051, 0.006]\nseed = 3\n\
        velocity = [0.2, 0.1, 0.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n\
        [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n\
        [[wall]]\npoint = [0.04, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n\
        [[clump_type]]\nname = \"dimer\"\nmaterial = \"glass\"\n\
        spheres = [{ position = [-0.004, 0.0, 0.0], radius = 0.005 }, \
                   { position = [0.004, 0.0, 0.0], radius = 0.004 }]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [0.012, 0.015, 0.06]\n\
        rotation = [0.1, 0.3, 0.0]\nangular_velocity = [0.0, 5.0, 2.0]\n\
        [[clump]]\ntype = \"dimer\"\nposition = [0.025, 0.01, 0.075]\n\
        rotation = [0.0, -0.2, 0.4]\nvelocity = [-0.1, 0.0, 0.0]\n";
    text.to_owned()
}

/// [`hard`] on a floor of two triangles that turns slowly, with the far side wall
/// closing in: the warm-start keys name mesh features, and the walls' poses are
/// functions of the step.
fn hard_mesh() -> Scene {
    let mut text = String::new();
    for line in hard_text().lines() {
        if line == "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]" {
            continue;
        }
        text.push_str(line);
        text.push('\n');
    }
    let text = text.replace(
        "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n",
        "[[mesh]]\nname = \"floor\"\n\
         vertices = [[-0.05, -0.05, 0.0], [0.1, -0.05, 0.0], [0.1, 0.1, 0.0], [-0.05, 0.1, 0.0]]\n\
         triangles = [[0, 1, 2], [0, 2, 3]]\nangular_velocity = [0.0, 0.0, 0.5]\naxis_point = [0.02, 0.02, 0.0]\n",
    );
    let text = text.replace(
        "[[wall]]\npoint = [0.04, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\n",
        "[[wall]]\npoint = [0.04, 0.0, 0.0]\nnormal = [-1.0, 0.0, 0.0]\nvelocity = [-0.01, 0.0, 0.0]\nstop = 0.2\n",
    );
    assert!(text.contains("[[mesh]]") && text.contains("stop = 0.2"));
    varidem::io::parse_scene(&text).unwrap()
}

/// [`hard`] with the `colored` solver (what the GPU runs).
fn hard_colored() -> Scene {
    let mut scene = hard();
    let m = &mut scene.model;
    if let Some(c) = &mut m.contact {
        if let varidem::model::ContactLaw::Hard(h) = &mut c.law {
            h.solver = varidem::model::HardSolver::Colored;
        }
    }
    scene
}

/// 18 clumps (dimers and trimers with full tensors, map 23's Newton increments) thrown
/// into a walled corner under gravity: the bodies' state, their loads and their
/// spheres' contact history are what a resume must carry (issue 24).
fn clumps() -> Scene {
    let mut text = String::from(
        "[simulation]\ndt = 4e-6\nsteps = 400\noutput_every = 50\n\
         integrator = \"variational-exact\"\ngravity = [0.0, 0.0, -9.81]\n\
         [contact]\nlaw = \"hertz\"\nskin = 2e-4\nmax_contacts = 16\n\
         [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
         restitution = 0.5\nfriction_static = 0.4\n\
         [[clump_type]]\nname = \"dimer\"\n\
         spheres = [{ position = [-0.6e-3, 0.0, 0.0], radius = 1e-3 }, \
                    { position = [0.6e-3, 0.0, 0.0], radius = 0.8e-3 }]\n\
         [[clump_type]]\nname = \"trimer\"\n\
         spheres = [{ position = [0.0, 0.0, 0.0], radius = 1e-3 }, \
                    { position = [1.2e-3, 0.0, 0.0], radius = 0.7e-3 }, \
                    { position = [0.0, 1.1e-3, 0.3e-3], radius = 0.6e-3 }]\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
         [[wall]]\npoint = [-0.002, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n",
    );
    for k in 0..18 {
        let (i, j, l) = (k % 3, (k / 3) % 3, k / 9);
        let kind = if k % 2 == 0 { "dimer" } else { "trimer" };
        text.push_str(&format!(
            "[[clump]]\ntype = {kind:?}\nposition = [{}, {}, {}]\n\
             rotation = [{}, {}, 0.3]\nvelocity = [{}, {}, -1.5]\n\
             angular_velocity = [{}, 50.0, {}]\n",
            i as f64 * 3.4e-3,
            j as f64 * 3.4e-3,
            2.0e-3 + l as f64 * 3.4e-3,
            0.1 * k as f64,
            -0.07 * k as f64,
            -0.4 + 0.05 * k as f64,
            0.3 - 0.04 * k as f64,
            (k % 5) as f64 * 40.0 - 80.0,
            (k % 3) as f64 * 60.0,
        ));
    }
    varidem::io::parse_scene(&text).unwrap()
}

fn options(checkpoint_every: Option<u64>) -> OutputOptions {
    OutputOptions {
        vtk: false,
        checkpoint_every,
        progress: false,
        run_id: None,
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The header and the rows of `energy.csv` at `dir` from step `from` on.
fn energy_from(dir: &Path, from: u64) -> String {
    let text = String::from_utf8(read(&dir.join(ENERGY_CSV))).unwrap();
    let mut out = format!("{}\n", Diagnostics::CSV_HEADER);
    for line in text.lines().skip(1) {
        let step: u64 = line.split(',').next().unwrap().parse().unwrap();
        if step >= from {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The whole restart check for one backend:
///
/// 1. a run without checkpoints (`plain`) and one with a checkpoint every `every_ck`
///    steps (`ck`) write the same `energy.csv` and `final.csv`;
/// 2. resumed from the checkpoint of step `resume_at` into a new directory, the run
///    writes the same `final.csv`, and an `energy.csv` whose rows are those of the
///    uninterrupted run from `resume_at` on;
/// 3. resumed into a copy of the checkpointed run's directory (a restart in place),
///    it writes the same `energy.csv` and `final.csv` as the uninterrupted run, and
///    the checkpoints after `resume_at` again, byte for byte.
fn check_restart(
    test: &str,
    scene: &Scene,
    every_ck: u64,
    resume_at: u64,
    fresh: &dyn Fn(&Scene) -> Box<dyn Backend>,
    restore: &dyn Fn(&Checkpoint) -> Box<dyn Backend>,
) {
    let steps = scene.simulation.steps();
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    let ck = tmp.path().join("ck");
    run_with(scene, fresh(scene).as_mut(), &plain, &options(None)).unwrap();
    run_with(scene, fresh(scene).as_mut(), &ck, &options(Some(every_ck))).unwrap();
    for file in [ENERGY_CSV, FINAL_CSV] {
        assert!(
            read(&plain.join(file)) == read(&ck.join(file)),
            "{test}: {file} differs with checkpoints on"
        );
    }
    let written: Vec<u64> = (1..=steps / every_ck).map(|k| k * every_ck).collect();
    for &s in &written {
        assert!(checkpoint_path(&ck, s).is_file(), "{test}: checkpoint {s}");
    }
    assert!(!checkpoint_path(&ck, 0).exists());

    let path = checkpoint_path(&ck, resume_at);
    let c = Checkpoint::read(&path).unwrap();
    assert_eq!(c.state.step, resume_at);
    assert_eq!(c.checkpoint_every, Some(every_ck));
    assert_eq!(
        c.scene, *scene,
        "{test}: the checkpoint holds the scene as at step 0"
    );

    // Into a new directory.
    let fresh_dir = tmp.path().join("resumed");
    let mut b = restore(&c);
    assert_eq!(b.step_count(), resume_at);
    run_with(&c.scene, b.as_mut(), &fresh_dir, &options(None)).unwrap();
    assert!(
        read(&plain.join(FINAL_CSV)) == read(&fresh_dir.join(FINAL_CSV)),
        "{test}: final.csv of the resumed run differs"
    );
    assert_eq!(
        String::from_utf8(read(&fresh_dir.join(ENERGY_CSV))).unwrap(),
        energy_from(&plain, resume_at),
        "{test}: energy.csv of the resumed run"
    );

    // In place, after a "crash" that left rows past the checkpoint and half a line.
    let in_place = tmp.path().join("in-place");
    copy_dir(&ck, &in_place);
    {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(in_place.join(ENERGY_CSV))
            .unwrap();
        f.write_all(b"999,1.0e0,2.").unwrap();
    }
    std::fs::remove_file(in_place.join(FINAL_CSV)).unwrap();
    let mut b = restore(&c);
    run_with(
        &c.scene,
        b.as_mut(),
        &in_place,
        // As `varidem resume` does: the run goes on under its own identity.
        &OutputOptions {
            run_id: c.run_id,
            ..options(c.checkpoint_every)
        },
    )
    .unwrap();
    for file in [ENERGY_CSV, FINAL_CSV] {
        assert!(
            read(&plain.join(file)) == read(&in_place.join(file)),
            "{test}: {file} of the run resumed in place differs"
        );
    }
    // Hard contacts: solver.csv goes on as if the run had not stopped.
    let solver = plain.join(varidem::io::SOLVER_CSV);
    if solver.is_file() {
        assert!(
            read(&solver) == read(&in_place.join(varidem::io::SOLVER_CSV)),
            "{test}: solver.csv of the run resumed in place differs"
        );
    }
    // Breakable bonds: bonds_broken.csv too (issue 47).
    let broken = plain.join(varidem::io::BONDS_BROKEN_CSV);
    if broken.is_file() {
        assert!(
            read(&broken) == read(&in_place.join(varidem::io::BONDS_BROKEN_CSV)),
            "{test}: bonds_broken.csv of the run resumed in place differs"
        );
    }
    // Scenes with walls: walls.csv too.
    let walls = plain.join(varidem::io::WALLS_CSV);
    if walls.is_file() {
        assert!(
            read(&walls) == read(&ck.join(varidem::io::WALLS_CSV)),
            "{test}: walls.csv differs with checkpoints on"
        );
        assert!(
            read(&walls) == read(&in_place.join(varidem::io::WALLS_CSV)),
            "{test}: walls.csv of the run resumed in place differs"
        );
    }
    for &s in written.iter().filter(|&&s| s > resume_at) {
        assert!(
            read(&checkpoint_path(&ck, s)) == read(&checkpoint_path(&in_place, s)),
            "{test}: checkpoint {s} written after the resume differs"
        );
    }
}

fn cpu_fresh(scene: &Scene) -> Box<dyn Backend> {
    Box::new(CpuBackend::new(scene).unwrap())
}

fn cpu_restore(c: &Checkpoint) -> Box<dyn Backend> {
    Box::new(CpuBackend::from_snapshot(c.scene.model.clone(), &c.state).unwrap())
}

/// Checkpoints at output steps (every 150, rows every 30), resumed at step 300.
#[test]
fn cpu_resume_is_bitwise() {
    check_restart("cpu", &torus(30), 150, 300, &cpu_fresh, &cpu_restore);
}

/// Checkpoints between output steps (every 130, rows every 40), resumed at 390: the
/// new directory's energy.csv starts at the next row, 400.
#[test]
fn cpu_resume_between_output_steps_is_bitwise() {
    let scene = torus(40);
    check_restart("cpu, unaligned", &scene, 130, 390, &cpu_fresh, &cpu_restore);
}

/// A granular pour resumed at step 200: the contact history and the stored forces
/// make the continuation bitwise.
#[test]
fn cpu_granular_resume_is_bitwise() {
    let scene = granular();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(200).unwrap();
    let snap = a.checkpoint_state().unwrap();
    let c = snap
        .contacts
        .as_ref()
        .expect("granular snapshots carry contacts");
    assert!(
        c.partner.iter().any(|&p| p != varidem::cpu::NO_PARTNER),
        "the history is in use at the checkpoint"
    );
    check_restart("cpu granular", &scene, 100, 200, &cpu_fresh, &cpu_restore);
}

/// The pour onto a moving mesh, resumed at step 200 (after the tray stopped rising
/// at step 200, with the wall closing in).
#[test]
fn cpu_moving_mesh_resume_is_bitwise() {
    let scene = moving_mesh();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(250).unwrap();
    let snap = a.checkpoint_state().unwrap();
    let c = snap.contacts.as_ref().unwrap();
    let touching = c
        .mesh_key
        .iter()
        .filter(|&&k| k != varidem::cpu::NO_PARTNER);
    let touching = touching.count();
    let e: f64 = c.energy.iter().map(|e| e[1]).sum();
    assert!(
        touching >= 1,
        "the history is in use: {touching} mesh contacts, wall energy {e}"
    );
    check_restart(
        "cpu moving mesh",
        &scene,
        125,
        250,
        &cpu_fresh,
        &cpu_restore,
    );
}

/// The pour onto the moving mesh with EPSD rolling resistance (issue 50), resumed at
/// step 250: the rolling springs of pairs, planes and mesh slots are history the
/// checkpoint carries (a resume that dropped them would differ at once).
#[test]
fn cpu_rolling_resume_is_bitwise() {
    let mut scene = moving_mesh();
    scene.model.materials[0].rolling_friction = 0.3;
    if let Some(c) = &mut scene.model.contact {
        c.rolling = varidem::model::RollingModel::Epsd;
    }
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(250).unwrap();
    let snap = a.checkpoint_state().unwrap();
    let c = snap.contacts.as_ref().unwrap();
    let used = |v: &[glam::DVec3]| v.iter().filter(|s| s.length() > 0.0).count();
    assert!(
        used(&c.roll) > 0 && used(&c.roll_wall) + used(&c.roll_mesh) > 0,
        "rolling springs in use: pairs {}, planes {}, mesh {}",
        used(&c.roll),
        used(&c.roll_wall),
        used(&c.roll_mesh)
    );
    check_restart("cpu rolling", &scene, 125, 250, &cpu_fresh, &cpu_restore);
}

/// JKR cohesion (issue 50): a sphere hanging in tension under a plane (the field pulls
/// it away with 0.95 of the pull-off force, and it settles at negative overlap) beside
/// a heavy pair drawn apart at 0.13 mm/s (it breaks near step 15000), resumed at step
/// 10000 while both contacts hold at negative overlap: the
/// plane's held flag and the pair's contact are history the checkpoint carries (a
/// resume that dropped them would let go at once).
#[test]
fn cpu_jkr_resume_is_bitwise() {
    let (r, gamma) = (1e-3f64, 0.05);
    let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let g = 0.95 * varidem::physics::jkr::pull_off_force(r, gamma) / m;
    let text = format!(
        "[simulation]\ndt = 1e-6\nsteps = 20000\noutput_every = 1000\ngravity = [0.0, {g:?}, 0.0]\n\
         [contact]\nlaw = \"hertz\"\ncohesion = \"jkr\"\n\
         [[material]]\nname = \"glass\"\nyoung = 1e7\npoisson = 0.3\ndensity = 2500.0\n\
         restitution = 0.3\nfriction_static = 0.5\nsurface_energy = {gamma:?}\n\
         [[particle]]\nposition = [0.0, {:?}, 0.0]\nradius = {r:?}\nvelocity = [0.05, 0.0, 0.0]\n\
         [[particle]]\nposition = [0.01, 0.005, 0.0]\nradius = {r:?}\nmass = 1.0\ninertia = 1e-6\n\
         velocity = [0.0, {:?}, 0.0]\n\
         [[particle]]\nposition = [0.01, {:?}, 0.0]\nradius = {r:?}\nmass = 1.0\ninertia = 1e-6\n\
         velocity = [0.0, {:?}, 0.0]\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n",
        r - 1e-8,
        -6.35e-5,
        0.005 + 2.0 * r - 1e-6,
        6.35e-5,
    );
    let scene = varidem::io::parse_scene(&text).unwrap();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(10000).unwrap();
    let p = a.model().particles.clone();
    let c = a.checkpoint_state().unwrap().contacts.unwrap();
    assert!(
        r - p.position[0].y < 0.0 && c.wall_held[0] == 1,
        "the sphere holds in tension"
    );
    let gap = (p.position[2] - p.position[1]).length() - 2.0 * r;
    assert!(
        gap > 0.0 && c.force[1] != glam::DVec3::ZERO,
        "the pair holds in tension: gap {gap:e}, force {}",
        c.force[1]
    );
    check_restart("cpu jkr", &scene, 5000, 10000, &cpu_fresh, &cpu_restore);
}

/// A bond pulled until it breaks (issue 47): resumed at the very step of the break
/// (1527), where the restored forces must be those of the kick with the bond less the
/// bond's load, and at a step after it; `bonds_broken.csv` goes on as if the run had
/// not stopped.
#[test]
fn cpu_bond_breakage_resume_is_bitwise() {
    let scene = common::pulled_bond(3054, 509);
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(1527).unwrap();
    let broke = a.bond_breaks(0).unwrap();
    assert_eq!(broke.len(), 1);
    assert_eq!(broke[0].step, 1527, "the bond breaks at the resume step");
    check_restart("cpu breakage", &scene, 509, 1527, &cpu_fresh, &cpu_restore);
    check_restart(
        "cpu breakage after",
        &scene,
        509,
        2036,
        &cpu_fresh,
        &cpu_restore,
    );
}

/// The cluster, resumed at step 400, where the rebuilt neighbour list differs from the
/// uninterrupted run's.
#[test]
fn cpu_cluster_resume_is_bitwise() {
    let scene = cluster();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(400).unwrap();
    let b = CpuBackend::from_snapshot(scene.model.clone(), &a.checkpoint_state().unwrap()).unwrap();
    let n = scene.model.particles.len();
    let differ = (0..n)
        .filter(|&i| a.neighbor_list(i) != b.neighbor_list(i))
        .count();
    assert!(
        differ > 0,
        "the resumed list should hold other far pairs (the case this test is for)"
    );
    assert_eq!(a.particle_forces(), b.particle_forces());
    check_restart("cpu cluster", &scene, 200, 400, &cpu_fresh, &cpu_restore);
}

/// A clump scene resumed at step 200: the bodies' state and loads with the spheres'
/// contact history make the continuation bitwise (issue 24).
#[test]
fn cpu_clump_resume_is_bitwise() {
    let scene = clumps();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(200).unwrap();
    let snap = a.checkpoint_state().unwrap();
    assert_eq!(snap.bodies.len(), 18);
    assert!(
        a.contact_counts().iter().sum::<u32>() > 0,
        "the clumps touch at the checkpoint"
    );
    check_restart("cpu clumps", &scene, 100, 200, &cpu_fresh, &cpu_restore);
}

/// A hard-contact pile resumed at step 150 (issue 25): the warm-start impulses in the
/// checkpoint (format 5) make the continuation bitwise, `solver.csv` included.
/// The hard pile on a turning mesh floor with a wall closing in, resumed at 150.
#[test]
fn cpu_hard_mesh_resume_is_bitwise() {
    let scene = hard_mesh();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(150).unwrap();
    let snap = a.checkpoint_state().unwrap();
    let n = scene.model.sphere_count() as u32 + 3;
    let on_mesh = snap.hard_impulses.iter().filter(|h| h.key[1] >= n).count();
    assert!(
        on_mesh >= 5,
        "the pile rests on the mesh ({on_mesh} mesh impulses)"
    );
    check_restart("cpu hard mesh", &scene, 75, 150, &cpu_fresh, &cpu_restore);
}

#[test]
fn cpu_hard_resume_is_bitwise() {
    let scene = hard();
    let mut a = CpuBackend::new(&scene).unwrap();
    a.advance(150).unwrap();
    let snap = a.checkpoint_state().unwrap();
    assert!(
        snap.hard_impulses.len() > 20,
        "the pile rests on its contacts at the checkpoint ({} impulses)",
        snap.hard_impulses.len()
    );
    check_restart("cpu hard", &scene, 75, 150, &cpu_fresh, &cpu_restore);
    // solver.csv: the resumed run's rows are the uninterrupted run's.
    let tmp = tempfile::tempdir().unwrap();
    let (plain, ck) = (tmp.path().join("plain"), tmp.path().join("ck"));
    run_with(&scene, cpu_fresh(&scene).as_mut(), &plain, &options(None)).unwrap();
    run_with(&scene, cpu_fresh(&scene).as_mut(), &ck, &options(Some(75))).unwrap();
    let c = Checkpoint::read(&checkpoint_path(&ck, 150)).unwrap();
    let resumed = tmp.path().join("resumed");
    copy_dir(&ck, &resumed);
    // As `varidem resume` does: the run goes on under its own identity.
    let own = OutputOptions {
        run_id: c.run_id,
        ..options(None)
    };
    run_with(&c.scene, cpu_restore(&c).as_mut(), &resumed, &own).unwrap();
    let solver = |d: &Path| String::from_utf8(read(&d.join("solver.csv"))).unwrap();
    assert_eq!(solver(&plain).lines().count(), 301);
    assert_eq!(
        solver(&plain),
        solver(&resumed),
        "solver.csv after the resume"
    );
    // Without the impulses, the resumed run takes other sweeps: they are state.
    let mut cold = c.state.clone();
    cold.hard_impulses.clear();
    let mut b = CpuBackend::from_snapshot(c.scene.model.clone(), &cold).unwrap();
    b.advance(1).unwrap();
    let warm_row = solver(&plain).lines().nth(151).unwrap().to_owned();
    assert_ne!(b.take_solver_rows()[0].csv_row(), warm_row);
}

fn gpu_check(test: &str, precision: Precision) {
    let ctx = match precision {
        Precision::F64 => gpu_common::context_f64(test),
        _ => gpu_common::context(test),
    };
    let Some(ctx) = ctx else {
        return;
    };
    drop(ctx);
    let opts = GpuOptions {
        precision,
        ..GpuOptions::default()
    };
    let context = || GpuContext::new(None).unwrap();
    let fresh = |scene: &Scene| -> Box<dyn Backend> {
        Box::new(
            GpuBackend::with_context(
                context(),
                scene.model.clone(),
                scene.simulation.integrator,
                scene.simulation.dt,
                &opts,
            )
            .unwrap(),
        )
    };
    let restore = |c: &Checkpoint| -> Box<dyn Backend> {
        assert_eq!(c.state.backend, BackendKind::Gpu);
        assert_eq!(c.state.precision, precision);
        let n = c.scene.model.sphere_count();
        match precision {
            Precision::F32 => {
                assert_eq!(c.state.compensation.len(), 9 * n);
                assert!(
                    c.state.compensation.iter().any(|&x| x != 0.0),
                    "the Kahan terms are stored"
                );
            }
            Precision::F64 => assert!(c.state.compensation.is_empty()),
        }
        // Off the origin, the f32 device coordinates are stored as they were.
        if c.state.origin != glam::DVec3::ZERO {
            assert_eq!(precision, Precision::F32);
            assert_eq!(c.state.device_position.len(), 3 * n);
        }
        Box::new(GpuBackend::restore(context(), c.scene.model.clone(), &c.state, &opts).unwrap())
    };
    check_restart(test, &torus(30), 150, 300, &fresh, &restore);
    check_restart(test, &cluster(), 200, 400, &fresh, &restore);
    check_restart(test, &granular(), 100, 200, &fresh, &restore);
    check_restart(test, &clumps(), 100, 200, &fresh, &restore);
    check_restart(test, &hard_colored(), 75, 150, &fresh, &restore);
    // 1000 m from the origin, where f32 coordinates are relative to a device origin
    // (gpu::placement) that the checkpoint carries.
    let far = |mut s: Scene| {
        common::translate(&mut s.model, glam::DVec3::splat(1000.0));
        s
    };
    check_restart(test, &far(torus(30)), 150, 300, &fresh, &restore);
    check_restart(test, &far(granular()), 100, 200, &fresh, &restore);
    check_restart(test, &far(clumps()), 100, 200, &fresh, &restore);
}

/// A format-2 checkpoint (written by varidem before the device origin, issue 29) still
/// reads, and resumed on the CPU it finishes its run bit for bit as that version did:
/// `tests/fixtures/format2-three-spheres-step50.vdc` and `-final.csv`, from
/// `scenes/three-spheres.toml` (Hertz–Mindlin with history, 20 000 steps) with
/// `--checkpoint-every 50`.
#[test]
fn format2_checkpoint_still_resumes_bitwise() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let c = Checkpoint::read(&dir.join("format2-three-spheres-step50.vdc")).unwrap();
    assert_eq!(c.state.step, 50);
    assert_eq!(c.state.origin, glam::DVec3::ZERO);
    assert!(c.state.device_position.is_empty());
    let mut b = CpuBackend::from_snapshot(c.scene.model.clone(), &c.state).unwrap();
    b.advance(c.scene.simulation.steps() - 50).unwrap();
    let p = b.particles().unwrap();
    let want = varidem::io::read_final_csv(&dir.join("format2-three-spheres-final.csv")).unwrap();
    assert_eq!(want.len(), p.len());
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            (w.position, w.velocity, w.rotation, w.angular_velocity),
            (
                p.position[i],
                p.velocity[i],
                p.rotation[i],
                p.angular_velocity[i]
            ),
            "particle {i}"
        );
    }
}

#[test]
fn gpu_f64_resume_is_bitwise() {
    gpu_check("gpu_f64_resume_is_bitwise", Precision::F64);
}

/// In f32 the Kahan compensation terms are part of the state: without them the resumed
/// run would differ in the last bits (checked below).
#[test]
fn gpu_f32_resume_is_bitwise() {
    gpu_check("gpu_f32_resume_is_bitwise", Precision::F32);
}

/// Dropping the f32 compensation terms changes the continuation: they are state.
#[test]
fn gpu_f32_compensation_matters() {
    let test = "gpu_f32_compensation_matters";
    let Some(ctx) = gpu_common::context(test) else {
        return;
    };
    let scene = torus(100);
    let opts = GpuOptions::default();
    let model = scene.model.clone();
    let (integrator, dt) = (scene.simulation.integrator, scene.simulation.dt);
    let mut g = GpuBackend::with_context(ctx, model.clone(), integrator, dt, &opts).unwrap();
    g.advance(200).unwrap();
    let snap = g.checkpoint_state().unwrap();
    g.advance(200).unwrap();
    let expected = g.particles().unwrap();
    let mut with =
        GpuBackend::restore(GpuContext::new(None).unwrap(), model.clone(), &snap, &opts).unwrap();
    with.advance(200).unwrap();
    assert_eq!(with.particles().unwrap(), expected);
    let mut without_comp = snap.clone();
    without_comp.compensation.clear();
    let mut without =
        GpuBackend::restore(GpuContext::new(None).unwrap(), model, &without_comp, &opts).unwrap();
    without.advance(200).unwrap();
    assert_ne!(without.particles().unwrap(), expected);
}

/// A checkpoint of the CPU run at step 150 of the torus.
fn cpu_checkpoint(dir: &Path) -> PathBuf {
    let scene = torus(50);
    run_with(&scene, cpu_fresh(&scene).as_mut(), dir, &options(Some(150))).unwrap();
    checkpoint_path(dir, 150)
}

#[test]
fn a_corrupted_checkpoint_is_rejected_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = cpu_checkpoint(tmp.path());
    let mut bytes = read(&path);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let err = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("checksum"), "{err}");
}

#[test]
fn an_unknown_format_version_is_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let path = cpu_checkpoint(tmp.path());
    let mut bytes = read(&path);
    let v = MAGIC.len();
    bytes[v..v + 4].copy_from_slice(&(FORMAT_VERSION + 98).to_le_bytes());
    // A valid checksum, so that only the version is wrong.
    let n = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let err = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains(&format!(
            "unknown checkpoint format version {}",
            FORMAT_VERSION + 98
        )),
        "{err}"
    );

    std::fs::write(&path, b"not a checkpoint at all").unwrap();
    let err = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(err.contains("not a varidem checkpoint"), "{err}");
}

/// Bond rest states are stored, not re-derived: a checkpoint whose scene has altered
/// rest states restores them.
#[test]
fn bond_rest_states_are_stored_exactly() {
    let scene = torus(100);
    let mut c = Checkpoint::take(&scene, cpu_fresh(&scene).as_mut(), None).unwrap();
    c.scene.model.bonds[3].rest_length *= 1.0 + f64::EPSILON;
    c.scene.model.bonds[5].rest_rotation.x = 1e-300;
    let back = Checkpoint::from_bytes(&c.to_bytes(), Path::new("mem.vdc")).unwrap();
    assert_eq!(back.scene.model.bonds, c.scene.model.bonds);
}

/// `resume_backend` defaults to the backend that wrote the checkpoint.
#[test]
fn resume_defaults_to_the_recorded_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Checkpoint::read(&cpu_checkpoint(tmp.path())).unwrap();
    let b = varidem::select::resume_backend(&c, None, None, None, &Default::default()).unwrap();
    assert_eq!(b.name(), "cpu");
    assert_eq!(b.step_count(), 150);
}

// ---------------------------------------------------------------------------------------
// The command line.
// ---------------------------------------------------------------------------------------

fn varidem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varidem"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the varidem binary runs")
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "varidem failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn cli_run_with_checkpoints_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let scene_path = tmp.path().join("torus.toml");
    std::fs::write(&scene_path, varidem::io::scene_to_toml(&torus(50))).unwrap();
    let scene_arg = scene_path.to_str().unwrap();
    let full = tmp.path().join("full");
    let ck = tmp.path().join("ck");
    let resumed = tmp.path().join("resumed");
    ok(&varidem(&[
        "run",
        scene_arg,
        "--out",
        full.to_str().unwrap(),
        "--backend",
        "cpu",
    ]));
    ok(&varidem(&[
        "run",
        scene_arg,
        "--out",
        ck.to_str().unwrap(),
        "--backend",
        "cpu",
        "--checkpoint-every",
        "200",
    ]));
    let mut names: Vec<String> = std::fs::read_dir(ck.join(checkpoint::CHECKPOINT_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "checkpoint_00000200.vdc",
            "checkpoint_00000400.vdc",
            "checkpoint_00000600.vdc"
        ]
    );
    let cp = checkpoint_path(&ck, 400);
    ok(&varidem(&[
        "resume",
        cp.to_str().unwrap(),
        "--out",
        resumed.to_str().unwrap(),
    ]));
    assert!(read(&full.join(FINAL_CSV)) == read(&resumed.join(FINAL_CSV)));
    let frame = |dir: &Path, step: u64| dir.join(format!("vtk/particles_{step:08}.vtp"));
    for step in (400..=600).step_by(50) {
        assert!(
            read(&frame(&full, step)) == read(&frame(&resumed, step)),
            "frame {step}"
        );
    }
    assert!(!frame(&resumed, 350).exists());
    assert_eq!(
        String::from_utf8(read(&resumed.join(ENERGY_CSV))).unwrap(),
        energy_from(&full, 400)
    );
    // The resumed run goes on checkpointing at the recorded interval.
    assert!(read(&checkpoint_path(&ck, 600)) == read(&checkpoint_path(&resumed, 600)));

    // In place: energy.csv is cut after step 400 and continued.
    ok(&varidem(&[
        "resume",
        cp.to_str().unwrap(),
        "--out",
        ck.to_str().unwrap(),
    ]));
    assert!(read(&full.join(ENERGY_CSV)) == read(&ck.join(ENERGY_CSV)));
    assert!(read(&full.join(FINAL_CSV)) == read(&ck.join(FINAL_CSV)));
    // The ParaView series too: particles.pvd lists every frame again.
    assert!(read(&full.join("particles.pvd")) == read(&ck.join("particles.pvd")));
    for step in (0..=600).step_by(50) {
        assert!(
            read(&frame(&full, step)) == read(&frame(&ck, step)),
            "frame {step}"
        );
    }

    // A damaged checkpoint: exit code 1, one line naming the file and the checksum.
    let mut bytes = read(&cp);
    let k = bytes.len() / 3;
    bytes[k] ^= 0x80;
    std::fs::write(&cp, &bytes).unwrap();
    let o = varidem(&[
        "resume",
        cp.to_str().unwrap(),
        "--out",
        resumed.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("checkpoint_00000400.vdc"), "{err}");
    assert!(err.contains("checksum"), "{err}");
}
