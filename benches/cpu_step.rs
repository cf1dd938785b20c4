//! Placeholder, replaced by the CPU step benchmark.
fn main() {}
