//! Particle records, stored as structure-of-arrays.
//!
//! Every vector field is a `Vec<DVec3>` (three packed `f64`, 24 bytes, no padding), so the
//! GPU backend uploads each field as a flat `array<real>` of length `3N`: no `vec3`
//! 16/32-byte stride trap.

use glam::DVec3;

/// Bit in [`Particles::flags`]: the position is held fixed (velocity stays zero), the
/// rotation remains free.
pub const FLAG_HELD: u32 = 1;
/// Bit in [`Particles::flags`]: the field (gravity) acts at `x + R ρ₀` instead of `x`
/// (pendulum offset `ρ₀` in [`Particles::pendulum_offset`]).
pub const FLAG_PENDULUM: u32 = 2;
/// Bit in [`Particles::flags`]: the rotation is locked (`Ω = 0`, `α` constant), for
/// translation-only DEM (Campello §5.3 "without rotational DOFs").
pub const FLAG_NO_ROTATION: u32 = 4;
/// Bit in [`Particles::flags`]: the particle left the domain and was removed (frozen,
/// out of every contact; see [`crate::model::Domain`]).
pub const FLAG_REMOVED: u32 = 8;
/// Bit in [`Particles::flags`]: a constituent sphere of a clump. Its body moves it (the
/// per-particle integrator holds it, with `FLAG_HELD` and `FLAG_NO_ROTATION`), the
/// field acts on the body, not on it, and its contact loads are gathered to the body.
pub const FLAG_MEMBER: u32 = 16;
/// Bit in [`Particles::flags`]: a particle an `[[inserter]]` has reserved and not yet
/// inserted. It carries [`FLAG_REMOVED`] too, so it is frozen and out of every contact;
/// besides, it is in no neighbour grid, no diagnostic and no output.
pub const FLAG_DORMANT: u32 = 32;

/// Ids of the particles flagged [`FLAG_REMOVED`] in `flags` but not dormant, ascending
/// (what a checkpoint stores of removals).
pub fn removed_ids(flags: &[u32]) -> Vec<u32> {
    (0..flags.len() as u32)
        .filter(|&i| flags[i as usize] & (FLAG_REMOVED | FLAG_DORMANT) == FLAG_REMOVED)
        .collect()
}

/// Whether flags `f` mark a dormant particle ([`FLAG_DORMANT`]).
#[inline]
pub fn is_dormant(f: u32) -> bool {
    f & FLAG_DORMANT != 0
}

/// The particle set: state (position, velocity, rotation, spatial angular velocity) and
/// constant properties. SI units throughout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Particles {
    /// Centre position `x` (m).
    pub position: Vec<DVec3>,
    /// Translational velocity `v` (m/s).
    pub velocity: Vec<DVec3>,
    /// Rescaled Rodrigues rotation vector `α` (eq. 3), body-to-inertial.
    pub rotation: Vec<DVec3>,
    /// Spatial (inertial-frame) angular velocity `Ω = R ω` (rad/s).
    pub angular_velocity: Vec<DVec3>,
    /// Mass `m` (kg).
    pub mass: Vec<f64>,
    /// Scalar moment of inertia `J` of the sphere (kg m²).
    pub inertia: Vec<f64>,
    /// Radius `r = D/2` (m).
    pub radius: Vec<f64>,
    /// Body-frame pendulum offset `ρ₀` (m); zero unless [`FLAG_PENDULUM`] is set.
    pub pendulum_offset: Vec<DVec3>,
    /// Bit set of `FLAG_*` values.
    pub flags: Vec<u32>,
    /// Index into [`crate::model::Model::materials`] (0 when the scene has none).
    pub material: Vec<u32>,
}

/// One particle's data, used to build a [`Particles`] set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// Centre position (m).
    pub position: DVec3,
    /// Velocity (m/s).
    pub velocity: DVec3,
    /// Rodrigues rotation vector `α`.
    pub rotation: DVec3,
    /// Spatial angular velocity `Ω` (rad/s).
    pub angular_velocity: DVec3,
    /// Mass (kg).
    pub mass: f64,
    /// Scalar moment of inertia (kg m²).
    pub inertia: f64,
    /// Radius (m).
    pub radius: f64,
    /// Position held fixed.
    pub hold_position: bool,
    /// Rotation locked (`Ω = 0`).
    pub hold_rotation: bool,
    /// Optional body-frame pendulum offset `ρ₀` (m).
    pub pendulum_offset: Option<DVec3>,
    /// Material index (0 when the scene has no materials).
    pub material: u32,
}

