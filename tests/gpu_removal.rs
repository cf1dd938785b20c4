//! Open systems on the GPU (issue 44 item 4): particles that leave the domain are
//! listed in `removed.csv` with the steps and states at exit of the CPU backend in
//! f64, and an f32 run is deterministic and resumes bit for bit, its exit steps
//! included (the CPU twin: removal.rs).

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::stream::{capped_stream, final_ids, removed, stream, FLOOR};
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;
use varidem::gpu::Precision;
use varidem::run::{run_with, OutputOptions};

fn options() -> OutputOptions {
    OutputOptions {
        vtk: false,
        checkpoint_every: None,
        progress: false,
        run_id: None,
    }
}

/// 1500 steps of the stream (about 600 beads out of 1000 inserted): the GPU in f64
/// writes the rows of the CPU's removed.csv, the same steps and ids, states within
/// 1e-9 of each column's largest value (the f64 kernels follow the CPU's arithmetic;
/// the pour of gpu_insertion.rs measures bitwise), and final.csv has the same ids.
#[test]
fn gpu_f64_lists_the_exits_of_the_cpu() {
    let s = stream(0.03);
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "removal_gpu_f64") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("cpu"), tmp.path().join("gpu"));
    run_with(&s, &mut CpuBackend::new(&s).unwrap(), &a, &options()).unwrap();
    run_with(&s, &mut gpu, &b, &options()).unwrap();
    let (ra, rb) = (removed(&a), removed(&b));
    assert!(ra.len() > 300, "{} exits", ra.len());
    let key = |r: &common::stream::Removed| (r.step, r.id, r.t);
    assert_eq!(
        ra.iter().map(key).collect::<Vec<_>>(),
        rb.iter().map(key).collect::<Vec<_>>()
    );
    for column in 0..6 {
        let value = |r: &common::stream::Removed| {
            if column < 3 {
                r.x[column]
            } else {
                r.v[column - 3]
            }
        };
        let scale = ra.iter().map(|r| value(r).abs()).fold(0.0, f64::max);
        let worst = ra
            .iter()
            .zip(&rb)
            .map(|(p, q)| (value(p) - value(q)).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= 1e-9 * scale,
            "column {column}: {worst:e} of {scale:e}"
        );
    }
    assert_eq!(final_ids(&a), final_ids(&b));
}

/// The stream in f32: the same run twice is the same bits, and a checkpoint taken
/// mid-stream resumes to them (removed particles, their exit steps and states
/// included); every exit lies below the floor.
#[test]
fn gpu_f32_removal_is_deterministic_and_resumes_bitwise() {
    let s = stream(0.03);
    let Some(mut a) = gpu_common::f32_deterministic(&s, "removal_gpu_f32", 750, 750) else {
        return;
    };
    let exits = a.exits(0).unwrap();
    let snap = a.checkpoint_state().unwrap();
    assert!(exits.len() > 300, "{} exits", exits.len());
    assert_eq!(exits.len(), snap.removed.len());
    assert!(exits.iter().all(|e| e.position.z < FLOOR && e.step <= 1500));
    assert!(exits.iter().any(|e| e.step <= 750) && exits.iter().any(|e| e.step > 750));
}

/// The capped stream (at most 60 beads in the domain, removal.rs) on the GPU in f64:
/// the same insertions and skips as the CPU (`inserters.csv` byte for byte), the same
/// exits and final ids.
#[test]
fn gpu_f64_caps_the_beads_in_the_system_as_the_cpu() {
    let s = capped_stream(0.03, 60);
    let Some(mut gpu) = gpu_common::backend(&s, Precision::F64, "removal_gpu_capped") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("cpu"), tmp.path().join("gpu"));
    run_with(&s, &mut CpuBackend::new(&s).unwrap(), &a, &options()).unwrap();
    run_with(&s, &mut gpu, &b, &options()).unwrap();
    let csv = |d: &std::path::Path| std::fs::read_to_string(d.join("inserters.csv")).unwrap();
    assert_eq!(csv(&a), csv(&b));
    let skipped = gpu.insertion_counts()[0].skipped;
    assert!(skipped > 0, "the cap was reached");
    let ids = |rows: Vec<common::stream::Removed>| -> Vec<(u64, u32)> {
        rows.iter().map(|r| (r.step, r.id)).collect()
    };
    assert_eq!(ids(removed(&a)), ids(removed(&b)));
    assert_eq!(final_ids(&a), final_ids(&b));
}
