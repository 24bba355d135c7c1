//! envtest itself, against the real kube-apiserver and etcd: what a
//! control plane hands out, restarts and compaction, its errors, and that
//! no process outlives the test process however it ends.
//!
//! Its own binary: it starts planes of its own and runs itself as a child
//! process. Skips with a notice when the binaries are absent (fails when
//! `CLIENTGO_ENVTEST_REQUIRED` is set).

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clientgo_apimachinery::{ListOptions, ResourceVersionMatch};
use clientgo_rest::api::CrdInstallError;
use clientgo_rest::{Config, CreateOptions, ResourceClient, RestClient};
use clientgo_testing::envtest::{AssetSearch, Assets, ControlPlane, ControlPlaneOptions, Error};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

/// The child modes this binary runs itself in (`CHILD_MODE`).
const CHILD_MODE: &str = "CLIENTGO_ENVTEST_CHILD_MODE";

async fn shared() -> Option<&'static ControlPlane> {
    ControlPlane::shared().await.unwrap()
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_string(), "v".to_string())].into()),
        ..ConfigMap::default()
    }
}

fn alive(pid: u32) -> bool {
    // A zombie has no command line: it is gone but for its parent's wait.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| !line.is_empty())
}

fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn the_admin_reads_writes_and_gets_a_fresh_namespace() {
    let Some(plane) = shared().await else { return };
    assert!(plane.kubernetes_version().starts_with("v1."));
    let namespace = plane.create_namespace("Admin Test").await.unwrap();
    assert!(namespace.starts_with("admin-test-"), "{namespace}");
    let client = plane.client().unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespace);
    maps.create(&CreateOptions::default(), &config_map("one"))
        .await
        .unwrap();
    let listed = maps.list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    let namespaces = ResourceClient::<Namespace>::all(client);
    assert!(namespaces.get(&namespace).await.is_ok());
}

#[tokio::test]
async fn a_kubeconfig_written_by_the_plane_reaches_it() {
    let Some(plane) = shared().await else { return };
    let path = plane.write_kubeconfig().unwrap();
    let config = Config::from_kubeconfig_file(path).unwrap();
    let client = RestClient::new(config).unwrap();
    let version = client
        .get()
        .abs_path("/version")
        .send::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(
        version["gitVersion"].as_str(),
        Some(plane.kubernetes_version())
    );
}

#[tokio::test]
async fn a_user_may_do_what_rbac_grants_its_groups_and_nothing_else() {
    let Some(plane) = shared().await else { return };
    let namespace = plane.create_namespace("rbac").await.unwrap();
    let user = RestClient::new(plane.user_config("alice", &["readers"]).unwrap()).unwrap();
    let pods = ResourceClient::<Pod>::namespaced(user, &namespace);
    let denied = pods.list(&ListOptions::default()).await.unwrap_err();
    let status = denied.status().unwrap();
    assert_eq!(status.code, 403);
    assert!(
        status
            .message
            .contains("User \"alice\" cannot list resource \"pods\""),
        "{}",
        status.message
    );

    let admin = plane.client().unwrap();
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(format!("{namespace}-pod-reader")),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["pods".into()]),
            verbs: vec!["list".into()],
            ..PolicyRule::default()
        }]),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(format!("{namespace}-readers")),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: format!("{namespace}-pod-reader"),
        },
        subjects: Some(vec![Subject {
            kind: "Group".into(),
            name: "readers".into(),
            ..Subject::default()
        }]),
    };
    ResourceClient::<ClusterRole>::all(admin.clone())
        .create(&CreateOptions::default(), &role)
        .await
        .unwrap();
    ResourceClient::<ClusterRoleBinding>::all(admin)
        .create(&CreateOptions::default(), &binding)
        .await
        .unwrap();
    // RBAC's authorizer reads bindings from its informer: a moment passes.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match pods.list(&ListOptions::default()).await {
            Ok(list) => {
                assert!(list.items.is_empty());
                break;
            }
            Err(error) if Instant::now() < deadline => {
                assert_eq!(error.status().map(|s| s.code), Some(403));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("still denied after the binding: {error}"),
        }
    }
}

