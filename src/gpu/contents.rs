//! The initial bytes of every GPU buffer, made from the model and its [`Plan`] before any
//! device exists: the parameters, the packed state sections, the tables, and the bond
//! and row chunks ([`Contents`]); and the check that each fits one storage binding.

use glam::DVec3;

use super::bind;
use super::bindings::{CHUNK_BINDINGS, ROW_BINDINGS};
use super::contract;
use super::contract::{
    BOND_BREAK_INV, BOND_BREAK_STRIDE, BOND_OUT_STRIDE, INTEGRATOR_SYMPLECTIC_EULER,
    INTEGRATOR_VARIATIONAL, INTEGRATOR_VARIATIONAL_EXACT, PARAM_COMPACT_BONDS, PARAM_CONTACT,
    PARAM_DOMAIN, PARAM_DOMAIN_REMOVE, PARAM_DRAG, PARAM_FIRST, PARAM_HERTZ, PARAM_INLINE_BONDS,
    PARAM_MERGED, PARAM_NEAR, PARAM_POS_DIRECT, PARAM_PRINTED_SHEAR, Q_COUNT,
};
use super::layout::{
    BondRecord, Chunk, CompactBonds, HistRecord, PairRecord, Params, Real, RowChunk, WallRecord,
};
use super::plan::{grid_args, groups, Plan, TableCounts};
use super::{STATUS_FIRST_INDEX, STATUS_REBUILD, STATUS_STEP, STATUS_WORDS};
use crate::error::{Error, Result};
use crate::integrators::IntegratorKind;
use crate::model::{Bond, ContactLaw, Incidence, Model, ShearForm};

/// One buffer's initial contents: its binding, label and bytes.
pub(super) type Upload<L> = (u32, L, Vec<u8>);

/// The tables of a problem in kernel precision: the granular pair table (material pairs,
/// then material-wall pairs), the walls, the compact bond kinds (one vec4 each:
/// K^m, K^a, K^s, 0), and each particle's material (granular scenes only).
pub(super) struct Tables<'a, R: Real> {
    pub pair_records: Vec<PairRecord<R>>,
    pub walls: Vec<WallRecord<R>>,
    pub kinds: Vec<R>,
    pub material: &'a [u32],
    pub mesh: MeshData,
}

/// The mesh walls (issue 26) as the shaders read them (common/mesh.wgsl's accessors in
/// common/layout.wgsl), in device coordinates, placed at rest: reals (the grid, the
/// vertices, per triangle its corners, plane and edge lines, four per vec4) and words
/// (per triangle its vertex ids, owner keys and mesh; the grid's cell starts and
/// items).
#[derive(Clone, Debug, Default)]
pub(super) struct MeshData {
    pub reals: Vec<f64>,
    pub words: Vec<u32>,
    pub counts: super::plan::MeshCounts,
}

impl MeshData {
    fn new(model: &Model) -> Self {
        if model.meshes.is_empty() {
            return Self::default();
        }
        let surfaces = crate::physics::mesh::MeshSurfaces::new(&model.meshes);
        // A sphere's contacts reach its radius: the largest is the grid's reach. Hard
        // contacts look a margin further, at most the skin, which grows with the
        // margin: the grid keeps room for it to grow (mesh_grid_headroom).
        let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
        let reach = model.particles.max_radius()
            + if hard {
                super::hard::mesh_grid_headroom(model)
            } else {
                0.0
            };
        let cells = crate::neighbor::MeshCells::new(&surfaces, reach);
        let nt = surfaces.triangles.len() as u32;
        let mut reals = Vec::new();
        reals.extend_from_slice(&cells.origin.extend(cells.inv).to_array());
        reals.extend(cells.dims.map(f64::from));
        reals.push(0.0);
        // Each mesh's axis point and (w) the end of its vertices (for mesh_place), then
        // its binder stiffness (`mesh_info`).
        for (m, pose) in surfaces.poses.iter().enumerate() {
            let end = f64::from(surfaces.vertex_end(m));
            reals.extend_from_slice(&pose.axis().extend(end).to_array());
            reals.extend_from_slice(&[model.meshes[m].stiffness, 0.0, 0.0, 0.0]);
        }
        for v in &surfaces.vertices {
            reals.extend_from_slice(&v.extend(0.0).to_array());
        }
        let mut words = Vec::new();
        for t in 0..nt {
            for c in surfaces.corners(t) {
                reals.extend_from_slice(&c.extend(0.0).to_array());
            }
            let (n, d, edges) = surfaces.plane(t);
            reals.extend_from_slice(&n.extend(d).to_array());
            for (m, o) in edges {
                reals.extend_from_slice(&m.extend(o).to_array());
            }
            words.extend_from_slice(&surfaces.triangles[t as usize]);
            words.extend_from_slice(&surfaces.keys[t as usize]);
            words.push(surfaces.mesh_of[t as usize]);
        }
        words.extend_from_slice(&cells.start);
        words.extend_from_slice(&cells.items);
        Self {
            reals,
            words,
            counts: super::plan::MeshCounts {
                meshes: model.meshes.len() as u32,
                vertices: surfaces.vertices.len() as u32,
                triangles: nt,
                cells: cells.start.len() as u32 - 1,
                items: cells.items.len() as u32,
            },
        }
    }
}

