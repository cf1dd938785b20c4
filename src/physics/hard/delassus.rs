//! Delassus blocks of one contact from its bodies.

/// One body's share of a contact for [`delassus`]: `(m⁻¹, I⁻¹ in the world frame,
/// r = contact point − centre of mass)`; a static body is `(0, [[0; 3]; 3], r)`.
pub type DelassusBody = (f64, [[f64; 3]; 3], [f64; 3]);

/// Delassus block of one contact in the contact frame:
/// `A = Qᵀ [Σ_k (m_k⁻¹ E + S(r_k)ᵀ I_k⁻¹ S(r_k))] Q`, where `Q = [n t o]` has the frame
/// vectors as columns (`frame = [n, t, o]`), `S(r)v = r × v`, and each body is given as
/// `(m⁻¹, I⁻¹ (world frame), r = contact point − centre of mass)`. A static body is `(0, 0, ·)`.
pub fn delassus(bodies: &[DelassusBody], frame: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut w = [[0.0; 3]; 3];
    for &(inv_m, inv_i, r) in bodies {
        let s = [[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]];
        for i in 0..3 {
            w[i][i] += inv_m;
            for j in 0..3 {
                // (Sᵀ I⁻¹ S)_ij = Σ_kl S_ki I⁻¹_kl S_lj
                let mut acc = 0.0;
                for k in 0..3 {
                    for l in 0..3 {
                        acc += s[k][i] * inv_i[k][l] * s[l][j];
                    }
                }
                w[i][j] += acc;
            }
        }
    }
    let mut a = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let mut acc = 0.0;
            for k in 0..3 {
                for l in 0..3 {
                    acc += frame[i][k] * w[k][l] * frame[j][l];
                }
            }
            a[i][j] = acc;
        }
    }
    a
}
