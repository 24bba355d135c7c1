//! Helpers shared by the reflector's integration tests: a seeded server, a
//! reflector with short backoffs running on a task, and the comparison of
//! a store with the server's state.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use clientgo_listwatch::ResourceListerWatcher;
use clientgo_reflector::{BackoffOptions, Reflector, ReflectorOptions, ReflectorStatus};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_store::{Indexer, IndexerOptions, ReflectorStore, Store};
use clientgo_testing::{ObjectKey, Preconditions, ReadAt, TestApiServer, TestApiServerBuilder};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Every wait in these tests gives up after this long.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn config_maps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

/// Starts `builder`'s server with `count` config maps in `default`.
pub async fn seeded(builder: TestApiServerBuilder, count: usize) -> TestApiServer {
    let server = builder.start().await.unwrap();
    for index in 0..count {
        create(&server, &format!("cm-{index:05}"));
    }
    server
}

/// Creates a config map; returns its resourceVersion.
pub fn create(server: &TestApiServer, name: &str) -> String {
    server
        .storage()
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": name}, "data": {"v": "0"}}),
        )
        .unwrap()
        .resource_version
        .to_string()
}

/// Changes a config map's data; returns its new resourceVersion.
pub fn update(server: &TestApiServer, name: &str, value: &str) -> String {
    let key = ObjectKey::new(config_maps(), "default", name);
    server
        .storage()
        .modify(&key, |object| object["data"]["v"] = json!(value))
        .unwrap()
        .resource_version
        .to_string()
}

/// Deletes a config map.
pub fn delete(server: &TestApiServer, name: &str) {
    let key = ObjectKey::new(config_maps(), "default", name);
    server
        .storage()
        .delete(&key, &Preconditions::default())
        .unwrap();
}

/// A ListerWatcher of config maps in `default`.
pub fn lister(
    server: &TestApiServer,
    config: impl FnOnce(Config) -> Config,
) -> ResourceListerWatcher<ConfigMap> {
    let client = RestClient::new(config(Config::new(server.url()))).unwrap();
    ResourceListerWatcher::new(ResourceClient::<ConfigMap>::namespaced(client, "default"))
}

/// Options with millisecond backoffs, so fault tests finish quickly.
pub fn fast_options() -> ReflectorOptions {
    ReflectorOptions::default().backoff(
        BackoffOptions::default()
            .initial(Duration::from_millis(5))
            .cap(Duration::from_millis(50)),
    )
}

/// A reflector running on its own task until the token fires.
pub struct Running {
    pub reflector: ReflectorStatus,
    pub cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    pub fn start(
        lister: ResourceListerWatcher<ConfigMap>,
        store: Arc<dyn ReflectorStore<ConfigMap>>,
        options: ReflectorOptions,
    ) -> Running {
        let reflector = Reflector::new(lister, store, options);
        let status = reflector.status();
        let cancel = CancellationToken::new();
        let task = tokio::spawn(reflector.run(cancel.clone()));
        Running {
            reflector: status,
            cancel,
            task,
        }
    }

    /// Stops the reflector and waits for its task.
    pub async fn stop(self) {
        self.cancel.cancel();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the reflector stops promptly")
            .unwrap();
    }
}

/// A fresh cache.
pub fn cache() -> Arc<Indexer<ConfigMap>> {
    Arc::new(Indexer::new(IndexerOptions::default()))
}

pub use clientgo_testing::eventually;

/// The server's config maps in `default`: key → resourceVersion.
pub fn server_state(server: &TestApiServer) -> BTreeMap<String, String> {
    let (objects, _) = server
        .storage()
        .list(&config_maps(), Some("default"), ReadAt::Latest)
        .unwrap();
    objects
        .iter()
        .map(|o| {
            (
                format!("default/{}", o.key.name),
                o.resource_version.to_string(),
            )
        })
        .collect()
}

/// A store's objects: key → resourceVersion.
pub fn store_state(store: &dyn Store<ConfigMap>) -> BTreeMap<String, String> {
    store
        .list()
        .iter()
        .map(|o| {
            (
                format!(
                    "{}/{}",
                    o.metadata.namespace.as_deref().unwrap_or_default(),
                    o.metadata.name.as_deref().unwrap_or_default()
                ),
                o.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Waits until `store` holds exactly the server's objects at their
/// resourceVersions, then asserts it once more.
pub async fn converge(server: &TestApiServer, store: &dyn Store<ConfigMap>) {
    eventually("the store equals the server", async || {
        store_state(store) == server_state(server)
    })
    .await;
    assert_eq!(store_state(store), server_state(server));
}
