//! The physical model: particles, binder bonds, walls, and the laws that act on them.
//!
//! A [`Model`] is everything a backend needs to advance the system; a [`Scene`] adds the
//! run parameters (time step, number of steps, integrator, output cadence).

mod bonds;
mod clumps;
mod fields;
pub mod generators;
mod hard;
mod inertia;
mod inserter;
mod integrator;
pub mod layout;
pub mod mass_properties;
mod materials;
mod mesh;
mod motion;
mod particles;
mod precision;
pub mod shapes;
pub mod sizes;
mod walls;

pub use bonds::{Bond, BondError, BondStiffness, BondStrength, Incidence};
pub use clumps::{
    Clump, ClumpSphere, ClumpType, ClumpTypeError, MAX_CLUMP_SPHERES, MAX_OVERLAP_PAIRS,
};
pub use fields::{Drag, NearField};
pub use hard::{FrictionModel, HardContact, HardSolver, OnNonconvergence};
pub use inertia::{principal_moments, Inertia, InertiaError};
pub use inserter::{Batch, Inserter, Region, DEFAULT_ATTEMPTS, DEFAULT_RATE_INTERVAL};
pub use integrator::{IntegratorKind, Trapezoidal};
pub use layout::Layout;
pub use materials::{Interaction, Material, DEFAULT_ROLLING_DAMPING};
pub use mesh::{MeshError, MeshWall, TriangleMesh, DEGENERATE_AREA, WELD_TOLERANCE};
pub use motion::{Motion, Pose};
pub use particles::{
    is_dormant, removed_ids, Particle, Particles, FLAG_DORMANT, FLAG_HELD, FLAG_MEMBER,
    FLAG_NO_ROTATION, FLAG_PENDULUM, FLAG_REMOVED,
};
pub use precision::Precision;
pub use walls::Wall;

use glam::DVec3;

/// The largest `[simulation] max_neighbors` a scene may ask for: the capacity of the GPU
/// kernels' private neighbour list (`neighbor_build`).
pub const MAX_NEIGHBORS: u32 = 64;
use serde::{Deserialize, Serialize};

/// Form of the binder shear potential `U^s` (Baker & Gonzalez eq. 53, NOTES).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShearForm {
    /// Frame-indifferent default: `U^s = ½K^s Σ_{k∈{i,j}} [1 − (R_k u_k)·d̂]²`, each
    /// particle's attached rest direction against the current bond direction.
    #[default]
    Objective,
    /// Eq. (53) as printed: `U^s = ½K^s [1 − (R_i u_i)·(R_j d̂)]²`. Not invariant under
    /// rigid rotations; kept only to reproduce the paper.
    Printed,
}

/// Particle–particle contact law for touching pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactLaw {
    /// The binder particle-particle law `U^pp = (2/5) K^pp [1 − |x_i−x_j|/(r_i+r_j)]₊^{5/2}`
    /// of eqs. (56)–(57) (prefactor 2/5 per NOTES), on every touching pair, bonded or
    /// not, and against walls.
    Binder {
        /// `K^pp` (J).
        k_pp: f64,
    },
    /// Campello's granular law (§3.4–3.6): Hertz normal force with the damping of
    /// eq. (22) set from the pair restitution, and the Mindlin tangential spring with
    /// stick–slip friction and rolling, whose elongation is contact history. Pair
    /// properties come from the particles' and walls' materials.
    Hertz,
    /// Hard contacts (Preclik, Eibl & Rüde): no contact stiffness; impulses at the
    /// velocity level with non-penetration as a complementarity condition and friction
    /// by maximum dissipation or Coulomb, solved by sweeps over the contacts. Runs with
    /// `[simulation] integrator = "impulse-velocity"` only.
    Hard(HardContact),
}

impl ContactLaw {
    /// Whether the law takes pair properties from `[[material]]`s (every particle needs
    /// one): the Hertz law (moduli, restitution, friction) and hard contacts (friction).
    pub fn uses_materials(self) -> bool {
        matches!(self, Self::Hertz | Self::Hard(_))
    }
}

/// Contact parameters (absent: no contact forces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParams {
    /// The law.
    pub law: ContactLaw,
    /// Neighbour-list skin (m): pairs closer than `r_i + r_j + skin` are listed, and the
    /// list is rebuilt once any particle has moved more than `skin/2` relative to particle 0
    /// (`NeighborList::update`).
    pub skin: f64,
    /// Touching contacts one particle may have at once (`[contact] max_contacts`): the
    /// capacity of its contact-history slots. More is an error naming the particle.
    pub max_contacts: u32,
    /// Largest overlap of a Hertz contact during the run, as a fraction of the smaller
    /// radius (of the particle's, against a wall or mesh; `[contact] max_overlap`): a
    /// deeper one is [`Fault::Overlap`](crate::error::Fault::Overlap). Unused by the
    /// other laws.
    pub max_overlap: f64,
    /// The rolling-resistance model of the Hertz law (`[[material]] rolling_model`),
    /// for the pairs whose rolling friction is positive.
    pub rolling: RollingModel,
    /// Adhesion of the Hertz law (`[contact] cohesion`): none, or JKR for the pairs
    /// whose surface energy is positive.
    pub cohesion: Cohesion,
}

