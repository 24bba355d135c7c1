//! Kubeconfig loading with clientcmd's rules, bad kubeconfigs, in-cluster
//! configuration and `Config::infer`, with files written by the tests and
//! requests to clientgo-testing's server over TLS.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::ffi::OsString;
use std::path::Path;

use crate::support::TempDir;
use base64::Engine as _;
use clientgo_apimachinery::ListOptions;
use clientgo_rest::{
    Config, ResourceClient, RestClient,
    config::{
        ConfigError, ConfigOverrides, Credentials, InClusterOptions, LoadingRules, PemSource,
    },
};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::ConfigMap;

fn rules_for(files: &[&Path]) -> LoadingRules {
    let list = std::env::join_paths(files).unwrap();
    LoadingRules {
        explicit_path: None,
        kubeconfig_env: Some(list),
        home_dir: None,
    }
}

fn load(rules: &LoadingRules, overrides: &ConfigOverrides) -> Result<Config, ConfigError> {
    Config::from_kubeconfig(rules, overrides)
}

fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[test]
fn kubeconfig_list_merges_with_clientcmd_precedence() {
    let directory = TempDir::new("merge");
    // The first file defines cluster "shared" and sets no current context.
    let first = directory.write(
        "first",
        r#"
clusters:
- name: shared
  cluster: {server: "https://first.example:6443"}
users:
- name: alice
  user: {token: first-token}
contexts:
- name: dev
  context: {cluster: shared, user: alice, namespace: dev-ns}
"#,
    );
    // The second redefines "shared" (ignored, whole entry), adds "other",
    // sets current-context, and redefines user alice (ignored).
    let second = directory.write(
        "second",
        r#"
current-context: dev
clusters:
- name: shared
  cluster: {server: "https://second.example:6443", insecure-skip-tls-verify: true}
- name: other
  cluster: {server: "https://other.example"}
users:
- name: alice
  user: {token: second-token}
- name: bob
  user: {username: bob, password: hunter2}
contexts:
- name: prod
  context: {cluster: other, user: bob}
"#,
    );
    // The third sets another current-context: the second file's wins.
    let third = directory.write("third", "current-context: prod\n");
    let missing = directory.path().join("not-there");
    let rules = rules_for(&[&first, &missing, &second, &third]);

    let config = load(&rules, &ConfigOverrides::default()).unwrap();
    assert_eq!(config.host, "https://first.example:6443");
    assert!(!config.tls.insecure_skip_verify, "no field-level merge");
    assert!(
        matches!(&config.credentials, Credentials::BearerToken(t) if t.expose() == "first-token")
    );
    assert_eq!(config.namespace, "dev-ns");

    // A context override picks entries from the later file.
    let config = load(&rules, &ConfigOverrides::default().context("prod")).unwrap();
    assert_eq!(config.host, "https://other.example");
    assert!(
        matches!(&config.credentials, Credentials::Basic { username, .. } if username == "bob")
    );
    assert_eq!(config.namespace, "default", "no namespace in the context");

    // A namespace override wins over the context's.
    let config = load(&rules, &ConfigOverrides::default().namespace("mine")).unwrap();
    assert_eq!(config.namespace, "mine");

    // Cluster and user overrides replace the context's choices.
    let overrides = ConfigOverrides {
        cluster: Some("other".to_string()),
        user: Some("bob".to_string()),
        ..ConfigOverrides::default()
    };
    let config = load(&rules, &overrides).unwrap();
    assert_eq!(config.host, "https://other.example");
    assert_eq!(config.namespace, "dev-ns");
    assert_eq!(config.auth_kind(), "basic auth");

    // With the order reversed, the second file's entries win.
    let reversed = rules_for(&[&third, &second, &first]);
    let config = load(&reversed, &ConfigOverrides::default()).unwrap();
    assert_eq!(config.host, "https://other.example", "current-context prod");
    let config = load(&reversed, &ConfigOverrides::default().context("dev")).unwrap();
    assert_eq!(config.host, "https://second.example:6443");
    assert!(
        matches!(&config.credentials, Credentials::BearerToken(t) if t.expose() == "second-token")
    );
}

