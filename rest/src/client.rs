//! [`RestClient`]: the HTTP client every request goes through, with
//! credentials, throttling, retries and warnings, as client-go's
//! `RESTClient`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::auth::Authenticator;
use crate::auth::ClientCertificateSlot;
use crate::config::{Config, Proxy};
use crate::connection_lanes::{ConnectionLanes, LaneStats};
use crate::error::{ConfigError, Error};
use crate::request::Request;
use crate::throttle::TokenBucket;
use crate::tls::{certified_key, client_tls_config, read_pem};
use crate::tls_file_reload::TlsFileReload;
use crate::warnings::{LogWarnings, WarningHandler, parse_warning_header};

/// A client for one API server: cheap to clone (clones share the
/// connection pool, the rate limiter, the credentials and the counters).
///
/// Every request passes the client-side rate limiter (watches excepted),
/// carries the configured credentials and impersonation headers, and is
/// retried like client-go's (see [`Request`]).
#[derive(Clone)]
pub struct RestClient {
    pub(crate) inner: Arc<ClientInner>,
}

impl std::fmt::Debug for RestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestClient")
            .field("base_url", &self.inner.base_url)
            .field("namespace", &self.inner.namespace)
            .finish_non_exhaustive()
    }
}

pub(crate) struct ClientInner {
    /// The server URL without a trailing slash (may hold a path prefix).
    pub(crate) base_url: String,
    pub(crate) namespace: String,
    /// The HTTP clients: one for short requests, lanes for watches.
    pub(crate) lanes: ConnectionLanes,
    /// The HTTP/1.1-only client WebSocket upgrades go through: the API
    /// server upgrades only HTTP/1.1 connections, and an upgraded
    /// connection leaves the pool, so certificate changes reach the next
    /// one through the shared certificate slot.
    pub(crate) upgrade_http: reqwest::Client,
    /// How long a watch waits for response headers before it is taken as
    /// queued behind its connection's stream limit.
    pub(crate) watch_header_wait: Duration,
    pub(crate) auth: Authenticator,
    pub(crate) throttle: Option<TokenBucket>,
    pub(crate) max_retries: u32,
    pub(crate) timeout: Option<Duration>,
    /// Impersonation headers, added to every request.
    pub(crate) default_headers: HeaderMap,
    warning_handler: Arc<dyn WarningHandler>,
    pub(crate) counters: Counters,
    pub(crate) content_type: crate::ContentType,
    pub(crate) request_metrics: Option<Arc<dyn crate::RequestMetrics>>,
    /// The `host` label of request metrics: every request goes to the
    /// base URL's host, so it is worked out once.
    pub(crate) host_label: String,
    /// Re-reads certificate files, when the configuration names any.
    pub(crate) tls_reload: Option<TlsFileReload>,
}

/// What is needed to build (and rebuild) the reqwest client.
#[derive(Clone)]
struct HttpSettings {
    tls: rustls::ClientConfig,
    user_agent: String,
    connect_timeout: Duration,
    proxy: Proxy,
    http1_only: bool,
    disable_compression: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) throttled: AtomicU64,
    pub(crate) throttle_wait_micros: AtomicU64,
    pub(crate) reauthentications: AtomicU64,
}

/// Counters of what a client has done, for metrics and progress displays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// HTTP requests sent (each retry counts).
    pub requests: u64,
    /// Retries after 429/5xx with `Retry-After` or a broken GET connection.
    pub retries: u64,
    /// Requests that had to wait in the client-side rate limiter.
    pub throttled: u64,
    /// Total time spent waiting in the rate limiter.
    pub throttle_wait: Duration,
    /// Requests retried with fresh credentials after a 401.
    pub reauthentications: u64,
}

