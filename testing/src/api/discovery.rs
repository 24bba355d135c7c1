//! Discovery documents: `/api`, `/apis`, `/api/v1` and
//! `/apis/{group}/{version}`, built from the resource registry, and the
//! aggregated form of `/api` and `/apis` (one `APIGroupDiscoveryList` each,
//! what kube-apiserver answers to an `Accept` asking for
//! [`AGGREGATED_CONTENT_TYPE`]; `discovery-aggregated.json` in the real
//! server's recordings).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::registry::ResourceRegistry;

/// The verbs every served resource supports.
const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The media type of aggregated discovery, as kube-apiserver 1.36 labels
/// its answer.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header asks for aggregated discovery (v2) before
/// anything else it accepts, as client-go's does.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| {
        let first = first.replace(' ', "");
        first.contains("g=apidiscovery.k8s.io")
            && first.contains("v=v2;")
            && first.contains("as=APIGroupDiscoveryList")
    })
}

/// Gives a discovery entry the short names and categories of its
/// resource: a built-in's as kube-apiserver 1.36 gives them, a custom
/// resource's from its definition.
fn add_names(entry: &mut Value, registry: &ResourceRegistry, group: &str, plural: &str) {
    let (short_names, categories) = match registry.names(group, plural) {
        Some(names) => (json!(names.short_names), json!(names.categories)),
        None => {
            let (short_names, categories) = builtin_names(group, plural);
            (json!(short_names), json!(categories))
        }
    };
    // Left out when empty, as kube-apiserver leaves them out.
    for (field, names) in [("shortNames", short_names), ("categories", categories)] {
        if names.as_array().is_some_and(|names| !names.is_empty()) {
            entry[field] = names;
        }
    }
}

/// The short names and categories kube-apiserver 1.36 gives a built-in
/// resource (its recorded discovery); none for anything else.
fn builtin_names(group: &str, plural: &str) -> (&'static [&'static str], &'static [&'static str]) {
    const ALL: &[&str] = &["all"];
    const EXTENSIONS: &[&str] = &["api-extensions"];
    match (group, plural) {
        ("", "pods") => (&["po"], ALL),
        ("", "services") => (&["svc"], ALL),
        ("", "replicationcontrollers") => (&["rc"], ALL),
        ("", "componentstatuses") => (&["cs"], &[]),
        ("", "configmaps") => (&["cm"], &[]),
        ("", "endpoints") => (&["ep"], &[]),
        ("", "events") | ("events.k8s.io", "events") => (&["ev"], &[]),
        ("", "limitranges") => (&["limits"], &[]),
        ("", "namespaces") => (&["ns"], &[]),
        ("", "nodes") => (&["no"], &[]),
        ("", "persistentvolumeclaims") => (&["pvc"], &[]),
        ("", "persistentvolumes") => (&["pv"], &[]),
        ("", "resourcequotas") => (&["quota"], &[]),
        ("", "serviceaccounts") => (&["sa"], &[]),
        ("apps", "daemonsets") => (&["ds"], ALL),
        ("apps", "deployments") => (&["deploy"], ALL),
        ("apps", "replicasets") => (&["rs"], ALL),
        ("apps", "statefulsets") => (&["sts"], ALL),
        ("autoscaling", "horizontalpodautoscalers") => (&["hpa"], ALL),
        ("batch", "cronjobs") => (&["cj"], ALL),
        ("batch", "jobs") => (&[], ALL),
        ("certificates.k8s.io", "certificatesigningrequests") => (&["csr"], &[]),
        ("networking.k8s.io", "ingresses") => (&["ing"], &[]),
        ("networking.k8s.io", "ipaddresses") => (&["ip"], &[]),
        ("networking.k8s.io", "networkpolicies") => (&["netpol"], &[]),
        ("policy", "poddisruptionbudgets") => (&["pdb"], &[]),
        ("storage.k8s.io", "storageclasses") => (&["sc"], &[]),
        ("storage.k8s.io", "volumeattributesclasses") => (&["vac"], &[]),
        ("scheduling.k8s.io", "priorityclasses") => (&["pc"], &[]),
        ("apiextensions.k8s.io", "customresourcedefinitions") => (&["crd", "crds"], EXTENSIONS),
        ("apiregistration.k8s.io", "apiservices") | ("admissionregistration.k8s.io", _) => {
            (&[], EXTENSIONS)
        }
        _ => (&[], &[]),
    }
}

/// Whether a resource has a `scale` subresource: the built-in workloads
/// that have one (custom resources' scale is not served here).
pub(crate) fn has_scale(group: &str, plural: &str) -> bool {
    matches!(
        (group, plural),
        ("apps", "deployments" | "replicasets" | "statefulsets") | ("", "replicationcontrollers")
    )
}

