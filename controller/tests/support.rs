//! What every suite starts from: an API server (the test server, or either
//! server for a suite that runs on both), a manager over it, and objects to
//! write.

use std::collections::BTreeMap;
use std::future::Future;

use clientgo_controller::{Manager, ManagerOptions};
use clientgo_informers::InformerFactoryOptions;
use clientgo_rest::{Config, CreateOptions, ResourceClient, RestClient};
use clientgo_testing::TestApiServer;
use clientgo_testing::envtest::Backend;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use tokio_util::sync::CancellationToken;

/// A started API server, a client of it, and the namespace a test works
/// in (`team` on the test server of [`Cluster::start`]).
pub struct Cluster {
    backend: Backend,
    pub client: RestClient,
    pub namespace: String,
    /// Whether other tests use the same server (the real one).
    shared: bool,
}

impl Cluster {
    /// The test server over HTTP, namespace `team`.
    pub async fn start() -> Cluster {
        let server = TestApiServer::builder().start().await.unwrap();
        let client = RestClient::new(Config::new(server.url())).unwrap();
        Cluster {
            backend: Backend::from_test_server(server),
            client,
            namespace: "team".into(),
            shared: false,
        }
    }

    /// The test server, for what only it does (its request log, faults,
    /// deny rules). Panics on the real server.
    pub fn server(&self) -> &TestApiServer {
        self.backend.test_server().expect("a test-server-only step")
    }

    /// The server this cluster is.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// A deployment in this cluster's namespace.
    pub fn deployment(&self, name: &str) -> Deployment {
        deployment_in(name, &self.namespace)
    }

    pub fn manager(&self) -> Manager {
        self.manager_with(ManagerOptions::default())
    }

    /// A manager; on a cluster of [`on_each_cluster`] its caches watch
    /// only the cluster's namespace (the real server is shared by the
    /// binary's tests, and a controller of one must not act on another's
    /// objects).
    pub fn manager_with(&self, options: ManagerOptions) -> Manager {
        Manager::new(self.client.clone(), self.scoped(options))
    }

    /// `options` with the caches scoped to this cluster's namespace when
    /// the cluster is shared.
    pub fn scoped(&self, options: ManagerOptions) -> ManagerOptions {
        if self.shared {
            options.factory_options(InformerFactoryOptions::default().namespace(&self.namespace))
        } else {
            options
        }
    }

    pub fn deployments(&self) -> ResourceClient<Deployment> {
        ResourceClient::namespaced(self.client.clone(), &self.namespace)
    }

    pub fn config_maps(&self) -> ResourceClient<ConfigMap> {
        ResourceClient::namespaced(self.client.clone(), &self.namespace)
    }

    pub async fn create_deployment(&self, name: &str) -> Deployment {
        self.deployments()
            .create(&CreateOptions::default(), &self.deployment(name))
            .await
            .unwrap()
    }

    /// Creates the config map `name` in this cluster's namespace, owned
    /// (as its controller) by `owner`.
    pub async fn create_owned_config_map(&self, owner: &Deployment, name: &str) -> ConfigMap {
        let mut child = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        clientgo_controller::controllerutil::set_controller_reference(owner, &mut child).unwrap();
        self.config_maps()
            .create(&CreateOptions::default(), &child)
            .await
            .unwrap()
    }
}

/// A deployment in namespace `team`.
pub fn deployment(name: &str) -> Deployment {
    deployment_in(name, "team")
}

/// Runs `body` on a cluster of each backend (the test server over TLS,
/// then the real kube-apiserver when its binaries are there), each with a
/// fresh namespace.
#[allow(clippy::print_stderr)]
pub async fn on_each_cluster<F, Fut>(mut body: F)
where
    F: FnMut(Cluster) -> Fut,
    Fut: Future<Output = ()>,
{
    for backend in Backend::both().await {
        eprintln!("--- on the {}", backend.name());
        let namespace = backend.create_namespace("controller").await.unwrap();
        let client = backend.client().unwrap();
        let shared = backend.is_real();
        body(Cluster {
            backend,
            client,
            namespace,
            shared,
        })
        .await;
    }
}

/// A deployment in `namespace`.
pub fn deployment_in(name: &str, namespace: &str) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            // What kube-apiserver's validation asks of a Deployment.
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("registry.example/app:1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

pub use clientgo_testing::eventually;

/// A manager's run on a task of its own.
pub type Running = tokio::task::JoinHandle<Result<(), clientgo_controller::Error>>;

/// Starts `manager`'s run; cancel the token to stop it.
pub fn start(manager: &Manager) -> (CancellationToken, Running) {
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (manager, stop) = (manager.clone(), stop.clone());
        async move { manager.run(stop).await }
    });
    (stop, running)
}

/// Sets its flag when dropped: held by a reconcile, it tells whether the
/// reconcile was stopped (its future dropped).
pub struct DropFlag(pub std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Counts reconciles by object name ([`tally`] is a reconcile that does).
#[derive(Default)]
pub struct Tally(parking_lot::Mutex<BTreeMap<String, usize>>);

impl Tally {
    /// The reconciles of `name` so far.
    pub fn count(&self, name: &str) -> usize {
        self.0.lock().get(name).copied().unwrap_or(0)
    }
}

/// A reconcile that counts each deployment's runs in `tally`.
pub async fn tally(
    deployment: std::sync::Arc<Deployment>,
    tally: std::sync::Arc<Tally>,
) -> Result<clientgo_controller::Action, String> {
    let name = deployment.metadata.name.clone().unwrap_or_default();
    *tally.0.lock().entry(name).or_default() += 1;
    Ok(clientgo_controller::Action::done())
}
