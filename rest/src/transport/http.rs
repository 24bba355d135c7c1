//! The reqwest clients requests go through (client-go's
//! `transport.New` over an `http.Transport`): TLS, user agent, connect
//! timeout, keep-alives and HTTP/2 pings, proxy, compression.

use std::sync::Arc;
use std::time::Duration;

use crate::config::error::ConfigError;
use crate::config::proxy::dial_url;
use crate::config::rest_config::{Config, Proxy};
use crate::transport::tls::client_tls_config;

/// What is needed to build (and rebuild) the reqwest client.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) tls: rustls::ClientConfig,
    pub(crate) user_agent: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) proxy: Proxy,
    pub(crate) http1_only: bool,
    pub(crate) disable_compression: bool,
}

impl HttpSettings {
    /// The settings `config` asks for, over the TLS configuration `tls`.
    pub(crate) fn new(config: &Config, tls: rustls::ClientConfig) -> Self {
        HttpSettings {
            tls,
            user_agent: config.user_agent.clone(),
            connect_timeout: config.connect_timeout,
            proxy: config.proxy.clone(),
            http1_only: config.tls.disable_http2,
            disable_compression: config.disable_compression,
        }
    }
}

/// Installs ring's crypto provider as the process default when none is
/// installed.
///
/// This crate builds reqwest with rustls but without a default crypto
/// provider (so aws-lc never enters the tree). reqwest then requires a
/// process-wide provider for any client built without a preconfigured TLS
/// setup, including other reqwest clients in the same program.
pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// `tls` offering HTTP/1.1 alone through ALPN, for connections that are to
/// be upgraded.
pub(crate) fn http1_tls(tls: &rustls::ClientConfig) -> rustls::ClientConfig {
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    tls
}

/// A reqwest client with `settings`.
pub(crate) fn build_http(settings: &HttpSettings) -> Result<reqwest::Client, ConfigError> {
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
            let dial =
                dial_url(url).map_err(|e| ConfigError::HttpClient(format!("proxy-url: {e}")))?;
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
        .map_err(|e| ConfigError::HttpClient(describe_http_error(&e)))
}

/// A plain HTTP client for a server outside the cluster that `config`
/// describes (an OIDC issuer): its TLS settings (certificate authority,
/// server name, skip-verify), user agent, timeouts and proxy, with no
/// credentials, throttling or retries, as client-go's `oidc` plugin uses
/// an `http.Client` of its own.
pub(crate) fn issuer_client(config: &Config) -> Result<reqwest::Client, ConfigError> {
    install_crypto_provider();
    let tls = client_tls_config(config, Arc::default())?;
    build_http(&HttpSettings::new(config, tls.config))
}

/// reqwest's top-level message ("error sending request") hides the cause;
/// walk the chain so a log line says "connection refused" or "invalid peer
/// certificate: UnknownIssuer".
pub(crate) fn describe_http_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
