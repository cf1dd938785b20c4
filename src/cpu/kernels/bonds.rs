//! Twin of `shaders/bonds.wgsl`: kernel `bond_forces`, one binder result per bond
//! ([`crate::physics::bond_forces`], the WGSL `bond_law`).

use crate::cpu::breakage::{BondCheck, EvaluatedBreaks};
use crate::cpu::parallel::{run_chunks, MIN_CHUNK};
use crate::cpu::CpuBackend;
use crate::error::{Error, Fault, Result};
use crate::physics::binder::{self, LoadParts};
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
        // Broke at this very step (a restore), or the failure index reached 1: the
        // exact loads only for the bonds whose bound says they may break.
        let breaking = |k: usize, r: &BondResult, len: f64, c: &BondCheck| {
            c.broken_at == step
                || (binder::may_break(r, len, &c.coefficients)
                    && exact_failure(bonds, p, shear, k, &c.inverse) >= 1.0)
        };
        let kernel = |(lo, r): (usize, &mut [Option<BondResult>])| {
            let mut fault = None;
            let Some(s) = breakage else {
                // Bonds that cannot break: the law alone.
                for (l, o) in r.iter_mut().enumerate() {
                    *o = law::<false>(bonds, p, shear, lo + l).map(|(r, _)| r);
                    if o.is_none() && fault.is_none() {
                        fault = Some((lo + l, ()));
                    }
                }
                return fault;
            };
            let mut first_break = None;
            for (l, o) in r.iter_mut().enumerate() {
                let k = lo + l;
                let c = &s.checks[k];
                if c.broken_at < step {
                    *o = Some(BondResult::default());
                    continue;
                }
                match law::<false>(bonds, p, shear, k) {
                    None => {
                        *o = None;
                        if fault.is_none() {
                            fault = Some((k, ()));
                        }
                    }
                    Some((r, parts)) => {
                        if first_break.is_none() && breaking(k, &r, parts.len, c) {
                            first_break = Some((n + k, ()));
                        }
                        *o = Some(r);
                    }
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
                    let c = &s.checks[k];
                    if c.broken_at < step {
                        continue;
                    }
                    // The loads again (the kernel kept only the results): the same bits.
                    let Some((fresh, l)) = law::<true>(bonds, p, shear, k) else {
                        continue;
                    };
                    if !breaking(k, &fresh, l.len, c) {
                        continue;
                    }
                    if c.broken_at != step {
                        breaks.new.push((
                            k as u32,
                            l.loads(&bonds[k], separation(bonds, p, k)),
                            r.energy(),
                        ));
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

/// The exact failure index of bond `k`, its law computed again with its loads: for the
/// few bonds the energy bound ([`binder::may_break`]) does not clear (the same bits as
/// the kernel's law; kept out of the kernel's loop).
#[cold]
#[inline(never)]
fn exact_failure(
    bonds: &[crate::model::Bond],
    p: &crate::model::Particles,
    shear: crate::model::ShearForm,
    k: usize,
    inverse: &[f64; 4],
) -> f64 {
    law::<true>(bonds, p, shear, k).map_or(0.0, |(_, l)| {
        l.loads(&bonds[k], separation(bonds, p, k))
            .failure_index(inverse)
    })
}

/// `x_j − x_i` of bond `k`.
#[inline]
fn separation(bonds: &[crate::model::Bond], p: &crate::model::Particles, k: usize) -> glam::DVec3 {
    let b = &bonds[k];
    p.position[b.j as usize] - p.position[b.i as usize]
}

/// The law of bond `k` at the particles' state, with what its loads are made of when
/// `LOADS` (else its length only).
#[inline(always)]
fn law<const LOADS: bool>(
    bonds: &[crate::model::Bond],
    p: &crate::model::Particles,
    shear: crate::model::ShearForm,
    k: usize,
) -> Option<(BondResult, LoadParts)> {
    let b = &bonds[k];
    let (i, j) = (b.i as usize, b.j as usize);
    let (x_i, x_j, a_i, a_j) = (p.position[i], p.position[j], p.rotation[i], p.rotation[j]);
    if LOADS {
        physics::bond_forces_and_loads(b, x_i, x_j, a_i, a_j, shear)
    } else {
        physics::binder::bond_forces_and_length(b, x_i, x_j, a_i, a_j, shear).map(|(r, len)| {
            (
                r,
                LoadParts {
                    len,
                    ..LoadParts::default()
                },
            )
        })
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
