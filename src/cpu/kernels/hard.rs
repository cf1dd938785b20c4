//! The hard-contact solver's sweeps (Preclik, Eibl & Rüde §3.1): the per-contact update
//! `hard_contact_update` and the three global solvers over a step's contacts.
//!
//! Every sweep reads the bodies' current velocities, solves each contact's
//! single-contact problem `(A_jj, b_j)` with `b_j = A_jj λ_j − u_j + (gap term)` — the
//! negated relative velocity the contact would have without its own reaction — and
//! applies the change of impulse to its two bodies. The solvers differ only in when the
//! changes reach the bodies:
//!
//! * `nbgs`: after every contact, in contact order;
//! * `jacobi`: after the sweep, each change damped by `relaxation`;
//! * `colored`: after each colour (contacts of one colour share no body).
//!
//! A body receives its contacts' changes in ascending contact order under `nbgs` and
//! `jacobi` (`hard_apply`), which is what a per-body CSR gather on the GPU does, so the
//! sums are the same bits; under `colored`, colour by colour (at most one contact of a
//! body per colour), which a GPU gather per colour reproduces.

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use crate::model::{FrictionModel, HardContact, HardSolver};
use crate::physics::hard::{
    solve_contact_case, solve_contact_coulomb_case, solve_sphere_contact, ContactCase,
};

/// Contacts in one batch of independent updates (a Jacobi sweep, a colour) from which
/// they are computed on several threads.
const PARALLEL_CONTACTS: usize = 2048;

/// Body index of a wall (static: infinite mass and inertia).
pub(in crate::cpu) const WALL: u32 = u32::MAX;

/// The contacts of one step, structure of arrays in contact order (ascending lower
/// particle id; its pairs by partner id, then its walls).
#[derive(Clone, Debug, Default)]
pub(in crate::cpu) struct Contacts {
    /// `[a, b]`: the reaction acts `+λ` on `b` (the body `n` points to) and `−λ` on `a`;
    /// `a` is [`WALL`] for a wall contact.
    pub body: Vec<[u32; 2]>,
    /// Warm-start key `[i, partner]`: `partner` is the other particle's id, or
    /// `N + w` for wall `w` (so keys ascend in contact order).
    pub key: Vec<[u32; 2]>,
    /// Frame `[n, t, o]`.
    pub frame: Vec<[DVec3; 3]>,
    /// Levers `[r_a, r_b]`: the contact point relative to each body's centre of mass
    /// (a sphere's is `l_a n`, `−l_b n` with its radius; zero for a wall).
    pub lever: Vec<[DVec3; 2]>,
    /// The Delassus block in the contact frame. For a contact of two spheres (or a
    /// sphere and a wall) it is `diag(a, c, c)` and `sphere` is set.
    pub block: Vec<[[f64; 3]; 3]>,
    /// Whether the contact's bodies are spheres or walls: the closed form
    /// [`solve_sphere_contact`] solves it (the same impulse for both friction models).
    pub sphere: Vec<bool>,
    /// Gap term added to `b_n` (eq. (5) with ε, §3.1): `−ξ/h` for a gap `ξ > 0`,
    /// `−εξ/h` for a penetration.
    pub gap_term: Vec<f64>,
    /// The gap `ξ` at the start of the step (m).
    pub gap: Vec<f64>,
    /// Friction coefficient `μ` of the pair.
    pub mu: Vec<f64>,
    /// Impulse `λ = (λ_n, λ_t, λ_o)` in the contact frame.
    pub impulse: Vec<[f64; 3]>,
    /// Velocity of a moving wall's surface at the contact point (body `a` is
    /// [`WALL`]); zero otherwise.
    pub wall_velocity: Vec<DVec3>,
    /// Branch of the last update of each contact.
    pub case: Vec<ContactCase>,
}

impl Contacts {
    /// Number of contacts.
    pub(in crate::cpu) fn len(&self) -> usize {
        self.body.len()
    }

    /// Empties every array (keeping the allocations).
    pub(in crate::cpu) fn clear(&mut self) {
        self.body.clear();
        self.key.clear();
        self.frame.clear();
        self.lever.clear();
        self.block.clear();
        self.sphere.clear();
        self.gap_term.clear();
        self.gap.clear();
        self.mu.clear();
        self.impulse.clear();
        self.wall_velocity.clear();
        self.case.clear();
    }
}

