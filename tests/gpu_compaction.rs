//! Open systems store only what is in them on the GPU too (issue 44 item 4): the device
//! holds the particles in the system and the reserved ones due next, and sets up a new
//! layout from a snapshot when the next event's spheres are not stored. The results are
//! the bits of a run that stores every id, and the storage stays a small multiple of
//! the live particles however many pass through.

#![allow(missing_docs, reason = "test crate")]

mod common;
mod gpu_common;

use common::stream::stream;
use varidem::backend::Backend;
use varidem::gpu::{GpuBackend, GpuOptions, Precision};
use varidem::model::Scene;

fn gpu(s: &Scene, precision: Precision, compact: bool, test: &str) -> Option<GpuBackend> {
    let ctx = gpu_common::context_for(test, precision)?;
    let options = GpuOptions {
        precision,
        compact_storage: Some(compact),
        ..GpuOptions::default()
    };
    Some(
        GpuBackend::with_context(
            ctx,
            s.model.clone(),
            s.simulation.integrator,
            s.simulation.dt,
            &options,
        )
        .unwrap_or_else(|e| panic!("{test}: {e}")),
    )
}

/// Bits of the particles in the system (ids and state) and of the energy row.
fn bits(b: &mut GpuBackend) -> (Vec<u64>, Vec<u64>) {
    let frame = b.frame().unwrap();
    let (f, ids) = frame
        .in_system()
        .unwrap_or_else(|| (frame.clone(), (0..frame.particles.len() as u32).collect()));
    let p = &f.particles;
    let state: Vec<u64> = [
        &p.position,
        &p.velocity,
        &p.rotation,
        &p.angular_velocity,
        &f.force,
    ]
    .iter()
    .flat_map(|v| v.iter().flat_map(|x| x.to_array().map(f64::to_bits)))
    .chain(ids.iter().map(|&i| u64::from(i)))
    .collect();
    let d = b.diagnostics().unwrap();
    let energy = [d.e_kin, d.e_rot, d.potentials.total(), d.momentum.z]
        .map(f64::to_bits)
        .to_vec();
    (state, energy)
}

/// The falling stream for 0.06 s (3000 steps, 31 events of 40 beads), in both
/// precisions: compacted storage gives the bits of full storage at every 250th step
/// (the particles in the system, energies), the same exits and insertion counts, and
/// the same checkpointed state of every id; it holds under half the ids and sets up new
/// layouts on the way.
#[test]
fn gpu_compacted_storage_gives_the_bits_of_full_storage() {
    let s = stream(0.06);
    for precision in [Precision::F64, Precision::F32] {
        let test = format!("gpu_compaction_{precision}");
        let Some(mut a) = gpu(&s, precision, true, &test) else {
            continue;
        };
        let mut b = gpu(&s, precision, false, &test).unwrap();
        assert_eq!(b.compacted_storage(), None);
        for chunk in 0..12 {
            a.advance(250).unwrap();
            b.advance(250).unwrap();
            let step = 250 * (chunk + 1);
            let (x, y) = (bits(&mut a), bits(&mut b));
            let first = |u: &[u64], v: &[u64]| u.iter().zip(v).position(|(p, q)| p != q);
            assert!(
                x == y,
                "{precision}, step {step}: state {} / {} words, first difference at {:?}; energy {:?}",
                x.0.len(),
                y.0.len(),
                first(&x.0, &y.0),
                first(&x.1, &y.1)
            );
        }
        let (slots, restores) = a.compacted_storage().unwrap();
        assert!(
            slots < 1240 / 2 && restores > 0,
            "{precision}: {slots} slots, {restores} new layouts"
        );
        assert_eq!(a.exits(0).unwrap(), b.exits(0).unwrap());
        assert_eq!(a.insertion_counts(), b.insertion_counts());
        // The checkpointed state, every id (reserved and removed ones too, with their
        // f32 Kahan terms and device coordinates), is the same.
        let (sa, sb) = (a.checkpoint_state().unwrap(), b.checkpoint_state().unwrap());
        let same = [
            ("position", sa.position == sb.position),
            ("velocity", sa.velocity == sb.velocity),
            ("rotation", sa.rotation == sb.rotation),
            ("compensation", sa.compensation == sb.compensation),
            ("device_position", sa.device_position == sb.device_position),
            (
                "removals",
                (&sa.removed, &sa.exit_steps) == (&sb.removed, &sb.exit_steps),
            ),
            ("contacts", sa.contacts == sb.contacts),
        ];
        let differ: Vec<&str> = same.iter().filter(|(_, s)| !s).map(|(n, _)| *n).collect();
        assert!(
            differ.is_empty(),
            "{precision}: checkpoints differ in {differ:?}"
        );
        assert!(sa == sb, "{precision}: checkpoints differ");
        eprintln!("{precision}: {slots} slots for 1240 ids, {restores} new layouts");
    }
}

/// The stream fed for 0.25 s (12 500 steps, 126 events of 40 beads: 5040 beads, 20
/// times the 250 or so in the domain at a time) in f32: the device never holds more
/// than 1.5 times the live particles and one event's batch, rounded up to 256, nor an
/// eighth of the ids, and every bead is inserted and removed.
#[test]
fn gpu_stream_twenty_times_its_live_count_runs_in_bounded_storage() {
    let s = stream(0.25);
    let Some(mut a) = gpu(&s, Precision::F32, true, "gpu_compaction_stream") else {
        return;
    };
    let (mut max_slots, mut max_live) = (0, 0);
    for _ in 0..50 {
        a.advance(250).unwrap();
        let live = a
            .frame()
            .unwrap()
            .in_system()
            .map_or(0, |(f, _)| f.particles.len());
        max_live = max_live.max(live);
        let (slots, _) = a.compacted_storage().unwrap();
        max_slots = max_slots.max(slots);
    }
    let inserted = a.insertion_counts()[0].inserted;
    assert_eq!(inserted, 5040);
    let removed = a.checkpoint_state().unwrap().removed.len() as u64;
    assert!(removed + 400 >= inserted, "{removed} removed");
    let (_, restores) = a.compacted_storage().unwrap();
    assert!(
        max_slots <= 2 * (max_live + 40) + 256 && 8 * max_slots as u64 <= inserted,
        "{max_slots} slots at most for {max_live} live of {inserted} inserted"
    );
    eprintln!(
        "{max_slots} slots at most, {max_live} live at most, {inserted} inserted, {removed} removed, {restores} new layouts"
    );
}
