//! kube-apiserver calling validating and mutating webhooks: refusals
//! with the user's message, defaults stored, deletes and dry runs,
//! failure policies, timeouts and a certificate rotated while serving.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clientgo::rest::{CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient};
use clientgo_webhook::{
    AdmissionRequest, Defaulter, Denial, Validator, Warnings, WebhookServerOptions,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::support::{Running, eventually, only, plane, start, unique};

/// A ConfigMap in `namespace` labelled for `test`, with `data`.
fn config_map(test: &str, name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some([("webhook-test".to_owned(), test.to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

/// Refuses a `forbidden` key, a change of `immutable`, and deleting a map
/// with `protected`; counts the dry runs it sees.
#[derive(Default)]
struct Rules {
    dry_runs: AtomicUsize,
    calls: AtomicUsize,
}

impl Validator<ConfigMap> for Rules {
    async fn validate_create(
        &self,
        map: &ConfigMap,
        request: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if request.is_dry_run() {
            self.dry_runs.fetch_add(1, Ordering::SeqCst);
        }
        if map
            .data
            .as_ref()
            .is_some_and(|data| data.contains_key("forbidden"))
        {
            return Err(Denial::invalid("data.forbidden", "this key is not allowed"));
        }
        Ok(vec!["created through the webhook".into()])
    }

    async fn validate_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        let value = |map: &ConfigMap| {
            map.data
                .as_ref()
                .and_then(|data| data.get("immutable").cloned())
        };
        if value(old) != value(new) {
            return Err(Denial::invalid("data.immutable", "cannot be changed"));
        }
        Ok(vec![])
    }

    async fn validate_delete(
        &self,
        old: &ConfigMap,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        if old
            .data
            .as_ref()
            .is_some_and(|data| data.contains_key("protected"))
        {
            return Err(Denial::forbidden("a protected ConfigMap cannot be deleted"));
        }
        Ok(vec![])
    }
}

/// Waits until kube-apiserver calls the webhook (its configuration
/// reaches the admission plugin a moment after it is written).
async fn until_called(maps: &ResourceClient<ConfigMap>, test: &str, calls: impl Fn() -> usize) {
    eventually("kube-apiserver to call the webhook", async || {
        let probe = config_map(test, &unique("probe"), &[("probe", "1")]);
        let _ = maps
            .create(
                &CreateOptions {
                    dry_run: true,
                    ..CreateOptions::default()
                },
                &probe,
            )
            .await;
        calls() > 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validating_webhook_refuses_with_the_users_message_and_allows_the_rest() {
    let Some(plane) = plane().await else { return };
    let test = "validate";
    let rules = Arc::new(Rules::default());
    let _running: Running = start(
        plane,
        &unique(test),
        WebhookServerOptions::default(),
        |server| {
            server
                .validating::<ConfigMap, _>(
                    Arc::clone(&rules),
                    only(test).operations(["CREATE", "UPDATE", "DELETE"]),
                )
                .unwrap();
        },
    )
    .await;
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(plane.client().unwrap(), &namespace);
    until_called(&maps, test, || rules.calls.load(Ordering::SeqCst)).await;
    assert!(
        rules.dry_runs.load(Ordering::SeqCst) >= 1,
        "dry runs reach the handler marked"
    );

    // A bad create: the user's message and field, as kubectl shows them.
    let error = maps
        .create(
            &CreateOptions::default(),
            &config_map(test, "bad", &[("forbidden", "x")]),
        )
        .await
        .unwrap_err();
    let status = error.status().unwrap();
    assert_eq!(status.code, 422, "{error}");
    assert_eq!(
        status.message,
        format!(
            "admission webhook \"{test}.webhooks.clientgo.test\" denied the request: data.forbidden: this key is not allowed"
        )
    );
    assert_eq!(
        status.details.as_ref().map(|d| d.causes[0].field.as_str()),
        Some("data.forbidden")
    );

    // A good create is stored; a bad update is refused, a good one not.
    maps.create(
        &CreateOptions::default(),
        &config_map(test, "good", &[("immutable", "1"), ("protected", "y")]),
    )
    .await
    .unwrap();
    let change = Patch::Merge(serde_json::json!({"data": {"immutable": "2"}}));
    let error = maps
        .patch("good", &PatchOptions::default(), &change)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("data.immutable: cannot be changed"),
        "{error}"
    );
    let other = Patch::Merge(serde_json::json!({"data": {"other": "2"}}));
    maps.patch("good", &PatchOptions::default(), &other)
        .await
        .unwrap();

    // A delete is validated too.
    let error = maps
        .delete("good", &DeleteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.code), Some(403), "{error}");
    assert!(
        error
            .to_string()
            .contains("a protected ConfigMap cannot be deleted"),
        "{error}"
    );
    maps.create(&CreateOptions::default(), &config_map(test, "plain", &[]))
        .await
        .unwrap();
    maps.delete("plain", &DeleteOptions::default())
        .await
        .unwrap();

    // Objects the selector leaves out never reach it.
    let before = rules.calls.load(Ordering::SeqCst);
    let mut unlabelled = config_map(test, "unlabelled", &[("forbidden", "x")]);
    unlabelled.metadata.labels = None;
    maps.create(&CreateOptions::default(), &unlabelled)
        .await
        .unwrap();
    assert_eq!(rules.calls.load(Ordering::SeqCst), before);
}

/// Fills in `team: platform` and a `default` key.
struct Defaults;

impl Defaulter<ConfigMap> for Defaults {
    async fn default(&self, map: &mut ConfigMap, _: &AdmissionRequest) -> Result<Warnings, Denial> {
        map.metadata
            .labels
            .get_or_insert_with(Default::default)
            .entry("team".into())
            .or_insert_with(|| "platform".into());
        map.data
            .get_or_insert_with(Default::default)
            .entry("default".into())
            .or_insert_with(|| "1".into());
        Ok(vec![])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutating_webhooks_defaults_are_stored() {
    let Some(plane) = plane().await else { return };
    let test = "mutate";
    let _running = start(
        plane,
        &unique(test),
        WebhookServerOptions::default(),
        |server| {
            server
                .mutating::<ConfigMap, _>(Defaults, only(test))
                .unwrap();
        },
    )
    .await;
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(plane.client().unwrap(), &namespace);
    eventually("the defaults to be applied", async || {
        let name = unique("defaulted");
        match maps
            .create(
                &CreateOptions::default(),
                &config_map(test, &name, &[("own", "x")]),
            )
            .await
        {
            Ok(stored) => stored
                .data
                .as_ref()
                .is_some_and(|data| data.get("default").map(String::as_str) == Some("1")),
            Err(_) => false,
        }
    })
    .await;
    let stored = maps
        .create(
            &CreateOptions::default(),
            &config_map(test, "kept", &[("default", "mine")]),
        )
        .await
        .unwrap();
    let labels = stored.metadata.labels.unwrap();
    assert_eq!(labels.get("team").map(String::as_str), Some("platform"));
    assert_eq!(labels.get("webhook-test").map(String::as_str), Some(test));
    assert_eq!(
        stored.data.unwrap().get("default").map(String::as_str),
        Some("mine"),
        "a value given is kept"
    );
}

/// Sleeps past the webhook's timeout.
struct Slow;

impl Validator<ConfigMap> for Slow {
    async fn validate_create(
        &self,
        _: &ConfigMap,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(vec![])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_policies_decide_when_the_webhook_is_down_or_slow() {
    let Some(plane) = plane().await else { return };
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(plane.client().unwrap(), &namespace);
    for (policy, test) in [("Fail", "down-fail"), ("Ignore", "down-ignore")] {
        let running = start(
            plane,
            &unique(test),
            WebhookServerOptions::default(),
            |server| {
                server
                    .validating::<ConfigMap, _>(
                        Arc::new(Rules::default()),
                        only(test).failure_policy(policy),
                    )
                    .unwrap();
            },
        )
        .await;
        // The webhook refuses a forbidden key while up…
        eventually("the webhook to be called", async || {
            maps.create(
                &CreateOptions {
                    dry_run: true,
                    ..CreateOptions::default()
                },
                &config_map(test, &unique("probe"), &[("forbidden", "x")]),
            )
            .await
            .is_err()
        })
        .await;
        // …and once it is down the policy decides.
        running.stop.cancel();
        drop(running);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let created = maps
            .create(
                &CreateOptions::default(),
                &config_map(test, &unique("while-down"), &[]),
            )
            .await;
        match policy {
            "Fail" => {
                let error = created.unwrap_err();
                assert!(
                    error.to_string().contains("failed calling webhook"),
                    "{error}"
                );
            }
            _ => {
                created.unwrap();
            }
        }
    }
    // A handler slower than timeoutSeconds: the call fails, and the
    // policy decides as for a server that is down.
    for (policy, test) in [("Fail", "slow-fail"), ("Ignore", "slow-ignore")] {
        let _running = start(
            plane,
            &unique(test),
            WebhookServerOptions::default(),
            |server| {
                server
                    .validating::<ConfigMap, _>(
                        Slow,
                        only(test).failure_policy(policy).timeout_seconds(1),
                    )
                    .unwrap();
            },
        )
        .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let began = std::time::Instant::now();
        let created = maps
            .create(
                &CreateOptions::default(),
                &config_map(test, &unique("slow"), &[]),
            )
            .await;
        assert!(
            began.elapsed() < Duration::from_secs(3),
            "kube-apiserver waited {:?}",
            began.elapsed()
        );
        match policy {
            "Fail" => {
                let error = created.unwrap_err();
                assert!(
                    error.to_string().contains("context deadline exceeded")
                        || error.to_string().contains("timeout"),
                    "{error}"
                );
            }
            _ => {
                created.unwrap();
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_rotated_on_disk_is_served_without_a_failed_call() {
    let Some(plane) = plane().await else { return };
    let test = "rotate";
    let rules = Arc::new(Rules::default());
    let options =
        WebhookServerOptions::default().certificate_reload_interval(Duration::from_millis(200));
    let running = start(plane, &unique(test), options, |server| {
        server
            .validating::<ConfigMap, _>(Arc::clone(&rules), only(test))
            .unwrap();
    })
    .await;
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(plane.client().unwrap(), &namespace);
    until_called(&maps, test, || rules.calls.load(Ordering::SeqCst)).await;
    let first = serving_certificate(&running).await;
    // Writes go on while the pair is replaced on disk (twice).
    let writes = tokio::spawn({
        let maps = maps.clone();
        async move {
            for index in 0..40 {
                let map = config_map(test, &format!("during-{index}"), &[]);
                maps.create(&CreateOptions::default(), &map).await.unwrap();
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
    });
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        running.certificates.write_serving(&running.folder).unwrap();
    }
    writes.await.unwrap();
    eventually("the new certificate to be served", async || {
        serving_certificate(&running).await != first
    })
    .await;
    let refused = maps
        .create(
            &CreateOptions::default(),
            &config_map(test, "after", &[("forbidden", "x")]),
        )
        .await;
    assert!(
        refused.is_err(),
        "the webhook is still called after the rotation"
    );
}

/// The DER of the certificate the webhook server presents now.
async fn serving_certificate(running: &Running) -> Vec<u8> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(running.certificates.ca_pem().as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let address = running.url.trim_start_matches("https://");
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, stream).await.unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}
