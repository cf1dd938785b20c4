//! What a caller chooses about a GPU run ([`GpuOptions`]), the A/B path switches the
//! CLI reads from its environment ([`PathSwitches`]; the library reads none), and the
//! kernel paths a problem takes as a result ([`Paths`]).

use super::Precision;
use crate::model::{ContactLaw, Model};

/// GPU run options.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Adapter name (substring); `None`: `$VARIDEM_ADAPTER` or the best adapter.
    pub adapter: Option<String>,
    /// Kernel precision.
    pub precision: Precision,
    /// Neighbour-list capacity per particle (default [`DEFAULT_MAX_NEIGHBORS`], at most 64).
    pub max_neighbors: Option<u32>,
    /// Slots per grid bucket (default 16).
    pub bucket_capacity: Option<u32>,
    /// Bonds per chunk (default: as many as fit one storage binding); tests set it small
    /// to exercise chunking.
    pub max_chunk_bonds: Option<u32>,
    /// Particles per row chunk of the per-particle row buffers (neighbour rows, contact
    /// history, wall springs, `granular_out`). Default: as many as fit
    /// one storage binding; tests set it small to exercise row chunking.
    pub max_chunk_particles: Option<u32>,
    /// Storage-binding size to plan for, in bytes, when smaller than the adapter's
    /// `max_storage_buffer_binding_size`: tests pretend a small device to exercise the
    /// automatic chunk sizes and the [`Error::DeviceTooSmall`](crate::error::Error::DeviceTooSmall) refusal on small problems.
    pub max_binding_bytes: Option<u64>,
    /// Whether steps may end in `particle_forces_predict` (the next step's predict fused
    /// into this step's force pass). `None` or `Some(true)`: fused where possible;
    /// `Some(false)`: every step as separate kernels (the CLI's `VARIDEM_GPU_UNFUSED=1`).
    /// The results are the same bits either way (tested).
    pub fused: Option<bool>,
    /// Whether fused steps of granular scenes run the contact pass inside
    /// `particle_forces_predict` (one pass over particles and neighbours per step, and
    /// ≈ 60 B less traffic per particle-step) instead of in `granular_forces`. `None`:
    /// merged on every adapter but CPU ones (the CLI's `VARIDEM_GPU_MERGE` sets it), on
    /// which lavapipe ran the merged kernel at a median 0.81 of the split pair (README,
    /// GPU backend). The results are the same bits either way.
    pub merge_contacts: Option<bool>,
    /// Whether fused steps of bonded scenes compute each particle's bond terms inside
    /// `particle_forces_predict` (each bond by both ends, from its record and both ends'
    /// x and α) instead of `bond_forces` storing per-bond results that the particle
    /// kernel gathers: no per-bond result traffic (≈ 223 B less DRAM traffic per
    /// particle-step on the bonded block in f32, README) for twice the bond arithmetic. `None`:
    /// inline on every adapter but CPU ones (the CLI's `VARIDEM_GPU_INLINE_BONDS` sets
    /// it), where arithmetic rather than memory traffic bounds the step (README, GPU
    /// backend). The results are the same bits either way (tested).
    pub inline_bonds: Option<bool>,
    /// Whether bonds whose ends started with the same orientation are uploaded as
    /// compact records (28 B in f32 instead of 60 B, [`CompactBonds`](crate::gpu::layout::CompactBonds)), when every
    /// bond of the scene qualifies. `None` or `Some(true)`: when they qualify;
    /// `Some(false)`: never (tests compare the two; the results are the same bits).
    pub compact_bonds: Option<bool>,
    /// Stores the particles in a seeded random order at set-up (issue 44: a test hook;
    /// the results are the same bits as in id order, `tests/gpu_storage_order.rs`).
    /// `None`: id order.
    pub shuffle_storage: Option<u64>,
    /// `[simulation] sort_every` (issue 44): above 0, storage is sorted along the
    /// neighbour grid's cells at set-up (the CPU backend also at rebuilds). `None`:
    /// [`DEFAULT_SORT_EVERY`](crate::model::DEFAULT_SORT_EVERY); `Some(0)`: id order.
    /// The results are the same bits either way.
    pub sort_every: Option<u64>,
    /// Compacted storage in open systems (issue 44, `storage`): `Some(true)` stores only
    /// the particles in the system and the reserved ones due next where
    /// `model::layout::compacts` allows it; `Some(false)` stores every id (the
    /// reference the tests compare with); `None`: compacted.
    pub compact_storage: Option<bool>,
}

/// Default neighbour-list capacity: a monodisperse packing has at most 12 touching
/// neighbours, plus the skin's margin (the rows are split into chunks that fit the
/// storage-binding limit, so the capacity does not bound N).
pub const DEFAULT_MAX_NEIGHBORS: u32 = 24;

/// Environment variable: `1` compiles the kernels with wgpu's runtime bounds checks.
pub const CHECKED_ENV: &str = "VARIDEM_CHECKED_SHADERS";

