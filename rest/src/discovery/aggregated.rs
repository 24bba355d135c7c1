//! [`ApiDiscovery`]: everything a server serves, read in one request per
//! `/api` and `/apis` through aggregated discovery (client-go 1.30+'s
//! `apidiscovery.k8s.io/v2`), or group version by group version from a
//! server without it ([`Discovery::discover_all`](crate::Discovery::discover_all)
//! reads it).

use std::collections::BTreeMap;

use clientgo_apimachinery::{ApiResource, GroupVersion, GroupVersionKind, GroupVersionResource};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery,
};
use serde::Deserialize;

use crate::discovery::resource::{DiscoveredResource, resources_from_list};

/// What client-go's discovery client asks for: aggregated discovery v2,
/// then v2beta1, then the legacy documents.
pub const AGGREGATED_DISCOVERY_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// Every group, version and resource a server serves.
///
/// Groups are in the server's priority order with the core group (named
/// `""`) first; each group's versions are in its order of preference, the
/// preferred first. Subresources are folded into their resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiDiscovery {
    /// The groups.
    pub groups: Vec<DiscoveredGroup>,
}

/// One API group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveredGroup {
    /// Its name (`""` for the core group, `apps`).
    pub name: String,
    /// Its versions, the preferred first.
    pub versions: Vec<DiscoveredVersion>,
}

impl DiscoveredGroup {
    /// The group's resources, with whether their version is the
    /// preferred one, in order of preference.
    pub fn resources(&self) -> impl Iterator<Item = (&DiscoveredResource, bool)> {
        self.versions
            .iter()
            .enumerate()
            .flat_map(|(index, version)| {
                version
                    .resources
                    .iter()
                    .map(move |resource| (resource, index == 0))
            })
    }
}

/// One version of a group and its resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveredVersion {
    /// `v1`.
    pub version: String,
    /// The resources this group version serves.
    pub resources: Vec<DiscoveredResource>,
}

impl ApiDiscovery {
    /// Every resource, with whether its version is its group's preferred
    /// one, in discovery order.
    pub fn resources(&self) -> impl Iterator<Item = (&DiscoveredResource, bool)> {
        self.groups.iter().flat_map(DiscoveredGroup::resources)
    }

    /// The resource of `gvr`, if served.
    pub fn find(&self, gvr: &GroupVersionResource) -> Option<&DiscoveredResource> {
        self.resources()
            .map(|(resource, _)| resource)
            .find(|resource| resource.resource.group_version_resource() == *gvr)
    }

    /// The legacy documents the same state gives: the group list (with the
    /// core group, named `""`, first, as client-go's `ServerGroups`) and
    /// one resource list per group version. kubectl's disk cache keeps
    /// these.
    pub fn to_legacy(&self) -> (APIGroupList, Vec<APIResourceList>) {
        let mut groups = Vec::new();
        let mut lists = Vec::new();
        for group in &self.groups {
            let versions: Vec<GroupVersionForDiscovery> = group
                .versions
                .iter()
                .map(|version| GroupVersionForDiscovery {
                    group_version: GroupVersion::new(&group.name, &version.version).to_string(),
                    version: version.version.clone(),
                })
                .collect();
            groups.push(APIGroup {
                name: group.name.clone(),
                preferred_version: versions.first().cloned(),
                versions,
                server_address_by_client_cidrs: None,
            });
            for version in &group.versions {
                let group_version = GroupVersion::new(&group.name, &version.version);
                lists.push(APIResourceList {
                    group_version: group_version.to_string(),
                    resources: version.resources.iter().flat_map(legacy_entries).collect(),
                });
            }
        }
        (APIGroupList { groups }, lists)
    }

    /// The state the legacy documents describe (the inverse of
    /// [`to_legacy`](Self::to_legacy)); a group version without its list
    /// is left out.
    pub fn from_legacy(groups: &APIGroupList, lists: &[APIResourceList]) -> Self {
        let by_group_version: BTreeMap<&str, &APIResourceList> = lists
            .iter()
            .map(|list| (list.group_version.as_str(), list))
            .collect();
        let groups = groups
            .groups
            .iter()
            .map(|group| {
                let mut versions: Vec<&GroupVersionForDiscovery> = group.versions.iter().collect();
                if let Some(preferred) = &group.preferred_version
                    && let Some(at) = versions.iter().position(|v| v.version == preferred.version)
                {
                    let first = versions.remove(at);
                    versions.insert(0, first);
                }
                let versions = versions
                    .into_iter()
                    .filter_map(|version| {
                        let list = by_group_version.get(version.group_version.as_str())?;
                        let group_version = GroupVersion::new(&group.name, &version.version);
                        Some(DiscoveredVersion {
                            version: version.version.clone(),
                            resources: resources_from_list(&group_version, list),
                        })
                    })
                    .collect();
                DiscoveredGroup {
                    name: group.name.clone(),
                    versions,
                }
            })
            .collect();
        ApiDiscovery { groups }
    }
}

