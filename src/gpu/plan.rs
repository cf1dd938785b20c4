//! Buffer planning without an adapter: how a problem is sized and split ([`Plan`]:
//! buckets, bond chunks, row chunks, kernel paths) and the sections of the packed
//! storage buffers ([`Sections`]).
//!
//! Every kernel must run on devices with 16 storage buffers per shader stage (the
//! portable minimum, [`crate::gpu::limits`]), so arrays of one element type share a
//! buffer in sections (`shaders/common/layout.wgsl`). [`Sections`] places them: its
//! offsets become the `O_*` constants of the generated WGSL header, and the host reads
//! and writes the same sections. Pure functions, tested here.

use crate::error::{Error, Result};
use crate::gpu::contract::{
    BOND_BREAK_STRIDE, BOND_OUT_STRIDE, CLUMP_RECORD, MESH_POSE_VEC4, POSE_SLOTS, POSE_VEC4,
};
use crate::gpu::layout::{hist_slot_bytes, BondRecord, Real};
use crate::gpu::options::{GpuOptions, Paths, DEFAULT_MAX_NEIGHBORS};
use crate::gpu::shaders::{self, MAX_NEIGHBORS, WORKGROUP_SIZE};
use crate::model::{ContactLaw, Model, FLAG_PENDULUM};

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
    /// Positions carry their Kahan terms where partners read them (`f32` builds:
    /// compensated separations, `shaders/common/layout.wgsl`), and in `pos_kahan_next`
    /// with `pos_next`.
    pub pos_kahan: bool,
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
    /// Clumps (issue 24): the bodies, whose spheres are the particles from `free` on.
    pub bodies: u32,
    /// Particles that are not a clump's sphere (`n` without clumps).
    pub free: u32,
    /// Clump types (four vec4 each: mass and scalar moment, J, J⁻¹).
    pub clump_types: u32,
    /// Some wall moves: its pose of each step is uploaded ([`POSE_SLOTS`] steps).
    pub moving_walls: bool,
    /// Mesh walls' data sizes (all zero without meshes).
    pub mesh: MeshCounts,
    /// Some mesh moves: the meshes' poses of each step are uploaded and `mesh_place`
    /// places them at every step.
    pub moving_meshes: bool,
    /// Rolling resistance (issue 50, `ROLLING`): 0 none, 1 CDT, 2 EPSD (rolling
    /// springs in the contact history).
    pub rolling: u32,
    /// JKR cohesion (issue 50, `JKR`): pairs with a surface energy follow the JKR law
    /// and hold in tension; the walls' held flags are the w of their spring vec4.
    pub jkr: bool,
    /// Bonds can break (issue 47, `BREAKABLE`): each bond chunk's `bond_out` holds the
    /// strengths and break records after the results, and the status buffer a word
    /// per bond after the particles' detail words.
    pub breakable: bool,
    /// Particles leaving the domain are removed (`on_exit = "remove"`): the step at
    /// which each left is stored.
    pub removal: bool,
    /// Storage is not in id order (issue 44): the id of each slot and the slot of each
    /// id are stored, and the kernels order, own and reduce by id.
    pub ids: bool,
    /// Particle ids: `n`, or more when storage is compacted (the slot of each id has a
    /// word per id, [`crate::model::layout::NOT_STORED`] for those not stored).
    pub id_count: u32,
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
            pos_kahan: true,
            rot_next: true,
            motion: true,
            material: true,
            pair_records,
            walls,
            bond_kinds,
            bodies: 4,
            free: n.saturating_sub(8),
            clump_types: 2,
            moving_walls: true,
            moving_meshes: true,
            rolling: 2,
            jkr: true,
            breakable: true,
            removal: true,
            ids: true,
            id_count: n,
            mesh: MeshCounts {
                meshes: 2,
                vertices: 4,
                triangles: 2,
                cells: 3,
                items: 5,
            },
        }
    }
}

