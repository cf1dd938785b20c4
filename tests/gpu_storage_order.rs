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
    /// Sorts on the device during the run.
    sorts: u64,
    /// Row chunks of the backend as set up.
    row_chunks: usize,
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
    /// Sorted at set-up and on the device every this many steps during the run.
    SortedEvery(u64),
    /// Shuffled at set-up and on the device every this many steps during the run (a
    /// new random order each time: every sort moves every particle).
    ShuffledEvery(u64),
}

/// The GPU options of a backend in `precision` stored as `storage` says.
fn options(precision: Precision, storage: Storage) -> GpuOptions {
    let (sort_every, shuffle_storage) = match storage {
        Storage::IdOrder => (Some(0), None),
        Storage::Sorted => (None, None),
        Storage::Shuffled(seed) => (None, Some(seed)),
        Storage::SortedEvery(k) => (Some(k), None),
        Storage::ShuffledEvery(k) => (Some(k), Some(0x5EED)),
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
    run_as(scene, &options(precision, storage), test)
}

/// `scene` run on the GPU with `options`; `None` where the adapter skips.
fn run_as(scene: &Scene, options: &GpuOptions, test: &str) -> Option<Outcome> {
    let ctx = gpu_common::context_for(test, options.precision)?;
    let s = &scene.simulation;
    let mut b = GpuBackend::with_context(ctx, scene.model.clone(), s.integrator, s.dt, options)
        .unwrap_or_else(|e| panic!("{test}: {e}"));
    let identity = b.layout().is_identity();
    let row_chunks = b.row_chunk_count();
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
        "solver.csv",
    ] {
        if let Ok(bytes) = std::fs::read(dir.path().join(name)) {
            files.push((name.to_string(), bytes));
        }
    }
    Some(Outcome {
        files,
        snapshot: b.checkpoint_state().unwrap(),
        identity,
        sorts: b.sort_time().map_or(0, |t| t.1),
        row_chunks,
    })
}

/// The contacts (history slots in use, or hard contacts with an impulse) of the
/// particles that storage moves (those before the clumps' spheres) in a snapshot: the
/// rows that move with them, keyed by partner id, their pairs ordered by id.
fn moved_contacts(snapshot: &StateSnapshot, free: usize) -> usize {
    let Some(c) = &snapshot.contacts else {
        // Hard contacts: those with an impulse (warm starts), keyed by their lower id.
        return (snapshot.hard_impulses.iter())
            .filter(|h| (h.key[0] as usize) < free)
            .count();
    };
    let k = c.slots as usize;
    (c.partner.chunks(k.max(1)).zip(&c.ids))
        .filter(|(_, &i)| (i as usize) < free)
        .map(|(row, _)| row.iter().filter(|&&j| j != u32::MAX).count())
        .sum()
}

/// Runs `scene` in id order, sorted at set-up and in two random orders, sorted and
/// shuffled on the device every 40 steps, in f64 and f32, and compares each run with
/// the id-order run of its precision, byte for byte; at the end the particles storage
/// moves have at least `contacts` contacts (so the runs reach what storage could
/// change).
fn same_whatever_the_storage(name: &str, scene: &Scene, contacts: usize) {
    let every = [
        Storage::Sorted,
        Storage::Shuffled(0x9E37_79B9),
        Storage::Shuffled(7),
        Storage::SortedEvery(40),
        Storage::ShuffledEvery(40),
    ];
    same_in(name, scene, contacts, &every);
}