/// A resource as legacy resource-list entries: itself, then each
/// subresource as `plural/subresource`.
fn legacy_entries(resource: &DiscoveredResource) -> Vec<APIResource> {
    let api = &resource.resource;
    let entry = APIResource {
        name: api.plural().to_string(),
        singular_name: resource.singular.clone(),
        namespaced: api.is_namespaced(),
        kind: api.kind().to_string(),
        verbs: resource.verbs.clone(),
        short_names: (!resource.short_names.is_empty()).then(|| resource.short_names.clone()),
        categories: (!resource.categories.is_empty()).then(|| resource.categories.clone()),
        ..APIResource::default()
    };
    let mut entries = vec![entry];
    for subresource in &resource.subresources {
        let (group, version, kind) = subresource_kind(api.kind(), subresource);
        entries.push(APIResource {
            name: format!("{}/{subresource}", api.plural()),
            namespaced: api.is_namespaced(),
            group: group.map(str::to_string),
            version: version.map(str::to_string),
            kind: kind.to_string(),
            ..APIResource::default()
        });
    }
    entries
}

/// The kind a subresource answers with, as kube-apiserver lists it (a
/// kubectl reading the cache resolves `deployments/scale` to
/// `autoscaling/v1` Scale by it): a group and version only when they are
/// not the parent's.
fn subresource_kind<'a>(
    parent_kind: &'a str,
    subresource: &str,
) -> (Option<&'static str>, Option<&'static str>, &'a str) {
    match subresource {
        "scale" => (Some("autoscaling"), Some("v1"), "Scale"),
        "eviction" => (Some("policy"), Some("v1"), "Eviction"),
        "token" => (Some("authentication.k8s.io"), Some("v1"), "TokenRequest"),
        "binding" => (None, None, "Binding"),
        "exec" => (None, None, "PodExecOptions"),
        "attach" => (None, None, "PodAttachOptions"),
        "portforward" => (None, None, "PodPortForwardOptions"),
        "proxy" => match parent_kind {
            "Node" => (None, None, "NodeProxyOptions"),
            "Service" => (None, None, "ServiceProxyOptions"),
            _ => (None, None, "PodProxyOptions"),
        },
        _ => (None, None, parent_kind),
    }
}

/// `APIGroupDiscoveryList` (apidiscovery.k8s.io/v2), as much of it as is
/// read. k8s-openapi has no such type.
#[derive(Debug, Deserialize)]
pub(crate) struct GroupDiscoveryList {
    #[serde(default)]
    items: Vec<GroupDiscovery>,
}

#[derive(Debug, Deserialize)]
struct GroupDiscovery {
    #[serde(default)]
    metadata: GroupMetadata,
    #[serde(default)]
    versions: Vec<VersionDiscovery>,
}