impl<'a, R: Real> Tables<'a, R> {
    /// The tables of `model`, with the kinds of `compact` bonds.
    pub(super) fn new(model: &'a Model, compact: Option<&CompactBonds<R>>) -> Self {
        let hertz = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
        let granular = hertz || model.drag.is_some() || model.near_field.is_some();
        let (pair_records, material): (Vec<PairRecord<R>>, &[u32]) = if granular || hard {
            // Hard contacts read μ_s alone, of the friction tables the CPU uses.
            let t = if hard {
                crate::physics::granular::PairTables::friction(model)
            } else {
                crate::physics::granular::PairTables::new(model)
            };
            (
                // Material pairs, then each wall's row, then each mesh's (issue 26).
                t.pairs
                    .iter()
                    .chain(t.walls.iter())
                    .chain(t.meshes.iter())
                    .map(PairRecord::from)
                    .collect(),
                &model.particles.material,
            )
        } else {
            (Vec::new(), &[])
        };
        let walls = model.walls.iter().map(WallRecord::from).collect();
        let kinds = compact
            .map(|c| {
                c.kinds
                    .chunks_exact(3)
                    .flat_map(|k| [k[0], k[1], k[2], R::default()])
                    .collect()
            })
            .unwrap_or_default();
        Self {
            pair_records,
            walls,
            kinds,
            material,
            mesh: MeshData::new(model),
        }
    }

    /// The table sizes the sections are planned for.
    pub(super) fn counts(&self) -> TableCounts {
        TableCounts {
            pair_records: self.pair_records.len() as u32,
            walls: self.walls.len() as u32,
            bond_kinds: (self.kinds.len() / 4) as u32,
            mesh: self.mesh.counts,
        }
    }
}

/// Every buffer's initial contents.
pub(super) struct Contents<R: Real> {
    /// The parameters of the set-up evaluation (`PARAM_FIRST` set).
    pub params: Params<R>,
    /// The buffers bound whole, indexed by binding (placeholders, empty, for the
    /// per-chunk bindings).
    pub shared: Vec<Upload<&'static str>>,
    /// Per bond chunk: bonds, bond_out, incidence and the chunk uniform
    /// ([`CHUNK_BINDINGS`] order).
    pub bond_chunks: Vec<[Upload<String>; 4]>,
    /// Per row chunk: its rows of every row buffer ([`ROW_BINDINGS`] but the uniform).
    pub row_chunks: Vec<Vec<Upload<String>>>,
    /// Per row chunk and step parity: the `RowChunk` uniform.
    pub row_uniforms: Vec<[RowChunk; 2]>,
    /// Per colour of the colored hard-contact solver, its `hard_color` uniform (one
    /// placeholder without hard contacts).
    pub hard_colors: Vec<super::layout::HardColor>,
}

