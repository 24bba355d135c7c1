//! [`Request`]: client-go's request builder. Path parts are checked as path
//! segments; problems are kept and reported when the request is sent.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use clientgo_apimachinery::{ApiResource, ListOptions, check_path_segment};
use futures_core::Stream;
use http_body::Body as _;
use reqwest::Method;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::error::{Error, RequestError};
use crate::client::inner::ClientInner;
use crate::client::response::decode;
use crate::client::send::{Kind, Prepared, Sent};
use crate::transport::connection_lanes::LaneTicket;
use crate::transport::websocket::{
    UPGRADE_TIMEOUT, UpgradeError, Upgraded, finish_upgrade, new_key,
};

/// One request being built. Obtain it from
/// [`RestClient::get`](crate::RestClient::get) and friends.
///
/// The URL is `<host>[<group-version path>][/namespaces/<ns>]/<resource>
/// [/<name>][/<subresource>]`, or an absolute path. Each part may be set
/// once and must be a valid path segment; a mistake is remembered and
/// returned by the method that sends the request, as client-go does.
///
/// Sending: the request waits in the client's rate limiter (except
/// [`watch`](Self::watch)), gets credentials, and is retried when the
/// server answers 429 or 5xx with an integer `Retry-After` (up to
/// `max_retries`, 10 by default, each retry passing the limiter again), when
/// a GET's connection breaks before an answer (after 1 s), and once after a
/// 401 when fresh credentials may help (token file, exec plugin). The error
/// returned is the last attempt's.
#[derive(Debug)]
#[must_use = "a request does nothing until it is sent"]
pub struct Request {
    client: Arc<ClientInner>,
    method: Method,
    path: RequestPath,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Option<(Bytes, HeaderValue)>,
    timeout: Option<Duration>,
    max_retries: Option<u32>,
    error: Option<RequestError>,
}

#[derive(Debug, Default)]
struct RequestPath {
    absolute: Option<String>,
    group_version: Option<String>,
    namespace: Option<String>,
    namespace_set: bool,
    resource: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

/// A 2xx answer, read whole.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The URL requested.
    pub url: String,
}

impl RawResponse {
    /// Decodes the body as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        decode(&self.body, &self.url)
    }
}

/// A 2xx answer whose body is read as it arrives (a watch, logs).
///
/// A [`Stream`] of the body's chunks as the network delivered them, ending
/// at the end of the body; a broken connection is one [`Error::Http`].
/// Dropping it closes the request (and gives a watch's place on its
/// connection lane back).
#[derive(Debug)]
pub struct ByteStream {
    body: reqwest::Body,
    headers: HeaderMap,
    version: reqwest::Version,
    url: String,
    /// A watch's place on its connection lane, given back when dropped.
    _lane: Option<LaneTicket>,
}

impl ByteStream {
    fn new(response: reqwest::Response, url: String, lane: Option<LaneTicket>) -> Self {
        let headers = response.headers().clone();
        let version = response.version();
        let body = http::Response::<reqwest::Body>::from(response).into_body();
        ByteStream {
            body,
            headers,
            version,
            url,
            _lane: lane,
        }
    }

    /// The next chunk of the body as the network delivered it; `None` at
    /// the end. A broken connection is [`Error::Http`]. Cancel-safe.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, Error> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx))
            .await
            .transpose()
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The HTTP version the answer came over (`HTTP/2.0` when the
    /// connection negotiated HTTP/2).
    pub fn http_version(&self) -> reqwest::Version {
        self.version
    }

    /// The URL requested.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Stream for ByteStream {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // Frames other than data (trailers) are skipped.
        loop {
            let this = &mut *self;
            let frame = match std::task::ready!(Pin::new(&mut this.body).poll_frame(cx)) {
                None => return Poll::Ready(None),
                Some(Err(source)) => {
                    return Poll::Ready(Some(Err(Error::Http {
                        url: this.url.clone(),
                        source,
                    })));
                }
                Some(Ok(frame)) => frame,
            };
            if let Ok(data) = frame.into_data() {
                return Poll::Ready(Some(Ok(data)));
            }
        }
    }
}

