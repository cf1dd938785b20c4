//! Where the device's coordinates are centred: the `f32` backend stores positions
//! relative to an origin `O` near the scene, so that its accuracy does not depend on
//! where the scene sits (issue 29; `docs/physics.md`, *Single precision and
//! placement*).
//!
//! An `f32` coordinate `x` carries an absolute rounding of `ulp(|x|)/2`: 3·10⁻⁸ m at
//! 1 m, 4.8·10⁻⁷ m at 10 m, 3.1·10⁻⁵ m at 1000 m. Contact overlaps and bond strains are
//! differences of nearby coordinates, so their absolute error is that of the
//! coordinates, whatever the particle size. Stored relative to `O`, coordinates are at
//! most about the scene's own extent, and a scene translated by any distance is, on
//! the device, the same scene (to the `f64` rounding of the translation).
//!
//! The host keeps absolute positions: the model, snapshots, frames and every output
//! add `O` back in `f64`. The diagnostics that depend on the origin (the field energy
//! `−Σ m g·x` and the angular momentum `Σ x × m v`) are corrected on the host
//! ([`absolute_field_energy`], [`absolute_angular_momentum`]). The `f64` backend keeps
//! `O = 0` (its rounding at 1000 m, 1.1·10⁻¹³ m, is below any overlap), and so does a
//! scene whose box already contains or nearly contains the origin, so their bits are
//! those of absolute coordinates.

use glam::DVec3;

use crate::model::{Model, Particles};

/// The device origin for `particles` in `f32`: per axis, zero when the centre of the
/// particles' box lies within the box's half-extent `e` of the origin (rebasing would
/// gain at most a factor 2), else the centre rounded to a multiple of `q`, the power of
/// two at or above `e`. The rounding makes `O` exact in `f32` and `f64` and keeps
/// `|x − O| ≤ e + q/2 ≤ 3e`. No particles: zero.
pub fn device_origin(particles: &Particles) -> DVec3 {
    let (Some(lo), Some(hi)) = (
        particles.position.iter().copied().reduce(DVec3::min),
        particles.position.iter().copied().reduce(DVec3::max),
    ) else {
        return DVec3::ZERO;
    };
    let r = particles.radius.iter().copied().fold(0.0, f64::max);
    let centre = 0.5 * (lo + hi);
    // The largest half-extent over the axes, grains included, so every axis rounds to
    // the same quantum.
    let e = (0.5 * (hi - lo)).max_element() + r;
    if !centre.is_finite() || !e.is_finite() {
        return DVec3::ZERO;
    }
    let q = if e > 0.0 { e.log2().ceil().exp2() } else { 1.0 };
    let axis = |c: f64| {
        if c.abs() <= e {
            0.0
        } else {
            (c / q).round() * q
        }
    };
    DVec3::new(axis(centre.x), axis(centre.y), axis(centre.z))
}

/// `model` in device coordinates (origin `origin`): positions, the domain, and each
/// wall's point moved to the plane's point nearest `origin` (so a wall's record holds
/// the smallest coordinates that describe its plane). With `origin = 0` the model is
/// returned as it is.
pub fn to_device(model: &Model, origin: DVec3) -> Model {
    let mut m = model.clone();
    if origin == DVec3::ZERO {
        return m;
    }
    for x in &mut m.particles.position {
        *x -= origin;
    }
    for c in &mut m.clumps {
        c.position -= origin;
    }
    for mesh in &mut m.meshes {
        for v in &mut mesh.mesh.vertices {
            *v -= origin;
        }
        // Moments of its load are taken about it on the device (meshes at rest).
        mesh.motion.axis_point -= origin;
    }
    for w in &mut m.walls {
        // The plane n·(x − p) = 0: its point nearest O is O + n·((p − O)·n).
        w.point = w.normal * (w.point - origin).dot(w.normal);
    }
    if let Some(d) = &mut m.domain {
        d.min -= origin;
        d.max -= origin;
    }
    m
}

/// The field energy `−Σ m a·x` of absolute positions from that of device positions
/// (`e_device`, relative to `origin`): `− (Σ m) a·O` added, with `mass` every
/// particle's mass (the reduction sums every particle).
pub fn absolute_field_energy(e_device: f64, mass: &[f64], gravity: DVec3, origin: DVec3) -> f64 {
    if origin == DVec3::ZERO {
        return e_device;
    }
    let total: f64 = mass.iter().sum();
    e_device - total * gravity.dot(origin)
}