impl RestClient {
    /// Builds a client from `config`: reads the TLS material, checks the
    /// credentials, and prepares the connection pool (no connection is
    /// opened yet).
    ///
    /// This crate builds reqwest with rustls but without a default crypto
    /// provider (so aws-lc never enters the tree). reqwest then requires a
    /// process-wide provider for any client built without a preconfigured
    /// TLS setup, including other reqwest clients in the same program, so
    /// this installs ring's as the process default when none is installed.
    pub fn new(config: Config) -> Result<Self, Error> {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let base_url = config.host_url().trim_end_matches('/').to_string();
        reqwest::Url::parse(&base_url).map_err(|e| ConfigError::InvalidField {
            field: "host".to_string(),
            source_name: config.origin.clone(),
            message: format!("{base_url:?} is not a URL: {e}"),
        })?;
        let slot = Arc::new(ClientCertificateSlot::default());
        let mut client_pem = None;
        match (&config.tls.client_certificate, &config.tls.client_key) {
            (Some(certificate), Some(key)) => {
                let certificate = read_pem(certificate, "client-certificate", &config.origin)?;
                let key = read_pem(key, "client-key", &config.origin)?;
                slot.set(Some(certified_key(
                    &certificate,
                    &key,
                    ("client-certificate", "client-key"),
                    &config.origin,
                )?));
                client_pem = Some((certificate, key));
            }
            (None, None) => {}
            (Some(_), None) | (None, Some(_)) => {
                return Err(ConfigError::InvalidField {
                    field: "client-certificate/client-key".to_string(),
                    source_name: config.origin.clone(),
                    message: "a client certificate needs both the certificate and its key"
                        .to_string(),
                }
                .into());
            }
        }
        let tls = client_tls_config(&config, Arc::clone(&slot))?;
        let tls_reload = TlsFileReload::new(
            &config,
            client_pem,
            tls.authority_pem,
            Arc::clone(&slot),
            tls.verifier,
        );
        let settings = HttpSettings {
            tls: tls.config,
            user_agent: config.user_agent.clone(),
            connect_timeout: config.connect_timeout,
            proxy: config.proxy.clone(),
            http1_only: config.tls.disable_http2,
            disable_compression: config.disable_compression,
        };
        // Built once here so a bad setting is an error now; later clients
        // (new lanes, renewed connections) use the same settings and fall
        // back to sharing this one should building ever fail.
        let general = build_http(&settings)?;
        let upgrade_http = build_http(&HttpSettings {
            tls: http1_tls(&settings.tls),
            http1_only: true,
            ..settings.clone()
        })?;
        let fallback = general.clone();
        let lanes = ConnectionLanes::new(general, move || {
            build_http(&settings).unwrap_or_else(|_| fallback.clone())
        });
        let auth = Authenticator::new(&config, &slot)?;
        let default_headers = impersonation_headers(&config)?;
        let throttle = TokenBucket::new(config.qps, config.burst);
        let host_label = crate::metrics::host_label(&base_url);
        Ok(RestClient {
            inner: Arc::new(ClientInner {
                base_url,
                namespace: config.namespace,
                lanes,
                upgrade_http,
                watch_header_wait: config.watch_header_wait,
                auth,
                throttle,
                max_retries: config.max_retries,
                content_type: config.content_type,
                host_label,
                tls_reload,
                request_metrics: config
                    .request_metrics
                    .clone()
                    .or_else(crate::metrics::default_request_metrics),
                timeout: config.timeout,
                default_headers,
                warning_handler: config
                    .warning_handler
                    .unwrap_or_else(|| Arc::new(LogWarnings)),
                counters: Counters::default(),
            }),
        })
    }

    /// Builds a client from [`Config::infer`]: the kubeconfig, else the
    /// in-cluster service account.
    pub fn infer() -> Result<Self, Error> {
        RestClient::new(Config::infer()?)
    }

