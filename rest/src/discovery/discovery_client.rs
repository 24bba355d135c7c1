//! [`Discovery`]: the server's version, its API groups and the resources
//! each group version serves (client-go's `discovery.DiscoveryClient`),
//! what codegen, dynamic informers and the REST mapper need.

use clientgo_apimachinery::{GroupVersion, GroupVersionResource};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResourceList, APIVersions, GroupVersionForDiscovery,
};
use k8s_openapi::apimachinery::pkg::version::Info;

use crate::client::error::Error;
use crate::client::rest_client::RestClient;
use crate::discovery::aggregated::{
    AGGREGATED_DISCOVERY_ACCEPT, ApiDiscovery, GroupDiscoveryList, is_aggregated,
};
use crate::discovery::resource::{DiscoveredResource, resources_from_list};

/// What a server serves: its version, groups and resources (client-go's
/// `DiscoveryClient`). Cheap to clone: it holds a [`RestClient`].
///
/// ```no_run
/// use clientgo_rest::{Discovery, RestClient};
///
/// # async fn run(client: RestClient) -> Result<(), clientgo_rest::Error> {
/// let discovery = Discovery::new(client);
/// println!("{}", discovery.server_version().await?.git_version);
/// for resource in discovery.discover_preferred().await? {
///     println!("{}", resource.resource.plural());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Discovery {
    client: RestClient,
}

impl From<RestClient> for Discovery {
    fn from(client: RestClient) -> Self {
        Discovery::new(client)
    }
}

impl Discovery {
    /// Discovery of `client`'s server.
    pub fn new(client: RestClient) -> Self {
        Discovery { client }
    }

    /// The client requests go through.
    pub fn client(&self) -> &RestClient {
        &self.client
    }

    /// The server's version (`/version`).
    pub async fn server_version(&self) -> Result<Info, Error> {
        self.client.get().abs_path("/version").send().await
    }

    /// The core group's versions (`/api`).
    pub async fn core_api_versions(&self) -> Result<APIVersions, Error> {
        self.client.get().abs_path("/api").send().await
    }

    /// The named API groups with their versions and preferred version
    /// (`/apis`).
    pub async fn api_groups(&self) -> Result<APIGroupList, Error> {
        self.client.get().abs_path("/apis").send().await
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
        self.client.get().abs_path(path).send().await
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

    /// Every group, version and resource the server serves (client-go's
    /// `ServerGroupsAndResources`): two requests (`/api` and `/apis`) when
    /// the server answers aggregated discovery, as every server since
    /// 1.30 does; otherwise the group list and one request per group
    /// version, as before.
    pub async fn discover_all(&self) -> Result<ApiDiscovery, Error> {
        let mut groups = Vec::new();
        for path in ["/api", "/apis"] {
            let answer = self
                .client
                .get()
                .abs_path(path)
                .header("accept", AGGREGATED_DISCOVERY_ACCEPT)
                .send_raw()
                .await?;
            let content_type = answer
                .headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default();
            if !is_aggregated(content_type) {
                tracing::debug!(
                    path,
                    content_type,
                    "no aggregated discovery; walking the group versions"
                );
                return self.discover_all_legacy().await;
            }
            let list: GroupDiscoveryList = answer.json()?;
            groups.extend(list.into_groups());
        }
        Ok(ApiDiscovery { groups })
    }

    /// [`discover_all`](Self::discover_all) from the legacy documents.
    async fn discover_all_legacy(&self) -> Result<ApiDiscovery, Error> {
        let core = self.core_api_versions().await?;
        let mut groups = vec![APIGroup {
            name: String::new(),
            versions: core
                .versions
                .iter()
                .map(|version| GroupVersionForDiscovery {
                    group_version: version.clone(),
                    version: version.clone(),
                })
                .collect(),
            preferred_version: None,
            server_address_by_client_cidrs: None,
        }];
        groups.extend(self.api_groups().await?.groups);
        let groups = APIGroupList { groups };
        let mut lists = Vec::new();
        for group in &groups.groups {
            for version in &group.versions {
                let group_version = GroupVersion::new(&group.name, &version.version);
                match self.api_resources(&group_version).await {
                    Ok(list) => lists.push(list),
                    // A group version that went away meanwhile (404), or
                    // an aggregated API that is down (503), is left out, as
                    // client-go's partial discovery does.
                    Err(error)
                        if error.is_not_found()
                            || error.status().is_some_and(|status| status.code == 503) =>
                    {
                        tracing::warn!(%group_version, %error, "group version left out of discovery");
                    }
                    Err(error) => return Err(error),
                }
            }
        }
        Ok(ApiDiscovery::from_legacy(&groups, &lists))
    }
}
