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
