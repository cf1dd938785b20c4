//! The Hertz–Mindlin law on [`LANES`] touching pairs at a time, stored component by
//! component so that the compiler vectorises it (SIMD); the same bits as one
//! [`hertz_contact`](crate::physics::granular::hertz_contact) per pair.

use glam::DVec3;

use super::contact_history::{PairSpring, RollSlot, SLOT_ACTIVE};
use super::contact_sides::SideScratch;
use super::kernels::granular::PairSlot;
use crate::model::RollingModel;
use crate::physics::granular::{
    contact_core, hertz_core, ContactGeometry, ContactResult, HertzInputs, PairMaterial,
};
use crate::physics::rolling::{rolling_inertia, rolling_torque, RollingInputs};

/// Contacts per batch of the pair kernel: 8 `f64` lanes fill two AVX2 registers (or
/// one AVX-512 register) per operation.
pub(in crate::cpu) const LANES: usize = 8;

/// Three components of `LANES` vectors.
type Lanes3 = [[f64; LANES]; 3];

/// Touching pairs queued for [`GranularInputs::granular_pairs`](super::kernels::granular::GranularInputs::granular_pairs), stored component by component
/// (structure of arrays) so that the lane loop of [`PairBatch::compute`] vectorizes.
#[derive(Clone, Debug, Default)]
pub(in crate::cpu) struct PairBatch {
    /// Queued pairs.
    pub(in crate::cpu) len: usize,
    /// Slot of each pair in the caller's `out`.
    pub(in crate::cpu) slot: [usize; LANES],
    /// `x_b − x_a`.
    pub(in crate::cpu) d: Lanes3,
    /// `|x_b − x_a|²`.
    pub(in crate::cpu) dist2: [f64; LANES],
    /// Radii of `a` and `b`.
    pub(in crate::cpu) r: [[f64; LANES]; 2],
    /// Masses of `a` and `b`.
    pub(in crate::cpu) mass: [[f64; LANES]; 2],
    /// Pair material: `E*`, `G*`, `ξ`, `μ_s`, `μ_d`, `μ_r`, `η_r`, `γ`.
    pub(in crate::cpu) pm: [[f64; LANES]; 8],
    /// `v_a − v_b`.
    pub(in crate::cpu) rel_v: Lanes3,
    /// `Δx_a − Δx_b`.
    pub(in crate::cpu) rel_dx: Lanes3,
    /// `Δα_a`.
    pub(in crate::cpu) dalpha_a: Lanes3,
    /// `Δα_b`.
    pub(in crate::cpu) dalpha_b: Lanes3,
    /// Old spring.
    pub(in crate::cpu) spring: Lanes3,
    /// Old rolling spring (with rolling resistance).
    pub(in crate::cpu) roll_spring: Lanes3,
    /// Results: force on `a`, `n × f_t`, new spring.
    pub(in crate::cpu) out3: [Lanes3; 3],
    /// Results: energy, overlap, normal force `f_n` and contact radius `a`.
    pub(in crate::cpu) out1: [[f64; LANES]; 4],
    /// Rolling resistance: the model and the time step (EPSD's dashpot); `None`
    /// without ([`crate::model::Model::rolling`]).
    pub(in crate::cpu) rolling: Option<(RollingModel, f64)>,
    /// Every lane has the same pair material, set once ([`PairBatch::set_material`]):
    /// `push` does not copy it.
    pub(in crate::cpu) uniform: bool,
    /// JKR cohesion in the model ([`crate::model::Model::jkr`]): the lanes run the
    /// branching law [`contact_core`] (a pair with a surface energy follows JKR).
    pub(in crate::cpu) jkr: bool,
}

impl PairBatch {
    /// Sets pair material `pm` in every lane, for good: the batch then serves only
    /// pairs of that material.
    pub(in crate::cpu) fn set_material(&mut self, pm: &PairMaterial) {
        for (f, v) in self.pm.iter_mut().zip(Self::material_fields(pm)) {
            *f = [v; LANES];
        }
        self.uniform = true;
    }

