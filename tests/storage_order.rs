//! Results depend on physics and ids, not on where a particle is stored (issue 44).
//!
//! The CPU backend reorders its storage along a space-filling curve at neighbour-list
//! rebuilds (`[simulation] sort_every`). Every scene here runs with sorting off, at the
//! default, at every rebuild, and with its storage shuffled by a seeded permutation at
//! set-up (then sorted as usual), on 1, 2 and 4 threads: the output files and the state
//! a checkpoint stores must be the same bytes. No tolerance: a sum that followed
//! storage instead of ids would change bits at the first contact.

use varidem::backend::{Backend, StateSnapshot};
use varidem::cpu::CpuBackend;
mod common;

use common::bundled::{self, cut as scene};
use varidem::model::Scene;

/// `f` run on a pool of `threads` threads.
fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// How a run stores its particles.
#[derive(Clone, Copy, Debug)]
enum Storage {
    /// `sort_every = 0` and no compaction: slot = id throughout, every id stored.
    Off,
    /// The default `sort_every`.
    Default,
    /// `sort_every = 1`: a sort at every rebuild.
    Every,
    /// Shuffled at set-up by this seed, then sorted at every rebuild.
    Shuffled(u64),
}

/// What a run leaves: its CSV files by name, the state a checkpoint would store, and
/// the sorts it made.
#[derive(Debug)]
struct Outcome {
    files: Vec<(String, Vec<u8>)>,
    snapshot: StateSnapshot,
    sorts: u64,
    identity: bool,
}

fn run(scene: &Scene, storage: Storage, threads: usize) -> Outcome {
    in_pool(threads, || {
        let mut s = scene.clone();
        s.simulation.sort_every = match storage {
            Storage::Off => Some(0),
            Storage::Default => None,
            Storage::Every | Storage::Shuffled(_) => Some(1),
        };
        // The others compact open systems (issue 44 item 4).
        let compact = !matches!(storage, Storage::Off);
        let mut b = CpuBackend::with_compaction(&s, compact).unwrap();
        if let Storage::Shuffled(seed) = storage {
            b.shuffle_storage(seed);
        }
        let dir = tempfile::tempdir().unwrap();
        varidem::run::run(&s, &mut b, dir.path()).unwrap();
        let mut files = Vec::new();
        for name in [
            "final.csv",
            "energy.csv",
            "walls.csv",
            "inserters.csv",
            "solver.csv",
            "bonds_broken.csv",
            "removed.csv",
        ] {
            if let Ok(bytes) = std::fs::read(dir.path().join(name)) {
                files.push((name.to_string(), bytes));
            }
        }
        Outcome {
            files,
            snapshot: b.checkpoint_state().unwrap(),
            sorts: b.sorts(),
            identity: b.layout().is_identity(),
        }
    })
}

/// Runs `scene` in every storage order and thread count and compares each with the
/// unsorted run on one thread, byte for byte; `sorted`: the scene has particles the
/// sort moves (asserted: the shuffled and sorted runs did store them otherwise).
fn same_whatever_the_storage(name: &str, scene: &Scene, sorted: bool) {
    let reference = run(scene, Storage::Off, 1);
    assert!(reference.identity && reference.sorts == 0);
    assert!(
        reference.files.iter().any(|(n, _)| n == "final.csv"),
        "{name}: no final.csv"
    );
    let mut runs = vec![
        ("default", run(scene, Storage::Default, 1)),
        ("every rebuild", run(scene, Storage::Every, 1)),
        ("shuffled", run(scene, Storage::Shuffled(0x9E37_79B9), 1)),
        ("every rebuild, 2 threads", run(scene, Storage::Every, 2)),
        ("shuffled, 4 threads", run(scene, Storage::Shuffled(7), 4)),
    ];
    runs.push(("off, 4 threads", run(scene, Storage::Off, 4)));
    for (what, o) in &runs {
        for ((n, a), (m, b)) in reference.files.iter().zip(&o.files) {
            assert_eq!(n, m, "{name}, {what}: other files");
            if a != b {
                let (x, y) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
                let d = x.lines().zip(y.lines()).find(|(p, q)| p != q);
                panic!("{name}, {what}: {n} differs from the unsorted run's: {d:?}");
            }
        }
        assert_eq!(reference.files.len(), o.files.len(), "{name}, {what}");
        assert!(
            reference.snapshot == o.snapshot,
            "{name}, {what}: the checkpointed state differs"
        );
    }
    if sorted {
        let every = &runs[1].1;
        assert!(
            every.sorts > 0 && !every.identity,
            "{name}: no sort moved a particle ({} sorts)",
            every.sorts
        );
        assert!(!runs[2].1.identity, "{name}: the shuffle left slots = ids");
    }
}

/// The poured bed from an inserter (Hertz with history, plane walls, batches woken
/// among sorted particles).
#[test]
fn hertz_pour_with_an_inserter() {
    let s = scene("pour.toml", 4000, 500);
    same_whatever_the_storage("pour", &s, true);
}

/// The mesh hopper: 3000 spheres (above the parallel threshold) against a triangle
/// mesh, with removal through its outlet.
#[test]
fn mesh_hopper_with_removal() {
    let s = scene("hopper.toml", 1500, 300);
    same_whatever_the_storage("hopper", &s, true);
}

