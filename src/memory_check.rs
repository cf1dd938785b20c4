//! Host memory: the least a problem needs and what the machine has, so that a problem
//! too large for the machine is refused with a clear error before it is allocated,
//! instead of the process being killed by the out-of-memory killer.

use glam::DVec3;

use crate::error::{Error, Result};
use crate::model::Bond;

/// Bytes per particle of the model (`Particles`, structure of arrays): position,
/// velocity, rotation, angular velocity and pendulum offset, mass, inertia and radius,
/// flags and material.
pub const MODEL_BYTES_PER_PARTICLE: u64 = (5 * std::mem::size_of::<DVec3>() + 3 * 8 + 2 * 4) as u64;

/// Bytes per bond of the model.
pub const MODEL_BYTES_PER_BOND: u64 = std::mem::size_of::<Bond>() as u64;

/// The least host memory a model of `particles` particles and `bonds` bonds needs
/// (bytes), saturating.
pub fn model_bytes(particles: u64, bonds: u64) -> u64 {
    particles
        .saturating_mul(MODEL_BYTES_PER_PARTICLE)
        .saturating_add(bonds.saturating_mul(MODEL_BYTES_PER_BOND))
}

/// Memory the system can give without swapping (`MemAvailable` of `/proc/meminfo`,
/// bytes); `None` where that is not known (not Linux, or unreadable).
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// `MemAvailable` (kB in the file) in bytes.
fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Refuses `what`, which needs at least `need` bytes, when more than `available`
/// bytes; no check when `available` is unknown.
pub fn check_fits(what: &str, need: u64, available: Option<u64>) -> Result<()> {
    match available {
        Some(have) if need > have => Err(Error::HostTooSmall(format!(
            "{what} needs at least {} of memory; {} is available",
            gib(need),
            gib(have)
        ))),
        _ => Ok(()),
    }
}

/// [`check_fits`] against this machine's [`available`] memory.
pub fn check(what: &str, need: u64) -> Result<()> {
    check_fits(what, need, available())
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available_and_refuses_what_does_not_fit() {
        let meminfo =
            "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20971520 kB\n";
        assert_eq!(parse_mem_available(meminfo), Some(20 << 30));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
        let err = check_fits("10¹¹ particles", 15_200_000_000_000, Some(20 << 30))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "10¹¹ particles needs at least 14156.1 GiB of memory; 20.0 GiB is available"
            ),
            "{err}"
        );
        assert!(check_fits("small", 1 << 20, Some(20 << 30)).is_ok());
        assert!(check_fits("unknown", u64::MAX, None).is_ok());
        assert_eq!(model_bytes(u64::MAX, 1), u64::MAX);
    }
}