impl<R: Real> Contents<R> {
    /// The contents of `model` as `plan` lays it out, at step `start` with the Kahan
    /// terms `kahan` (used in `f32` when it has 9 per particle; otherwise those of v
    /// and Ω are zero and those of x the rounding of the positions, [`position_kahan`]).
    #[expect(
        clippy::too_many_arguments,
        reason = "everything a buffer's first bytes depend on: model, plan, tables, bonds, integrator, dt, step, Kahan terms, layout"
    )]
    pub(super) fn new(
        model: &Model,
        plan: &Plan,
        tables: &Tables<R>,
        compact: Option<&CompactBonds<R>>,
        integrator: IntegratorKind,
        dt: f64,
        start: u32,
        kahan: &[f32],
        layout: &crate::model::Layout,
    ) -> Self {
        let p = &model.particles;
        let n = plan.n;
        let rs = std::mem::size_of::<R>() as u64;
        let sections = &plan.sections;
        let params = params::<R>(model, plan, compact.is_some(), integrator, dt);
        // The status words, then a detail word per particle (STATUS_DETAIL), then with
        // breakable bonds a word per bond (its break step, u32::MAX while it holds).
        let bond_words = if model.breakable() {
            model.bonds.len()
        } else {
            0
        };
        let mut status = vec![0u32; STATUS_WORDS + n as usize + bond_words];
        status[STATUS_STEP] = start;
        status[STATUS_REBUILD] = u32::from(plan.contact);
        for w in &mut status[STATUS_FIRST_INDEX..] {
            *w = u32::MAX;
        }
        let zeros = |bytes: u64| -> Vec<u8> { vec![0u8; bytes as usize] };
        let bytes_of = |v: &[R]| -> Vec<u8> { bytemuck::cast_slice(v).to_vec() };
        // The packed buffers, section by section in the order of `Sections`.
        let n3 = 3 * n as u64 * rs;
        let mut body = [
            bytes_of(&flat4::<R>(&p.position, &p.radius)),
            bytes_of(&flat4::<R>(&p.velocity, &p.mass)),
            bytes_of(&flat4::<R>(&p.angular_velocity, &p.inertia)),
            zeros(4 * n as u64 * rs),
        ]
        .concat();
        if plan.needs.motion {
            // Motion records' end-of-step velocity and mass (vec4), the mass set here
            // for good, in both copies.
            let mv = bytes_of(&flat4::<R>(&vec![DVec3::ZERO; p.len()], &p.mass));
            body.extend_from_slice(&mv);
            body.extend_from_slice(&mv);
        }
        if plan.needs.pos_kahan {
            // The terms with the flags in w (`set_flags` in layout.wgsl).
            let flags: Vec<f64> = p.flags.iter().map(|&f| f64::from(f)).collect();
            body.extend(bytes_of(&flat4::<R>(
                &position_kahan::<R>(&p.position, kahan),
                &flags,
            )));
        }
        let clumps = ClumpContents::<R>::new(model, plan);
        body.extend(bytes_of(&clumps.state));
        // The spheres' contact sides, written by clump_pose before they are read.
        body.extend(zeros(3 * 4 * u64::from(n - sections.free) * rs));
        let mut vecs = [bytes_of(&flat::<R>(&p.rotation)), zeros(n3)].concat();
        if plan.needs.pendulum {
            vecs.extend(bytes_of(&flat::<R>(&p.pendulum_offset)));
        }
        if plan.contact {
            vecs.extend(zeros(n3));
        }
        vecs.extend(zeros(n3));
        if plan.contact {
            vecs.extend(zeros(3 * rs));
        }
        if plan.needs.pos_next {
            vecs.extend(zeros(n3));
        }
        if plan.needs.rot_next {
            vecs.extend(zeros(n3));
        }
        if plan.needs.pos_kahan && plan.needs.pos_next {
            vecs.extend(zeros(n3));
        }
        // The placed meshes, written by mesh_place at every step before they are read.
        if sections.moving_meshes {
            let mc = tables.mesh.counts;
            vecs.extend(zeros(
                4 * (u64::from(mc.vertices) + 7 * u64::from(mc.triangles)) * rs,
            ));
        }
        debug_assert_eq!(vecs.len() as u64, u64::from(sections.vecs_len) * rs);
        debug_assert_eq!(body.len() as u64, u64::from(sections.body_len) * 4 * rs);
        let particle_flags: Vec<u8> = [
            bytemuck::cast_slice::<u32, u8>(&p.flags),
            bytemuck::cast_slice(tables.material),
            bytemuck::cast_slice(&clumps.info),
            bytemuck::cast_slice(&clumps.member_body),
            bytemuck::cast_slice(&tables.mesh.words),
            // The exit steps (scenes with removal), set by integrate_predict; a restored
            // run's are written after the upload (GpuBackend::restore_exit_steps).
            &vec![
                0u8;
                if plan.needs.removal {
                    4 * n as usize
                } else {
                    0
                }
            ][..],
            // The id of each slot, then the slot of each id (storage not in id order).
            bytemuck::cast_slice(&id_tables(layout, plan)),
        ]
        .concat();
        debug_assert_eq!(
            particle_flags.len() as u64,
            u64::from(sections.flags_len) * 4
        );
        let table_bytes: Vec<u8> = [
            bytemuck::cast_slice::<PairRecord<R>, u8>(&tables.pair_records),
            bytemuck::cast_slice(&tables.walls),
            bytemuck::cast_slice(&tables.kinds),
            bytemuck::cast_slice(&clumps.types),
            bytemuck::cast_slice(&clumps.member_offset),
            // The moving walls' poses, written before each batch (gpu/walls.rs).
            &vec![
                0u8;
                (super::contract::POSE_SLOTS * super::contract::POSE_VEC4) as usize
                    * model.walls.len()
                    * 4
                    * rs as usize
                    * usize::from(sections.moving_walls)
            ],
            bytemuck::cast_slice(
                &tables
                    .mesh
                    .reals
                    .iter()
                    .map(|&x| R::from_f64(x))
                    .collect::<Vec<R>>(),
            ),
            // The meshes' poses, written before each batch (gpu/walls.rs).
            &vec![
                0u8;
                (super::contract::POSE_SLOTS * super::contract::MESH_POSE_VEC4) as usize
                    * model.meshes.len()
                    * 4
                    * rs as usize
                    * usize::from(sections.moving_meshes)
            ],
        ]
        .concat();
        debug_assert_eq!(
            table_bytes.len() as u64,
            u64::from(sections.tables_len) * 4 * rs
        );
        let (n_buckets, bucket_capacity) = (plan.n_buckets as u64, plan.bucket_capacity as u64);
        let hard_params = match model.contact.map(|c| c.law) {
            Some(ContactLaw::Hard(h)) => {
                Some(super::hard::hard_params::<R>(&h, n, dt, plan.hard.capacity))
            }
            _ => None,
        };
        let [hard_p, hard_contacts, hard_words, hard_atomic, hard_args] =
            super::hard::initial_bytes(hard_params, &plan.hard);
        let hard_colors = if hard_params.is_some() {
            (0..super::contract::HARD_MAX_COLORS)
                .map(|color| super::layout::HardColor { color, pad: [0; 3] })
                .collect()
        } else {
            vec![super::layout::HardColor::default()]
        };
        let shared: Vec<Upload<&'static str>> = vec![
            (bind::PARAMS, "params", bytemuck::bytes_of(&params).to_vec()),
            (
                bind::STATUS,
                "status",
                bytemuck::cast_slice(&status).to_vec(),
            ),
            (bind::BODY, "body", body),
            (bind::VECS, "vecs", vecs),
            (bind::PARTICLE_FLAGS, "particle_flags", particle_flags),
            (bind::TABLES, "tables", table_bytes),
            (
                bind::MOTION,
                "motion",
                zeros(u64::from(sections.motion_len) * rs),
            ),
            // Bindings 7-10 are bound per bond chunk (below); placeholders keep the
            // table indexed by binding.
            (bind::BONDS, "bonds (per chunk)", Vec::new()),
            (bind::BOND_OUT, "bond_out (per chunk)", Vec::new()),
            (bind::INCIDENCE, "incidence (per chunk)", Vec::new()),
            (bind::CHUNK, "chunk (per chunk)", Vec::new()),
            // Bindings 11-15 are bound per row chunk (below).
            (bind::NEIGHBORS, "neighbors (per row chunk)", Vec::new()),
            (bind::KAHAN, "kahan (per row chunk)", Vec::new()),
            (bind::HIST, "hist (per row chunk)", Vec::new()),
            (bind::ROW_VEC, "row_vec (per row chunk)", Vec::new()),
            (bind::ROWS, "rows (per row chunk)", Vec::new()),
            (
                bind::BUCKET_COUNT,
                "bucket_count",
                zeros(if plan.contact { 4 * n_buckets } else { 0 }),
            ),
            (
                bind::BUCKET_ITEMS,
                "bucket_items",
                zeros(if plan.contact {
                    4 * n_buckets * bucket_capacity
                } else {
                    0
                }),
            ),
            (
                bind::GRID_ARGS,
                "grid_args",
                bytemuck::cast_slice(&grid_args(plan.n_buckets, n, &plan.row_chunks)).to_vec(),
            ),
            (
                bind::PARTIALS,
                "partials",
                zeros(u64::from(Q_COUNT) * plan.n_partials as u64 * rs),
            ),
            (bind::RESULT, "result", zeros(u64::from(Q_COUNT) * rs)),
            (bind::HARD_PARAMS, "hard", hard_p),
            (bind::CONTACTS, "contacts", hard_contacts),
            (bind::HARD_WORDS, "hard_words", hard_words),
            (bind::HARD_ATOMIC, "hard_atomic", hard_atomic),
            (bind::HARD_ARGS, "hard_args", hard_args),
            (bind::HARD_COLOR, "hard_color (per colour)", Vec::new()),
        ];
        debug_assert!(shared.iter().enumerate().all(|(i, c)| c.0 as usize == i));
        debug_assert_eq!(shared.len(), bind::COUNT);
        Self {
            params,
            shared,
            bond_chunks: bond_chunks(model, plan, compact),
            row_chunks: row_chunks::<R>(plan, kahan),
            row_uniforms: row_uniforms(plan),
            hard_colors,
        }
    }

    /// Checks that every buffer fits one storage binding of `max_bind` bytes on
    /// `adapter`; returns the total bytes of all buffers.
    pub(super) fn check_fit(&self, plan: &Plan, max_bind: u64, adapter: &str) -> Result<u64> {
        let chunked = || {
            self.bond_chunks
                .iter()
                .flatten()
                .chain(self.row_chunks.iter().flatten())
                .map(|(b, l, d)| (*b, l.as_str(), d))
        };
        let all = || {
            self.shared
                .iter()
                .map(|(b, l, d)| (*b, *l, d))
                .chain(chunked())
        };
        let total: u64 = all().map(|(_, _, d)| d.len() as u64).sum();
        for (b, label, data) in all() {
            let size = data.len() as u64;
            if size > max_bind {
                // Row and bond chunks are sized to fit, so this is a whole array that
                // kernels index by any partner, or a single row or bond too large.
                let why = if ROW_BINDINGS.contains(&b) {
                    "one particle's row alone exceeds it"
                } else if CHUNK_BINDINGS.contains(&b) {
                    "one bond alone exceeds it"
                } else {
                    "kernels read this array for any particle's partners, so it is not split into chunks"
                };
                return Err(Error::DeviceTooSmall(format!(
                    "buffer '{label}' needs {size} bytes ({} particles, {} bonds) but adapter {adapter} binds at most {max_bind} bytes per storage buffer ({why}); total device memory needed ≈ {:.1} MiB",
                    plan.n,
                    plan.nb,
                    total as f64 / 1048576.0
                )));
            }
        }
        Ok(total)
    }
}

