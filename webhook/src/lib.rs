//! Webhooks for an operator's API, as controller-runtime's `pkg/webhook`:
//! validating and mutating admission over typed objects, CRD conversion
//! through a hub version, one HTTPS server (rustls) whose certificate is
//! reloaded from disk, and the configurations that point kube-apiserver
//! at it.
//!
//! ```no_run
//! # async fn run(client: clientgo_rest::RestClient, stop: tokio_util::sync::CancellationToken) -> Result<(), Box<dyn std::error::Error>> {
//! use clientgo_webhook::{
//!     AdmissionRequest, ClientConfig, Denial, DevelopmentCertificates, Validator, Warnings,
//!     WebhookOptions, WebhookServer, WebhookServerOptions, apply_configurations,
//! };
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! /// ConfigMaps may not be empty.
//! struct NotEmpty;
//!
//! impl Validator<ConfigMap> for NotEmpty {
//!     async fn validate_create(&self, map: &ConfigMap, _: &AdmissionRequest) -> Result<Warnings, Denial> {
//!         match &map.data {
//!             Some(data) if !data.is_empty() => Ok(vec![]),
//!             _ => Err(Denial::invalid("data", "must not be empty")),
//!         }
//!     }
//! }
//!
//! // For a local run: a CA and a serving certificate for 127.0.0.1.
//! let certificates = DevelopmentCertificates::new(&["127.0.0.1", "localhost"])?;
//! let folder = std::env::temp_dir().join("my-operator-webhook");
//! let (certificate, key) = certificates.write_serving(&folder)?;
//!
//! let mut server = WebhookServer::new(
//!     WebhookServerOptions::default().certificate_files(certificate, key),
//! );
//! server.validating::<ConfigMap, _>(NotEmpty, WebhookOptions::default())?;
//! let (validating, mutating) = server.configurations(
//!     "my-operator",
//!     &ClientConfig::Url("https://127.0.0.1:9443".into()),
//!     certificates.ca_pem().as_bytes(),
//! );
//! apply_configurations(&client, validating.as_ref(), mutating.as_ref(), "my-operator").await?;
//! server.bind().await?.serve(stop).await?;
//! # Ok(()) }
//! ```
//!
//! A manager runs it as one of its runnables, on every replica (no
//! leader election), ready once it serves:
//! `manager.add(runnable::from_fn("webhooks", |stop| bound.serve(stop)).needs_leader_election(false))`
//! and `manager.add_ready_check("webhooks", …bound.ready_flag()…)`.
//!
//! # Compared with controller-runtime's `pkg/webhook`
//!
//! | controller-runtime | here | notes |
//! |---|---|---|
//! | `admission.Validator[T]` (`ValidateCreate`, `ValidateUpdate(old, new)`, `ValidateDelete`, returning warnings and an error) | [`Validator<K>`] with the same three methods, each given the request | unimplemented methods allow; CONNECT is allowed unchecked, as there |
//! | `admission.Defaulter[T]` | [`Defaulter<K>`]: change `&mut K` | the JSON patch is computed for you, without removals a round trip of `K` would make, as there |
//! | `Denied`, `Errored`, a Go error with an API status | [`Denial::forbidden`] (403), [`Denial::invalid`] (422 with the field as a cause), [`AdmissionResponse::errored`] | the user's message and field reach kubectl as kube-apiserver prints them |
//! | `admission.Handler`, `HandlerFunc` | [`AdmissionHandler`], [`handler_fn`] | raw reviews of any kind |
//! | `Request.DryRun` | [`AdmissionRequest::is_dry_run`] | |
//! | `conversion.Hub`, `Convertible` (`ConvertTo`, `ConvertFrom`) | [`Conversion::hub`] and [`Conversion::spoke`] with `TryFrom` both ways | a failure is reported on the object that failed; spoke to spoke goes through the hub |
//! | `/convert`, `/validate-<group>-<version>-<kind>`, `/mutate-…` | the same paths | a path registered twice is an error, not a panic |
//! | `webhook.Server` (port 9443, `tls.crt`/`tls.key` in the temp serving-certs folder, `ClientCAName`) | [`WebhookServer`], [`WebhookServerOptions`] with the same defaults | HTTP/1.1 only (kubebuilder's scaffold setting since the HTTP/2 rapid-reset advisories) |
//! | `certwatcher` (fsnotify plus a 10 s re-read) | the files re-read every 10 s (configurable) | a pair that does not parse or match keeps the old one |
//! | 7 MiB body limit, panics recovered | the same (413; a panic answers a 500 review and the server stays up) | a handler timeout too (10 s, kube-apiserver's default wait); conversions 256 MiB, since a whole list comes in one review |
//! | `controller_runtime_webhook_requests_total`, `_latency_seconds`, `_requests_in_flight`, `_panics_total` | the same names and labels | in the registry given, or the server's own |
//! | kubebuilder markers and controller-gen for the configurations | [`WebhookServer::configurations`] from what is registered, [`apply_configurations`] by server-side apply | a URL or a service, the CA bundle |
//! | envtest's self-signed webhook certificates | [`DevelopmentCertificates`] | |

mod admission;
mod configuration;
pub mod conversion;
mod development_certificates;
mod error;
mod server;

pub use admission::{
    AdmissionHandler, AdmissionRequest, AdmissionResponse, AdmissionReview, BoxFuture, Defaulter,
    Denial, Kind, Mutating, Operation, Resource, UserInfo, Validating, Validator, Warnings,
    handler_fn,
};
pub use configuration::{ClientConfig, apply_configurations};
pub use conversion::Conversion;
pub use development_certificates::{DevelopmentCertificates, ServingPair};
pub use error::Error;
pub use server::options::WebhookServerOptions;
pub use server::registration::WebhookOptions;
pub use server::webhook_server::{BoundWebhookServer, CONVERSION_PATH, WebhookServer};