/// Environment variable of the CLI: `1` runs every step as separate kernels (no
/// `particle_forces_predict`, [`PathSwitches::fused`]), for A/B measurements of the
/// fused step. The results are the same bits either way (tested).
pub const UNFUSED_ENV: &str = "VARIDEM_GPU_UNFUSED";

/// Environment variable of the CLI: `1` or `0` forces the bond terms of fused steps into
/// `particle_forces_predict` or out of it ([`GpuOptions::inline_bonds`]), for A/B
/// measurements. The results are the same bits either way (tested).
pub const INLINE_ENV: &str = "VARIDEM_GPU_INLINE_BONDS";

/// Environment variable of the CLI: `1` or `0` forces the granular contact pass of fused
/// steps into `particle_forces_predict` or out of it ([`GpuOptions::merge_contacts`]),
/// for A/B measurements. The results are the same bits either way (tested).
pub const MERGE_ENV: &str = "VARIDEM_GPU_MERGE";

/// The kernel-path switches of A/B measurements ([`UNFUSED_ENV`], [`MERGE_ENV`],
/// [`INLINE_ENV`]), as the CLI reads them from its environment; the library reads no
/// environment variable for them. `None`: the default path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathSwitches {
    /// [`GpuOptions::fused`].
    pub fused: Option<bool>,
    /// [`GpuOptions::merge_contacts`].
    pub merge_contacts: Option<bool>,
    /// [`GpuOptions::inline_bonds`].
    pub inline_bonds: Option<bool>,
}

impl PathSwitches {
    /// The switches in the variables `lookup` returns (`1` or `0`; anything else is
    /// the default path).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let flag = |name: &str| match lookup(name).as_deref() {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        Self {
            // VARIDEM_GPU_UNFUSED=1 turns fusing off.
            fused: flag(UNFUSED_ENV).and_then(|unfused| unfused.then_some(false)),
            merge_contacts: flag(MERGE_ENV),
            inline_bonds: flag(INLINE_ENV),
        }
    }

    /// Sets the switches that are not `None` in `options`.
    pub fn apply(&self, options: &mut GpuOptions) {
        options.fused = self.fused.or(options.fused);
        options.merge_contacts = self.merge_contacts.or(options.merge_contacts);
        options.inline_bonds = self.inline_bonds.or(options.inline_bonds);
    }
}

pub(super) fn checked_shaders() -> bool {
    std::env::var(CHECKED_ENV).is_ok_and(|v| v == "1")
}

/// The kernel paths a problem takes, from its model, the options and the adapter (see
/// each choice's function). The results are the same bits on every path (tested).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paths {
    /// Steps may end in `particle_forces_predict` (the next step's predict fused into
    /// this step's force pass): not when particles can be removed at the domain
    /// boundary, whose flag partners read in the same pass, nor when bonds can break
    /// (`bond_unload` runs between the kick and the next predict).
    pub fuse: bool,
    /// Fused steps run the contact pass in `particle_forces_predict`
    /// ([`granular_forces_merge`]).
    pub merged: bool,
    /// Fused steps compute the bond terms in `particle_forces_predict`
    /// ([`inline_bonds`]).
    pub inline: bool,
    /// Fused steps predict positions in place, so the next step commits none
    /// ([`direct_positions`]).
    pub direct: bool,
}

impl Paths {
    /// The paths of `model` split into `bond_chunks` bond chunks. Paths that pay on
    /// hardware but not on a CPU adapter (llvmpipe is bound by arithmetic, not memory
    /// traffic) are on by default everywhere but on `software` adapters.
    pub fn choose(model: &Model, options: &GpuOptions, bond_chunks: usize, software: bool) -> Self {
        let contact = model.contact.is_some();
        let hertz = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hertz));
        let hard = matches!(model.contact.map(|c| c.law), Some(ContactLaw::Hard(_)));
        let granular = !hard && (hertz || model.drag.is_some() || model.near_field.is_some());
        // Clump steps run clump_predict and clump_pose between the predict and the
        // forces, and clump_gather after them: never fused; nor are hard-contact steps
        // (shaders/hard.wgsl), which have no predict.
        // Nor are steps whose bonds can break (issue 47): a break's load is taken out
        // of the stored forces after the kick (`bond_unload`), before the next predict.
        let fuse = !model.domain.is_some_and(|d| d.remove)
            && model.clumps.is_empty()
            && !model.breakable()
            && !hard
            && options.fused != Some(false);
        let hardware = !software;
        let want_merge = options.merge_contacts.unwrap_or(hardware);
        let merged = granular_forces_merge(granular, fuse, bond_chunks, want_merge);
        let want_inline = options.inline_bonds.unwrap_or(hardware);
        let inline = inline_bonds(fuse, bond_chunks, want_inline);
        let direct = direct_positions(fuse, contact, hertz, merged, inline);
        Self {
            fuse,
            merged,
            inline,
            direct,
        }
    }
}