/// Element offsets and lengths of the sections of the packed buffers: vec4 elements in
/// `body` and `tables`, reals in `vecs` and `motion`, words in `particle_flags`. The first
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
    /// `body`: the positions' Kahan terms (`f32`).
    pub pos_kahan: u32,
    /// `body` length (vec4).
    pub body_len: u32,
    /// `vecs`: M.
    pub moment: u32,
    /// `vecs`: pendulum offsets.
    pub pendulum: u32,
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
    /// `vecs`: the Kahan terms of the positions in `pos_next`.
    pub pos_kahan_next: u32,
    /// `vecs` length (reals).
    pub vecs_len: u32,
    /// `particle_flags`: materials.
    pub material: u32,
    /// `particle_flags` length (words).
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
    /// `body`: the clumps' state, [`CLUMP_RECORD`] vec4 per body.
    pub clump_state: u32,
    /// `body`: the clump spheres' contact sides (end-of-step velocity, Δx, Δα), three
    /// vec4 per sphere from particle `free` on.
    pub member_side: u32,
    /// `tables`: the clump types, four vec4 each.
    pub clump_types: u32,
    /// `tables`: each clump sphere's body-frame offset (vec4).
    pub member_offset: u32,
    /// `tables`: the moving walls' poses, [`POSE_VEC4`] vec4 per wall and step slot
    /// (`step % POSE_SLOTS`), written before each batch of steps.
    pub wall_poses: u32,
    /// Whether some wall moves (`wall_poses` holds their poses).
    pub moving_walls: bool,
    /// `tables`: the mesh grid's origin and inverse cell edge, then its dimensions,
    /// then per mesh its axis point (moments of its load are taken about it) and its
    /// binder stiffness.
    pub mesh_grid: u32,
    /// `tables`: mesh vertices (vec4 each).
    pub mesh_verts: u32,
    /// `tables`: per triangle its corners, plane and edge lines (7 vec4).
    pub mesh_tris: u32,
    /// `particle_flags`: per triangle its vertex ids, owner keys and mesh (10 words).
    pub mesh_ids: u32,
    /// `particle_flags`: each grid cell's first item, and the end.
    pub mesh_cells: u32,
    /// `particle_flags`: the cells' triangle ids.
    pub mesh_items: u32,
    /// Mesh triangles (0: no meshes).
    pub mesh_triangles: u32,
    /// Mesh walls.
    pub meshes: u32,
    /// `tables`: the meshes' poses, [`MESH_POSE_VEC4`] vec4 per mesh and step slot
    /// (`step % POSE_SLOTS`), written before each batch of steps, if some mesh moves.
    pub mesh_poses: u32,
    /// `vecs`: the meshes placed at the current step by `mesh_place` (the layout of
    /// `mesh_verts` then `mesh_tris`, 4 reals per vec4), if some mesh moves.
    pub mesh_placed: u32,
    /// Whether some mesh moves.
    pub moving_meshes: bool,
    /// Rolling resistance: 0 none, 1 CDT, 2 EPSD ([`SectionNeeds::rolling`]).
    pub rolling: u32,
    /// JKR cohesion ([`SectionNeeds::jkr`]).
    pub jkr: bool,
    /// Breakable bonds ([`SectionNeeds::breakable`]).
    pub breakable: bool,
    /// `particle_flags`: per body its first sphere, sphere count and type.
    pub clump_info: u32,
    /// `particle_flags`: each clump sphere's body.
    pub member_body: u32,
    /// Particles that are not a clump's sphere (`N_FREE`).
    pub free: u32,
    /// Clumps (`N_BODIES`).
    pub bodies: u32,
    /// `particle_flags`: the step at which each removed particle left (scenes with
    /// removal).
    pub exit_step: u32,
    /// `particle_flags`: the id stored in each slot (storage not in id order).
    pub id_of: u32,
    /// `particle_flags`: the slot of each id (storage not in id order).
    pub slot_of: u32,
    /// Whether storage is not in id order (`IDS` in the kernels).
    pub ids: bool,
}

/// A section of a packed buffer with one record per storage slot: what a sort during
/// a run moves (issue 44, `src/gpu/sort.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSection {
    /// The buffer's binding.
    pub binding: u32,
    /// Its first word.
    pub first: u64,
    /// Words per slot.
    pub words: u32,
}

