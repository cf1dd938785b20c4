//! The clumps' state read back from the device (issue 24): the bodies' records of
//! `body` (section `O_CLUMP`, [`contract::CLUMP_RECORD`] vec4 each) into the host's
//! [`Bodies`], whose rows and energies the outputs use. The kernels are
//! `shaders/clumps.wgsl`.

use glam::DVec3;

use super::buffers::vec3s;
use super::{bind, contract, GpuBackend};
use crate::error::Result;
use crate::integrators::bodies::Bodies;

impl GpuBackend {
    /// The bodies with their state as the device holds it (absolute coordinates),
    /// or `None` without clumps.
    pub(super) fn read_bodies(&mut self) -> Result<Option<&Bodies>> {
        let count = self.sections.bodies as usize;
        if count == 0 {
            return Ok(self.bodies.as_ref());
        }
        let rs = self.real_size();
        let stride = 4 * contract::CLUMP_RECORD as usize;
        let reals = stride * count;
        let raw = self.read_buffer_at(
            &self.buffers[bind::BODY as usize],
            u64::from(self.sections.clump_state) * 4 * rs as u64,
            (reals * rs) as u64,
        )?;
        let records = vec3s(&self.reals_from_bytes(&raw, reals), 4);
        let origin = self.origin;
        let Some(bodies) = self.bodies.as_mut() else {
            return Ok(None);
        };
        let slots = contract::CLUMP_RECORD as usize;
        for (b, r) in records.chunks_exact(slots).enumerate() {
            let at = |slot: u32| r[slot as usize];
            // x − c is exact in f64 (c is zero in f64 builds); the origin as positions'.
            let x = at(contract::CLUMP_X) - at(contract::CLUMP_CX);
            let s = &mut bodies.state[b];
            s.x = if origin == DVec3::ZERO { x } else { x + origin };
            s.v = at(contract::CLUMP_V);
            s.alpha = at(contract::CLUMP_A);
            s.omega = at(contract::CLUMP_SPIN);
            bodies.load[b] = (at(contract::CLUMP_F), at(contract::CLUMP_M));
        }
        Ok(Some(bodies))
    }
}
