//! What one force evaluation produces: per-particle forces, moments and energies
//! ([`ParticleForce`]), per-bond results, and the contact history it leaves
//! ([`ForceState`]), with the per-model sizes of that history.

use glam::DVec3;

use super::contact_history::{PairSpring, RollSlot};
use super::contact_sides::Sides;
use super::kernels::granular::{NearSlot, PairSlot};
use crate::model::{ContactLaw, Model};
use crate::physics::BondResult;

/// What `particle_forces` produces for one particle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ParticleForce {
    /// Total force `F` (N).
    pub force: DVec3,
    /// Total spatial moment `RM` (N m).
    pub moment: DVec3,
    /// Half of each contact pair's energy (J): summed over particles this is `U^pp`.
    pub e_contact: f64,
    /// Wall contact energy (J).
    pub e_wall: f64,
    /// Half of each near-field pair's energy (J).
    pub e_near: f64,
    /// Touching contacts beyond the history capacity (an error when > 0).
    pub overflow: u32,
    /// Mesh contacts beyond [`MESH_SLOTS`](super::MESH_SLOTS) (an error when > 0).
    pub mesh_overflow: u32,
}

/// Forces, moments and per-particle energies from one force evaluation, with the
/// contact history it produced.
#[derive(Clone, Debug, Default)]
pub(super) struct ForceState {
    pub(super) particles: Vec<ParticleForce>,
    /// Per-bond results, in bond order.
    pub(super) bonds: Vec<Option<BondResult>>,
    /// The bonds this evaluation found broken (issue 47), in bond order: the step
    /// records them once it completes.
    pub(super) breaks: super::breakage::EvaluatedBreaks,
    /// Wall springs after this evaluation, `N × wall_stride` (empty without granular
    /// forces). The pair springs are in `pairs`.
    pub(super) wall_spring: Vec<DVec3>,
    /// Scratch: every particle's contact side (granular models).
    pub(super) sides: Sides,
    /// `sides` holds the sides of the state to evaluate (written by
    /// `integrate_predict`; the evaluation then does not recompute them).
    pub(super) sides_ready: bool,
    /// Scratch: one contact slot per listed pair (half list), granular models.
    pub(super) pairs: Vec<PairSlot>,
    /// Pair springs and touching flags after this evaluation, one per listed pair (the
    /// pair history, in the current list's half-list slots).
    pub(super) springs: Vec<PairSpring>,
    /// Scratch: one near-field slot per listed pair, with a near field.
    pub(super) near: Vec<NearSlot>,
    /// Mesh contact slots after this evaluation: feature keys (`NO_PARTNER` unused)
    /// and springs, `N × MESH_SLOTS` (empty without meshes under the Hertz law).
    pub(super) mesh_key: Vec<u32>,
    /// The springs of `mesh_key`'s contacts.
    pub(super) mesh_spring: Vec<DVec3>,
    /// Loads `[force, moment]` on every plane then mesh, summed per chunk of
    /// `MIN_CHUNK` particles (`chunks × (walls + meshes)`; chunk sums are added in
    /// chunk order, so the total does not depend on the threads).
    pub(super) wall_loads: Vec<[DVec3; 2]>,
    /// Rolling torques and springs of the listed pairs beside `springs`, with rolling
    /// resistance ([`Model::rolling`]; empty otherwise).
    pub(super) rolls: Vec<RollSlot>,
    /// Rolling springs against the walls, beside `wall_spring` (empty without rolling
    /// resistance).
    pub(super) wall_roll: Vec<DVec3>,
    /// Rolling springs of the mesh slots, beside `mesh_spring` (empty without rolling
    /// resistance).
    pub(super) mesh_roll: Vec<DVec3>,
    /// Whether each particle's JKR contact with each wall held, beside `wall_spring`
    /// (1 held; empty without JKR cohesion, [`Model::jkr`]).
    pub(super) wall_held: Vec<u8>,
}

impl ForceState {
    /// Records for `n` stored particles of `ids` (the wall loads are summed in chunks
    /// of ids) and `nb` bonds.
    pub(super) fn new(n: usize, nb: usize, model: &Model, ids: usize) -> Self {
        let walls = if granular_model(model) {
            n * wall_stride(model)
        } else {
            0
        };
        let mesh = mesh_slots(model) * n;
        let rolling = model.rolling().is_some();
        let roll = |k: usize| vec![DVec3::ZERO; if rolling { k } else { 0 }];
        let loads = ids.max(n).div_ceil(super::parallel::MIN_CHUNK)
            * (model.walls.len() + model.meshes.len());
        Self {
            wall_loads: vec![[DVec3::ZERO; 2]; loads],
            mesh_key: vec![crate::physics::granular::NO_PARTNER; mesh],
            mesh_spring: vec![DVec3::ZERO; mesh],
            particles: vec![ParticleForce::default(); n],
            bonds: vec![None; nb],
            breaks: Default::default(),
            wall_spring: vec![DVec3::ZERO; walls],
            sides: Default::default(),
            sides_ready: false,
            pairs: Vec::new(),
            springs: Vec::new(),
            near: Vec::new(),
            rolls: Vec::new(),
            wall_roll: roll(walls),
            mesh_roll: roll(mesh),
            wall_held: vec![0; if model.jkr() { walls } else { 0 }],
        }
    }
}

/// Contact-history slots per particle: `[contact] max_contacts` under the Hertz law,
/// none otherwise (drag alone has no contacts to remember).
pub(super) fn history_slots(model: &Model) -> usize {
    match model.contact {
        Some(c) if c.law == ContactLaw::Hertz => c.max_contacts as usize,
        _ => 0,
    }
}

/// Mesh contact slots per particle: [`MESH_SLOTS`](super::MESH_SLOTS) under the Hertz
/// law with meshes, none otherwise.
pub(super) fn mesh_slots(model: &Model) -> usize {
    match model.contact {
        Some(c) if c.law == ContactLaw::Hertz && !model.meshes.is_empty() => super::MESH_SLOTS,
        _ => 0,
    }
}

/// Wall springs per particle: one per wall, at least 1 (so rows are never empty).
pub(super) fn wall_stride(model: &Model) -> usize {
    model.walls.len().max(1)
}

/// Whether `model` needs the granular kernel: the Hertz law, drag or near-field forces
/// (not under hard contacts, whose step applies drag itself: `cpu::hard`).
pub(super) fn granular_model(model: &Model) -> bool {
    match model.contact.map(|c| c.law) {
        Some(ContactLaw::Hertz) => true,
        Some(ContactLaw::Hard(_)) => false,
        _ => model.drag.is_some() || model.near_field.is_some(),
    }
}
