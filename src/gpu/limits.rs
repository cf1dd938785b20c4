//! The device limits varidem needs, and which it requests.
//!
//! Every kernel of every path is built to run within [`PORTABLE`]: 16 storage buffers
//! per shader stage (Direct3D 12 resource-binding tier 2; wgpu reports 29 on Metal and
//! 32 on Debian 12's lavapipe), 128 MiB per storage binding, 16 KiB of workgroup
//! memory and 256 invocations per workgroup. By default varidem requests the adapter's
//! own limits, so larger problems may use the larger bindings a big GPU offers (never
//! more bindings); `VARIDEM_GPU_LIMITS=minimum` requests exactly the portable minimum,
//! which is how CI proves that every kernel fits it.

use crate::error::{Error, Result};

/// Environment variable choosing the requested limits: `adapter` (default), `minimum`,
/// or either followed by overrides, e.g. `minimum,storage_buffers=4` (keys:
/// `storage_buffers`, `binding_bytes`, `workgroup_bytes`, `invocations`, and
/// `texture_size`, the largest picture side `render` may draw).
pub const LIMITS_ENV: &str = "VARIDEM_GPU_LIMITS";

/// varidem's portable minimum: the limits every kernel fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Portable {
    /// Storage buffers per shader stage.
    pub storage_buffers_per_stage: u32,
    /// Bytes per storage-buffer binding.
    pub storage_binding_bytes: u64,
    /// Workgroup memory, bytes.
    pub workgroup_bytes: u32,
    /// Invocations per workgroup.
    pub invocations_per_workgroup: u32,
}

/// The portable minimum (README, GPU limits).
pub const PORTABLE: Portable = Portable {
    storage_buffers_per_stage: 16,
    storage_binding_bytes: 128 << 20,
    workgroup_bytes: 16 << 10,
    invocations_per_workgroup: 256,
};

/// Which limits a device is requested with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitsRequest {
    /// `true`: the portable minimum ([`PORTABLE`] on WebGPU's defaults); `false`: the
    /// adapter's own limits.
    pub minimum: bool,
    /// Storage buffers per stage instead (tests request fewer than a kernel needs).
    pub storage_buffers: Option<u32>,
    /// Bytes per storage binding instead.
    pub binding_bytes: Option<u64>,
    /// Workgroup memory instead.
    pub workgroup_bytes: Option<u32>,
    /// Invocations per workgroup instead.
    pub invocations: Option<u32>,
    /// Largest 2D texture side instead (`render`'s pictures).
    pub texture_size: Option<u32>,
}

impl LimitsRequest {
    /// The portable minimum.
    pub const MINIMUM: Self = Self {
        minimum: true,
        storage_buffers: None,
        binding_bytes: None,
        workgroup_bytes: None,
        invocations: None,
        texture_size: None,
    };

