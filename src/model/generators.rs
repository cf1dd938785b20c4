//! Generators for common set-ups: a ring (the torus of Baker & Gonzalez §4.1) and a
//! bonded lattice block.

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::sizes::RadiusDistribution;
use crate::model::{Bond, BondError, BondStiffness, Model, Particle};

/// A ring ("torus") of `count` equal spheres in point contact on a circle of diameter
/// `diameter` (`D_p = D_t sin(π/N_p)`, §4.1), each bonded to its two neighbours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ring {
    /// Number of particles `N_p`.
    pub count: usize,
    /// Diameter `D_t` of the centre line (m).
    pub diameter: f64,
    /// Centre (m).
    pub center: DVec3,
    /// Unit normal of the ring's plane.
    pub axis: DVec3,
    /// Particle mass (kg).
    pub mass: f64,
    /// Particle moment of inertia (kg m²); `None`: `2/5 m r²`.
    pub inertia: Option<f64>,
    /// Common initial velocity (m/s).
    pub velocity: DVec3,
    /// Common initial spatial angular velocity (rad/s).
    pub angular_velocity: DVec3,
    /// Bond consecutive particles (closing the ring).
    pub bond: bool,
    /// Amplitude of a uniform random velocity added per component, in `[−a, a]` (m/s).
    pub random_velocity: f64,
    /// Amplitude of a uniform random angular velocity per component (rad/s).
    pub random_angular_velocity: f64,
    /// Seed of the ChaCha8 generator for the random parts.
    pub seed: u64,
}

/// Two unit vectors completing `axis` to a right-handed orthonormal frame.
fn frame(axis: DVec3) -> (DVec3, DVec3) {
    let n = axis.normalize();
    let helper = if n.x.abs() < 0.9 { DVec3::X } else { DVec3::Y };
    let u = (helper - n * helper.dot(n)).normalize();
    (u, n.cross(u))
}

impl Ring {
    /// Particle radius `D_t sin(π/N_p)/2`.
    pub fn particle_radius(&self) -> f64 {
        0.5 * self.diameter * (std::f64::consts::PI / self.count as f64).sin()
    }

    /// Adds the ring's particles (and bonds with stiffness `k`) to `model`.
    pub fn add_to(&self, model: &mut Model, k: BondStiffness) -> Result<(), BondError> {
        // Orient the frame so that with axis = z the first particle sits at +x.
        let (u, w) = if self.axis.normalize().abs_diff_eq(DVec3::Z, 1e-15) {
            (DVec3::X, DVec3::Y)
        } else {
            frame(self.axis)
        };
        let r = self.particle_radius();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut sym = |a: f64| {
            if a == 0.0 {
                DVec3::ZERO
            } else {
                DVec3::new(
                    rng.random_range(-a..=a),
                    rng.random_range(-a..=a),
                    rng.random_range(-a..=a),
                )
            }
        };
        let first = model.particles.len() as u32;
        for n in 0..self.count {
            let phi = std::f64::consts::TAU * n as f64 / self.count as f64;
            let x = self.center + 0.5 * self.diameter * (phi.cos() * u + phi.sin() * w);
            let mut p = Particle::at_rest(x, self.mass, r);
            if let Some(j) = self.inertia {
                p.inertia = j;
            }
            p.velocity = self.velocity + sym(self.random_velocity);
            p.angular_velocity = self.angular_velocity + sym(self.random_angular_velocity);
            model.particles.push(p);
        }
        if self.bond && self.count >= 2 {
            let last = if self.count == 2 { 1 } else { self.count };
            for n in 0..last {
                let i = first + n as u32;
                let j = first + ((n + 1) % self.count) as u32;
                model
                    .bonds
                    .push(Bond::from_current(&model.particles, i, j, k)?);
            }
        }
        Ok(())
    }
}

