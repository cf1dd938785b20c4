//! Hard contacts on the GPU (`shaders/hard.wgsl`): the sections of the hard-contact
//! buffers ([`HardSections`]), their initial bytes, the step's dispatch sequence, and
//! the `solver.csv` rows and warm-start impulses read back. Spheres and clumps (a clump
//! contact's block is general: `shaders/common/hard_solve.wgsl`), with the `jacobi`
//! and `colored` solvers (`nbgs` is sequential by definition).

use glam::DVec3;

use super::contract::{
    ARG_COLOR, ARG_CONTACTS, ARG_COUNT, ARG_ROUND, ARG_SOLVE_BODIES, ARG_SOLVE_CONTACTS,
    A_MISC_LEN, HARD_COLORED, HARD_COULOMB, HARD_FIXED_MARGIN, HARD_JACOBI, HARD_MAX_COLORS,
    HARD_ON_ERROR, HARD_ROUNDS, HARD_ROWS, HARD_ROW_WORDS, HARD_WARM, ROW_CONTACTS, ROW_CONVERGED,
    ROW_SEPARATING, ROW_SLIDING, ROW_STEP, ROW_STICKING, ROW_SWEEPS, S_LEN,
};
use super::layout::{HardParams, Real};
use super::plan::groups;
use super::{bind, GpuBackend};
use crate::backend::{HardImpulse, SolverRow};
use crate::error::{Error, Fault, Result};
use crate::gpu::kernels::KernelId;
use crate::model::{HardContact, HardSolver, Model, OnNonconvergence};

/// Element offsets of the sections of the hard-contact buffers (`H_*`: vec4 of
/// `contacts`; `W_*`: words of `hard_words`; `A_*`: words of `hard_atomic`) for `n`
/// particles and a capacity of `capacity` contacts. All zero without hard contacts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HardSections {
    /// Contact capacity.
    pub capacity: u32,
    /// `contacts`: normal and gap term.
    pub normal: u32,
    /// `contacts`: impulse and μ.
    pub impulse: u32,
    /// `contacts`: last change and residual.
    pub delta: u32,
    /// `contacts`: warm-start impulses (world frame).
    pub warm: u32,
    /// `contacts`: the solver's v and 1/m.
    pub body_v: u32,
    /// `contacts`: the solver's Ω and 1/J.
    pub body_w: u32,
    /// `contacts`: speed and kinetic energies.
    pub body_e: u32,
    /// `contacts`: a clump body's inverse inertia tensor (two per body) and energies.
    pub body_i: u32,
    /// `contacts`: the rows' reals.
    pub rows: u32,
    /// `contacts`: each contact's wall surface velocity at its point (zero but for a
    /// moving wall).
    pub wall_v: u32,
    /// `contacts` length (vec4).
    pub contacts_len: u32,
    /// `hard_words`: own-contact offsets (n + 1).
    pub off: u32,
    /// `hard_words`: incidence offsets (n + 1).
    pub inc: u32,
    /// `hard_words`: the scan's workgroup sums.
    pub groups: u32,
    /// `hard_words`: keys (two words each).
    pub key: u32,
    /// `hard_words`: incidence entries (two per contact at most).
    pub list: u32,
    /// `hard_words`: the warm starts' offsets (n + 1).
    pub warm_off: u32,
    /// `hard_words`: the warm starts' partners.
    pub warm_key: u32,
    /// `hard_words`: contacts by colour.
    pub color_list: u32,
    /// `hard_words`: colour offsets (`HARD_MAX_COLORS + 1`).
    pub color_off: u32,
    /// `hard_words`: the rows' words.
    pub row_words: u32,
    /// `hard_words`: the solver's state words.
    pub state: u32,
    /// `hard_words` length.
    pub words_len: u32,
    /// `hard_atomic`: colours.
    pub color: u32,
    /// `hard_atomic`: colour cursors.
    pub cursor: u32,
    /// `hard_atomic`: counters.
    pub misc: u32,
    /// `hard_atomic` length.
    pub atomic_len: u32,
}