/// The bodies' velocities during the solve, with their inverse mass and inertia (zero
/// for held particles, locked rotations and removed particles). Bodies `0..free` are
/// the free spheres (scalar inertia), the rest the clumps (a tensor each).
#[derive(Clone, Debug, Default)]
pub(in crate::cpu) struct SolverBodies {
    /// Velocity `v`.
    pub v: Vec<DVec3>,
    /// Spatial angular velocity `Ω`.
    pub w: Vec<DVec3>,
    /// `1/m`.
    pub inv_mass: Vec<f64>,
    /// `1/J` of a sphere (unused for clumps).
    pub inv_inertia: Vec<f64>,
    /// Number of free spheres.
    pub free: usize,
    /// Each clump's inverse inertia tensor in the world frame at the step's start.
    pub inv_tensor: Vec<DMat3>,
    /// Each clump's angular impulse `Σ r × p` received during the solve (its spatial
    /// angular momentum changes by exactly that).
    pub angular_impulse: Vec<DVec3>,
}

impl SolverBodies {
    /// The change of body `k`'s angular velocity under the moment `m`.
    #[inline]
    fn turn(&self, k: usize, m: DVec3) -> DVec3 {
        if k < self.free {
            self.inv_inertia[k] * m
        } else {
            self.inv_tensor[k - self.free] * m
        }
    }
}

/// How a solve ended.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(in crate::cpu) struct SolveResult {
    /// Sweeps taken.
    pub sweeps: u32,
    /// The last sweep's residual (m/s).
    pub residual: f64,
    /// Whether it reached the tolerance.
    pub converged: bool,
}

/// Velocity of body `k` at the lever `r` from its centre of mass, or zero for a wall.
#[inline]
fn point_velocity(bodies: &SolverBodies, k: u32, r: DVec3) -> DVec3 {
    if k == WALL {
        return DVec3::ZERO;
    }
    let k = k as usize;
    bodies.v[k] + bodies.w[k].cross(r)
}

/// Kernel `hard_contact_update` for contact `c`: the new impulse from the bodies'
/// current velocities, its branch, and the residual `‖A(λ' − λ)‖` (the change of the
/// contact's relative velocity this update makes).
#[inline]
pub(in crate::cpu) fn hard_contact_update(
    contacts: &Contacts,
    bodies: &SolverBodies,
    model: FrictionModel,
    c: usize,
) -> ([f64; 3], ContactCase, f64) {
    let [a, b] = contacts.body[c];
    let [ra, rb] = contacts.lever[c];
    let [n, t, o] = contacts.frame[c];
    let lam = contacts.impulse[c];
    // A wall's surface velocity is zero unless it moves (and `x − 0` is `x`).
    let u =
        point_velocity(bodies, b, rb) - point_velocity(bodies, a, ra) - contacts.wall_velocity[c];
    let mu = contacts.mu[c];
    if contacts.sphere[c] {
        let blk = &contacts.block[c];
        let (ba, bc) = (blk[0][0], blk[1][1]);
        let rhs = [
            ba * lam[0] - u.dot(n) + contacts.gap_term[c],
            bc * lam[1] - u.dot(t),
            bc * lam[2] - u.dot(o),
        ];
        let (x, case) = solve_sphere_contact(ba, bc, rhs, mu);
        let d = [
            ba * (x[0] - lam[0]),
            bc * (x[1] - lam[1]),
            bc * (x[2] - lam[2]),
        ];
        let residual = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        return (x, case, residual);
    }
    let blk = contacts.block[c];
    let times = |x: [f64; 3]| -> [f64; 3] {
        [0, 1, 2].map(|r| blk[r][0] * x[0] + blk[r][1] * x[1] + blk[r][2] * x[2])
    };
    let al = times(lam);
    let rhs = [
        al[0] - u.dot(n) + contacts.gap_term[c],
        al[1] - u.dot(t),
        al[2] - u.dot(o),
    ];
    let (x, case) = match model {
        FrictionModel::MaxDissipation => solve_contact_case(blk, rhs, mu),
        FrictionModel::Coulomb => solve_contact_coulomb_case(blk, rhs, mu),
    };
    let d = times([x[0] - lam[0], x[1] - lam[1], x[2] - lam[2]]);
    let residual = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    (x, case, residual)
}