/// A block of particles on a simple cubic lattice, bonded within a cutoff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    /// Centre of the first lattice site (m).
    pub origin: DVec3,
    /// Sites along x, y, z.
    pub counts: [usize; 3],
    /// Lattice spacing (m).
    pub spacing: f64,
    /// Nominal particle radius (m).
    pub radius: f64,
    /// Relative radius jitter: radii uniform in `r (1 ± jitter)`.
    pub radius_jitter: f64,
    /// Density (kg/m³): mass `ρ 4/3 π r³`, inertia `2/5 m r²`.
    pub density: f64,
    /// Common initial velocity (m/s).
    pub velocity: DVec3,
    /// Bond every pair whose centre distance is below this (m); 0: no bonds.
    pub bond_cutoff: f64,
    /// Seed for the jitter.
    pub seed: u64,
    /// Material index of every particle.
    pub material: u32,
    /// Lock the particles' rotation (`Ω = 0` throughout).
    pub hold_rotation: bool,
    /// Keep only the sites within a distance of an axis, `(center, unit axis,
    /// radius)`: a bonded disc or cylinder cut from the lattice (the Brazilian test's
    /// disc, issue 47). `None` keeps every site. The jitter is drawn for every site,
    /// kept or not, so a cut block's particles have the radii of the full block's.
    pub cylinder: Option<(DVec3, DVec3, f64)>,
}

impl Block {
    /// Whether the lattice site at `x` is kept ([`Block::cylinder`]).
    fn keeps(&self, x: DVec3) -> bool {
        match self.cylinder {
            None => true,
            Some((c, a, r)) => {
                let d = x - c;
                (d - d.dot(a) * a).length_squared() <= r * r
            }
        }
    }

    /// Number of particles (lattice sites, or the sites the cylinder keeps).
    pub fn len(&self) -> usize {
        if self.cylinder.is_none() {
            return self.counts.iter().product();
        }
        (0..self.counts.iter().product::<usize>())
            .filter(|&k| self.keeps(self.site(k)))
            .count()
    }

    /// The centre of lattice site `k` (x fastest, then y, then z).
    fn site(&self, k: usize) -> DVec3 {
        let [nx, ny, _] = self.counts;
        let (ix, iy, iz) = (k % nx, (k / nx) % ny, k / (nx * ny));
        self.origin + self.spacing * DVec3::new(ix as f64, iy as f64, iz as f64)
    }