impl HardSections {
    /// The sections for `n` particles and `capacity` contacts.
    pub fn new(n: u32, capacity: u32) -> Self {
        let (n, c) = (u64::from(n), u64::from(capacity));
        let at = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let rows = 4 * c + 5 * n;
        let scan_groups = u64::from(groups(n as u32 + 1));
        let key = 2 * (n + 1) + 2 * scan_groups;
        let list = key + 2 * c;
        let warm_off = list + 2 * c;
        let warm_key = warm_off + n + 1;
        let color_list = warm_key + c;
        let color_off = color_list + c;
        let row_words = color_off + u64::from(HARD_MAX_COLORS) + 1;
        let state = row_words + u64::from(HARD_ROWS * HARD_ROW_WORDS);
        Self {
            capacity,
            normal: 0,
            impulse: at(c),
            delta: at(2 * c),
            warm: at(3 * c),
            body_v: at(4 * c),
            body_w: at(4 * c + n),
            body_e: at(4 * c + 2 * n),
            body_i: at(4 * c + 3 * n),
            rows: at(rows),
            wall_v: at(rows + u64::from(HARD_ROWS)),
            contacts_len: at(rows + u64::from(HARD_ROWS) + c),
            off: 0,
            inc: at(n + 1),
            groups: at(2 * (n + 1)),
            key: at(key),
            list: at(list),
            warm_off: at(warm_off),
            warm_key: at(warm_key),
            color_list: at(color_list),
            color_off: at(color_off),
            row_words: at(row_words),
            state: at(state),
            words_len: at(state + u64::from(S_LEN)),
            color: 0,
            cursor: at(c),
            misc: at(c + u64::from(HARD_MAX_COLORS)),
            atomic_len: at(c + u64::from(HARD_MAX_COLORS + A_MISC_LEN)),
        }
    }

    /// The capacity for `n` particles with `max_contacts` touching contacts each: every
    /// contact is one particle's own (its higher-id partners and its walls), at most
    /// about half of a particle's contacts, and a wall each.
    pub fn capacity(n: u32, max_contacts: u32) -> u32 {
        n.saturating_mul(max_contacts.div_ceil(2) + 1)
    }

    /// The `H_*`, `W_*` and `A_*` constants of the WGSL header.
    pub fn wgsl_constants(&self) -> String {
        [
            ("H_NORMAL", self.normal),
            ("H_IMPULSE", self.impulse),
            ("H_DELTA", self.delta),
            ("H_WARM", self.warm),
            ("H_BODY_V", self.body_v),
            ("H_BODY_W", self.body_w),
            ("H_BODY_E", self.body_e),
            ("H_BODY_I", self.body_i),
            ("H_ROWS", self.rows),
            ("H_WALL_V", self.wall_v),
            ("W_OFF", self.off),
            ("W_INC", self.inc),
            ("W_GROUPS", self.groups),
            ("W_KEY", self.key),
            ("W_LIST", self.list),
            ("W_WARM_OFF", self.warm_off),
            ("W_WARM_KEY", self.warm_key),
            ("W_CLIST", self.color_list),
            ("W_COFF", self.color_off),
            ("W_ROWS", self.row_words),
            ("W_STATE", self.state),
            ("A_COLOR", self.color),
            ("A_CURSOR", self.cursor),
            ("A_MISC", self.misc),
        ]
        .iter()
        .map(|(name, v)| format!("const {name}: u32 = {v}u;\n"))
        .collect()
    }
}

/// What the GPU keeps of a hard-contact scene.
#[derive(Debug)]
pub(super) struct HardGpu {
    /// The law's parameters.
    pub params: HardContact,
    /// The buffers' sections.
    pub sections: HardSections,
    /// `solver.csv` rows read back and not yet taken.
    pub rows: Vec<SolverRow>,
    /// Colours encoded per sweep (grown when a step needs more; [`FIRST_COLORS`] at
    /// first).
    pub colors: u32,
    /// Sweeps encoded per step (grown up to `max_sweeps` when a step needs more;
    /// [`FIRST_SWEEPS`] at first).
    pub sweeps: u32,
    /// The neighbour list's skin now (it grows when the margin outruns it).
    pub skin: f64,
    /// The largest radius (the grid's cell edge is `2 r_max + skin`).
    pub r_max: f64,
    /// How far the mesh cell grid reaches beyond the largest radius
    /// ([`mesh_grid_headroom`]); `None` without meshes.
    pub mesh_headroom: Option<f64>,
    /// The time step.
    pub dt: f64,
}

