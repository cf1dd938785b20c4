//! Binder potentials of Baker & Gonzalez §4: bending/torsion `U^m` (eqs. 44–47), axial
//! `U^a` (eqs. 51–52) and shear `U^s` (eqs. 53–55, frame-indifferent default per NOTES).
//!
//! Forces and moments are derived from the energies (checked against central
//! differences in `tests/physics_forces.rs`).

use glam::DVec3;

use crate::math::rodrigues;
use crate::model::{Bond, ShearForm};

/// Bending/torsion potential, eqs. (44)–(47), with a general rest orientation.
///
/// The strain rotation is `γ = (−α_i) ⊕ c₀ ⊕ α_j`, the Rodrigues vector of
/// `R_j R_j0ᵀ R_i0 R_iᵀ` (eq. 45 when `R₀ = I`), `θ = 2 atan(|γ|/2) γ/|γ|` and
/// `U^m = ½ K^m |θ|²`. The spatial moments are `RM_i = K^m θ = −RM_j` (eq. 47; NOTES:
/// restoring because eq. 45 is `R_j R_iᵀ`).
///
/// Returns `(U^m, RM_i)`, or `None` when an intermediate composition is a half turn.
#[inline(always)]
pub fn bend(k: f64, alpha_i: DVec3, alpha_j: DVec3, rest_rotation: DVec3) -> Option<(f64, DVec3)> {
    let g = rodrigues::try_compose(rodrigues::try_compose(-alpha_i, rest_rotation)?, alpha_j)?;
    let theta = rodrigues::to_rotation_vector(g);
    Some((0.5 * k * theta.length_squared(), k * theta))
}

/// Axial potential, eq. (51): `U^a = ½ K^a (|d|/L₀ − 1)²` with `d = x_j − x_i`.
///
/// Returns `(U^a, F_i)`; `F_j = −F_i` (eq. 52).
#[inline(always)]
pub fn axial(k: f64, rest_length: f64, x_i: DVec3, x_j: DVec3) -> (f64, DVec3) {
    let (e, f, _, _) = axial_strained(k, rest_length, x_i, x_j);
    (e, f)
}

/// [`axial`] with the strain `ε = |d|/L₀ − 1` and the length `|d|`.
#[inline(always)]
fn axial_strained(k: f64, rest_length: f64, x_i: DVec3, x_j: DVec3) -> (f64, DVec3, f64, f64) {
    let d = x_j - x_i;
    let len = d.length();
    let strain = len / rest_length - 1.0;
    // F_i = −∂U/∂x_i = +K strain/L₀ · d/|d| (pulls i towards j when stretched).
    let f_i = (k * strain / (rest_length * len)) * d;
    (0.5 * k * strain * strain, f_i, strain, len)
}

/// Result of one shear evaluation: `(U^s, F_i, RM_i, RM_j)`, with `F_j = −F_i`.
pub type ShearResult = (f64, DVec3, DVec3, DVec3);

/// Frame-indifferent shear potential (NOTES on eqs. 53–55):
/// `U^s = ½ K^s Σ_{k∈{i,j}} c_k²`, `c_k = 1 − a_k·ê`, `a_k = R_k u_k` the rest bond
/// direction attached to particle `k`, `ê = (x_j − x_i)/|x_j − x_i|`.
///
/// Gradient: `F_j = (K^s/|d|) Σ c_k (I − êêᵀ) a_k = −F_i`, `RM_k = K^s c_k a_k × ê`.
/// Invariant under rigid motions and under swapping `i` and `j`, so total linear and
/// angular momentum are conserved.
#[inline(always)]
pub fn shear_objective(
    k: f64,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    u_i: DVec3,
    u_j: DVec3,
) -> ShearResult {
    let d = x_j - x_i;
    let len = d.length();
    let e = d / len;
    let a_i = rodrigues::rotate(alpha_i, u_i);
    let a_j = rodrigues::rotate(alpha_j, u_j);
    let c_i = 1.0 - a_i.dot(e);
    let c_j = 1.0 - a_j.dot(e);
    let p_i = a_i - e * a_i.dot(e);
    let p_j = a_j - e * a_j.dot(e);
    let f_j = (k / len) * (c_i * p_i + c_j * p_j);
    (
        0.5 * k * (c_i * c_i + c_j * c_j),
        -f_j,
        (k * c_i) * a_i.cross(e),
        (k * c_j) * a_j.cross(e),
    )
}