    /// True when the block has no sites.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds the block's particles and bonds to `model`.
    pub fn add_to(&self, model: &mut Model, k: BondStiffness) -> Result<(), BondError> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let [nx, ny, nz] = self.counts;
        // The particle of each lattice site, `None` where the cylinder cuts it away.
        let mut at: Vec<Option<usize>> = Vec::with_capacity(nx * ny * nz);
        for iz in 0..nz {
            for iy in 0..ny {
                for ix in 0..nx {
                    let x =
                        self.origin + self.spacing * DVec3::new(ix as f64, iy as f64, iz as f64);
                    let jitter = if self.radius_jitter > 0.0 {
                        rng.random_range(-self.radius_jitter..=self.radius_jitter)
                    } else {
                        0.0
                    };
                    if !self.keeps(x) {
                        at.push(None);
                        continue;
                    }
                    at.push(Some(model.particles.len()));
                    let r = self.radius * (1.0 + jitter);
                    let m = self.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                    let mut p = Particle::at_rest(x, m, r);
                    p.velocity = self.velocity;
                    p.material = self.material;
                    p.hold_rotation = self.hold_rotation;
                    model.particles.push(p);
                }
            }
        }
        if self.bond_cutoff > 0.0 {
            // Neighbours on the lattice within the cutoff: scan the offsets that can reach.
            // Offsets are clamped to the lattice, so a large reach costs no empty scans.
            let reach = (self.bond_cutoff / self.spacing)
                .ceil()
                .min(i64::MAX as f64) as i64;
            let idx =
                |ix: i64, iy: i64, iz: i64| at[(iz as usize * ny + iy as usize) * nx + ix as usize];
            let span = |i: i64, n: usize| {
                (i.saturating_sub(reach)).max(0)..=(i.saturating_add(reach)).min(n as i64 - 1)
            };
            for iz in 0..nz as i64 {
                for iy in 0..ny as i64 {
                    for ix in 0..nx as i64 {
                        let Some(a) = idx(ix, iy, iz) else {
                            continue;
                        };
                        for jz in span(iz, nz) {
                            for jy in span(iy, ny) {
                                for jx in span(ix, nx) {
                                    let Some(b) = idx(jx, jy, jz) else {
                                        continue;
                                    };
                                    if b <= a {
                                        continue;
                                    }
                                    let d = model.particles.position[a]
                                        .distance(model.particles.position[b]);
                                    if d < self.bond_cutoff {
                                        model.bonds.push(Bond::from_current(
                                            &model.particles,
                                            a as u32,
                                            b as u32,
                                            k,
                                        )?);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A bonded benchmark/showcase block of about `n` particles: a near-cubic simple cubic
/// lattice of touching spheres (radius 0.5 mm, density 2500 kg/m³, ±5 % radius
/// jitter), each bonded to its 6 lattice neighbours (`K^m = 1e-3`, `K^a = K^s = 1`),
/// binder contacts with `K^pp = 10`, moving at 1 m/s along −x with a small shear so that
/// bonds and contacts both work.
pub fn bonded_block(n: usize) -> Result<Model, BondError> {
    let side = (n as f64).cbrt().round().max(1.0) as usize;
    let nz = n.div_ceil(side * side).max(1);
    let radius = 5e-4;
    let block = Block {
        origin: DVec3::ZERO,
        counts: [side, side, nz],
        spacing: 2.0 * radius,
        radius,
        radius_jitter: 0.05,
        density: 2500.0,
        velocity: DVec3::new(-1.0, 0.0, 0.0),
        bond_cutoff: 1.1 * 2.0 * radius,
        seed: 7,
        material: 0,
        hold_rotation: false,
        cylinder: None,
    };
    let mut model = Model::default();
    block.add_to(
        &mut model,
        BondStiffness {
            bend: 1e-3,
            axial: 1.0,
            shear: 1.0,
        },
    )?;
    // A linear shear velocity profile so the bonds are loaded from the first step.
    let height = (nz as f64) * block.spacing;
    for (v, x) in model
        .particles
        .velocity
        .iter_mut()
        .zip(&model.particles.position)
    {
        v.y += 0.1 * x.z / height;
    }
    model.contact = Some(crate::model::ContactParams {
        law: crate::model::ContactLaw::Binder { k_pp: 10.0 },
        skin: 0.2 * radius,
        max_contacts: crate::model::DEFAULT_MAX_CONTACTS,
        max_overlap: crate::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
    Ok(model)
}

/// Spheres placed at random in a box by random sequential addition: each new sphere
/// takes a uniformly random centre (and radius), retried until it overlaps no earlier
/// one. The granular analogue of [`Block`], for pours (Campello §5.3 places its
/// particles this way).
#[derive(Clone, Debug, PartialEq)]
pub struct Cloud {
    /// Lower corner of the box the spheres lie in, surfaces included (m).
    pub min: DVec3,
    /// Upper corner (m); a zero extent along an axis puts every centre on that plane.
    pub max: DVec3,
    /// Number of spheres.
    pub count: usize,
    /// Nominal radius (m).
    pub radius: f64,
    /// Relative radius jitter: radii uniform in `r (1 ± jitter)`.
    pub radius_jitter: f64,
    /// Radii drawn from this law instead (`radius_distribution`; `radius` and
    /// `radius_jitter` are then not read): one draw of the placement's stream per sphere.
    pub distribution: Option<RadiusDistribution>,
    /// Density (kg/m³): mass `ρ 4/3 π r³`, inertia `2/5 m r²`.
    pub density: f64,
    /// Common initial velocity (m/s).
    pub velocity: DVec3,
    /// Material index of every sphere.
    pub material: u32,
    /// Lock the spheres' rotation (`Ω = 0` throughout).
    pub hold_rotation: bool,
    /// Seed of the placement.
    pub seed: u64,
    /// Pour clumps of this type (`[[cloud]] clump_type`) instead of spheres: each placed
    /// as its bounding ball ([`ClumpType::reach`](crate::model::ClumpType::reach), which
    /// then replaces `radius`; no jitter) with a seeded random orientation, uniform over
    /// rotations.
    pub clump: Option<u32>,
}

impl Cloud {
    /// Adds the spheres to `model`, or says why they do not fit (after 1000 tries for
    /// one sphere: the box is too full).
    pub fn add_to(&self, model: &mut Model) -> Result<(), String> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let r_max = match &self.distribution {
            Some(d) => d.max_radius(),
            None => self.radius * (1.0 + self.radius_jitter),
        };
        // Axes with zero extent hold every centre on their plane (2-D pours).
        let flat = (self.max - self.min).cmpeq(DVec3::ZERO);
        let inset = DVec3::select(flat, DVec3::ZERO, DVec3::splat(r_max));
        let lo = self.min + inset;
        let hi = self.max - inset;
        let span = (hi - lo).max(DVec3::ZERO);
        if (hi - lo).min_element() < 0.0 {
            return Err(format!(
                "the box {:?}..{:?} is narrower than one sphere (diameter {})",
                self.min.to_array(),
                self.max.to_array(),
                2.0 * r_max
            ));
        }
        // Hashed cells of edge 2 r_max: a candidate only needs its own and adjacent cells.
        let cell = 2.0 * r_max;
        let key = |x: DVec3| {
            let c = (x / cell).floor();
            (c.x as i64, c.y as i64, c.z as i64)
        };
        let mut grid: std::collections::HashMap<(i64, i64, i64), Vec<(DVec3, f64)>> =
            std::collections::HashMap::new();
        for k in 0..self.count {
            let mut placed = false;
            for _ in 0..1000 {
                let u = DVec3::new(
                    rng.random::<f64>(),
                    rng.random::<f64>(),
                    rng.random::<f64>(),
                );
                let x = lo + u * span;
                let r = match &self.distribution {
                    Some(d) => d.radius_at(rng.random::<f64>()),
                    None => {
                        let jitter = if self.radius_jitter > 0.0 {
                            rng.random_range(-self.radius_jitter..=self.radius_jitter)
                        } else {
                            0.0
                        };
                        self.radius * (1.0 + jitter)
                    }
                };
                // A clump's orientation: a uniform random unit quaternion (Shoemake's
                // method), drawn only for clumps so that sphere clouds keep their bits.
                let orientation = self.clump.map(|_| {
                    let (u1, u2, u3) = (
                        rng.random::<f64>(),
                        rng.random::<f64>(),
                        rng.random::<f64>(),
                    );
                    let tau = 2.0 * std::f64::consts::PI;
                    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
                    glam::DQuat::from_xyzw(
                        a * (tau * u2).sin(),
                        a * (tau * u2).cos(),
                        b * (tau * u3).sin(),
                        b * (tau * u3).cos(),
                    )
                });
                let (cx, cy, cz) = key(x);
                let free = (-1..=1).all(|dx| {
                    (-1..=1).all(|dy| {
                        (-1..=1).all(|dz| {
                            // Wrapping: a cell index saturated by a tiny cell (a
                            // denormal radius) must not overflow; a hash key only.
                            grid.get(&(
                                cx.wrapping_add(dx),
                                cy.wrapping_add(dy),
                                cz.wrapping_add(dz),
                            ))
                            .map_or(true, |v| v.iter().all(|&(y, ry)| x.distance(y) >= r + ry))
                        })
                    })
                });
                if let (true, Some(kind), Some(q)) = (free, self.clump, orientation) {
                    grid.entry((cx, cy, cz)).or_default().push((x, r));
                    // An exact half turn (probability zero) has no rescaled Rodrigues
                    // vector.
                    let rotation = crate::math::rodrigues::from_quaternion(q)
                        .ok_or_else(|| format!("clump {k}: a half-turn orientation"))?;
                    model.clumps.push(crate::model::Clump {
                        kind,
                        position: x,
                        rotation,
                        velocity: self.velocity,
                        angular_velocity: DVec3::ZERO,
                    });
                    placed = true;
                    break;
                }
                if free {
                    grid.entry((cx, cy, cz)).or_default().push((x, r));
                    let m = self.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                    let mut p = Particle::at_rest(x, m, r);
                    p.velocity = self.velocity;
                    p.material = self.material;
                    p.hold_rotation = self.hold_rotation;
                    model.particles.push(p);
                    placed = true;
                    break;
                }
            }
            if !placed {
                return Err(format!(
                    "no room for {} {k} of {} after 1000 tries: enlarge the box or place fewer",
                    if self.clump.is_some() {
                        "clump"
                    } else {
                        "sphere"
                    },
                    self.count
                ));
            }
        }
        Ok(())
    }
}

/// Time step of [`settling_bed`] (s). Eq. (50) gives t_col ≈ 8·10⁻⁴ s at 0.1 m/s, so
/// the bed barely moves over a benchmark's few hundred steps: the neighbour list is
/// rebuilt rarely, as in a settled bed, and what is timed is the per-step cost of
/// persistent contacts with history.
pub const SETTLING_BED_DT: f64 = 1e-6;

/// The granular benchmark bed of about `n` particles: a near-square simple cubic
/// lattice of soft spheres (radius 1 mm ± 10 %, E = 10⁶ Pa, ν = 0.3, e = 0.5,
/// μ = 0.5) on a floor under gravity, spaced 6 % closer than a mean diameter so that
/// ~5 contacts per particle are loaded (Hertz–Mindlin with history) from the first
/// step, with small random velocities so that contacts slip and stick. The overlaps
/// (up to 28 % of a radius) relax over a collision time, ~800 steps of
/// [`SETTLING_BED_DT`]; a stiffer material would explode the lattice and rebuild the
/// neighbour list every few steps, which is not the settled bed being modelled. Lattice
/// neighbours are the only pairs that can touch, so 8 history slots suffice.
pub fn settling_bed(n: usize) -> Model {
    let side = ((n as f64).sqrt() / 2.0).round().max(1.0) as usize;
    let nz = n.div_ceil(side * side).max(1);
    let radius = 1e-3;
    let glass = bed_material();
    let block = Block {
        origin: DVec3::new(0.0, 0.0, radius * 0.9),
        counts: [side, side, nz],
        spacing: 2.0 * radius * 0.94,
        radius,
        radius_jitter: 0.1,
        density: glass.density,
        velocity: DVec3::ZERO,
        bond_cutoff: 0.0,
        seed: 11,
        material: 0,
        hold_rotation: false,
        cylinder: None,
    };
    let mut model = Model::default();
    // Bonds: none (cutoff 0), so adding cannot fail.
    let _ = block.add_to(
        &mut model,
        crate::model::BondStiffness {
            bend: 0.0,
            axial: 0.0,
            shear: 0.0,
        },
    );
    model.particles.position.truncate(n);
    for field in [
        &mut model.particles.velocity,
        &mut model.particles.rotation,
        &mut model.particles.angular_velocity,
        &mut model.particles.pendulum_offset,
    ] {
        field.truncate(n);
    }
    for field in [
        &mut model.particles.mass,
        &mut model.particles.inertia,
        &mut model.particles.radius,
    ] {
        field.truncate(n);
    }
    model.particles.flags.truncate(n);
    model.particles.material.truncate(n);
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for v in model.particles.velocity.iter_mut() {
        *v = 0.05
            * DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
    }
    on_a_floor(&mut model, glass, 0.1 * radius, 8);
    model
}

/// [`settling_bed`] on a floor that is a triangle mesh instead of a plane (issue 26):
/// the bed's footprint, with a margin of 5 mm, split into a grid of about `triangles`
/// right triangles (two per square cell), in the floor's material. The mesh's
/// candidate lists and feature contacts are what this bed measures against the
/// plane's.
pub fn mesh_floor_bed(n: usize, triangles: usize) -> Model {
    use crate::model::{MeshWall, TriangleMesh};
    let mut model = settling_bed(n);
    let floor = model.walls.remove(0);
    let (lo, hi) = model
        .particles
        .position
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let margin = 5e-3;
    let (x0, y0) = (lo.x - margin, lo.y - margin);
    let (wx, wy) = (hi.x - lo.x + 2.0 * margin, hi.y - lo.y + 2.0 * margin);
    // Square-ish cells: k × k cells of two triangles each.
    let k = ((triangles as f64 / 2.0).sqrt().round() as usize).max(1);
    let mut vertices = Vec::with_capacity((k + 1) * (k + 1));
    for j in 0..=k {
        for i in 0..=k {
            vertices.push(DVec3::new(
                x0 + wx * i as f64 / k as f64,
                y0 + wy * j as f64 / k as f64,
                0.0,
            ));
        }
    }
    let mut tris = Vec::with_capacity(2 * k * k);
    for j in 0..k {
        for i in 0..k {
            let a = (j * (k + 1) + i) as u32;
            let (b, c, d) = (a + 1, a + k as u32 + 2, a + k as u32 + 1);
            tris.push([a, b, c]);
            tris.push([a, c, d]);
        }
    }
    if let Ok(mesh) = TriangleMesh::new(vertices, tris) {
        model.meshes.push(MeshWall {
            name: "floor".into(),
            mesh,
            material: floor.material,
            stiffness: 0.0,
            motion: floor.motion,
        });
    }
    model
}

/// A settled-looking bed of `n` spheres in clumps (issue 24), the clump counterpart
/// of [`settling_bed`]: the dimers of `scenes/clump-pour.toml` (spheres of 1 and
/// 0.8 mm, a full inertia tensor) on a lattice of 2.82 × 1.9 × 1.9 mm, their axes along
/// x tilted by seeded random turns of up to 0.1 rad, so that each body presses on its
/// neighbours end to end and side by side from the first step (overlaps of a few
/// percent of a radius), on a floor under gravity, in the bed's soft material
/// (E = 10⁶ Pa) with small random velocities; stepped at [`SETTLING_BED_DT`]. Spheres
/// of one body are never contacts, so 12 history slots per sphere suffice.
pub fn clump_bed(n: usize) -> Model {
    use crate::model::{Clump, ClumpType};
    let soft = bed_material();
    let dimer = [
        (DVec3::new(-0.5e-3, 0.0, 0.0), 1.0e-3),
        (DVec3::new(0.6e-3, 0.0, 0.0), 0.8e-3),
    ];
    let mut model = Model::default();
    // Positive radii and a density: the union's mass properties always exist.
    if let Ok(t) = ClumpType::new("dimer", &dimer, 0, Some(soft.density), None, None) {
        model.clump_types.push(t);
    }
    let bodies = n.div_ceil(2).max(1);
    let side = ((bodies as f64).sqrt() / 2.0).round().max(1.0) as usize;
    let spacing = DVec3::new(2.82e-3, 1.9e-3, 1.9e-3);
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let unit = |rng: &mut ChaCha8Rng| {
        DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    };
    for k in 0..bodies {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        model.clumps.push(Clump {
            kind: 0,
            position: DVec3::new(i as f64, j as f64, l as f64) * spacing
                + DVec3::new(0.0, 0.0, 0.95e-3),
            // α = 2 tan(θ/2) n: turns of up to about 0.1 rad.
            rotation: 0.1 * unit(&mut rng),
            velocity: 0.05 * unit(&mut rng),
            angular_velocity: 5.0 * unit(&mut rng),
        });
    }
    on_a_floor(&mut model, soft, 1e-4, 12);
    model
}

/// Time step of [`glass_bed`] under hard contacts (s): set by the motion (a bead
/// moves 1 µm per step at 1 cm/s), not by a stiffness.
pub const HARD_BED_DT: f64 = 1e-4;

/// Columns per side of [`glass_bed`]: its footprint is fixed, so `n` sets its height.
pub const GLASS_BED_SIDE: usize = 8;

/// A bed of `n` glass beads (radius 1 mm ± 5 %, E = 63 GPa, ν = 0.22, ρ = 2500 kg/m³,
/// μ = 0.5) in a box of 8 × 8 columns, `⌈n/64⌉` layers high, for the hard-contact
/// benchmark and its comparison with the Hertz law on the same beads (issue 25).
///
/// The beads sit on a jittered body-centred lattice: square layers 2.1 mm apart in x
/// and y, every other layer shifted by half that so each bead nests on the four below,
/// the layers 1 % further apart than touching (no overlap), with seeded random
/// velocities of up to 1 cm/s, on a floor and between four side walls under gravity.
/// Within a few steps every layer rests on the ones below (about 8 contacts per
/// bead), so the timed steps carry the whole bed's weight through its contacts, and
/// the sweeps per step grow with the height. With `hard`, contacts are hard (restitution 0,
/// the default solver settings); otherwise Hertz–Mindlin with restitution 0.5.
pub fn glass_bed(n: usize, hard: bool) -> Model {
    use crate::model::{ContactLaw, ContactParams, HardContact};
    let side = GLASS_BED_SIDE;
    let layers = n.div_ceil(side * side).max(1);
    let (radius, spacing): (f64, f64) = (1e-3, 2.1e-3);
    // Layer height at which a bead of diameter 2.02 mm touches the four below.
    let dz = ((2.02 * radius).powi(2) - 0.5 * spacing * spacing).sqrt();
    let glass = crate::model::Material {
        name: "glass".into(),
        young: 63e9,
        poisson: 0.22,
        shear_modulus: 63e9 / 2.44,
        density: 2500.0,
        restitution: if hard { 0.0 } else { 0.5 },
        friction_static: 0.5,
        friction_dynamic: 0.5,
        rolling_friction: 0.0,
        rolling_damping: crate::model::DEFAULT_ROLLING_DAMPING,
        surface_energy: 0.0,
    };
    let mut model = Model::default();
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let mut jitter = |scale: f64| scale * rng.random_range(-1.0..1.0);
    for k in 0..n.min(side * side * layers) {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let r = radius * (1.0 + jitter(0.05));
        let shift = if l % 2 == 1 { 0.5 } else { 0.0 };
        let x = DVec3::new(
            (i as f64 + 0.5 + shift) * spacing + jitter(0.02e-3),
            (j as f64 + 0.5 + shift) * spacing + jitter(0.02e-3),
            radius * 1.06 + l as f64 * dz,
        );
        let m = glass.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let mut p = Particle::at_rest(x, m, r);
        p.velocity = DVec3::new(jitter(0.01), jitter(0.01), jitter(0.01));
        model.particles.push(p);
    }
    model.materials.push(glass);
    let width = (side as f64 + 0.5) * spacing;
    square_box(&mut model, width, None);
    model.gravity = DVec3::new(0.0, 0.0, -9.81);
    model.contact = Some(ContactParams {
        law: if hard {
            ContactLaw::Hard(HardContact::default())
        } else {
            ContactLaw::Hertz
        },
        skin: 0.2 * radius,
        max_contacts: 16,
        max_overlap: crate::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
    model
}

/// A square box at rest for a bed: a floor at z = 0 and four side walls at x, y = 0 and
/// `width`, of `material` (`None`: each particle's own).
fn square_box(model: &mut Model, width: f64, material: Option<u32>) {
    for (point, normal) in [
        (DVec3::ZERO, DVec3::Z),
        (DVec3::ZERO, DVec3::X),
        (DVec3::ZERO, DVec3::Y),
        (DVec3::new(width, 0.0, 0.0), -DVec3::X),
        (DVec3::new(0.0, width, 0.0), -DVec3::Y),
    ] {
        model.walls.push(crate::model::Wall {
            point,
            normal,
            stiffness: 0.0,
            material,
            motion: Default::default(),
        });
    }
}

/// Mean radius of the poured bed's spheres (m).
pub const POURED_BED_RADIUS: f64 = 1e-3;

/// The poured bed before it is poured (issue 27): `n` spheres of radius 1 mm ± 10 %
/// (uniform), E = 5·10⁶ Pa, ν = 0.3, ρ = 2500 kg/m³, e = 0.5, μ = 0.5, Hertz–Mindlin
/// with history, in a square box (a floor and four side walls at rest) whose width
/// makes the settled bed about half as high as wide (packing fraction ~0.6). They
/// start loose, on a lattice 2.4 mean radii apart (a packing fraction of 0.3) with
/// seeded jitter of 0.1 radius and random velocities of up to 5 cm/s, so that gravity
/// rains them into the box in a random packing. `seed` drives every random number.
pub fn loose_box_bed(n: usize, seed: u64) -> Model {
    use crate::model::{ContactLaw, ContactParams};
    let radius = POURED_BED_RADIUS;
    let material = crate::model::Material {
        name: "beads".into(),
        young: 5e6,
        poisson: 0.3,
        shear_modulus: 5e6 / 2.6,
        density: 2500.0,
        restitution: 0.5,
        friction_static: 0.5,
        friction_dynamic: 0.5,
        rolling_friction: 0.0,
        rolling_damping: crate::model::DEFAULT_ROLLING_DAMPING,
        surface_energy: 0.0,
    };
    // Settled: n V_p / 0.6 = W · W · W/2.
    let volume = n as f64 * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3) * 1.03;
    let spacing = 2.4 * radius;
    let side = (((2.0 * volume / 0.6).cbrt() / spacing).round() as usize).max(1);
    let width = side as f64 * spacing;
    let mut model = Model::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut jitter = |scale: f64| scale * rng.random_range(-1.0..1.0);
    for k in 0..n {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let r = radius * (1.0 + jitter(0.1));
        let x = DVec3::new(
            (i as f64 + 0.5) * spacing + jitter(0.1 * radius),
            (j as f64 + 0.5) * spacing + jitter(0.1 * radius),
            (l as f64 + 0.5) * spacing + jitter(0.1 * radius),
        );
        let m = material.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let mut p = Particle::at_rest(x, m, r);
        p.velocity = DVec3::new(jitter(0.05), jitter(0.05), jitter(0.05));
        model.particles.push(p);
    }
    model.materials.push(material);
    square_box(&mut model, width, Some(0));
    model.gravity = DVec3::new(0.0, 0.0, -9.81);
    model.contact = Some(ContactParams {
        law: ContactLaw::Hertz,
        skin: 0.1 * 1.1 * radius,
        max_contacts: 16,
        max_overlap: crate::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
    model
}

/// The soft material of the benchmark beds (E = 10⁶ Pa, e = 0.5, μ = 0.5): collisions
/// last ~800 steps of [`SETTLING_BED_DT`], so the beds barely move while timed.
fn bed_material() -> crate::model::Material {
    crate::model::Material {
        name: "soft".into(),
        young: 1e6,
        poisson: 0.3,
        shear_modulus: 1e6 / 2.6,
        density: 2500.0,
        restitution: 0.5,
        friction_static: 0.5,
        friction_dynamic: 0.5,
        rolling_friction: 0.0,
        rolling_damping: crate::model::DEFAULT_ROLLING_DAMPING,
        surface_energy: 0.0,
    }
}

/// A benchmark bed's surroundings: `material` (the only one), a floor at z = 0 of it,
/// gravity, and Hertz–Mindlin contacts with `skin` and `max_contacts` history slots.
fn on_a_floor(model: &mut Model, material: crate::model::Material, skin: f64, max_contacts: u32) {
    use crate::model::{ContactLaw, ContactParams, Wall};
    model.materials.push(material);
    model.walls.push(Wall {
        point: DVec3::ZERO,
        normal: DVec3::Z,
        stiffness: 0.0,
        material: Some(0),
        motion: Default::default(),
    });
    model.gravity = DVec3::new(0.0, 0.0, -9.81);
    model.contact = Some(ContactParams {
        law: ContactLaw::Hertz,
        skin,
        max_contacts,
        max_overlap: crate::model::DEFAULT_MAX_OVERLAP,
        rolling: Default::default(),
        cohesion: Default::default(),
    });
}
