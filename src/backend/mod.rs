//! The interface every backend (CPU reference, GPU) implements, and backend selection.

pub mod contacts;
pub mod loads;
pub mod profile;

use glam::DVec3;

use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::integrators::IntegratorKind;
use crate::model::Particles;
use crate::model::Precision;

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The GPU if there is a hardware adapter (or one is named with `--adapter` or
    /// `$VARIDEM_ADAPTER`), the CPU otherwise; falls back to the CPU with a warning if
    /// the GPU backend cannot be set up.
    #[default]
    Auto,
    /// The `f64` CPU reference (multi-threaded, deterministic).
    Cpu,
    /// The wgpu backend (`f32` or `f64` kernels); falls back to the CPU with a warning
    /// if there is no usable adapter.
    Gpu,
}

impl BackendKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One output frame: the state at a step and the per-particle and per-bond quantities
/// the VTK output shows (see [`crate::io::vtk_writer`]). Vectors are indexed by particle id,
/// `bond_energy` by bond id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Step index of the state.
    pub step: u64,
    /// Simulated time of the state (s).
    pub time: f64,
    /// The particle state (positions, velocities, rotations, angular velocities, radii).
    pub particles: Particles,
    /// Total force on each particle (N): bonds, contacts, walls and field.
    pub force: Vec<DVec3>,
    /// Total spatial moment `RM` on each particle (N m).
    pub moment: Vec<DVec3>,
    /// Number of touching contacts of each particle, walls included: partners `j` with
    /// `|x_i − x_j| < r_i + r_j` and walls closer than `r_i`. Zero for every particle
    /// when the scene has no `[contact]` (nothing touches then).
    pub contact_count: Vec<u32>,
    /// Strain energy `U^m + U^a + U^s` of each bond (J).
    pub bond_energy: Vec<f64>,
    /// Whether each bond is broken (issue 47), by bond; empty when no bond can break.
    pub bond_broken: Vec<bool>,
    /// The body of each sphere, numbered as `final.csv` numbers its rows: a free
    /// particle is its own body (its id), a clump's sphere is its clump's row (the free
    /// particles first, then the clumps). Empty: every particle is its own body.
    pub body_id: Vec<u32>,
}

impl Frame {
    /// The frame without its dormant particles (reserved by an inserter, not yet
    /// inserted), and the ids of the particles kept; `None` when there are none.
    pub fn without_dormant(&self) -> Option<(Frame, Vec<u32>)> {
        self.keeping(|f| !crate::model::is_dormant(f))
    }

    /// The frame of the particles in the system: without the removed ones (left the
    /// domain) and the dormant ones, and the ids of the particles kept; `None` when
    /// every particle is in the system.
    pub fn in_system(&self) -> Option<(Frame, Vec<u32>)> {
        self.keeping(in_system)
    }

    /// The frame of the particles whose flags pass `keep`, and their ids; `None` when
    /// all of them do.
    fn keeping(&self, keep: impl Fn(u32) -> bool) -> Option<(Frame, Vec<u32>)> {
        let flags = &self.particles.flags;
        if flags.iter().all(|&f| keep(f)) {
            return None;
        }
        let keep: Vec<u32> = (0..flags.len() as u32)
            .filter(|&i| keep(flags[i as usize]))
            .collect();
        let pick3 = |v: &[DVec3]| -> Vec<DVec3> {
            if v.len() == flags.len() {
                keep.iter().map(|&i| v[i as usize]).collect()
            } else {
                v.to_vec()
            }
        };
        let pick_u32 = |v: &[u32]| -> Vec<u32> {
            if v.len() == flags.len() {
                keep.iter().map(|&i| v[i as usize]).collect()
            } else {
                v.to_vec()
            }
        };
        let mut particles = Particles::default();
        for &i in &keep {
            particles.push(self.particles.get(i as usize));
            *particles.flags.last_mut().expect("just pushed") = flags[i as usize];
        }
        let frame = Frame {
            step: self.step,
            time: self.time,
            particles,
            force: pick3(&self.force),
            moment: pick3(&self.moment),
            contact_count: pick_u32(&self.contact_count),
            bond_energy: self.bond_energy.clone(),
            bond_broken: self.bond_broken.clone(),
            body_id: pick_u32(&self.body_id),
        };
        Some((frame, keep))
    }
}

