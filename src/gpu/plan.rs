//! Buffer planning without an adapter: the sections of the packed storage buffers.
//!
//! Every kernel must run on devices with 16 storage buffers per shader stage (the
//! portable minimum, [`crate::gpu::limits`]), so arrays of one element type share a
//! buffer in sections (`shaders/common/layout.wgsl`). [`Sections`] places them: its
//! offsets become the `O_*` constants of the generated WGSL header, and the host reads
//! and writes the same sections. Pure functions, tested here.

/// What a problem stores, which decides the sections present (a section that no kernel
/// of the problem touches has length 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SectionNeeds {
    /// Particles.
    pub n: u32,
    /// Some particle is a pendulum (its offset vector is read).
    pub pendulum: bool,
    /// Contact detection runs (neighbour-list reference positions, rebuild shift).
    pub contact: bool,
    /// Fused steps predict positions into `pos_next`.
    pub pos_next: bool,
    /// Fused steps predict rotations into `rot_next` (inline bond terms).
    pub rot_next: bool,
    /// Merged contact passes read motion records (two copies by step parity).
    pub motion: bool,
    /// Per-particle materials are stored (granular scenes).
    pub material: bool,
    /// Records of the granular pair table (two vec4 each).
    pub pair_records: u32,
    /// Walls (two vec4 each).
    pub walls: u32,
    /// Compact bond kinds (one vec4 each).
    pub bond_kinds: u32,
}

impl SectionNeeds {
    /// Every section present, for `n` particles and the given table sizes (checks
    /// without a problem: naga validation, binding counts, tests).
    pub fn everything(n: u32, pair_records: u32, walls: u32, bond_kinds: u32) -> Self {
        Self {
            n,
            pendulum: true,
            contact: true,
            pos_next: true,
            rot_next: true,
            motion: true,
            material: true,
            pair_records,
            walls,
            bond_kinds,
        }
    }
}

/// Element offsets and lengths of the sections of the packed buffers: vec4 elements in
/// `body` and `tables`, reals in `vecs` and `motion`, words in `pflags`. The first
/// section of each buffer (positions, α, flags, pair table) is at 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// `body`: v and m.
    pub vel: u32,
    /// `body`: Ω and J.
    pub omega: u32,
    /// `body`: F.
    pub force: u32,
    /// `body`: the motion records' v and m, copies A and B.
    pub motion_v: [u32; 2],
    /// `body` length (vec4).
    pub body_len: u32,
    /// `vecs`: M.
    pub moment: u32,
    /// `vecs`: pendulum offsets.
    pub pend: u32,
    /// `vecs`: positions at the last neighbour-list build.
    pub ref_pos: u32,
    /// `vecs`: per-particle energies (contact, wall, near field).
    pub energy: u32,
    /// `vecs`: the rebuild test's shift (3 reals).
    pub skin: u32,
    /// `vecs`: positions predicted by a fused step.
    pub pos_next: u32,
    /// `vecs`: rotations predicted by a fused step with inline bond terms.
    pub rot_next: u32,
    /// `vecs` length (reals).
    pub vecs_len: u32,
    /// `pflags`: materials.
    pub material: u32,
    /// `pflags` length (words).
    pub flags_len: u32,
    /// `tables`: walls.
    pub walls: u32,
    /// `tables`: compact bond kinds.
    pub kinds: u32,
    /// `tables` length (vec4).
    pub tables_len: u32,
    /// `motion`: Δx of copies A and B.
    pub motion_dx: [u32; 2],
    /// `motion`: Δα of copies A and B.
    pub motion_da: [u32; 2],
    /// `motion` length (reals).
    pub motion_len: u32,
}

/// Appends sections to one buffer: each starts where the previous ended.
struct Cursor(u64);

impl Cursor {
    /// The offset of a section of `len` elements, or of an empty one if `!present`.
    fn take(&mut self, present: bool, len: u64) -> u64 {
        let at = self.0;
        if present {
            self.0 += len;
        }
        at
    }
}

/// Error of [`Sections::new`]: a buffer would have more elements than a `u32` index
/// reaches.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("buffer '{buffer}' would need {elements} elements, more than 32-bit indices reach")]
pub struct SectionOverflow {
    /// The packed buffer.
    pub buffer: &'static str,
    /// Its element count.
    pub elements: u64,
}

fn index(buffer: &'static str, v: u64) -> Result<u32, SectionOverflow> {
    u32::try_from(v).map_err(|_| SectionOverflow {
        buffer,
        elements: v,
    })
}

