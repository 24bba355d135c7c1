//! The manager runs the webhook server: ready once it serves, kube-apiserver
//! calling it while the manager runs, stopped with the manager.

use std::time::Duration;

use clientgo::controller::{Manager, ManagerOptions};
use clientgo::rest::{CreateOptions, ResourceClient};
use clientgo_webhook::{
    AdmissionRequest, ClientConfig, Denial, DevelopmentCertificates, Validator, Warnings,
    WebhookServer, WebhookServerOptions, apply_configurations,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::support::{eventually, only, plane, unique};

struct NoEmpty;

impl Validator<ConfigMap> for NoEmpty {
    async fn validate_create(
        &self,
        map: &ConfigMap,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        match &map.data {
            Some(data) if !data.is_empty() => Ok(vec![]),
            _ => Err(Denial::invalid("data", "must not be empty")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_serves_its_webhooks_and_stops_them() {
    let Some(plane) = plane().await else { return };
    let test = "manager";
    let client = plane.client().unwrap();
    let manager = Manager::new(client.clone(), ManagerOptions::default());
    let certificates = DevelopmentCertificates::new(&["127.0.0.1"]).unwrap();
    let folder = std::env::temp_dir().join(unique("clientgo-webhook-manager"));
    let (certificate, key) = certificates.write_serving(&folder).unwrap();
    let mut server = WebhookServer::new(
        WebhookServerOptions::default()
            .bind_address("127.0.0.1:0".parse().unwrap())
            .certificate_files(certificate, key)
            .metrics_registry(manager.registry().clone()),
    );
    server
        .validating::<ConfigMap, _>(NoEmpty, only(test))
        .unwrap();
    let bound = server.bind().await.unwrap();
    let address = bound.local_addr();
    let (validating, _) = bound.configurations(
        &unique(test),
        &ClientConfig::Url(format!("https://{address}")),
        certificates.ca_pem().as_bytes(),
    );
    apply_configurations(&client, validating.as_ref(), None, "clientgo-webhook-tests")
        .await
        .unwrap();
    manager.add_webhook_server(bound).unwrap();
    assert!(!manager.is_ready());

    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (manager, stop) = (manager.clone(), stop.clone());
        async move { manager.run(stop).await }
    });
    eventually("the manager to be ready", async || manager.is_ready()).await;
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(client, &namespace);
    let empty = |name: &str| ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some([("webhook-test".to_owned(), test.to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    eventually("kube-apiserver to call the manager's webhook", async || {
        maps.create(&CreateOptions::default(), &empty(&unique("empty")))
            .await
            .is_err()
    })
    .await;
    let families = manager.registry().gather();
    assert!(
        families
            .iter()
            .any(|f| f.name() == "controller_runtime_webhook_requests_total")
    );

    stop.cancel();
    running.await.unwrap().unwrap();
    let refused = tokio::time::timeout(
        Duration::from_secs(2),
        tokio::net::TcpStream::connect(address),
    )
    .await;
    assert!(
        !matches!(refused, Ok(Ok(_))),
        "the server still listens after the manager stopped"
    );
    let _ = std::fs::remove_dir_all(&folder);
}
