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
#[inline]
pub fn bend(k: f64, alpha_i: DVec3, alpha_j: DVec3, rest_rotation: DVec3) -> Option<(f64, DVec3)> {
    let g = rodrigues::try_compose(rodrigues::try_compose(-alpha_i, rest_rotation)?, alpha_j)?;
    let theta = rodrigues::to_rotation_vector(g);
    Some((0.5 * k * theta.length_squared(), k * theta))
}

/// Axial potential, eq. (51): `U^a = ½ K^a (|d|/L₀ − 1)²` with `d = x_j − x_i`.
///
/// Returns `(U^a, F_i)`; `F_j = −F_i` (eq. 52).
#[inline]
pub fn axial(k: f64, rest_length: f64, x_i: DVec3, x_j: DVec3) -> (f64, DVec3) {
    let d = x_j - x_i;
    let len = d.length();
    let strain = len / rest_length - 1.0;
    // F_i = −∂U/∂x_i = +K strain/L₀ · d/|d| (pulls i towards j when stretched).
    let f_i = (k * strain / (rest_length * len)) * d;
    (0.5 * k * strain * strain, f_i)
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
#[inline]
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
#[inline]
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
    /// The loads ([`BondLoads`]), which a bond's strength is compared with.
    pub loads: BondLoads,
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
#[inline]
pub fn bond_forces(
    bond: &Bond,
    x_i: DVec3,
    x_j: DVec3,
    alpha_i: DVec3,
    alpha_j: DVec3,
    shear: ShearForm,
) -> Option<BondResult> {
    let (e_bend, m_bend) = bend(bond.k_bend, alpha_i, alpha_j, bond.rest_rotation)?;
    let (e_axial, f_axial) = axial(bond.k_axial, bond.rest_length, x_i, x_j);
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
    // The loads (issue 47): tension along ê, the shear force, M = K^m θ about ê.
    let d = x_j - x_i;
    let e = d / d.length();
    let twist = m_bend.dot(e);
    let loads = BondLoads {
        tension: bond.k_axial * (d.length() / bond.rest_length - 1.0) / bond.rest_length,
        shear: f_shear.length(),
        bend: (m_bend - twist * e).length(),
        twist,
    };
    Some(BondResult {
        force_i: f_axial + f_shear,
        moment_i: m_bend + m_si,
        moment_j: m_sj - m_bend,
        e_bend,
        e_axial,
        e_shear,
        loads,
    })
}
