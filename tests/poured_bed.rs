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
    let contacts = contacts_per_sphere(&mut cpu);
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

    tiling_keeps_the_packing(&built, contacts);
}

/// Contacts per sphere of the backend's current state, walls included.
fn contacts_per_sphere(b: &mut varidem::cpu::CpuBackend) -> f64 {
    let frame = b.frame().unwrap();
    let n = frame.contact_count.len() as f64;
    frame
        .contact_count
        .iter()
        .map(|&c| f64::from(c))
        .sum::<f64>()
        / n
}

/// `tile_bed` (issue 43) on the settled 400-sphere bed: one copy is the bed itself, bit
/// for bit; 3 × 2 copies hold six mirrored copies of its state in a box three and two
/// times as wide, every sphere inside it, with the same packing fraction and, once the
/// seams have settled for 200 steps, the bed's contacts per sphere within 3 % (the
/// seams' spheres, a fifth of this small bed's, meet their mirror images instead of a
/// wall; measured 0.5 % on 2 × 2 copies of the 10⁴ bed).
fn tiling_keeps_the_packing(bed: &varidem::checkpoint::Checkpoint, contacts: f64) {
    use varidem::bench::{tile_bed, tile_counts};
    assert_eq!(&tile_bed(bed, (1, 1)).unwrap(), bed);
    let n = bed.state.position.len();
    let tiled = tile_bed(bed, (3, 2)).unwrap();
    let s = &tiled.state;
    assert_eq!(s.position.len(), 6 * n);
    assert_eq!(tiled.scene.model.particles.len(), 6 * n);
    let width = bed.scene.model.walls[3].point.x;
    let walls = &tiled.scene.model.walls;
    assert_eq!(walls[3].point.x, 3.0 * width);
    assert_eq!(walls[4].point.y, 2.0 * width);
    // Copy (1, 0) is the bed mirrored in x and shifted by one width; copy (2, 1) is it
    // shifted by two widths and one width, mirrored in y.
    for i in 0..n {
        let x = bed.state.position[i];
        let m = s.position[n + i];
        assert!((m - glam::DVec3::new(2.0 * width - x.x, x.y, x.z)).length() < 1e-15);
        assert_eq!(s.velocity[n + i].x, -bed.state.velocity[i].x);
        let k = s.position[5 * n + i];
        assert!((k - glam::DVec3::new(2.0 * width + x.x, 2.0 * width - x.y, x.z)).length() < 1e-15);
    }
    for (i, x) in s.position.iter().enumerate() {
        let r = tiled.scene.model.particles.radius[i];
        assert!(
            x.x > 0.9 * r
                && x.x < 3.0 * width - 0.9 * r
                && x.y > 0.9 * r
                && x.y < 2.0 * width - 0.9 * r,
            "sphere {i} at {x}"
        );
    }
    let mut cpu =
        varidem::cpu::CpuBackend::from_snapshot(tiled.scene.model.clone(), &tiled.state).unwrap();
    cpu.advance(200).unwrap();
    let after = contacts_per_sphere(&mut cpu);
    // The bed's contacts counted walls included: the tiled box has fewer side walls
    // per sphere, and the seams' pairs take their place.
    assert!(
        (after - contacts).abs() < 0.03 * contacts,
        "{after} contacts per sphere after tiling, {contacts} in the bed"
    );
    assert_eq!(tile_counts(100_000, 10_000), (5, 2));
    assert_eq!(tile_counts(1_000_000, 10_000), (10, 10));
    assert_eq!(tile_counts(7_000, 1_000), (7, 1));
    assert_eq!(tile_counts(10, 10_000), (1, 1));
    assert!(tile_bed(bed, (0, 1)).is_err());
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