/// The parameters uniform of `model` as planned (the set-up evaluation's: `PARAM_FIRST`).
/// The `O_ID` and `O_SLOT` sections: the id of each slot, then the slot of each id
/// (none when storage is in id order, `Plan::needs.ids` off).
fn id_tables(layout: &crate::model::Layout, plan: &Plan) -> Vec<u32> {
    id_table_words(
        layout,
        plan.n as usize,
        plan.needs.ids,
        plan.needs.id_count as usize,
    )
}

/// The `O_ID` and `O_SLOT` sections of `layout` over `n` slots and `id_count` ids
/// (empty unless `ids`, the tables being stored).
pub(super) fn id_table_words(
    layout: &crate::model::Layout,
    n: usize,
    ids: bool,
    id_count: usize,
) -> Vec<u32> {
    if !ids {
        return Vec::new();
    }
    let by_slot = layout.ids(n);
    // Compacted storage: more ids than slots, NOT_STORED for those not stored.
    let slots = (0..id_count.max(n)).map(|i| {
        layout
            .try_slot(i, n)
            .map_or(crate::model::layout::NOT_STORED, |s| s as u32)
    });
    by_slot.iter().copied().chain(slots).collect()
}

fn params<R: Real>(
    model: &Model,
    plan: &Plan,
    compact: bool,
    integrator: IntegratorKind,
    dt: f64,
) -> Params<R> {
    let drag = model.drag.unwrap_or_default();
    let near = model
        .near_field
        .unwrap_or(crate::physics::granular::NearField {
            kappa_attractive: 0.0,
            lambda_attractive: 0.0,
            kappa_repulsive: 0.0,
            lambda_repulsive: 0.0,
            cutoff: 0.0,
        });
    let domain = model.domain.unwrap_or(crate::model::Domain {
        min: DVec3::ZERO,
        max: DVec3::ZERO,
        remove: false,
    });
    let r_max = model.particles.max_radius();
    let (k_pp, skin) = match model.contact {
        Some(c) => {
            let k_pp = match c.law {
                ContactLaw::Binder { k_pp } => k_pp,
                // The GPU backend refuses hard contacts before it gets here.
                ContactLaw::Hertz | ContactLaw::Hard(_) => 0.0,
            };
            (k_pp, c.skin)
        }
        None => (0.0, 0.0),
    };
    // Cells reach every pair the list holds: contacts, and near-field partners.
    let cell = (2.0 * r_max).max(near.cutoff) + skin;
    let paths = plan.paths;
    let flag = |on: bool, f: u32| if on { f } else { 0 };
    Params::<R> {
        n_particles: plan.n,
        n_bonds: plan.nb,
        n_walls: model.walls.len() as u32,
        n_buckets: plan.n_buckets,
        bucket_capacity: plan.bucket_capacity,
        max_neighbors: plan.max_neighbors,
        flags: flag(plan.contact, PARAM_CONTACT)
            | flag(model.shear == ShearForm::Printed, PARAM_PRINTED_SHEAR)
            | flag(plan.hertz, PARAM_HERTZ)
            | flag(paths.merged, PARAM_MERGED)
            | flag(paths.direct, PARAM_POS_DIRECT)
            | flag(paths.inline, PARAM_INLINE_BONDS)
            | flag(compact, PARAM_COMPACT_BONDS)
            | flag(model.drag.is_some(), PARAM_DRAG)
            | PARAM_FIRST
            | flag(model.near_field.is_some(), PARAM_NEAR)
            | match model.domain {
                None => 0,
                Some(d) if d.remove => PARAM_DOMAIN | PARAM_DOMAIN_REMOVE,
                Some(_) => PARAM_DOMAIN,
            },
        integrator: match integrator {
            IntegratorKind::Variational => INTEGRATOR_VARIATIONAL,
            IntegratorKind::VariationalExact => INTEGRATOR_VARIATIONAL_EXACT,
            IntegratorKind::SymplecticEuler => INTEGRATOR_SYMPLECTIC_EULER,
            // Refused in set_up.
            IntegratorKind::CampelloTrapezoidal | IntegratorKind::ImpulseVelocity => {
                INTEGRATOR_VARIATIONAL
            }
        },
        n_partials: plan.n_partials,
        n_materials: model.materials.len() as u32,
        max_contacts: plan.max_contacts,
        n_ids: plan.needs.id_count,
        dt: R::from_f64(dt),
        k_pp: R::from_f64(k_pp),
        skin: R::from_f64(skin),
        inv_cell: R::from_f64(if cell > 0.0 { 1.0 / cell } else { 0.0 }),
        gravity_x: R::from_f64(model.gravity.x),
        gravity_y: R::from_f64(model.gravity.y),
        gravity_z: R::from_f64(model.gravity.z),
        one: R::from_f64(1.0),
        drag_c: R::from_f64(drag.coefficient),
        fluid_x: R::from_f64(drag.fluid_velocity.x),
        fluid_y: R::from_f64(drag.fluid_velocity.y),
        fluid_z: R::from_f64(drag.fluid_velocity.z),
        magnus: R::from_f64(drag.magnus),
        domain_min_x: R::from_f64(domain.min.x),
        domain_min_y: R::from_f64(domain.min.y),
        domain_min_z: R::from_f64(domain.min.z),
        domain_max_x: R::from_f64(domain.max.x),
        domain_max_y: R::from_f64(domain.max.y),
        domain_max_z: R::from_f64(domain.max.z),
        nf_kappa_a: R::from_f64(near.kappa_attractive),
        nf_lambda_a: R::from_f64(near.lambda_attractive),
        nf_kappa_r: R::from_f64(near.kappa_repulsive),
        nf_lambda_r: R::from_f64(near.lambda_repulsive),
        nf_cutoff: R::from_f64(near.cutoff),
        max_overlap: R::from_f64(match model.contact {
            Some(c) if c.law == ContactLaw::Hertz => c.max_overlap,
            _ => f64::INFINITY,
        }),
        jkr_reach: R::from_f64(crate::physics::jkr::largest_reach(model)),
        pad_r1: R::from_f64(0.0),
        pad_r2: R::from_f64(0.0),
    }
}

