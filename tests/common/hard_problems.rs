//! Deterministic random single-contact problems of hard contacts (random SPD blocks and
//! physical Delassus blocks of random bodies, with every sign case of `b_n`) and the
//! small linear algebra they need, independent of the library's solvers: shared by
//! `tests/physics_hard.rs` (against a brute-force solver) and `tests/gpu_hard_solve.rs`
//! (the WGSL twin against the CPU).

#![allow(
    clippy::needless_range_loop,
    reason = "dense 3×3 linear algebra reads best with index loops"
)]

use varidem::physics::hard::delassus;

/// A 3×3 matrix, row-major.
pub type M3 = [[f64; 3]; 3];
/// A 3-vector.
pub type V3 = [f64; 3];

// -------------------------------------------------------------------------------------
// Deterministic random numbers.

pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }
    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f()
    }
    pub fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.f()).exp()
    }
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f().max(1e-300);
        let u2 = self.f();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
    pub fn unit(&mut self) -> V3 {
        loop {
            let v = [self.normal(), self.normal(), self.normal()];
            let n = norm(v);
            if n > 1e-3 {
                return [v[0] / n, v[1] / n, v[2] / n];
            }
        }
    }
    /// Random rotation matrix (rows orthonormal, det +1) from a random unit quaternion.
    pub fn rotation(&mut self) -> M3 {
        let q = loop {
            let q = [self.normal(), self.normal(), self.normal(), self.normal()];
            let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
            if n > 1e-3 {
                break [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
            }
        };
        let [w, x, y, z] = q;
        [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - w * z),
                2.0 * (x * z + w * y),
            ],
            [
                2.0 * (x * y + w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - w * x),
            ],
            [
                2.0 * (x * z - w * y),
                2.0 * (y * z + w * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ]
    }
}

// -------------------------------------------------------------------------------------
// Small linear algebra (independent of the library).

pub fn norm(v: V3) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
pub fn matvec(a: &M3, x: V3) -> V3 {
    [dot(a[0], x), dot(a[1], x), dot(a[2], x)]
}
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub fn maxabs(v: V3) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}
pub fn objective(a: &M3, b: V3, x: V3) -> f64 {
    0.5 * dot(x, matvec(a, x)) - dot(x, b)
}
pub fn velocity(a: &M3, b: V3, x: V3) -> V3 {
    sub(matvec(a, x), b)
}
/// `R diag(d) Rᵀ`.
pub fn rdrt(r: &M3, d: V3) -> M3 {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| r[i][k] * d[k] * r[j][k]).sum();
        }
    }
    m
}
/// Gaussian elimination with partial pivoting.
pub fn solve3(a: &M3, b: V3) -> V3 {
    let mut m = [[0.0; 4]; 3];
    for i in 0..3 {
        m[i][..3].copy_from_slice(&a[i]);
        m[i][3] = b[i];
    }
    for col in 0..3 {
        let piv = (col..3)
            .max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))
            .unwrap();
        m.swap(col, piv);
        for row in col + 1..3 {
            let f = m[row][col] / m[col][col];
            for k in col..4 {
                m[row][k] -= f * m[col][k];
            }
        }
    }
    let mut x = [0.0; 3];
    for i in (0..3).rev() {
        let s: f64 = (i + 1..3).map(|k| m[i][k] * x[k]).sum();
        x[i] = (m[i][3] - s) / m[i][i];
    }
    x
}

// -------------------------------------------------------------------------------------
// Random problems.

/// Random SPD block `s·R diag(λ) Rᵀ` with condition number up to `kappa`.
pub fn random_spd(rng: &mut Lcg, kappa: f64) -> M3 {
    let r = rng.rotation();
    let s = rng.log_range(1e-3, 1e3);
    let d = [
        s,
        s * rng.log_range(1.0, kappa),
        s * rng.log_range(1.0, kappa),
    ];
    let mut a = rdrt(&r, d);
    for i in 0..3 {
        for j in 0..i {
            a[i][j] = a[j][i];
        }
    }
    a
}

/// Physical Delassus block of a random pair of rigid bodies (random masses, full inertia
/// tensors from random mass distributions, contact points and normal; sometimes one body
/// is static).
pub fn random_delassus(rng: &mut Lcg) -> M3 {
    let mut bodies = Vec::new();
    let nb = if rng.f() < 0.3 { 1 } else { 2 };
    for _ in 0..nb {
        let m = rng.log_range(0.05, 20.0);
        // Inertia I = tr(C)E − C of a second-moment tensor C = m R diag(σ²) Rᵀ: always
        // satisfies the triangle inequality of principal moments.
        let rot = rng.rotation();
        let sig = [
            rng.log_range(0.05, 2.0),
            rng.log_range(0.05, 2.0),
            rng.log_range(0.05, 2.0),
        ];
        let cm = rdrt(
            &rot,
            [
                m * sig[0] * sig[0],
                m * sig[1] * sig[1],
                m * sig[2] * sig[2],
            ],
        );
        let tr = cm[0][0] + cm[1][1] + cm[2][2];
        let mut inertia = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                inertia[i][j] = if i == j { tr } else { 0.0 } - cm[i][j];
            }
        }
        let mut inv = [[0.0; 3]; 3];
        for j in 0..3 {
            let mut e = [0.0; 3];
            e[j] = 1.0;
            let col = solve3(&inertia, e);
            for i in 0..3 {
                inv[i][j] = col[i];
            }
        }
        let reach = rng.log_range(0.05, 3.0);
        let u = rng.unit();
        bodies.push((1.0 / m, inv, [reach * u[0], reach * u[1], reach * u[2]]));
    }
    let n = rng.unit();
    let helper = if n[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let t0 = cross(n, helper);
    let t0n = norm(t0);
    let t0 = [t0[0] / t0n, t0[1] / t0n, t0[2] / t0n];
    let o0 = cross(n, t0);
    let ang = rng.range(0.0, std::f64::consts::TAU);
    let (s, c) = ang.sin_cos();
    let t = [
        c * t0[0] + s * o0[0],
        c * t0[1] + s * o0[1],
        c * t0[2] + s * o0[2],
    ];
    let o = cross(n, t);
    let mut a = delassus(&bodies, [n, t, o]);
    for i in 0..3 {
        for j in 0..i {
            a[i][j] = a[j][i];
        }
    }
    a
}

/// Random `b` (all sign cases of `b_n`, including exactly 0 and tiny values) and `μ`.
pub fn random_b_mu(rng: &mut Lcg, a: &M3) -> (V3, f64) {
    let scale = a[0][0] * rng.log_range(1e-2, 1e2);
    let u = rng.f();
    let bn = if u < 0.2 {
        -scale * rng.f()
    } else if u < 0.35 {
        0.0
    } else if u < 0.4 {
        scale * rng.log_range(1e-12, 1e-4)
    } else {
        scale * rng.f()
    };
    let bt = scale * rng.normal() * rng.log_range(0.01, 10.0);
    let bo = scale * rng.normal() * rng.log_range(0.01, 10.0);
    let mu = if rng.f() < 0.1 {
        0.0
    } else {
        rng.range(0.0, 1.5)
    };
    ([bn, bt, bo], mu)
}