/// The dynamic state of a backend between two steps: with the model (particles'
/// constant properties, bonds with their rest states, walls, laws), everything the next
/// step depends on. A checkpoint ([`crate::checkpoint`]) stores one.
///
/// What is not in it is rebuilt, to the same bits, when a backend is restored
/// (`CpuBackend::from_snapshot`, `GpuBackend::restore`):
/// * the forces and moments of the current state, which depend only on positions and
///   rotations and are recomputed by the same kernels;
/// * the neighbour list and grid. The list is rebuilt at once from the current
///   positions. It may then hold other far pairs than the uninterrupted run's list
///   (which was built earlier), but both hold every touching pair (the Verlet-skin
///   guarantee, on which the uninterrupted run's correctness rests too), pairs that do
///   not touch contribute nothing (no `+ 0`: they are skipped), and each list is summed
///   in ascending id: the forces are the same bits. Later rebuilds may happen at other
///   steps, with the same effect. (A GPU list filled to `max_neighbors` by far pairs
///   could overflow in one run and not in the other; overflow stops a run with an
///   error, never with other bits.)
/// * no random-number generator runs after set-up (seeded velocities are drawn when
///   the scene is built), so there is no generator state.
#[derive(Clone, Debug, PartialEq)]
pub struct StateSnapshot {
    /// The backend that took it: [`BackendKind::Cpu`] or [`BackendKind::Gpu`].
    pub backend: BackendKind,
    /// Its full name ([`Backend::name`]), e.g. `gpu (llvmpipe ..., f32)`.
    pub backend_name: String,
    /// Arithmetic of the state: `f64` for the CPU backend, the kernel precision for
    /// the GPU backend (an `f32` state is stored exactly, widened to `f64`).
    pub precision: Precision,
    /// Steps completed.
    pub step: u64,
    /// The integrator advancing the state.
    pub integrator: IntegratorKind,
    /// Its time step (s).
    pub dt: f64,
    /// Positions `x`, indexed by particle id.
    pub position: Vec<DVec3>,
    /// Velocities `v`.
    pub velocity: Vec<DVec3>,
    /// Rotation vectors `α`.
    pub rotation: Vec<DVec3>,
    /// Spatial angular velocities `Ω`.
    pub angular_velocity: Vec<DVec3>,
    /// Kahan compensation terms of the `f32` GPU kernels: 9 per particle (rows x, v, Ω
    /// of three components, the `kahan` buffer as it is on the device). Empty for the
    /// CPU and `f64` GPU backends, which do not compensate.
    pub compensation: Vec<f32>,
    /// Where the `f32` GPU backend's coordinates are centred
    /// ([`crate::gpu::placement`]); zero for the CPU and `f64` GPU backends, and for
    /// scenes around the origin.
    pub origin: DVec3,
    /// The `f32` GPU backend's positions relative to `origin`, as on the device (3 per
    /// particle), when `origin` is not zero; empty otherwise. `position` holds them
    /// plus `origin` in `f64`, which does not always round back to the same `f32`
    /// (a coordinate within about 2·10⁻⁹ |O| of `O`), so a resumed run reads these.
    pub device_position: Vec<f32>,
    /// Granular contact state, for scenes under the Hertz law (`None` otherwise).
    pub contacts: Option<ContactState>,
    /// Particles removed so far for leaving the domain, ascending. A removed particle
    /// stays where it left with the velocity it left with (its state at exit).
    pub removed: Vec<u32>,
    /// The step at which each of `removed` left (`removed.csv`), in the same order;
    /// empty when unknown (checkpoints of format 11 and older).
    pub exit_steps: Vec<u64>,
    /// What each `[[inserter]]` has inserted and skipped so far (empty without
    /// inserters): its reserved particles `first .. first + inserted` are awake.
    pub inserted: Vec<crate::neighbor::InsertCount>,
    /// The clumps' state (issue 24; empty without clumps), in `[[clump]]` order. Their
    /// spheres are particles of the arrays above (after the free ones).
    pub bodies: Vec<BodyState>,
    /// The `f32` GPU backend's Kahan terms of each body's x, v and spin variable (9 per
    /// body), and its centre of mass relative to `origin` as on the device (3 per
    /// body); empty otherwise.
    pub body_compensation: Vec<f32>,
    /// See `body_compensation`.
    pub body_device_position: Vec<f32>,
    /// Hard contacts: the impulses of the last step's contacts, the next step's warm
    /// start (empty otherwise).
    pub hard_impulses: Vec<HardImpulse>,
    /// Every bond broken so far (issue 47), ascending by step then bond: a broken bond
    /// carries nothing from its break on. Empty when none broke (and in checkpoints
    /// older than format 16).
    pub broken: Vec<BondBreak>,
}

