//! `--from-cluster`: the spec comes from the server's `/openapi/v2`, found
//! through a kubeconfig (TLS and a bearer token, as a real cluster's).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use clientgo_testing::TestApiServer;
use support::scratch;

const SPEC: &str = include_str!("fixtures/spec.json");

/// Runs `clientgo-codegen --from-cluster --kubeconfig K [extra] --out O`
/// on a blocking thread, so the server keeps serving.
async fn from_cluster(kubeconfig: &Path, extra: &[&str], out: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clientgo-codegen"));
    command
        .arg("--from-cluster")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(extra)
        .arg("--out")
        .arg(out)
        .env_remove("KUBECONFIG");
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spec_is_fetched_with_the_kubeconfig_rules() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("codegen-token")
        .openapi_v2(SPEC)
        .start()
        .await
        .unwrap();
    let root = scratch("from-cluster");
    let kubeconfig = root.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let out = root.join("generated");
    let output = from_cluster(&kubeconfig, &[], &out).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let core = fs::read_to_string(out.join("core/v1.rs")).unwrap();
    assert!(core.contains("pub fn pods(&self) -> PodInformer<'a>"));
    assert!(core.contains("pub fn nodes(&self) -> NodeInformer<'a>"));
    assert!(
        server
            .requests()
            .records()
            .iter()
            .any(|record| record.path == "/openapi/v2" && record.status == 200),
        "the spec came from the server"
    );

    // An unknown context is named, with the kubeconfig it was looked for in.
    let output = from_cluster(&kubeconfig, &["--context", "staging"], &out).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("staging"), "{stderr}");

    // A server that is gone is named by its URL.
    let url = server.url();
    server.stop();
    let output = from_cluster(&kubeconfig, &[], &out).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&url), "{stderr}");
    assert!(out.join("core/v1.rs").exists(), "the good output stays");
    fs::remove_dir_all(&root).unwrap();
}
