//! Binder bonds (Baker & Gonzalez §4) and their rest state.
//!
//! A bond's rest state is the configuration at the time it is formed (t = 0 for scene
//! bonds), including the rest relative orientation, so a body that starts rotated is
//! unstrained (the paper assumes `R₀ = I`; this is the general form).

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use crate::math::rodrigues;
use crate::model::Particles;

/// Binder stiffnesses of one bond.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BondStiffness {
    /// Bending/torsion stiffness `K^m` (N m/rad², eq. 44).
    pub bend: f64,
    /// Axial stiffness `K^a` (J, eq. 51: the strain is dimensionless).
    pub axial: f64,
    /// Shear stiffness `K^s` (J, eq. 53).
    pub shear: f64,
}

/// The strength of one bond (issue 47; `[binder]` and `[[bond]]` `break_tension`,
/// `break_shear`, `break_bend`, `break_twist`): the loads
/// ([`crate::physics::binder::BondLoads`]) at which it breaks, each term optional. A
/// bond breaks at the first step where `max(0, T)/T_c + S/S_c + M_b/M_bc + |M_t|/M_tc ≥
/// 1` over the terms that are set; with none set it never breaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BondStrength {
    /// Tensile strength `T_c` (N).
    pub tension: Option<f64>,
    /// Shear strength `S_c` (N).
    pub shear: Option<f64>,
    /// Bending strength `M_bc` (N m).
    pub bend: Option<f64>,
    /// Twisting strength `M_tc` (N m).
    pub twist: Option<f64>,
}

impl BondStrength {
    /// The strengths in the order tension, shear, bend, twist.
    pub fn values(&self) -> [Option<f64>; 4] {
        [self.tension, self.shear, self.bend, self.twist]
    }

    /// The strength of `values` (tension, shear, bend, twist).
    pub fn from_values(v: [Option<f64>; 4]) -> Self {
        Self {
            tension: v[0],
            shear: v[1],
            bend: v[2],
            twist: v[3],
        }
    }

    /// Whether any term is set (the bond can break).
    pub fn is_set(&self) -> bool {
        self.values().iter().any(Option::is_some)
    }

    /// The inverse strengths `1/T_c, 1/S_c, 1/M_bc, 1/M_tc` (0 for a term not set), as
    /// both backends multiply the loads by them
    /// ([`crate::physics::binder::BondLoads::failure_index`]).
    pub fn inverse(&self) -> [f64; 4] {
        self.values().map(|v| v.map_or(0.0, |x| 1.0 / x))
    }

    /// Every set term times `factor` (a bond's share of `break_scatter`).
    pub fn scaled(&self, factor: f64) -> Self {
        Self::from_values(self.values().map(|v| v.map(|x| x * factor)))
    }
}

/// One binder bond between particles `i` and `j`, with its rest state.
///
/// `#[repr(C)]`, `Pod`, 8-byte aligned, no implicit padding (2×u32 then f64s): the GPU
/// backend uploads the array as is in f64 builds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Bond {
    /// First particle.
    pub i: u32,
    /// Second particle.
    pub j: u32,
    /// Stiffnesses.
    pub k_bend: f64,
    /// Axial stiffness `K^a`.
    pub k_axial: f64,
    /// Shear stiffness `K^s`.
    pub k_shear: f64,
    /// Rest length `|x_j0 − x_i0|` (m).
    pub rest_length: f64,
    /// Rest bond direction (from i to j) in the body frame of `i`: `R_i0ᵀ d̂₀`.
    pub rest_dir_i: DVec3,
    /// Rest bond direction (from i to j) in the body frame of `j`: `R_j0ᵀ d̂₀`.
    pub rest_dir_j: DVec3,
    /// Rest relative rotation `c₀ = α_i0 ⊕ (−α_j0)`, the Rodrigues vector of
    /// `R_j0ᵀ R_i0`. The bending strain is `(−α_i) ⊕ c₀ ⊕ α_j` (rotation
    /// `R_j R_j0ᵀ R_i0 R_iᵀ`), which reduces to eq. (45) when `R₀ = I`.
    pub rest_rotation: DVec3,
}

