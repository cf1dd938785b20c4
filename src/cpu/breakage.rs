//! Bond breakage on the CPU backend (issue 47): which bonds are broken, every break so
//! far, and the strengths the kernel `bond_forces` compares the loads with.

use crate::backend::{check_breaks, BondBreak};
use crate::error::Result;
use crate::model::Model;
use crate::physics::binder::BondLoads;

/// A bond found broken by one force evaluation: its index, the loads that broke it and
/// the energy it held.
pub(super) type NewBreak = (u32, BondLoads, f64);

/// What one force evaluation found of the bonds that break (issue 47).
///
/// A bond that breaks in the evaluation of state `n` still acts in that evaluation's
/// kick (the correction to `v_n`), and its load is then taken out of the stored forces
/// of state `n` (kernel `bond_unload`), which the next
/// step's predict uses: the state `(x_n, v_n)` is the one the bonded system reached,
/// and the system without the bond starts from it. So `e_total + e_broken` (the
/// bond's energy at `x_n` moved to `e_broken`) is continuous at the break, and
/// conserved after it as well as the integrator conserves energy.
#[derive(Clone, Debug, Default)]
pub(super) struct EvaluatedBreaks {
    /// The bonds that broke in this evaluation, in bond order.
    pub(super) new: Vec<NewBreak>,
    /// The bonds whose load is taken out after the gather, in bond order: the new
    /// ones, and at a restore those that broke at the snapshot's own step.
    pub(super) unload: Vec<u32>,
}

impl EvaluatedBreaks {
    /// Forgets a previous evaluation's bonds.
    pub(super) fn clear(&mut self) {
        self.new.clear();
        self.unload.clear();
    }
}

/// What the kernel `bond_forces` compares one bond with.
#[derive(Clone, Copy, Debug)]
pub(super) struct BondCheck {
    /// The inverse strengths ([`crate::model::BondStrength::inverse`]).
    pub(super) inverse: [f64; 4],
    /// The energy bound's coefficients
    /// ([`crate::physics::binder::break_coefficients`]).
    pub(super) coefficients: [f64; 3],
    /// The step at which the bond broke, `u64::MAX` while it holds.
    pub(super) broken_at: u64,
}

/// The breakage state of a model whose bonds can break ([`Model::breakable`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Breakage {
    /// Each bond's inverse strengths and break step, read together by the kernel.
    pub(super) checks: Vec<BondCheck>,
    /// Every break so far, by step then bond.
    pub(super) log: Vec<BondBreak>,
    /// Each bond's ends by id (the backend's bonds name storage slots).
    ends: Vec<(u32, u32)>,
}

impl Breakage {
    /// The state of `model` with no bond broken; `None` when no bond can break.
    pub(super) fn new(model: &Model) -> Option<Self> {
        model.breakable().then(|| Self {
            checks: (model.bond_strength.iter().zip(&model.bonds))
                .map(|(s, b)| {
                    let inverse = s.inverse();
                    BondCheck {
                        inverse,
                        coefficients: crate::physics::binder::break_coefficients(b, &inverse),
                        broken_at: u64::MAX,
                    }
                })
                .collect(),
            log: Vec::new(),
            ends: model.bonds.iter().map(|b| (b.i, b.j)).collect(),
        })
    }

    /// Restores the breaks of a snapshot, checking each names a bond of `model` (its
    /// bonds by id) by its ends, once, in step then bond order.
    pub(super) fn restore(&mut self, model: &Model, broken: &[BondBreak]) -> Result<()> {
        check_breaks(model, broken)?;
        for b in broken {
            self.checks[b.bond as usize].broken_at = b.step;
        }
        self.log = broken.to_vec();
        Ok(())
    }

    /// Records the bonds one evaluation at `step` found broken, in bond order.
    pub(super) fn record(&mut self, step: u64, new: &[NewBreak]) {
        for &(k, loads, energy) in new {
            let (i, j) = self.ends[k as usize];
            self.checks[k as usize].broken_at = step;
            self.log.push(BondBreak {
                step,
                bond: k,
                i,
                j,
                loads,
                energy,
            });
        }
    }
}