/// Adhesion of the Hertz law (`[contact] cohesion`; [`crate::physics::jkr`] gives the
/// equations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cohesion {
    /// No adhesion (`"none"`).
    #[default]
    None,
    /// Johnson–Kendall–Roberts (`"jkr"`): the normal force of the adhesive elastic
    /// contact with its hysteresis, for the pairs of positive `surface_energy`.
    Jkr,
}

impl Cohesion {
    /// The scene's name of the model.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Jkr => "jkr",
        }
    }
}

/// Rolling resistance of the Hertz law (`[[material]] rolling_model`;
/// [`crate::physics::rolling`] gives the equations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RollingModel {
    /// Constant directional torque `μ_r R* f_n` against the relative rolling rotation
    /// (`"cdt"`, LIGGGHTS `rolling_friction cdt`; Ai et al. 2011, model A).
    #[default]
    Cdt,
    /// Elastic–plastic spring–dashpot (`"epsd"`, Ai et al. 2011, model C): a rolling
    /// spring of stiffness `k_r = 2.25 k_n μ_r² R*²` capped at `μ_r R* f_n`, kept in the
    /// contact history, with a dashpot while it holds.
    Epsd,
}

impl RollingModel {
    /// The scene's name of the model.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cdt => "cdt",
            Self::Epsd => "epsd",
        }
    }
}

/// Default [`ContactParams::max_overlap`]: half the smaller radius. Eq. (19) assumes
/// `δ ≪ r` (a contact radius `√(r*δ)` small beside `r`). The bundled Hertz scenes reach
/// at most 0.22 (`container.toml`, 10 kg grains landing at 20 m/s; measured over whole
/// runs: the pour, drum, hopper and clump pour 0.06-0.10, the paper's other two
/// examples < 0.03), so 0.5 leaves them twice that, while a time step tens of collision
/// durations long drives a particle a radius or more into its partner in one step.
pub const DEFAULT_MAX_OVERLAP: f64 = 0.5;

/// Default [`ContactParams::max_contacts`]: 12 equal spheres can touch one (kissing
/// number), so 16 leaves room for polydisperse packings and walls are counted apart.
pub const DEFAULT_MAX_CONTACTS: u32 = 16;

/// The simulation box (`[domain]`): a particle whose centre leaves it stops the run
/// with an error naming it, or is removed (`on_exit = "remove"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Domain {
    /// Lower corner (m).
    pub min: DVec3,
    /// Upper corner (m).
    pub max: DVec3,
    /// Remove leaving particles instead of stopping the run. A removed particle stays
    /// where it left, at rest, with its position and rotation frozen, and takes no part
    /// in contacts (it keeps its bonds, which then pull on their other ends).
    pub remove: bool,
}

impl Domain {
    /// Whether `x` is inside (boundary included).
    #[inline]
    pub fn contains(&self, x: DVec3) -> bool {
        x.cmpge(self.min).all() && x.cmple(self.max).all()
    }
}

/// Everything a backend needs to advance the system.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Model {
    /// Particles and their state.
    pub particles: Particles,
    /// Binder bonds with their rest states.
    pub bonds: Vec<Bond>,
    /// The strength of each bond, in bond order (issue 47); empty when no bond can
    /// break (no `break_*` key in the scene), which is the unbreakable binder of
    /// Baker & Gonzalez bit for bit.
    pub bond_strength: Vec<BondStrength>,
    /// Planar walls.
    pub walls: Vec<Wall>,
    /// Triangle-mesh walls (`[[mesh]]`).
    pub meshes: Vec<MeshWall>,
    /// Shear potential form for every bond.
    pub shear: ShearForm,
    /// Contact law, if any.
    pub contact: Option<ContactParams>,
    /// Materials, indexed by [`Particles::material`] and [`Wall::material`].
    pub materials: Vec<Material>,
    /// Per-pair overrides of the material mixing rules.
    pub interactions: Vec<Interaction>,
    /// Drag and Magnus forces (Campello eq. 15, Remark 4), if any.
    pub drag: Option<Drag>,
    /// Simulation box and what happens to particles that leave it (`[domain]`).
    pub domain: Option<Domain>,
    /// Near-field Mie forces (Campello eq. 17), if any.
    pub near_field: Option<NearField>,
    /// Uniform field acceleration `a` (m/s²): `U = −Σ m a·x` (or `−m a·(x + Rρ₀)` for
    /// pendulum particles).
    pub gravity: DVec3,
    /// Clump types (`[[clump_type]]`), indexed by [`Clump::kind`].
    pub clump_types: Vec<ClumpType>,
    /// Clumps (`[[clump]]` and clump clouds), after the particles in output order.
    pub clumps: Vec<Clump>,
    /// Particle inserters (`[[inserter]]`), whose reserved particles are the last of
    /// [`Model::particles`], dormant until inserted.
    pub inserters: Vec<Inserter>,
}

