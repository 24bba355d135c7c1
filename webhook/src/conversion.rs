//! CRD conversion webhooks: the review types, hub-and-spoke conversions,
//! and the CRD's `conversion` stanza.

mod converter;
mod review;

pub use converter::Conversion;
pub use review::{ConversionRequest, ConversionResponse, ConversionReview};

use clientgo_apimachinery::crd::{CrdError, merge_versions_converted};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, WebhookClientConfig, WebhookConversion,
};

/// One CRD of every version in `crds`, stored at `storage`, converted by
/// the webhook at `client_config` (a URL or a service, and the CA bundle
/// that verifies it) through the `ConversionReview` v1. Unlike
/// [`merge_versions`](clientgo_apimachinery::crd::merge_versions), versions
/// may have fields the storage version lacks: the webhook keeps them.
pub fn merge_versions_with_webhook(
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
    storage: &str,
    client_config: WebhookClientConfig,
) -> Result<CustomResourceDefinition, CrdError> {
    merge_versions_converted(
        crds,
        storage,
        CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(WebhookConversion {
                client_config: Some(client_config),
                conversion_review_versions: vec!["v1".into()],
            }),
        },
    )
}