/// Per bond chunk: bonds (full or compact records), bond_out, incidence, chunk uniform.
fn bond_chunks<R: Real>(
    model: &Model,
    plan: &Plan,
    compact: Option<&CompactBonds<R>>,
) -> Vec<[Upload<String>; 4]> {
    let rs = std::mem::size_of::<R>() as u64;
    let mut out = Vec::new();
    let mut bond_base = 0u32;
    let mut partial_base = groups(plan.n);
    for (c, bonds) in model.bonds.chunks(plan.bond_chunk_len).enumerate() {
        let range = bond_base as usize..bond_base as usize + bonds.len();
        let (records, incidence) =
            bond_chunk_bytes(&model.bonds, model.particles.len(), range.clone(), compact);
        let info = Chunk {
            n_bonds: bonds.len() as u32,
            first: u32::from(c == 0),
            partial_base,
            bond_base,
        };
        // The results, then (breakable bonds, issue 47) each bond's inverse strengths
        // and an empty break record.
        let mut bond_out =
            vec![0u8; (u64::from(BOND_OUT_STRIDE) * bonds.len() as u64 * rs) as usize];
        if model.breakable() {
            let records: Vec<R> = model.bond_strength[range.clone()]
                .iter()
                .flat_map(|s| {
                    let mut r = [R::from_f64(0.0); BOND_BREAK_STRIDE as usize];
                    for (k, inv) in s.inverse().into_iter().enumerate() {
                        r[(BOND_BREAK_INV as usize) + k] = R::from_f64(inv);
                    }
                    r
                })
                .collect();
            bond_out.extend_from_slice(bytemuck::cast_slice(&records));
        }
        out.push([
            (bind::BONDS, format!("bonds[{c}]"), records),
            (bind::BOND_OUT, format!("bond_out[{c}]"), bond_out),
            (bind::INCIDENCE, format!("incidence[{c}]"), incidence),
            (
                bind::CHUNK,
                format!("chunk[{c}]"),
                bytemuck::bytes_of(&info).to_vec(),
            ),
        ]);
        bond_base += bonds.len() as u32;
        partial_base += groups(bonds.len() as u32);
    }
    out
}

