//! [`Config`]: where the API server is and how to talk to it, as client-go's
//! `rest.Config`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::content_type::ContentType;
use crate::config::credentials::Credentials;
use crate::config::exec::ExecConfig;
use crate::config::pem::PemSource;
use crate::config::secret::Secret;
use crate::config::warnings::WarningHandler;
use crate::metrics::request_metrics::RequestMetrics;

/// How often a bearer token file is read again, so a rotated token (a
/// projected service-account token) is picked up; client-go's period.
pub const TOKEN_FILE_REFRESH: Duration = Duration::from_secs(60);

/// Retries of a request answered 429 or 5xx with `Retry-After`, by default;
/// client-go's number.
pub const DEFAULT_MAX_RETRIES: u32 = 10;

/// How long a watch waits for response headers before it is taken as
/// queued behind its connection's HTTP/2 stream limit (see
/// [`Config::watch_header_wait`]).
pub const DEFAULT_WATCH_HEADER_WAIT: Duration = Duration::from_secs(2);

/// client-go's interval between checks of the client certificate, key and
/// certificate authority files (`CertCallbackRefreshDuration` and the
/// certificate authority's `caRefreshDuration`); see
/// [`Config::tls_file_reload_interval`].
pub const DEFAULT_TLS_FILE_RELOAD_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// TLS settings, as client-go's `TLSClientConfig`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// Skip verifying the server's certificate. Only when explicitly set;
    /// the client logs a warning when it is built with it.
    pub insecure_skip_verify: bool,
    /// Verify the server's certificate against this name instead of the
    /// URL's host.
    pub server_name: Option<String>,
    /// The certificate authorities to trust; without one, the system's
    /// bundle (`SSL_CERT_FILE`, then the usual distribution paths).
    pub certificate_authority: Option<PemSource>,
    /// The client certificate (chain) to present.
    pub client_certificate: Option<PemSource>,
    /// The client certificate's private key. Its `Debug` never shows data.
    pub client_key: Option<PemSource>,
    /// Offer HTTP/1.1 only (no HTTP/2 through ALPN). Off by default: with
    /// HTTP/2 every request and watch to a server shares one connection.
    pub disable_http2: bool,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("server_name", &self.server_name)
            .field("certificate_authority", &self.certificate_authority)
            .field("client_certificate", &self.client_certificate)
            .field(
                "client_key",
                &self.client_key.as_ref().map(|key| match key {
                    PemSource::Data(_) => "Data(<redacted>)".to_string(),
                    PemSource::File(path) => format!("File({})", path.display()),
                }),
            )
            .field("disable_http2", &self.disable_http2)
            .finish()
    }
}

/// Acting as another user: the `Impersonate-*` headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impersonation {
    /// `Impersonate-User`.
    pub user: Option<String>,
    /// `Impersonate-Uid`.
    pub uid: Option<String>,
    /// One `Impersonate-Group` header each.
    pub groups: Vec<String>,
    /// `Impersonate-Extra-<key>` headers, one per value.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonation {
    /// Whether nothing is impersonated.
    pub fn is_empty(&self) -> bool {
        self.user.is_none() && self.uid.is_none() && self.groups.is_empty() && self.extra.is_empty()
    }
}