impl Request {
    pub(crate) fn new(client: Arc<ClientInner>, method: Method) -> Self {
        let headers = client.default_headers.clone();
        Request {
            client,
            method,
            path: RequestPath::default(),
            query: Vec::new(),
            headers,
            body: None,
            timeout: None,
            max_retries: None,
            error: None,
        }
    }

    fn fail(&mut self, error: RequestError) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    fn set_segment(mut self, what: &'static str, value: &str, slot: SegmentSlot) -> Self {
        if let Err(problem) = check_path_segment(value) {
            self.fail(RequestError::InvalidPath(format!(
                "{what} {value:?}: {problem}"
            )));
            return self;
        }
        let target = match slot {
            SegmentSlot::Namespace => &mut self.path.namespace,
            SegmentSlot::Resource => &mut self.path.resource,
            SegmentSlot::Name => &mut self.path.name,
            SegmentSlot::Subresource => &mut self.path.subresource,
        };
        if let Some(previous) = target {
            let message = format!("{what} set twice (already {previous:?}, then {value:?})");
            self.fail(RequestError::InvalidPath(message));
            return self;
        }
        *target = Some(value.to_string());
        self
    }

    /// Sets the path from an absolute path (`/version`, `/apis`), instead
    /// of group version, namespace, resource and name.
    pub fn abs_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        if !path.starts_with('/') || path.split('/').any(|s| s == "." || s == "..") {
            self.fail(RequestError::InvalidPath(format!(
                "absolute path {path:?} must start with / and hold no . or .. segments"
            )));
        }
        self.path.absolute = Some(path);
        self
    }

    /// Sets the group-version prefix (`/api/v1`, `/apis/apps/v1`).
    pub fn group_version_path(mut self, prefix: impl Into<String>) -> Self {
        self.path.group_version = Some(prefix.into());
        self
    }

    /// Sets the group-version prefix and the resource from `resource`.
    pub fn api_resource(self, resource: &ApiResource) -> Self {
        match resource.group_version_path() {
            Ok(prefix) => self.group_version_path(prefix).resource(resource.plural()),
            Err(error) => {
                let mut request = self;
                request.fail(RequestError::Path(error));
                request
            }
        }
    }

    /// Sets the namespace; an empty one means none (all namespaces, or a
    /// cluster-scoped resource).
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.path.namespace_set = true;
        if namespace.is_empty() {
            return self;
        }
        self.set_segment("namespace", namespace, SegmentSlot::Namespace)
    }

    /// Sets the resource (plural, lower case: `pods`).
    pub fn resource(self, resource: &str) -> Self {
        self.set_segment("resource", resource, SegmentSlot::Resource)
    }

    /// Sets the object's name; it must not be empty.
    pub fn name(mut self, name: &str) -> Self {
        if name.is_empty() {
            self.fail(RequestError::InvalidPath(
                "the object name is empty".to_string(),
            ));
            return self;
        }
        self.set_segment("name", name, SegmentSlot::Name)
    }

    /// Sets the subresource (`status`, `scale`).
    pub fn subresource(self, subresource: &str) -> Self {
        self.set_segment("subresource", subresource, SegmentSlot::Subresource)
    }

    /// Adds list options as query parameters (selectors, resourceVersion,
    /// limit, continue, watch, timeoutSeconds...).
    pub fn list_options(mut self, options: &ListOptions) -> Self {
        for (key, value) in options.to_query_pairs() {
            self.query.push((key.to_string(), value));
        }
        self
    }

    /// Adds one query parameter.
    pub fn param(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((key.into(), value.into()));
        self
    }

    /// Sets a header (replacing one of the same name).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let parsed = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|name| {
                HeaderValue::from_str(value)
                    .map(|value| (name, value))
                    .map_err(|e| e.to_string())
            });
        match parsed {
            Ok((name, value)) => {
                self.headers.insert(name, value);
            }
            Err(message) => self.fail(RequestError::InvalidHeader {
                name: name.to_string(),
                message,
            }),
        }
        self
    }

    /// Sends `value` encoded as JSON (`Content-Type: application/json`).
    pub fn json_body<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => {
                self.body = Some((
                    Bytes::from(bytes),
                    HeaderValue::from_static("application/json"),
                ));
            }
            Err(error) => self.fail(RequestError::Encode(error)),
        }
        self
    }

    /// Sends these bytes with this content type (a patch, say). The body is
    /// kept, so the request can be retried.
    pub fn body(mut self, body: impl Into<Bytes>, content_type: &'static str) -> Self {
        self.body = Some((body.into(), HeaderValue::from_static(content_type)));
        self
    }

    /// Limits this request to `timeout` (also sent as the `timeout` query
    /// parameter so the server stops too). For a stream, it limits the whole
    /// stream.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Overrides the client's retry limit for this request.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// The URL this request goes to, or the first mistake in building it.
    pub fn url(&self) -> Result<String, Error> {
        if let Some(error) = &self.error {
            return Err(RequestError::InvalidPath(error.to_string()).into());
        }
        let mut url = self.client.base_url.clone();
        let path = &self.path;
        match &path.absolute {
            Some(absolute) => url.push_str(absolute),
            None => {
                if path.group_version.is_none() && path.resource.is_none() {
                    return Err(RequestError::InvalidPath(
                        "no path: set a resource or an absolute path".to_string(),
                    )
                    .into());
                }
                if let Some(prefix) = &path.group_version {
                    url.push_str(prefix);
                }
                if let Some(namespace) = &path.namespace {
                    url.push_str("/namespaces/");
                    url.push_str(namespace);
                }
                for part in [&path.resource, &path.name, &path.subresource]
                    .into_iter()
                    .flatten()
                {
                    url.push('/');
                    url.push_str(part);
                }
            }
        }
        // client-go's preflight rules.
        if self.method == Method::POST && path.namespace_set && path.namespace.is_none() {
            return Err(RequestError::InvalidPath(
                "a POST with an explicitly empty namespace".to_string(),
            )
            .into());
        }
        if !self.query.is_empty() || self.timeout.is_some() {
            url.push('?');
            // form_urlencoded appends to the URL string in place.
            let start = url.len();
            let mut serializer = form_urlencoded::Serializer::for_suffix(url, start);
            for (key, value) in &self.query {
                serializer.append_pair(key, value);
            }
            if let Some(timeout) = self.timeout {
                serializer.append_pair("timeout", &go_duration(timeout));
            }
            url = serializer.finish();
        }
        Ok(url)
    }

    /// Sends the request and decodes a 2xx body as `T`.
    pub async fn send<T: DeserializeOwned>(self) -> Result<T, Error> {
        self.send_raw().await?.json()
    }

    /// Sends the request and returns a 2xx answer whole.
    pub async fn send_raw(self) -> Result<RawResponse, Error> {
        let (response, url, _) = self.execute(Kind::Short).await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(|source| Error::Http {
            url: url.clone(),
            source,
        })?;
        Ok(RawResponse {
            status,
            headers,
            body,
            url,
        })
    }

    /// Sends the request and returns the body as a stream of chunks, for
    /// decoding as it arrives (throttled, retried and timed like any
    /// request: the client's timeout covers reading the whole body).
    pub async fn stream(self) -> Result<ByteStream, Error> {
        let (response, url, lane) = self.execute(Kind::Short).await?;
        Ok(ByteStream::new(response, url, lane))
    }

    /// Sends a watch and returns its body as a stream of chunks. Watches are
    /// not throttled (client-go's rule): a relist storm is bounded by the
    /// reflector's backoff, not by the rate limiter. Add `watch=true` through
    /// [`list_options`](Self::list_options).
    ///
    /// Watches never share a connection with other requests, and never
    /// queue forever behind a connection's HTTP/2 stream limit: see
    /// [`Config::watch_header_wait`](crate::Config::watch_header_wait).
    pub async fn watch(self) -> Result<ByteStream, Error> {
        let (response, url, lane) = self.execute(Kind::Watch).await?;
        Ok(ByteStream::new(response, url, lane))
    }

    /// The request as the send steps take it, or the first mistake made
    /// while building it.
    fn prepare(mut self) -> Result<(Arc<ClientInner>, Prepared), Error> {
        // The first mistake made while building, as it was (url() can
        // only describe it).
        if let Some(error) = self.error.take() {
            return Err(error.into());
        }
        let url = self.url()?;
        let prepared = Prepared {
            method: self.method,
            url,
            headers: self.headers,
            body: self.body,
            timeout: self.timeout,
            max_retries: self.max_retries,
        };
        Ok((self.client, prepared))
    }

    /// Sends an HTTP/1.1 connection upgrade through the client's send
    /// steps; a 101 answer is a success.
    async fn send_upgrade(self) -> Result<Sent, Error> {
        self.execute(Kind::Upgrade).await
    }

    /// Sends the request through the client's send steps.
    async fn execute(self, kind: Kind) -> Result<Sent, Error> {
        let (client, prepared) = self.prepare()?;
        client.execute(prepared, kind).await
    }

    /// Sends the request as a WebSocket upgrade offering `protocols` (in
    /// order of preference, in one `Sec-WebSocket-Protocol` header, as
    /// client-go does), and returns the socket once the server switched.
    ///
    /// The request should be a `GET`. It is not throttled and has no time
    /// limit but its own ([`timeout`](Self::timeout)); a 401 is retried
    /// once with fresh credentials and a 429 or 5xx with `Retry-After` as
    /// any request, all within [`UPGRADE_TIMEOUT`]. An answer other than
    /// 101 is [`Error::Api`] with the server's Status when it is an error,
    /// else [`UpgradeError::NotSwitched`].
    ///
    /// ```no_run
    /// # async fn run(client: clientgo_rest::RestClient) -> Result<(), clientgo_rest::Error> {
    /// use clientgo_rest::tools::remotecommand::V5_CHANNEL_PROTOCOL;
    ///
    /// let upgraded = client
    ///     .get()
    ///     .abs_path("/api/v1/namespaces/default/pods/web-0/exec")
    ///     .param("command", "date")
    ///     .param("stdout", "true")
    ///     .websocket(&[V5_CHANNEL_PROTOCOL])
    ///     .await?;
    /// println!("speaking {}", upgraded.protocol);
    /// # Ok(()) }
    /// ```
    pub async fn websocket(mut self, protocols: &[&str]) -> Result<Upgraded, Error> {
        let key = new_key();
        self = self
            .header(header::CONNECTION.as_str(), "Upgrade")
            .header(header::UPGRADE.as_str(), "websocket")
            .header(header::SEC_WEBSOCKET_VERSION.as_str(), "13")
            .header(header::SEC_WEBSOCKET_KEY.as_str(), &key)
            .header(
                header::SEC_WEBSOCKET_PROTOCOL.as_str(),
                &protocols.join(", "),
            );
        let url = self.url()?;
        let (response, url, _) = tokio::time::timeout(UPGRADE_TIMEOUT, self.send_upgrade())
            .await
            .map_err(|_| UpgradeError::TimedOut { url })??;
        Ok(finish_upgrade(response, url, &key, protocols).await?)
    }
}

#[derive(Clone, Copy)]
enum SegmentSlot {
    Namespace,
    Resource,
    Name,
    Subresource,
}

/// A duration as Go's `time.ParseDuration` reads it, the form the API
/// server expects in `timeout=`: whole seconds as `30s`, else milliseconds.
fn go_duration(duration: Duration) -> String {
    let millis = duration.as_millis().max(1);
    if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}
