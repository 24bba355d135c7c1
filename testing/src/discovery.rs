//! Discovery documents: `/api`, `/apis`, `/api/v1` and
//! `/apis/{group}/{version}`, built from the resource registry.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::registry::ResourceRegistry;

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
/// group/version, each with its status subresource; `None` when the
/// group/version serves nothing.
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
        resources.push(json!({
            "name": resource.plural(),
            "singularName": resource.kind().to_lowercase(),
            "namespaced": resource.is_namespaced(),
            "kind": resource.kind(),
            "verbs": VERBS,
        }));
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
