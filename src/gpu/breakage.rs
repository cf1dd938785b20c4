//! Bond breakage on the GPU backend (issue 47): the host's log of the breaks the
//! device recorded, read back after an advance only when the device counted new ones
//! (`STATUS_BREAKS`), and the upload of a restored run's breaks.
//!
//! On the device a bond's break step is its status word (`STATUS_DETAIL + n + k`,
//! `u32::MAX` while it holds), and its loads and energy at the break are its break
//! record in its chunk's `bond_out`, after the results (`contract::BOND_BREAK_*`).

use super::bindings as bind;
use super::contract::{
    BOND_BREAK_ENERGY, BOND_BREAK_LOADS, BOND_BREAK_STRIDE, BOND_OUT_STRIDE, STATUS_BREAKS,
    STATUS_BROKE_STEP, STATUS_DETAIL,
};
use super::GpuBackend;
use crate::backend::BondBreak;
use crate::error::{Error, Result};
use crate::physics::binder::BondLoads;

/// The host's side of breakable bonds.
#[derive(Clone, Debug, Default)]
pub(super) struct Breakage {
    /// Every break read back so far, by step then bond.
    pub(super) log: Vec<BondBreak>,
    /// Whether each bond's break is in `log`.
    known: Vec<bool>,
    /// The device's break count when `log` was last brought up to date.
    counted: u32,
}

impl Breakage {
    /// No bond broken yet, of `bonds` bonds.
    pub(super) fn new(bonds: usize) -> Self {
        Self {
            log: Vec::new(),
            known: vec![false; bonds],
            counted: 0,
        }
    }

    /// Whether each bond is broken (by bond).
    pub(super) fn broken(&self) -> Vec<bool> {
        self.known.clone()
    }
}

impl GpuBackend {
    /// Byte offset of bond `k`'s status word.
    fn bond_word_offset(&self, k: usize) -> u64 {
        4 * (u64::from(STATUS_DETAIL) + u64::from(self.n) + k as u64)
    }

    /// Brings the host's log up to date with the device's break count `counted`
    /// (`STATUS_BREAKS` as just read): when it grew, reads every bond's status word
    /// and, one read-back per chunk that has some, the break records of the bonds new
    /// to the log, which join it in step then bond order.
    pub(super) fn sync_breaks(&mut self, counted: u32) -> Result<()> {
        let Some(b) = &self.breakage else {
            return Ok(());
        };
        if counted == b.counted {
            return Ok(());
        }
        let nb = self.model.bonds.len();
        let raw = self.read_buffer_at(
            &self.buffers[bind::STATUS as usize],
            self.bond_word_offset(0),
            4 * nb as u64,
        )?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&raw[..4 * nb]);
        let slot = bind_slot_of_bond_out()?;
        let rs = self.real_size() as u64;
        let stride = BOND_BREAK_STRIDE as usize;
        let l = BOND_BREAK_LOADS as usize;
        let mut new = Vec::new();
        let mut base = 0usize;
        // Chunk by chunk: one read-back of the break records of a chunk with new breaks.
        for (c, &len) in self.chunks.iter().enumerate() {
            let len = len as usize;
            let fresh: Vec<usize> = (base..base + len)
                .filter(|&k| words[k] != u32::MAX && !b.known[k])
                .collect();
            if !fresh.is_empty() {
                let bytes = self.read_buffer_at(
                    &self.chunk_buffers[c][slot],
                    u64::from(BOND_OUT_STRIDE) * len as u64 * rs,
                    (stride * len) as u64 * rs,
                )?;
                let r = self.reals_from_bytes(&bytes, stride * len);
                for k in fresh {
                    let rec = &r[stride * (k - base)..stride * (k - base + 1)];
                    let bond = &self.model.bonds[k];
                    new.push(BondBreak {
                        step: u64::from(words[k]),
                        bond: k as u32,
                        i: bond.i,
                        j: bond.j,
                        loads: BondLoads {
                            tension: rec[l],
                            shear: rec[l + 1],
                            bend: rec[l + 2],
                            twist: rec[l + 3],
                        },
                        energy: rec[BOND_BREAK_ENERGY as usize],
                    });
                }
            }
            base += len;
        }
        new.sort_by_key(|x| (x.step, x.bond));
        let Some(b) = &mut self.breakage else {
            return Ok(());
        };
        for x in &new {
            b.known[x.bond as usize] = true;
        }
        b.log.extend(new);
        b.counted = counted;
        Ok(())
    }

    /// Writes a restored run's breaks (`broken`, checked against the model) into the
    /// device's status words: each bond's break step, the count, and the last break's
    /// step (the set-up evaluation unloads the bonds that broke at the restored step,
    /// as the run that wrote the snapshot did). Their break records stay on the host.
    pub(super) fn upload_breaks(&mut self, broken: &[BondBreak]) -> Result<()> {
        crate::backend::check_breaks(&self.model, broken)?;
        let Some(b) = &mut self.breakage else {
            return Ok(());
        };
        b.log = broken.to_vec();
        for x in broken {
            b.known[x.bond as usize] = true;
        }
        b.counted = broken.len() as u32;
        let status = &self.buffers[bind::STATUS as usize];
        for x in broken {
            let step = u32::try_from(x.step).map_err(|_| {
                Error::Snapshot(format!(
                    "bond {} broke at step {}, past the GPU's 32-bit step count",
                    x.bond, x.step
                ))
            })?;
            self.ctx.queue.write_buffer(
                status,
                self.bond_word_offset(x.bond as usize),
                bytemuck::bytes_of(&step),
            );
        }
        let last = broken.last().map_or(u32::MAX, |x| x.step as u32);
        self.ctx.queue.write_buffer(
            status,
            4 * u64::from(STATUS_BREAKS),
            bytemuck::bytes_of(&(broken.len() as u32)),
        );
        self.ctx.queue.write_buffer(
            status,
            4 * u64::from(STATUS_BROKE_STEP),
            bytemuck::bytes_of(&last),
        );
        Ok(())
    }
}

/// The position of `bond_out` among a bond chunk's buffers.
fn bind_slot_of_bond_out() -> Result<usize> {
    super::bindings::CHUNK_BINDINGS
        .iter()
        .position(|&b| b == bind::BOND_OUT)
        .ok_or_else(|| Error::Backend("bond_out is not a per-chunk binding".into()))
}
