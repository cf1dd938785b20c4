//! Timestamp queries around every dispatch (issue 43): while a profile is recorded,
//! each dispatch of a submission is bracketed by two timestamps, the query set is
//! resolved at the submission's end and read back, and the differences are summed by
//! kernel family ([`crate::backend::profile`]). Needs `TIMESTAMP_QUERY` and
//! `TIMESTAMP_QUERY_INSIDE_PASSES`; nothing is recorded, and no dispatch changes,
//! unless a profile is asked for.

use std::sync::Mutex;

use super::kernels::KernelId;
use crate::backend::profile::{FamilyTime, KernelProfile, KERNEL_FAMILIES};

/// Timestamps one submission holds: two per dispatch.
const QUERIES: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// The family a kernel's time is reported under (an index into [`KERNEL_FAMILIES`]).
pub(super) fn family(kernel: KernelId) -> usize {
    use KernelId as K;
    match kernel {
        K::StepBegin | K::IntegratePredict | K::CommitPos | K::ClumpPredict | K::ClumpPose => 0,
        K::GridGate | K::GridClear | K::GridInsert | K::NeighborBuild | K::GridFinish => 1,
        K::GranularForces | K::GranularForcesNoEnergy | K::MeshPlace => 2,
        K::BondForces | K::BondForcesNoEnergy | K::BondGather | K::BondUnload => 3,
        K::ParticleForces | K::ParticleForcesPredict | K::ClumpGather => 4,
        K::ReducePartials | K::ReduceBondPartials | K::ReduceFinal => 6,
        _ => 5,
    }
}

/// The device's timestamp features, both needed to time dispatches inside a pass.
pub(super) fn features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
}

/// The query set, its resolve buffer, and what the submission being encoded dispatched.
#[derive(Debug)]
pub(super) struct Profiler {
    set: wgpu::QuerySet,
    /// Where the set is resolved: 8 bytes a query.
    pub(super) resolve: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    /// The timed kernels of the submission being encoded, in dispatch order.
    marks: Mutex<Vec<KernelId>>,
    /// Dispatches of the submission beyond the set's capacity.
    untimed: Mutex<u64>,
    /// What the collected submissions measured.
    totals: Mutex<KernelProfile>,
}

impl Profiler {
    /// A profiler on `device`, or `None` without the timestamp features.
    pub(super) fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Self> {
        if !device.features().contains(features()) {
            return None;
        }
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("varidem timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: QUERIES,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("varidem timestamps resolved"),
            size: u64::from(QUERIES) * wgpu::QUERY_SIZE as u64,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Self {
            set,
            resolve,
            period_ns: f64::from(queue.get_timestamp_period()),
            marks: Mutex::new(Vec::new()),
            untimed: Mutex::new(0),
            totals: Mutex::new(KernelProfile::default()),
        })
    }

    /// Runs `dispatch` on `pass`, between two timestamps while the set has room.
    pub(super) fn around(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: KernelId,
        dispatch: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) {
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        let k = marks.len() as u32;
        if 2 * k + 2 > QUERIES {
            drop(marks);
            dispatch(pass);
            *self.untimed.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            return;
        }
        pass.write_timestamp(&self.set, 2 * k);
        dispatch(pass);
        pass.write_timestamp(&self.set, 2 * k + 1);
        marks.push(kernel);
    }

    /// Resolves the submission's timestamps into [`Self::resolve`], after its passes;
    /// returns how many were written.
    pub(super) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) -> u32 {
        let queries = 2 * self.marks.lock().unwrap_or_else(|e| e.into_inner()).len() as u32;
        if queries > 0 {
            encoder.resolve_query_set(&self.set, 0..queries, &self.resolve, 0);
        }
        queries
    }

    /// What the collected submissions measured (steps and wall time left to the caller).
    pub(super) fn totals(self) -> KernelProfile {
        self.totals.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the submission's resolved timestamps (`raw`, 8 bytes each) to the totals
    /// and starts the next submission afresh.
    pub(super) fn collect(&self, raw: &[u8]) {
        let mut into = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        if into.families.is_empty() {
            into.families = KERNEL_FAMILIES
                .iter()
                .map(|&family| FamilyTime {
                    family,
                    ..FamilyTime::default()
                })
                .collect();
        }
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        let ticks: Vec<u64> = raw
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        for (k, &kernel) in marks.iter().enumerate() {
            let (Some(&a), Some(&b)) = (ticks.get(2 * k), ticks.get(2 * k + 1)) else {
                continue;
            };
            let f = &mut into.families[family(kernel)];
            f.seconds += b.saturating_sub(a) as f64 * self.period_ns * 1e-9;
            f.dispatches += 1;
        }
        marks.clear();
        let mut untimed = self.untimed.lock().unwrap_or_else(|e| e.into_inner());
        into.untimed_dispatches += *untimed;
        *untimed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_a_family_named_after_its_job() {
        for k in KernelId::ALL {
            let f = KERNEL_FAMILIES[family(k)];
            let entry = k.entry_point();
            let expected = if entry.starts_with("hard_") {
                "hard solver"
            } else if entry.starts_with("reduce_") {
                "reductions"
            } else if entry.starts_with("bond_") {
                "bonds"
            } else if entry.starts_with("grid_") || entry == "neighbor_build" {
                "grid"
            } else if entry.starts_with("granular_") || entry.starts_with("mesh_") {
                "contacts"
            } else if entry.starts_with("particle_forces") || entry == "clump_gather" {
                "forces"
            } else {
                "predict"
            };
            assert_eq!(f, expected, "{entry}");
        }
    }
}