/// Kernel `hard_apply`: adds the impulse change `d` (contact frame) of contact `c` to
/// its bodies, `+` on `b`, `−` on `a`: `v += m⁻¹p`, `Ω += I⁻¹(r × p)`.
#[inline]
pub(in crate::cpu) fn hard_apply(
    contacts: &Contacts,
    bodies: &mut SolverBodies,
    c: usize,
    d: [f64; 3],
) {
    let [a, b] = contacts.body[c];
    let [ra, rb] = contacts.lever[c];
    let [n, t, o] = contacts.frame[c];
    let p = d[0] * n + d[1] * t + d[2] * o;
    if b != WALL {
        let k = b as usize;
        let m = rb.cross(p);
        bodies.v[k] += bodies.inv_mass[k] * p;
        let dw = bodies.turn(k, m);
        bodies.w[k] += dw;
        if k >= bodies.free {
            bodies.angular_impulse[k - bodies.free] += m;
        }
    }
    if a != WALL {
        let k = a as usize;
        let m = ra.cross(p);
        bodies.v[k] -= bodies.inv_mass[k] * p;
        let dw = bodies.turn(k, m);
        bodies.w[k] -= dw;
        if k >= bodies.free {
            bodies.angular_impulse[k - bodies.free] -= m;
        }
    }
}

/// Priority of a contact in the colouring, from its warm-start key alone (so it does
/// not depend on the contact's index or the step): a 32-bit integer hash (the
/// `lowbias32` finaliser of a mix of both ids). The twin of `contact_priority` in
/// `shaders/hard.wgsl`.
#[inline]
pub(crate) fn contact_priority(key: [u32; 2]) -> u32 {
    let mut h = key[0].wrapping_mul(0x9E37_79B1) ^ key[1].wrapping_mul(0x85EB_CA77);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^ (h >> 16)
}

/// Greedy colouring of the contact graph (two contacts are adjacent when they share a
/// body; walls do not count) in order of descending [`contact_priority`], then ascending index: each contact takes the lowest
/// colour none of its earlier neighbours has. This is exactly the colouring the
/// Jones–Plassmann rounds of `hard_color_round` (`shaders/hard.wgsl`) reach in
/// parallel: a contact is coloured once all its earlier neighbours are, from their
/// colours alone, so the result does not depend on the order the GPU works in. Returns
/// each colour's contacts, ascending. Deterministic, and at most `Δ + 1` colours for a
/// contact with at most `Δ` neighbours.
pub(in crate::cpu) fn color_contacts(contacts: &Contacts, n_bodies: usize) -> Vec<Vec<u32>> {
    let prio: Vec<u32> = contacts.key.iter().map(|&k| contact_priority(k)).collect();
    let mut order: Vec<usize> = (0..contacts.len()).collect();
    // Higher priority first, then lower index: `colored_first`.
    order.sort_unstable_by_key(|&c| (std::cmp::Reverse(prio[c]), c));
    // Colours used so far by each body, as a growable bit set (64 colours a word).
    let mut used: Vec<Vec<u64>> = vec![Vec::new(); n_bodies];
    let mut colors: Vec<Vec<u32>> = Vec::new();
    let has = |set: &[u64], k: usize| set.get(k / 64).is_some_and(|w| w >> (k % 64) & 1 == 1);
    for c in order {
        let pair = contacts.body[c];
        let bodies = pair.iter().filter(|&&k| k != WALL).map(|&k| k as usize);
        let color = (0..)
            .find(|&k| bodies.clone().all(|b| !has(&used[b], k)))
            .unwrap_or(0);
        for b in bodies {
            let set = &mut used[b];
            if set.len() <= color / 64 {
                set.resize(color / 64 + 1, 0);
            }
            set[color / 64] |= 1 << (color % 64);
        }
        if colors.len() <= color {
            colors.resize(color + 1, Vec::new());
        }
        colors[color].push(c as u32);
    }
    for list in &mut colors {
        list.sort_unstable();
    }
    colors
}

/// Applies the warm-start impulses already in `contacts.impulse` to the bodies, in
/// contact order.
pub(in crate::cpu) fn hard_warm_start(contacts: &Contacts, bodies: &mut SolverBodies) {
    for c in 0..contacts.len() {
        let d = contacts.impulse[c];
        if d != [0.0; 3] {
            hard_apply(contacts, bodies, c, d);
        }
    }
}