/// How far beyond the largest radius the GPU's mesh cell grid reaches in a hard-contact
/// scene: the larger of the scene's skin and twice the largest radius. The grid is built
/// once, so the skin may grow to this much (bodies moving up to half a radius per step)
/// before the run stops with [`Fault::HardMarginBeyondMeshGrid`].
pub(super) fn mesh_grid_headroom(model: &Model) -> f64 {
    let skin = model.contact.map_or(0.0, |c| c.skin);
    skin.max(2.0 * model.particles.max_radius())
}

/// Colours encoded per sweep at first: a sphere pile needs 8–13, a loose one fewer.
pub(super) const FIRST_COLORS: u32 = 12;
/// Sweeps encoded per step at first (or `max_sweeps` if fewer). Every encoded sweep is
/// `colours + 1` dispatches whether the solve still needs it or not (a converged
/// solve zeroes their sizes, but they are encoded), so encoding `max_sweeps` of them
/// costs ~10⁴ dispatches per step; a step that needs more than are encoded is taken
/// again with twice as many (`ERR_HARD_SWEEP_BUDGET`), with the same result.
pub(super) const FIRST_SWEEPS: u32 = 16;

/// Whether the GPU runs `model`'s hard contacts; a named refusal otherwise (the caller
/// falls back to the CPU).
pub(super) fn check_supported(model: &Model, params: &HardContact) -> Result<()> {
    let refuse = |what: &str| {
        Err(Error::Backend(format!(
            "hard contacts {what} run on the CPU reference backend only so far; use --backend cpu"
        )))
    };
    if params.solver == HardSolver::Nbgs {
        return Err(Error::Backend(
            "the nbgs solver is sequential by definition: use solver = \"jacobi\" or \"colored\" on the GPU, or --backend cpu".into(),
        ));
    }
    if model
        .particles
        .flags
        .iter()
        .any(|f| f & crate::model::FLAG_PENDULUM != 0)
    {
        return refuse("with pendulum particles");
    }
    Ok(())
}

/// The `hard` uniform of `params` for `n` particles, time step `dt` and `capacity`.
pub(super) fn hard_params<R: Real>(
    params: &HardContact,
    n: u32,
    dt: f64,
    capacity: u32,
) -> HardParams<R> {
    let mut flags = 0;
    if params.warm_start {
        flags |= HARD_WARM;
    }
    if params.margin.is_some() {
        flags |= HARD_FIXED_MARGIN;
    }
    if params.on_nonconvergence == OnNonconvergence::Error {
        flags |= HARD_ON_ERROR;
    }
    flags |= match params.solver {
        HardSolver::Jacobi => HARD_JACOBI,
        _ => HARD_COLORED,
    };
    if params.friction_model == crate::model::FrictionModel::Coulomb {
        flags |= HARD_COULOMB;
    }
    HardParams {
        capacity,
        max_sweeps: params.max_sweeps,
        flags,
        scan_groups: groups(n + 1),
        h: R::from_f64(dt),
        eps: R::from_f64(params.error_reduction),
        tol: R::from_f64(params.tolerance),
        relaxation: R::from_f64(params.relaxation),
        margin: R::from_f64(params.margin.unwrap_or(0.0)),
        ..HardParams::default()
    }
}

