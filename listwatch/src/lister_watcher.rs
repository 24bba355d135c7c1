//! [`ListerWatcher`]: what a reflector needs from the API server, and
//! [`ResourceListerWatcher`], the implementation over clientgo-rest for
//! typed, dynamic and metadata-only resources.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clientgo_apimachinery::{
    ApiResource, DynamicObject, ListOptions, Object, ObjectList, PartialObjectMetadata,
};
use clientgo_protobuf::Codec;
use clientgo_rest::{
    ContentType, ResourceClient, RestClient, client::ByteStream, config::PROTOBUF_ACCEPT,
};
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::event_stream::EventStream;
use crate::list_decoder::ListDecoder;
use crate::protobuf_list_decoder::ProtobufListDecoder;
use crate::watch_decoder::DEFAULT_MAX_FRAME_BYTES;
use crate::watch_stream::WatchStream;

/// Lists one page and opens watches of one resource (client-go's
/// `ListerWatcher`).
///
/// `list` returns one page for `options` (limit, continue and
/// resourceVersion as given; the [`Pager`](crate::Pager) follows continue
/// tokens). `watch` opens a watch with `options` (the implementation sets
/// `watch=true`) and returns its events as an [`EventStream`]: HTTP for
/// [`ResourceListerWatcher`], memory for a fake (clientgo-testing's
/// `FakeListerWatcher`, as client-go's `FakeControllerSource`).
/// Implementations must be cheap to clone into tasks.
pub trait ListerWatcher<K>: Send + Sync {
    /// The events of one open watch.
    type Watch: EventStream<K> + 'static;

    /// Lists one page.
    fn list(
        &self,
        options: &ListOptions,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send;

    /// Opens a watch.
    fn watch(
        &self,
        options: &ListOptions,
    ) -> impl Future<Output = Result<Self::Watch, Error>> + Send;

    /// Whether the server side supports watch-list (`sendInitialEvents`).
    /// `true` unless known otherwise, as in client-go; a reflector falls
    /// back to list+watch when the server refuses it anyway.
    fn supports_watch_list(&self) -> bool {
        true
    }

    /// A name for logs: the resource, and the namespace if scoped.
    fn describe(&self) -> String;

    /// The `apiVersion` and `kind` of the objects this source serves, when
    /// it knows them and `K` does not fix them (a dynamic resource's, from
    /// its `ApiResource`). The reflector skips watch events whose object
    /// names another type; `None` (the default) leaves it with `K`'s
    /// [`fixed_type`](Object::fixed_type).
    fn object_type(&self) -> Option<(String, String)> {
        None
    }

    /// What this source is, as precisely as it can say: the server, the
    /// resource, the namespace and the selectors every request carries.
    /// Two sources with the same identity serve the same objects, so a
    /// cache saved from one may be resumed from the other (warm restart);
    /// anything that changes what is listed must change it. The default is
    /// [`describe`](Self::describe).
    fn identity(&self) -> String {
        self.describe()
    }
}

/// A hook that adjusts the options of every list and watch (label and field
/// selectors, typically), as client-go's `NewFilteredListWatchFromClient`.
pub type TweakListOptions = Arc<dyn Fn(&mut ListOptions) + Send + Sync>;

/// A [`ListerWatcher`] over a [`ResourceClient`]: typed k8s-openapi
/// objects, [`DynamicObject`]s or [`PartialObjectMetadata`].
pub struct ResourceListerWatcher<K> {
    client: ResourceClient<K>,
    tweak: Option<TweakListOptions>,
    max_frame_bytes: usize,
    watch_list: bool,
    skip_managed_fields: bool,
    /// Set once the server answered a protobuf request with JSON, 406 or
    /// 415: JSON from then on (shared by clones).
    json_only: Arc<AtomicBool>,
}

impl<K> Clone for ResourceListerWatcher<K> {
    fn clone(&self) -> Self {
        ResourceListerWatcher {
            client: self.client.clone(),
            tweak: self.tweak.clone(),
            max_frame_bytes: self.max_frame_bytes,
            watch_list: self.watch_list,
            skip_managed_fields: self.skip_managed_fields,
            json_only: self.json_only.clone(),
        }
    }
}

impl<K> std::fmt::Debug for ResourceListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceListerWatcher")
            .field("client", &self.client)
            .field("tweak", &self.tweak.is_some())
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("watch_list", &self.watch_list)
            .field("skip_managed_fields", &self.skip_managed_fields)
            .finish()
    }
}

