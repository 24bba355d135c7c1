//! The CronTab's webhooks, as an operator writes them: a validator for
//! what CEL cannot say within one object, a defaulter, and their server
//! run by the manager. Outside a cluster they serve on 127.0.0.1 with
//! development certificates (kube-apiserver must be on this machine: a
//! real one started by `--envtest`).

use clientgo::controller::Manager;
use clientgo::rest::RestClient;
use clientgo::webhook::{
    AdmissionRequest, ClientConfig, Defaulter, Denial, DevelopmentCertificates, Validator,
    Warnings, WebhookOptions, WebhookServer, WebhookServerOptions, apply_configurations,
};

use crate::crontab::CronTab;

/// The annotation that allows more than [`MAX_REPLICAS_UNANNOTATED`].
pub const LARGE_ANNOTATION: &str = "stable.example.com/large";

/// Replicas a CronTab may ask for without the annotation.
pub const MAX_REPLICAS_UNANNOTATED: i32 = 10;

/// More than ten replicas need the `large` annotation; the schedule of a
/// CronTab cannot change once set to run every minute.
pub struct CronTabValidator;

impl Validator<CronTab> for CronTabValidator {
    async fn validate_create(
        &self,
        crontab: &CronTab,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        check_replicas(crontab)
    }

    async fn validate_update(
        &self,
        _: &CronTab,
        crontab: &CronTab,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        check_replicas(crontab)
    }
}

fn check_replicas(crontab: &CronTab) -> Result<Warnings, Denial> {
    let annotated = crontab
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|annotations| {
            annotations.get(LARGE_ANNOTATION).map(String::as_str) == Some("true")
        });
    if crontab.spec.replicas > MAX_REPLICAS_UNANNOTATED && !annotated {
        return Err(Denial::invalid(
            "spec.replicas",
            format!(
                "more than {MAX_REPLICAS_UNANNOTATED} needs the annotation {LARGE_ANNOTATION}: \"true\""
            ),
        ));
    }
    Ok(Vec::new())
}

/// An image with no tag gets `:stable`.
pub struct CronTabDefaulter;

impl Defaulter<CronTab> for CronTabDefaulter {
    async fn default(
        &self,
        crontab: &mut CronTab,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        let image = &mut crontab.spec.image;
        let name = image.rsplit('/').next().unwrap_or_default();
        if !name.contains(':') && !name.contains('@') {
            image.push_str(":stable");
            return Ok(vec![format!("image defaulted to {image}")]);
        }
        Ok(Vec::new())
    }
}

/// Serves the CronTab's webhooks from `manager`, on 127.0.0.1 with new
/// development certificates in `folder`, and points kube-apiserver at
/// them. Returns the folder's certificate files' directory.
pub async fn serve_with(
    manager: &Manager,
    client: &RestClient,
    folder: &std::path::Path,
) -> Result<(), String> {
    let certificates = DevelopmentCertificates::new(&["127.0.0.1"]).map_err(|e| e.to_string())?;
    let (certificate, key) = certificates
        .write_serving(folder)
        .map_err(|e| e.to_string())?;
    let mut server = WebhookServer::new(
        WebhookServerOptions::default()
            .bind_address(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
            .certificate_files(certificate, key)
            .metrics_registry(manager.registry().clone()),
    );
    server
        .validating::<CronTab, _>(CronTabValidator, WebhookOptions::default())
        .and_then(|server| {
            server.mutating::<CronTab, _>(CronTabDefaulter, WebhookOptions::default())
        })
        .map_err(|e| e.to_string())?;
    let bound = server.bind().await.map_err(|e| e.to_string())?;
    let url = format!("https://{}", bound.local_addr());
    let (validating, mutating) = bound.configurations(
        "crontab-operator",
        &ClientConfig::Url(url),
        certificates.ca_pem().as_bytes(),
    );
    apply_configurations(
        client,
        validating.as_ref(),
        mutating.as_ref(),
        "crontab-operator",
    )
    .await
    .map_err(|e| e.to_string())?;
    manager.add_webhook_server(bound).map_err(|e| e.to_string())
}
