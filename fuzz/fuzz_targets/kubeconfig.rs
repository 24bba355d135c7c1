//! Kubeconfig parsing and context resolution on arbitrary text: a
//! configuration or a typed error, never a panic.
#![no_main]

use std::path::Path;

use clientgo_rest::{
    Config,
    config::{ConfigOverrides, Kubeconfig},
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Files a kubeconfig names are read relative to its folder: one that
    // does not exist, so the fuzzer cannot make it read the disk.
    let path = Path::new("/nonexistent-clientgo-fuzz/config");
    if let Ok(kubeconfig) = Kubeconfig::parse(text, path) {
        let _ = Config::from_kubeconfig_document(&kubeconfig, &ConfigOverrides::default());
    }
});
