//! Twin of `shaders/bonds.wgsl`: kernel `bond_forces`, one binder result per bond
//! ([`crate::physics::bond_forces`], the WGSL `bond_law`).

use crate::cpu::parallel::{run_chunks, MIN_CHUNK};
use crate::cpu::CpuBackend;
use crate::error::{Error, Fault, Result};
use crate::physics::{self, BondResult};

impl CpuBackend {
    /// Kernel `bond_forces`: one [`BondResult`] per bond.
    pub(in crate::cpu) fn bond_forces(
        &self,
        out: &mut [Option<BondResult>],
        step: u64,
    ) -> Result<()> {
        let p = &self.model.particles;
        let shear = self.model.shear;
        let bonds = &self.model.bonds;
        // Each chunk reports its first bond past a half turn; the lowest is named.
        let chunks: Vec<_> = out
            .chunks_mut(MIN_CHUNK)
            .enumerate()
            .map(|(c, r)| (c * MIN_CHUNK, r))
            .collect();
        let kernel = |(lo, r): (usize, &mut [Option<BondResult>])| {
            let mut fault = None;
            for (l, o) in r.iter_mut().enumerate() {
                let b = &bonds[lo + l];
                let (i, j) = (b.i as usize, b.j as usize);
                *o = physics::bond_forces(
                    b,
                    p.position[i],
                    p.position[j],
                    p.rotation[i],
                    p.rotation[j],
                    shear,
                );
                if o.is_none() && fault.is_none() {
                    fault = Some((lo + l, ()));
                }
            }
            fault
        };
        match run_chunks(chunks, bonds.len(), kernel) {
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