/// Shear potential of eq. (53) as printed: `U^s = ½ K^s c²`, `c = 1 − (R_i u_i)·(R_j ê)`
/// (`R_j` applied to the *current* bond direction). Not frame-indifferent (NOTES);
/// exposed only as the named variant `shear = "printed"`.
///
/// Gradient: `F_j = (K^s c/|d|) (I − êêᵀ) R_jᵀ a = −F_i`, `RM_i = K^s c a × b`,
/// `RM_j = K^s c b × a` with `a = R_i u_i`, `b = R_j ê`.
#[inline(always)]
pub fn shear_printed(
    k: f64,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    u_i: DVec3,
) -> ShearResult {
    let d = x_j - x_i;
    let len = d.length();
    let e = d / len;
    let a = rodrigues::rotate(alpha_i, u_i);
    let b = rodrigues::rotate(alpha_j, e);
    let c = 1.0 - a.dot(b);
    let g = rodrigues::rotate_inverse(alpha_j, a);
    let f_j = (k * c / len) * (g - e * g.dot(e));
    let m = (k * c) * a.cross(b);
    (0.5 * k * c * c, -f_j, m, -m)
}

/// The loads one bond carries (issue 47): what its strengths
/// ([`crate::model::BondStrength`]) are compared with. With `ê = (x_j − x_i)/|x_j − x_i|`
/// the current bond axis:
/// * tension `T = K^a ε / L₀`, `ε = |d|/L₀ − 1`: the axial force of eq. (52) along `ê`,
///   positive when the bond is stretched;
/// * shear `S = |F^s|`: the magnitude of the shear law's force (eqs. 53–55, either
///   form), which is perpendicular to `ê` in the objective form;
/// * bend and twist: the bending/torsion moment `M = K^m θ` of eq. (47) split about
///   the axis, twist `M_t = M·ê` (signed) and bend `M_b = |M − M_t ê|`.
///
/// The shear law's moments (`K^s c_k a_k × ê`) are the couple of its force, not a
/// bending load, and are not counted in `M_b`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondLoads {
    /// Axial force `T` (N), positive in tension.
    pub tension: f64,
    /// Shear force magnitude `S` (N).
    pub shear: f64,
    /// Bending moment magnitude `M_b` (N m).
    pub bend: f64,
    /// Twisting moment `M_t` (N m, signed about `ê`).
    pub twist: f64,
}

impl BondLoads {
    /// The bond's failure index for the inverse strengths `inv = [1/T_c, 1/S_c, 1/M_bc,
    /// 1/M_tc]` (0 for a strength not set): `max(0, T)/T_c + S/S_c + M_b/M_bc +
    /// |M_t|/M_tc`, summed in that order. The bond breaks when it reaches 1.
    #[inline]
    pub fn failure_index(&self, inv: &[f64; 4]) -> f64 {
        self.tension.max(0.0) * inv[0]
            + self.shear.abs() * inv[1]
            + self.bend.abs() * inv[2]
            + self.twist.abs() * inv[3]
    }
}

/// Everything one bond contributes: energies, the force on `i` (`F_j = −F_i`) and the
/// spatial moments on both ends. This is the per-bond record the gather step sums.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondResult {
    /// Force on particle `i` (N); particle `j` receives the negative.
    pub force_i: DVec3,
    /// Spatial moment on `i` (N m).
    pub moment_i: DVec3,
    /// Spatial moment on `j` (N m).
    pub moment_j: DVec3,
    /// `U^m` (J).
    pub e_bend: f64,
    /// `U^a` (J).
    pub e_axial: f64,
    /// `U^s` (J).
    pub e_shear: f64,
}

impl BondResult {
    /// The strain energy `U^m + U^a + U^s` (J), summed in that order.
    #[inline]
    pub fn energy(&self) -> f64 {
        self.e_bend + self.e_axial + self.e_shear
    }
}

/// All binder potentials of one bond (eq. 43 without `U^pp`, which acts on contacts).
///
/// `None` when the bending strain composition meets the half-turn singularity.
#[inline(always)]
pub fn bond_forces(
    bond: &Bond,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    shear: ShearForm,
) -> Option<BondResult> {
    bond_law::<false>(bond, x_i, x_j, alpha_i, alpha_j, shear).map(|(r, _)| r)
}

/// [`bond_forces`] with the bond's length `|x_j − x_i|` (what [`may_break`] needs).
#[inline(always)]
pub fn bond_forces_and_length(
    bond: &Bond,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    shear: ShearForm,
) -> Option<(BondResult, f64)> {
    bond_law::<false>(bond, x_i, x_j, alpha_i, alpha_j, shear).map(|(r, l)| (r, l.len))
}

/// [`bond_forces`] with what the bond's loads are made of ([`LoadParts`], issue 47),
/// for bonds that can break: the same result, bit for bit.
#[inline(always)]
pub fn bond_forces_and_loads(
    bond: &Bond,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    shear: ShearForm,
) -> Option<(BondResult, LoadParts)> {
    bond_law::<true>(bond, x_i, x_j, alpha_i, alpha_j, shear)
}

