//! [`WebhookServerOptions`]: where the server listens, its certificate
//! files, and its limits; controller-runtime's defaults unless said.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How a [`WebhookServer`](crate::WebhookServer) serves.
#[derive(Debug, Clone)]
pub struct WebhookServerOptions {
    /// Where to listen (default `0.0.0.0:9443`, controller-runtime's port;
    /// port 0 picks a free one).
    pub bind_address: SocketAddr,
    /// The serving certificate (PEM, the chain), default
    /// `<temp>/k8s-webhook-server/serving-certs/tls.crt`.
    pub certificate_file: PathBuf,
    /// Its private key (PEM), default `…/serving-certs/tls.key`.
    pub key_file: PathBuf,
    /// When set, clients must present a certificate this CA (PEM) signed
    /// (kube-apiserver's `--proxy-client-cert-file` or an egress
    /// selector's); default: no client certificate asked.
    pub client_ca_file: Option<PathBuf>,
    /// How often the certificate files are read again (default 10 s, as
    /// controller-runtime's certwatcher). A changed pair is served to new
    /// connections at once; a bad pair is logged and the old one kept.
    pub certificate_reload_interval: Duration,
    /// The largest review body taken (default 7 MiB, controller-runtime's);
    /// a larger one is answered 413.
    pub max_body_bytes: usize,
    /// The largest conversion review taken (default 256 MiB):
    /// kube-apiserver sends a whole list's objects in one, so this is far
    /// above the admission limit (controller-runtime sets none).
    pub max_conversion_body_bytes: usize,
    /// How long a handler may take before its request is answered with
    /// an error (default 10 s, kube-apiserver's default `timeoutSeconds`,
    /// after which it stops waiting).
    pub handler_timeout: Duration,
    /// How long a client may take to send a request's headers, and to
    /// finish the TLS handshake (default 32 s).
    pub read_header_timeout: Duration,
    /// How long shutdown waits for requests in flight (default 30 s).
    pub shutdown_timeout: Duration,
    /// Where the metrics are registered (`controller_runtime_webhook_*`);
    /// default: a registry of the server's own
    /// ([`BoundWebhookServer::metrics_registry`](crate::BoundWebhookServer::metrics_registry)).
    pub metrics_registry: Option<prometheus::Registry>,
}

impl Default for WebhookServerOptions {
    fn default() -> Self {
        let certificates = std::env::temp_dir()
            .join("k8s-webhook-server")
            .join("serving-certs");
        WebhookServerOptions {
            bind_address: SocketAddr::from(([0, 0, 0, 0], 9443)),
            certificate_file: certificates.join("tls.crt"),
            key_file: certificates.join("tls.key"),
            client_ca_file: None,
            certificate_reload_interval: Duration::from_secs(10),
            max_body_bytes: 7 * 1024 * 1024,
            max_conversion_body_bytes: 256 * 1024 * 1024,
            handler_timeout: Duration::from_secs(10),
            read_header_timeout: Duration::from_secs(32),
            shutdown_timeout: Duration::from_secs(30),
            metrics_registry: None,
        }
    }
}

impl WebhookServerOptions {
    /// Listens on `address`.
    pub fn bind_address(mut self, address: SocketAddr) -> Self {
        self.bind_address = address;
        self
    }

    /// Serves the certificate and key in these files.
    pub fn certificate_files(
        mut self,
        certificate: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> Self {
        self.certificate_file = certificate.into();
        self.key_file = key.into();
        self
    }

    /// Asks clients for a certificate signed by this CA.
    pub fn client_ca_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.client_ca_file = Some(file.into());
        self
    }

    /// Reads the certificate files again this often.
    pub fn certificate_reload_interval(mut self, interval: Duration) -> Self {
        self.certificate_reload_interval = interval;
        self
    }

    /// Refuses review bodies larger than this.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Answers a request whose handler takes longer than this with an error.
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = timeout;
        self
    }

    /// Registers the metrics in `registry`.
    pub fn metrics_registry(mut self, registry: prometheus::Registry) -> Self {
        self.metrics_registry = Some(registry);
        self
    }
}
