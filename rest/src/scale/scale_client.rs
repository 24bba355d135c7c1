//! [`ScaleClient`]: the `scale` subresource of any resource that has one,
//! found through discovery (client-go's `k8s.io/client-go/scale`).

use k8s_openapi::api::autoscaling::v1::Scale;

use crate::api::options::Patch;
use crate::api::resource_client::ResourceClient;
use crate::client::error::{Error, RequestError};
use crate::client::rest_client::RestClient;
use crate::discovery::resource::DiscoveredResource;
use crate::discovery::rest_mapper::{DeferredRestMapper, MapperError};

/// Why a scale request failed.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// The resource could not be found through discovery.
    #[error(transparent)]
    Mapping(#[from] MapperError),
    /// The resource has no `scale` subresource.
    #[error("{resource} has no scale subresource")]
    NotScalable {
        /// The resource, as `plural.group`.
        resource: String,
    },
    /// The request failed (409 Conflict for a stale resourceVersion).
    #[error(transparent)]
    Request(#[from] Error),
}

/// Reads and writes the `autoscaling/v1` Scale of deployments, replica
/// sets, stateful sets, replication controllers and any custom resource
/// that declares a scale subresource. Resources are named as kubectl names
/// them (`deployments`, `deploy`, `deployments.apps`) and resolved at their
/// preferred version. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ScaleClient {
    client: RestClient,
    mapper: DeferredRestMapper,
}

impl ScaleClient {
    /// A scale client sending through `client`, resolving names with
    /// `mapper`.
    pub fn new(client: RestClient, mapper: DeferredRestMapper) -> Self {
        ScaleClient { client, mapper }
    }

    /// The Scale of `namespace/name` (`namespace` `None` for a
    /// cluster-scoped resource).
    pub async fn get(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Scale, ScaleError> {
        let scales = self.scales(resource, namespace).await?;
        let request = scales.object(self.client.get(), name)?.subresource("scale");
        Ok(request.send().await?)
    }

    /// Writes a Scale (`PUT`): its `spec.replicas` becomes the resource's;
    /// a `metadata.resourceVersion` other than the current one is 409
    /// Conflict.
    pub async fn update(
        &self,
        resource: &str,
        namespace: Option<&str>,
        scale: &Scale,
    ) -> Result<Scale, ScaleError> {
        let name = scale.metadata.name.as_deref().unwrap_or_default();
        let scales = self.scales(resource, namespace).await?;
        let request = scales.object(self.client.put(), name)?.subresource("scale");
        Ok(request.json_body(scale).send().await?)
    }

    /// Patches a Scale (a merge patch `{"spec":{"replicas":3}}`, for
    /// instance).
    pub async fn patch(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
        patch: &Patch,
    ) -> Result<Scale, ScaleError> {
        let scales = self.scales(resource, namespace).await?;
        let request = scales
            .object(self.client.patch(), name)?
            .subresource("scale");
        let body = serde_json::to_vec(patch.body())
            .map_err(|error| Error::from(RequestError::Encode(error)))?;
        Ok(request.body(body, patch.content_type()).send().await?)
    }

    /// Sets the replica count (a merge patch of `spec.replicas`).
    pub async fn scale_to(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
        replicas: i32,
    ) -> Result<Scale, ScaleError> {
        let patch = Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}}));
        self.patch(resource, namespace, name, &patch).await
    }

    /// A client of `resource`'s objects, once discovery says it has a
    /// scale subresource.
    async fn scales(
        &self,
        resource: &str,
        namespace: Option<&str>,
    ) -> Result<ResourceClient<Scale>, ScaleError> {
        let found: DiscoveredResource = self.mapper.resource_for(resource).await?;
        if !found.subresources.iter().any(|sub| sub == "scale") {
            return Err(ScaleError::NotScalable {
                resource: found.resource.group_resource().to_string(),
            });
        }
        Ok(ResourceClient::with_resource(
            self.client.clone(),
            found.resource,
            namespace,
        ))
    }
}
