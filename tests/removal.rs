//! Open systems (issue 44 item 4): particles that leave the domain under
//! `[domain] on_exit = "remove"` leave `final.csv` and the VTK frames, and each is
//! logged once in `DIR/removed.csv` with its state at exit; a checkpoint mid-stream
//! resumes to the same files (on the GPU: gpu_removal.rs).

#![allow(missing_docs, reason = "test crate")]

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::stream::{capped_stream, final_ids, removed, stream, FLOOR};
use varidem::backend::Backend;
use varidem::checkpoint::{checkpoint_path, Checkpoint};
use varidem::cpu::CpuBackend;
use varidem::run::{run_with, OutputOptions};

fn options(checkpoint_every: Option<u64>, vtk: bool) -> OutputOptions {
    OutputOptions {
        vtk,
        checkpoint_every,
        progress: false,
        run_id: None,
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A stream fed for 0.1 s (5000 steps, 51 events of 40 beads) through a domain a bead
/// crosses in about 12 ms: the rows of removed.csv and final.csv name every inserted id once;
/// each exit lies below the domain's floor, falling faster than it was thrown
/// (gravity only adds speed in a dilute stream), at `t = step · dt`; the VTK frames
/// hold the particles in the domain only.
#[test]
fn every_inserted_bead_is_in_removed_csv_or_final_csv_once() {
    let s = stream(0.1);
    let dir = tempfile::tempdir().unwrap();
    let mut b = CpuBackend::new(&s).unwrap();
    run_with(&s, &mut b, dir.path(), &options(None, true)).unwrap();
    let inserted = b.insertion_counts()[0].inserted;
    let gone = removed(dir.path());
    let live = final_ids(dir.path());
    assert_eq!(inserted, 2040, "{:?}", b.insertion_counts());
    // The stream passed through several times what the domain holds.
    assert!(
        gone.len() >= 5 * live.len(),
        "{} removed, {} in the domain",
        gone.len(),
        live.len()
    );
    let mut ids: Vec<u32> = gone
        .iter()
        .map(|r| r.id)
        .chain(live.iter().copied())
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..inserted as u32).collect::<Vec<_>>(),
        "each id once"
    );
    let dt = s.simulation.dt;
    for w in gone.windows(2) {
        assert!((w[0].step, w[0].id) < (w[1].step, w[1].id), "{w:?}");
    }
    for r in &gone {
        assert_eq!(r.t, r.step as f64 * dt, "{r:?}");
        assert!(r.x[2] < FLOOR, "{r:?}");
        assert!(r.v[2] < -2.0, "{r:?}");
    }
    // The last frame: the particles of final.csv.
    let last = varidem::io::vtk_reader::load_frame(dir.path(), None).unwrap();
    let frame_ids: BTreeSet<u32> = last.id.iter().copied().collect();
    assert_eq!(frame_ids, live.iter().copied().collect());
}

/// A checkpoint mid-stream resumes, into a new directory and in place after a "crash"
/// that left rows past the checkpoint, to the removed.csv and final.csv of the run
/// that did not stop, byte for byte.
#[test]
fn a_checkpoint_mid_stream_resumes_to_the_same_files() {
    let s = stream(0.06);
    let tmp = tempfile::tempdir().unwrap();
    let (plain, ck) = (tmp.path().join("plain"), tmp.path().join("ck"));
    run_with(
        &s,
        &mut CpuBackend::new(&s).unwrap(),
        &plain,
        &options(None, false),
    )
    .unwrap();
    // The crash: a copy of the run stopped at the checkpoint of step 1500, whose
    // removed.csv has the rows of later steps.
    run_with(
        &s,
        &mut CpuBackend::new(&s).unwrap(),
        &ck,
        &options(Some(1500), false),
    )
    .unwrap();
    let c = Checkpoint::read(&checkpoint_path(&ck, 1500)).unwrap();
    assert!(!c.state.removed.is_empty() && c.state.exit_steps.len() == c.state.removed.len());
    let before = removed(&plain).iter().filter(|r| r.step <= 1500).count();
    assert!(
        before > 0 && before < removed(&plain).len(),
        "exits both sides of step 1500"
    );
    let fresh = tmp.path().join("fresh");
    let mut b = CpuBackend::from_snapshot(c.scene.model.clone(), &c.state).unwrap();
    run_with(&c.scene, &mut b, &fresh, &options(None, false)).unwrap();
    let after: Vec<_> = removed(&plain)
        .into_iter()
        .filter(|r| r.step > 1500)
        .collect();
    assert_eq!(
        removed(&fresh),
        after,
        "a new directory lists the exits after step 1500"
    );
    assert!(read(&plain.join("final.csv")) == read(&fresh.join("final.csv")));
    let mut b = CpuBackend::from_snapshot(c.scene.model.clone(), &c.state).unwrap();
    run_with(
        &c.scene,
        &mut b,
        &ck,
        &OutputOptions {
            run_id: c.run_id,
            ..options(Some(1500), false)
        },
    )
    .unwrap();
    for file in ["removed.csv", "final.csv", "energy.csv"] {
        assert!(
            read(&plain.join(file)) == read(&ck.join(file)),
            "{file} of the run resumed in place differs"
        );
    }
}