impl Sections {
    /// Every section of the shared packed buffers that holds one record per storage
    /// slot, for reals of `real_bytes` bytes, as [`Sections::new`] placed them for
    /// `w`: the state in `body`, `vecs` and `motion`, the flags, materials and exit
    /// steps in `particle_flags`. Not the id tables (the sort writes them), nor the
    /// clumps' records (their spheres keep their slots), nor the rebuild shift.
    pub fn slot_sections(&self, w: &SectionNeeds, real_bytes: u32) -> Vec<SlotSection> {
        use super::bindings as bind;
        // Words per element: a vec4 of reals in body, a real in vecs and motion.
        let (vec4, real) = (real_bytes, real_bytes / 4);
        let mut out = Vec::new();
        let mut add = |present: bool, binding: u32, at: u32, element: u32, per_slot: u32| {
            if present {
                out.push(SlotSection {
                    binding,
                    first: u64::from(at) * u64::from(element),
                    words: per_slot * element,
                });
            }
        };
        add(true, bind::BODY, 0, vec4, 1);
        add(true, bind::BODY, self.vel, vec4, 1);
        add(true, bind::BODY, self.omega, vec4, 1);
        add(true, bind::BODY, self.force, vec4, 1);
        add(w.motion, bind::BODY, self.motion_v[0], vec4, 1);
        add(w.motion, bind::BODY, self.motion_v[1], vec4, 1);
        add(w.pos_kahan, bind::BODY, self.pos_kahan, vec4, 1);
        add(true, bind::VECS, 0, real, 3);
        add(true, bind::VECS, self.moment, real, 3);
        add(w.pendulum, bind::VECS, self.pendulum, real, 3);
        add(w.contact, bind::VECS, self.ref_pos, real, 3);
        add(true, bind::VECS, self.energy, real, 3);
        add(w.pos_next, bind::VECS, self.pos_next, real, 3);
        add(w.rot_next, bind::VECS, self.rot_next, real, 3);
        add(
            w.pos_kahan && w.pos_next,
            bind::VECS,
            self.pos_kahan_next,
            real,
            3,
        );
        add(true, bind::PARTICLE_FLAGS, 0, 1, 1);
        add(w.material, bind::PARTICLE_FLAGS, self.material, 1, 1);
        add(w.removal, bind::PARTICLE_FLAGS, self.exit_step, 1, 1);
        for copy in 0..2 {
            add(w.motion, bind::MOTION, self.motion_dx[copy], real, 3);
            add(w.motion, bind::MOTION, self.motion_da[copy], real, 3);
        }
        out
    }
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
        let pos_kahan = body.take(w.pos_kahan, n);
        let bodies = u64::from(w.bodies);
        // Without bodies every particle is free.
        let free = if w.bodies > 0 { w.free.min(w.n) } else { w.n };
        let members = n - u64::from(free);
        let clump_state = body.take(bodies > 0, u64::from(CLUMP_RECORD) * bodies);
        let member_side = body.take(members > 0, 3 * members);
        let mut vecs = Cursor(3 * n);
        let moment = vecs.take(true, 3 * n);
        let pendulum = vecs.take(w.pendulum, 3 * n);
        let ref_pos = vecs.take(w.contact, 3 * n);
        let energy = vecs.take(true, 3 * n);
        let skin = vecs.take(w.contact, 3);
        let pos_next = vecs.take(w.pos_next, 3 * n);
        let rot_next = vecs.take(w.rot_next, 3 * n);
        let pos_kahan_next = vecs.take(w.pos_kahan && w.pos_next, 3 * n);
        let mut flags = Cursor(n);
        let material = flags.take(w.material, n);
        let clump_info = flags.take(bodies > 0, 3 * bodies);
        let member_body = flags.take(members > 0, members);
        let mut tables = Cursor(2 * u64::from(w.pair_records));
        let walls = tables.take(true, 2 * u64::from(w.walls));
        let kinds = tables.take(true, u64::from(w.bond_kinds));
        let clump_types = tables.take(bodies > 0, 4 * u64::from(w.clump_types));
        let member_offset = tables.take(members > 0, members);
        let wall_poses = tables.take(
            w.moving_walls,
            u64::from(POSE_SLOTS * POSE_VEC4) * u64::from(w.walls),
        );
        let mc = w.mesh;
        let meshes = mc.triangles > 0;
        let mesh_grid = tables.take(meshes, 2 + 2 * u64::from(mc.meshes));
        let mesh_verts = tables.take(meshes, u64::from(mc.vertices));
        let mesh_tris = tables.take(meshes, 7 * u64::from(mc.triangles));
        let moving_meshes = meshes && w.moving_meshes;
        let mesh_poses = tables.take(
            moving_meshes,
            u64::from(POSE_SLOTS * MESH_POSE_VEC4) * u64::from(mc.meshes),
        );
        let mesh_placed = vecs.take(
            moving_meshes,
            4 * (u64::from(mc.vertices) + 7 * u64::from(mc.triangles)),
        );
        let mesh_ids = flags.take(meshes, 10 * u64::from(mc.triangles));
        let mesh_cells = flags.take(meshes, u64::from(mc.cells) + 1);
        let mesh_items = flags.take(meshes, u64::from(mc.items));
        let exit_step = flags.take(w.removal, n);
        let id_of = flags.take(w.ids, n);
        let slot_of = flags.take(w.ids, u64::from(w.id_count.max(w.n)));
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
            pos_kahan: b(pos_kahan)?,
            body_len: b(body.0)?,
            moment: v(moment)?,
            pendulum: v(pendulum)?,
            ref_pos: v(ref_pos)?,
            energy: v(energy)?,
            skin: v(skin)?,
            pos_next: v(pos_next)?,
            rot_next: v(rot_next)?,
            pos_kahan_next: v(pos_kahan_next)?,
            vecs_len: v(vecs.0)?,
            material: index("particle_flags", material)?,
            flags_len: index("particle_flags", flags.0)?,
            walls: index("tables", walls)?,
            kinds: index("tables", kinds)?,
            tables_len: index("tables", tables.0)?,
            motion_dx: [index("motion", dxa)?, index("motion", dxb)?],
            motion_da: [index("motion", daa)?, index("motion", dab)?],
            motion_len: index("motion", motion.0)?,
            clump_state: b(clump_state)?,
            member_side: b(member_side)?,
            clump_types: index("tables", clump_types)?,
            member_offset: index("tables", member_offset)?,
            wall_poses: index("tables", wall_poses)?,
            moving_walls: w.moving_walls,
            mesh_grid: index("tables", mesh_grid)?,
            mesh_verts: index("tables", mesh_verts)?,
            mesh_tris: index("tables", mesh_tris)?,
            mesh_ids: index("particle_flags", mesh_ids)?,
            mesh_cells: index("particle_flags", mesh_cells)?,
            mesh_items: index("particle_flags", mesh_items)?,
            mesh_triangles: mc.triangles,
            meshes: mc.meshes,
            mesh_poses: index("tables", mesh_poses)?,
            mesh_placed: index("vecs", mesh_placed)?,
            moving_meshes,
            rolling: w.rolling,
            jkr: w.jkr,
            breakable: w.breakable,
            clump_info: index("particle_flags", clump_info)?,
            member_body: index("particle_flags", member_body)?,
            free,
            bodies: w.bodies,
            exit_step: index("particle_flags", exit_step)?,
            id_of: index("particle_flags", id_of)?,
            slot_of: index("particle_flags", slot_of)?,
            ids: w.ids,
        })
    }

    /// The `O_*` constants of the WGSL header (`shaders/common/layout.wgsl`).
    pub fn wgsl_constants(&self) -> String {
        [
            ("O_VEL", self.vel),
            ("O_OMEGA", self.omega),
            ("O_FORCE", self.force),
            ("O_MOMENT", self.moment),
            ("O_PENDULUM", self.pendulum),
            ("O_REF", self.ref_pos),
            ("O_ENERGY", self.energy),
            ("O_SKIN", self.skin),
            ("O_POS_NEXT", self.pos_next),
            ("O_ROT_NEXT", self.rot_next),
            ("O_POS_KAHAN", self.pos_kahan),
            ("O_POS_KAHAN_NEXT", self.pos_kahan_next),
            ("O_MATERIAL", self.material),
            ("O_WALLS", self.walls),
            ("O_KINDS", self.kinds),
            ("O_CLUMP", self.clump_state),
            ("O_MEMBER_SIDE", self.member_side),
            ("O_CLUMP_TYPES", self.clump_types),
            ("O_MEMBER_OFFSET", self.member_offset),
            ("O_CLUMP_INFO", self.clump_info),
            ("O_MEMBER_BODY", self.member_body),
            ("O_WALL_POSES", self.wall_poses),
            ("O_MESH_GRID", self.mesh_grid),
            ("O_MESH_VERTS", self.mesh_verts),
            ("O_MESH_TRIS", self.mesh_tris),
            ("O_MESH_IDS", self.mesh_ids),
            ("O_MESH_CELLS", self.mesh_cells),
            ("O_MESH_ITEMS", self.mesh_items),
            ("N_MESH_TRIS", self.mesh_triangles),
            ("N_MESHES", self.meshes),
            ("O_MESH_POSES", self.mesh_poses),
            ("O_MESH_PLACED", self.mesh_placed),
            ("MOVING_MESHES", u32::from(self.moving_meshes)),
            ("MOVING_WALLS", u32::from(self.moving_walls)),
            ("ROLLING", self.rolling),
            ("LOAD_VEC4", load_vec4(self.rolling)),
            ("JKR", u32::from(self.jkr)),
            ("BREAKABLE", u32::from(self.breakable)),
            ("N_FREE", self.free),
            ("N_BODIES", self.bodies),
            ("O_EXIT_STEP", self.exit_step),
            ("O_ID", self.id_of),
            ("O_SLOT", self.slot_of),
            ("IDS", u32::from(self.ids)),
        ]
        .iter()
        .map(|(name, v)| format!("const {name}: u32 = {v}u;\n"))
        .collect()
    }
}

