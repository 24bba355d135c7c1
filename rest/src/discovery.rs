//! Discovery: the server's version, its API groups and the resources each
//! group version serves, as client-go's discovery client (what codegen and
//! dynamic informers need).

use clientgo_apimachinery::{ApiResource, GroupVersion, GroupVersionKind, GroupVersionResource};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList, APIVersions};
use k8s_openapi::apimachinery::pkg::version::Info;

use crate::client::RestClient;
use crate::error::Error;

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

impl RestClient {
    /// The server's version (`/version`).
    pub async fn server_version(&self) -> Result<Info, Error> {
        self.get().abs_path("/version").send().await
    }

    /// The core group's versions (`/api`).
    pub async fn core_api_versions(&self) -> Result<APIVersions, Error> {
        self.get().abs_path("/api").send().await
    }

    /// The named API groups with their versions and preferred version
    /// (`/apis`).
    pub async fn api_groups(&self) -> Result<APIGroupList, Error> {
        self.get().abs_path("/apis").send().await
    }

    /// The resources of one group version (`/api/v1`, `/apis/apps/v1`).
    pub async fn api_resources(
        &self,
        group_version: &GroupVersion,
    ) -> Result<APIResourceList, Error> {
        let path = if group_version.group.is_empty() {
            format!("/api/{}", group_version.version)
        } else {
            format!("/apis/{}/{}", group_version.group, group_version.version)
        };
        self.get().abs_path(path).send().await
    }

    /// The resources of one group version, with subresources folded into
    /// their parents.
    pub async fn discover_group_version(
        &self,
        group_version: &GroupVersion,
    ) -> Result<Vec<DiscoveredResource>, Error> {
        let list = self.api_resources(group_version).await?;
        Ok(resources_from_list(group_version, &list))
    }

    /// Every resource of every group at its preferred version (the core
    /// group's `v1` first), as `kubectl api-resources` lists them.
    pub async fn discover_preferred(&self) -> Result<Vec<DiscoveredResource>, Error> {
        let mut group_versions = Vec::new();
        for version in self.core_api_versions().await?.versions {
            group_versions.push(GroupVersion::new("", version));
        }
        for group in self.api_groups().await?.groups {
            let preferred = group
                .preferred_version
                .map(|p| p.version)
                .or_else(|| group.versions.first().map(|v| v.version.clone()));
            if let Some(version) = preferred {
                group_versions.push(GroupVersion::new(group.name, version));
            }
        }
        let mut resources = Vec::new();
        for group_version in &group_versions {
            resources.extend(self.discover_group_version(group_version).await?);
        }
        Ok(resources)
    }

    /// Finds one resource by group, version and plural, `None` when the
    /// group version does not serve it (or does not exist).
    pub async fn resolve(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<Option<DiscoveredResource>, Error> {
        match self.discover_group_version(&gvr.group_version()).await {
            Ok(resources) => Ok(resources
                .into_iter()
                .find(|r| r.resource.plural() == gvr.resource)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }
}

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