impl<K> ResourceListerWatcher<K> {
    /// Lists and watches through `client`.
    pub fn new(client: ResourceClient<K>) -> Self {
        ResourceListerWatcher {
            client,
            tweak: None,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            watch_list: true,
            skip_managed_fields: false,
            json_only: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Leaves `metadata.managedFields` out of every listed and watched
    /// object before decoding it, so it is never built: for a caller that
    /// drops managed fields anyway (the informer factory's
    /// `keep_managed_fields(false)` sets this and keeps its transform as a
    /// backstop). Saves decode time and the heap holes the dropped trees
    /// would leave.
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.skip_managed_fields = skip;
        self
    }

    /// Adjusts the options of every request with `tweak`.
    #[must_use]
    pub fn tweak_list_options(
        mut self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// Refuses watch events and list items larger than `bytes` (default 16
    /// MiB).
    #[must_use]
    pub fn max_frame_bytes(mut self, bytes: usize) -> Self {
        self.max_frame_bytes = bytes;
        self
    }

    /// Declares whether the server supports watch-list.
    #[must_use]
    pub fn watch_list_supported(mut self, supported: bool) -> Self {
        self.watch_list = supported;
        self
    }

    /// The same lister-watcher (client, tweak, limits, and the JSON
    /// fallback it learned, shared), decoding objects as `E` instead.
    pub fn retyped<E>(self) -> ResourceListerWatcher<E> {
        ResourceListerWatcher {
            client: self.client.retyped(),
            tweak: self.tweak,
            max_frame_bytes: self.max_frame_bytes,
            watch_list: self.watch_list,
            skip_managed_fields: self.skip_managed_fields,
            json_only: self.json_only,
        }
    }

    /// The resource client.
    pub fn client(&self) -> &ResourceClient<K> {
        &self.client
    }

    fn options(&self, options: &ListOptions) -> ListOptions {
        let mut options = options.clone();
        if let Some(tweak) = &self.tweak {
            tweak(&mut options);
        }
        options
    }
}

impl<K> ResourceListerWatcher<K>
where
    K: DeserializeOwned + Object + Send + 'static,
{
    /// Whether lists and watches ask for protobuf: the client is
    /// configured for it ([`ContentType::Protobuf`]), `K` has a protobuf
    /// codec, and the server has not answered one of them in JSON.
    pub fn uses_protobuf(&self) -> bool {
        self.protobuf_codec().is_some()
    }

    fn protobuf_codec(&self) -> Option<Codec<K>> {
        if self.client.client().content_type() != ContentType::Protobuf
            || self.json_only.load(Ordering::Relaxed)
        {
            return None;
        }
        clientgo_protobuf::codec::<K>()
    }

    fn fall_back_to_json(&self, why: &str) {
        if !self.json_only.swap(true, Ordering::Relaxed) {
            tracing::info!(resource = %self.describe(), "{why}; using JSON for this resource from now on");
        }
    }

    async fn json_list(&self, mut body: ByteStream) -> Result<ObjectList<K>, Error> {
        let mut decoder = ListDecoder::<K>::new(self.max_frame_bytes)
            .skip_managed_fields(self.skip_managed_fields);
        while let Some(chunk) = body.next_chunk().await? {
            decoder
                .push(&chunk)
                .map_err(|source| frame_error(&body, source))?;
        }
        let mut list = decoder
            .finish()
            .map_err(|source| frame_error(&body, source))?;
        // The API server leaves apiVersion and kind out of the items of a
        // list of a built-in type; dynamic items get the list's, as
        // client-go's unstructured decoding gives them.
        list.fill_item_types();
        Ok(list)
    }

    async fn protobuf_list(
        &self,
        mut body: ByteStream,
        codec: Codec<K>,
    ) -> Result<ObjectList<K>, Error> {
        let mut decoder = ProtobufListDecoder::new(codec, self.max_frame_bytes)
            .skip_managed_fields(self.skip_managed_fields);
        while let Some(chunk) = body.next_chunk().await? {
            decoder
                .push(&chunk)
                .map_err(|source| frame_error(&body, source))?;
        }
        decoder
            .finish()
            .map_err(|source| frame_error(&body, source))
    }
}

fn frame_error(body: &ByteStream, source: crate::FrameError) -> Error {
    Error::Frame {
        url: body.url().to_string(),
        source,
    }
}

/// Whether an answer is protobuf (by its `Content-Type`).
fn is_protobuf(body: &ByteStream) -> bool {
    body.headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with(clientgo_apimachinery::PROTOBUF_MEDIA_TYPE))
}

/// 406 Not Acceptable or 415 Unsupported Media Type: the server will not
/// speak protobuf for this resource.
fn refuses_protobuf(error: &clientgo_rest::Error) -> bool {
    matches!(error, clientgo_rest::Error::Api(status) if status.code == 406 || status.code == 415)
}

impl ResourceListerWatcher<DynamicObject> {
    /// Lists and watches any resource as [`DynamicObject`]s.
    pub fn dynamic(client: RestClient, resource: ApiResource, namespace: Option<&str>) -> Self {
        ResourceListerWatcher::new(ResourceClient::dynamic(client, resource, namespace))
    }
}

impl ResourceListerWatcher<PartialObjectMetadata> {
    /// Lists and watches any resource's metadata only.
    pub fn metadata(client: RestClient, resource: ApiResource, namespace: Option<&str>) -> Self {
        ResourceListerWatcher::new(ResourceClient::metadata(client, resource, namespace))
    }
}

impl<K> ListerWatcher<K> for ResourceListerWatcher<K>
where
    K: DeserializeOwned + Object + Send + 'static,
{
    type Watch = WatchStream<K>;

    /// Lists one page, decoding items as the body arrives: only decoded
    /// objects and one item's bytes are held, never the page's whole body.
    /// Asks for protobuf when the client is configured for it and `K` has
    /// a protobuf codec; a JSON answer, 406 or 415 turns this source to
    /// JSON for good. Dynamic items without `apiVersion` and `kind` get the
    /// list's.
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>, Error> {
        let options = self.options(options);
        let body = match self.protobuf_codec() {
            Some(codec) => {
                match self
                    .client
                    .list_stream_accepting(&options, PROTOBUF_ACCEPT)
                    .await
                {
                    Ok(body) if is_protobuf(&body) => return self.protobuf_list(body, codec).await,
                    Ok(body) => {
                        self.fall_back_to_json("the list was answered in JSON");
                        body
                    }
                    Err(error) if refuses_protobuf(&error) => {
                        self.fall_back_to_json("the list was refused in protobuf");
                        self.client.list_stream(&options).await?
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            None => self.client.list_stream(&options).await?,
        };
        self.json_list(body).await
    }

    /// Opens a watch, asking for protobuf as [`list`](Self::list) does.
    async fn watch(&self, options: &ListOptions) -> Result<WatchStream<K>, Error> {
        let options = self.options(options);
        let (api_version, kind) = self.client.received_type();
        let body = match self.protobuf_codec() {
            Some(codec) => match self.client.watch_accepting(&options, PROTOBUF_ACCEPT).await {
                Ok(body) if is_protobuf(&body) => {
                    return Ok(WatchStream::protobuf(body, codec, self.max_frame_bytes)
                        .expect_type(api_version, kind)
                        .skip_managed_fields(self.skip_managed_fields));
                }
                Ok(body) => {
                    self.fall_back_to_json("the watch was answered in JSON");
                    body
                }
                Err(error) if refuses_protobuf(&error) => {
                    self.fall_back_to_json("the watch was refused in protobuf");
                    self.client.watch(&options).await?
                }
                Err(error) => return Err(error.into()),
            },
            None => self.client.watch(&options).await?,
        };
        Ok(WatchStream::new(body, self.max_frame_bytes)
            .skip_managed_fields(self.skip_managed_fields)
            .expect_type(api_version, kind))
    }

    fn supports_watch_list(&self) -> bool {
        self.watch_list
    }

    fn object_type(&self) -> Option<(String, String)> {
        let (api_version, kind) = self.client.received_type();
        Some((api_version.to_string(), kind.to_string()))
    }

    fn describe(&self) -> String {
        match self.client.namespace() {
            Some(namespace) => format!("{} in {namespace}", self.client.resource()),
            None => self.client.resource().to_string(),
        }
    }

    /// The server's URL, the resource's path and the selectors the tweak
    /// sets (label, field), as one line.
    fn identity(&self) -> String {
        let selectors = self.options(&ListOptions::default());
        format!(
            "{} {} labels={:?} fields={:?}",
            self.client.client().base_url(),
            self.describe(),
            selectors.label_selector.unwrap_or_default(),
            selectors.field_selector.unwrap_or_default(),
        )
    }
}

/// What makes a `K` read back from a snapshot what a lister-watcher's
/// decoding makes: a `Compact<T, Protobuf>` entry gets `T`'s message
/// decoder from `K`'s protobuf codec (whatever a client's content type now
/// is); `None` for a type whose objects need nothing.
pub fn restore_fn<K: 'static>() -> Option<fn(&mut K)> {
    clientgo_protobuf::codec::<K>().map(|codec| codec.restore)
}
