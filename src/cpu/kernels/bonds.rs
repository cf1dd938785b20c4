//! Twin of `shaders/bonds.wgsl`: kernel `bond_forces`, one binder result per bond
//! ([`crate::physics::bond_forces`], the WGSL `bond_law`).

use crate::cpu::breakage::{Breakage, EvaluatedBreaks};
use crate::cpu::parallel::{run_chunks, MIN_CHUNK};
use crate::cpu::CpuBackend;
use crate::error::{Error, Fault, Result};
use crate::physics::{self, BondResult};

impl CpuBackend {
    /// Kernel `bond_forces`: one [`BondResult`] per bond.
    ///
    /// With breakable bonds (issue 47): a bond that broke at an earlier step gives
    /// zero; a bond whose failure index
    /// ([`crate::physics::binder::BondLoads::failure_index`]) reaches 1 breaks here and
    /// is listed in `breaks` (bond order) with its loads and energy. Its result keeps
    /// its force and moments, which this evaluation's kick uses and
    /// [`CpuBackend::bond_unload`] then takes out of the stored forces, and loses its
    /// energies (they move to `e_broken`). A bond that broke at `step` itself (a
    /// restore at the break's step) is computed and unloaded the same way.
    pub(in crate::cpu) fn bond_forces(
        &self,
        out: &mut [Option<BondResult>],
        breaks: &mut EvaluatedBreaks,
        step: u64,
    ) -> Result<()> {
        let p = &self.model.particles;
        let shear = self.model.shear;
        let bonds = &self.model.bonds;
        let breakage = self.breakage.as_ref();
        let n = bonds.len();
        // Each chunk reports its first bond past a half turn (ranked first, the lowest
        // named) or else its first bond that breaks or broke at `step` (ranked after
        // every half turn).
        let chunks: Vec<_> = out
            .chunks_mut(MIN_CHUNK)
            .enumerate()
            .map(|(c, r)| (c * MIN_CHUNK, r))
            .collect();
        let breaking = |k: usize, r: &BondResult, s: &Breakage| {
            s.broken_at[k] == step || r.loads.failure_index(&s.inverse[k]) >= 1.0
        };
        let kernel = |(lo, r): (usize, &mut [Option<BondResult>])| {
            let mut fault = None;
            let mut first_break = None;
            for (l, o) in r.iter_mut().enumerate() {
                let k = lo + l;
                if breakage.is_some_and(|s| s.gone(k, step)) {
                    *o = Some(BondResult::default());
                    continue;
                }
                let b = &bonds[k];
                let (i, j) = (b.i as usize, b.j as usize);
                *o = physics::bond_forces(
                    b,
                    p.position[i],
                    p.position[j],
                    p.rotation[i],
                    p.rotation[j],
                    shear,
                );
                match (o, breakage) {
                    (None, _) if fault.is_none() => fault = Some((k, ())),
                    (Some(r), Some(s)) if first_break.is_none() && breaking(k, r, s) => {
                        first_break = Some((n + k, ()));
                    }
                    _ => {}
                }
            }
            fault.or(first_break)
        };
        breaks.clear();
        match run_chunks(chunks, n, kernel) {
            Some((first, ())) if first >= n => {
                // Rare (the steps where a bond breaks): the bonds from the first to
                // break on, in bond order.
                let Some(s) = breakage else {
                    return Ok(());
                };
                for (k, o) in out.iter_mut().enumerate().skip(first - n) {
                    let Some(r) = o.as_mut() else { continue };
                    if s.gone(k, step) || !breaking(k, r, s) {
                        continue;
                    }
                    if s.broken_at[k] != step {
                        breaks.new.push((k as u32, r.loads, r.energy()));
                    }
                    breaks.unload.push(k as u32);
                    (r.e_bend, r.e_axial, r.e_shear) = (0.0, 0.0, 0.0);
                }
                Ok(())
            }
            Some((bond, ())) => {
                let b = &bonds[bond];
                Err(Error::fault(
                    step,
                    Fault::BondHalfTurn {
                        bond,
                        i: b.i,
                        j: b.j,
                    },
                ))
            }
            None => Ok(()),
        }
    }
}

impl CpuBackend {
    /// Kernel `bond_unload` (the twin of `shaders/bonds.wgsl`'s): per particle, takes
    /// the results of its bonds that broke in this evaluation (`breaks.unload`) out of
    /// its stored force and moment, in ascending bond id, after the kick that used them
    /// ([`EvaluatedBreaks`]); their results become zero. Runs only after an
    /// evaluation in which a bond broke.
    pub(in crate::cpu) fn bond_unload(
        &self,
        bonds: &mut [Option<BondResult>],
        forces: &mut [crate::cpu::ParticleForce],
        breaks: &EvaluatedBreaks,
    ) {
        let inc = &self.incidence;
        let unloading = |k: u32| breaks.unload.binary_search(&k).is_ok();
        for (i, pf) in forces.iter_mut().enumerate() {
            for &e in &inc.entries[inc.offsets[i] as usize..inc.offsets[i + 1] as usize] {
                let k = e >> 1;
                if !unloading(k) {
                    continue;
                }
                let Some(r) = &bonds[k as usize] else {
                    continue;
                };
                if e & 1 == 0 {
                    pf.force -= r.force_i;
                    pf.moment -= r.moment_i;
                } else {
                    pf.force += r.force_i;
                    pf.moment -= r.moment_j;
                }
            }
        }
        for &k in &breaks.unload {
            bonds[k as usize] = Some(BondResult::default());
        }
    }
}