/// What a bond's loads are made of: the strain, the shear law's force and the
/// bending/torsion moment `K^m θ` (issue 47).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadParts {
    /// The axial strain `ε = |d|/L₀ − 1`.
    pub strain: f64,
    /// The shear law's force on `i` (N).
    pub shear_force: DVec3,
    /// `K^m θ` (N m).
    pub moment: DVec3,
    /// The bond's length `|x_j − x_i|` (m).
    pub len: f64,
}

impl LoadParts {
    /// The loads ([`BondLoads`]) of `bond`, whose ends are `d = x_j − x_i` apart:
    /// the tension `K^a ε/L₀`, `|F^s|`, and `K^m θ` split about `ê = d/|d|`.
    #[inline]
    pub fn loads(&self, bond: &Bond, d: DVec3) -> BondLoads {
        let e = d / d.length();
        let twist = self.moment.dot(e);
        BondLoads {
            tension: bond.k_axial * self.strain / bond.rest_length,
            shear: self.shear_force.length(),
            bend: (self.moment - twist * e).length(),
            twist,
        }
    }
}

/// Whether the failure index ([`BondLoads::failure_index`]) of a bond of length `len`
/// with result `r` may reach 1, from its energies alone: false only when `3 (A U^a +
/// S U^s/|d|² + B U^m)` stays below `1 − 10⁻⁹`, `[A, S, B]` the bond's
/// [`break_coefficients`]. Each load is bounded by an energy, `|T| = √(2K^a U^a)/L₀`,
/// `|F^s| ≤ 2√(K^s U^s)/|d|` (the shear law's projections are at most unit vectors),
/// `M_b, |M_t| ≤ |K^m θ| = √(2K^m U^m)`, so the index is at most `x + y + z` with `x² +
/// y² + z²` the sum above over 3, and `(x + y + z)² ≤ 3(x² + y² + z²)`. The margin is far
/// above the rounding of either side. The CPU computes the exact loads only of the bonds
/// this does not clear; the decision is the exact index's.
#[inline(always)]
pub fn may_break(r: &BondResult, len: f64, coefficients: &[f64; 3]) -> bool {
    let [a, s, b] = *coefficients;
    let sum = a * r.e_axial + s * r.e_shear / (len * len) + b * r.e_bend;
    3.0 * sum >= 1.0 - 1e-9
}

/// The coefficients `[A, S, B]` of [`may_break`] for a bond with inverse
/// strengths `inv` ([`crate::model::BondStrength::inverse`]): `A = 2K^a/L₀² (1/T_c)²`,
/// `S = 4K^s (1/S_c)²`, `B = 2K^m (1/M_bc + 1/M_tc)²`.
pub fn break_coefficients(bond: &Bond, inv: &[f64; 4]) -> [f64; 3] {
    let l0 = bond.rest_length;
    [
        2.0 * bond.k_axial / (l0 * l0) * inv[0] * inv[0],
        4.0 * bond.k_shear * inv[1] * inv[1],
        2.0 * bond.k_bend * (inv[2] + inv[3]) * (inv[2] + inv[3]),
    ]
}

/// The binder law of one bond, with what its loads are made of when `PARTS` (zero
/// otherwise: unbreakable bonds pay nothing for them).
#[inline(always)]
fn bond_law<const PARTS: bool>(
    bond: &Bond,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    shear: ShearForm,
) -> Option<(BondResult, LoadParts)> {
    let (e_bend, m_bend) = bend(bond.k_bend, alpha_i, alpha_j, bond.rest_rotation)?;
    let (e_axial, f_axial, strain, len) = axial_strained(bond.k_axial, bond.rest_length, x_i, x_j);
    let (e_shear, f_shear, m_si, m_sj) = match shear {
        ShearForm::Objective => shear_objective(
            bond.k_shear,
            x_i,
            x_j,
            alpha_i,
            alpha_j,
            bond.rest_dir_i,
            bond.rest_dir_j,
        ),
        ShearForm::Printed => {
            shear_printed(bond.k_shear, x_i, x_j, alpha_i, alpha_j, bond.rest_dir_i)
        }
    };
    let loads = if PARTS {
        LoadParts {
            strain,
            shear_force: f_shear,
            moment: m_bend,
            len,
        }
    } else {
        LoadParts {
            len,
            ..LoadParts::default()
        }
    };
    Some((
        BondResult {
            force_i: f_axial + f_shear,
            moment_i: m_bend + m_si,
            moment_j: m_sj - m_bend,
            e_bend,
            e_axial,
            e_shear,
        },
        loads,
    ))
}