/// The bonded block striking a wall: bonds follow their particles into new slots.
#[test]
fn bonded_block() {
    let s = scene("block-impact.toml", 600, 100);
    same_whatever_the_storage("block-impact", &s, true);
}

/// The bonded block striking a wall with bonds weak enough to break (issue 47): the
/// breaks (`bonds_broken.csv`, `e_broken`, the unloads by particle in bond order) do not
/// depend on where the ends are stored.
#[test]
fn breaking_block() {
    let s = bundled::edited(
        "block-impact.toml",
        &[(
            "shear = \"objective\"\n",
            "shear = \"objective\"\nbreak_tension = 20.0\nbreak_shear = 5.0\nbreak_scatter = 0.3\n",
        )],
        "",
        600,
        100,
    );
    assert!(s.model.breakable());
    let mut probe = CpuBackend::new(&s).unwrap();
    probe.advance(600).unwrap();
    let broken = probe.bond_breaks(0).unwrap().len();
    assert!(broken >= 20, "{broken} bonds broke");
    same_whatever_the_storage("breaking block", &s, true);
}

/// The clump pour with a cloud of free spheres thrown down onto its clumps at 1 m/s
/// (so that the lists are rebuilt within the run): the spheres sort
/// around the clumps' spheres, which keep their slots.
#[test]
fn clump_pour_with_free_spheres() {
    let s = bundled::clump_pour_with_free_spheres(1.0, 2000, 400);
    same_whatever_the_storage("clump-pour", &s, true);
}

/// Rolling resistance (issue 50, EPSD): the heap's pour, whose rolling springs follow
/// their pairs, and whose rolling torques' reactions join the planes' loads as one term
/// per contact (`walls.csv` the same bits whether loads are summed in place or per
/// particle by id).
#[test]
fn rolling_heap() {
    let s = scene("rolling-heap.toml", 6000, 1000);
    assert!(s.model.rolling().is_some());
    same_whatever_the_storage("rolling-heap", &s, true);
}

/// JKR cohesion (issue 50): the cohesive heap's pour, whose contacts hold in tension
/// past touching (the pairs' flags follow their slots through sorts, the planes' held
/// flags their particles).
#[test]
fn cohesive_heap() {
    let s = scene("cohesive-heap.toml", 6000, 1000);
    assert!(s.model.jkr());
    same_whatever_the_storage("cohesive-heap", &s, true);
}

/// Hard contacts (the NBGS solver, warm-started from the last step's impulses): the
/// pile's contacts are built in id order and keyed by ids, so the sweep, the colouring
/// and `solver.csv` do not depend on where the beads are stored (sorted at set-up and
/// at rebuilds `sort_every` apart, as the other laws).
#[test]
fn hard_pile() {
    let s = scene("hard-pile.toml", 1500, 300);
    same_whatever_the_storage("hard-pile", &s, false);
    // Set-up sorts and shuffles move the beads; at every rebuild the hard step sorts.
    let sorted = run(&s, Storage::Default, 1);
    let every = run(&s, Storage::Every, 1);
    let shuffled = run(&s, Storage::Shuffled(5), 1);
    assert!(!sorted.identity && sorted.sorts >= 1 && !shuffled.identity);
    assert!(every.sorts > 10, "{} sorts at rebuilds", every.sorts);
    let solver = sorted
        .files
        .iter()
        .find(|(n, _)| n == "solver.csv")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&solver.1).lines().count() > 1000,
        "solver.csv has a row per step"
    );
}

/// The short §4.3 channel (issue 48): hard contacts in an open system, compacted (the
/// placed spheres enter storage, removed ones leave it at rebuilds) against full storage
/// in id order, a periodic inflow plane, grid layers, the obstacle mesh and removal at
/// the open end, on 1, 2 and 4 threads.
#[test]
fn channel_with_hard_contacts_and_removal() {
    let s = common::channel::short_channel();
    same_whatever_the_storage("channel", &s, false);
    let compacted = run(&s, Storage::Default, 1);
    assert!(
        !compacted.identity,
        "compaction stored the channel otherwise"
    );
    let every = run(&s, Storage::Every, 1);
    assert!(every.sorts > 3, "{} sorts at rebuilds", every.sorts);
}

/// A checkpoint of a sorted run stores the state by id: it resumes into a backend
/// stored in another order (unsorted, or shuffled) and continues with the same bits
/// as the uninterrupted sorted run.
#[test]
fn checkpoints_resume_in_any_storage_order() {
    let s = scene("hopper.toml", 1200, 300);
    let mut sorted = s.clone();
    sorted.simulation.sort_every = Some(1);
    let mut a = CpuBackend::new(&sorted).unwrap();
    a.advance(600).unwrap();
    assert!(a.sorts() > 0 && !a.layout().is_identity());
    let snap = a.checkpoint_state().unwrap();
    a.advance(600).unwrap();
    let end = a.checkpoint_state().unwrap();
    for (sort_every, shuffle) in [(Some(0), None), (Some(1), Some(3u64)), (None, Some(11))] {
        let mut b = CpuBackend::from_snapshot(s.model.clone(), &snap).unwrap();
        b.set_sort_every(sort_every);
        if let Some(seed) = shuffle {
            b.shuffle_storage(seed);
        }
        b.advance(600).unwrap();
        assert!(
            b.checkpoint_state().unwrap() == end,
            "resumed with sort_every {sort_every:?}, shuffle {shuffle:?}: other state"
        );
    }
}