/// A bond that broke (issue 47): a row of `DIR/bonds_broken.csv`
/// ([`BondBreak::CSV_HEADER`]), and the energy it held, which `energy.csv`'s `e_broken`
/// sums.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BondBreak {
    /// The step whose force evaluation found its failure index at 1 or more: the bond
    /// still acts in that evaluation's kick (the correction to `v` of the step), its
    /// load is then taken out of the stored forces, and it carries nothing after.
    pub step: u64,
    /// The bond's index (scene order).
    pub bond: u32,
    /// Its first particle's id.
    pub i: u32,
    /// Its second particle's id.
    pub j: u32,
    /// The loads that broke it ([`crate::physics::binder::BondLoads`]).
    pub loads: crate::physics::binder::BondLoads,
    /// The strain energy `U^m + U^a + U^s` it held at the break (J).
    pub energy: f64,
}

impl BondBreak {
    /// The header of `bonds_broken.csv`.
    pub const CSV_HEADER: &'static str = "step,t,bond,i,j,tension,shear,bend,twist";

    /// The row of this break, `dt` the time step (`t = step · dt`), reals in `{:.16e}`.
    pub fn csv_row(&self, dt: f64) -> String {
        let l = &self.loads;
        format!(
            "{},{:.16e},{},{},{},{:.16e},{:.16e},{:.16e},{:.16e}",
            self.step,
            self.step as f64 * dt,
            self.bond,
            self.i,
            self.j,
            l.tension,
            l.shear,
            l.bend,
            l.twist
        )
    }
}

/// Checks the breaks of a snapshot against `model` (its bonds by id): each names one of its bonds by its
/// ends, once, in step then bond order, and none of them when its bonds cannot break.
pub fn check_breaks(model: &crate::model::Model, broken: &[BondBreak]) -> Result<()> {
    if broken.is_empty() {
        return Ok(());
    }
    if !model.breakable() {
        return Err(Error::Snapshot(format!(
            "the snapshot has {} broken bonds, but the scene's bonds cannot break",
            broken.len()
        )));
    }
    let mut seen = vec![false; model.bonds.len()];
    for (n, b) in broken.iter().enumerate() {
        let fits = model
            .bonds
            .get(b.bond as usize)
            .is_some_and(|bond| (bond.i, bond.j) == (b.i, b.j));
        if !fits || std::mem::replace(&mut seen[b.bond as usize], true) {
            return Err(Error::Snapshot(format!(
                "broken bond {n} (bond {}, particles {} and {}) is not one of the scene's {} bonds, or is listed twice",
                b.bond,
                b.i,
                b.j,
                model.bonds.len()
            )));
        }
        if n > 0 && (broken[n - 1].step, broken[n - 1].bond) >= (b.step, b.bond) {
            return Err(Error::Snapshot(
                "the snapshot's broken bonds are not in step then bond order".into(),
            ));
        }
    }
    Ok(())
}

/// The energy the bonds of `broken` held when they broke (`energy.csv`'s `e_broken`),
/// summed in their order (step, then bond), which no backend or storage changes.
pub fn broken_energy(broken: &[BondBreak]) -> f64 {
    broken.iter().fold(0.0, |e, b| e + b.energy)
}

