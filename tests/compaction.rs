//! Open systems store only what is in them (issue 44 item 4): on the CPU backend a
//! reserved particle takes a storage slot when its inserter places it, and a removed
//! one leaves storage at the next neighbour-list rebuild. The results are the bits of a
//! run that keeps every id in storage, and the storage stays the size of the live
//! particles however many pass through.

mod common;

use common::stream::stream;
use varidem::backend::Backend;
use varidem::cpu::CpuBackend;

/// Bits of every state array by id and of the energy row.
fn bits(b: &mut CpuBackend) -> (Vec<u64>, Vec<u64>) {
    let p = b.particles().unwrap();
    let state: Vec<u64> = [&p.position, &p.velocity, &p.rotation, &p.angular_velocity]
        .iter()
        .flat_map(|v| v.iter().flat_map(|x| x.to_array().map(f64::to_bits)))
        .chain(p.flags.iter().map(|&f| u64::from(f)))
        .collect();
    let d = b.diagnostics().unwrap();
    let energy = [d.e_kin, d.e_rot, d.potentials.total(), d.momentum.z]
        .map(f64::to_bits)
        .to_vec();
    (state, energy)
}

/// The falling stream for 0.06 s (3000 steps, 31 events of 40 beads): compacted
/// storage gives the uncompacted run's bits at every 250th step (state by id,
/// energies), the same exits, and the same checkpointed positions and contact history.
#[test]
fn compacted_storage_gives_the_bits_of_full_storage() {
    let s = stream(0.06);
    let mut a = CpuBackend::with_compaction(&s, true).unwrap();
    let mut b = CpuBackend::with_compaction(&s, false).unwrap();
    let ids = b.stored();
    assert_eq!(
        ids, 1240,
        "every reserved bead has a slot without compaction"
    );
    for chunk in 0..12 {
        a.advance(250).unwrap();
        b.advance(250).unwrap();
        assert_eq!(bits(&mut a), bits(&mut b), "step {}", 250 * (chunk + 1));
        assert_eq!(b.stored(), ids);
    }
    assert!(
        a.dropped() > 100 && a.stored() < ids / 2,
        "{} dropped",
        a.dropped()
    );
    assert_eq!(a.exits(0).unwrap(), b.exits(0).unwrap());
    let (sa, sb) = (a.checkpoint_state().unwrap(), b.checkpoint_state().unwrap());
    assert_eq!(sa.position, sb.position);
    assert_eq!(sa.velocity, sb.velocity);
    assert_eq!((&sa.removed, &sa.exit_steps), (&sb.removed, &sb.exit_steps));
    let (ca, cb) = (sa.contacts.unwrap(), sb.contacts.unwrap());
    assert_eq!((ca.partner, ca.spring), (cb.partner, cb.spring));
}

/// The stream fed for 0.25 s (12 500 steps, 126 events of 40 beads: 5040 beads, 20
/// times the 250 or so in the domain at a time): the slots never exceed the live
/// particles plus one event's batch and those removed since the last rebuild, and the
/// removed ones leave storage.
#[test]
fn a_stream_twenty_times_its_live_count_runs_in_bounded_storage() {
    let s = stream(0.25);
    let mut a = CpuBackend::new(&s).unwrap();
    let (mut max_stored, mut max_live) = (0, 0);
    for _ in 0..50 {
        a.advance(250).unwrap();
        let live = a
            .frame()
            .unwrap()
            .in_system()
            .map_or(0, |(f, _)| f.particles.len());
        max_live = max_live.max(live);
        max_stored = max_stored.max(a.stored());
        assert!(
            a.stored() <= live + 40 + 100,
            "{} stored, {live} live",
            a.stored()
        );
    }
    let inserted = a.insertion_counts()[0].inserted;
    assert_eq!(inserted, 5040);
    let removed = a.checkpoint_state().unwrap().removed.len() as u64;
    assert!(removed + 400 >= inserted, "{removed} removed");
    assert!(
        20 * max_live as u64 <= inserted + 20 * 40 && 15 * max_stored as u64 <= inserted,
        "{max_stored} slots at most for {max_live} live of {inserted} inserted"
    );
    assert!(a.dropped() + 150 >= removed, "{} dropped", a.dropped());
    eprintln!("{max_stored} slots at most, {max_live} live at most, {inserted} inserted, {removed} removed, {} dropped", a.dropped());
}
