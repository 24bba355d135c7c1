//! [`ResourceClient`]: the verbs of one resource, in one namespace or all,
//! for typed k8s-openapi objects, [`DynamicObject`]s or metadata only.

use std::marker::PhantomData;

use clientgo_apimachinery::{
    ApiResource, DynamicObject, KnownScope, ListOptions, Object, ObjectList,
    PARTIAL_OBJECT_METADATA_ACCEPT, PARTIAL_OBJECT_METADATA_LIST_ACCEPT, PartialObjectMetadata,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::options::{CreateOptions, DeleteOptions, Patch, PatchOptions, UpdateOptions};
use crate::client::error::{Error, RequestError};
use crate::client::request::{ByteStream, Request};
use crate::client::rest_client::RestClient;

/// The verbs of one resource, scoped to a namespace or to all of them, as a
/// client-go typed client (`clientset.CoreV1().Pods(ns)`).
///
/// `K` is what objects decode into: a k8s-openapi type (see
/// [`namespaced`](Self::namespaced)), a [`DynamicObject`] for any resource
/// ([`dynamic`](ResourceClient::dynamic)), or [`PartialObjectMetadata`]
/// ([`metadata`](ResourceClient::metadata)).
///
/// Without a namespace, list, watch and delete_collection cover every
/// namespace, and verbs on one object of a namespaced resource fail with
/// [`RequestError::InvalidPath`] before anything is sent.
pub struct ResourceClient<K> {
    client: RestClient,
    resource: ApiResource,
    namespace: Option<String>,
    /// Accept headers for one object and for lists (metadata-only mode).
    accept: Option<(&'static str, &'static str)>,
    object: PhantomData<fn() -> K>,
}

impl<K> Clone for ResourceClient<K> {
    fn clone(&self) -> Self {
        ResourceClient {
            client: self.client.clone(),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
            accept: self.accept,
            object: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for ResourceClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("resource", &self.resource.to_string())
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl<K> ResourceClient<K>
where
    K: k8s_openapi::Resource,
    K::Scope: KnownScope,
{
    /// A typed client for `K` in `namespace`.
    pub fn namespaced(client: RestClient, namespace: &str) -> Self {
        ResourceClient::with_resource(client, ApiResource::of::<K>(), Some(namespace))
    }

    /// A typed client for `K` in the configuration's default namespace.
    pub fn default_namespaced(client: RestClient) -> Self {
        let namespace = client.default_namespace().to_string();
        ResourceClient::with_resource(client, ApiResource::of::<K>(), Some(&namespace))
    }

    /// A typed client for `K` across all namespaces (or for a
    /// cluster-scoped `K`).
    pub fn all(client: RestClient) -> Self {
        ResourceClient::with_resource(client, ApiResource::of::<K>(), None)
    }
}

impl ResourceClient<DynamicObject> {
    /// A client for any resource, objects decoded as [`DynamicObject`].
    pub fn dynamic(client: RestClient, resource: ApiResource, namespace: Option<&str>) -> Self {
        ResourceClient::with_resource(client, resource, namespace)
    }
}

impl ResourceClient<PartialObjectMetadata> {
    /// A client that asks the server for metadata only
    /// (`as=PartialObjectMetadata`): objects arrive without spec and status.
    pub fn metadata(client: RestClient, resource: ApiResource, namespace: Option<&str>) -> Self {
        let mut this = ResourceClient::with_resource(client, resource, namespace);
        this.accept = Some((
            PARTIAL_OBJECT_METADATA_ACCEPT,
            PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
        ));
        this
    }
}

impl<K> ResourceClient<K> {
    /// A client for `resource`, objects decoded as `K`. A namespace given
    /// for a cluster-scoped resource is ignored.
    pub fn with_resource(
        client: RestClient,
        resource: ApiResource,
        namespace: Option<&str>,
    ) -> Self {
        let namespace = namespace
            .filter(|n| !n.is_empty() && resource.is_namespaced())
            .map(str::to_string);
        ResourceClient {
            client,
            resource,
            namespace,
            accept: None,
            object: PhantomData,
        }
    }

    /// The same client (resource, namespace, accept headers), decoding
    /// objects as `E` instead: for a caller that keeps another form of the
    /// same objects (an informer keeping compact entries of `K`).
    pub fn retyped<E>(self) -> ResourceClient<E> {
        ResourceClient {
            client: self.client,
            resource: self.resource,
            namespace: self.namespace,
            accept: self.accept,
            object: PhantomData,
        }
    }

    /// The resource.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// The `apiVersion` and `kind` of the objects this client receives:
    /// the resource's, or `meta.k8s.io/v1` `PartialObjectMetadata` for a
    /// metadata-only client.
    pub fn received_type(&self) -> (&str, &str) {
        if self.accept.is_some() {
            (
                clientgo_apimachinery::META_API_VERSION,
                "PartialObjectMetadata",
            )
        } else {
            (self.resource.api_version(), self.resource.kind())
        }
    }

    /// The namespace, if scoped to one.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The underlying client.
    pub fn client(&self) -> &RestClient {
        &self.client
    }

    fn collection(&self, request: Request) -> Request {
        let request = request.api_resource(&self.resource);
        match &self.namespace {
            Some(namespace) => request.namespace(namespace),
            None => request,
        }
    }

    pub(crate) fn object(&self, request: Request, name: &str) -> Result<Request, Error> {
        if self.resource.is_namespaced() && self.namespace.is_none() {
            return Err(RequestError::InvalidPath(format!(
                "{} {name:?} is namespaced; this client covers all namespaces, so name one",
                self.resource
            ))
            .into());
        }
        Ok(self.collection(request).name(name))
    }

    fn accept_one(&self, request: Request) -> Request {
        match self.accept {
            Some((one, _)) => request.header("accept", one),
            None => request,
        }
    }

    fn accept_list(&self, request: Request) -> Request {
        match self.accept {
            Some((_, list)) => request.header("accept", list),
            None => request,
        }
    }

    /// Lists one page like [`list`](Self::list) but returns the body as it
    /// arrives, for a decoder that keeps only decoded items (the listwatch
    /// crate's `ListDecoder`), so a large list never sits in memory as
    /// text.
    pub async fn list_stream(&self, options: &ListOptions) -> Result<ByteStream, Error> {
        let request = self.collection(self.client.get()).list_options(options);
        self.accept_list(request).stream().await
    }

    /// [`list_stream`](Self::list_stream) asking for `accept` instead
    /// (such as [`PROTOBUF_ACCEPT`](crate::config::PROTOBUF_ACCEPT)); the answer's
    /// `Content-Type` ([`ByteStream::headers`]) says what came.
    pub async fn list_stream_accepting(
        &self,
        options: &ListOptions,
        accept: &str,
    ) -> Result<ByteStream, Error> {
        let request = self.collection(self.client.get()).list_options(options);
        request.header("accept", accept).stream().await
    }

    /// [`watch`](Self::watch) asking for `accept` instead; a protobuf
    /// answer is a stream of length-prefixed frames.
    pub async fn watch_accepting(
        &self,
        options: &ListOptions,
        accept: &str,
    ) -> Result<ByteStream, Error> {
        let options = options.clone().watch(true);
        let request = self.collection(self.client.get()).list_options(&options);
        request.header("accept", accept).watch().await
    }

    /// Opens a watch with `options` (`watch=true` is added). Returns the
    /// raw stream of JSON events, for the listwatch crate's decoder. Not
    /// throttled.
    pub async fn watch(&self, options: &ListOptions) -> Result<ByteStream, Error> {
        let options = options.clone().watch(true);
        let request = self.collection(self.client.get()).list_options(&options);
        // A watch carries single objects in its events.
        self.accept_one(request).watch().await
    }

    /// Deletes every object matching `list_options` (in the namespace, or
    /// everywhere).
    pub async fn delete_collection(
        &self,
        delete: &DeleteOptions,
        list_options: &ListOptions,
    ) -> Result<(), Error> {
        self.collection(self.client.delete())
            .list_options(list_options)
            .json_body(&delete.body())
            .send_raw()
            .await
            .map(drop)
    }

    /// Deletes one object.
    pub async fn delete(&self, name: &str, options: &DeleteOptions) -> Result<(), Error> {
        self.object(self.client.delete(), name)?
            .json_body(&options.body())
            .send_raw()
            .await
            .map(drop)
    }
}

impl<K: DeserializeOwned> ResourceClient<K> {
    /// Gets one object.
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        let request = self.object(self.client.get(), name)?;
        self.accept_one(request).send().await
    }

    /// Gets one object, `None` when it does not exist.
    pub async fn get_optional(&self, name: &str) -> Result<Option<K>, Error> {
        match self.get(name).await {
            Ok(object) => Ok(Some(object)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Lists one page with `options` (set `limit` and `continue_token` to
    /// page; the pager in clientgo-listwatch does it for you).
    pub async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>, Error>
    where
        K: Object,
    {
        let request = self.collection(self.client.get()).list_options(options);
        let mut list: ObjectList<K> = self.accept_list(request).send().await?;
        list.fill_item_types();
        Ok(list)
    }

    /// Applies a patch to one object.
    pub async fn patch(
        &self,
        name: &str,
        params: &PatchOptions,
        patch: &Patch,
    ) -> Result<K, Error> {
        self.patch_at(name, None, params, patch).await
    }

    /// Applies a patch to one object's status subresource.
    pub async fn patch_status(
        &self,
        name: &str,
        params: &PatchOptions,
        patch: &Patch,
    ) -> Result<K, Error> {
        self.patch_at(name, Some("status"), params, patch).await
    }

    async fn patch_at(
        &self,
        name: &str,
        subresource: Option<&str>,
        params: &PatchOptions,
        patch: &Patch,
    ) -> Result<K, Error> {
        if matches!(patch, Patch::Apply(_)) && params.field_manager.is_none() {
            return Err(RequestError::InvalidPath(
                "server-side apply needs a field manager (PatchOptions::apply)".to_string(),
            )
            .into());
        }
        let mut request = self.object(self.client.patch(), name)?;
        if let Some(subresource) = subresource {
            request = request.subresource(subresource);
        }
        for (key, value) in params.query_pairs() {
            request = request.param(key, value);
        }
        let body = serde_json::to_vec(patch.body()).map_err(RequestError::Encode)?;
        self.accept_one(request.body(body, patch.content_type()))
            .send()
            .await
    }
}

impl<K: DeserializeOwned + Serialize> ResourceClient<K> {
    /// Creates an object in the client's namespace.
    pub async fn create(&self, params: &CreateOptions, object: &K) -> Result<K, Error> {
        if self.resource.is_namespaced() && self.namespace.is_none() {
            return Err(RequestError::InvalidPath(format!(
                "cannot create {} without a namespace",
                self.resource
            ))
            .into());
        }
        let mut request = self.collection(self.client.post());
        for (key, value) in params.query_pairs() {
            request = request.param(key, value);
        }
        request.json_body(object).send().await
    }

    /// Replaces an object (its resourceVersion, when set, must be current:
    /// a stale one is answered 409 Conflict).
    pub async fn replace(
        &self,
        name: &str,
        params: &UpdateOptions,
        object: &K,
    ) -> Result<K, Error> {
        let mut request = self.object(self.client.put(), name)?;
        for (key, value) in params.query_pairs() {
            request = request.param(key, value);
        }
        request.json_body(object).send().await
    }

    /// Replaces an object's status through the status subresource.
    pub async fn replace_status(
        &self,
        name: &str,
        params: &UpdateOptions,
        object: &K,
    ) -> Result<K, Error> {
        let mut request = self.object(self.client.put(), name)?.subresource("status");
        for (key, value) in params.query_pairs() {
            request = request.param(key, value);
        }
        request.json_body(object).send().await
    }
}