/// A particle that left the domain and was removed (`[domain] on_exit = "remove"`): a
/// row of `DIR/removed.csv` ([`Exit::CSV_HEADER`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exit {
    /// The step whose predict took it out of the domain.
    pub step: u64,
    /// Its id.
    pub id: u32,
    /// Where it left: its predicted position of that step, outside the domain (m).
    pub position: DVec3,
    /// The velocity it left with, `v_{k+1/2}` of the step's predict (m/s).
    pub velocity: DVec3,
}

impl Exit {
    /// The header of `removed.csv`.
    pub const CSV_HEADER: &'static str = "step,t,id,x,y,z,vx,vy,vz";
}

/// One contact's impulse of a hard-contact step, kept for the next step's warm start
/// (checkpoint format 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardImpulse {
    /// `[i, partner]`: the lower particle id and the other particle's id, or `N + w`
    /// for wall `w` (`N` particles).
    pub key: [u32; 2],
    /// The impulse on the partner in the world frame (N s).
    pub impulse: DVec3,
}

/// One step of the hard-contact solver, a row of `DIR/solver.csv`
/// ([`SolverRow::CSV_HEADER`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolverRow {
    /// The step.
    pub step: u64,
    /// Sweeps taken.
    pub sweeps: u32,
    /// The last sweep's velocity residual: the largest change of a contact's relative
    /// velocity one contact update made (m/s; 0 without contacts).
    pub residual: f64,
    /// Whether the residual reached `[contact] tolerance`.
    pub converged: bool,
    /// Contacts in the step's problem (touching and speculative).
    pub contacts: u32,
    /// Contacts whose impulse lies inside the friction cone (frictionless contacts
    /// with a normal impulse count as sliding).
    pub sticking: u32,
    /// Contacts whose impulse lies on the cone's boundary.
    pub sliding: u32,
    /// Contacts with no impulse.
    pub separating: u32,
    /// The largest overlap of a contact's pair at the end of the step (m; 0 if none).
    pub max_penetration: f64,
    /// Kinetic energy the contact impulses removed in the step (J): the free
    /// velocities' kinetic energy minus the final one.
    pub e_dissipated: f64,
}

/// The force and moment the particles exert on one wall (a row of `walls.csv`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WallLoad {
    /// The wall: `wall[k]` for the `k`-th plane, a mesh's name.
    pub wall: String,
    /// Force on the wall (N): minus the sum of its contact forces on the particles.
    pub force: DVec3,
    /// Moment on the wall (N m) about its axis point (`axis_point`, the origin by
    /// default; it travels with the wall's translation), from each contact force
    /// applied at its contact point.
    pub moment: DVec3,
}

impl WallLoad {
    /// The header of `walls.csv`.
    pub const CSV_HEADER: &'static str = "step,t,wall,fx,fy,fz,mx,my,mz";

    /// The row of this load at `step` and time `t`, reals in `{:.16e}`. Scene names
    /// never need quoting (their characters are restricted); a label from a model built
    /// in code that holds a comma, a quote or a line break is quoted as RFC 4180 says,
    /// so the row keeps its columns.
    pub fn csv_row(&self, step: u64, t: f64) -> String {
        let (f, m) = (self.force, self.moment);
        format!(
            "{step},{t:.16e},{},{:.16e},{:.16e},{:.16e},{:.16e},{:.16e},{:.16e}",
            csv_field(&self.wall),
            f.x,
            f.y,
            f.z,
            m.x,
            m.y,
            m.z
        )
    }
}

/// `s` as one CSV field (RFC 4180): as it is, or in double quotes with its quotes
/// doubled when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

impl SolverRow {
    /// The header of `solver.csv`.
    pub const CSV_HEADER: &'static str =
        "step,sweeps,residual,converged,contacts,sticking,sliding,separating,max_penetration,e_dissipated";