/// One bond chunk's records (full or compact) and incidence lists: the bonds `range`
/// of `bonds` (ends as slots of `n`).
pub(super) fn bond_chunk_bytes<R: Real>(
    bonds: &[Bond],
    n: usize,
    range: std::ops::Range<usize>,
    compact: Option<&CompactBonds<R>>,
) -> (Vec<u8>, Vec<u8>) {
    let records = match compact {
        Some(cb) => bytemuck::cast_slice(&cb.records[range.clone()]).to_vec(),
        None => {
            let r: Vec<BondRecord<R>> = bonds[range.clone()].iter().map(BondRecord::from).collect();
            bytemuck::cast_slice(&r).to_vec()
        }
    };
    let inc = Incidence::build(n, &bonds[range]);
    let incidence: Vec<u32> = inc
        .offsets
        .iter()
        .chain(inc.entries.iter())
        .copied()
        .collect();
    (records, bytemuck::cast_slice(&incidence).to_vec())
}

/// One row buffer of a problem: what each of its row chunks holds.
struct RowBuffer<'a> {
    /// Its binding, one of [`ROW_BINDINGS`].
    binding: u32,
    /// Buffer label.
    label: &'static str,
    /// Bytes per particle (0: unused by this problem).
    per_row: u64,
    /// What a fresh buffer holds, repeated (history slots start empty: `NO_PARTNER`).
    fill: &'a [u8],
    /// Initial contents of all rows in particle order, instead of `fill`.
    init: Option<&'a [u8]>,
}

