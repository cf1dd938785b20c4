//! Results depend on physics and ids, not on where the GPU stores a particle (issue 44;
//! the CPU twin: tests/storage_order.rs).
//!
//! The GPU kernels speak ids through the layout's tables (`id_of`, `slot_of`): rows
//! ascend by partner id, a pair belongs to its lower id, histories are keyed by partner
//! id, the diagnostics' tree sums in id order and faults name ids. Each scene here runs
//! stored in id order, sorted at set-up (the default) and in two seeded random orders,
//! in f64 and in f32: the output files and the checkpointed state must be the same
//! bytes. No tolerance: a sum that followed storage would change bits at the first
//! contact (a mutant that orders pairs by slot fails the pour and the hopper). Runs
//! are short (lavapipe is slow) but each reaches contacts, walls and its scene's
//! feature.

#![allow(missing_docs, reason = "test crate")]

mod gpu_common;

use std::path::Path;

use varidem::backend::{Backend, StateSnapshot};
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::model::{RunLength, Scene};
use varidem::run::{run_with, OutputOptions};

/// A bundled scene cut to `steps` steps, an output every `every`.
fn scene(name: &str, steps: u64, every: u64) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name);
    let mut s = varidem::io::scene::load_scene(&path).unwrap();
    s.simulation.duration = RunLength::Steps(steps);
    s.simulation.output_every = every;
    s
}

/// What a run leaves: its CSV files by name, and the state a checkpoint would store.
struct Outcome {
    files: Vec<(String, Vec<u8>)>,
    snapshot: StateSnapshot,
    identity: bool,
}

/// How a run stores its particles.
#[derive(Clone, Copy, Debug)]
enum Storage {
    /// `sort_every = 0`: slot = id.
    IdOrder,
    /// The default: sorted along the grid's cells at set-up.
    Sorted,
    /// Shuffled at set-up by this seed.
    Shuffled(u64),
}

/// `scene` run on the GPU in `precision`, stored as `storage` says; `None` where the
/// adapter skips.
fn run(scene: &Scene, precision: Precision, storage: Storage, test: &str) -> Option<Outcome> {
    let ctx = gpu_common::context_for(test, precision)?;
    let (sort_every, shuffle_storage) = match storage {
        Storage::IdOrder => (Some(0), None),
        Storage::Sorted => (None, None),
        Storage::Shuffled(seed) => (None, Some(seed)),
    };
    let options = GpuOptions {
        precision,
        shuffle_storage,
        sort_every,
        ..GpuOptions::default()
    };
    let s = &scene.simulation;
    let mut b = GpuBackend::with_context(ctx, scene.model.clone(), s.integrator, s.dt, &options)
        .unwrap_or_else(|e| panic!("{test}: {e}"));
    let identity = b.layout().is_identity();
    let dir = tempfile::tempdir().unwrap();
    let out = OutputOptions {
        vtk: false,
        checkpoint_every: None,
        progress: false,
        run_id: None,
    };
    run_with(scene, &mut b, dir.path(), &out).unwrap_or_else(|e| panic!("{test}: {e}"));
    let mut files = Vec::new();
    for name in [
        "final.csv",
        "energy.csv",
        "walls.csv",
        "inserters.csv",
        "removed.csv",
    ] {
        if let Ok(bytes) = std::fs::read(dir.path().join(name)) {
            files.push((name.to_string(), bytes));
        }
    }
    Some(Outcome {
        files,
        snapshot: b.checkpoint_state().unwrap(),
        identity,
    })
}

/// The contacts (history slots in use) of the particles that storage moves (those
/// before the clumps' spheres) in a snapshot: the rows that move with them, keyed by
/// partner id, their pairs ordered by id.
fn moved_contacts(snapshot: &StateSnapshot, free: usize) -> usize {
    let Some(c) = &snapshot.contacts else {
        return 0;
    };
    let k = c.slots as usize;
    (c.partner.chunks(k.max(1)).take(free))
        .map(|row| row.iter().filter(|&&j| j != u32::MAX).count())
        .sum()
}