    /// The row in the order of [`SolverRow::CSV_HEADER`], reals in `{:.16e}` (they
    /// read back exactly).
    pub fn csv_row(&self) -> String {
        format!(
            "{},{},{:.16e},{},{},{},{},{},{:.16e},{:.16e}",
            self.step,
            self.sweeps,
            self.residual,
            u8::from(self.converged),
            self.contacts,
            self.sticking,
            self.sliding,
            self.separating,
            self.max_penetration,
            self.e_dissipated
        )
    }
}

/// One clump's dynamic state in a [`StateSnapshot`]: its centre of mass, velocity,
/// attitude, spin variable (`integrators::rigid::spin_of`: the spatial angular
/// momentum for a full inertia tensor, Ω for a scalar one) and the load of the current
/// state, which the next predict half uses (stored for the reason the particles'
/// forces are, [`ContactState`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyState {
    /// Centre of mass (m).
    pub x: DVec3,
    /// Its velocity (m/s).
    pub v: DVec3,
    /// Rescaled Rodrigues vector of the body frame.
    pub alpha: DVec3,
    /// The spin variable.
    pub spin: DVec3,
    /// Force of the current state, the field's included (N).
    pub force: DVec3,
    /// Spatial moment about the centre of mass (N m).
    pub moment: DVec3,
}

/// What a granular (Hertz–Mindlin) step depends on beyond the kinematic state: the
/// tangential springs of every touching contact (history, Campello eq. 30) and the
/// forces of the current state. The forces cannot be recomputed from a snapshot: they
/// were evaluated with the half-step velocities and the step's increments, which the
/// state after the step no longer holds, so they are stored bit for bit.
///
/// It holds a row for each particle in the system ([`ContactState::ids`]); particles
/// out of it (reserved by an inserter, or removed) touch nothing and carry no load, so
/// an open system's contact state is sized by its live particles, not by every id it
/// will ever have (issue 44).
#[derive(Clone, Debug, PartialEq)]
pub struct ContactState {
    /// History slots per particle ([`crate::model::ContactParams::max_contacts`]).
    pub slots: u32,
    /// The particle of each row, ascending: those in the system when the snapshot was
    /// taken (checkpoints of format 12 and older: every id). An id without a row has
    /// no contact, no spring and no load.
    pub ids: Vec<u32>,
    /// Partner id of each slot, `rows × slots`, ascending within a row, unused slots
    /// [`crate::physics::granular::NO_PARTNER`].
    pub partner: Vec<u32>,
    /// Spring `s` of each slot (canonical orientation: the lower id's), `rows × slots`.
    pub spring: Vec<DVec3>,
    /// Spring of each row's particle against each wall, `rows × walls` (zero when
    /// apart).
    pub wall_spring: Vec<DVec3>,
    /// Force on each row's particle at the snapshot's state.
    pub force: Vec<DVec3>,
    /// Spatial moment on each row's particle.
    pub moment: Vec<DVec3>,
    /// Per-row energies `[contact, wall, near_field]` (J).
    pub energy: Vec<[f64; 3]>,
    /// Mesh contact slots: each row's touched mesh features' keys (`physics::mesh`,
    /// `NO_PARTNER` unused), `rows × MESH_SLOTS`; empty without meshes.
    pub mesh_key: Vec<u32>,
    /// The springs of `mesh_key`'s contacts.
    pub mesh_spring: Vec<DVec3>,
    /// The loads on every plane then mesh at the snapshot's state, force and moment
    /// each (`walls.csv`; the Hertz law computes them with the forces).
    pub wall_load: Vec<[DVec3; 2]>,
    /// Rolling springs of the pair slots (`rows × slots`, beside `spring`), of the
    /// walls (`roll_wall`, `rows × walls`) and of the mesh slots (`roll_mesh`, beside
    /// `mesh_spring`): the EPSD model's history ([`crate::physics::rolling`]). All
    /// three empty without rolling resistance ([`crate::model::Model::rolling`]) and in
    /// checkpoints older than format 14.
    pub roll: Vec<DVec3>,
    /// Rolling springs against the walls, `rows × walls` (see [`ContactState::roll`]).
    pub roll_wall: Vec<DVec3>,
    /// Rolling springs of the mesh slots (see [`ContactState::roll`]).
    pub roll_mesh: Vec<DVec3>,
    /// Whether each row's particle held a JKR contact with each wall, `rows × walls`
    /// (1 held, 0 apart; a contact in tension holds only if it held at the step
    /// before, [`crate::physics::jkr::in_contact`]). Empty without JKR cohesion
    /// ([`crate::model::Model::jkr`]) and in checkpoints older than format 15.
    pub wall_held: Vec<u8>,
}

