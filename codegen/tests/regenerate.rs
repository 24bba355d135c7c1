//! The `clientgo-codegen` binary: the committed generated code is what it
//! produces today (byte for byte), and bad input never touches good
//! output.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::fs;
use std::process::{Command, Output};

use crate::support::{CRD_ARGS, scratch, workspace};

/// The README's regeneration command for the built-in informers, minus
/// `cargo run -p clientgo-codegen --bin clientgo-codegen --`.
const BUILT_IN_ARGS: [&str; 6] = [
    "--openapi",
    "../shared/openapi/kubernetes-v1.36.0-swagger.json",
    "--target",
    "informers",
    "--out",
    "informers/src/builtin",
];

/// Where the informers generated from the CRD fixture are committed.
const CRD_OUT: &str = "informers/tests/crontab_informers";

fn codegen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clientgo-codegen"))
        .current_dir(workspace())
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_committed_built_in_informers_are_what_the_1_36_spec_gives() {
    if !workspace().join(BUILT_IN_ARGS[1]).exists() {
        println!(
            "skipped: {} is absent (it lives in ../shared beside the repository)",
            BUILT_IN_ARGS[1]
        );
        return;
    }
    let mut args = BUILT_IN_ARGS.to_vec();
    args.push("--check");
    let output = codegen(&args);
    assert!(
        output.status.success(),
        "informers/src/builtin is stale; regenerate it with the command in README.md:\n{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert!(text(&output.stdout).contains("up to date (40 files)"));
}

#[test]
fn the_committed_crd_informers_are_what_the_fixture_gives() {
    let mut args = CRD_ARGS.to_vec();
    args.extend(["--out", CRD_OUT, "--check"]);
    let output = codegen(&args);
    assert!(
        output.status.success(),
        "informers/tests/crontab_informers is stale:\n{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

#[test]
fn the_committed_dynamic_crd_informers_are_what_the_spec_gives() {
    let output = codegen(&[
        "--openapi",
        "codegen/tests/fixtures/crd-spec.json",
        "--trait",
        "DynamicCronTabInformers",
        "--out",
        "informers/tests/dynamic_crontab_informers",
        "--check",
    ]);
    assert!(
        output.status.success(),
        "informers/tests/dynamic_crontab_informers is stale:\n{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert!(
        text(&output.stderr).contains("stable.example.com/v1/crontabs (CronTab) has no Rust type"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn check_reports_a_stale_file_and_writing_replaces_it() {
    let out = scratch("stale");
    let out_arg = out.join("generated").display().to_string();
    let mut args = CRD_ARGS.to_vec();
    args.extend(["--out", &out_arg]);
    let written = codegen(&args);
    assert!(written.status.success(), "{}", text(&written.stderr));
    let file = out.join("generated/stable/v1.rs");
    let good = fs::read_to_string(&file).unwrap();
    fs::write(&file, good.replace("crontabs", "cronjobs")).unwrap();

    let mut check = args.clone();
    check.push("--check");
    let stale = codegen(&check);
    assert_eq!(stale.status.code(), Some(1));
    assert!(text(&stale.stdout).contains("stable/v1.rs: differs"));

    assert!(codegen(&args).status.success());
    assert_eq!(fs::read_to_string(&file).unwrap(), good);
    fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_input_names_the_file_and_place_and_leaves_good_output_alone() {
    let root = scratch("bad");
    let out = root.join("generated");
    let out_arg = out.display().to_string();
    let mut args = CRD_ARGS.to_vec();
    args.extend(["--out", &out_arg]);
    assert!(codegen(&args).status.success());
    let before = fs::read_to_string(out.join("mod.rs")).unwrap();

    let broken_spec = root.join("spec.json");
    fs::write(&broken_spec, "{\"paths\": {\n  \"/api/v1/pods\": [\n").unwrap();
    let no_served = root.join("crd.yaml");
    fs::write(
        &no_served,
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: as, kind: A}\n  versions: [{name: v1, served: false}]\n",
    )
    .unwrap();
    let spec_arg = broken_spec.display().to_string();
    let crd_arg = no_served.display().to_string();
    let cases: [(Vec<&str>, &[&str]); 4] = [
        (
            vec!["--openapi", &spec_arg, "--out", &out_arg],
            &["spec.json:3:", "not valid JSON"],
        ),
        (
            vec!["--crd", &crd_arg, "--type", "A=crate::A", "--out", &out_arg],
            &["crd.yaml", "[0].spec.versions", "served"],
        ),
        (
            vec!["--crd", CRD_ARGS[1], "--out", &out_arg],
            &["crontab.yaml", "spec.names.kind", "--type CronTab="],
        ),
        (
            vec!["--openapi", "no/such/spec.json", "--out", &out_arg],
            &["no/such/spec.json", "cannot read"],
        ),
    ];
    for (args, expected) in cases {
        let output = codegen(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        for needle in expected {
            assert!(
                stderr.contains(needle),
                "{args:?}: {needle:?} not in {stderr}"
            );
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(fs::read_to_string(out.join("mod.rs")).unwrap(), before);
    }

    // Pointing --out at hand-written code is refused.
    let sources = root.join("src");
    fs::create_dir_all(&sources).unwrap();
    fs::write(sources.join("lib.rs"), "pub fn keep() {}\n").unwrap();
    let sources_arg = sources.display().to_string();
    let mut args = CRD_ARGS.to_vec();
    args.extend(["--out", &sources_arg]);
    let refused = codegen(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("refusing"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(
        fs::read_to_string(sources.join("lib.rs")).unwrap(),
        "pub fn keep() {}\n"
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn help_and_flag_mistakes() {
    let help = codegen(&["--help"]);
    assert!(help.status.success());
    assert!(text(&help.stdout).contains("--from-cluster"));
    let wrong = codegen(&["--openapi", "x.json", "--out", "o", "--colour"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains("'--colour'"),
        "{}",
        text(&wrong.stderr)
    );
    let version = codegen(&["--version"]);
    assert!(version.status.success());
    assert!(text(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
    let no_input = codegen(&["--out", "o"]);
    assert_eq!(no_input.status.code(), Some(2));
    assert!(
        text(&no_input.stderr).contains("--openapi"),
        "{}",
        text(&no_input.stderr)
    );
}

#[test]
fn the_committed_protobuf_codecs_are_what_the_proto_files_give() {
    if !workspace().join("../shared/proto/k8s.io").exists() {
        println!(
            "skipped: ../shared/proto is absent (it lives in ../shared beside the repository)"
        );
        return;
    }
    let output = Command::new(env!("CARGO_BIN_EXE_clientgo-protobuf-gen"))
        .current_dir(workspace())
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "protobuf/src/generated is stale; regenerate it with \
         cargo run -p clientgo-codegen --bin clientgo-protobuf-gen:\n{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}
