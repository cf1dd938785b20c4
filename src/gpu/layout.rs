//! Host twins of the WGSL records in `shaders/common/layout.wgsl`: `#[repr(C)]`, `Pod`,
//! scalar fields only (no `vec3`, so no 16/32-byte padding trap), in an `f32` and an
//! `f64` flavour. `tests/gpu_shaders.rs` checks sizes and offsets against naga's layout.

use bytemuck::{Pod, Zeroable};

use crate::model::{Bond, Wall};

/// A floating-point type a kernel can be built in.
pub trait Real: Pod + Copy + Default + Send + Sync + std::fmt::Debug + 'static {
    /// The tail padding of a record that ends in an odd number of `u32` after reals
    /// ([`BondCompact`], [`HistRecord`]): nothing in `f32`, one `u32` in `f64`.
    type CompactPad: Pod + Default + PartialEq + std::fmt::Debug;
    /// Conversion from the reference `f64` (rounding to nearest for `f32`).
    fn from_f64(v: f64) -> Self;
    /// Conversion to `f64` (exact).
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    type CompactPad = ();
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    type CompactPad = u32;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// `struct Params` (uniform). 12 `u32` then 24 reals: 144 bytes in f32, 240 in f64, both
/// multiples of 16 as uniform blocks require.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Params<R: Real> {
    /// Number of particles.
    pub n_particles: u32,
    /// Number of bonds.
    pub n_bonds: u32,
    /// Number of walls.
    pub n_walls: u32,
    /// Number of grid buckets (a power of two).
    pub n_buckets: u32,
    /// Slots per bucket.
    pub bucket_capacity: u32,
    /// Neighbour-list capacity per particle.
    pub max_neighbors: u32,
    /// Bit 0 contacts on, bit 1 printed shear.
    pub flags: u32,
    /// 0 map (25), 1 map (23), 2 map (27).
    pub integrator: u32,
    /// Partial sums folded by `reduce_final`.
    pub n_partials: u32,
    /// Number of materials `M` (granular pair tables are `M × M`, then `W × M`).
    pub n_materials: u32,
    /// Contact-history slots per particle (`[contact] max_contacts`).
    pub max_contacts: u32,
    /// Particle ids (leaves of the diagnostics' reduction): the particles, or more
    /// when storage is compacted.
    pub n_ids: u32,
    /// Time step.
    pub dt: R,
    /// `K^pp`.
    pub k_pp: R,
    /// Neighbour skin.
    pub skin: R,
    /// 1 / cell edge.
    pub inv_cell: R,
    /// Field acceleration x.
    pub gravity_x: R,
    /// Field acceleration y.
    pub gravity_y: R,
    /// Field acceleration z.
    pub gravity_z: R,
    /// Always 1 (keeps the compensated updates opaque to shader compilers); also pads
    /// the block to a multiple of 16 bytes.
    pub one: R,
    /// Drag coefficient `c_fluid` (Campello eq. 15).
    pub drag_c: R,
    /// Fluid velocity x.
    pub fluid_x: R,
    /// Fluid velocity y.
    pub fluid_y: R,
    /// Fluid velocity z.
    pub fluid_z: R,
    /// Magnus constant `S` (Remark 4).
    pub magnus: R,
    /// Domain lower corner x (`[domain]`).
    pub domain_min_x: R,
    /// Domain lower corner y.
    pub domain_min_y: R,
    /// Domain lower corner z.
    pub domain_min_z: R,
    /// Domain upper corner x.
    pub domain_max_x: R,
    /// Domain upper corner y.
    pub domain_max_y: R,
    /// Domain upper corner z.
    pub domain_max_z: R,
    /// Near-field `κ₁` (attractive strength, Campello eq. 17).
    pub nf_kappa_a: R,
    /// Near-field `λ₁`.
    pub nf_lambda_a: R,
    /// Near-field `κ₂` (repulsive strength).
    pub nf_kappa_r: R,
    /// Near-field `λ₂`.
    pub nf_lambda_r: R,
    /// Near-field cutoff (centre distance); also the smallest neighbour reach (0: none).
    pub nf_cutoff: R,
    /// `[contact] max_overlap` under the Hertz law (`ERR_OVERLAP`).
    pub max_overlap: R,
    /// How far past touching the mesh search looks for JKR contacts in tension
    /// ([`crate::physics::jkr::largest_pull_off_separation`]; 0 without JKR).
    pub jkr_reach: R,
    /// Padding.
    pub pad_r1: R,
    /// Padding.
    pub pad_r2: R,
}