impl ContactState {
    /// The row of particle `id`, `None` when it has none (out of the system).
    pub fn row(&self, id: u32) -> Option<usize> {
        self.ids.binary_search(&id).ok()
    }

    /// Checks that every per-row array has its rows (`walls` springs and `mesh` slots
    /// per row) and that the ids ascend below `id_count`, naming what does not fit.
    pub fn check_rows(&self, id_count: usize, walls: usize, mesh: usize) -> Result<()> {
        let rows = self.ids.len();
        let k = self.slots as usize;
        let sizes = [
            ("partner", self.partner.len(), rows * k),
            ("spring", self.spring.len(), rows * k),
            ("wall_spring", self.wall_spring.len(), rows * walls),
            ("force", self.force.len(), rows),
            ("moment", self.moment.len(), rows),
            ("energy", self.energy.len(), rows),
        ];
        for (name, len, want) in sizes {
            if len != want {
                return Err(Error::Snapshot(format!(
                    "the contact state's {name} has {len} entries, but {rows} rows of the scene need {want}"
                )));
            }
        }
        let mesh_len = [self.mesh_key.len(), self.mesh_spring.len()];
        if mesh_len.iter().any(|&l| l != 0 && l != rows * mesh) || mesh_len[0] != mesh_len[1] {
            return Err(Error::Snapshot(format!(
                "the contact state has {} mesh contact slots, but {rows} rows of the scene need {}",
                self.mesh_key.len(),
                rows * mesh
            )));
        }
        let roll = [
            ("roll", self.roll.len(), rows * k),
            ("roll_wall", self.roll_wall.len(), rows * walls),
            ("roll_mesh", self.roll_mesh.len(), self.mesh_spring.len()),
        ];
        let rolling = !self.roll.is_empty();
        for (name, len, want) in roll {
            if len != if rolling { want } else { 0 } {
                return Err(Error::Snapshot(format!(
                    "the contact state's {name} has {len} entries, but {rows} rows with rolling springs need {want}"
                )));
            }
        }
        if !self.wall_held.is_empty() && self.wall_held.len() != rows * walls {
            return Err(Error::Snapshot(format!(
                "the contact state's wall_held has {} entries, but {rows} rows of the scene need {}",
                self.wall_held.len(),
                rows * walls
            )));
        }
        let ascending = self.ids.windows(2).all(|w| w[0] < w[1]);
        if !ascending || self.ids.last().is_some_and(|&i| i as usize >= id_count) {
            return Err(Error::Snapshot(format!(
                "the contact state's rows are not distinct ascending ids below {id_count}"
            )));
        }
        Ok(())
    }
}

/// Whether a particle with flags `f` is in the system: neither reserved by an inserter
/// nor removed.
pub fn in_system(f: u32) -> bool {
    f & crate::model::FLAG_REMOVED == 0
}

/// Zeroes the force and moment of the particles out of the system (`flags` by id,
/// the arrays by id or shorter). They take no part in the dynamics, so what a backend's
/// storage holds in their rows (the field's weight from a set-up evaluation, the last
/// load before removal, nothing where compaction dropped them) is not a load: frames
/// and snapshots give zero, so that they depend on neither backend nor storage.
pub fn unload_out_of_system(flags: &[u32], force: &mut [DVec3], moment: &mut [DVec3]) {
    for (i, &f) in flags.iter().enumerate() {
        if !in_system(f) {
            if let Some(x) = force.get_mut(i) {
                *x = DVec3::ZERO;
            }
            if let Some(x) = moment.get_mut(i) {
                *x = DVec3::ZERO;
            }
        }
    }
}

