//! Helpers shared by codegen's integration tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root (README.md's commands run from there).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A fresh, empty directory under the system's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let directory =
        std::env::temp_dir().join(format!("clientgo-codegen-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&directory);
    fs::create_dir_all(&directory).unwrap();
    directory
}

/// The arguments that generate the informers of the CRD fixture (the
/// ones committed in clientgo-informers' tests), without `--out`.
pub const CRD_ARGS: [&str; 9] = [
    "--crd",
    "codegen/tests/fixtures/crontab.yaml",
    "--type",
    "CronTab=crate::CronTab",
    "--type",
    "ClusterWidget=crate::ClusterWidget",
    "--include-alpha",
    "--trait",
    "CronTabInformers",
];