/// Which proxy requests go through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Proxy {
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` from the
    /// environment, as Go's `http.ProxyFromEnvironment` (the default).
    #[default]
    FromEnvironment,
    /// This proxy URL (a kubeconfig cluster's `proxy-url`).
    Url(String),
    /// No proxy at all.
    None,
}

/// Where the API server is and how to talk to it: client-go's `rest.Config`.
///
/// Build one with [`Config::new`] and the builder methods, or load it with
/// [`Config::infer`], [`Config::from_kubeconfig`] or
/// [`Config::in_cluster`]. `Debug` and `Display` redact every credential.
#[derive(Clone)]
pub struct Config {
    /// The server's URL: scheme, host, port, and an optional path prefix
    /// (for API servers behind a proxy that serves them under a path) kept
    /// before `/api` and `/apis`. A host without a scheme gets `https://`
    /// when any TLS setting is given, else `http://`, as client-go does.
    pub host: String,
    /// The namespace requests default to (from the kubeconfig context or the
    /// service account); `default` when nothing says otherwise.
    pub namespace: String,
    /// TLS settings.
    pub tls: TlsConfig,
    /// Who the client says it is: one of a token, a token file, basic
    /// auth, an exec plugin or an OIDC provider (a client certificate is in
    /// [`tls`](Self::tls)).
    pub credentials: Credentials,
    /// Acting as another user.
    pub impersonate: Impersonation,
    /// The `User-Agent` header; see [`default_user_agent`].
    pub user_agent: String,
    /// A time limit for each request that is not a watch or a stream
    /// (`None`: no limit, as client-go's default). Watches end through their
    /// own `timeoutSeconds`.
    pub timeout: Option<Duration>,
    /// Time allowed to open a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// How long a watch waits for the server's response headers, while
    /// other watches on its HTTP/2 connection were answered, before it is
    /// taken as queued behind the connection's stream limit and sent on
    /// another connection (as Go's transport opens one). The API server
    /// answers a watch's headers at once. Default [`DEFAULT_WATCH_HEADER_WAIT`].
    pub watch_header_wait: Duration,
    /// Client-side requests per second; zero (the default), a negative or
    /// a non-finite value means no client-side limiter. Watches are never
    /// throttled.
    ///
    /// No limit by default, as controller-runtime's configuration loaders
    /// give every manager (kubernetes-sigs/controller-runtime#3119, on SIG
    /// API Machinery's advice) and as kube-rs: kube-apiserver protects
    /// itself with API priority and fairness and answers 429 with
    /// `Retry-After`, which this client honours ([`Config::max_retries`]).
    /// client-go's own zero value means 5 QPS with a burst of 10, which
    /// makes a starting controller wait on itself while the server is
    /// idle (10,000 server-side applies at 50 QPS take 194 s; with no
    /// limit, 10.5 s on the same server). Set one with
    /// [`Config::rate_limit`] to stop a runaway loop on the client.
    pub qps: f32,
    /// Requests allowed at once before `qps` applies (unused while `qps`
    /// is zero).
    pub burst: u32,
    /// Retries of a request answered 429 or 5xx with an integer
    /// `Retry-After` (and of GETs whose connection broke).
    pub max_retries: u32,
    /// Which proxy to use.
    pub proxy: Proxy,
    /// Where `Warning` headers go; `None` logs them (client-go's default).
    pub warning_handler: Option<Arc<dyn WarningHandler>>,
    /// Where this configuration came from, for error messages
    /// (`kubeconfig /home/me/.kube/config`, `in-cluster`, `Config`).
    pub origin: String,
    /// Which encoding responses are asked in: protobuf for built-in types
    /// with JSON as the fallback (the default, as client-go 1.35+), or
    /// JSON (see [`ContentType`]).
    pub content_type: ContentType,
    /// Where request metrics go; `None` (the default) reports to the
    /// process-wide default ([`set_default_request_metrics`](crate::metrics::set_default_request_metrics)),
    /// if one is set when the client is built.
    pub request_metrics: Option<Arc<dyn RequestMetrics>>,
    /// Whether responses are asked for uncompressed. `false` (the default,
    /// as in client-go) sends `Accept-Encoding: gzip`, and kube-apiserver
    /// then compresses large non-watch answers (over 128 KiB); the client
    /// decompresses them as they stream. A kubeconfig cluster's
    /// `disable-compression: true` sets it: on a fast network, compressing
    /// a large list costs the server more time than the bytes saved.
    pub disable_compression: bool,
    /// How often client certificate, key and certificate authority files
    /// are re-read (client-go's 5 minutes,
    /// [`DEFAULT_TLS_FILE_RELOAD_INTERVAL`]),
    /// checked when a request is made; a change is used by the next
    /// connections. Zero turns re-reading off. Applies only to settings
    /// read from files (a kubeconfig's `client-certificate`/`client-key`
    /// pair and `certificate-authority`), never to inline data.
    pub tls_file_reload_interval: Duration,
}

impl Config {
    /// A configuration for `host` with every default: no credentials, the
    /// system's certificate authorities, no client-side rate limit,
    /// [`DEFAULT_MAX_RETRIES`], proxy from the environment.
    pub fn new(host: impl Into<String>) -> Self {
        Config {
            host: host.into(),
            namespace: "default".to_string(),
            tls: TlsConfig::default(),
            credentials: Credentials::None,
            impersonate: Impersonation::default(),
            user_agent: default_user_agent(),
            timeout: None,
            connect_timeout: Duration::from_secs(30),
            watch_header_wait: DEFAULT_WATCH_HEADER_WAIT,
            qps: 0.0,
            burst: 0,
            max_retries: DEFAULT_MAX_RETRIES,
            proxy: Proxy::FromEnvironment,
            warning_handler: None,
            origin: "Config".to_string(),
            content_type: ContentType::default(),
            request_metrics: None,
            disable_compression: false,
            tls_file_reload_interval: DEFAULT_TLS_FILE_RELOAD_INTERVAL,
        }
    }

