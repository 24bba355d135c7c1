//! [`Backend`]: one test body, two API servers. A conformance test runs the
//! same scenario on the test server and on the real kube-apiserver, through
//! the same client calls, so the two cannot drift apart unseen.

use std::net::SocketAddr;

use clientgo_rest::{Config, RestClient};

use crate::envtest::control_plane::{ControlPlane, ControlPlaneOptions};
use crate::envtest::error::Error;
use crate::server::handle::TestApiServer;

/// An API server a conformance test runs against.
#[derive(Debug)]
pub struct Backend {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    TestServer(TestApiServer),
    Shared(&'static ControlPlane),
    Own(Box<ControlPlane>),
}

impl Backend {
    /// The test server (over TLS) and, when its binaries are there, the
    /// test binary's shared control plane ([`ControlPlane::shared`]).
    /// Panics when the shared plane failed to start (a test's setup).
    pub async fn both() -> Vec<Backend> {
        let mut backends = vec![Backend::start_test_server(TestApiServer::builder().tls()).await];
        if let Some(plane) = shared_plane().await {
            backends.push(Backend {
                kind: Kind::Shared(plane),
            });
        }
        backends
    }

    /// As [`both`](Self::both), but the real backend is a control plane of
    /// the test's own, started with `flags`, so the test may restart it
    /// and compact its history. `--watch-cache=false` among the flags
    /// starts the test server without a watch cache too.
    pub async fn both_own(flags: &[&str]) -> Vec<Backend> {
        let mut builder = TestApiServer::builder().tls();
        if flags.contains(&"--watch-cache=false") {
            builder = builder.watch_cache(false);
        }
        let mut backends = vec![Backend::start_test_server(builder).await];
        if shared_plane().await.is_some() {
            let options = flags
                .iter()
                .fold(ControlPlaneOptions::default(), |options, flag| {
                    options.api_server_flag(*flag)
                });
            #[allow(clippy::expect_used)]
            let plane = ControlPlane::start(options)
                .await
                .expect("starting a control plane of the test's own");
            backends.push(Backend {
                kind: Kind::Own(Box::new(plane)),
            });
        }
        backends
    }

    /// A test server started by the caller (its own builder's options).
    pub fn from_test_server(server: TestApiServer) -> Backend {
        Backend {
            kind: Kind::TestServer(server),
        }
    }

    async fn start_test_server(builder: crate::TestApiServerBuilder) -> Backend {
        #[allow(clippy::expect_used)]
        let server = builder.start().await.expect("starting the test server");
        Backend {
            kind: Kind::TestServer(server),
        }
    }

    /// `test server` or `kube-apiserver`, for messages.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::TestServer(_) => "test server",
            Kind::Shared(_) | Kind::Own(_) => "kube-apiserver",
        }
    }

    /// Whether this is the real kube-apiserver.
    pub fn is_real(&self) -> bool {
        self.control_plane().is_some()
    }

    /// The test server, when this is it.
    pub fn test_server(&self) -> Option<&TestApiServer> {
        match &self.kind {
            Kind::TestServer(server) => Some(server),
            Kind::Shared(_) | Kind::Own(_) => None,
        }
    }

    /// The control plane, when this is the real server.
    pub fn control_plane(&self) -> Option<&ControlPlane> {
        match &self.kind {
            Kind::TestServer(_) => None,
            Kind::Shared(plane) => Some(plane),
            Kind::Own(plane) => Some(plane),
        }
    }

    /// The server's address (for a [`CuttableProxy`](crate::CuttableProxy)).
    pub fn address(&self) -> SocketAddr {
        match self.control_plane() {
            Some(plane) => plane.address(),
            None => self.test_server().map_or_else(
                || SocketAddr::from(([127, 0, 0, 1], 0)),
                TestApiServer::address,
            ),
        }
    }

    /// An admin configuration.
    pub fn config(&self) -> Config {
        match &self.kind {
            Kind::TestServer(server) => {
                let config = Config::new(server.url());
                match server.ca_pem() {
                    Some(ca) => config.certificate_authority_pem(ca),
                    None => config,
                }
            }
            Kind::Shared(plane) => plane.config(),
            Kind::Own(plane) => plane.config(),
        }
    }

    /// The admin configuration aimed at `url` instead (a proxy in front of
    /// this server), its credentials and CA kept.
    pub fn config_at(&self, url: impl Into<String>) -> Config {
        let mut config = self.config();
        config.host = url.into();
        config
    }

    /// An admin client (make one per test: its connections belong to the
    /// runtime it first runs on).
    pub fn client(&self) -> Result<RestClient, Error> {
        RestClient::new(self.config()).map_err(Error::request("building the admin client"))
    }

    /// Creates a fresh namespace (`{prefix}-{n}`) through the API and
    /// returns its name.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String, Error> {
        match self.control_plane() {
            Some(plane) => plane.create_namespace(prefix).await,
            None => {
                let name = crate::envtest::control_plane::next_namespace_name(prefix);
                let client = self.client()?;
                let namespace = k8s_openapi::api::core::v1::Namespace {
                    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.clone()),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                clientgo_rest::ResourceClient::<k8s_openapi::api::core::v1::Namespace>::all(client)
                    .create(&Default::default(), &namespace)
                    .await
                    .map_err(Error::request(format!("creating namespace {name}")))?;
                Ok(name)
            }
        }
    }

    /// Restarts the API server, data kept: the test server closes every
    /// connection; the real one's kube-apiserver is stopped and started
    /// again with the same flags. A shared plane is not restarted (its
    /// other tests would see it): use [`both_own`](Self::both_own).
    pub async fn restart(&self) -> Result<(), Error> {
        match &self.kind {
            Kind::TestServer(server) => {
                server.faults().restart();
                Ok(())
            }
            Kind::Own(plane) => {
                let flags = plane.api_server_flags();
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                plane.restart_api_server(&flags).await
            }
            Kind::Shared(_) => Err(Error::SharedPlane { what: "restarted" }),
        }
    }

    /// Compacts the history up to now: the test server's, or etcd's (of a
    /// plane of the test's own: [`both_own`](Self::both_own)).
    pub async fn compact(&self) -> Result<(), Error> {
        match &self.kind {
            Kind::TestServer(server) => {
                server.compact_history();
                Ok(())
            }
            // Every test sharing the plane would meet 410s.
            Kind::Shared(_) => Err(Error::SharedPlane { what: "compacted" }),
            Kind::Own(plane) => plane.compact_etcd().await.map(drop),
        }
    }
}

async fn shared_plane() -> Option<&'static ControlPlane> {
    #[allow(clippy::expect_used)]
    ControlPlane::shared()
        .await
        .expect("the shared control plane")
}

/// Runs `body` on each backend in turn, saying on stderr which one runs
/// (the harness shows it when the test fails).
pub async fn for_each_backend<F, Fut>(backends: Vec<Backend>, mut body: F)
where
    F: FnMut(Backend) -> Fut,
    Fut: Future<Output = ()>,
{
    for backend in backends {
        announce(backend.name());
        body(backend).await;
    }
}

#[allow(clippy::print_stderr)]
fn announce(name: &str) {
    eprintln!("--- on the {name}");
}
