//! The kernels by name: [`KernelId`], one per WGSL entry point, with how each is bound
//! and dispatched (once, per bond chunk, per row chunk, by step parity).

/// A compute kernel (a WGSL entry point of `shaders/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelId {
    /// `step_begin`.
    StepBegin,
    /// `integrate_predict`.
    IntegratePredict,
    /// `commit_pos`.
    CommitPos,
    /// `bond_forces`.
    BondForces,
    /// `bond_forces_no_energy`.
    BondForcesNoEnergy,
    /// `bond_gather`.
    BondGather,
    /// `particle_forces`.
    ParticleForces,
    /// `particle_forces_predict`.
    ParticleForcesPredict,
    /// `granular_forces`.
    GranularForces,
    /// `granular_forces_no_energy`.
    GranularForcesNoEnergy,
    /// `grid_gate`.
    GridGate,
    /// `grid_clear`.
    GridClear,
    /// `grid_insert`.
    GridInsert,
    /// `neighbor_build`.
    NeighborBuild,
    /// `grid_finish`.
    GridFinish,
    /// `reduce_partials`.
    ReducePartials,
    /// `reduce_bond_partials`.
    ReduceBondPartials,
    /// `reduce_final`.
    ReduceFinal,
}

impl KernelId {
    /// Every kernel.
    pub const ALL: [KernelId; 18] = [
        Self::StepBegin,
        Self::IntegratePredict,
        Self::CommitPos,
        Self::BondForces,
        Self::BondForcesNoEnergy,
        Self::BondGather,
        Self::ParticleForces,
        Self::ParticleForcesPredict,
        Self::GranularForces,
        Self::GranularForcesNoEnergy,
        Self::GridGate,
        Self::GridClear,
        Self::GridInsert,
        Self::NeighborBuild,
        Self::GridFinish,
        Self::ReducePartials,
        Self::ReduceBondPartials,
        Self::ReduceFinal,
    ];

    /// Its WGSL entry point.
    pub fn entry_point(self) -> &'static str {
        match self {
            Self::StepBegin => "step_begin",
            Self::IntegratePredict => "integrate_predict",
            Self::CommitPos => "commit_pos",
            Self::BondForces => "bond_forces",
            Self::BondForcesNoEnergy => "bond_forces_no_energy",
            Self::BondGather => "bond_gather",
            Self::ParticleForces => "particle_forces",
            Self::ParticleForcesPredict => "particle_forces_predict",
            Self::GranularForces => "granular_forces",
            Self::GranularForcesNoEnergy => "granular_forces_no_energy",
            Self::GridGate => "grid_gate",
            Self::GridClear => "grid_clear",
            Self::GridInsert => "grid_insert",
            Self::NeighborBuild => "neighbor_build",
            Self::GridFinish => "grid_finish",
            Self::ReducePartials => "reduce_partials",
            Self::ReduceBondPartials => "reduce_bond_partials",
            Self::ReduceFinal => "reduce_final",
        }
    }

    /// The kernel of WGSL entry point `name`.
    pub fn from_entry_point(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.entry_point() == name)
    }

    /// Bound and dispatched once per bond chunk.
    pub fn bond_chunked(self) -> bool {
        matches!(
            self,
            Self::BondForces
                | Self::BondForcesNoEnergy
                | Self::BondGather
                | Self::ReduceBondPartials
        )
    }

    /// Bound and dispatched once per row chunk: the only kernels that touch the row
    /// buffers. Each reads and writes its own particle's rows only (no kernel reads a
    /// partner's neighbour or history row: both sides of a contact keep their own copy
    /// of its spring), so a chunk needs no other chunk's rows bound.
    pub fn row_chunked(self) -> bool {
        matches!(
            self,
            Self::IntegratePredict
                | Self::NeighborBuild
                | Self::GranularForces
                | Self::GranularForcesNoEnergy
                | Self::ParticleForces
                | Self::ParticleForcesPredict
        )
    }

    /// Row-chunked and also gathering (or computing) the last bond chunk's results: it
    /// gets that chunk's buffers in every row chunk's bind group.
    pub fn last_bond_chunk(self) -> bool {
        matches!(self, Self::ParticleForces | Self::ParticleForcesPredict)
    }

    /// Row-chunked and using the two copies of the contact history, the wall springs
    /// and the motion records by step parity: one set of bind groups per parity, whose
    /// `rows` uniform places the copy written at that parity at its `*_new` offsets.
    pub fn by_parity(self) -> bool {
        matches!(
            self,
            Self::GranularForces
                | Self::GranularForcesNoEnergy
                | Self::ParticleForcesPredict
                | Self::IntegratePredict
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shaders::KERNEL_FILES;

    /// Every entry point of every kernel file has its id, and every id its entry point.
    #[test]
    fn ids_and_entry_points_correspond() {
        let eps: Vec<&str> = KERNEL_FILES
            .iter()
            .flat_map(|f| f.entry_points.iter().copied())
            .collect();
        assert_eq!(eps.len(), KernelId::ALL.len());
        for ep in &eps {
            let k = KernelId::from_entry_point(ep).unwrap_or_else(|| panic!("{ep}"));
            assert_eq!(k.entry_point(), *ep);
        }
        for k in KernelId::ALL {
            assert!(!(k.bond_chunked() && k.row_chunked()), "{k:?}");
            assert!(!k.last_bond_chunk() || k.row_chunked(), "{k:?}");
            assert!(!k.by_parity() || k.row_chunked(), "{k:?}");
        }
    }
}
