//! [`RestClient`]: the HTTP client every request goes through, with
//! credentials, throttling, retries and warnings, as client-go's
//! `RESTClient`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::auth::authenticator::Authenticator;
use crate::client::error::Error;
use crate::client::inner::{ClientInner, Counters};
use crate::client::request::Request;
use crate::client::throttle::TokenBucket;
use crate::config::content_type::ContentType;
use crate::config::error::ConfigError;
use crate::config::pem::{certified_key, read_pem};
use crate::config::rest_config::Config;
use crate::config::warnings::LogWarnings;
use crate::metrics::request_metrics::{RequestMetrics, default_request_metrics, host_label};
use crate::transport::client_certificate::ClientCertificateSlot;
use crate::transport::connection_lanes::{ConnectionLanes, LaneStats};
use crate::transport::http::{HttpSettings, build_http, http1_tls, install_crypto_provider};
use crate::transport::tls::client_tls_config;
use crate::transport::tls_reload::TlsFileReload;

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
        std::fmt::Debug::fmt(&self.inner, f)
    }
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
        install_crypto_provider();
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
        let settings = HttpSettings::new(&config, tls.config);
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
        let host_label = host_label(&base_url);
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
                    .or_else(default_request_metrics)
                    .map(OnceLock::from)
                    .unwrap_or_default(),
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
    pub fn content_type(&self) -> ContentType {
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
        Request::new(Arc::clone(&self.inner), method)
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

    /// Reports this client's requests (and its clones') to `metrics` from
    /// now on, when it reports nowhere yet: neither
    /// [`Config::request_metrics`] nor a process default
    /// ([`set_default_request_metrics`](crate::metrics::set_default_request_metrics))
    /// was set when it was built. Returns `false`, changing nothing, when
    /// it already reports somewhere (the first destination stays, as
    /// client-go registers its metrics once).
    pub fn report_requests_to(&self, metrics: Arc<dyn RequestMetrics>) -> bool {
        self.inner.request_metrics.set(metrics).is_ok()
    }

    /// Whether this client reports its requests somewhere.
    pub fn reports_requests(&self) -> bool {
        self.inner.request_metrics.get().is_some()
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

    struct Nowhere;

    impl RequestMetrics for Nowhere {
        fn request_result(&self, _: &str, _: &str, _: &str) {}
        fn request_latency(&self, _: &str, _: &str, _: Duration) {}
        fn rate_limiter_latency(&self, _: &str, _: &str, _: Duration) {}
    }

    #[test]
    fn metrics_are_attached_once_and_shared_by_clones() {
        let configured =
            RestClient::new(Config::new("https://127.0.0.1:1").request_metrics(Arc::new(Nowhere)))
                .unwrap();
        assert!(configured.reports_requests());
        assert!(!configured.report_requests_to(Arc::new(Nowhere)));

        let client = RestClient::new(Config::new("https://127.0.0.1:1")).unwrap();
        // No test in this crate sets a process default.
        assert!(!client.reports_requests());
        let clone = client.clone();
        assert!(clone.report_requests_to(Arc::new(Nowhere)));
        assert!(client.reports_requests());
        assert!(!client.report_requests_to(Arc::new(Nowhere)));
    }
}
