//! Code generated for the CRD fixture builds in a crate of its own (as a
//! user's crate would hold it) with no clippy warnings.
//!
//! The crate is written under the workspace's target directory and built
//! with a target directory of its own there, so later runs reuse the
//! build; the workspace's Cargo.lock is copied in so the same dependency
//! versions are used and nothing needs resolving.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{CRD_ARGS, workspace};

/// The user's crate root: the types of the CRD fixture, the generated
/// module, and a function calling the accessors.
fn lib_rs() -> String {
    format!(
        "//! A user's crate: two custom resource types and the informers\n\
         //! clientgo-codegen generated for them.\n\
         #![deny(missing_docs)]\n\n\
         #[rustfmt::skip]\npub mod generated;\n\
         pub use generated::CronTabInformers;\n\n{}\n{USE}",
        include_str!("fixtures/crontab_types.rs")
    )
}

const USE: &str = r#"
/// The accessors a user calls, type-checked.
pub fn nightly(
    factory: &clientgo_informers::SharedInformerFactory,
) -> Option<std::sync::Arc<CronTab>> {
    factory.stable().v1().crontabs().lister().crontabs("default").get("nightly")
}
"#;

fn manifest(workspace: &Path) -> String {
    format!(
        r#"[package]
name = "codegen-compile-check"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
clientgo-informers = {{ path = "{}" }}
k8s-openapi = {{ version = "0.29", default-features = false, features = ["std", "v1_36"] }}
serde = {{ version = "1", features = ["derive"] }}

[workspace]
"#,
        workspace.join("informers").display()
    )
}

#[test]
fn generated_crd_code_builds_in_its_own_crate_without_clippy_warnings() {
    let workspace = workspace();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let root = target.join("codegen-compile-check");
    let krate = root.join("crate");
    let _ = fs::remove_dir_all(&krate);
    fs::create_dir_all(krate.join("src")).unwrap();
    fs::write(krate.join("Cargo.toml"), manifest(&workspace)).unwrap();
    fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    fs::write(krate.join("src/lib.rs"), lib_rs()).unwrap();

    let out = krate.join("src/generated");
    let generated = Command::new(env!("CARGO_BIN_EXE_clientgo-codegen"))
        .current_dir(&workspace)
        .args(CRD_ARGS)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let has_clippy = Command::new(&cargo)
        .args(["clippy", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    let mut build = Command::new(&cargo);
    build
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS");
    if has_clippy {
        build.args(["clippy", "--quiet", "--", "-D", "warnings"]);
    } else {
        println!("cargo clippy is not installed; checking that the code builds only");
        build.args(["build", "--quiet"]);
    }
    let built = build.output().unwrap();
    assert!(
        built.status.success(),
        "the generated crate does not build cleanly:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}