/// The clumps' sections (issue 24; `shaders/clumps.wgsl`): the bodies' initial state
/// ([`contract::CLUMP_RECORD`] vec4 each, Kahan terms of x the rounding of x to `R`,
/// the others zero), per body its first sphere, sphere count and type, the types, and
/// per sphere its body-frame offset and body. Empty without clumps.
struct ClumpContents<R> {
    state: Vec<R>,
    info: Vec<u32>,
    types: Vec<R>,
    member_offset: Vec<R>,
    member_body: Vec<u32>,
}

impl<R: Real> ClumpContents<R> {
    /// From the device model (clumps expanded into their spheres, from
    /// `plan.sections.free` on, and placed at the device origin).
    fn new(model: &Model, plan: &Plan) -> Self {
        let mut out = Self {
            state: Vec::new(),
            info: Vec::new(),
            types: Vec::new(),
            member_offset: Vec::new(),
            member_body: Vec::new(),
        };
        if plan.sections.bodies == 0 {
            return out;
        }
        let mut first = plan.sections.free;
        for (b, c) in model.clumps.iter().enumerate() {
            let t = &model.clump_types[c.kind as usize];
            let spin =
                crate::integrators::rigid::spin_of(&t.inertia, c.rotation, c.angular_velocity);
            let cx = position_kahan::<R>(&[c.position], &[])[0];
            let mut record = [DVec3::ZERO; contract::CLUMP_RECORD as usize];
            record[contract::CLUMP_X as usize] = c.position;
            record[contract::CLUMP_CX as usize] = cx;
            record[contract::CLUMP_V as usize] = c.velocity;
            record[contract::CLUMP_A as usize] = c.rotation;
            record[contract::CLUMP_A_OLD as usize] = c.rotation;
            record[contract::CLUMP_SPIN as usize] = spin;
            out.state
                .extend(flat4::<R>(&record, &[0.0; contract::CLUMP_RECORD as usize]));
            let count = t.spheres.len() as u32;
            out.info.extend([first, count, c.kind]);
            for s in &t.spheres {
                out.member_offset.extend(flat4::<R>(&[s.offset], &[0.0]));
                out.member_body.push(b as u32);
            }
            first += count;
        }
        for t in &model.clump_types {
            let j = t.inertia.body;
            let i = t.inertia.body_inverse;
            out.types.extend(
                [
                    t.mass,
                    t.inertia.scalar.unwrap_or(0.0),
                    t.spheres.len() as f64,
                    0.0,
                    j.x_axis.x,
                    j.y_axis.y,
                    j.z_axis.z,
                    j.y_axis.x,
                    j.z_axis.x,
                    j.z_axis.y,
                    i.x_axis.x,
                    i.y_axis.y,
                    i.z_axis.z,
                    i.y_axis.x,
                    i.z_axis.x,
                    i.z_axis.y,
                ]
                .map(R::from_f64),
            );
        }
        out
    }
}

/// The Kahan terms `c` of the device positions `position` (`x − c` is the position):
/// those of a restored state (`kahan`, 9 per particle, x's first), else the rounding of
/// each position to `R`, `R(x) − x`, which is exact in `f64` and rounds to `R` with an
/// error of u² |x| (zero in `f64`).
pub(super) fn position_kahan<R: Real>(position: &[DVec3], kahan: &[f32]) -> Vec<DVec3> {
    if kahan.len() == 9 * position.len() {
        return kahan
            .chunks(9)
            .map(|c| DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2])))
            .collect();
    }
    let round = |v: f64| R::from_f64(v).to_f64() - v;
    position
        .iter()
        .map(|x| DVec3::new(round(x.x), round(x.y), round(x.z)))
        .collect()
}

/// Per row chunk: its rows of every row buffer, from the Kahan terms `kahan` (f32, 9 per
/// particle, x's first: the rows take those of v and Ω; else zero) and empty history
/// slots.
fn row_chunks<R: Real>(plan: &Plan, kahan: &[f32]) -> Vec<Vec<Upload<String>>> {
    let rs = std::mem::size_of::<R>();
    let velocity_terms: Vec<f32> = kahan.chunks(9).flat_map(|c| c[3..].to_vec()).collect();
    let comp_init: Option<&[u8]> = (rs == 4 && kahan.len() == 9 * plan.n as usize)
        .then(|| bytemuck::cast_slice(&velocity_terms));
    // Unused history slots hold NO_PARTNER.
    let empty_slot = encode_hist_slots::<R>(&[super::contract::NO_PARTNER], &[DVec3::ZERO]);
    let r = &plan.rows;
    let row = |binding, label, per_row, fill, init| RowBuffer {
        binding,
        label,
        per_row,
        fill,
        init,
    };
    let layout: [RowBuffer; 4] = [
        row(bind::NEIGHBORS, "neighbors", r.neighbors, &[0], None),
        row(bind::KAHAN, "kahan", r.kahan, &[0], comp_init),
        row(bind::HIST, "hist", r.hist, &empty_slot, None),
        row(bind::ROW_VEC, "row_vec", r.row_vec, &[0], None),
    ];
    debug_assert!(layout
        .iter()
        .map(|r| r.binding)
        .eq(ROW_BINDINGS[..4].iter().copied()));
    let many = plan.row_chunks.len() > 1;
    plan.row_chunks
        .iter()
        .enumerate()
        .map(|(c, &(first, count))| {
            let suffix = if many {
                format!("[{c}]")
            } else {
                String::new()
            };
            layout
                .iter()
                .map(|r| {
                    let (from, to) = (
                        (r.per_row * first as u64) as usize,
                        (r.per_row * (first + count) as u64) as usize,
                    );
                    let data = match r.init {
                        Some(all) => all[from..to].to_vec(),
                        None => r.fill.iter().copied().cycle().take(to - from).collect(),
                    };
                    (r.binding, format!("{}{suffix}", r.label), data)
                })
                .collect()
        })
        .collect()
}

