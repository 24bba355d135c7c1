//! [`DiscoveredResource`]: a resource as discovery describes it, read from
//! a group version's resource list.

use clientgo_apimachinery::{ApiResource, GroupVersion, GroupVersionKind};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;

/// A resource found through discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredResource {
    /// Group, version, kind, plural and scope.
    pub resource: ApiResource,
    /// The verbs it supports (`get`, `list`, `watch`, ...).
    pub verbs: Vec<String>,
    /// Its subresources (`status`, `scale`).
    pub subresources: Vec<String>,
    /// Short names (`po`, `deploy`).
    pub short_names: Vec<String>,
    /// The singular name (`pod`), empty when the server gives none.
    pub singular: String,
    /// The categories it belongs to (`all`).
    pub categories: Vec<String>,
}

impl DiscoveredResource {
    /// Whether it supports `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether informers can run on it (list and watch).
    pub fn is_watchable(&self) -> bool {
        self.supports("list") && self.supports("watch")
    }
}

/// The resources of `list` (served by `group_version`), with their
/// subresources folded in.
pub(crate) fn resources_from_list(
    group_version: &GroupVersion,
    list: &APIResourceList,
) -> Vec<DiscoveredResource> {
    let mut resources: Vec<DiscoveredResource> = Vec::new();
    for entry in &list.resources {
        if entry.name.contains('/') {
            continue;
        }
        // A resource may live in another group version than the list (rare);
        // the entry says so.
        let group = entry
            .group
            .clone()
            .unwrap_or_else(|| group_version.group.clone());
        let version = entry
            .version
            .clone()
            .unwrap_or_else(|| group_version.version.clone());
        let gvk = GroupVersionKind::new(group, version, entry.kind.clone());
        let resource = if entry.namespaced {
            ApiResource::namespaced(gvk, entry.name.clone())
        } else {
            ApiResource::cluster_scoped(gvk, entry.name.clone())
        };
        let subresources = list
            .resources
            .iter()
            .filter_map(|other| {
                other
                    .name
                    .strip_prefix(&entry.name)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .map(str::to_string)
            })
            .collect();
        resources.push(DiscoveredResource {
            resource,
            verbs: entry.verbs.clone(),
            subresources,
            short_names: entry.short_names.clone().unwrap_or_default(),
            singular: entry.singular_name.clone(),
            categories: entry.categories.clone().unwrap_or_default(),
        });
    }
    resources
}