/// How many of each table a problem uploads (records of the granular pair table, walls,
/// compact bond kinds), which sizes the sections of `tables`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableCounts {
    /// Pair-table records (material pairs, then material-wall pairs).
    pub pair_records: u32,
    /// Walls.
    pub walls: u32,
    /// Compact bond kinds.
    pub bond_kinds: u32,
    /// Mesh walls (issue 26): vertices, triangles, grid cells and cell items.
    pub mesh: MeshCounts,
}

/// The sizes of the mesh walls' data (`gpu::contents::MeshData`, private).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshCounts {
    /// Mesh walls (an axis point and a stiffness each in `tables`).
    pub meshes: u32,
    /// Vertices (one vec4 each in `tables`).
    pub vertices: u32,
    /// Triangles (7 vec4 in `tables`, 10 words in `particle_flags`).
    pub triangles: u32,
    /// Cells of the grid (their starts, and the end, in `particle_flags`).
    pub cells: u32,
    /// Cell items (triangle ids in `particle_flags`).
    pub items: u32,
}

/// Bytes per particle of each row buffer (`bindings::ROW_BINDINGS` but the uniform);
/// 0: not used by the problem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowBytes {
    /// `neighbors`: the count, then `max_neighbors` ids.
    pub neighbors: u64,
    /// `kahan`: the 6 Kahan terms of v and Ω (f32 builds only; those of x are in
    /// `body`, where partners read them).
    pub kahan: u64,
    /// `hist`: two copies of the contact-history slots.
    pub hist: u64,
    /// `row_vec`: two copies of the wall springs, then the granular output (vec4 each).
    pub row_vec: u64,
}