/// Per row chunk and step parity: the Rows uniform, whose offsets put the copy written
/// at that parity at `*_new`.
fn row_uniforms(plan: &Plan) -> Vec<[RowChunk; 2]> {
    let k = u64::from(plan.max_contacts);
    let s = &plan.sections;
    plan.row_chunks
        .iter()
        .map(|&(first, count)| {
            let count64 = u64::from(count);
            [0usize, 1].map(|q| {
                let other = 1 - q;
                let hist = |copy: usize| (copy as u64 * count64 * k) as u32;
                let wall = |copy: usize| (copy as u64 * count64 * plan.wall_stride) as u32;
                let ms = u64::from(plan.mesh_slots);
                let mesh = |copy: usize| ((2 * k + copy as u64 * ms) * count64) as u32;
                // EPSD rolling springs after both copies of both kinds of slots, then
                // in row_vec after the granular output and the loads.
                let roll = |copy: usize| ((2 * k + 2 * ms + copy as u64 * k) * count64) as u32;
                let mroll = |copy: usize| ((4 * k + 2 * ms + copy as u64 * ms) * count64) as u32;
                let loads = if plan.wall_loads {
                    u64::from(super::plan::load_vec4(plan.needs.rolling)) * plan.load_stride
                } else {
                    0
                };
                let wroll = |copy: usize| {
                    ((2 * plan.wall_stride + 3 + loads + copy as u64 * plan.wall_stride) * count64)
                        as u32
                };
                RowChunk {
                    first,
                    count,
                    hist_new: hist(q),
                    hist_old: hist(other),
                    wall_new: wall(q),
                    wall_old: wall(other),
                    granular_out: wall(2),
                    mv_new: s.motion_v[q],
                    mv_old: s.motion_v[other],
                    mdx_new: s.motion_dx[q],
                    mdx_old: s.motion_dx[other],
                    mda_new: s.motion_da[q],
                    mda_old: s.motion_da[other],
                    // After the granular output, which has three vec4 per particle.
                    wall_load: if plan.wall_loads {
                        wall(2) + 3 * count
                    } else {
                        0
                    },
                    mesh_new: mesh(q),
                    mesh_old: mesh(other),
                    roll_new: roll(q),
                    roll_old: roll(other),
                    mroll_new: mroll(q),
                    mroll_old: mroll(other),
                    wroll_new: wroll(q),
                    wroll_old: wroll(other),
                    pad0: 0,
                    pad1: 0,
                }
            })
        })
        .collect()
}

/// Vectors as reals of kernel precision, three each.
pub(super) fn flat<R: Real>(v: &[DVec3]) -> Vec<R> {
    v.iter()
        .flat_map(|a| [R::from_f64(a.x), R::from_f64(a.y), R::from_f64(a.z)])
        .collect()
}

/// `v` with `w` as fourth components, in kernel precision: the layout of the vec4 state
/// arrays (the sections of `body`).
pub(super) fn flat4<R: Real>(v: &[DVec3], w: &[f64]) -> Vec<R> {
    v.iter()
        .zip(w)
        .flat_map(|(a, &w)| {
            [
                R::from_f64(a.x),
                R::from_f64(a.y),
                R::from_f64(a.z),
                R::from_f64(w),
            ]
        })
        .collect()
}

/// History slots ([`HistRecord`]) as bytes, from partner ids and springs (one each).
pub(super) fn encode_hist_slots<R: Real>(partner: &[u32], spring: &[DVec3]) -> Vec<u8> {
    let records: Vec<HistRecord<R>> = partner
        .iter()
        .zip(spring)
        .map(|(&id, s)| HistRecord {
            spring: [R::from_f64(s.x), R::from_f64(s.y), R::from_f64(s.z)],
            id,
            ..Default::default()
        })
        .collect();
    bytemuck::cast_slice(&records).to_vec()
}