    /// The encoding responses are asked in ([`Config::content_type`]).
    pub fn content_type(&self) -> crate::ContentType {
        self.inner.content_type
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The namespace of the configuration (kubeconfig context or service
    /// account), `default` otherwise.
    pub fn default_namespace(&self) -> &str {
        &self.inner.namespace
    }

    /// A request with any method.
    pub fn request(&self, method: Method) -> Request {
        Request::new(self.clone(), method)
    }

    /// A GET request.
    pub fn get(&self) -> Request {
        self.request(Method::GET)
    }

    /// A POST request.
    pub fn post(&self) -> Request {
        self.request(Method::POST)
    }

    /// A PUT request.
    pub fn put(&self) -> Request {
        self.request(Method::PUT)
    }

    /// A PATCH request; set the patch's content type with
    /// [`Request::body`] or use a resource client's `patch`.
    pub fn patch(&self) -> Request {
        self.request(Method::PATCH)
    }

    /// A DELETE request.
    pub fn delete(&self) -> Request {
        self.request(Method::DELETE)
    }

    /// How watches are spread over connections: see
    /// [`Config::watch_header_wait`].
    pub fn lane_stats(&self) -> LaneStats {
        self.inner.lanes.stats()
    }

    /// The counters so far.
    pub fn stats(&self) -> ClientStats {
        let counters = &self.inner.counters;
        ClientStats {
            requests: counters.requests.load(Ordering::Relaxed),
            retries: counters.retries.load(Ordering::Relaxed),
            throttled: counters.throttled.load(Ordering::Relaxed),
            throttle_wait: Duration::from_micros(
                counters.throttle_wait_micros.load(Ordering::Relaxed),
            ),
            reauthentications: counters.reauthentications.load(Ordering::Relaxed),
        }
    }
}

impl ClientInner {
    /// Replaces the connection pools, so the next requests open new
    /// connections (and present a new client certificate). Requests and
    /// watches in flight keep their connections until they end.
    pub(crate) fn renew_connections(&self) {
        self.lanes.renew();
        tracing::debug!(base_url = %self.base_url, "TLS credentials changed; new connections from now on");
    }

    /// Hands every `Warning` header of a response to the handler.
    pub(crate) fn handle_warnings(&self, headers: &HeaderMap) {
        for value in headers.get_all(reqwest::header::WARNING) {
            if let Ok(text) = value.to_str() {
                for warning in parse_warning_header(text) {
                    self.warning_handler.handle_warning(&warning);
                }
            }
        }
    }
}

/// `tls` offering HTTP/1.1 alone through ALPN, for connections that are to
/// be upgraded.
fn http1_tls(tls: &rustls::ClientConfig) -> rustls::ClientConfig {
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    tls
}

fn build_http(settings: &HttpSettings) -> Result<reqwest::Client, ConfigError> {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(settings.tls.clone())
        .user_agent(settings.user_agent.clone())
        .connect_timeout(settings.connect_timeout)
        // client-go's dialer keep-alive and HTTP/2 health checks: a dead
        // connection under a watch is noticed within about 45 s over
        // HTTP/2; over HTTP/1.1 (no pings) TCP keepalive probes every 10 s
        // after 30 s of silence and gives up after 3 unanswered, about 60 s.
        .tcp_keepalive(Duration::from_secs(30))
        .tcp_keepalive_interval(Duration::from_secs(10))
        .tcp_keepalive_retries(3)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(15))
        .http2_keep_alive_while_idle(true)
        .pool_idle_timeout(Duration::from_secs(90));
    builder = match &settings.proxy {
        Proxy::FromEnvironment => builder,
        Proxy::None => builder.no_proxy(),
        Proxy::Url(url) => {
            let dial = crate::proxy_url::dial_url(url)
                .map_err(|e| ConfigError::HttpClient(format!("proxy-url: {e}")))?;
            builder.proxy(
                reqwest::Proxy::all(dial.as_str())
                    .map_err(|e| ConfigError::HttpClient(format!("proxy-url {url:?}: {e}")))?,
            )
        }
    };
    if settings.disable_compression {
        builder = builder.no_gzip();
    }
    if settings.http1_only {
        builder = builder.http1_only();
    }
    builder
        .build()
        .map_err(|e| ConfigError::HttpClient(crate::error::describe_http_error(&e)))
}

fn impersonation_headers(config: &Config) -> Result<HeaderMap, Error> {
    let mut headers = HeaderMap::new();
    let impersonate = &config.impersonate;
    let value = |text: &str, name: &str| {
        HeaderValue::from_str(text).map_err(|_| ConfigError::InvalidField {
            field: format!("impersonation {name}"),
            source_name: config.origin.clone(),
            message: format!("{text:?} cannot be sent in an HTTP header"),
        })
    };
    if let Some(user) = &impersonate.user {
        headers.append("impersonate-user", value(user, "user")?);
    }
    if let Some(uid) = &impersonate.uid {
        headers.append("impersonate-uid", value(uid, "uid")?);
    }
    for group in &impersonate.groups {
        headers.append("impersonate-group", value(group, "group")?);
    }
    for (key, values) in &impersonate.extra {
        // Header names are case-insensitive; keys are percent-encoded as
        // the API server expects (it decodes them).
        let name = format!("impersonate-extra-{}", percent_encode_header_key(key));
        let name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| ConfigError::InvalidField {
                field: format!("impersonation extra {key:?}"),
                source_name: config.origin.clone(),
                message: "not usable in a header name".to_string(),
            })?;
        for extra in values {
            headers.append(name.clone(), value(extra, "extra value")?);
        }
    }
    Ok(headers)
}

/// Percent-encodes what is not a token character in a header name, as
/// client-go does for `Impersonate-Extra-` keys.
fn percent_encode_header_key(key: &str) -> String {
    let mut encoded = String::with_capacity(key.len());
    for byte in key.bytes() {
        let plain = byte.is_ascii_alphanumeric()
            || matches!(
                byte,
                b'!' | b'#'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        if plain {
            encoded.push(char::from(byte.to_ascii_lowercase()));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_encoded_for_header_names() {
        assert_eq!(
            percent_encode_header_key("example.com/Scopes"),
            "example.com%2Fscopes"
        );
    }

    #[test]
    fn a_bad_host_is_a_config_error() {
        let error = RestClient::new(Config::new("https://exa mple")).unwrap_err();
        assert!(matches!(error, Error::Config(_)), "{error}");
    }
}