impl Sections {
    /// Places the sections a problem needs.
    pub fn new(w: &SectionNeeds) -> Result<Self, SectionOverflow> {
        let n = u64::from(w.n);
        let mut body = Cursor(n);
        let vel = body.take(true, n);
        let omega = body.take(true, n);
        let force = body.take(true, n);
        let mva = body.take(w.motion, n);
        let mvb = body.take(w.motion, n);
        let mut vecs = Cursor(3 * n);
        let moment = vecs.take(true, 3 * n);
        let pend = vecs.take(w.pendulum, 3 * n);
        let ref_pos = vecs.take(w.contact, 3 * n);
        let energy = vecs.take(true, 3 * n);
        let skin = vecs.take(w.contact, 3);
        let pos_next = vecs.take(w.pos_next, 3 * n);
        let rot_next = vecs.take(w.rot_next, 3 * n);
        let mut flags = Cursor(n);
        let material = flags.take(w.material, n);
        let mut tables = Cursor(2 * u64::from(w.pair_records));
        let walls = tables.take(true, 2 * u64::from(w.walls));
        let kinds = tables.take(true, u64::from(w.bond_kinds));
        let mut motion = Cursor(0);
        let dxa = motion.take(w.motion, 3 * n);
        let daa = motion.take(w.motion, 3 * n);
        let dxb = motion.take(w.motion, 3 * n);
        let dab = motion.take(w.motion, 3 * n);
        let b = |v| index("body", v);
        let v = |x| index("vecs", x);
        Ok(Self {
            vel: b(vel)?,
            omega: b(omega)?,
            force: b(force)?,
            motion_v: [b(mva)?, b(mvb)?],
            body_len: b(body.0)?,
            moment: v(moment)?,
            pend: v(pend)?,
            ref_pos: v(ref_pos)?,
            energy: v(energy)?,
            skin: v(skin)?,
            pos_next: v(pos_next)?,
            rot_next: v(rot_next)?,
            vecs_len: v(vecs.0)?,
            material: index("pflags", material)?,
            flags_len: index("pflags", flags.0)?,
            walls: index("tables", walls)?,
            kinds: index("tables", kinds)?,
            tables_len: index("tables", tables.0)?,
            motion_dx: [index("motion", dxa)?, index("motion", dxb)?],
            motion_da: [index("motion", daa)?, index("motion", dab)?],
            motion_len: index("motion", motion.0)?,
        })
    }

    /// The `O_*` constants of the WGSL header (`shaders/common/layout.wgsl`).
    pub fn wgsl_constants(&self) -> String {
        [
            ("O_VEL", self.vel),
            ("O_OMEGA", self.omega),
            ("O_FORCE", self.force),
            ("O_MOMENT", self.moment),
            ("O_PEND", self.pend),
            ("O_REF", self.ref_pos),
            ("O_ENERGY", self.energy),
            ("O_SKIN", self.skin),
            ("O_POS_NEXT", self.pos_next),
            ("O_ROT_NEXT", self.rot_next),
            ("O_MATERIAL", self.material),
            ("O_WALLS", self.walls),
            ("O_KINDS", self.kinds),
        ]
        .iter()
        .map(|(name, v)| format!("const {name}: u32 = {v}u;\n"))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(n: u32) -> SectionNeeds {
        SectionNeeds::everything(n, 6, 2, 3)
    }

    /// Sections of one buffer follow each other without gaps or overlap, in the order
    /// of the layout, and absent ones take no room.
    #[test]
    fn sections_tile_their_buffers() {
        let s = Sections::new(&all(10)).unwrap();
        assert_eq!(
            (s.vel, s.omega, s.force, s.motion_v, s.body_len),
            (10, 20, 30, [40, 50], 60)
        );
        assert_eq!(
            (s.moment, s.pend, s.ref_pos, s.energy, s.skin, s.pos_next, s.rot_next),
            (30, 60, 90, 120, 150, 153, 183)
        );
        assert_eq!(s.vecs_len, 213);
        assert_eq!((s.material, s.flags_len), (10, 20));
        assert_eq!((s.walls, s.kinds, s.tables_len), (12, 16, 19));
        assert_eq!(
            (s.motion_dx, s.motion_da, s.motion_len),
            ([0, 60], [30, 90], 120)
        );

        let bare = Sections::new(&SectionNeeds {
            n: 10,
            ..SectionNeeds::default()
        })
        .unwrap();
        assert_eq!(bare.body_len, 40);
        assert_eq!(bare.vecs_len, 90);
        assert_eq!(bare.flags_len, 10);
        assert_eq!(bare.motion_len, 0);
        assert_eq!(bare.tables_len, 0);
    }

    #[test]
    fn sections_beyond_u32_indices_are_refused() {
        let e = Sections::new(&all(u32::MAX / 4)).unwrap_err();
        assert_eq!(e.buffer, "body");
    }

    #[test]
    fn constants_name_every_offset() {
        let c = Sections::new(&all(10)).unwrap().wgsl_constants();
        assert!(c.contains("const O_VEL: u32 = 10u;\n"));
        assert!(c.contains("const O_KINDS: u32 = 16u;\n"));
        assert_eq!(c.lines().count(), 13);
    }
}