/// The initial bytes of bindings 21–25 (`hard`, `contacts`, `hard_words`, `hard_atomic`,
/// `hard_args`): zeros but the parameters and the dispatch triples' 1s.
pub(super) fn initial_bytes<R: Real>(
    params: Option<HardParams<R>>,
    s: &HardSections,
) -> [Vec<u8>; 5] {
    let rs = std::mem::size_of::<R>();
    let Some(p) = params else {
        return Default::default();
    };
    let mut words = vec![0u32; s.words_len as usize];
    words[(s.state + super::contract::S_COLOR_BUDGET) as usize] = FIRST_COLORS;
    let mut args = vec![0u32; 3 * ARG_COUNT as usize];
    for triple in args.chunks_exact_mut(3) {
        triple[1] = 1;
        triple[2] = 1;
    }
    [
        bytemuck::bytes_of(&p).to_vec(),
        vec![0u8; 4 * rs * s.contacts_len as usize],
        bytemuck::cast_slice(&words).to_vec(),
        vec![0u8; 4 * s.atomic_len as usize],
        bytemuck::cast_slice(&args).to_vec(),
    ]
}

impl GpuBackend {
    /// After a step stopped at `hard_skin` (the margin outran the skin; nothing of the
    /// state had moved): grows the skin to twice the margin, as the CPU does, with the
    /// grid's cells to match, and rewinds the status words to the step before, with
    /// the neighbour list stale. `Ok(false)` when the skin cannot grow (a margin that
    /// does not fit even so).
    pub(super) fn grow_hard_skin(&mut self, hard: &mut HardGpu, step: u64) -> Result<bool> {
        let margin = match hard.params.margin {
            Some(m) => m,
            None => {
                let bits = self.read_at(
                    bind::HARD_ATOMIC,
                    4 * u64::from(hard.sections.misc + super::contract::M_UMAX),
                    4,
                )?;
                let u = f64::from(f32::from_bits(u32::from_le_bytes([
                    bits[0], bits[1], bits[2], bits[3],
                ])));
                2.0 * hard.dt * u * 1.000001
            }
        };
        let skin = 2.0 * margin;
        if !(skin > hard.skin && skin.is_finite()) || step == 0 {
            return Ok(false);
        }
        if let Some(reach) = hard.mesh_headroom.filter(|&reach| skin > reach) {
            // Mesh features further than the grid reaches could be missed.
            return Err(Error::fault(
                step,
                Fault::HardMarginBeyondMeshGrid {
                    margin,
                    skin,
                    reach,
                },
            ));
        }
        log::info!(
            "step {step}: hard contacts' margin {margin:.3e} m outran the neighbour skin {:.3e} m; the GPU's skin grows to {skin:.3e} m",
            hard.skin
        );
        hard.skin = skin;
        let cell = 2.0 * hard.r_max + skin;
        let rs = self.real_size();
        let at = |field: usize| (48 + field * rs) as u64;
        let q = &self.ctx.queue;
        let params = &self.buffers[bind::PARAMS as usize];
        // Params: 12 words, then dt, k_pp, skin, inv_cell.
        q.write_buffer(params, at(2), &self.real_bytes(&[skin]));
        q.write_buffer(params, at(3), &self.real_bytes(&[1.0 / cell]));
        self.rewind_hard_step(step, super::contract::ERR_HARD_SKIN, true);
        Ok(true)
    }

    /// After a step stopped at `hard_color_finish` or `hard_solve_end` because it
    /// needed more colours or sweeps than were encoded (`code`, with `index` the
    /// colours or sweeps; nothing of the state had moved): encodes more — the colours
    /// it used, twice the sweeps, up to `max_sweeps` — and rewinds the status words to
    /// the step before, so that the step is taken again with the same result.
    pub(super) fn grow_hard_budget(
        &mut self,
        hard: &mut HardGpu,
        step: u64,
        code: u32,
        index: u32,
    ) {
        if code == super::contract::ERR_HARD_COLOR_BUDGET {
            hard.colors = index.clamp(hard.colors, super::contract::HARD_MAX_COLORS);
            let word = 4 * u64::from(hard.sections.state + super::contract::S_COLOR_BUDGET);
            self.ctx.queue.write_buffer(
                &self.buffers[bind::HARD_WORDS as usize],
                word,
                &hard.colors.to_le_bytes(),
            );
        } else {
            hard.sweeps = (2 * hard.sweeps).min(hard.params.max_sweeps);
        }
        log::debug!(
            "step {step}: the hard-contact solve needs more than was encoded; now {} sweeps of {} colours per step",
            hard.sweeps,
            hard.colors
        );
        self.rewind_hard_step(step, code, false);
    }

