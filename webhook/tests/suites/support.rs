//! The shared real server, and a webhook server on 127.0.0.1 with
//! development certificates whose configurations select only the objects
//! a test labels (tests share the API server).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use clientgo::rest::{Config, RestClient};
use clientgo_testing::envtest::ControlPlane;
use clientgo_webhook::{
    ClientConfig, DevelopmentCertificates, WebhookOptions, WebhookServer, WebhookServerOptions,
    apply_configurations,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use tokio_util::sync::CancellationToken;

pub(crate) use clientgo_testing::eventually;

/// The test binary's kube-apiserver, or `None` (skip) without envtest.
pub(crate) async fn plane() -> Option<&'static ControlPlane> {
    ControlPlane::shared().await.unwrap()
}

/// A name unique in this test binary.
pub(crate) fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Options selecting only objects labelled `webhook-test: <test>`.
pub(crate) fn only(test: &str) -> WebhookOptions {
    WebhookOptions::default()
        .name(&format!("{test}.webhooks.clientgo.test"))
        .path(&format!("/{test}"))
        .object_selector(LabelSelector {
            match_labels: Some([("webhook-test".to_owned(), test.to_owned())].into()),
            ..LabelSelector::default()
        })
}

/// A running webhook server and what a test needs of it.
pub(crate) struct Running {
    pub(crate) certificates: DevelopmentCertificates,
    pub(crate) folder: PathBuf,
    pub(crate) url: String,
    pub(crate) stop: CancellationToken,
    pub(crate) registry: prometheus::Registry,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// Certificates for 127.0.0.1 and a server made by `register`, bound to
/// a free port, its configurations (named `name`) applied, and serving.
pub(crate) async fn start(
    plane: &ControlPlane,
    name: &str,
    options: WebhookServerOptions,
    register: impl FnOnce(&mut WebhookServer),
) -> Running {
    let certificates = DevelopmentCertificates::new(&["127.0.0.1"]).unwrap();
    let folder = std::env::temp_dir().join(unique("clientgo-webhook-certs"));
    let (certificate, key) = certificates.write_serving(&folder).unwrap();
    let mut server = WebhookServer::new(
        options
            .bind_address("127.0.0.1:0".parse().unwrap())
            .certificate_files(certificate, key),
    );
    register(&mut server);
    let bound = server.bind().await.unwrap();
    let url = format!("https://127.0.0.1:{}", bound.local_addr().port());
    let (validating, mutating) = bound.configurations(
        name,
        &ClientConfig::Url(url.clone()),
        certificates.ca_pem().as_bytes(),
    );
    let client = plane.client().unwrap();
    apply_configurations(
        &client,
        validating.as_ref(),
        mutating.as_ref(),
        "clientgo-webhook-tests",
    )
    .await
    .unwrap();
    let registry = bound.metrics_registry().clone();
    let stop = CancellationToken::new();
    let serving = bound;
    tokio::spawn({
        let stop = stop.clone();
        async move { serving.serve(stop).await.unwrap() }
    });
    Running {
        certificates,
        folder,
        url,
        stop,
        registry,
    }
}

/// A REST client of the webhook server itself, trusting its CA.
pub(crate) fn webhook_client(running: &Running) -> RestClient {
    let mut config = Config::new(running.url.clone());
    config.tls.certificate_authority = Some(clientgo::rest::config::PemSource::Data(
        running.certificates.ca_pem().into_bytes(),
    ));
    RestClient::new(config).unwrap()
}