#[derive(Debug, Default, Deserialize)]
struct GroupMetadata {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Deserialize)]
struct VersionDiscovery {
    version: String,
    #[serde(default)]
    resources: Vec<ResourceDiscovery>,
    /// `Stale` when an aggregated API server could not be reached: its
    /// resources are not served now.
    #[serde(default)]
    freshness: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceDiscovery {
    resource: String,
    #[serde(default)]
    response_kind: Option<KindDiscovery>,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    singular_resource: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
    #[serde(default)]
    subresources: Vec<SubresourceDiscovery>,
}

#[derive(Debug, Default, Deserialize)]
struct KindDiscovery {
    #[serde(default)]
    kind: String,
}

#[derive(Debug, Deserialize)]
struct SubresourceDiscovery {
    subresource: String,
}

impl GroupDiscoveryList {
    pub(crate) fn into_groups(self) -> Vec<DiscoveredGroup> {
        self.items
            .into_iter()
            .map(|group| {
                let name = group.metadata.name;
                // As client-go: a stale version is left out (counted as
                // failed), and so is a resource without a kind or a known
                // scope.
                let versions = group
                    .versions
                    .into_iter()
                    .filter(|version| {
                        let stale = version.freshness == "Stale";
                        if stale {
                            tracing::debug!(group = %name, version = %version.version, "stale in aggregated discovery; left out");
                        }
                        !stale
                    })
                    .map(|version| DiscoveredVersion {
                        resources: version
                            .resources
                            .into_iter()
                            .filter_map(|resource| resource.into_discovered(&name, &version.version))
                            .collect(),
                        version: version.version,
                    })
                    .collect();
                DiscoveredGroup { name, versions }
            })
            .collect()
    }
}

impl ResourceDiscovery {
    fn into_discovered(self, group: &str, version: &str) -> Option<DiscoveredResource> {
        let kind = self
            .response_kind
            .map(|kind| kind.kind)
            .filter(|kind| !kind.is_empty())?;
        let gvk = GroupVersionKind::new(group, version, kind);
        let resource = match self.scope.as_str() {
            "Cluster" => ApiResource::cluster_scoped(gvk, self.resource),
            "Namespaced" => ApiResource::namespaced(gvk, self.resource),
            _ => return None,
        };
        Some(DiscoveredResource {
            resource,
            verbs: self.verbs,
            subresources: self
                .subresources
                .into_iter()
                .map(|sub| sub.subresource)
                .collect(),
            short_names: self.short_names,
            singular: self.singular_resource,
            categories: self.categories,
        })
    }
}

/// Whether a `Content-Type` is aggregated discovery (v2 or v2beta1).
pub(crate) fn is_aggregated(content_type: &str) -> bool {
    content_type.contains("as=APIGroupDiscoveryList")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const DOCUMENT: &str = r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[
        {"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[
            {"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["get","list","watch"],"shortNames":["deploy"],"categories":["all"],
             "subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get"]},{"subresource":"status","verbs":["get"]}]}],"freshness":"Current"}]},
        {"metadata":{"name":"autoscaling"},"versions":[
            {"version":"v2","resources":[{"resource":"horizontalpodautoscalers","responseKind":{"kind":"HorizontalPodAutoscaler"},"scope":"Namespaced","verbs":["get"]}]},
            {"version":"v1","resources":[{"resource":"horizontalpodautoscalers","responseKind":{"kind":"HorizontalPodAutoscaler"},"scope":"Namespaced","verbs":["get"]}]}]}]}"#;

    #[test]
    fn an_aggregated_document_reads_into_groups_in_preference_order() {
        let list: GroupDiscoveryList = serde_json::from_str(DOCUMENT).unwrap();
        let discovery = ApiDiscovery {
            groups: list.into_groups(),
        };
        let deployments = discovery
            .find(&GroupVersionResource::new("apps", "v1", "deployments"))
            .unwrap();
        assert_eq!(deployments.resource.kind(), "Deployment");
        assert!(deployments.resource.is_namespaced());
        assert_eq!(deployments.short_names, ["deploy"]);
        assert_eq!(deployments.categories, ["all"]);
        assert_eq!(deployments.subresources, ["scale", "status"]);
        let preferred: Vec<_> = discovery
            .resources()
            .filter(|(_, preferred)| *preferred)
            .map(|(resource, _)| resource.resource.group_version_resource().to_string())
            .collect();
        assert_eq!(preferred.len(), 2);
        assert!(preferred.iter().any(|gvr| gvr.contains("v2")));
    }

    #[test]
    fn stale_versions_and_resources_without_kind_or_scope_are_left_out() {
        let document = r#"{"items":[{"metadata":{"name":"metrics.k8s.io"},"versions":[
            {"version":"v1beta1","freshness":"Stale","resources":[{"resource":"pods","responseKind":{"kind":"PodMetrics"},"scope":"Namespaced"}]}]},
            {"metadata":{"name":"odd"},"versions":[{"version":"v1","resources":[
                {"resource":"nokind","scope":"Namespaced"},
                {"resource":"noscope","responseKind":{"kind":"X"}},
                {"resource":"fine","responseKind":{"kind":"Fine"},"scope":"Cluster"}]}]}]}"#;
        let list: GroupDiscoveryList = serde_json::from_str(document).unwrap();
        let discovery = ApiDiscovery {
            groups: list.into_groups(),
        };
        let names: Vec<&str> = discovery
            .resources()
            .map(|(resource, _)| resource.resource.plural())
            .collect();
        assert_eq!(names, ["fine"]);
    }

    #[test]
    fn the_legacy_documents_give_back_the_same_state() {
        let list: GroupDiscoveryList = serde_json::from_str(DOCUMENT).unwrap();
        let discovery = ApiDiscovery {
            groups: list.into_groups(),
        };
        let (groups, lists) = discovery.to_legacy();
        assert_eq!(
            groups.groups[1].preferred_version.as_ref().unwrap().version,
            "v2"
        );
        assert_eq!(ApiDiscovery::from_legacy(&groups, &lists), discovery);
        let scale = lists[0]
            .resources
            .iter()
            .find(|entry| entry.name == "deployments/scale")
            .unwrap();
        assert_eq!(
            (
                scale.group.as_deref(),
                scale.version.as_deref(),
                scale.kind.as_str()
            ),
            (Some("autoscaling"), Some("v1"), "Scale"),
            "as kube-apiserver lists it"
        );
    }
}