impl RowBytes {
    /// The widest row, which decides how many particles a row chunk holds.
    pub fn widest(&self) -> u64 {
        self.neighbors
            .max(self.kahan)
            .max(self.hist)
            .max(self.row_vec)
    }
}

/// A problem's sizes, splits and kernel paths for one device: everything the buffers
/// and dispatches are made from, decided before any buffer exists.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Particles.
    pub n: u32,
    /// Bonds.
    pub nb: u32,
    /// Contact detection runs.
    pub contact: bool,
    /// Hertz–Mindlin contacts (history slots).
    pub hertz: bool,
    /// The granular kernel runs (Hertz law, drag or near field, but not hard contacts).
    pub granular: bool,
    /// Hard contacts (`shaders/hard.wgsl`): their buffers' sections (capacity 0
    /// without).
    pub hard: crate::gpu::hard::HardSections,
    /// Contact-history slots per particle (0 without the Hertz law).
    pub max_contacts: u32,
    /// Neighbour-list capacity per particle.
    pub max_neighbors: u32,
    /// Slots per grid bucket.
    pub bucket_capacity: u32,
    /// Grid buckets ([`bucket_count`]).
    pub n_buckets: u32,
    /// Bonds per bond chunk (the last may hold fewer).
    pub bond_chunk_len: usize,
    /// Bonds of each bond chunk.
    pub bond_chunks: Vec<u32>,
    /// Reduction partials: one per workgroup over particles and over each bond chunk.
    pub n_partials: u32,
    /// Wall springs per particle in `row_vec` (every wall in granular scenes).
    pub wall_stride: u64,
    /// The force evaluations record wall loads in `row_vec` (Hertz law with walls).
    pub wall_loads: bool,
    /// Planes and meshes loaded per particle (two vec4 each in `row_vec`), when
    /// `wall_loads`.
    pub load_stride: u64,
    /// The EPSD rolling springs are kept (issue 50): `hist` and `row_vec` rows hold a
    /// second set of springs after the first.
    pub roll_history: bool,
    /// Mesh slots per particle in `hist` (0 without meshes).
    pub mesh_slots: u32,
    /// Bytes per particle of each row buffer.
    pub rows: RowBytes,
    /// Row chunks: (first particle, particles), each fitting one storage binding in
    /// every row buffer.
    pub row_chunks: Vec<(u32, u32)>,
    /// The kernel paths.
    pub paths: Paths,
    /// What the packed buffers hold.
    pub needs: SectionNeeds,
    /// Where it is.
    pub sections: Sections,
}

