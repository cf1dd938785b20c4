//! Checkpoints with valid checksums but hostile contents (issue 49, item 14): bytes of
//! the body changed and the CRC-32 recomputed, so every check past the checksum is
//! what stands between the file and the engine. Reading must give a checkpoint or a
//! named error, never a panic, and a checkpoint that reads must restore on the CPU
//! backend (or be refused there by name) and step without a panic.

use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;
use varidem::backend::Backend;
use varidem::checkpoint::Checkpoint;
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene_in;

/// Magic (19 bytes), version (4) and length (8): mutations start after them, so they
/// reach the decoder instead of failing on the header.
const HEADER: usize = 31;

/// Small runs of three kinds (binder bonds, a granular clump pour with contact
/// history, hard contacts with a mesh), checkpointed a few steps in, as file bytes.
fn originals() -> &'static [Vec<u8>] {
    static BYTES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes"));
        [
            "torus-impact.toml",
            "clump-pour.toml",
            "hard-pile.toml",
            "hopper.toml",
        ]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let scene = parse_scene_in(&text, dir).unwrap();
            let mut b = CpuBackend::new(&scene).unwrap();
            b.advance(3).unwrap();
            Checkpoint::take(&scene, &mut b, Some(3))
                .unwrap()
                .to_bytes()
        })
        .collect()
    })
}

/// `bytes` with its trailing CRC-32 made right again.
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// Reads `bytes`; when they decode, restores and steps them on the CPU.
fn read_restore_step(bytes: &[u8]) {
    let Ok(c) = Checkpoint::from_bytes(bytes, Path::new("fuzz.vdc")) else {
        return;
    };
    if c.scene.model.sphere_count() > 20_000 {
        return;
    }
    if let Ok(mut b) = CpuBackend::from_snapshot(c.scene.model.clone(), &c.state) {
        let _ = b.advance(2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
    ))]

    /// A few bytes of the body set to random or extreme values.
    #[test]
    fn resealed_byte_edits(which in 0usize..4, edits in prop::collection::vec((any::<u32>(), any::<u8>(), 0usize..4), 1..8)) {
        let mut bytes = originals()[which].clone();
        let body = bytes.len() - 4 - HEADER;
        for (at, value, kind) in edits {
            let i = HEADER + at as usize % body;
            bytes[i] = match kind {
                0 => value,
                1 => 0xff,
                2 => 0,
                _ => bytes[i].wrapping_add(1),
            };
        }
        let bytes = reseal(bytes);
        let r = std::panic::catch_unwind(|| read_restore_step(&bytes));
        prop_assert!(r.is_ok(), "a resealed checkpoint panicked");
    }

    /// An 8-byte field overwritten with a count-like or float-like value (counts that
    /// claim more than the file holds, NaN, ±inf, huge and negative numbers).
    #[test]
    fn resealed_word_edits(which in 0usize..4, at in any::<u32>(), word in prop::sample::select(vec![
        u64::MAX, u64::MAX / 2, 1 << 40, 0, 1, f64::NAN.to_bits(), f64::INFINITY.to_bits(),
        (-1.0f64).to_bits(), 1e308f64.to_bits(), 1e-320f64.to_bits(), u32::MAX as u64,
    ])) {
        let mut bytes = originals()[which].clone();
        let body = bytes.len() - 4 - HEADER - 8;
        let i = HEADER + at as usize % body;
        bytes[i..i + 8].copy_from_slice(&word.to_le_bytes());
        let bytes = reseal(bytes);
        let r = std::panic::catch_unwind(|| read_restore_step(&bytes));
        prop_assert!(r.is_ok(), "a resealed checkpoint panicked");
    }
}

/// The originals themselves read back whole and restore (the fuzzing starts from
/// valid files).
#[test]
fn the_originals_read_and_restore() {
    for bytes in originals() {
        let c = Checkpoint::from_bytes(bytes, Path::new("x.vdc")).unwrap();
        CpuBackend::from_snapshot(c.scene.model.clone(), &c.state).unwrap();
    }
}