/// `struct Chunk` (uniform): one chunk of the bond set.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Chunk {
    /// Bonds in the chunk.
    pub n_bonds: u32,
    /// 1 for the first chunk.
    pub first: u32,
    /// First partial-sum slot of the chunk's bond energies.
    pub partial_base: u32,
    /// Global id of the chunk's first bond.
    pub bond_base: u32,
}

/// `struct RowChunk` (uniform): one chunk of the per-particle row buffers (neighbour rows,
/// contact history, wall springs, `granular_out`), which the row kernels index from `first`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RowChunk {
    /// Global id of the chunk's first particle.
    pub first: u32,
    /// Particles in the chunk.
    pub count: u32,
    /// First history slot of the copy the evaluation writes, in the chunk's `hist`.
    pub hist_new: u32,
    /// First history slot of the copy it reads.
    pub hist_old: u32,
    /// First wall spring of the written copy, in the chunk's `row_vec`.
    pub wall_new: u32,
    /// First wall spring of the read copy.
    pub wall_old: u32,
    /// First granular output vec4 in the chunk's `row_vec`.
    pub granular_out: u32,
    /// Motion records' v of the written copy, in `body`.
    pub mv_new: u32,
    /// Motion records' v of the read copy.
    pub mv_old: u32,
    /// Motion records' Δx of the written copy, in `motion`.
    pub mdx_new: u32,
    /// Motion records' Δx of the read copy.
    pub mdx_old: u32,
    /// Motion records' Δα of the written copy, in `motion`.
    pub mda_new: u32,
    /// Motion records' Δα of the read copy.
    pub mda_old: u32,
    /// First wall-load record in the chunk's `row_vec` (0: loads are not recorded).
    pub wall_load: u32,
    /// First mesh slot of the written copy, in the chunk's `hist` (after both copies of
    /// the particle slots).
    pub mesh_new: u32,
    /// First mesh slot of the read copy.
    pub mesh_old: u32,
    /// First EPSD rolling spring of the particle slots, written copy (in `hist`, after
    /// the mesh slots; issue 50).
    pub roll_new: u32,
    /// Its read copy.
    pub roll_old: u32,
    /// First EPSD rolling spring of the mesh slots, written copy (in `hist`, after the
    /// particle slots' rolling springs).
    pub mroll_new: u32,
    /// Its read copy.
    pub mroll_old: u32,
    /// First EPSD rolling spring of the walls, written copy (in `row_vec`, after the
    /// wall loads).
    pub wroll_new: u32,
    /// Its read copy.
    pub wroll_old: u32,
    /// Padding (uniform blocks are 16-byte multiples).
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// `struct BondRecord` in either precision; in `f64` it has exactly the layout of
/// [`crate::model::Bond`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondRecord<R: Real> {
    /// First particle.
    pub i: u32,
    /// Second particle.
    pub j: u32,
    /// `K^m`.
    pub k_bend: R,
    /// `K^a`.
    pub k_axial: R,
    /// `K^s`.
    pub k_shear: R,
    /// Rest length.
    pub rest_length: R,
    /// Rest direction in i's body frame.
    pub rest_dir_i: [R; 3],
    /// Rest direction in j's body frame.
    pub rest_dir_j: [R; 3],
    /// Rest relative rotation `c₀`.
    pub rest_rotation: [R; 3],
}

impl<R: Real> From<&Bond> for BondRecord<R> {
    fn from(b: &Bond) -> Self {
        let v = |a: glam::DVec3| [R::from_f64(a.x), R::from_f64(a.y), R::from_f64(a.z)];
        Self {
            i: b.i,
            j: b.j,
            k_bend: R::from_f64(b.k_bend),
            k_axial: R::from_f64(b.k_axial),
            k_shear: R::from_f64(b.k_shear),
            rest_length: R::from_f64(b.rest_length),
            rest_dir_i: v(b.rest_dir_i),
            rest_dir_j: v(b.rest_dir_j),
            rest_rotation: v(b.rest_rotation),
        }
    }
}

