//! Where a GPU step's time goes (issue 43): device execution time per kernel family,
//! measured with timestamp queries around every dispatch, and the dispatch count.

/// The kernel families a step's time is reported by, in step order.
pub const KERNEL_FAMILIES: [&str; 7] = [
    "predict",
    "grid",
    "contacts",
    "bonds",
    "forces",
    "hard solver",
    "reductions",
];

/// GPU execution time and dispatches of one kernel family over the profiled steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FamilyTime {
    /// One of [`KERNEL_FAMILIES`].
    pub family: &'static str,
    /// Summed execution time of its dispatches (s): from the timestamp written before
    /// each dispatch to the one written after it.
    pub seconds: f64,
    /// Dispatches timed.
    pub dispatches: u64,
}

/// What [`Backend::kernel_profile`](crate::backend::Backend::kernel_profile) measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelProfile {
    /// Steps profiled.
    pub steps: u64,
    /// Wall time of the profiled steps (s): each was submitted and waited for alone, so
    /// this is slower than the unprofiled rate.
    pub wall_seconds: f64,
    /// Every family of [`KERNEL_FAMILIES`], in that order (zero where none ran).
    pub families: Vec<FamilyTime>,
    /// Dispatches encoded beyond what one query set holds in a submission, and so not
    /// timed (0 normally; a hard-contact step with many sweeps can exceed it).
    pub untimed_dispatches: u64,
}

impl KernelProfile {
    /// Summed GPU time of every family (s).
    pub fn gpu_seconds(&self) -> f64 {
        self.families.iter().map(|f| f.seconds).sum()
    }

    /// Dispatches per profiled step, timed or not.
    pub fn dispatches_per_step(&self) -> f64 {
        let all: u64 =
            self.families.iter().map(|f| f.dispatches).sum::<u64>() + self.untimed_dispatches;
        all as f64 / self.steps.max(1) as f64
    }

    /// One line per family: its GPU time per step, its share, its dispatches per step.
    pub fn lines(&self) -> Vec<String> {
        let total = self.gpu_seconds();
        let steps = self.steps.max(1) as f64;
        self.families
            .iter()
            .filter(|f| f.dispatches > 0)
            .map(|f| {
                format!(
                    "{}: {:.3} ms/step ({:.1} %), {:.1} dispatches/step",
                    f.family,
                    1e3 * f.seconds / steps,
                    if total > 0.0 {
                        100.0 * f.seconds / total
                    } else {
                        0.0
                    },
                    f.dispatches as f64 / steps
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_counts() {
        let p = KernelProfile {
            steps: 4,
            wall_seconds: 1.0,
            families: vec![
                FamilyTime {
                    family: "predict",
                    seconds: 0.004,
                    dispatches: 8,
                },
                FamilyTime {
                    family: "forces",
                    seconds: 0.012,
                    dispatches: 4,
                },
                FamilyTime {
                    family: "bonds",
                    seconds: 0.0,
                    dispatches: 0,
                },
            ],
            untimed_dispatches: 4,
        };
        assert!((p.gpu_seconds() - 0.016).abs() < 1e-15);
        assert_eq!(p.dispatches_per_step(), 4.0);
        let lines = p.lines();
        assert_eq!(lines.len(), 2, "families that never ran are left out");
        assert_eq!(
            lines[0],
            "predict: 1.000 ms/step (25.0 %), 2.0 dispatches/step"
        );
        assert_eq!(
            lines[1],
            "forces: 3.000 ms/step (75.0 %), 1.0 dispatches/step"
        );
    }
}
