//! CustomResourceDefinitions created through the API: the resources they
//! define are served at once.

use clientgo_apimachinery::status::cause_type;
use clientgo_apimachinery::{ApiResource, GroupVersionKind, Status, StatusCause};
use parking_lot::RwLock;
use serde_json::{Value, json};

use crate::api::handlers::{self, Answer};
use crate::api::registry::{DiscoveryNames, ResourceRegistry};
use crate::api::request_path::ResourcePath;
use crate::store::storage::Storage;

/// Whether a resource is `customresourcedefinitions.apiextensions.k8s.io`.
pub(crate) fn is_crd_resource(resource: &ApiResource) -> bool {
    resource.group() == "apiextensions.k8s.io" && resource.plural() == "customresourcedefinitions"
}

fn required(field: &str) -> Status {
    Status::invalid(
        "CustomResourceDefinition",
        "",
        vec![StatusCause {
            reason: cause_type::FIELD_VALUE_REQUIRED.to_string(),
            message: "Required value".to_string(),
            field: field.to_string(),
        }],
    )
}

/// The resources a CRD serves: one per version with `served: true`.
pub(crate) fn served_resources(crd: &Value) -> Result<Vec<ApiResource>, Status> {
    let spec = crd.get("spec").ok_or_else(|| required("spec"))?;
    let text = |pointer: &str, field: &str| {
        spec.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
            .map(str::to_string)
            .ok_or_else(|| required(field))
    };
    let group = text("/group", "spec.group")?;
    let plural = text("/names/plural", "spec.names.plural")?;
    let kind = text("/names/kind", "spec.names.kind")?;
    let namespaced = match spec.get("scope").and_then(Value::as_str) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => return Err(required("spec.scope")),
    };
    let versions: Vec<String> = spec
        .get("versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|version| version.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|version| {
            version
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    if versions.is_empty() {
        return Err(required("spec.versions[*].served"));
    }
    Ok(versions
        .into_iter()
        .map(|version| {
            let gvk = GroupVersionKind::new(group.clone(), version, kind.clone());
            if namespaced {
                ApiResource::namespaced(gvk, plural.clone())
            } else {
                ApiResource::cluster_scoped(gvk, plural.clone())
            }
        })
        .collect())
}

/// A CustomResourceDefinition manifest for tests: `kind` served under
/// `plural` in `group` at version `version` (served and stored), accepting
/// any fields (`x-kubernetes-preserve-unknown-fields`), namespaced or not.
/// Create it through the API (or [`Storage`](crate::Storage)) and the
/// resource is served at once.
pub fn custom_resource_definition(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    })
}

/// Sets the status a real server reports once a CRD is ready: its names
/// accepted and the CRD established.
pub(crate) fn mark_established(crd: &mut Value) {
    let names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Value::Object(fields) = crd {
        fields.insert(
            "status".to_string(),
            json!({
                "acceptedNames": names,
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                     "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                     "message": "the initial names have been accepted"}
                ]
            }),
        );
    }
}

/// A definition's `spec.names.shortNames` and `categories`.
fn discovery_names(crd: &Value) -> DiscoveryNames {
    let strings = |pointer: &str| -> Vec<String> {
        crd.pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    DiscoveryNames {
        short_names: strings("/spec/names/shortNames"),
        categories: strings("/spec/names/categories"),
    }
}

/// Creates a CRD, marks it established, and serves its resources at once.
pub(crate) fn create_crd(
    storage: &Storage,
    registry: &RwLock<ResourceRegistry>,
    target: &ResourcePath,
    body: &[u8],
) -> Result<Answer, Status> {
    let mut crd: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        Status::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })?;
    let resources = served_resources(&crd)?;
    let names = discovery_names(&crd);
    mark_established(&mut crd);
    let created = storage.create(&target.resource.group_resource(), "", crd)?;
    let mut registry = registry.write();
    if let Some(resource) = resources.first() {
        registry.set_names(resource.group(), resource.plural(), names);
    }
    for resource in resources {
        registry.register(resource);
    }
    Ok(Answer {
        code: 201,
        body: created.json.to_vec(),
        content_type: "application/json",
    })
}

/// Patches a CRD (server-side apply creates a missing one, as
/// `install_crds` does), marks a new one established, and serves its
/// resources as they now are.
pub(crate) fn patch_crd(
    storage: &Storage,
    registry: &RwLock<ResourceRegistry>,
    target: &ResourcePath,
    content_type: &str,
    body: &[u8],
    writer: &crate::store::field_owners::Writer,
) -> Result<Answer, Status> {
    let mut answer = handlers::patch(storage, target, content_type, body, writer)?;
    let mut crd: Value = serde_json::from_slice(&answer.body)
        .map_err(|e| Status::internal_error(&format!("a stored CRD is not JSON: {e}")))?;
    let resources = served_resources(&crd)?;
    if crd.pointer("/status/conditions").is_none() {
        mark_established(&mut crd);
        let key = handlers::object_key(target)?;
        let updated = storage.update(&key, crd.clone(), true)?;
        answer.body = updated.json.to_vec();
    }
    let names = discovery_names(&crd);
    let mut registry = registry.write();
    if let Some(resource) = resources.first() {
        registry.set_names(resource.group(), resource.plural(), names);
    }
    for resource in resources {
        registry.register(resource);
    }
    Ok(answer)
}

/// Deletes a CRD and stops serving its resources (their objects stay in
/// the store, unreachable, where a real server would delete them).
pub(crate) fn delete_crd(
    storage: &Storage,
    registry: &RwLock<ResourceRegistry>,
    target: &ResourcePath,
    body: &[u8],
) -> Result<Answer, Status> {
    let answer = handlers::delete(storage, target, body)?;
    if let Ok(crd) = serde_json::from_slice::<serde_json::Value>(&answer.body)
        && let Ok(resources) = served_resources(&crd)
    {
        let mut registry = registry.write();
        for resource in &resources {
            registry.unregister(resource);
        }
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crontab_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                "versions": [
                    {"name": "v1", "served": true, "storage": true},
                    {"name": "v1beta1", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn served_versions_become_resources() {
        let resources = served_resources(&crontab_crd()).unwrap();
        assert_eq!(resources.len(), 1);
        assert_eq!(resources[0].api_version(), "stable.example.com/v1");
        assert_eq!(resources[0].plural(), "crontabs");
        assert_eq!(resources[0].kind(), "CronTab");
        assert!(resources[0].is_namespaced());
    }

    #[test]
    fn incomplete_crds_are_invalid() {
        let mut no_served = crontab_crd();
        no_served["spec"]["versions"][0]["served"] = json!(false);
        let mut no_group = crontab_crd();
        no_group["spec"]["group"] = json!("");
        let mut bad_scope = crontab_crd();
        bad_scope["spec"]["scope"] = json!("Everywhere");
        for crd in [no_served, no_group, bad_scope, json!({})] {
            let err = served_resources(&crd).unwrap_err();
            assert_eq!(err.code, 422, "{crd}");
        }
    }

    #[test]
    fn established_status() {
        let mut crd = crontab_crd();
        mark_established(&mut crd);
        assert_eq!(crd["status"]["conditions"][1]["type"], "Established");
        assert_eq!(crd["status"]["acceptedNames"]["kind"], "CronTab");
    }
}
