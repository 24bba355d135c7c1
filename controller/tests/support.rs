//! What every suite starts from: a test server, a manager over it, and
//! objects to write.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use clientgo_controller::{Manager, ManagerOptions};
use clientgo_rest::{Config, CreateOptions, ResourceClient, RestClient};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use tokio_util::sync::CancellationToken;

/// A started test server and a manager of controllers over it.
pub struct Cluster {
    pub server: TestApiServer,
    pub client: RestClient,
}

impl Cluster {
    pub async fn start() -> Cluster {
        let server = TestApiServer::builder().start().await.unwrap();
        let client = RestClient::new(Config::new(server.url())).unwrap();
        Cluster { server, client }
    }

    pub fn manager(&self) -> Manager {
        self.manager_with(ManagerOptions::default())
    }

    pub fn manager_with(&self, options: ManagerOptions) -> Manager {
        Manager::new(self.client.clone(), options)
    }

    pub fn deployments(&self) -> ResourceClient<Deployment> {
        ResourceClient::namespaced(self.client.clone(), "team")
    }

    pub fn config_maps(&self) -> ResourceClient<ConfigMap> {
        ResourceClient::namespaced(self.client.clone(), "team")
    }

    pub async fn create_deployment(&self, name: &str) -> Deployment {
        self.deployments()
            .create(&CreateOptions::default(), &deployment(name))
            .await
            .unwrap()
    }
}

/// A deployment in namespace `team`.
pub fn deployment(name: &str) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("team".into()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels),
                ..LabelSelector::default()
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// Polls `done` every 10 ms for up to 10 s; panics naming `what`.
pub async fn eventually<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

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
