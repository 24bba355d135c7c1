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

/// Refuses an empty map, and a `copy-of` naming a map the manager's
/// cache does not hold (a lookup in the cache, not a request).
struct References {
    maps: clientgo::informers::Lister<ConfigMap>,
}

impl Validator<ConfigMap> for References {
    async fn validate_create(
        &self,
        map: &ConfigMap,
        request: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        let Some(data) = map.data.as_ref().filter(|data| !data.is_empty()) else {
            return Err(Denial::invalid("data", "must not be empty"));
        };
        if let Some(source) = data.get("copy-of") {
            let namespace = request.namespace.as_deref().unwrap_or_default();
            if self.maps.namespace(namespace).get(source).is_none() {
                return Err(Denial::invalid(
                    "data.copy-of",
                    format!("no ConfigMap {source} in {namespace}"),
                ));
            }
        }
        Ok(vec![])
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
    let maps = manager.factory().informer_for::<ConfigMap>().lister();
    server
        .validating::<ConfigMap, _>(References { maps }, only(test))
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
    // The validator reads the manager's cache.
    let labelled = |name: &str, data: &[(&str, &str)]| ConfigMap {
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..empty(name)
    };
    let error = maps
        .create(
            &CreateOptions::default(),
            &labelled("copy", &[("copy-of", "source")]),
        )
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("no ConfigMap source in {namespace}")),
        "{error}"
    );
    maps.create(
        &CreateOptions::default(),
        &labelled("source", &[("a", "1")]),
    )
    .await
    .unwrap();
    eventually(
        "the copy to be allowed once the cache has its source",
        async || {
            maps.create(
                &CreateOptions::default(),
                &labelled("copy", &[("copy-of", "source")]),
            )
            .await
            .is_ok()
        },
    )
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