/// Why a bond cannot be formed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BondError {
    /// An end is not a particle.
    #[error("bond ({i}, {j}): particle {missing} does not exist (there are {count} particles)")]
    MissingParticle {
        /// First end.
        i: u32,
        /// Second end.
        j: u32,
        /// The id that does not exist.
        missing: u32,
        /// Number of particles.
        count: usize,
    },
    /// Both ends are the same particle.
    #[error("bond ({i}, {i}): a particle cannot be bonded to itself")]
    SelfBond {
        /// The particle.
        i: u32,
    },
    /// The ends coincide at rest, so the bond has no direction.
    #[error("bond ({i}, {j}): the particles coincide at rest (rest length {length:e} m)")]
    ZeroLength {
        /// First end.
        i: u32,
        /// Second end.
        j: u32,
        /// Rest length.
        length: f64,
    },
    /// The rest relative rotation is a half turn (not representable by α).
    #[error("bond ({i}, {j}): the rest relative rotation is a half turn, which rescaled Rodrigues vectors cannot represent")]
    HalfTurn {
        /// First end.
        i: u32,
        /// Second end.
        j: u32,
    },
}

impl Bond {
    /// Forms a bond between `i` and `j` with the current configuration as rest state.
    pub fn from_current(
        particles: &Particles,
        i: u32,
        j: u32,
        k: BondStiffness,
    ) -> Result<Self, BondError> {
        let n = particles.len();
        for id in [i, j] {
            if id as usize >= n {
                return Err(BondError::MissingParticle {
                    i,
                    j,
                    missing: id,
                    count: n,
                });
            }
        }
        if i == j {
            return Err(BondError::SelfBond { i });
        }
        let (iu, ju) = (i as usize, j as usize);
        let d = particles.position[ju] - particles.position[iu];
        let length = d.length();
        if length <= 0.0 || length.is_nan() {
            return Err(BondError::ZeroLength { i, j, length });
        }
        let dir = d / length;
        let (ai, aj) = (particles.rotation[iu], particles.rotation[ju]);
        let rest_rotation = rodrigues::try_compose(ai, -aj).ok_or(BondError::HalfTurn { i, j })?;
        Ok(Self {
            i,
            j,
            k_bend: k.bend,
            k_axial: k.axial,
            k_shear: k.shear,
            rest_length: length,
            rest_dir_i: rodrigues::rotate_inverse(ai, dir),
            rest_dir_j: rodrigues::rotate_inverse(aj, dir),
            rest_rotation,
        })
    }

    /// The bond's stiffnesses.
    pub fn stiffness(&self) -> BondStiffness {
        BondStiffness {
            bend: self.k_bend,
            axial: self.k_axial,
            shear: self.k_shear,
        }
    }
}

/// Particle-to-bond incidence in compressed sparse row form: the bonds of particle `p`
/// are `bonds[offsets[p]..offsets[p+1]]`, each tagged with the side `p` is on.
///
/// Lets the per-particle gather sum bond results in a fixed order (ascending bond id)
/// without atomics, on the CPU and the GPU alike.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Incidence {
    /// Row offsets, length `N + 1`.
    pub offsets: Vec<u32>,
    /// Entries `2·bond + side`, side 0 when the particle is the bond's `i`, 1 for `j`.
    pub entries: Vec<u32>,
}

impl Incidence {
    /// Builds the incidence list of `bonds` over `n` particles.
    pub fn build(n: usize, bonds: &[Bond]) -> Self {
        let mut counts = vec![0u32; n + 1];
        for b in bonds {
            counts[b.i as usize + 1] += 1;
            counts[b.j as usize + 1] += 1;
        }
        for p in 0..n {
            counts[p + 1] += counts[p];
        }
        let offsets = counts.clone();
        let mut cursor = counts;
        let mut entries = vec![0u32; 2 * bonds.len()];
        for (k, b) in bonds.iter().enumerate() {
            for (side, p) in [(0u32, b.i), (1u32, b.j)] {
                let slot = &mut cursor[p as usize];
                entries[*slot as usize] = 2 * k as u32 + side;
                *slot += 1;
            }
        }
        Self { offsets, entries }
    }
}