/// `struct BondCompact`: a bond whose ends started with the same orientation, so its
/// rest directions in the two body frames are one vector and its rest relative rotation
/// is zero, with its stiffnesses as an index into a table of the scene's distinct
/// stiffness triples (`bond_kinds`). 28 B in `f32` against 60 B for [`BondRecord`]
/// (48 B against 112 B in `f64`); `load_bond` (layout.wgsl) unpacks it into the `Bond`
/// that [`BondRecord`] holds, with the same values, so the bond law sees the same bits.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondCompact<R: Real> {
    /// Rest length.
    pub rest_length: R,
    /// Rest direction, in either end's body frame.
    pub rest_dir: [R; 3],
    /// First particle.
    pub i: u32,
    /// Second particle.
    pub j: u32,
    /// Row of the stiffness table.
    pub kind: u32,
    /// Tail padding to the `f64` alignment (none in `f32`).
    pub pad: R::CompactPad,
}

/// `struct HistRecord`: one contact-history slot, the pair's spring and the partner's id
/// ([`crate::physics::granular::NO_PARTNER`] ends a row). The WGSL spring is a `vec3`, whose 16- or
/// 32-byte alignment puts `id` right after it and rounds the record to 16 B in `f32`
/// and 32 B in `f64`: the `f64` tail is the explicit `pad`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HistRecord<R: Real> {
    /// Tangential spring (canonical orientation: the lower id's).
    pub spring: [R; 3],
    /// Partner id.
    pub id: u32,
    /// Tail padding to the `f64` alignment (none in `f32`).
    pub pad: R::CompactPad,
}

/// The compact form of a model's bonds: records and the table of distinct stiffness
/// triples `(K^m, K^a, K^s)` they index, as the GPU binds them.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactBonds<R: Real> {
    /// One record per bond, in bond order.
    pub records: Vec<BondCompact<R>>,
    /// `K^m, K^a, K^s` per kind, flat.
    pub kinds: Vec<R>,
}

/// Most stiffness rows a [`CompactBonds`] table holds: the table is one storage binding
/// read for every bond (not split into chunks like the records), so scenes with more
/// distinct stiffnesses keep full records, which carry their own.
pub const MAX_BOND_KINDS: usize = 1 << 16;

impl<R: Real> CompactBonds<R> {
    /// The compact form of `bonds`, or `None` when a bond's ends did not start with the
    /// same orientation (rest directions differ, or the rest rotation is not zero):
    /// such bonds need the full [`BondRecord`]; also `None` with more than
    /// [`MAX_BOND_KINDS`] distinct stiffness triples. Kinds are numbered in order of
    /// first appearance; identical triples (bit for bit) share one.
    pub fn new(bonds: &[Bond]) -> Option<Self> {
        let mut kinds: Vec<[u64; 3]> = Vec::new();
        let mut index: std::collections::HashMap<[u64; 3], u32> = Default::default();
        let mut records = Vec::with_capacity(bonds.len());
        for b in bonds {
            // The directions bit for bit; the rotation by value (a zero of either sign
            // unpacks as +0, which the composition with −α_i absorbs).
            let bits = |v: glam::DVec3| v.to_array().map(f64::to_bits);
            if bits(b.rest_dir_i) != bits(b.rest_dir_j) || b.rest_rotation != glam::DVec3::ZERO {
                return None;
            }
            let key = [b.k_bend, b.k_axial, b.k_shear].map(f64::to_bits);
            let kind = match index.get(&key) {
                Some(&k) => k,
                None if kinds.len() < MAX_BOND_KINDS => {
                    kinds.push(key);
                    index.insert(key, kinds.len() as u32 - 1);
                    kinds.len() as u32 - 1
                }
                None => return None,
            };
            let d = b.rest_dir_i;
            records.push(BondCompact {
                rest_length: R::from_f64(b.rest_length),
                rest_dir: [R::from_f64(d.x), R::from_f64(d.y), R::from_f64(d.z)],
                i: b.i,
                j: b.j,
                kind,
                pad: Default::default(),
            });
        }
        let kinds = kinds
            .iter()
            .flatten()
            .map(|&k| R::from_f64(f64::from_bits(k)))
            .collect();
        Some(Self { records, kinds })
    }
}

/// `struct WallRecord`: point, unit normal, stiffness, padding.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WallRecord<R: Real> {
    /// Point on the plane.
    pub point: [R; 3],
    /// Unit normal.
    pub normal: [R; 3],
    /// Stiffness.
    pub stiffness: R,
    /// Padding.
    pub pad0: R,
}

impl<R: Real> From<&Wall> for WallRecord<R> {
    fn from(w: &Wall) -> Self {
        let v = |a: glam::DVec3| [R::from_f64(a.x), R::from_f64(a.y), R::from_f64(a.z)];
        Self {
            point: v(w.point),
            normal: v(w.normal),
            stiffness: R::from_f64(w.stiffness),
            pad0: R::default(),
        }
    }
}