impl Plan {
    /// Plans `model` in reals `R` for storage bindings of at most `max_bind` bytes, on a
    /// `software` adapter or not (the default paths differ), with the table sizes
    /// `tables`, and with storage not in id order when `ids` holds the id count (issue
    /// 44: the id tables are stored; more ids than particles when storage is
    /// compacted). Refuses a problem whose section offsets overflow 32-bit indices.
    pub fn new<R: Real>(
        model: &Model,
        options: &GpuOptions,
        max_bind: u64,
        software: bool,
        tables: TableCounts,
        ids: Option<u32>,
    ) -> Result<Self> {
        let p = &model.particles;
        let n = p.len() as u32;
        let id_count = ids.unwrap_or(n).max(n);
        let nb = model.bonds.len() as u32;
        let contact = model.contact.is_some();
        let hertz = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
        // Under hard contacts drag acts in the free velocities (shaders/hard.wgsl).
        let granular = !hard && (hertz || model.drag.is_some() || model.near_field.is_some());
        let max_contacts = if hertz {
            model.contact.map_or(0, |c| c.max_contacts)
        } else {
            0
        };
        let max_neighbors = options
            .max_neighbors
            .unwrap_or(DEFAULT_MAX_NEIGHBORS)
            .min(MAX_NEIGHBORS);
        let bucket_capacity = options.bucket_capacity.unwrap_or(16);
        let n_buckets = bucket_count(n, bucket_capacity, max_bind);
        let rs = std::mem::size_of::<R>() as u64;
        // Bond chunks: contiguous id ranges whose buffers each fit one storage binding.
        // Breakable bonds keep their strengths and break records in bond_out too.
        let out_stride = BOND_OUT_STRIDE
            + if model.breakable() {
                BOND_BREAK_STRIDE
            } else {
                0
            };
        let per_bond =
            (std::mem::size_of::<BondRecord<R>>() as u64).max(u64::from(out_stride) * rs);
        let bond_chunk_len = options
            .max_chunk_bonds
            .map(u64::from)
            .unwrap_or(max_bind / per_bond)
            .max(1) as usize;
        let bond_chunks: Vec<u32> = model
            .bonds
            .chunks(bond_chunk_len)
            .map(|c| c.len() as u32)
            .collect();
        // The particles' partial sums run over ids (leaf k is id k).
        let n_partials = groups(id_count) + bond_chunks.iter().map(|&c| groups(c)).sum::<u32>();
        let paths = Paths::choose(model, options, bond_chunks.len(), software);
        let needs = SectionNeeds {
            n,
            pendulum: p.flags.iter().any(|f| f & FLAG_PENDULUM != 0),
            contact,
            // Only fused steps that do not predict in place write pos_next, and only
            // fused steps that compute bond terms inline write rot_next.
            pos_next: paths.fuse && !paths.direct,
            pos_kahan: rs == 4,
            rot_next: paths.inline,
            motion: paths.merged && hertz,
            material: granular || hard,
            pair_records: tables.pair_records,
            walls: tables.walls,
            bond_kinds: tables.bond_kinds,
            bodies: model.clumps.len() as u32,
            free: n - model
                .clumps
                .iter()
                .map(|c| model.clump_types[c.kind as usize].spheres.len() as u32)
                .sum::<u32>(),
            clump_types: if model.clumps.is_empty() {
                0
            } else {
                model.clump_types.len() as u32
            },
            moving_walls: model.walls.iter().any(|w| !w.motion.is_static()),
            moving_meshes: model.meshes.iter().any(|m| !m.motion.is_static()),
            rolling: match model.rolling() {
                None => 0,
                Some(crate::model::RollingModel::Cdt) => 1,
                Some(crate::model::RollingModel::Epsd) => 2,
            },
            jkr: model.jkr(),
            breakable: model.breakable(),
            removal: model.domain.is_some_and(|d| d.remove),
            mesh: tables.mesh,
            ids: ids.is_some(),
            id_count,
        };
        let sections = Sections::new(&needs)
            .map_err(|e| Error::DeviceTooSmall(format!("{e} ({n} particles, {nb} bonds)")))?;
        // Wall springs per particle and wall (granular_sum stores one for every wall,
        // Hertz or not).
        let wall_stride = if granular {
            model.walls.len().max(1) as u64
        } else {
            0
        };
        // Two vec4 per particle and plane or mesh for the loads (Hertz law with walls).
        let load_stride = if hertz && (!model.walls.is_empty() || !model.meshes.is_empty()) {
            (model.walls.len() + model.meshes.len()) as u64
        } else {
            0
        };
        // Feature-keyed mesh slots after the particle slots (Hertz law with meshes).
        let mesh_slots = if hertz && !model.meshes.is_empty() {
            crate::physics::mesh::MESH_SLOTS as u64
        } else {
            0
        };
        // EPSD rolling springs: a second set of slots (pairs, mesh) and wall springs.
        let roll_history = hertz && needs.rolling == 2;
        let roll_copies = if roll_history { 2 } else { 1 };
        let rows = RowBytes {
            neighbors: if contact {
                4 * (u64::from(max_neighbors) + 1)
            } else {
                0
            },
            kahan: if rs == 4 { 24 } else { 0 },
            hist: roll_copies
                * 2
                * (u64::from(max_contacts) + mesh_slots)
                * hist_slot_bytes(rs as usize) as u64,
            row_vec: (2 * wall_stride
                + if granular { 3 } else { 0 }
                + load_vec4(needs.rolling) as u64 * load_stride
                + if roll_history { 2 * wall_stride } else { 0 })
                * 4
                * rs,
        };
        let row_chunks = row_chunks(n, rows.widest(), max_bind, options.max_chunk_particles);
        let hard = if hard {
            let max_contacts = model.contact.map_or(0, |c| c.max_contacts);
            // Mesh features add a contact per particle (a bead in a floor's corner
            // touches several, most touch none).
            let capacity = crate::gpu::hard::HardSections::capacity(n, max_contacts)
                .saturating_add(if model.meshes.is_empty() { 0 } else { n });
            crate::gpu::hard::HardSections::new(n, capacity)
        } else {
            crate::gpu::hard::HardSections::default()
        };
        Ok(Self {
            hard,
            n,
            nb,
            contact,
            hertz,
            granular,
            max_contacts,
            max_neighbors,
            bucket_capacity,
            n_buckets,
            bond_chunk_len,
            bond_chunks,
            n_partials,
            wall_stride,
            wall_loads: load_stride > 0,
            load_stride,
            roll_history,
            mesh_slots: mesh_slots as u32,
            rows,
            row_chunks,
            paths,
            needs,
            sections,
        })
    }
}