/// [`same_whatever_the_storage`] over the storage orders `storages` only.
fn same_in(name: &str, scene: &Scene, contacts: usize, storages: &[Storage]) {
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
        for &storage in storages {
            let o = run(scene, precision, storage, &test).unwrap();
            match storage {
                // Every random order moves particles; a sort moves them where they
                // changed cells (the block moves as one: its order may stay).
                Storage::ShuffledEvery(k) => {
                    let steps = scene.simulation.steps();
                    assert!(
                        o.sorts >= steps / k / 2,
                        "{test}: {} sorts during {steps} steps at every {k}",
                        o.sorts
                    );
                    eprintln!("{test}, {storage:?}: {} sorts on the device", o.sorts);
                }
                Storage::SortedEvery(_) => {
                    eprintln!("{test}, {storage:?}: {} sorts on the device", o.sorts);
                }
                _ => {}
            }
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
    let s = low_pour(1500);
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

/// JKR cohesion with EPSD rolling springs (the heap's beads, 300 of them thrown onto
/// the floor at 1 m/s): the rolling springs of pairs, walls and their held flags move
/// with their particles at every sort on the device.
#[test]
fn cohesive_rolling_beads_sorted_during_the_run() {
    let s = bundled::edited(
        "cohesive-heap.toml",
        &[(
            "max = [0.008, 0.008, 0.101]\ncount = 1500",
            "max = [0.008, 0.008, 0.021]\ncount = 300\nvelocity = [0.0, 0.0, -1.0]",
        )],
        "",
        600,
        200,
    );
    same_in(
        "cohesive-heap",
        &s,
        20,
        &[Storage::SortedEvery(40), Storage::ShuffledEvery(40)],
    );
}

/// Hard contacts (issue 44): the pile's contacts are laid out and keyed by id on the
/// device, so the colouring, the sweeps, the warm starts and `solver.csv` do not depend
/// on storage: the coloured and the Jacobi solver, shuffled at set-up and shuffled on
/// the device every 40 steps (46 contacts with an impulse at the end with the coloured
/// solver; 30 asked).
#[test]
fn hard_pile() {
    for (solver, storages) in [
        (
            "colored",
            &[Storage::Shuffled(0x9E37_79B9), Storage::ShuffledEvery(40)][..],
        ),
        ("jacobi", &[Storage::ShuffledEvery(40)][..]),
    ] {
        let s = bundled::edited(
            "hard-pile.toml",
            &[("solver = \"nbgs\"", &format!("solver = \"{solver}\""))],
            "",
            300,
            100,
        );
        same_in(&format!("hard-pile {solver}"), &s, 30, storages);
    }
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

/// The pour with its inserter box lowered to the floor and narrowed, cut to `steps`
/// steps with an output every 300.
fn low_pour(steps: u64) -> Scene {
    bundled::edited(
        "pour.toml",
        &[(
            "box = { min = [-0.028, -0.028, 0.08], max = [0.028, 0.028, 0.09] }",
            "box = { min = [-0.014, -0.014, 0.0], max = [0.014, 0.014, 0.012] }",
        )],
        "",
        steps,
        300,
    )
}

/// A sort moves particles between row chunks: the pour with its rows split into
/// chunks of 64 particles, shuffled on the device every 40 steps, gives the bytes of
/// the run in id order in one chunk (f64 and f32).
#[test]
fn sorts_move_particles_between_row_chunks() {
    let s = low_pour(600);
    for precision in [Precision::F64, Precision::F32] {
        let test = format!("gpu_storage_order chunks {precision:?}");
        let Some(reference) = run(&s, precision, Storage::IdOrder, &test) else {
            continue;
        };
        let options = GpuOptions {
            max_chunk_particles: Some(64),
            ..options(precision, Storage::ShuffledEvery(40))
        };
        let o = run_as(&s, &options, &test).unwrap();
        assert!(o.row_chunks > 1, "{test}: one row chunk");
        assert!(o.sorts >= 7, "{test}: {} sorts", o.sorts);
        assert!(
            o.files == reference.files,
            "{test}: the files differ from the run in id order"
        );
        assert!(
            o.snapshot == reference.snapshot,
            "{test}: the checkpointed state differs"
        );
        eprintln!(
            "{test}: {} row chunks, {} sorts on the device",
            o.row_chunks, o.sorts
        );
    }
}

/// `permute_slots` (shaders/storage.wgsl) against its CPU twin, word for word: random
/// records moved between two chunks of a random permutation, with and without the
/// neighbour rows' remap, at section offsets other than 0.
#[test]
fn permute_slots_matches_its_cpu_twin() {
    use varidem::model::layout::{shuffled_order, Permute};
    let Some(ctx) = gpu_common::context_for("permute_slots twin", Precision::F32) else {
        return;
    };
    let n = 300u32;
    let order = shuffled_order(n as usize, n as usize, 0xC0FFEE);
    let mut table = order.clone();
    table.resize(2 * n as usize, 0);
    for (s, &o) in order.iter().enumerate() {
        table[(n + o) as usize] = s as u32;
    }
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut moved = 0;
    for (stride, remap) in [(1u32, 0u32), (6, 0), (13, 1)] {
        for (dst_first, dst_count, src_first, src_count) in
            [(0, 180, 0, 180), (0, 180, 180, 120), (180, 120, 0, 180)]
        {
            let (src_offset, dst_offset) = (7 * stride, 3);
            let mut src: Vec<u32> = (0..src_offset + src_count * stride + 5)
                .map(|_| next() as u32)
                .collect();
            if remap == 1 {
                // Neighbour rows: a count below the stride, then slots.
                for p in 0..src_count {
                    let at = (src_offset + p * stride) as usize;
                    src[at] = (next() % u64::from(stride)) as u32;
                    for k in 1..stride as usize {
                        src[at + k] = (next() % u64::from(n)) as u32;
                    }
                }
            }
            let dst: Vec<u32> = (0..dst_offset + dst_count * stride + 4)
                .map(|_| next() as u32)
                .collect();
            let permute = Permute {
                dst_first,
                dst_count,
                src_first,
                src_count,
                dst_offset,
                src_offset,
                stride,
                remap,
                n,
                pad: [0; 3],
            };
            let gpu =
                varidem::gpu::sort::permute_on_device(&ctx, &permute, &table, &src, &dst).unwrap();
            let mut cpu = dst.clone();
            varidem::cpu::permute_slots(&permute, &table, &src, &mut cpu);
            assert_eq!(gpu, cpu, "stride {stride}, remap {remap}, {permute:?}");
            moved += cpu.iter().zip(&dst).filter(|(a, b)| a != b).count();
        }
    }
    assert!(moved > 1000, "{moved} words moved");
}
