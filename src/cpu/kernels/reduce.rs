//! Twin of `shaders/reduce.wgsl`: the potential energies summed over bonds and
//! particles in id order (whatever the storage) (the kinetic terms are
//! [`crate::diagnostics::kinematic`]).

use crate::cpu::CpuBackend;
use crate::diagnostics::Potentials;

impl CpuBackend {
    pub(in crate::cpu) fn potentials(&self) -> Potentials {
        let mut pot = Potentials::default();
        for r in self.forces.bonds.iter().flatten() {
            pot.bend += r.e_bend;
            pot.axial += r.e_axial;
            pot.shear += r.e_shear;
        }
        let f = &self.forces.particles;
        let layout = &self.storage.layout;
        for f in layout.slots_by_id(layout.id_count(f.len())).map(|s| &f[s]) {
            pot.contact += f.e_contact;
            pot.wall += f.e_wall;
            pot.near_field += f.e_near;
        }
        pot
    }
}