impl Plan {
    /// The sections of each row buffer (`bindings::ROW_BINDINGS` but the uniform, in
    /// that order) for reals of `real_bytes` bytes: words per particle, in the order a
    /// row chunk holds them, each section as many records long as the chunk has
    /// particles (`contents::row_uniforms` places them). They add up to [`RowBytes`].
    /// A sort during a run moves these records (issue 44, `src/gpu/sort.rs`).
    pub fn row_sections(&self, real_bytes: u64) -> [Vec<u32>; 4] {
        let slot = super::layout::hist_slot_bytes(real_bytes as usize) as u64 / 4;
        let (k, ms) = (u64::from(self.max_contacts), u64::from(self.mesh_slots));
        // Words per vec4 of reals.
        let vec4 = real_bytes;
        let ws = self.wall_stride;
        let loads = if self.wall_loads {
            u64::from(load_vec4(self.needs.rolling)) * self.load_stride
        } else {
            0
        };
        let granular_out = if self.granular { 3 } else { 0 };
        let keep = |v: Vec<u64>| -> Vec<u32> {
            v.into_iter().filter(|&w| w > 0).map(|w| w as u32).collect()
        };
        let mut hist = vec![k, k, ms, ms];
        let mut row_vec = vec![ws, ws, granular_out, loads];
        if self.roll_history {
            hist.extend([k, k, ms, ms]);
            row_vec.extend([ws, ws]);
        }
        let sections = [
            keep(vec![self.rows.neighbors / 4]),
            keep(vec![self.rows.kahan / 4]),
            keep(hist.into_iter().map(|s| s * slot).collect()),
            keep(row_vec.into_iter().map(|s| s * vec4).collect()),
        ];
        debug_assert_eq!(
            sections
                .iter()
                .map(|s| 4 * s.iter().map(|&w| u64::from(w)).sum::<u64>())
                .collect::<Vec<_>>(),
            [
                self.rows.neighbors,
                self.rows.kahan,
                self.rows.hist,
                self.rows.row_vec
            ],
            "row sections against the row bytes"
        );
        sections
    }
}

/// Vec4 per wall-load record in `row_vec` (`LOAD_VEC4`): force and contact point, and
/// with rolling resistance (`rolling` > 0) the rolling torques' reaction.
pub fn load_vec4(rolling: u32) -> u32 {
    if rolling > 0 {
        3
    } else {
        2
    }
}

/// Grid buckets for `n` particles: about one per particle (a power of two, for the hash
/// mask), but no more than one binding of `bucket_items` (`max_bind` bytes) holds: the
/// grid is read for every partner, so it cannot be split by rows. Fewer buckets only
/// hash more cells to one bucket; the sorted lists are the same unless a bucket
/// overflows, which stops the run with an error naming `bucket_capacity`.
pub fn bucket_count(n: u32, bucket_capacity: u32, max_bind: u64) -> u32 {
    let fit = (max_bind / (4 * u64::from(bucket_capacity.max(1)))).max(1);
    (n as u64)
        .next_power_of_two()
        .max(64)
        .min(1 << (63 - fit.leading_zeros()))
        .max(u64::from(shaders::MIN_BUCKETS)) as u32
}

/// Row chunks of `n` particles whose rows (`widest_row` bytes each at most) fit one
/// storage binding of `max_bind` bytes, at most `max_particles` each (a test hook):
/// contiguous (first, count) ranges; one empty-free chunk for `n = 0`.
pub fn row_chunks(
    n: u32,
    widest_row: u64,
    max_bind: u64,
    max_particles: Option<u32>,
) -> Vec<(u32, u32)> {
    let rows_per_chunk = max_particles
        .map_or(u64::MAX, u64::from)
        .min(max_bind.checked_div(widest_row).unwrap_or(u64::MAX))
        .clamp(1, u64::from(n.max(1))) as u32;
    (0..n.max(1))
        .step_by(rows_per_chunk as usize)
        .map(|first| (first, rows_per_chunk.min(n - first)))
        .collect()
}

/// The initial `grid_args` (binding 18): the number K of grid dispatches, then K
/// indirect-dispatch triples (x, 1, 1), then the K workgroup counts of a rebuild:
/// `grid_clear` over the buckets, `grid_insert` over the particles, `neighbor_build`
/// over each row chunk. `grid_gate` copies each count into its triple when the list is
/// stale and writes 0 otherwise.
pub fn grid_args(n_buckets: u32, n: u32, row_chunks: &[(u32, u32)]) -> Vec<u32> {
    let full: Vec<u32> = [groups(n_buckets), groups(n)]
        .into_iter()
        .chain(row_chunks.iter().map(|&(_, count)| groups(count)))
        .collect();
    let mut args = vec![full.len() as u32];
    for _ in &full {
        args.extend([0, 1, 1]);
    }
    args.extend(full);
    args
}

