//! Issue 49, item 12: a library user (a test, Python) that lists or opens GPU adapters
//! without `XDG_RUNTIME_DIR` gets none of Mesa's `XDG_RUNTIME_DIR is invalid or not set`
//! lines (626 of them in `cargo test`'s output before). The test runs its own binary
//! again with the variable removed, so the child's first instance is made without it.

use std::process::Command;

/// Lists the adapters (every instance the library makes goes through one function).
/// Run alone by the test below.
#[test]
fn lists_adapters() {
    let adapters = varidem::gpu::context::list_adapters();
    println!("{} adapters", adapters.len());
}

#[test]
fn listing_adapters_without_xdg_runtime_dir_prints_no_complaint() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "lists_adapters",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    assert!(all.contains("adapters"), "the child listed nothing: {all}");
    assert!(!all.contains("XDG_RUNTIME_DIR"), "{all}");
}