    /// The status words as before `step`, its error `code` cleared (and a neighbour
    /// rebuild requested when `rebuild`), so that the next submission takes it again.
    fn rewind_hard_step(&mut self, step: u64, code: u32, rebuild: bool) {
        let q = &self.ctx.queue;
        let status = &self.buffers[bind::STATUS as usize];
        let word = |w: u32| 4 * u64::from(w);
        let step_before = u32::try_from(step - 1).unwrap_or(u32::MAX);
        q.write_buffer(
            status,
            word(super::contract::STATUS_STEP),
            &step_before.to_le_bytes(),
        );
        q.write_buffer(
            status,
            word(super::contract::STATUS_ERROR),
            &0u32.to_le_bytes(),
        );
        if rebuild {
            q.write_buffer(
                status,
                word(super::contract::STATUS_REBUILD),
                &1u32.to_le_bytes(),
            );
        }
        q.write_buffer(
            status,
            word(super::contract::STATUS_FIRST_INDEX + code),
            &u32::MAX.to_le_bytes(),
        );
        self.steps = step - 1;
    }

    /// `bytes` of the buffer at `binding` from byte `offset`.
    fn read_at(&self, binding: u32, offset: u64, bytes: u64) -> Result<Vec<u8>> {
        self.read_buffer_at(&self.buffers[binding as usize], offset, bytes)
    }

    /// `count` reals of the buffer at `binding` from real `first`, widened to `f64`.
    fn read_reals_at(&self, binding: u32, first: u64, count: usize) -> Result<Vec<f64>> {
        let rs = self.real_size() as u64;
        let raw = self.read_at(binding, first * rs, count as u64 * rs)?;
        Ok(self.reals_from_bytes(&raw, count))
    }