impl Model {
    /// Whether clump `c` is one an inserter reserved (dormant until it inserts it).
    pub fn reserved_clump(&self, c: usize) -> bool {
        self.inserters.iter().any(|ins| {
            ins.clump.is_some()
                && (ins.first as usize..ins.first as usize + ins.capacity as usize).contains(&c)
        })
    }

    /// The rolling-resistance model in force: the contact's under the Hertz law when a
    /// material or interaction gives a positive `rolling_friction`, else `None` (no
    /// rolling torques, and no rolling springs in the contact history).
    pub fn rolling(&self) -> Option<RollingModel> {
        let c = self.contact.filter(|c| c.law == ContactLaw::Hertz)?;
        let any = self.materials.iter().any(|m| m.rolling_friction > 0.0)
            || (self.interactions.iter()).any(|i| i.rolling_friction.is_some_and(|r| r > 0.0));
        any.then_some(c.rolling)
    }

    /// Whether JKR adhesion is in force: the Hertz law with `cohesion = "jkr"` and a
    /// material of positive `surface_energy` (the pair tables then carry `γ`, and
    /// contacts hold in tension down to their pull-off overlap).
    pub fn jkr(&self) -> bool {
        let Some(c) = self.contact.filter(|c| c.law == ContactLaw::Hertz) else {
            return false;
        };
        c.cohesion == Cohesion::Jkr && self.materials.iter().any(|m| m.surface_energy > 0.0)
    }

    /// Whether a bond can break: some bond has a strength ([`Model::bond_strength`]).
    pub fn breakable(&self) -> bool {
        self.bond_strength.iter().any(BondStrength::is_set)
    }

    /// Spheres the backends simulate: the particles and every clump's spheres (what a
    /// particle-step counts).
    pub fn sphere_count(&self) -> usize {
        self.particles.len()
            + self
                .clumps
                .iter()
                .map(|c| self.clump_types[c.kind as usize].spheres.len())
                .sum::<usize>()
    }
}

/// How long to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunLength {
    /// A number of steps.
    Steps(u64),
    /// An end time (s); the step count is `round(t_end/dt)`.
    EndTime(f64),
}

/// Run parameters of a scene (`[simulation]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulationParams {
    /// Time step `h` (s).
    pub dt: f64,
    /// Length of the run.
    pub duration: RunLength,
    /// Time integrator.
    pub integrator: IntegratorKind,
    /// Write an energy row every this many steps.
    pub output_every: u64,
    /// Kernel precision for GPU runs (`precision`); `None`: the GPU default (`f32`).
    /// The CPU backend always computes in `f64`.
    pub precision: Option<crate::model::Precision>,
    /// GPU neighbour-list capacity per particle (`max_neighbors`); `None`: the GPU
    /// default (32).
    pub gpu_max_neighbors: Option<u32>,
    /// GPU grid-bucket capacity (`bucket_capacity`); `None`: the GPU default (16).
    pub gpu_bucket_capacity: Option<u32>,
    /// `phi` and `tolerance` of the `campello-trapezoidal` integrator.
    pub trapezoidal: Trapezoidal,
    /// Spatial sorting of storage (`sort_every`): at a neighbour-list rebuild at least
    /// this many steps after the last sort, the backend reorders its storage along a
    /// space-filling curve; `Some(0)` never sorts, `None` takes
    /// [`DEFAULT_SORT_EVERY`]. Results do not depend on it ([`layout`]).
    pub sort_every: Option<u64>,
    /// Write a checkpoint every this many steps (`checkpoint_every`, or
    /// `checkpoint_interval` in seconds); `None`: none unless the command line asks
    /// (`--checkpoint-every`, which takes precedence).
    pub checkpoint_every: Option<u64>,
}

/// Default `[simulation] sort_every` (steps).
pub const DEFAULT_SORT_EVERY: u64 = 1000;

impl SimulationParams {
    /// Total number of steps.
    pub fn steps(&self) -> u64 {
        match self.duration {
            RunLength::Steps(n) => n,
            RunLength::EndTime(t) => (t / self.dt).round() as u64,
        }
    }
}

/// A complete scene: run parameters and model.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Run parameters.
    pub simulation: SimulationParams,
    /// The model.
    pub model: Model,
}