/// Whether fused steps merge the granular contact pass into `particle_forces_predict`
/// (one pass over particles and neighbours per step instead of two, and no `granular_out`
/// round trip): in granular models whose bonds, if any, fit one chunk. With several
/// bond chunks `bond_gather` keeps partial sums in `force` before
/// `particle_forces_predict` runs, where the contact pass needs the previous step's
/// `F_k`, so `granular_forces` runs on its own, before the bond kernels.
/// `want`: the choice of [`GpuOptions::merge_contacts`] (or its default).
fn granular_forces_merge(granular: bool, fuse: bool, bond_chunks: usize, want: bool) -> bool {
    granular && fuse && bond_chunks <= 1 && want
}

/// Whether fused steps can predict positions in place. `particle_forces_predict` goes
/// to `pos_next` (copied by `commit_pos` at the next step's start) only because
/// partners' positions may be read in the same dispatch: by the binder contact law
/// (bonded and contact scenes without Hertz contacts) or by a merged contact pass.
/// Otherwise every kernel reading partners' positions (bonds, `granular_forces`, the
/// grid) ran before it in the step, and the copy is a pass over the particles for
/// nothing: 24 B per particle-step in f32, and a dispatch.
fn direct_positions(fuse: bool, contact: bool, hertz: bool, merged: bool, inline: bool) -> bool {
    // Binder contacts are the contact law when Hertz is off.
    let binder_contacts = contact && !hertz;
    fuse && !merged && !inline && !binder_contacts
}

/// Whether fused steps compute the bond terms in `particle_forces_predict`
/// ([`GpuOptions::inline_bonds`]): in bonded models whose bonds fit one chunk (with
/// several, `bond_gather` sums earlier chunks into `force` before the particle kernel
/// runs, and the incidence list of one chunk does not reach the others' bonds).
/// `want`: the choice of [`GpuOptions::inline_bonds`] (or its default).
fn inline_bonds(fuse: bool, bond_chunks: usize, want: bool) -> bool {
    fuse && bond_chunks == 1 && want
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's A/B variables map onto the options; unset or other values leave the
    /// default path.
    #[test]
    fn path_switches_come_from_the_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(PathSwitches::from_lookup(env(&[])), PathSwitches::default());
        let s = PathSwitches::from_lookup(env(&[
            (UNFUSED_ENV, "1"),
            (MERGE_ENV, "0"),
            (INLINE_ENV, "1"),
        ]));
        assert_eq!(
            (s.fused, s.merge_contacts, s.inline_bonds),
            (Some(false), Some(false), Some(true))
        );
        // VARIDEM_GPU_UNFUSED=0 is the default (fused), not a request.
        assert_eq!(
            PathSwitches::from_lookup(env(&[(UNFUSED_ENV, "0"), (MERGE_ENV, "yes")])),
            PathSwitches::default()
        );
        let mut o = GpuOptions {
            inline_bonds: Some(false),
            ..GpuOptions::default()
        };
        s.apply(&mut o);
        assert_eq!(
            (o.fused, o.merge_contacts, o.inline_bonds),
            (Some(false), Some(false), Some(true))
        );
    }

    /// Positions are predicted in place exactly when no kernel of the fused force pass
    /// reads partners' positions after the predict has begun.
    #[test]
    fn direct_positions_only_without_partner_reads_in_the_predict_pass() {
        // Granular (Hertz) with the split contact pass: in place.
        assert!(direct_positions(true, true, true, false, false));
        // Merged contact pass: partners' positions read in the same dispatch.
        assert!(!direct_positions(true, true, true, true, false));
        // Inline bond terms: partners' positions read in the same dispatch.
        assert!(!direct_positions(true, true, true, false, true));
        assert!(!direct_positions(true, false, false, false, true));
        // Binder contacts (the bonded block): read in particle_forces_predict.
        assert!(!direct_positions(true, true, false, false, false));
        // No contacts at all (pendulum, torus, split bond kernels): in place.
        assert!(direct_positions(true, false, false, false, false));
        // Unfused steps predict in integrate_predict, in place already.
        assert!(!direct_positions(false, true, true, false, false));
        // Inline bond terms need fused steps and exactly one bond chunk.
        assert!(inline_bonds(true, 1, true));
        assert!(!inline_bonds(true, 0, true));
        assert!(!inline_bonds(true, 2, true));
        assert!(!inline_bonds(false, 1, true));
        assert!(!inline_bonds(true, 1, false));
        // The merge needs fused steps, a granular model and at most one bond chunk.
        assert!(granular_forces_merge(true, true, 1, true));
        assert!(!granular_forces_merge(true, true, 2, true));
        assert!(!granular_forces_merge(true, false, 0, true));
        assert!(!granular_forces_merge(false, true, 0, true));
        assert!(!granular_forces_merge(true, true, 0, false));
    }
}