/// A checkpoint of format 11 (no exit steps) resumes: its removals are dated at its
/// step, so none is listed again.
#[test]
fn removals_without_their_steps_are_dated_at_the_checkpoint() {
    let s = stream(0.03);
    let mut a = CpuBackend::new(&s).unwrap();
    a.advance(1200).unwrap();
    let mut snap = a.checkpoint_state().unwrap();
    assert!(!snap.removed.is_empty());
    snap.exit_steps.clear();
    let mut b = CpuBackend::from_snapshot(s.model.clone(), &snap).unwrap();
    assert!(b.exits(1200).unwrap().is_empty());
    assert_eq!(b.exits(1199).unwrap().len(), snap.removed.len());
    b.advance(300).unwrap();
    a.advance(300).unwrap();
    assert_eq!(b.exits(1200).unwrap(), a.exits(1200).unwrap());
}

/// With removal, an inserter's `capacity` bounds its beads in the system at once, not
/// its insertions (issue 44 item 4): capped at 60 beads (a quarter of the stream's usual
/// 250), the 0.06 s stream never holds more than 60, yet inserts several times 60 as
/// beads leave, skipping the rest; the reserve is the schedule's (1240), the scene
/// file written back reads the same, and a checkpoint resumes bitwise.
#[test]
fn capacity_bounds_the_beads_in_the_system() {
    // Without a capacity the reserve is the schedule's, and the file written back
    // gives none either (one would become a live limit).
    let open = stream(0.06);
    let text = varidem::io::scene_to_toml(&open);
    assert!(!text.contains("capacity"));
    assert_eq!(varidem::io::parse_scene(&text).unwrap().model, open.model);
    let s = capped_stream(0.06, 60);
    let ins = &s.model.inserters[0];
    assert_eq!((ins.live_limit, ins.capacity), (Some(60), 1240));
    assert_eq!(
        varidem::io::parse_scene(&varidem::io::scene_to_toml(&s))
            .unwrap()
            .model,
        s.model
    );
    let mut b = CpuBackend::new(&s).unwrap();
    let live = |b: &mut CpuBackend| {
        let p = b.particles().unwrap();
        p.flags
            .iter()
            .filter(|&&f| varidem::backend::in_system(f))
            .count()
    };
    let mut most = 0;
    let mut mid = None;
    for k in 0..30 {
        b.advance(100).unwrap();
        most = most.max(live(&mut b));
        assert!(
            live(&mut b) <= 60,
            "step {}: {} live",
            b.step_count(),
            live(&mut b)
        );
        if k == 14 {
            mid = Some(b.checkpoint_state().unwrap());
        }
    }
    let c = b.insertion_counts()[0];
    assert_eq!(most, 60, "the limit is reached");
    assert!(c.inserted >= 180 && c.skipped > 0, "{c:?}");
    // Resumed at step 1500, the same bits at step 3000.
    let mut r = CpuBackend::from_snapshot(s.model.clone(), &mid.unwrap()).unwrap();
    r.advance(1500).unwrap();
    assert_eq!(r.insertion_counts(), b.insertion_counts());
    let (pa, pb) = (r.particles().unwrap(), b.particles().unwrap());
    assert!(pa.position == pb.position && pa.flags == pb.flags);
    // Without removal the capacity bounds the insertions, as before.
    let text = varidem::io::scene_to_toml(&s);
    assert!(text.contains("on_exit = \"remove\""));
    let closed =
        varidem::io::parse_scene(&text.replace("on_exit = \"remove\"", "on_exit = \"error\""))
            .unwrap();
    let ins = &closed.model.inserters[0];
    assert_eq!((ins.live_limit, ins.capacity), (None, 60));
}