impl Particle {
    /// A particle at rest at `position` with the solid-sphere inertia `2/5 m r²`.
    pub fn at_rest(position: DVec3, mass: f64, radius: f64) -> Self {
        Self {
            position,
            velocity: DVec3::ZERO,
            rotation: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            mass,
            inertia: 0.4 * mass * radius * radius,
            radius,
            hold_position: false,
            hold_rotation: false,
            pendulum_offset: None,
            material: 0,
        }
    }
}

impl Particles {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Appends one particle and returns its id.
    pub fn push(&mut self, p: Particle) -> u32 {
        let id = self.len() as u32;
        self.position.push(p.position);
        // A held particle never moves: its velocity is zero by definition.
        self.velocity.push(if p.hold_position {
            DVec3::ZERO
        } else {
            p.velocity
        });
        self.rotation.push(p.rotation);
        self.angular_velocity.push(if p.hold_rotation {
            DVec3::ZERO
        } else {
            p.angular_velocity
        });
        self.mass.push(p.mass);
        self.inertia.push(p.inertia);
        self.radius.push(p.radius);
        self.pendulum_offset
            .push(p.pendulum_offset.unwrap_or(DVec3::ZERO));
        let mut flags = 0;
        if p.hold_position {
            flags |= FLAG_HELD;
        }
        if p.pendulum_offset.is_some() {
            flags |= FLAG_PENDULUM;
        }
        if p.hold_rotation {
            flags |= FLAG_NO_ROTATION;
        }
        self.flags.push(flags);
        self.material.push(p.material);
        id
    }

    /// Makes room for `more` particles beyond the current ones, exactly: an
    /// inserter's reserve pushes its particles one by one, and growth by doubling
    /// would leave up to half the tables unused (issue 44: memory per reserved id).
    pub fn reserve_exact(&mut self, more: usize) {
        self.position.reserve_exact(more);
        self.velocity.reserve_exact(more);
        self.rotation.reserve_exact(more);
        self.angular_velocity.reserve_exact(more);
        self.mass.reserve_exact(more);
        self.inertia.reserve_exact(more);
        self.radius.reserve_exact(more);
        self.pendulum_offset.reserve_exact(more);
        self.flags.reserve_exact(more);
        self.material.reserve_exact(more);
    }