/// Whether kube-apiserver lists a `status` subresource for a resource:
/// every one but the built-ins that have no status (their recorded
/// discovery).
fn has_status(group: &str, plural: &str) -> bool {
    !matches!(
        (group, plural),
        (
            "",
            "bindings"
                | "componentstatuses"
                | "configmaps"
                | "endpoints"
                | "events"
                | "limitranges"
                | "podtemplates"
                | "secrets"
                | "serviceaccounts"
        ) | (
            "admissionregistration.k8s.io",
            "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicybindings"
                | "validatingwebhookconfigurations"
        ) | ("apps", "controllerrevisions")
            | ("authentication.k8s.io" | "authorization.k8s.io", _)
            | ("coordination.k8s.io", "leases")
            | ("discovery.k8s.io", "endpointslices")
            | ("events.k8s.io", "events")
            | (
                "networking.k8s.io",
                "ingressclasses" | "ipaddresses" | "networkpolicies"
            )
            | ("node.k8s.io", "runtimeclasses")
            | ("rbac.authorization.k8s.io", _)
            | (
                "resource.k8s.io",
                "deviceclasses" | "resourceclaimtemplates" | "resourceslices"
            )
            | ("scheduling.k8s.io", "priorityclasses")
            | (
                "storage.k8s.io",
                "csidrivers"
                    | "csinodes"
                    | "csistoragecapacities"
                    | "storageclasses"
                    | "volumeattributesclasses"
            )
    )
}

/// `GET /api` or `/apis` in the aggregated form: the core group
/// (`core`), or every named group, each with its versions (the preferred
/// first) and their resources.
pub(crate) fn aggregated(registry: &ResourceRegistry, core: bool) -> Value {
    let mut groups: BTreeMap<&str, BTreeMap<&str, Vec<Value>>> = BTreeMap::new();
    for resource in registry.iter().filter(|r| r.group().is_empty() == core) {
        let kind = json!({"group": "", "version": "", "kind": resource.kind()});
        let mut subresources = Vec::new();
        if has_scale(resource.group(), resource.plural()) {
            subresources.push(json!({
                "subresource": "scale",
                "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "verbs": ["get", "patch", "update"],
            }));
        }
        if has_status(resource.group(), resource.plural()) {
            subresources.push(json!({"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}));
        }
        let mut entry = json!({
            "resource": resource.plural(),
            "responseKind": kind,
            "scope": if resource.is_namespaced() { "Namespaced" } else { "Cluster" },
            "singularResource": resource.kind().to_lowercase(),
            "verbs": VERBS,
            "subresources": subresources,
        });
        add_names(&mut entry, registry, resource.group(), resource.plural());
        groups
            .entry(resource.group())
            .or_default()
            .entry(resource.version())
            .or_default()
            .push(entry);
    }
    let items: Vec<Value> = groups
        .into_iter()
        .map(|(group, versions)| {
            // The first version in sort order is preferred, as in the
            // group list; aggregated discovery lists it first.
            let versions: Vec<Value> = versions
                .into_iter()
                .map(|(version, resources)| {
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if group.is_empty() {
                json!({})
            } else {
                json!({"name": group})
            };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// `GET /api`: the core group's versions.
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// `GET /apis`: every named group with its versions (the first version in
/// sort order is preferred).
pub(crate) fn group_list(registry: &ResourceRegistry) -> Value {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for resource in registry.iter().filter(|r| !r.group().is_empty()) {
        let versions = groups.entry(resource.group()).or_default();
        if !versions.contains(&resource.version()) {
            versions.push(resource.version());
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(group, mut versions)| {
            versions.sort_unstable();
            let entries: Vec<Value> = versions
                .iter()
                .map(|version| json!({"groupVersion": format!("{group}/{version}"), "version": version}))
                .collect();
            let preferred = entries.first().cloned().unwrap_or(Value::Null);
            json!({"name": group, "versions": entries, "preferredVersion": preferred})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /api/v1` or `/apis/{group}/{version}`: the resources of one
/// group/version with their `status` and `scale` subresources (as
/// `has_status` and `has_scale` say); `None` when the group/version
/// serves nothing.
pub(crate) fn resource_list(
    registry: &ResourceRegistry,
    group: &str,
    version: &str,
) -> Option<Value> {
    let mut resources = Vec::new();
    for resource in registry
        .iter()
        .filter(|r| r.group() == group && r.version() == version)
    {
        let mut entry = json!({
            "name": resource.plural(),
            "singularName": resource.kind().to_lowercase(),
            "namespaced": resource.is_namespaced(),
            "kind": resource.kind(),
            "verbs": VERBS,
        });
        add_names(&mut entry, registry, resource.group(), resource.plural());
        resources.push(entry);
        if has_scale(resource.group(), resource.plural()) {
            resources.push(json!({
                "name": format!("{}/scale", resource.plural()),
                "singularName": "",
                "namespaced": resource.is_namespaced(),
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        if !has_status(resource.group(), resource.plural()) {
            continue;
        }
        resources.push(json!({
            "name": format!("{}/status", resource.plural()),
            "singularName": "",
            "namespaced": resource.is_namespaced(),
            "kind": resource.kind(),
            "verbs": ["get", "patch", "update"],
        }));
    }
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_list_the_registered_resources() {
        let registry = ResourceRegistry::with_builtins();
        let groups = group_list(&registry);
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert!(names.contains(&"apps"));
        assert!(!names.contains(&""), "the core group is under /api");
        let core = resource_list(&registry, "", "v1").unwrap_or_default();
        assert_eq!(core["groupVersion"], "v1");
        let pods = core["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "pods").cloned())
            .unwrap_or_default();
        assert_eq!(pods["namespaced"], true);
        assert_eq!(pods["kind"], "Pod");
        assert!(resource_list(&registry, "nothing.example.com", "v1").is_none());
        assert_eq!(core_versions("127.0.0.1:1")["versions"][0], "v1");
    }
}