/// Workgroups of [`WORKGROUP_SIZE`] invocations covering `n` items (at least one).
pub fn groups(n: u32) -> u32 {
    n.div_ceil(WORKGROUP_SIZE).max(1)
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
        // 4 bodies of 8 spheres (2 each) in all.
        assert_eq!(
            (s.vel, s.omega, s.force, s.motion_v, s.pos_kahan),
            (10, 20, 30, [40, 50], 60)
        );
        assert_eq!(
            (s.clump_state, s.member_side, s.body_len),
            (70, 70 + 40, 70 + 40 + 24)
        );
        assert_eq!((s.clump_info, s.member_body), (20, 32));
        assert_eq!(
            (s.moment, s.pendulum, s.ref_pos, s.energy, s.skin, s.pos_next, s.rot_next),
            (30, 60, 90, 120, 150, 153, 183)
        );
        // Then the placed meshes: 4 reals per vec4 of 4 vertices and 2 triangles.
        assert_eq!(
            (s.pos_kahan_next, s.mesh_placed, s.vecs_len),
            (213, 243, 315)
        );
        // Then per triangle 10 words, the 3 cells' starts and the end, 5 items, and
        // the exit steps.
        assert_eq!((s.material, s.mesh_ids), (10, 40));
        assert_eq!((s.mesh_cells, s.mesh_items, s.exit_step), (60, 64, 69));
        // Then the id of each slot and the slot of each id.
        assert_eq!((s.id_of, s.slot_of), (79, 89));
        assert_eq!(s.flags_len, 99);
        assert_eq!((s.walls, s.kinds, s.clump_types), (12, 16, 19));
        // Then 64 pose slots of 5 vec4 for each of the 2 walls.
        assert_eq!((s.member_offset, s.wall_poses), (27, 35));
        // Then the mesh grid (2 vec4, and an axis and a stiffness per mesh), vertices,
        // triangles (7 vec4) and 64 pose slots of 8 vec4 for each of the 2 meshes.
        let grid = 35 + 64 * 5 * 2;
        assert_eq!(
            (s.mesh_grid, s.mesh_verts, s.mesh_tris, s.mesh_poses),
            (grid, grid + 6, grid + 10, grid + 24)
        );
        assert_eq!(s.tables_len, grid + 24 + 64 * 8 * 2);
        assert_eq!((s.free, s.bodies), (2, 4));
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
        assert_eq!((bare.free, bare.bodies), (10, 0));
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
        assert!(c.contains("const N_BODIES: u32 = 4u;\n"));
        assert!(c.contains("const MOVING_WALLS: u32 = 1u;\n"));
        assert!(c.contains("const MOVING_MESHES: u32 = 1u;\n"));
        assert!(c.contains("const O_EXIT_STEP: u32 = "));
        assert!(c.contains("const IDS: u32 = 1u;\n"));
        assert!(c.contains("const ROLLING: u32 = 2u;\n"));
        assert!(c.contains("const LOAD_VEC4: u32 = 3u;\n"));
        assert!(c.contains("const JKR: u32 = 1u;\n"));
        assert!(c.contains("const BREAKABLE: u32 = 1u;\n"));
        assert_eq!(c.lines().count(), 44);
    }

    /// Buckets: a power of two near n, at least 64 and MIN_BUCKETS, and no more than
    /// one binding of bucket items holds.
    #[test]
    fn buckets_follow_the_particles_within_one_binding() {
        let floor = 64u32.max(shaders::MIN_BUCKETS);
        assert_eq!(bucket_count(10, 16, 1 << 27), floor);
        assert_eq!(bucket_count(100_000, 16, 1 << 27), 131_072);
        // 128 MiB of 16-slot buckets hold 2^21 buckets.
        assert_eq!(bucket_count(5_000_000, 16, 1 << 27), 1 << 21);
        assert_eq!(bucket_count(5_000_000, 16, 1 << 20), floor.max(1 << 14));
    }

    /// Row chunks cover every particle once, in order, each within one binding.
    #[test]
    fn row_chunks_tile_the_particles() {
        assert_eq!(row_chunks(10, 100, 1 << 27, None), vec![(0, 10)]);
        assert_eq!(row_chunks(10, 100, 400, None), vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(row_chunks(10, 0, 400, Some(3)).len(), 4);
        // A row wider than a binding still gets one particle per chunk (the fit check
        // refuses it by name later).
        assert_eq!(row_chunks(2, 1000, 400, None), vec![(0, 1), (1, 1)]);
        assert_eq!(row_chunks(0, 100, 400, None), vec![(0, 0)]);
    }

    /// grid_args: K, K zeroed triples, then the K rebuild counts (buckets, particles,
    /// each row chunk).
    #[test]
    fn grid_args_hold_a_count_per_grid_dispatch() {
        let a = grid_args(1024, 300, &[(0, 200), (200, 100)]);
        assert_eq!(a[0], 4);
        assert_eq!(&a[1..13], &[0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1]);
        assert_eq!(
            &a[13..],
            &[groups(1024), groups(300), groups(200), groups(100)]
        );
        assert_eq!(groups(0), 1);
        assert_eq!(groups(WORKGROUP_SIZE + 1), 2);
    }
}