fn crontab_crd(
    schema_type: &str,
) -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.envtest.example.com"},
        "spec": {
            "group": "envtest.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": schema_type, "properties": {"cronSpec": {"type": "string"}}}
                }}}
            }]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn installed_crds_are_served_at_once_and_bad_ones_carry_the_servers_status() {
    let Some(plane) = shared().await else { return };
    plane.install_crds(&[crontab_crd("object")]).await.unwrap();
    // Installing again replaces: no error.
    plane.install_crds(&[crontab_crd("object")]).await.unwrap();
    let namespace = plane.create_namespace("crds").await.unwrap();
    let created: serde_json::Value = plane
        .client()
        .unwrap()
        .post()
        .abs_path(format!(
            "/apis/envtest.example.com/v1/namespaces/{namespace}/crontabs"
        ))
        .json_body(
            &json!({"apiVersion": "envtest.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "c"}, "spec": {"cronSpec": "* * * * */5"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(created["spec"]["cronSpec"], "* * * * */5");

    // What the structural check sees is refused before a request.
    let mut bad = crontab_crd("no-such-type");
    bad.metadata.name = Some("bads.envtest.example.com".into());
    bad.spec.names.plural = "bads".into();
    bad.spec.names.kind = "Bad".into();
    bad.spec.names.singular = None;
    bad.spec.names.list_kind = None;
    let error = plane.install_crds(&[bad.clone()]).await.unwrap_err();
    assert!(
        matches!(&error, Error::Crd(CrdInstallError::Invalid(_))),
        "{error}"
    );
    assert!(error.to_string().contains("no-such-type"), "{error}");

    // A CEL rule that does not compile only the server can refuse: its
    // Status comes back.
    let mut bad = crontab_crd("object");
    bad.metadata.name = Some("bads.envtest.example.com".into());
    bad.spec.names.plural = "bads".into();
    bad.spec.names.kind = "Bad".into();
    bad.spec.names.singular = None;
    bad.spec.names.list_kind = None;
    let spec = bad.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|schema| schema.open_api_v3_schema.as_mut())
        .and_then(|root| root.properties.as_mut())
        .and_then(|properties| properties.get_mut("spec"))
        .unwrap();
    spec.x_kubernetes_validations = Some(vec![ValidationRule {
        rule: "self.noSuchField > 1".into(),
        ..ValidationRule::default()
    }]);
    let error = plane.install_crds(&[bad]).await.unwrap_err();
    let Error::Crd(CrdInstallError::Apply { source, .. }) = &error else {
        panic!("{error}")
    };
    assert_eq!(source.status().map(|s| s.code), Some(422), "{error}");
    assert!(error.to_string().contains("noSuchField"), "{error}");
}

#[tokio::test]
async fn a_restarted_api_server_keeps_etcd_and_takes_new_flags_and_compaction_gives_410() {
    let Some(_) = shared().await else { return };
    let plane = ControlPlane::start(ControlPlaneOptions::default())
        .await
        .unwrap();
    let client = plane.client().unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let first = maps
        .create(&CreateOptions::default(), &config_map("kept"))
        .await
        .unwrap();
    let old_version = first.metadata.resource_version.clone().unwrap();
    let old_pid = plane.api_server_pid().unwrap();
    plane
        .restart_api_server(&["--watch-cache=false"])
        .await
        .unwrap();
    assert_ne!(plane.api_server_pid(), Some(old_pid));
    // Same port, same data: the client made before the restart reads it.
    assert!(maps.get("kept").await.is_ok());
    for name in ["a", "b"] {
        maps.create(&CreateOptions::default(), &config_map(name))
            .await
            .unwrap();
    }
    let revision = plane.compact_etcd().await.unwrap();
    assert!(revision > old_version.parse::<i64>().unwrap());
    // Without a watch cache, a list at a compacted resourceVersion is
    // answered by etcd: 410 Gone.
    let gone = maps
        .list(&ListOptions {
            resource_version: Some(old_version),
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListOptions::default()
        })
        .await
        .unwrap_err();
    assert_eq!(gone.status().map(|s| s.code), Some(410), "{gone}");
    let pids = [plane.api_server_pid().unwrap(), plane.etcd_pid().unwrap()];
    let folder = plane.folder().to_path_buf();
    drop(plane);
    wait_gone(&pids);
    assert!(!folder.exists(), "{} is left", folder.display());
}

#[tokio::test]
async fn binaries_not_found_say_where_envtest_looked_and_how_to_get_them() {
    let empty = std::env::temp_dir().join(format!("envtest-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let search = AssetSearch {
        folder: Some(empty.clone()),
        ignore_environment: true,
        ..AssetSearch::default()
    };
    let error = Assets::find(&search).unwrap_err().to_string();
    assert!(error.contains(&empty.display().to_string()), "{error}");
    assert!(error.contains("unpack.sh"), "{error}");
    assert!(error.contains("setup-envtest"), "{error}");
    assert!(error.contains("KUBEBUILDER_ASSETS"), "{error}");
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn a_binary_of_the_wrong_version_is_refused_with_what_it_said() {
    let folder = std::env::temp_dir().join(format!("envtest-old-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    write_script(&folder.join("kube-apiserver"), "echo 'Kubernetes v1.20.4'");
    write_script(&folder.join("etcd"), "echo 'etcd Version: 3.6.8'");
    let search = AssetSearch {
        folder: Some(folder.clone()),
        ignore_environment: true,
        ..AssetSearch::default()
    };
    let error = Assets::find(&search).unwrap_err();
    assert!(
        matches!(
            error,
            Error::WrongVersion {
                binary: "kube-apiserver",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("v1.20.4"), "{error}");
    write_script(&folder.join("kube-apiserver"), "echo 'Kubernetes v1.36.2'");
    write_script(&folder.join("etcd"), "echo 'etcd Version: 3.4.9'");
    let error = Assets::find(&search).unwrap_err();
    assert!(
        matches!(error, Error::WrongVersion { binary: "etcd", .. }),
        "{error}"
    );
    let search = AssetSearch {
        kubernetes_version: Some("v1.99".into()),
        ..search
    };
    write_script(&folder.join("etcd"), "echo 'etcd Version: 3.6.8'");
    let error = Assets::find(&search).unwrap_err().to_string();
    assert!(error.contains("v1.99"), "{error}");
}

#[tokio::test]
async fn a_taken_port_and_a_server_never_ready_are_named_with_the_end_of_its_log() {
    let Some(_) = shared().await else { return };
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let error = ControlPlane::start(ControlPlaneOptions::default().secure_port(port))
        .await
        .unwrap_err();
    let Error::PortTaken {
        binary, port: p, ..
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!((*binary, *p), ("kube-apiserver", port));
    assert!(
        error.to_string().contains("address already in use"),
        "{error}"
    );

    let error =
        ControlPlane::start(ControlPlaneOptions::default().ready_timeout(Duration::from_millis(1)))
            .await
            .unwrap_err();
    assert!(matches!(error, Error::NotReady { .. }), "{error}");
    assert!(error.to_string().contains("the end of its log"), "{error}");
}

/// Runs this binary's `child` test in a child process with `mode`,
/// returning the PIDs it printed and the child.
fn start_child(mode: &str) -> (Vec<u32>, std::process::Child) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--ignored"])
        .env(CHILD_MODE, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut pids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("PIDS ") {
            pids = rest.split(' ').map(|pid| pid.parse().unwrap()).collect();
            break;
        }
    }
    assert_eq!(pids.len(), 2, "the child printed no PIDs");
    (pids, child)
}

#[test]
fn a_killed_test_binary_takes_its_control_plane_with_it() {
    if !Path::new(&format!("/proc/{}", std::process::id())).exists()
        || std::env::var_os(CHILD_MODE).is_some()
    {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if runtime.block_on(shared()).is_none() {
        return;
    }
    let (pids, mut child) = start_child("sleep");
    assert!(pids.iter().all(|pid| alive(*pid)));
    child.kill().unwrap(); // SIGKILL: no destructor, no handler runs.
    child.wait().unwrap();
    wait_gone(&pids);
}

#[test]
fn a_test_that_panics_leaves_no_process_behind() {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if runtime.block_on(shared()).is_none() {
        return;
    }
    let (pids, mut child) = start_child("panic");
    let status = child.wait().unwrap();
    assert!(!status.success());
    wait_gone(&pids);
}

/// Run only as a child of the two tests above: starts the shared plane
/// (a `static`, never dropped), prints its PIDs, then sleeps or panics.
#[tokio::test]
#[ignore = "run by a_killed_test_binary_* and a_test_that_panics_* in a child process"]
async fn child() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    let plane = shared().await.unwrap();
    println!(
        "PIDS {} {}",
        plane.api_server_pid().unwrap(),
        plane.etcd_pid().unwrap()
    );
    if mode == "panic" {
        panic!("the child test panics with its control plane running");
    }
    tokio::time::sleep(Duration::from_secs(120)).await;
}
