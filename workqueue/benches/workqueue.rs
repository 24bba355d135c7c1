//! Workqueue benchmarks (filled in below).
fn main() {}