impl StateSnapshot {
    /// Checks the arrays have `n` entries each (and the compensation none or `9n`).
    pub fn check_len(&self, n: usize) -> Result<()> {
        let fields = [
            ("position", self.position.len()),
            ("velocity", self.velocity.len()),
            ("rotation", self.rotation.len()),
            ("angular_velocity", self.angular_velocity.len()),
        ];
        for (name, len) in fields {
            if len != n {
                return Err(Error::Snapshot(format!(
                    "{name} has {len} entries but the model has {n} particles"
                )));
            }
        }
        let (r, e) = (self.removed.len(), self.exit_steps.len());
        if e != 0 && e != r {
            return Err(Error::Snapshot(format!(
                "{e} exit steps for {r} removed particles (expected 0 or {r})"
            )));
        }
        let (b, bc, bd) = (
            self.bodies.len(),
            self.body_compensation.len(),
            self.body_device_position.len(),
        );
        if (bc != 0 && bc != 9 * b) || (bd != 0 && bd != 3 * b) {
            return Err(Error::Snapshot(format!(
                "{bc} Kahan terms and {bd} device coordinates for {b} clumps (expected 0 or {} and {})",
                9 * b,
                3 * b
            )));
        }
        let d = self.device_position.len();
        if d != 0 && d != 3 * n {
            return Err(Error::Snapshot(format!(
                "{d} device coordinates for {n} particles (expected 0 or {})",
                3 * n
            )));
        }
        let c = self.compensation.len();
        if c != 0 && c != 9 * n {
            return Err(Error::Snapshot(format!(
                "{c} compensation terms for {n} particles (expected 0 or {})",
                9 * n
            )));
        }
        Ok(())
    }

    /// Writes the snapshot's kinematic state into `particles`.
    pub fn apply_to(&self, particles: &mut Particles) -> Result<()> {
        self.check_len(particles.len())?;
        particles.position.clone_from(&self.position);
        particles.velocity.clone_from(&self.velocity);
        particles.rotation.clone_from(&self.rotation);
        particles
            .angular_velocity
            .clone_from(&self.angular_velocity);
        for &i in &self.removed {
            particles.flags[i as usize] |= crate::model::FLAG_REMOVED;
        }
        Ok(())
    }
}