/// Runs `scene` in id order, sorted at set-up and in two random orders, in f64 and
/// f32, and compares each run with the id-order run of its precision, byte for byte; at
/// the end the particles storage moves have at least `contacts` contacts (so the runs
/// reach what storage could change).
fn same_whatever_the_storage(name: &str, scene: &Scene, contacts: usize) {
    for precision in [Precision::F64, Precision::F32] {
        let test = format!("gpu_storage_order {name} {precision:?}");
        let Some(reference) = run(scene, precision, Storage::IdOrder, &test) else {
            continue;
        };
        assert!(reference.identity);
        let free = scene.model.particles.len();
        let touching = moved_contacts(&reference.snapshot, free);
        assert!(
            touching >= contacts,
            "{test}: {touching} contacts at the end, fewer than {contacts}"
        );
        eprintln!("{test}: {touching} contacts at the end");
        assert!(
            reference.files.iter().any(|(n, _)| n == "final.csv"),
            "{test}: no final.csv"
        );
        for storage in [
            Storage::Sorted,
            Storage::Shuffled(0x9E37_79B9),
            Storage::Shuffled(7),
        ] {
            let o = run(scene, precision, storage, &test).unwrap();
            // A random order moves particles; the sort moves those of every scene here
            // (random clouds and inserter reserves, a lattice stored x fastest).
            assert!(
                !o.identity,
                "{test}: {storage:?} left the slots in id order"
            );
            assert_eq!(reference.files.len(), o.files.len(), "{test}");
            for ((n, a), (m, b)) in reference.files.iter().zip(&o.files) {
                assert_eq!(n, m, "{test}: other files");
                assert!(
                    a == b,
                    "{test}, {storage:?}: {n} differs from the run in id order"
                );
            }
            assert!(
                reference.snapshot == o.snapshot,
                "{test}, {storage:?}: the checkpointed state differs"
            );
        }
    }
}

/// The inserter pour: Hertz–Mindlin with history against plane walls, batches woken in
/// their slots. Its inserter box is lowered to the floor and narrowed, so that within
/// 1500 steps (two events) the first batch lands and its beads collide (68 contacts
/// at the end; 20 asked).
#[test]
fn hertz_pour_with_an_inserter() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let text = std::fs::read_to_string(dir.join("pour.toml"))
        .unwrap()
        .replace(
            "box = { min = [-0.028, -0.028, 0.08], max = [0.028, 0.028, 0.09] }",
            "box = { min = [-0.014, -0.014, 0.0], max = [0.014, 0.014, 0.012] }",
        );
    assert!(text.contains("max = [0.014, 0.014, 0.012]"));
    let mut s = varidem::io::scene::parse_scene_in(&text, &dir).unwrap();
    s.simulation.duration = RunLength::Steps(1500);
    s.simulation.output_every = 300;
    same_whatever_the_storage("pour", &s, 20);
}

/// The mesh hopper: spheres against a triangle mesh, with removal through its outlet.
/// Its cloud is 150 beads in the cone, thrown down at 2 m/s, so that within 900 steps
/// the outer beads strike the cone and the ones above run into them (36 contacts at
/// the end; 10 asked).
#[test]
fn mesh_hopper_with_removal() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let text = std::fs::read_to_string(dir.join("hopper.toml"))
        .unwrap()
        .replace(
            "min = [-0.032, -0.032, 0.07]\nmax = [0.032, 0.032, 0.26]\ncount = 3000",
            "min = [-0.02, -0.02, 0.03]\nmax = [0.02, 0.02, 0.07]\ncount = 150",
        )
        .replace("seed = 11\n", "seed = 11\nvelocity = [0.0, 0.0, -2.0]\n");
    assert!(text.contains("count = 150") && text.contains("velocity = [0.0, 0.0, -2.0]"));
    let mut s = varidem::io::scene::parse_scene_in(&text, &dir).unwrap();
    s.simulation.duration = RunLength::Steps(900);
    s.simulation.output_every = 300;
    same_whatever_the_storage("hopper", &s, 10);
}

/// The bonded block striking a wall: bonds' ends are slots, their sums in bond order.
#[test]
fn bonded_block() {
    let s = scene("block-impact.toml", 300, 100);
    same_whatever_the_storage("block-impact", &s, 0);
}

/// The clump pour with a cloud of free spheres thrown onto its clumps at 3 m/s: the
/// spheres are stored at random before the clumps' spheres, which keep their slots (5
/// contacts of free spheres at the end, with clumps; 1 asked).
#[test]
fn clump_pour_with_free_spheres() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut text = std::fs::read_to_string(dir.join("clump-pour.toml")).unwrap();
    text.push_str(
        "\n[[cloud]]\nmin = [-0.01, -0.01, 0.08]\nmax = [0.01, 0.01, 0.1]\ncount = 120\n\
         radius = 7e-4\nmaterial = \"glass\"\nvelocity = [0.0, 0.0, -3.0]\nseed = 3\n",
    );
    let mut s = varidem::io::scene::parse_scene_in(&text, &dir).unwrap();
    s.simulation.duration = RunLength::Steps(1200);
    s.simulation.output_every = 400;
    same_whatever_the_storage("clump-pour", &s, 1);
}