    /// The particles of `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> Particles {
        fn pick<T: Clone>(v: &[T], rows: &[usize]) -> Vec<T> {
            rows.iter().map(|&i| v[i].clone()).collect()
        }
        Particles {
            position: pick(&self.position, rows),
            velocity: pick(&self.velocity, rows),
            rotation: pick(&self.rotation, rows),
            angular_velocity: pick(&self.angular_velocity, rows),
            mass: pick(&self.mass, rows),
            inertia: pick(&self.inertia, rows),
            radius: pick(&self.radius, rows),
            pendulum_offset: pick(&self.pendulum_offset, rows),
            flags: pick(&self.flags, rows),
            material: pick(&self.material, rows),
        }
    }

    /// The particles in the system (neither reserved by an inserter nor removed, see
    /// [`FLAG_REMOVED`]) of this set by id, with their ids: the rows of `final.csv`.
    pub fn in_system(&self) -> (Vec<u32>, Particles) {
        let rows: Vec<usize> = (0..self.len())
            .filter(|&i| self.flags[i] & FLAG_REMOVED == 0)
            .collect();
        let ids = rows.iter().map(|&i| i as u32).collect();
        (ids, self.select(&rows))
    }

    /// Keeps the first `n` particles.
    pub fn truncate(&mut self, n: usize) {
        self.position.truncate(n);
        self.velocity.truncate(n);
        self.rotation.truncate(n);
        self.angular_velocity.truncate(n);
        self.mass.truncate(n);
        self.inertia.truncate(n);
        self.radius.truncate(n);
        self.pendulum_offset.truncate(n);
        self.flags.truncate(n);
        self.material.truncate(n);
    }

    /// Rearranges the particles so that slot `s` holds the one of old slot `order[s]`
    /// (`order` a permutation of the slots; [`crate::model::layout`]).
    pub fn permute(&mut self, order: &[u32]) {
        self.gather(order);
    }

    /// Keeps the particles of slots `order`, old slot `order[s]` in slot `s` (each at
    /// most once): a permutation, or fewer (the others leave).
    pub fn gather(&mut self, order: &[u32]) {
        use crate::model::layout::gather_rows;
        let n = self.len();
        gather_rows(&mut self.position, order, 1, n);
        gather_rows(&mut self.velocity, order, 1, n);
        gather_rows(&mut self.rotation, order, 1, n);
        gather_rows(&mut self.angular_velocity, order, 1, n);
        gather_rows(&mut self.mass, order, 1, n);
        gather_rows(&mut self.inertia, order, 1, n);
        gather_rows(&mut self.radius, order, 1, n);
        gather_rows(&mut self.pendulum_offset, order, 1, n);
        gather_rows(&mut self.flags, order, 1, n);
        gather_rows(&mut self.material, order, 1, n);
    }

    /// Writes particle `j` of `from` (every field, flags as they are) into slot `i`.
    pub fn set_row(&mut self, i: usize, from: &Particles, j: usize) {
        self.position[i] = from.position[j];
        self.velocity[i] = from.velocity[j];
        self.rotation[i] = from.rotation[j];
        self.angular_velocity[i] = from.angular_velocity[j];
        self.mass[i] = from.mass[j];
        self.inertia[i] = from.inertia[j];
        self.radius[i] = from.radius[j];
        self.pendulum_offset[i] = from.pendulum_offset[j];
        self.flags[i] = from.flags[j];
        self.material[i] = from.material[j];
    }

    /// Appends particle `j` of `from` (every field, flags as they are).
    pub fn push_row(&mut self, from: &Particles, j: usize) {
        self.position.push(from.position[j]);
        self.velocity.push(from.velocity[j]);
        self.rotation.push(from.rotation[j]);
        self.angular_velocity.push(from.angular_velocity[j]);
        self.mass.push(from.mass[j]);
        self.inertia.push(from.inertia[j]);
        self.radius.push(from.radius[j]);
        self.pendulum_offset.push(from.pendulum_offset[j]);
        self.flags.push(from.flags[j]);
        self.material.push(from.material[j]);
    }

    /// The particles in id order, from storage in `layout`'s order.
    pub fn to_ids(&self, layout: &crate::model::Layout) -> Self {
        if layout.is_identity() {
            return self.clone();
        }
        let order: Vec<u32> = layout.slots_by_id(self.len()).map(|s| s as u32).collect();
        let mut out = self.clone();
        out.permute(&order);
        out
    }

    /// Appends `other`'s particles, flags and all.
    pub fn extend(&mut self, other: &Particles) {
        self.position.extend_from_slice(&other.position);
        self.velocity.extend_from_slice(&other.velocity);
        self.rotation.extend_from_slice(&other.rotation);
        self.angular_velocity
            .extend_from_slice(&other.angular_velocity);
        self.mass.extend_from_slice(&other.mass);
        self.inertia.extend_from_slice(&other.inertia);
        self.radius.extend_from_slice(&other.radius);
        self.pendulum_offset
            .extend_from_slice(&other.pendulum_offset);
        self.flags.extend_from_slice(&other.flags);
        self.material.extend_from_slice(&other.material);
    }

    /// Reads particle `i` back as a [`Particle`].
    pub fn get(&self, i: usize) -> Particle {
        Particle {
            position: self.position[i],
            velocity: self.velocity[i],
            rotation: self.rotation[i],
            angular_velocity: self.angular_velocity[i],
            mass: self.mass[i],
            inertia: self.inertia[i],
            radius: self.radius[i],
            hold_position: self.is_held(i),
            hold_rotation: self.flags[i] & FLAG_NO_ROTATION != 0,
            pendulum_offset: (self.flags[i] & FLAG_PENDULUM != 0)
                .then_some(self.pendulum_offset[i]),
            material: self.material[i],
        }
    }

    /// Whether particle `i` has its position held.
    #[inline]
    pub fn is_held(&self, i: usize) -> bool {
        self.flags[i] & FLAG_HELD != 0
    }

    /// Largest radius (0 for an empty set).
    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
