//! The poured bed of `varidem bench --workload poured-bed` (issue 27): a random
//! packing rained into a box, settled once on the CPU and cached.

#![allow(missing_docs, reason = "test crate")]

use varidem::backend::Backend;
use varidem::bench::{kinetic_energy, PouredBed};

/// 400 spheres pour and settle: at rest (kinetic energy at most 10⁻⁶ of the pour's
/// peak, which a fall of a few cm makes about 1 mm/s), every sphere inside the box and
/// below its loose height, in a random packing (not the loose lattice: the mean
/// number of contacts is between 3 and 6, as in a poured bed), and the cache gives back
/// the same bits without pouring again.
#[test]
fn the_poured_bed_settles_into_the_box_and_is_cached() {
    let bed = PouredBed::new(400);
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    let (built, fresh) = bed
        .load_or_build(dir.path(), |t, f| checks.push((t, f)))
        .unwrap();
    assert!(fresh);
    let (last_t, last_f) = *checks.last().unwrap();
    assert!(last_f <= 1e-6, "{checks:?}");
    assert!(last_t > 0.05 && last_t < bed.max_time, "{last_t}");
    // The peak came during the pour, well above the end.
    assert!(checks.iter().any(|&(_, f)| f > 0.1), "{checks:?}");

    let loose = bed.loose_scene().unwrap();
    let top = loose
        .model
        .particles
        .position
        .iter()
        .map(|x| x.z)
        .fold(0.0, f64::max);
    let width = loose.model.walls[3].point.x;
    let s = &built.state;
    assert_eq!(s.position.len(), 400);
    for (i, x) in s.position.iter().enumerate() {
        let r = loose.model.particles.radius[i];
        // Overlaps with a wall are a few percent of a radius under the bed's weight.
        let inside = |c: f64, hi: f64| c > 0.9 * r && c < hi - 0.9 * r;
        assert!(
            inside(x.x, width) && inside(x.y, width) && x.z > 0.9 * r && x.z < top,
            "sphere {i} at {x} (box {width} m wide, loose top {top} m)"
        );
    }
    // The settled state, restored: it is at rest, and its contacts are a packing's.
    let mut cpu =
        varidem::cpu::CpuBackend::from_snapshot(built.scene.model.clone(), &built.state).unwrap();
    let p = cpu.particles().unwrap();
    let peak_speed2 = p
        .velocity
        .iter()
        .map(|v| v.length_squared())
        .fold(0.0, f64::max);
    assert!(peak_speed2.sqrt() < 0.02, "{}", peak_speed2.sqrt());
    assert!(kinetic_energy(&p) > 0.0);
    let frame = cpu.frame().unwrap();
    let contacts = frame
        .contact_count
        .iter()
        .map(|&c| f64::from(c))
        .sum::<f64>()
        / 400.0;
    assert!(
        (3.0..6.0).contains(&contacts),
        "{contacts} contacts per sphere"
    );

    let mut again = Vec::new();
    let (cached, fresh) = bed
        .load_or_build(dir.path(), |t, f| again.push((t, f)))
        .unwrap();
    assert!(!fresh && again.is_empty());
    assert_eq!(cached, built);
}

/// The cache directory: `VARIDEM_CACHE_DIR`, then `XDG_CACHE_HOME`, then `HOME`.
#[test]
fn the_cache_directory_follows_the_environment() {
    use std::path::PathBuf;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| (*v).to_string())
        }
    };
    let dir = varidem::bench::cache_dir;
    assert_eq!(
        dir(env(&[("VARIDEM_CACHE_DIR", "/c"), ("HOME", "/h")])),
        PathBuf::from("/c")
    );
    assert_eq!(
        dir(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
        PathBuf::from("/x/varidem")
    );
    assert_eq!(
        dir(env(&[("HOME", "/h")])),
        PathBuf::from("/h/.cache/varidem")
    );
    assert_eq!(dir(env(&[])), PathBuf::from("varidem-cache"));
}