/// Runs `params.solver` until the residual is at most `params.tolerance` or
/// `params.max_sweeps` sweeps; `colors` is [`color_contacts`]'s result (used by the
/// `colored` solver only).
pub(in crate::cpu) fn hard_solve(
    params: &HardContact,
    contacts: &mut Contacts,
    bodies: &mut SolverBodies,
    colors: &[Vec<u32>],
) -> SolveResult {
    let mut result = SolveResult::default();
    if contacts.len() == 0 {
        result.converged = true;
        return result;
    }
    let mut new = vec![([0.0; 3], ContactCase::Separating, 0.0); contacts.len()];
    while result.sweeps < params.max_sweeps {
        let residual = match params.solver {
            HardSolver::Nbgs => sweep_nbgs(contacts, bodies, params.friction_model),
            HardSolver::Jacobi => sweep_jacobi(contacts, bodies, params, &mut new),
            HardSolver::Colored => {
                sweep_colored(contacts, bodies, params.friction_model, colors, &mut new)
            }
        };
        result.sweeps += 1;
        result.residual = residual;
        if residual <= params.tolerance {
            result.converged = true;
            break;
        }
    }
    result
}

/// Moves contact `c` to its new impulse `x` (from `hard_contact_update`, branch
/// `case`): the change is applied to its bodies and stored.
#[inline]
fn commit(
    contacts: &mut Contacts,
    bodies: &mut SolverBodies,
    c: usize,
    x: [f64; 3],
    case: ContactCase,
) {
    let lam = contacts.impulse[c];
    hard_apply(
        contacts,
        bodies,
        c,
        [x[0] - lam[0], x[1] - lam[1], x[2] - lam[2]],
    );
    contacts.impulse[c] = x;
    contacts.case[c] = case;
}

/// One Gauss–Seidel sweep in contact order.
fn sweep_nbgs(contacts: &mut Contacts, bodies: &mut SolverBodies, model: FrictionModel) -> f64 {
    let mut residual = 0f64;
    for c in 0..contacts.len() {
        let (x, case, r) = hard_contact_update(contacts, bodies, model, c);
        commit(contacts, bodies, c, x, case);
        residual = residual.max(r);
    }
    residual
}

/// One damped Jacobi sweep: every update from the sweep's starting velocities, then
/// `λ += ω(λ' − λ)` applied in contact order. The residual is that of the undamped
/// change (how far each contact is from its local solution), as for the other
/// solvers; the damped step would understate it by `ω`.
fn sweep_jacobi(
    contacts: &mut Contacts,
    bodies: &mut SolverBodies,
    params: &HardContact,
    new: &mut [([f64; 3], ContactCase, f64)],
) -> f64 {
    let relaxation = params.relaxation;
    let model = params.friction_model;
    let update = |(c, slot): (usize, &mut ([f64; 3], ContactCase, f64))| {
        *slot = hard_contact_update(contacts, bodies, model, c);
    };
    // Each update reads the sweep's starting velocities only: threads do not change
    // the bits.
    if new.len() >= PARALLEL_CONTACTS {
        new.par_iter_mut().enumerate().for_each(update);
    } else {
        new.iter_mut().enumerate().for_each(update);
    }
    let mut residual = 0f64;
    for (c, &(x, case, r)) in new.iter().enumerate() {
        let lam = contacts.impulse[c];
        let d = [
            relaxation * (x[0] - lam[0]),
            relaxation * (x[1] - lam[1]),
            relaxation * (x[2] - lam[2]),
        ];
        hard_apply(contacts, bodies, c, d);
        contacts.impulse[c] = [lam[0] + d[0], lam[1] + d[1], lam[2] + d[2]];
        contacts.case[c] = case;
        residual = residual.max(r);
    }
    residual
}

/// One Gauss–Seidel sweep colour by colour: each colour's updates from the velocities
/// at its start, then applied.
fn sweep_colored(
    contacts: &mut Contacts,
    bodies: &mut SolverBodies,
    model: FrictionModel,
    colors: &[Vec<u32>],
    new: &mut [([f64; 3], ContactCase, f64)],
) -> f64 {
    let mut residual = 0f64;
    for color in colors {
        // The contacts of one colour share no body: their updates read velocities no
        // other update of the colour changes, so threads do not change the bits.
        let computed: Vec<_> = if color.len() >= PARALLEL_CONTACTS {
            color
                .par_iter()
                .map(|&c| hard_contact_update(contacts, bodies, model, c as usize))
                .collect()
        } else {
            color
                .iter()
                .map(|&c| hard_contact_update(contacts, bodies, model, c as usize))
                .collect()
        };
        for (&c, r) in color.iter().zip(computed) {
            new[c as usize] = r;
        }
        for &c in color {
            let c = c as usize;
            let (x, case, r) = new[c];
            commit(contacts, bodies, c, x, case);
            residual = residual.max(r);
        }
    }
    residual
}
