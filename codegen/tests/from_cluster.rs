//! `--from-cluster`: the spec comes from the server's `/openapi/v2`, found
//! through a kubeconfig (TLS and a bearer token, as a real cluster's).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::scratch;
use clientgo_testing::TestApiServer;

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

/// The fixture spec plus a CRD's resource, as a cluster serving CronTabs
/// publishes it: definitions outside `io.k8s.*`.
fn spec_with_a_crd() -> String {
    let mut spec: serde_json::Value = serde_json::from_str(SPEC).unwrap();
    let gvk =
        serde_json::json!({"group": "stable.example.com", "version": "v1", "kind": "CronTab"});
    let op = |action: &str, schema: Option<&str>| {
        let mut op = serde_json::json!({"x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk});
        if let Some(schema) = schema {
            op["responses"] = serde_json::json!({"200": {"schema": {"$ref": schema}}});
        }
        op
    };
    let paths = spec["paths"].as_object_mut().unwrap();
    paths.insert(
        "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs".into(),
        serde_json::json!({
            "get": op("list", Some("#/definitions/com.example.stable.v1.CronTabList")),
            "post": op("post", None),
        }),
    );
    paths.insert(
        "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}".into(),
        serde_json::json!({"get": op("get", None), "delete": op("delete", None)}),
    );
    paths.insert(
        "/apis/stable.example.com/v1/watch/namespaces/{namespace}/crontabs".into(),
        serde_json::json!({"get": op("watchlist", None)}),
    );
    let definitions = spec["definitions"].as_object_mut().unwrap();
    definitions.insert(
        "com.example.stable.v1.CronTab".into(),
        serde_json::json!({"x-kubernetes-group-version-kind": [gvk]}),
    );
    definitions.insert(
        "com.example.stable.v1.CronTabList".into(),
        serde_json::json!({"properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/com.example.stable.v1.CronTab"}}}}),
    );
    spec.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_crds_get_the_types_named_or_dynamic_objects() {
    let server = TestApiServer::builder()
        .openapi_v2(spec_with_a_crd())
        .start()
        .await
        .unwrap();
    let root = scratch("from-cluster-crds");
    let kubeconfig = root.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();

    // No type named: DynamicObjects, said so, and nothing names a type
    // that does not exist.
    let out = root.join("untyped");
    let output = from_cluster(&kubeconfig, &[], &out).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("stable.example.com/v1/crontabs (CronTab) has no Rust type"),
        "{stderr}"
    );
    let generated = fs::read_to_string(out.join("stable/v1.rs")).unwrap();
    assert!(
        generated.contains("clientgo_informers::apimachinery::DynamicObject"),
        "{generated}"
    );
    assert!(generated.contains("dynamic_informer_for"), "{generated}");
    for entry in fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            assert!(
                !fs::read_to_string(&path)
                    .unwrap()
                    .contains("k8s_openapi::com")
            );
        }
    }

    // A type named: generated against it, as from the CRD manifest.
    let out = root.join("typed");
    let output = from_cluster(&kubeconfig, &["--type", "CronTab=crate::CronTab"], &out).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let generated = fs::read_to_string(out.join("stable/v1.rs")).unwrap();
    assert!(generated.contains("crate::CronTab"), "{generated}");
    assert!(
        generated.contains("pub fn crontabs(&self, namespace: &str) -> CronTabNamespaceLister")
    );
    assert!(!generated.contains("k8s_openapi::com"));
    fs::remove_dir_all(&root).unwrap();
}