#[test]
fn an_explicit_path_is_the_only_file_read() {
    let directory = TempDir::new("explicit");
    let listed = directory.write(
        "listed",
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: a}\nclusters:\n- name: a\n  cluster: {server: https://listed}\n",
    );
    let explicit = directory.write(
        "explicit",
        "current-context: b\ncontexts:\n- name: b\n  context: {cluster: b}\nclusters:\n- name: b\n  cluster: {server: https://explicit}\n",
    );
    let rules = rules_for(&[&listed]).explicit_path(&explicit);
    let config = load(&rules, &ConfigOverrides::default()).unwrap();
    assert_eq!(config.host, "https://explicit");
    // The listed file's context is not visible.
    let error = load(&rules, &ConfigOverrides::default().context("a")).unwrap_err();
    assert!(
        matches!(
            error,
            ConfigError::NotFound {
                what: "context",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn home_config_is_used_without_kubeconfig() {
    let directory = TempDir::new("home");
    directory.write(
        ".kube/config",
        "current-context: h\ncontexts:\n- name: h\n  context: {cluster: h}\nclusters:\n- name: h\n  cluster: {server: https://home}\n",
    );
    let rules = LoadingRules {
        explicit_path: None,
        kubeconfig_env: None,
        home_dir: Some(directory.path().to_path_buf()),
    };
    assert_eq!(
        load(&rules, &ConfigOverrides::default()).unwrap().host,
        "https://home"
    );
}

#[tokio::test]
async fn relative_paths_resolve_against_the_file_that_names_them() {
    let server = TestApiServer::builder()
        .tls()
        .client_certificate_auth()
        .start()
        .await
        .unwrap();
    let identity = server.client_certificate().unwrap();
    let directory = TempDir::new("relative");
    directory.write("pki/ca.crt", server.ca_pem().unwrap());
    directory.write("pki/client.crt", &identity.certificate_pem);
    directory.write("pki/client.key", &identity.key_pem);
    let path = directory.write(
        "configs/cluster.yaml",
        format!(
            "current-context: c\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
             clusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: ../pki/ca.crt\n\
             users:\n- name: u\n  user:\n    client-certificate: ../pki/client.crt\n    client-key: ../pki/client.key\n",
            server.url()
        ),
    );
    let config = Config::from_kubeconfig_file(&path).unwrap();
    let Some(PemSource::File(ca)) = &config.tls.certificate_authority else {
        panic!("the CA is a file: {config:?}");
    };
    assert!(ca.is_absolute() && ca.ends_with("pki/ca.crt"), "{ca:?}");
    let client = RestClient::new(config).unwrap();
    ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&ListOptions::default())
        .await
        .unwrap();
}

/// Writes a kubeconfig and returns the error loading it gives.
fn error_for(directory: &TempDir, name: &str, text: &str) -> (String, String) {
    let path = directory.write(name, text);
    let error = Config::from_kubeconfig_file(&path).unwrap_err();
    (error.to_string(), path.display().to_string())
}

#[test]
fn bad_kubeconfigs_name_the_field_and_the_file() {
    let directory = TempDir::new("bad");
    let good_cluster = "clusters:\n- name: c\n  cluster: {server: https://c}\n";
    let context = "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "invalid-yaml",
            "clusters: [\n  - name: c\n".to_string(),
            &["not valid"],
        ),
        (
            "wrong-type",
            "clusters: {a: 1}\n".to_string(),
            &["not valid"],
        ),
        (
            "no-current-context",
            good_cluster.to_string(),
            &["no current context"],
        ),
        (
            "missing-context",
            format!("{good_cluster}current-context: gone\n"),
            &["context", "\"gone\"", "current-context"],
        ),
        (
            "missing-user",
            format!("{good_cluster}{context}"),
            &["user", "\"u\"", "context \"x\""],
        ),
        (
            "missing-cluster",
            format!("users:\n- name: u\n  user: {{}}\n{context}"),
            &["cluster", "\"c\""],
        ),
        (
            "missing-server",
            format!(
                "clusters:\n- name: c\n  cluster: {{}}\nusers:\n- name: u\n  user: {{}}\n{context}"
            ),
            &["clusters[c].cluster.server", "is missing"],
        ),
        (
            "bad-base64",
            format!(
                "clusters:\n- name: c\n  cluster:\n    server: https://c\n    certificate-authority-data: '***not base64***'\nusers:\n- name: u\n  user: {{}}\n{context}"
            ),
            &["clusters[c].cluster.certificate-authority-data", "base64"],
        ),
        (
            "bad-pem",
            format!(
                "clusters:\n- name: c\n  cluster:\n    server: https://c\n    certificate-authority-data: {}\nusers:\n- name: u\n  user: {{}}\n{context}",
                base64("this is not a certificate")
            ),
            &["clusters[c].cluster.certificate-authority-data", "PEM"],
        ),
        (
            "bad-client-key",
            format!(
                "{good_cluster}users:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n{context}",
                base64(&crate::support::unrelated_ca_pem()),
                base64("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
            ),
            &["users[u].user.client-key-data"],
        ),
        (
            "missing-cert-file",
            format!(
                "{good_cluster}users:\n- name: u\n  user:\n    client-certificate: /no/such/client.crt\n    client-key: /no/such/client.key\n{context}"
            ),
            &["users[u].user.client-certificate", "/no/such/client.crt"],
        ),
        (
            "auth-provider",
            format!(
                "{good_cluster}users:\n- name: u\n  user:\n    auth-provider: {{name: gcp}}\n{context}"
            ),
            &["users[u].user.auth-provider", "gcp", "exec"],
        ),
        (
            "oidc-without-client-id",
            format!(
                "{good_cluster}users:\n- name: u\n  user:\n    auth-provider: {{name: oidc, config: {{id-token: t}}}}\n{context}"
            ),
            &["users[u].user.auth-provider.config.client-id", "oidc"],
        ),
        (
            "oidc-without-a-token",
            format!(
                "{good_cluster}users:\n- name: u\n  user:\n    auth-provider: {{name: oidc, config: {{client-id: k}}}}\n{context}"
            ),
            &[
                "users[u].user.auth-provider.config.id-token",
                "refresh-token",
            ],
        ),
        (
            "token-and-basic",
            format!(
                "{good_cluster}users:\n- name: u\n  user: {{token: t, username: a, password: b}}\n{context}"
            ),
            &["users[u].user.username", "both"],
        ),
    ];
    for (name, text, expected) in cases {
        let (message, path) = error_for(&directory, name, &text);
        assert!(
            message.contains(&path),
            "{name}: the file is named: {message}"
        );
        for fragment in expected {
            assert!(
                message.contains(fragment),
                "{name}: {fragment:?} missing from: {message}"
            );
        }
    }
}

#[test]
fn an_empty_file_has_no_current_context() {
    let directory = TempDir::new("empty");
    let (message, path) = error_for(&directory, "empty", "");
    assert!(message.contains("no current context"), "{message}");
    assert!(message.contains(&path), "{message}");
}

#[tokio::test]
async fn in_cluster_config_reads_the_service_account_files() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("sa-token")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("in-cluster");
    directory.write("sa/token", "sa-token\n");
    directory.write("sa/ca.crt", server.ca_pem().unwrap());
    directory.write("sa/namespace", "kube-system");
    let options = InClusterOptions {
        service_host: Some(server.address().ip().to_string()),
        service_port: Some(server.address().port().to_string()),
        ..InClusterOptions::from_env()
    }
    .service_account_dir(directory.path().join("sa"));
    let config = Config::in_cluster_with(&options).unwrap();
    assert_eq!(config.namespace, "kube-system");
    assert_eq!(config.host, server.url());
    assert!(
        matches!(config.credentials, Credentials::TokenFile { .. }),
        "a token file, so rotation works"
    );
    let client = RestClient::new(config).unwrap();
    assert_eq!(client.default_namespace(), "kube-system");
    ResourceClient::<ConfigMap>::default_namespaced(client)
        .list(&ListOptions::default())
        .await
        .unwrap();
}

#[test]
fn infer_prefers_the_kubeconfig_and_falls_back_to_in_cluster() {
    let directory = TempDir::new("infer");
    directory.write("sa/token", "t");
    directory.write("sa/namespace", "from-sa");
    let in_cluster = InClusterOptions {
        service_host: Some("10.0.0.1".to_string()),
        service_port: Some("443".to_string()),
        ..InClusterOptions::from_env()
    }
    .service_account_dir(directory.path().join("sa"));
    let kubeconfig = directory.write(
        "kubeconfig",
        "current-context: k\ncontexts:\n- name: k\n  context: {cluster: k}\nclusters:\n- name: k\n  cluster: {server: https://from-kubeconfig}\n",
    );

    let with_file = rules_for(&[&kubeconfig]);
    let config = Config::infer_with(&with_file, &ConfigOverrides::default(), &in_cluster).unwrap();
    assert_eq!(config.host, "https://from-kubeconfig");

    let without = LoadingRules {
        explicit_path: None,
        kubeconfig_env: Some(OsString::from(directory.path().join("none"))),
        home_dir: None,
    };
    let config = Config::infer_with(&without, &ConfigOverrides::default(), &in_cluster).unwrap();
    assert_eq!(config.host, "https://10.0.0.1:443");
    assert_eq!(config.namespace, "from-sa");

    // A broken explicit kubeconfig is reported, not skipped.
    let broken = directory.write("broken", "clusters: [");
    let explicit = LoadingRules::default().explicit_path(&broken);
    let error =
        Config::infer_with(&explicit, &ConfigOverrides::default(), &in_cluster).unwrap_err();
    assert!(error.to_string().contains("broken"), "{error}");
}
