//! [`TestApiServer`]: the running server's handle (its URL, storage,
//! faults, request log and kubeconfig).
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use clientgo_apimachinery::GroupResource;

use crate::api::subresources::PodLogs;
use crate::faults::controls::Faults;
use crate::faults::request_log::{RequestLog, Verb};
use crate::server::state::ServerState;
use crate::store::storage::Storage;
use crate::streams::port_forward::PortForwardTargets;
use crate::util::certificate_authority::CertificateAndKey;

/// A Kubernetes API server for tests, on 127.0.0.1, speaking plain HTTP/1.1
/// and HTTP/2 (prior knowledge).
///
/// Dropping it stops it: the listener closes and open watches end.
///
/// ```
/// use clientgo_testing::TestApiServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let server = TestApiServer::builder().start().await?;
/// let url = format!("{}/api/v1/namespaces/default/pods", server.url());
/// assert!(url.starts_with("http://127.0.0.1:"));
/// # Ok(())
/// # }
/// ```
pub struct TestApiServer {
    pub(crate) address: SocketAddr,
    pub(crate) state: Arc<ServerState>,
    pub(crate) accepting: tokio::task::JoinHandle<()>,
    pub(crate) ca_pem: Option<String>,
    pub(crate) client_certificate: Option<CertificateAndKey>,
}

impl fmt::Debug for TestApiServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestApiServer")
            .field("url", &self.url())
            .field("storage", &self.state.storage)
            .finish()
    }
}

impl TestApiServer {
    /// The base URL (`http://127.0.0.1:PORT`, or `https://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.address)
    }

    /// The PEM of the certificate authority that signed the server's
    /// certificate, when serving TLS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The client certificate and key the server accepts, when
    /// client-certificate authentication is on.
    pub fn client_certificate(&self) -> Option<&CertificateAndKey> {
        self.client_certificate.as_ref()
    }

    /// A kubeconfig pointing at this server, as a user's would: the server
    /// URL, the CA data, and the token or client certificate; context
    /// `clientgo-testing`, namespace `default`.
    pub fn kubeconfig(&self) -> String {
        let token = self.state.auth.bearer_token.lock().clone();
        crate::util::kubeconfig::kubeconfig(
            "clientgo-testing",
            &self.url(),
            self.ca_pem.as_deref(),
            token.as_deref(),
            self.client_certificate.as_ref(),
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// How many connections the server has accepted, including those that
    /// never carried a request (a client that dialed twice and kept the
    /// spare idle).
    pub fn connections_accepted(&self) -> u64 {
        self.state
            .connections_accepted
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server's store, for seeding and inspecting state directly.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.state.storage
    }

    /// The fault controls: failed requests, dropped, stalled or corrupted
    /// watches, latency, restarts.
    pub fn faults(&self) -> &Faults {
        &self.state.faults
    }

    /// The text pods' `log` subresources serve: append lines to a
    /// container's log (a request with `follow=true` receives them as they
    /// come) or set its previous instance's.
    pub fn pod_logs(&self) -> &PodLogs {
        &self.state.pod_logs
    }

    /// Where pods' ports lead for port-forward: TCP listeners the test
    /// names (a port with none refuses, as a closed port in a container).
    pub fn port_forwards(&self) -> &PortForwardTargets {
        &self.state.port_forwards
    }

    /// Every request answered so far.
    pub fn requests(&self) -> &RequestLog {
        &self.state.log
    }

    /// Compacts the history up to the current revision, as etcd compacts:
    /// exact lists from before it, and watches that would need an event
    /// before it (from the revision before the last write or older), get
    /// 410 from now on.
    pub fn compact_history(&self) {
        let storage = &self.state.storage;
        storage.compact(storage.current_revision());
    }

    /// Forbids `verb` on `resource` from now on (403 Forbidden).
    pub fn deny(&self, verb: Verb, resource: GroupResource) {
        self.state.denied.lock().push((verb, resource));
    }

    /// Accepts `token` instead of the bearer token set when building (the
    /// old one is refused from now on), as after a token rotation. Only
    /// for servers built with [`bearer_token`](crate::TestApiServerBuilder::bearer_token).
    pub fn rotate_bearer_token(&self, token: impl Into<String>) {
        let mut current = self.state.auth.bearer_token.lock();
        if current.is_some() {
            *current = Some(token.into());
        }
    }

    /// Lifts every deny rule.
    pub fn allow_all(&self) {
        self.state.denied.lock().clear();
    }

    /// Stops the server: no new connections, open watches end.
    pub fn stop(&self) {
        self.state.shutdown.cancel();
        self.accepting.abort();
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        self.stop();
    }
}