    /// Parses a [`LIMITS_ENV`] value.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |what: String| Error::Backend(format!("{LIMITS_ENV}={text}: {what}"));
        let mut out = Self::default();
        for (k, part) in text.split(',').map(str::trim).enumerate() {
            match (k, part) {
                (0, "adapter" | "") => {}
                (0, "minimum") => out.minimum = true,
                _ => {
                    let (key, value) = part.split_once('=').ok_or_else(|| {
                        bad(format!(
                            "'{part}' is neither 'adapter', 'minimum' (first) nor key=value"
                        ))
                    })?;
                    let num = value
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| bad(format!("'{value}' is not a whole number")))?;
                    let small =
                        || u32::try_from(num).map_err(|_| bad(format!("{key}={num} is too large")));
                    match key.trim() {
                        "storage_buffers" => out.storage_buffers = Some(small()?),
                        "binding_bytes" => out.binding_bytes = Some(num),
                        "workgroup_bytes" => out.workgroup_bytes = Some(small()?),
                        "invocations" => out.invocations = Some(small()?),
                        "texture_size" => out.texture_size = Some(small()?),
                        other => {
                            return Err(bad(format!(
                                "unknown key '{other}' (storage_buffers, binding_bytes, workgroup_bytes, invocations, texture_size)"
                            )))
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The request in [`LIMITS_ENV`] (the adapter's limits when unset).
    pub fn from_env() -> Result<Self> {
        match std::env::var(LIMITS_ENV) {
            Ok(v) => Self::parse(&v),
            Err(_) => Ok(Self::default()),
        }
    }

    /// The limits to request from an adapter that offers `adapter`.
    pub fn limits(&self, adapter: &wgpu::Limits) -> wgpu::Limits {
        let mut l = if self.minimum {
            wgpu::Limits {
                max_storage_buffers_per_shader_stage: PORTABLE.storage_buffers_per_stage,
                max_storage_buffer_binding_size: PORTABLE.storage_binding_bytes,
                max_compute_workgroup_storage_size: PORTABLE.workgroup_bytes,
                max_compute_invocations_per_workgroup: PORTABLE.invocations_per_workgroup,
                ..wgpu::Limits::default()
            }
        } else {
            adapter.clone()
        };
        if let Some(v) = self.storage_buffers {
            l.max_storage_buffers_per_shader_stage = v;
        }
        if let Some(v) = self.binding_bytes {
            l.max_storage_buffer_binding_size = v;
        }
        if let Some(v) = self.workgroup_bytes {
            l.max_compute_workgroup_storage_size = v;
        }
        if let Some(v) = self.invocations {
            l.max_compute_invocations_per_workgroup = v;
        }
        if let Some(v) = self.texture_size {
            l.max_texture_dimension_2d = v;
        }
        l
    }

    /// Whether this is the adapter's own limits, unchanged.
    pub fn is_adapter(&self) -> bool {
        *self == Self::default()
    }
}

/// The limits of `limits` that fall short of the portable minimum, as
/// `name: have < need` lines (empty when it meets it).
pub fn shortfalls(limits: &wgpu::Limits) -> Vec<String> {
    let p = PORTABLE;
    let mut out = Vec::new();
    let mut check = |name: &str, have: u64, need: u64| {
        if have < need {
            out.push(format!("{name}: {have} < {need}"));
        }
    };
    check(
        "storage buffers per shader stage",
        limits.max_storage_buffers_per_shader_stage.into(),
        p.storage_buffers_per_stage.into(),
    );
    check(
        "storage-buffer binding size (bytes)",
        limits.max_storage_buffer_binding_size,
        p.storage_binding_bytes,
    );
    check(
        "workgroup memory (bytes)",
        limits.max_compute_workgroup_storage_size.into(),
        p.workgroup_bytes.into(),
    );
    check(
        "invocations per workgroup",
        limits.max_compute_invocations_per_workgroup.into(),
        p.invocations_per_workgroup.into(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_name_bad_input() {
        assert_eq!(
            LimitsRequest::parse("adapter").unwrap(),
            LimitsRequest::default()
        );
        assert_eq!(
            LimitsRequest::parse("minimum").unwrap(),
            LimitsRequest::MINIMUM
        );
        let r = LimitsRequest::parse("minimum, storage_buffers=4").unwrap();
        assert!(r.minimum);
        assert_eq!(r.storage_buffers, Some(4));
        let r = LimitsRequest::parse("adapter,binding_bytes=1048576").unwrap();
        assert_eq!(r.binding_bytes, Some(1 << 20));
        for bad in ["maximum", "minimum,colour=3", "minimum,storage_buffers=x"] {
            let e = LimitsRequest::parse(bad).unwrap_err().to_string();
            assert!(e.contains(LIMITS_ENV), "{e}");
        }
    }

    #[test]
    fn the_minimum_request_is_the_portable_minimum() {
        let l = LimitsRequest::MINIMUM.limits(&wgpu::Limits::default());
        assert!(shortfalls(&l).is_empty());
        assert_eq!(l.max_storage_buffers_per_shader_stage, 16);
        assert_eq!(l.max_storage_buffer_binding_size, 128 << 20);
        assert_eq!(l.max_compute_workgroup_storage_size, 16384);
        assert_eq!(l.max_compute_invocations_per_workgroup, 256);
        let few = LimitsRequest::parse("minimum,storage_buffers=4")
            .unwrap()
            .limits(&wgpu::Limits::default());
        assert_eq!(
            shortfalls(&few),
            vec!["storage buffers per shader stage: 4 < 16".to_string()]
        );
    }
}