/// A simulation advancing on some device.
///
/// Backends are [`Send`]: a backend may be stepped on another thread than the one that
/// built it (the Python binding releases the interpreter lock while it steps).
pub trait Backend: Send {
    /// Short name for logs and `run.toml`.
    fn name(&self) -> String;
    /// Steps taken so far.
    fn step_count(&self) -> u64;
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// Advances `n` steps. On error the state is that of the last completed step.
    fn advance(&mut self, n: u64) -> Result<()>;
    /// Energies and momenta of the current state.
    fn diagnostics(&mut self) -> Result<Diagnostics>;
    /// A copy of the current particle state.
    fn particles(&mut self) -> Result<Particles>;
    /// The particles in the system (neither reserved nor removed) with their ids,
    /// ascending: the rows of `final.csv`. The default takes them from
    /// [`Backend::particles`]; a backend that stores only them (an open system's
    /// compacted storage) gives them without building the table of every id.
    fn particles_in_system(&mut self) -> Result<(Vec<u32>, Particles)> {
        Ok(self.particles()?.in_system())
    }
    /// The current state with forces, moments, contact counts and bond energies, for
    /// the VTK output.
    fn frame(&mut self) -> Result<Frame>;
    /// A snapshot of the dynamic state for a checkpoint ([`StateSnapshot`]). The
    /// default is an error: the backend cannot be checkpointed.
    fn checkpoint_state(&mut self) -> Result<StateSnapshot> {
        Err(Error::Snapshot(format!(
            "the {} backend cannot write checkpoints",
            self.name()
        )))
    }
    /// Whether, after [`Backend::advance`] failed with `error`, the backend's state is
    /// that of the last completed step (and may be checkpointed). The default is no:
    /// the run falls back to the last output step's state.
    fn state_after_error_is_good(&self, error: &Error) -> bool {
        let _ = error;
        false
    }
    /// Neighbour-list builds so far (`None` without a neighbour list or when the backend
    /// does not count them): a throughput figure means little without it.
    fn neighbor_builds(&mut self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// Entries of the current neighbour list summed over particles (each pair counted
    /// by both partners; `None` without a neighbour list or when the backend does not
    /// report it): with the contacts, what the per-neighbour work of a step scales with.
    fn listed_neighbors(&mut self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// The hard-contact solver's rows (`solver.csv`) of the steps advanced since the
    /// last call, oldest first; empty without hard contacts.
    fn take_solver_rows(&mut self) -> Vec<SolverRow> {
        Vec::new()
    }
    /// The load the particles put on each plane wall and mesh at the current state
    /// (`walls.csv`), planes first, in scene order; `None` when this backend does not
    /// compute them (the GPU backend, so far).
    fn wall_loads(&mut self) -> Result<Option<Vec<WallLoad>>> {
        Ok(None)
    }
    /// The particles that left the domain (`on_exit = "remove"`) at steps after
    /// `after`, ascending by step then id, with their state at exit; empty without
    /// removal.
    fn exits(&mut self, after: u64) -> Result<Vec<Exit>> {
        let _ = after;
        Ok(Vec::new())
    }
    /// The bonds that broke at steps after `after` (issue 47), ascending by step then
    /// bond, with the loads that broke them; empty when no bond can break.
    fn bond_breaks(&mut self, after: u64) -> Result<Vec<BondBreak>> {
        let _ = after;
        Ok(Vec::new())
    }
    /// What each `[[inserter]]` has inserted and skipped so far, in scene order
    /// (empty without inserters).
    fn insertion_counts(&self) -> Vec<crate::neighbor::InsertCount> {
        Vec::new()
    }
    /// Spatial sorts of storage so far, and the mean distance in storage between a
    /// particle and its listed neighbours (slots apart; what the sort shortens), or
    /// `None` when the backend does not sort: printed by `bench`.
    fn storage_order(&self) -> Option<(u64, f64)> {
        None
    }
    /// Sorts during the run that timed themselves, those of them that moved particles
    /// (a sort of a bed at rest finds them in place), and the seconds they all took
    /// (the GPU's device sorts, issue 44): printed by `bench`. `None` where the backend
    /// does not time them (the CPU's are timed by `benches/cpu_step.rs`).
    fn sort_time(&self) -> Option<(u64, u64, f64)> {
        None
    }
    /// The kernel path this backend chose for the problem (`None` when it has one):
    /// printed by `bench`, since the figures depend on it.
    fn kernel_path(&self) -> Option<String> {
        None
    }
    /// Advances `n` steps timing every dispatch with timestamp queries, each step
    /// submitted and waited for alone: GPU time per kernel family ([`profile`]).
    /// `None` (and nothing advanced) on a backend or device without timestamp queries.
    /// The results are the same bits as [`Backend::advance`]'s.
    fn kernel_profile(&mut self, n: u64) -> Result<Option<profile::KernelProfile>> {
        let _ = n;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 49, item 5: a label that would break the row's columns is quoted.
    #[test]
    fn wall_labels_keep_the_columns_of_walls_csv() {
        let load = |wall: &str| WallLoad {
            wall: wall.into(),
            force: DVec3::new(1.0, 2.0, 3.0),
            moment: DVec3::ZERO,
        };
        let row = load("hopper").csv_row(5, 0.5);
        assert!(
            row.starts_with("5,5.0000000000000000e-1,hopper,1.0"),
            "{row}"
        );
        assert_eq!(row.split(',').count(), 9);
        let row = load("a,\"b\"").csv_row(5, 0.5);
        assert!(
            row.starts_with("5,5.0000000000000000e-1,\"a,\"\"b\"\"\",1.0"),
            "{row}"
        );
        assert_eq!(csv_field("x\ny"), "\"x\ny\"");
    }
}
