//! GPU test helpers: an adapter or a clear skip (a failure under VARIDEM_REQUIRE_GPU=1).
#![allow(dead_code, unreachable_pub)]

use varidem::gpu::context::GpuContext;

/// A device for a GPU test, or `None` (with a message) when there is no adapter and
/// `VARIDEM_REQUIRE_GPU` is not set. Under `VARIDEM_REQUIRE_GPU=1` a missing adapter
/// panics, so CI cannot pass by skipping.
pub fn context(test: &str) -> Option<GpuContext> {
    match GpuContext::new(None) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            if std::env::var("VARIDEM_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{test}: VARIDEM_REQUIRE_GPU=1 but no GPU adapter: {e}");
            }
            eprintln!("SKIPPED {test}: no GPU adapter ({e}); set VARIDEM_REQUIRE_GPU=1 to make this a failure");
            None
        }
    }
}

/// A device with `SHADER_F64` for an f64 GPU test, or `None` (with a message) when
/// there is no adapter or it lacks f64 and `VARIDEM_REQUIRE_GPU` is not set; under
/// `VARIDEM_REQUIRE_GPU=1` either case panics.
pub fn context_f64(test: &str) -> Option<GpuContext> {
    let ctx = context(test)?;
    if ctx.has_f64() {
        return Some(ctx);
    }
    if std::env::var("VARIDEM_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!(
            "{test}: VARIDEM_REQUIRE_GPU=1 but adapter {} has no SHADER_F64",
            ctx.summary.name
        );
    }
    eprintln!(
        "SKIPPED {test}: adapter {} has no SHADER_F64",
        ctx.summary.name
    );
    None
}

/// Largest difference over particles of position, velocity, rotation and angular
/// velocity, each relative to that field's largest magnitude.
pub fn per_field(a: &varidem::model::Particles, b: &varidem::model::Particles) -> [f64; 4] {
    let fields = [
        (&a.position, &b.position),
        (&a.velocity, &b.velocity),
        (&a.rotation, &b.rotation),
        (&a.angular_velocity, &b.angular_velocity),
    ];
    fields.map(|(x, y)| {
        let scale = x.iter().map(|v| v.length()).fold(0.0, f64::max).max(1e-300);
        x.iter()
            .zip(y.iter())
            .map(|(u, v)| (*u - *v).length())
            .fold(0.0, f64::max)
            / scale
    })
}