    /// Sets the default namespace.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Trusts the certificate authorities in this PEM text.
    #[must_use]
    pub fn certificate_authority_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.certificate_authority = Some(PemSource::Data(pem.into()));
        self
    }

    /// Presents this client certificate and key (PEM text).
    #[must_use]
    pub fn client_certificate_pem(
        mut self,
        certificate: impl Into<Vec<u8>>,
        key: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client_certificate = Some(PemSource::Data(certificate.into()));
        self.tls.client_key = Some(PemSource::Data(key.into()));
        self
    }

    /// Skips verifying the server's certificate (logged as a warning when
    /// the client is built). Never use it outside experiments.
    #[must_use]
    pub fn insecure_skip_tls_verify(mut self, insecure: bool) -> Self {
        self.tls.insecure_skip_verify = insecure;
        self
    }

    /// Verifies the server's certificate against this name.
    #[must_use]
    pub fn tls_server_name(mut self, name: impl Into<String>) -> Self {
        self.tls.server_name = Some(name.into());
        self
    }

    /// Uses these credentials, replacing any set before.
    #[must_use]
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// Sends this bearer token ([`Credentials::BearerToken`]).
    #[must_use]
    pub fn bearer_token(self, token: impl Into<Secret>) -> Self {
        self.credentials(Credentials::BearerToken(token.into()))
    }

    /// Reads the bearer token from this file, again every minute
    /// ([`Credentials::TokenFile`] with no fallback).
    #[must_use]
    pub fn bearer_token_file(self, path: impl Into<PathBuf>) -> Self {
        self.credentials(Credentials::TokenFile {
            path: path.into(),
            fallback: None,
        })
    }

    /// Uses HTTP basic authentication ([`Credentials::Basic`]).
    #[must_use]
    pub fn basic_auth(self, username: impl Into<String>, password: impl Into<Secret>) -> Self {
        self.credentials(Credentials::Basic {
            username: username.into(),
            password: password.into(),
        })
    }

    /// Gets credentials from an exec plugin ([`Credentials::Exec`]).
    #[must_use]
    pub fn exec(self, exec: ExecConfig) -> Self {
        self.credentials(Credentials::Exec(exec))
    }

    /// Acts as another user.
    #[must_use]
    pub fn impersonate(mut self, impersonation: Impersonation) -> Self {
        self.impersonate = impersonation;
        self
    }

    /// Sets [`request_metrics`](Self::request_metrics).
    #[must_use]
    pub fn request_metrics(mut self, metrics: Arc<dyn RequestMetrics>) -> Self {
        self.request_metrics = Some(metrics);
        self
    }

    /// Sets [`content_type`](Self::content_type).
    #[must_use]
    pub fn content_type(mut self, content_type: ContentType) -> Self {
        self.content_type = content_type;
        self
    }

    /// Sets the `User-Agent` header.
    #[must_use]
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Sets [`watch_header_wait`](Self::watch_header_wait).
    #[must_use]
    pub fn watch_header_wait(mut self, wait: Duration) -> Self {
        self.watch_header_wait = wait;
        self
    }

    /// Limits each non-streaming request to `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets a client-side rate limit: `qps` requests per second after a
    /// burst of `burst`; `qps <= 0` turns it off (the default).
    #[must_use]
    pub fn rate_limit(mut self, qps: f32, burst: u32) -> Self {
        self.qps = qps;
        self.burst = burst;
        self
    }

    /// Sets how many times a retryable failure is retried.
    #[must_use]
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Chooses the proxy.
    #[must_use]
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.proxy = proxy;
        self
    }

    /// Asks for uncompressed responses (see
    /// [`disable_compression`](Self::disable_compression)).
    #[must_use]
    pub fn disable_compression(mut self, disable: bool) -> Self {
        self.disable_compression = disable;
        self
    }

    /// Sets how often certificate files are re-read (see
    /// [`tls_file_reload_interval`](Self::tls_file_reload_interval)).
    #[must_use]
    pub fn tls_file_reload_interval(mut self, interval: Duration) -> Self {
        self.tls_file_reload_interval = interval;
        self
    }

    /// Sends `Warning` headers to this handler.
    #[must_use]
    pub fn warning_handler(mut self, handler: Arc<dyn WarningHandler>) -> Self {
        self.warning_handler = Some(handler);
        self
    }

    /// Offers HTTP/1.1 only.
    #[must_use]
    pub fn disable_http2(mut self, disable: bool) -> Self {
        self.tls.disable_http2 = disable;
        self
    }

    /// The same configuration without any credential (no
    /// [`Credentials`], client certificate or impersonation), as
    /// client-go's `AnonymousClientConfig`.
    #[must_use]
    pub fn anonymous(&self) -> Self {
        let mut config = self.clone();
        config.credentials = Credentials::None;
        config.impersonate = Impersonation::default();
        config.tls.client_certificate = None;
        config.tls.client_key = None;
        config
    }

    /// Which kind of credential is configured, for logs.
    pub fn auth_kind(&self) -> &'static str {
        match &self.credentials {
            Credentials::None if self.tls.client_certificate.is_some() => "client certificate",
            credentials => credentials.kind(),
        }
    }

    /// The host with a scheme, as client-go's defaulting rule gives it.
    pub(crate) fn host_url(&self) -> String {
        let host = if self.host.is_empty() {
            "localhost"
        } else {
            self.host.as_str()
        };
        if host.starts_with("http://") || host.starts_with("https://") {
            return host.to_string();
        }
        let tls = self.tls.certificate_authority.is_some()
            || self.tls.client_certificate.is_some()
            || self.tls.insecure_skip_verify;
        if tls {
            format!("https://{host}")
        } else {
            format!("http://{host}")
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("host", &self.host)
            .field("namespace", &self.namespace)
            .field("tls", &self.tls)
            .field("credentials", &self.credentials)
            .field("impersonate", &self.impersonate)
            .field("user_agent", &self.user_agent)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("watch_header_wait", &self.watch_header_wait)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("max_retries", &self.max_retries)
            .field("proxy", &self.proxy)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (namespace {}, auth: {}, from {})",
            self.host_url(),
            self.namespace,
            self.auth_kind(),
            self.origin
        )
    }
}

