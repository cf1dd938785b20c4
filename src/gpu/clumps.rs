//! The clumps' state on the device (issue 24): the bodies' records of `body` (section
//! `O_CLUMP`, [`contract::CLUMP_RECORD`] vec4 each) read back into the host's
//! [`Bodies`], whose rows and energies the outputs use, and written for checkpoints
//! and restored from them. The kernels are `shaders/clumps.wgsl`.

use glam::DVec3;

use super::buffers::vec3s;
use super::{bind, contract, GpuBackend, Precision};
use crate::backend::{BackendKind, BodyState, StateSnapshot};
use crate::error::{Error, Result};
use crate::integrators::bodies::Bodies;

/// The state of the bodies for a checkpoint: each body's state, and in `f32` the Kahan
/// terms of x, v and the spin (9 per body) and x relative to the device origin (3 per
/// body).
pub(super) type BodySnapshot = (Vec<BodyState>, Vec<f32>, Vec<f32>);

impl GpuBackend {
    /// Byte offset of the clumps' records in `body`.
    fn clump_offset(&self) -> u64 {
        u64::from(self.sections.clump_state) * 4 * self.real_size() as u64
    }

    /// Every body's record as it is on the device: [`contract::CLUMP_RECORD`] vectors
    /// per body (the xyz of each vec4).
    fn read_records(&self) -> Result<Vec<DVec3>> {
        let rs = self.real_size();
        let reals = 4 * contract::CLUMP_RECORD as usize * self.sections.bodies as usize;
        let raw = self.read_buffer_at(
            &self.buffers[bind::BODY as usize],
            self.clump_offset(),
            (reals * rs) as u64,
        )?;
        Ok(vec3s(&self.reals_from_bytes(&raw, reals), 4))
    }

    /// The absolute centre of mass of a record: `(x − c) + O` (exact in `f64`; `c` is
    /// zero in `f64` builds).
    fn absolute_body_x(&self, x: DVec3, c: DVec3) -> DVec3 {
        let x = x - c;
        if self.origin == DVec3::ZERO {
            x
        } else {
            x + self.origin
        }
    }

    /// The bodies with their state as the device holds it (absolute coordinates),
    /// or `None` without clumps.
    pub(super) fn read_bodies(&mut self) -> Result<Option<&Bodies>> {
        if self.sections.bodies == 0 {
            return Ok(self.bodies.as_ref());
        }
        let records = self.read_records()?;
        let xs: Vec<DVec3> = records
            .chunks_exact(contract::CLUMP_RECORD as usize)
            .map(|r| {
                self.absolute_body_x(
                    r[contract::CLUMP_X as usize],
                    r[contract::CLUMP_CX as usize],
                )
            })
            .collect();
        let Some(bodies) = self.bodies.as_mut() else {
            return Ok(None);
        };
        let slots = contract::CLUMP_RECORD as usize;
        for (b, r) in records.chunks_exact(slots).enumerate() {
            let at = |slot: u32| r[slot as usize];
            let s = &mut bodies.state[b];
            s.x = xs[b];
            s.v = at(contract::CLUMP_V);
            s.alpha = at(contract::CLUMP_A);
            s.omega = at(contract::CLUMP_SPIN);
            bodies.load[b] = (at(contract::CLUMP_F), at(contract::CLUMP_M));
        }
        Ok(Some(bodies))
    }

    /// The bodies' part of a checkpoint ([`BodySnapshot`]); empty without clumps.
    pub(super) fn body_snapshot(&self) -> Result<BodySnapshot> {
        if self.sections.bodies == 0 {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        }
        let records = self.read_records()?;
        let mut out = (Vec::new(), Vec::new(), Vec::new());
        let narrow = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
        for r in records.chunks_exact(contract::CLUMP_RECORD as usize) {
            let at = |slot: u32| r[slot as usize];
            out.0.push(BodyState {
                x: self.absolute_body_x(at(contract::CLUMP_X), at(contract::CLUMP_CX)),
                v: at(contract::CLUMP_V),
                alpha: at(contract::CLUMP_A),
                spin: at(contract::CLUMP_SPIN),
                force: at(contract::CLUMP_F),
                moment: at(contract::CLUMP_M),
            });
            if self.precision == Precision::F32 {
                for slot in [
                    contract::CLUMP_CX,
                    contract::CLUMP_CV,
                    contract::CLUMP_CSPIN,
                ] {
                    out.1.extend(narrow(at(slot)));
                }
                out.2.extend(narrow(at(contract::CLUMP_X)));
            }
        }
        Ok(out)
    }

    /// Uploads the bodies' state of `snapshot` (after the set-up evaluation, whose
    /// loads it replaces). An `f32` GPU state restored in `f32` gets its device
    /// coordinates and Kahan terms back as stored, so the run continues with the same
    /// bits; any other state is placed as at set-up (x relative to the origin, its
    /// rounding as its Kahan term, the others zero).
    pub(super) fn restore_bodies(&mut self, snapshot: &StateSnapshot) -> Result<()> {
        let n = self.sections.bodies as usize;
        if n == 0 {
            return Ok(());
        }
        if snapshot.bodies.len() != n {
            return Err(Error::Snapshot(format!(
                "the snapshot has {} clumps but the scene has {n}",
                snapshot.bodies.len()
            )));
        }
        let exact = self.precision == Precision::F32
            && snapshot.backend == BackendKind::Gpu
            && snapshot.precision == Precision::F32
            && snapshot.body_compensation.len() == 9 * n
            && snapshot.body_device_position.len() == 3 * n;
        let f32_round = |v: DVec3| v.as_vec3().as_dvec3();
        let mut flat = Vec::with_capacity(4 * contract::CLUMP_RECORD as usize * n);
        for (b, s) in snapshot.bodies.iter().enumerate() {
            let mut r = [DVec3::ZERO; contract::CLUMP_RECORD as usize];
            let mut set = |slot: u32, v: DVec3| r[slot as usize] = v;
            if exact {
                let c = &snapshot.body_compensation[9 * b..9 * b + 9];
                let d = &snapshot.body_device_position[3 * b..3 * b + 3];
                let v3 = |a: &[f32]| DVec3::new(a[0].into(), a[1].into(), a[2].into());
                set(contract::CLUMP_X, v3(d));
                set(contract::CLUMP_CX, v3(&c[0..3]));
                set(contract::CLUMP_CV, v3(&c[3..6]));
                set(contract::CLUMP_CSPIN, v3(&c[6..9]));
            } else {
                let x = s.x - self.origin;
                set(contract::CLUMP_X, x);
                if self.precision == Precision::F32 {
                    set(contract::CLUMP_CX, f32_round(x) - x);
                }
            }
            set(contract::CLUMP_V, s.v);
            set(contract::CLUMP_A, s.alpha);
            set(contract::CLUMP_A_OLD, s.alpha);
            set(contract::CLUMP_SPIN, s.spin);
            set(contract::CLUMP_F, s.force);
            set(contract::CLUMP_M, s.moment);
            flat.extend(r.iter().flat_map(|v| v.extend(0.0).to_array()));
        }
        self.ctx.queue.write_buffer(
            &self.buffers[bind::BODY as usize],
            self.clump_offset(),
            &self.real_bytes(&flat),
        );
        self.read_bodies().map(|_| ())
    }
}
