//! The `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration`
//! that point kube-apiserver at what a [`WebhookServer`] registered, and
//! the conversion stanza's client config; applied by server-side apply.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::Error;
use crate::server::registration::Registration;
use crate::server::webhook_server::{BoundWebhookServer, CONVERSION_PATH, WebhookServer};

/// Where kube-apiserver reaches the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientConfig {
    /// An `https://host:port` URL (an operator outside the cluster, or a
    /// test); each webhook's path is appended.
    Url(String),
    /// A Service in the cluster (port 443 unless given).
    Service {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its port.
        port: Option<i32>,
    },
}

impl ClientConfig {
    /// The admissionregistration client config of `path`, trusting `ca_bundle_pem`.
    fn admission(&self, path: &str, ca_bundle_pem: &[u8]) -> WebhookClientConfig {
        let ca_bundle = (!ca_bundle_pem.is_empty()).then(|| ByteString(ca_bundle_pem.to_vec()));
        match self {
            ClientConfig::Url(base) => WebhookClientConfig {
                url: Some(format!("{}{path}", base.trim_end_matches('/'))),
                ca_bundle,
                service: None,
            },
            ClientConfig::Service {
                namespace,
                name,
                port,
            } => WebhookClientConfig {
                service: Some(ServiceReference {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    path: Some(path.to_owned()),
                    port: *port,
                }),
                ca_bundle,
                url: None,
            },
        }
    }

    /// The client config of a CRD's conversion webhook
    /// ([`merge_versions_with_webhook`](crate::conversion::merge_versions_with_webhook)).
    pub fn conversion(&self, ca_bundle_pem: &[u8]) -> apiextensions::WebhookClientConfig {
        let config = self.admission(CONVERSION_PATH, ca_bundle_pem);
        apiextensions::WebhookClientConfig {
            url: config.url,
            ca_bundle: config.ca_bundle,
            service: config
                .service
                .map(|service| apiextensions::ServiceReference {
                    namespace: service.namespace,
                    name: service.name,
                    path: service.path,
                    port: service.port,
                }),
        }
    }
}

fn rules(registration: &Registration) -> Vec<RuleWithOperations> {
    let operations = registration
        .options
        .operations
        .clone()
        .unwrap_or_else(|| vec!["CREATE".into(), "UPDATE".into()]);
    vec![RuleWithOperations {
        operations: Some(operations),
        api_groups: Some(vec![registration.group.clone()]),
        api_versions: Some(vec![registration.version.clone()]),
        resources: Some(vec![registration.plural.clone()]),
        scope: Some(
            if registration.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
        ),
    }]
}

impl WebhookServer {
    /// The configurations of every validator and defaulter registered,
    /// named `name`, reaching the server at `client` and trusting
    /// `ca_bundle_pem` (the CA that signed the serving certificate).
    /// `None` where there is no webhook of that sort.
    pub fn configurations(
        &self,
        name: &str,
        client: &ClientConfig,
        ca_bundle_pem: &[u8],
    ) -> (
        Option<ValidatingWebhookConfiguration>,
        Option<MutatingWebhookConfiguration>,
    ) {
        configurations(&self.registrations, name, client, ca_bundle_pem)
    }
}

impl BoundWebhookServer {
    /// As [`WebhookServer::configurations`], once the port is known.
    pub fn configurations(
        &self,
        name: &str,
        client: &ClientConfig,
        ca_bundle_pem: &[u8],
    ) -> (
        Option<ValidatingWebhookConfiguration>,
        Option<MutatingWebhookConfiguration>,
    ) {
        configurations(&self.registrations, name, client, ca_bundle_pem)
    }
}

fn configurations(
    registrations: &[Registration],
    name: &str,
    client: &ClientConfig,
    ca_bundle_pem: &[u8],
) -> (
    Option<ValidatingWebhookConfiguration>,
    Option<MutatingWebhookConfiguration>,
) {
    {
        let metadata = ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        };
        // The two webhook types share every field but the mutating one's
        // `reinvocationPolicy`.
        macro_rules! webhooks {
            ($ty:ident, $mutating:expr $(, $field:ident)*) => {
                registrations
                    .iter()
                    .filter(|registration| registration.mutating == $mutating)
                    .map(|registration| {
                        let options = &registration.options;
                        $ty {
                            name: registration.name.clone(),
                            client_config: client.admission(&registration.path, ca_bundle_pem),
                            rules: Some(rules(registration)),
                            admission_review_versions: vec!["v1".into()],
                            side_effects: options.side_effects.clone().unwrap_or_else(|| "None".into()),
                            failure_policy: Some(options.failure_policy.clone().unwrap_or_else(|| "Fail".into())),
                            timeout_seconds: options.timeout_seconds,
                            match_policy: options.match_policy.clone(),
                            namespace_selector: options.namespace_selector.clone(),
                            object_selector: options.object_selector.clone(),
                            match_conditions: None,
                            $($field: None,)*
                        }
                    })
                    .collect::<Vec<$ty>>()
            };
        }
        let validating = webhooks!(ValidatingWebhook, false);
        let mutating = webhooks!(MutatingWebhook, true, reinvocation_policy);
        (
            (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
                metadata: metadata.clone(),
                webhooks: Some(validating),
            }),
            (!mutating.is_empty()).then_some(MutatingWebhookConfiguration {
                metadata,
                webhooks: Some(mutating),
            }),
        )
    }
}

/// Applies the configurations (server-side apply, this field manager
/// owning them).
pub async fn apply_configurations(
    client: &clientgo_rest::RestClient,
    validating: Option<&ValidatingWebhookConfiguration>,
    mutating: Option<&MutatingWebhookConfiguration>,
    field_manager: &str,
) -> Result<(), Error> {
    use clientgo_rest::{Patch, PatchOptions, ResourceClient};
    let options = PatchOptions::apply(field_manager).force();
    async fn apply_one<K>(
        client: &clientgo_rest::RestClient,
        object: &K,
        kind: &'static str,
        options: &PatchOptions,
    ) -> Result<(), Error>
    where
        K: k8s_openapi::Resource<Scope = k8s_openapi::ClusterResourceScope>
            + k8s_openapi::Metadata<Ty = ObjectMeta>
            + serde::Serialize
            + serde::de::DeserializeOwned,
    {
        let name = object.metadata().name.clone().unwrap_or_default();
        let failed = |source| Error::Apply {
            kind,
            name: name.clone(),
            source: Box::new(source),
        };
        let mut body = serde_json::to_value(object).map_err(|error| {
            failed(clientgo_rest::Error::Request(
                clientgo_rest::client::RequestError::Encode(error),
            ))
        })?;
        if let Some(fields) = body.as_object_mut() {
            fields.insert("apiVersion".into(), K::API_VERSION.into());
            fields.insert("kind".into(), K::KIND.into());
        }
        ResourceClient::<K>::all(client.clone())
            .patch(&name, options, &Patch::Apply(body))
            .await
            .map_err(failed)?;
        Ok(())
    }
    if let Some(configuration) = validating {
        apply_one(
            client,
            configuration,
            "ValidatingWebhookConfiguration",
            &options,
        )
        .await?;
    }
    if let Some(configuration) = mutating {
        apply_one(
            client,
            configuration,
            "MutatingWebhookConfiguration",
            &options,
        )
        .await?;
    }
    Ok(())
}