/// `<program>/<version> (<os>/<arch>) clientgo-rs`, as client-go's
/// `DefaultKubernetesUserAgent` builds it: the running program's file name
/// first (`clientgo-rs` when it cannot be read), this library's version,
/// and Go's names for the operating system and architecture
/// (`linux/amd64`). The API server's audit log then names the program, and
/// so does the default field manager of its writes (the user agent up to
/// its first `/`): two controllers never share field ownership by accident.
pub fn default_user_agent() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    };
    let program = std::env::args_os()
        .next()
        .and_then(|path| program_name(&path))
        .unwrap_or_else(|| "clientgo-rs".to_string());
    format!(
        "{program}/{} ({}/{arch}) clientgo-rs",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )
}

/// A program's file name as it can stand in a user agent: without its
/// directory or `.exe`, only printable ASCII other than `/`, spaces and
/// parentheses. `None` when nothing is left.
fn program_name(path: &std::ffi::OsStr) -> Option<String> {
    let name = std::path::Path::new(path).file_name()?.to_string_lossy();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    let cleaned: String = name
        .chars()
        .filter(|c| c.is_ascii_graphic() && !matches!(c, '/' | '(' | ')'))
        .collect();
    (!cleaned.is_empty()).then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_redact_every_secret() {
        let base = Config::new("https://example:6443").client_certificate_pem("CERT", "key-value");
        for config in [
            base.clone().bearer_token("token-value"),
            base.basic_auth("me", "password-value"),
        ] {
            let shown = format!("{config:?} {config}");
            for secret in ["token-value", "password-value", "key-value"] {
                assert!(!shown.contains(secret), "{secret} leaked: {shown}");
            }
            assert!(shown.contains("example:6443"));
        }
    }

    #[test]
    fn host_scheme_follows_client_go_defaulting() {
        assert_eq!(
            Config::new("example:6443").host_url(),
            "http://example:6443"
        );
        assert_eq!(
            Config::new("example:6443")
                .certificate_authority_pem("x")
                .host_url(),
            "https://example:6443"
        );
        assert_eq!(Config::new("").host_url(), "http://localhost");
        assert_eq!(Config::new("https://h").host_url(), "https://h");
    }

    #[test]
    fn user_agent_names_the_program_the_crate_and_platform() {
        let agent = default_user_agent();
        let program = program_name(&std::env::args_os().next().unwrap()).unwrap();
        assert!(
            agent.starts_with(&format!("{program}/{}", env!("CARGO_PKG_VERSION"))),
            "{agent}"
        );
        assert!(agent.ends_with(") clientgo-rs"), "{agent}");
        for (path, name) in [
            ("/usr/local/bin/my-controller", Some("my-controller")),
            ("C:\\bin\\op.exe", Some("C:\\bin\\op")),
            ("op.exe", Some("op")),
            ("/usr/bin/we ird(1)", Some("weird1")),
            ("/", None),
        ] {
            assert_eq!(
                program_name(std::ffi::OsStr::new(path)).as_deref(),
                name,
                "{path}"
            );
        }
        assert!(
            agent.contains(&format!("({}/", std::env::consts::OS)),
            "{agent}"
        );
    }

    #[test]
    fn anonymous_strips_credentials() {
        let config = Config::new("https://h")
            .bearer_token("t")
            .client_certificate_pem("c", "k")
            .anonymous();
        assert_eq!(config.auth_kind(), "none");
        assert!(config.tls.client_key.is_none());
    }
}