    /// Dispatches `name` with the workgroup count of `hard_args` entry `entry`.
    fn dispatch_hard(&self, pass: &mut wgpu::ComputePass<'_>, name: KernelId, entry: u32) {
        let k = &self.kernels[&name];
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &k.bind_groups[0], &[]);
        let args = &self.buffers[bind::HARD_ARGS as usize];
        self.timed(pass, name, |pass| {
            pass.dispatch_workgroups_indirect(args, 12 * u64::from(entry))
        });
    }

    /// The set-up evaluation of a hard scene: the field's forces (and the solver's
    /// free velocities, unused) and the first neighbour list.
    pub(super) fn encode_hard_first(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.dispatch(pass, KernelId::HardBegin, 1);
        self.dispatch(
            pass,
            KernelId::HardFree,
            groups(self.n + self.sections.bodies),
        );
        self.encode_grid(pass);
    }

    /// One impulse-velocity step (the sequence of `shaders/hard.wgsl`).
    pub(super) fn encode_hard_step(&self, pass: &mut wgpu::ComputePass<'_>, hard: &HardGpu) {
        let n = self.n;
        let p = &hard.params;
        self.dispatch(pass, KernelId::StepBegin, 1);
        self.dispatch(pass, KernelId::HardBegin, 1);
        // Moving meshes placed at the step's start, as the contacts see them.
        if self.sections.moving_meshes {
            let s = &self.sections;
            let items = (s.mesh_tris - s.mesh_verts).max(s.mesh_triangles);
            self.dispatch(pass, KernelId::MeshPlace, groups(items));
        }
        self.dispatch(pass, KernelId::HardFree, groups(n + self.sections.bodies));
        self.dispatch(pass, KernelId::HardSkin, groups(n));
        self.encode_grid(pass);
        self.dispatch_rows(pass, KernelId::HardCount);
        self.dispatch(pass, KernelId::HardScanLocal, groups(n + 1));
        self.dispatch(pass, KernelId::HardScanTop, 1);
        self.dispatch(pass, KernelId::HardScanAdd, groups(n + 1));
        self.dispatch_rows(pass, KernelId::HardBuild);
        self.dispatch_rows(pass, KernelId::HardIncidence);
        let colored = p.solver == HardSolver::Colored;
        if colored {
            for _ in 0..HARD_ROUNDS {
                self.dispatch_hard(pass, KernelId::HardColorRound, ARG_ROUND);
                self.dispatch(pass, KernelId::HardColorGate, 1);
            }
            self.dispatch(pass, KernelId::HardColorRest, 1);
            self.dispatch_hard(pass, KernelId::HardColorCount, ARG_CONTACTS);
            self.dispatch(pass, KernelId::HardColorFinish, 1);
            self.dispatch_hard(pass, KernelId::HardColorPlace, ARG_CONTACTS);
        }
        if p.warm_start {
            self.dispatch(pass, KernelId::HardGather, groups(n));
        }
        for _ in 0..hard.sweeps {
            if colored {
                let k = &self.kernels[&KernelId::HardColorSweep];
                pass.set_pipeline(&k.pipeline);
                for color in 0..hard.colors {
                    pass.set_bind_group(0, &k.bind_groups[color as usize], &[]);
                    pass.dispatch_workgroups_indirect(
                        &self.buffers[bind::HARD_ARGS as usize],
                        12 * u64::from(ARG_COLOR + color),
                    );
                }
            } else {
                self.dispatch_hard(pass, KernelId::HardUpdate, ARG_SOLVE_CONTACTS);
                self.dispatch_hard(pass, KernelId::HardGather, ARG_SOLVE_BODIES);
            }
            self.dispatch(pass, KernelId::HardCheck, 1);
        }
        self.dispatch(pass, KernelId::HardSolveEnd, 1);
        self.dispatch(pass, KernelId::HardAdvance, groups(n + 1));
        let bodies = self.sections.bodies;
        if bodies > 0 {
            self.dispatch(pass, KernelId::HardAdvanceClumps, groups(bodies));
            self.dispatch(pass, KernelId::HardFollow, groups(n - self.sections.free));
        }
        self.dispatch_hard(pass, KernelId::HardSave, ARG_CONTACTS);
        self.dispatch(pass, KernelId::HardRow, 1);
    }

    /// Reads the `solver.csv` rows of steps `first..=last` (at most [`HARD_ROWS`], the
    /// steps of one submission).
    pub(super) fn read_hard_rows(
        &self,
        s: &HardSections,
        first: u64,
        last: u64,
    ) -> Result<Vec<SolverRow>> {
        let rows = HARD_ROWS as u64;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read_at(
            bind::HARD_WORDS,
            4 * u64::from(s.row_words),
            4 * rows * u64::from(HARD_ROW_WORDS),
        )?);
        let reals = self.read_reals_at(
            bind::CONTACTS,
            4 * u64::from(s.rows),
            4 * HARD_ROWS as usize,
        )?;
        let mut out = Vec::new();
        for step in first..=last {
            let slot = ((step - 1) % rows) as usize;
            let w = &words[slot * HARD_ROW_WORDS as usize..][..HARD_ROW_WORDS as usize];
            if u64::from(w[ROW_STEP as usize]) != step {
                return Err(Error::Backend(format!(
                    "step {step}: the GPU's solver row is missing (slot holds step {})",
                    w[ROW_STEP as usize]
                )));
            }
            let r = &reals[4 * slot..4 * slot + 4];
            out.push(SolverRow {
                step,
                sweeps: w[ROW_SWEEPS as usize],
                residual: r[0],
                converged: w[ROW_CONVERGED as usize] != 0,
                contacts: w[ROW_CONTACTS as usize],
                sticking: w[ROW_STICKING as usize],
                sliding: w[ROW_SLIDING as usize],
                separating: w[ROW_SEPARATING as usize],
                max_penetration: r[1],
                e_dissipated: r[2],
            });
        }
        Ok(out)
    }

    /// The fault of an unconverged solve at `step` with `on_nonconvergence = "error"`,
    /// from its row.
    pub(super) fn hard_no_convergence(&self, hard: &HardGpu, step: u64) -> Result<Error> {
        let row = self.read_hard_rows(&hard.sections, step, step)?;
        let r = row.first().copied().unwrap_or_default();
        let tolerance = hard.params.tolerance;
        Ok(Error::fault(
            step,
            Fault::SolverNoConvergence {
                sweeps: r.sweeps,
                residual: r.residual,
                tolerance,
                contacts: r.contacts as usize,
            },
        ))
    }

    /// The warm-start impulses of the last step (non-zero ones, keys ascending), as the
    /// CPU keeps them.
    pub(super) fn hard_impulses(&self) -> Result<Vec<HardImpulse>> {
        let Some(h) = &self.hard else {
            return Ok(Vec::new());
        };
        let s = &h.sections;
        let n = self.n as usize;
        let off: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read_at(
            bind::HARD_WORDS,
            4 * u64::from(s.warm_off),
            4 * (n as u64 + 1),
        )?);
        let total = off[n] as usize;
        if total == 0 {
            return Ok(Vec::new());
        }
        let keys: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read_at(
            bind::HARD_WORDS,
            4 * u64::from(s.warm_key),
            4 * total as u64,
        )?);
        let reals = self.read_reals_at(bind::CONTACTS, 4 * u64::from(s.warm), 4 * total)?;
        let mut out = Vec::new();
        for i in 0..n {
            for k in off[i] as usize..off[i + 1] as usize {
                let impulse = DVec3::new(reals[4 * k], reals[4 * k + 1], reals[4 * k + 2]);
                if impulse != DVec3::ZERO {
                    out.push(HardImpulse {
                        key: [i as u32, keys[k]],
                        impulse,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Uploads the warm-start impulses of a snapshot (keys ascending, checked by the
    /// CPU's rules).
    pub(super) fn restore_hard_impulses(&mut self, stored: &[HardImpulse]) -> Result<()> {
        let Some(h) = &self.hard else {
            return Ok(());
        };
        let s = h.sections;
        let n = self.n as usize;
        // Partners: particles, planes, then mesh features (8 keys a triangle), as the
        // CPU keys them.
        let triangles: usize = (self.model.meshes.iter())
            .map(|m| m.mesh.triangles.len())
            .sum();
        let bound = n + self.model.walls.len() + 8 * triangles;
        let mut off = vec![0u32; n + 1];
        let mut prev: Option<[u32; 2]> = None;
        for (k, imp) in stored.iter().enumerate() {
            let [i, j] = imp.key;
            if i as usize >= n
                || i >= j
                || j as usize >= bound
                || prev.is_some_and(|p| p >= imp.key)
                || !imp.impulse.is_finite()
            {
                return Err(Error::Snapshot(format!(
                    "hard-contact impulse {k} (key {:?}, impulse {:?}) is invalid for {bound} particles, walls and mesh features",
                    imp.key,
                    imp.impulse.to_array()
                )));
            }
            prev = Some(imp.key);
            off[i as usize + 1] += 1;
        }
        if stored.len() > s.capacity as usize {
            return Err(Error::Snapshot(format!(
                "{} hard-contact impulses: more than the GPU's {} contacts",
                stored.len(),
                s.capacity
            )));
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let keys: Vec<u32> = stored.iter().map(|s| s.key[1]).collect();
        let impulses: Vec<f64> = stored
            .iter()
            .flat_map(|s| [s.impulse.x, s.impulse.y, s.impulse.z, 0.0])
            .collect();
        let q = &self.ctx.queue;
        let words = &self.buffers[bind::HARD_WORDS as usize];
        q.write_buffer(words, 4 * u64::from(s.warm_off), bytemuck::cast_slice(&off));
        if !keys.is_empty() {
            q.write_buffer(
                words,
                4 * u64::from(s.warm_key),
                bytemuck::cast_slice(&keys),
            );
            let bytes = self.real_bytes(&impulses);
            let rs = self.real_size() as u64;
            q.write_buffer(
                &self.buffers[bind::CONTACTS as usize],
                4 * rs * u64::from(s.warm),
                &bytes,
            );
        }
        Ok(())
    }
}