/// `struct PairRecord`: effective properties of a material pair or of a material against a
/// wall ([`crate::physics::granular::PairMaterial`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairRecord<R: Real> {
    /// `E*`.
    pub e_star: R,
    /// `G*` (Mindlin).
    pub g_star: R,
    /// Damping ratio `ξ`.
    pub xi: R,
    /// `μ_s`.
    pub mu_s: R,
    /// `μ_d`.
    pub mu_d: R,
    /// `μ_r` (rolling friction).
    pub mu_r: R,
    /// `η_r` (EPSD rolling damping).
    pub eta_r: R,
    /// JKR surface energy `γ` (0: the Hertz law).
    pub gamma: R,
}

impl<R: Real> From<&crate::physics::granular::PairMaterial> for PairRecord<R> {
    fn from(p: &crate::physics::granular::PairMaterial) -> Self {
        Self {
            e_star: R::from_f64(p.e_star),
            g_star: R::from_f64(p.g_star),
            xi: R::from_f64(p.xi),
            mu_s: R::from_f64(p.mu_s),
            mu_d: R::from_f64(p.mu_d),
            mu_r: R::from_f64(p.mu_r),
            eta_r: R::from_f64(p.eta_r),
            gamma: R::from_f64(p.gamma),
        }
    }
}

// Every record below is `#[repr(C)]` with fields of `u32`, `R` (f32/f64) or arrays of
// `R` only, laid out so that no instantiation has padding: the `u32` fields come first
// in even numbers (Params, BondRecord, WallRecord, PairRecord), or the f64 tail padding
// is an explicit field (BondCompact: `rest_length`, `rest_dir` and three `u32`, 28 B in
// f32; HistRecord: three reals and one `u32`). The size assertions below check it for
// both precisions, and tests/gpu_shaders.rs checks every offset against naga's layout
// of the WGSL structs.
/// `struct HardParams` (uniform): the hard-contact solver's parameters
/// (`shaders/hard.wgsl`). 4 `u32` then 8 reals: 48 bytes in f32, 80 in f64.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HardParams<R: Real> {
    /// Contact capacity.
    pub capacity: u32,
    /// `[contact] max_sweeps`.
    pub max_sweeps: u32,
    /// `HARD_*` bits of [`crate::gpu::contract`].
    pub flags: u32,
    /// Workgroups of the contact-count scan (over `n + 1` items).
    pub scan_groups: u32,
    /// Time step.
    pub h: R,
    /// Error reduction ε.
    pub eps: R,
    /// Velocity tolerance (m/s).
    pub tol: R,
    /// Jacobi relaxation ω.
    pub relaxation: R,
    /// The fixed margin (`HARD_FIXED_MARGIN`).
    pub margin: R,
    /// Padding.
    pub pad0: R,
    /// Padding.
    pub pad1: R,
    /// Padding.
    pub pad2: R,
}

/// `struct HardColor` (uniform): the colour a `hard_color_sweep` bind group runs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct HardColor {
    /// The colour.
    pub color: u32,
    /// Padding.
    pub pad: [u32; 3],
}

// SAFETY: no padding, every bit pattern valid (see above).
unsafe impl<R: Real> Zeroable for HardParams<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for HardParams<R> {}
// SAFETY: no padding, every bit pattern valid (see above).
unsafe impl<R: Real> Zeroable for Params<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for Params<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Zeroable for BondRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for BondRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Zeroable for BondCompact<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for BondCompact<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Zeroable for HistRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for HistRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Zeroable for WallRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for WallRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Zeroable for PairRecord<R> {}
// SAFETY: as above.
unsafe impl<R: Real> Pod for PairRecord<R> {}

