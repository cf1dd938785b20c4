//! The floating-point precision of a run's kernels: a scene key (`[simulation]
//! precision`), a CLI choice and part of every checkpoint.

/// Floating-point precision of the kernels.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit: the default on GPUs.
    #[default]
    F32,
    /// 64-bit: needs `SHADER_F64`; matches the CPU reference to ~1e-12.
    F64,
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
        })
    }
}