    /// The fields of `pm` the lanes hold, in the order of [`PairBatch::pm`].
    fn material_fields(pm: &PairMaterial) -> [f64; 8] {
        [
            pm.e_star, pm.g_star, pm.xi, pm.mu_s, pm.mu_d, pm.mu_r, pm.eta_r, pm.gamma,
        ]
    }

    /// Queues the touching pair `(a, b)` for slot `slot`.
    #[expect(
        clippy::too_many_arguments,
        reason = "a queued pair's fields, pushed into the batch's columns"
    )]
    #[inline]
    pub(in crate::cpu) fn push(
        &mut self,
        slot: usize,
        d: DVec3,
        dist2: f64,
        a: &SideScratch,
        b: &SideScratch,
        pm: &PairMaterial,
        (spring, roll_spring): (DVec3, DVec3),
    ) {
        let l = self.len;
        self.slot[l] = slot;
        let set = |v: &mut Lanes3, x: DVec3| {
            v[0][l] = x.x;
            v[1][l] = x.y;
            v[2][l] = x.z;
        };
        set(&mut self.d, d);
        self.dist2[l] = dist2;
        self.r[0][l] = a.side.r;
        self.r[1][l] = b.side.r;
        self.mass[0][l] = a.mass;
        self.mass[1][l] = b.mass;
        if self.uniform {
            // Only pairs of the material set in every lane may be queued.
            debug_assert!(self
                .pm
                .iter()
                .zip(Self::material_fields(pm))
                .all(|(f, v)| f[l] == v));
        } else {
            for (f, v) in self.pm.iter_mut().zip(Self::material_fields(pm)) {
                f[l] = v;
            }
        }
        // The differences hertz_contact forms first, formed the same way.
        set(&mut self.rel_v, a.side.v - b.side.v);
        set(&mut self.rel_dx, a.side.dx - b.side.dx);
        set(&mut self.dalpha_a, a.side.dalpha);
        set(&mut self.dalpha_b, b.side.dalpha);
        set(&mut self.spring, spring);
        set(&mut self.roll_spring, roll_spring);
        self.len += 1;
    }

    /// Computes the queued pairs, stores them in their slots of `out` (and, with
    /// rolling resistance, their rolling torques and springs in `rolls`) and empties
    /// the queue.
    pub(in crate::cpu) fn run(
        &mut self,
        out: &mut [PairSlot],
        springs: &mut [PairSpring],
        rolls: &mut [RollSlot],
    ) {
        if self.len == 0 {
            return;
        }
        self.compute();
        let v3 = |v: &Lanes3, l: usize| DVec3::new(v[0][l], v[1][l], v[2][l]);
        if let Some((model, h)) = self.rolling.filter(|_| !rolls.is_empty()) {
            for l in 0..self.len {
                rolls[self.slot[l]] = self.rolling_lane(l, model, h);
            }
        }
        for l in 0..self.len {
            out[self.slot[l]] = PairSlot {
                force: v3(&self.out3[0], l),
                n_cross_friction: v3(&self.out3[1], l),
                energy: self.out1[0][l],
                overlap: self.out1[1][l],
            };
            springs[self.slot[l]] = PairSpring {
                spring: v3(&self.out3[2], l),
                flags: SLOT_ACTIVE,
            };
        }
        self.len = 0;
    }

    /// Lane `l`'s rolling torque and spring ([`rolling_torque`]; none when the pair's
    /// `μ_r` is 0), from the normal `pair_overlap` forms and the lane's normal force.
    fn rolling_lane(&self, l: usize, model: RollingModel, h: f64) -> RollSlot {
        let mu_r = self.pm[5][l];
        if mu_r <= 0.0 {
            return RollSlot::default();
        }
        let v3 = |v: &Lanes3| DVec3::new(v[0][l], v[1][l], v[2][l]);
        let (ra, rb) = (self.r[0][l], self.r[1][l]);
        let n = v3(&self.d) / self.dist2[l].sqrt();
        let r = rolling_torque(&RollingInputs {
            model,
            mu_r,
            eta_r: self.pm[6][l],
            r_star: ra * rb / (ra + rb),
            e_star: self.pm[0][l],
            contact_radius: self.out1[3][l],
            f_n: self.out1[2][l],
            n,
            dalpha: v3(&self.dalpha_a) - v3(&self.dalpha_b),
            inertia: rolling_inertia(self.mass[0][l], ra, self.mass[1][l], rb),
            h,
            spring: v3(&self.roll_spring),
        });
        RollSlot {
            torque: r.torque,
            spring: r.spring,
        }
    }

    /// All lanes (those past `len` hold stale or zero inputs; their results are never
    /// read), with the widest SIMD the CPU has.
    pub(in crate::cpu) fn compute(&mut self) {
        if self.jkr {
            self.compute_lanes(contact_core);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { self.compute_avx2() };
            return;
        }
        self.compute_lanes(hertz_core);
    }

    /// [`PairBatch::compute_lanes`] compiled for AVX2 (no FMA: the operations and their
    /// rounding are those of the scalar code).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn compute_avx2(&mut self) {
        self.compute_lanes(hertz_core);
    }

    /// The lane loop: `pair_overlap`'s geometry, the pair's `r*`, `m*` and lever arms,
    /// then the law `law` ([`hertz_core`], or [`contact_core`] under JKR), as [`GranularInputs::granular_pairs`](super::kernels::granular::GranularInputs::granular_pairs) did pair by pair.
    #[inline(always)]
    fn compute_lanes(&mut self, law: impl Fn(&HertzInputs) -> ContactResult) {
        for l in 0..LANES {
            let v3 = |v: &Lanes3| DVec3::new(v[0][l], v[1][l], v[2][l]);
            let (ra, rb) = (self.r[0][l], self.r[1][l]);
            let (ma, mb) = (self.mass[0][l], self.mass[1][l]);
            let dist = self.dist2[l].sqrt();
            let n = v3(&self.d) / dist;
            let overlap = (ra + rb) - dist;
            let (lever_a, lever_b) = (ra - 0.5 * overlap, rb - 0.5 * overlap);
            let r = law(&HertzInputs {
                pm: PairMaterial {
                    e_star: self.pm[0][l],
                    g_star: self.pm[1][l],
                    xi: self.pm[2][l],
                    restitution: 0.0,
                    mu_s: self.pm[3][l],
                    mu_d: self.pm[4][l],
                    mu_r: 0.0,
                    eta_r: 0.0,
                    gamma: self.pm[7][l],
                },
                g: ContactGeometry {
                    r_star: ra * rb / (ra + rb),
                    m_star: ma * mb / (ma + mb),
                },
                n,
                overlap,
                lever_a,
                lever_b,
                relative_v: v3(&self.rel_v),
                relative_dx: v3(&self.rel_dx),
                dalpha_a: v3(&self.dalpha_a),
                dalpha_b: v3(&self.dalpha_b),
                spring: v3(&self.spring),
            });
            let ncf = r.normal.cross(r.friction);
            for (o, v) in self.out3.iter_mut().zip([r.force, ncf, r.spring]) {
                o[0][l] = v.x;
                o[1][l] = v.y;
                o[2][l] = v.z;
            }
            self.out1[0][l] = r.energy;
            self.out1[1][l] = overlap;
            self.out1[2][l] = r.normal_force;
            self.out1[3][l] = r.contact_radius;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::granular::{hertz_contact, pair_overlap, ContactSide};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A batch whose pair material is set once in every lane (one-material scenes,
    /// [`PairBatch::set_material`]) gives the same bits as one that copies the same
    /// record with every pair, on random sticking and slipping pairs. A lane left
    /// without the material (zero stiffness) would differ.
    #[test]
    fn uniform_material_batch_matches_per_pair_copies() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut v = |s: f64| {
            DVec3::new(
                rng.random_range(-s..s),
                rng.random_range(-s..s),
                rng.random_range(-s..s),
            )
        };
        let pm = PairMaterial {
            e_star: 3e8,
            g_star: 1e8,
            xi: 0.3,
            restitution: 0.5,
            mu_s: 0.5,
            mu_d: 0.4,
            mu_r: 0.0,
            eta_r: 0.0,
            gamma: 0.0,
        };
        let mut uniform = PairBatch::default();
        uniform.set_material(&pm);
        let mut copied = PairBatch::default();
        let n = 61;
        let mut out = [vec![PairSlot::default(); n], vec![PairSlot::default(); n]];
        let mut springs = [
            vec![PairSpring::default(); n],
            vec![PairSpring::default(); n],
        ];
        for case in 0..n {
            let side = |x: DVec3, v: &mut dyn FnMut(f64) -> DVec3| SideScratch {
                side: ContactSide {
                    x,
                    v: v(1.0),
                    r: 1e-3,
                    dx: v(1e-5),
                    dalpha: v(1e-2),
                },
                mass: 1e-5,
                material: 0,
                removed: false,
            };
            let a = side(v(1.0), &mut v);
            let dir = v(1.0).normalize();
            let b = side(a.side.x + dir * 2e-3 * 0.99, &mut v);
            let d = b.side.x - a.side.x;
            let spring = v(1e-5);
            for batch in [&mut uniform, &mut copied] {
                let d2 = d.length_squared();
                batch.push(case, d, d2, &a, &b, &pm, (spring, DVec3::ZERO));
            }
            if uniform.len == LANES || case == n - 1 {
                uniform.run(&mut out[0], &mut springs[0], &mut []);
                copied.run(&mut out[1], &mut springs[1], &mut []);
            }
        }
        let bits = |o: &[PairSlot], h: &[PairSpring]| -> Vec<u64> {
            o.iter()
                .zip(h)
                .flat_map(|(s, h)| {
                    let mut v: Vec<u64> = [s.force, s.n_cross_friction, h.spring]
                        .iter()
                        .flat_map(|x| x.to_array().map(f64::to_bits))
                        .collect();
                    v.extend([s.energy, s.overlap].map(f64::to_bits));
                    v
                })
                .collect()
        };
        assert_eq!(bits(&out[0], &springs[0]), bits(&out[1], &springs[1]));
        assert!(out[0].iter().all(|s| s.force.length() > 0.0));
    }

    /// The batched pair kernel gives the same bits as one branching [`hertz_contact`]
    /// per pair (what `granular_pairs` computed before the batch), on random pairs that
    /// stick and slip, approach and separate (the normal force clamped at 0), with zero
    /// springs, springs along the normal (carried to zero), zero shear stiffness, and a
    /// partly filled batch; and the portable lane loop (CPUs without AVX2) gives the
    /// same bits as the AVX2 one. Bitwise because all compute the same operations in
    /// the same order; a difference would show the SIMD code rounding differently (FMA
    /// contraction, reassociation).
    #[test]
    fn batch_matches_scalar_contact_law_bitwise() {
        fn v(rng: &mut ChaCha8Rng, s: f64) -> DVec3 {
            DVec3::new(
                rng.random_range(-s..s),
                rng.random_range(-s..s),
                rng.random_range(-s..s),
            )
        }
        fn side(rng: &mut ChaCha8Rng, x: DVec3) -> SideScratch {
            SideScratch {
                side: ContactSide {
                    x,
                    v: v(rng, 2.0),
                    r: rng.random_range(0.5e-3..1.5e-3),
                    dx: v(rng, 1e-5),
                    dalpha: v(rng, 1e-2),
                },
                mass: rng.random_range(1e-6..1e-5),
                material: 0,
                removed: false,
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut batch = PairBatch::default();
        let mut expected = Vec::new();
        let mut out = vec![PairSlot::default(); 1000];
        let mut springs = vec![PairSpring::default(); 1000];
        let mut kinds = [0usize; 4];
        for case in 0..1000 {
            let x = v(&mut rng, 1.0);
            let a = side(&mut rng, x);
            let dir = v(&mut rng, 1.0).normalize();
            let mut b = side(&mut rng, DVec3::ZERO);
            let reach = a.side.r + b.side.r;
            b.side.x = a.side.x + dir * reach * rng.random_range(0.97..0.9999);
            let n = (b.side.x - a.side.x).normalize();
            let spring = match case % 4 {
                0 => DVec3::ZERO,
                1 => rng.random_range(-1e-5..1e-5) * n,
                _ => {
                    let s = rng.random_range(1e-9..1e-4);
                    v(&mut rng, s)
                }
            };
            let pm = PairMaterial {
                e_star: rng.random_range(1e6..1e9),
                g_star: if case % 7 == 0 {
                    0.0
                } else {
                    rng.random_range(1e5..1e8)
                },
                xi: rng.random_range(0.0..1.0),
                restitution: 0.5,
                mu_s: rng.random_range(0.0..1.0),
                mu_d: rng.random_range(0.0..1.0),
                mu_r: 0.0,
                eta_r: 0.0,
                gamma: 0.0,
            };
            let d = b.side.x - a.side.x;
            let dist2 = d.length_squared();
            let (normal, overlap) = pair_overlap(a.side.x, b.side.x, a.side.r, b.side.r).unwrap();
            let (la, lb) = (a.side.r - 0.5 * overlap, b.side.r - 0.5 * overlap);
            let g = ContactGeometry {
                r_star: a.side.r * b.side.r / (a.side.r + b.side.r),
                m_star: a.mass * b.mass / (a.mass + b.mass),
            };
            let r = hertz_contact(&pm, g, normal, overlap, la, lb, &a.side, &b.side, spring);
            kinds[usize::from(r.slipping) + 2 * usize::from(r.force.dot(normal) == 0.0)] += 1;
            // The gather forms the lever arms `r − δ/2` from the stored overlap: the
            // bits of `la` and `lb` above.
            expected.push((
                PairSlot {
                    force: r.force,
                    n_cross_friction: r.normal.cross(r.friction),
                    energy: r.energy,
                    overlap,
                },
                PairSpring {
                    spring: r.spring,
                    flags: SLOT_ACTIVE,
                },
            ));
            batch.push(case, d, dist2, &a, &b, &pm, (spring, DVec3::ZERO));
            // A partial batch at the end (1000 = 125 × 8: force one earlier).
            if batch.len == LANES || case == 995 {
                // The portable lane loop (what a CPU without AVX2 runs) gives the same
                // bits as the dispatched one (AVX2 where the CPU has it).
                let mut portable = batch.clone();
                portable.compute_lanes(hertz_core);
                batch.compute();
                let lanes = |b: &PairBatch| -> Vec<u64> {
                    let flat = b.out3.iter().flatten().chain(&b.out1);
                    flat.flat_map(|l| l.map(f64::to_bits)).collect()
                };
                assert_eq!(lanes(&portable), lanes(&batch), "case {case}");
                batch.run(&mut out, &mut springs, &mut []);
            }
        }
        batch.run(&mut out, &mut springs, &mut []);
        let bits = |(s, h): (&PairSlot, &PairSpring)| {
            let mut v = Vec::new();
            for x in [s.force, s.n_cross_friction, h.spring] {
                v.extend(x.to_array().map(f64::to_bits));
            }
            v.extend([s.energy, s.overlap].map(f64::to_bits));
            v.push(u64::from(h.flags));
            v
        };
        for (i, (got, want)) in out.iter().zip(&springs).zip(&expected).enumerate() {
            assert_eq!(
                bits(got),
                bits((&want.0, &want.1)),
                "pair {i}: {got:?} != {want:?}"
            );
        }
        // Every branch was taken: sticking, slipping, and separating (f_n clamped).
        assert!(
            kinds[0] > 50 && kinds[1] > 50 && kinds[2] + kinds[3] > 50,
            "{kinds:?}"
        );
    }
}
