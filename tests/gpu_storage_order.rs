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

mod common;
mod gpu_common;

use common::bundled::{self, cut as scene};
use varidem::backend::{Backend, StateSnapshot};
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::model::Scene;
use varidem::run::{run_with, OutputOptions};

/// What a run leaves: its CSV files by name, and the state a checkpoint would store.
struct Outcome {
    files: Vec<(String, Vec<u8>)>,
    snapshot: StateSnapshot,
    identity: bool,
}

/// How a run stores its particles.
#[derive(Clone, Copy, Debug)]
enum Storage {
    /// `sort_every = 0` and full storage (no compaction): slot = id.
    IdOrder,
    /// The default: sorted along the grid's cells at set-up.
    Sorted,
    /// Shuffled at set-up by this seed.
    Shuffled(u64),
}

/// The GPU options of a backend in `precision` stored as `storage` says.
fn options(precision: Precision, storage: Storage) -> GpuOptions {
    let (sort_every, shuffle_storage) = match storage {
        Storage::IdOrder => (Some(0), None),
        Storage::Sorted => (None, None),
        Storage::Shuffled(seed) => (None, Some(seed)),
    };
    GpuOptions {
        precision,
        shuffle_storage,
        sort_every,
        // The reference stores every id; the others compact open systems.
        compact_storage: matches!(storage, Storage::IdOrder).then_some(false),
        ..GpuOptions::default()
    }
}

/// `scene` run on the GPU in `precision`, stored as `storage` says; `None` where the
/// adapter skips.
fn run(scene: &Scene, precision: Precision, storage: Storage, test: &str) -> Option<Outcome> {
    let ctx = gpu_common::context_for(test, precision)?;
    let options = options(precision, storage);
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
    (c.partner.chunks(k.max(1)).zip(&c.ids))
        .filter(|(_, &i)| (i as usize) < free)
        .map(|(row, _)| row.iter().filter(|&&j| j != u32::MAX).count())
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
    let s = bundled::edited(
        "pour.toml",
        &[(
            "box = { min = [-0.028, -0.028, 0.08], max = [0.028, 0.028, 0.09] }",
            "box = { min = [-0.014, -0.014, 0.0], max = [0.014, 0.014, 0.012] }",
        )],
        "",
        1500,
        300,
    );
    same_whatever_the_storage("pour", &s, 20);
}

/// The hopper with 150 beads in its cone thrown down at 2 m/s, cut to `steps` steps.
fn hopper_thrown(steps: u64) -> Scene {
    bundled::edited(
        "hopper.toml",
        &[
            (
                "min = [-0.032, -0.032, 0.07]\nmax = [0.032, 0.032, 0.26]\ncount = 3000",
                "min = [-0.02, -0.02, 0.03]\nmax = [0.02, 0.02, 0.07]\ncount = 150",
            ),
            ("seed = 11\n", "seed = 11\nvelocity = [0.0, 0.0, -2.0]\n"),
        ],
        "",
        steps,
        300,
    )
}

/// The mesh hopper: spheres against a triangle mesh, with removal through its outlet.
/// Its cloud is 150 beads in the cone, thrown down at 2 m/s, so that within 900 steps
/// the outer beads strike the cone and the ones above run into them (36 contacts at
/// the end; 10 asked).
#[test]
fn mesh_hopper_with_removal() {
    let s = hopper_thrown(900);
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
    let s = bundled::clump_pour_with_free_spheres(3.0, 1200, 400);
    same_whatever_the_storage("clump-pour", &s, 1);
}

/// A checkpoint stores the state by id: taken from a run stored at random, it resumes
/// into a backend stored in id order, sorted or in another random order, and goes on
/// with the bits of the run that did not stop (f64 and f32).
#[test]
fn checkpoints_resume_in_any_storage_order() {
    let s = hopper_thrown(900);
    let sim = &s.simulation;
    for precision in [Precision::F64, Precision::F32] {
        let test = format!("gpu_storage_order resume {precision:?}");
        let Some(ctx) = gpu_common::context_for(&test, precision) else {
            continue;
        };
        let first = options(precision, Storage::Shuffled(0x9E37_79B9));
        let mut a = GpuBackend::with_context(ctx, s.model.clone(), sim.integrator, sim.dt, &first)
            .unwrap_or_else(|e| panic!("{test}: {e}"));
        a.advance(450).unwrap();
        let snap = a.checkpoint_state().unwrap();
        a.advance(450).unwrap();
        let end = a.checkpoint_state().unwrap();
        assert!(
            moved_contacts(&end, s.model.particles.len()) >= 10,
            "{test}"
        );
        for storage in [Storage::IdOrder, Storage::Sorted, Storage::Shuffled(7)] {
            let ctx = gpu_common::context_for(&test, precision).unwrap();
            let o = options(precision, storage);
            let mut b = GpuBackend::restore(ctx, s.model.clone(), &snap, &o)
                .unwrap_or_else(|e| panic!("{test}: {e}"));
            assert_eq!(
                b.layout().is_identity(),
                matches!(storage, Storage::IdOrder),
                "{test}, {storage:?}"
            );
            b.advance(450).unwrap();
            assert!(
                b.checkpoint_state().unwrap() == end,
                "{test}: resumed {storage:?}, the state differs from the uninterrupted run's"
            );
        }
    }
}
