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

/// The LIGGGHTS export of a settled bed: every sphere with its diameter, density
/// (mass over volume) and position, its velocities, the five planes as `wall/gran`
/// primitives, the material and the time step; a scene LIGGGHTS's Hertz model does not
/// share (here the binder law) is refused by name.
#[test]
fn the_liggghts_export_carries_the_bed() {
    use varidem::io::liggghts::{write_liggghts, LIGGGHTS_DATA, LIGGGHTS_INPUT};
    let bed = PouredBed::new(50);
    let mut scene = bed.loose_scene().unwrap();
    let mut cpu = varidem::cpu::CpuBackend::new(&scene).unwrap();
    cpu.advance(10).unwrap();
    let state = cpu.checkpoint_state().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_liggghts(dir.path(), &scene, &state).unwrap();
    let data = std::fs::read_to_string(dir.path().join(LIGGGHTS_DATA)).unwrap();
    let input = std::fs::read_to_string(dir.path().join(LIGGGHTS_INPUT)).unwrap();
    assert!(data.contains("\n50 atoms\n1 atom types\n"), "{data}");
    let atoms: Vec<Vec<f64>> = data
        .split("Atoms\n")
        .nth(1)
        .unwrap()
        .split("Velocities")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(atoms.len(), 50);
    let p = &scene.model.particles;
    for (i, a) in atoms.iter().enumerate() {
        assert_eq!(a[0], (i + 1) as f64);
        assert_eq!(a[2], 2.0 * p.radius[i]);
        let volume = 4.0 / 3.0 * std::f64::consts::PI * p.radius[i].powi(3);
        assert!((a[3] - 2500.0).abs() < 1e-9 && a[3] == p.mass[i] / volume);
        assert_eq!([a[4], a[5], a[6]], state.position[i].to_array());
    }
    assert_eq!(input.matches("fix wall").count(), 5, "{input}");
    assert!(input.contains("zplane 0e0"), "{input}");
    assert!(input.contains("youngsModulus peratomtype 5e6"), "{input}");
    assert!(
        input.contains(&format!("timestep {:e}", state.dt)),
        "{input}"
    );
    assert!(input.contains("pair_style gran model hertz tangential history"));

    scene.model.contact.as_mut().unwrap().law = varidem::model::ContactLaw::Binder { k_pp: 1.0 };
    let e = write_liggghts(dir.path(), &scene, &state).unwrap_err();
    assert!(e.to_string().contains("not under the Hertz law"), "{e}");
}