const _: () = {
    use std::mem::size_of;
    assert!(size_of::<HardParams<f32>>() == 48);
    assert!(size_of::<HardParams<f64>>() == 80);
    assert!(size_of::<Params<f32>>() == 48 + 28 * 4);
    assert!(size_of::<Params<f64>>() == 48 + 28 * 8);
    assert!(size_of::<PairRecord<f32>>() == 8 * 4);
    assert!(size_of::<PairRecord<f64>>() == 8 * 8);
    assert!(size_of::<Chunk>() == 16);
    assert!(size_of::<RowChunk>() == 96);
    assert!(size_of::<BondRecord<f32>>() == 8 + 13 * 4);
    assert!(size_of::<BondRecord<f64>>() == 8 + 13 * 8);
    assert!(size_of::<BondRecord<f64>>() == size_of::<Bond>());
    assert!(size_of::<HistRecord<f32>>() == 16);
    assert!(size_of::<HistRecord<f64>>() == 32);
    assert!(size_of::<BondCompact<f32>>() == 7 * 4);
    assert!(size_of::<BondCompact<f64>>() == 4 * 8 + 4 * 4);
    assert!(size_of::<WallRecord<f32>>() == 8 * 4);
    assert!(size_of::<WallRecord<f64>>() == 8 * 8);
};

/// Bytes of one contact-history slot ([`HistRecord`]) for reals of `rs` bytes.
pub fn hist_slot_bytes(rs: usize) -> usize {
    if rs == 4 {
        size_of::<HistRecord<f32>>()
    } else {
        size_of::<HistRecord<f64>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BondStiffness, Particles};
    use glam::DVec3;

    fn particles(rotation: [DVec3; 3]) -> Particles {
        let mut p = Particles::default();
        for (k, a) in rotation.into_iter().enumerate() {
            let mut q = crate::model::Particle::at_rest(
                DVec3::new(0.1 * k as f64, 0.02 * k as f64, 0.0),
                1.0,
                0.05,
            );
            q.rotation = a;
            p.push(q);
        }
        p
    }

    /// Bonds between unrotated particles compact, with one stiffness row per distinct
    /// triple and the full record's values; one bond whose ends started rotated
    /// differently keeps the whole set in full records.
    #[test]
    fn compact_bonds_hold_the_full_records_values() {
        let k1 = BondStiffness {
            bend: 0.01,
            axial: 2.0,
            shear: 1.0,
        };
        let k2 = BondStiffness { bend: 0.02, ..k1 };
        let p = particles([DVec3::ZERO; 3]);
        let bonds = [
            Bond::from_current(&p, 0, 1, k1).unwrap(),
            Bond::from_current(&p, 1, 2, k2).unwrap(),
            Bond::from_current(&p, 0, 2, k1).unwrap(),
        ];
        let c = CompactBonds::<f64>::new(&bonds).expect("unrotated ends compact");
        assert_eq!(c.kinds, vec![0.01, 2.0, 1.0, 0.02, 2.0, 1.0]);
        for (r, b) in c.records.iter().zip(&bonds) {
            let full = BondRecord::<f64>::from(b);
            let k = 3 * r.kind as usize;
            assert_eq!(
                (r.i, r.j, r.rest_length),
                (full.i, full.j, full.rest_length)
            );
            assert_eq!(
                [c.kinds[k], c.kinds[k + 1], c.kinds[k + 2]],
                [full.k_bend, full.k_axial, full.k_shear]
            );
            assert_eq!(r.rest_dir, full.rest_dir_i);
            assert_eq!(r.rest_dir, full.rest_dir_j);
            assert_eq!(full.rest_rotation, [0.0; 3]);
        }
        assert_eq!(
            [c.records[0].kind, c.records[1].kind, c.records[2].kind],
            [0, 1, 0]
        );
        // Ends that started with the same non-zero orientation still compact.
        let a = DVec3::new(0.3, -0.2, 0.5);
        let p = particles([a; 3]);
        let same = [Bond::from_current(&p, 0, 1, k1).unwrap()];
        assert!(CompactBonds::<f32>::new(&same).is_some());
        // Different orientations: rest directions differ, full records.
        let p = particles([DVec3::ZERO, a, DVec3::ZERO]);
        let mixed = [
            Bond::from_current(&p, 0, 2, k1).unwrap(),
            Bond::from_current(&p, 0, 1, k1).unwrap(),
        ];
        assert!(CompactBonds::<f32>::new(&mixed).is_none());
        // More distinct stiffnesses than the table holds: full records.
        let p = particles([DVec3::ZERO; 3]);
        let b = Bond::from_current(&p, 0, 1, k1).unwrap();
        let many: Vec<Bond> = (0..=MAX_BOND_KINDS)
            .map(|k| Bond {
                k_axial: 1.0 + k as f64,
                ..b
            })
            .collect();
        assert!(CompactBonds::<f32>::new(&many[..MAX_BOND_KINDS]).is_some());
        assert!(CompactBonds::<f32>::new(&many).is_none());
    }
}
