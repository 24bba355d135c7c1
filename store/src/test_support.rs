//! Helpers shared by the unit tests.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A cluster-scoped-keyed object with a name and a resourceVersion.
pub(crate) fn config_map(name: &str, resource_version: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            resource_version: Some(resource_version.into()),
            ..Default::default()
        },
        ..Default::default()
    })
}

/// A pod with a namespace, name, resourceVersion and labels.
pub(crate) fn labelled_pod(
    namespace: &str,
    name: &str,
    resource_version: &str,
    labels: &[(&str, &str)],
) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            resource_version: Some(resource_version.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
            ),
            ..Default::default()
        },
        ..Default::default()
    })
}