/// The angular momentum about the absolute origin from that about `origin`:
/// `L = L_O + O × P`, with `P` the linear momentum.
pub fn absolute_angular_momentum(l_device: DVec3, momentum: DVec3, origin: DVec3) -> DVec3 {
    if origin == DVec3::ZERO {
        return l_device;
    }
    l_device + origin.cross(momentum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Domain, Particle, Wall};

    fn particles(xs: &[DVec3], r: f64) -> Particles {
        let mut p = Particles::default();
        for &x in xs {
            p.push(Particle::at_rest(x, 1.0, r));
        }
        p
    }

    #[test]
    fn a_scene_around_the_origin_keeps_it() {
        let p = particles(
            &[DVec3::new(-0.5, 0.0, 0.1), DVec3::new(0.5, 0.2, 0.3)],
            0.01,
        );
        assert_eq!(device_origin(&p), DVec3::ZERO);
        // Off the origin by less than its half-extent on an axis: that axis stays.
        let p = particles(
            &[DVec3::new(0.0, 0.0, 0.0), DVec3::new(1.0, 1.0, 1.0)],
            0.01,
        );
        assert_eq!(device_origin(&p), DVec3::ZERO);
    }

    #[test]
    fn a_far_scene_is_centred_on_a_round_origin() {
        let d = DVec3::new(1000.0, -12.3, 0.0);
        let xs = [
            DVec3::new(-0.3, 0.0, 0.1) + d,
            DVec3::new(0.3, 0.1, 0.4) + d,
        ];
        let p = particles(&xs, 0.01);
        let o = device_origin(&p);
        // e = 0.31 → q = 0.5: centres 1000.0 and −12.25 (rounded), z near 0 kept.
        assert_eq!(o, DVec3::new(1000.0, -12.5, 0.0));
        for x in &xs {
            assert!(((*x - o).abs().max_element()) <= 3.0 * 0.31, "{x} − {o}");
        }
        // Exactly representable in f32.
        assert_eq!(f64::from(o.y as f32), o.y);
    }

    #[test]
    fn device_coordinates_move_walls_to_the_nearest_point() {
        let mut m = Model {
            particles: particles(&[DVec3::new(100.0, 100.0, 100.0)], 0.01),
            ..Model::default()
        };
        m.walls.push(Wall {
            point: DVec3::new(250.0, 37.0, 99.0),
            normal: DVec3::Z,
            stiffness: 1.0,
            material: None,
            motion: Default::default(),
        });
        m.domain = Some(Domain {
            min: DVec3::splat(90.0),
            max: DVec3::splat(110.0),
            remove: false,
        });
        let o = DVec3::splat(100.0);
        let d = to_device(&m, o);
        assert_eq!(d.particles.position[0], DVec3::ZERO);
        assert_eq!(d.walls[0].point, DVec3::new(0.0, 0.0, -1.0));
        let dom = d.domain.unwrap();
        assert_eq!(
            (dom.min, dom.max),
            (DVec3::splat(-10.0), DVec3::splat(10.0))
        );
        // The same plane: a device point's distance equals the absolute one.
        let x = DVec3::new(101.0, 99.0, 100.5);
        assert_eq!(d.walls[0].distance(x - o), m.walls[0].distance(x));
    }

    #[test]
    fn diagnostics_corrections_restore_absolute_values() {
        let (m, a, o) = (2.0, DVec3::new(0.0, 0.0, -9.81), DVec3::new(10.0, 0.0, 5.0));
        let (x, v) = (DVec3::new(10.5, 1.0, 5.25), DVec3::new(1.0, 2.0, 3.0));
        let e_abs = -m * a.dot(x);
        let e_dev = -m * a.dot(x - o);
        assert!((absolute_field_energy(e_dev, &[m], a, o) - e_abs).abs() < 1e-12);
        let l_abs = x.cross(m * v);
        let l_dev = (x - o).cross(m * v);
        let l = absolute_angular_momentum(l_dev, m * v, o);
        assert!((l - l_abs).length() < 1e-12);
    }
}
