//! Helpers shared by the informer tests: a server seeded with config maps,
//! an informer running on a task, and a handler that records what it is
//! told (optionally held at a gate, to play a slow handler).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clientgo_apimachinery::{GroupResource, Object};
use clientgo_informers::{
    ObjectOrTombstone, ResourceEventHandler, SharedIndexInformer, SharedIndexInformerOptions,
};
use clientgo_reflector::{BackoffOptions, ReflectorOptions};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_testing::{ObjectKey, Preconditions, TestApiServer};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Every wait gives up after this long.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn config_maps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

/// Starts a server holding `count` config maps `cm-00000`… in `default`,
/// labelled `app=web` (even) or `app=db` (odd).
pub async fn seeded(count: usize) -> TestApiServer {
    let server = TestApiServer::builder().start().await.unwrap();
    for index in 0..count {
        let app = if index % 2 == 0 { "web" } else { "db" };
        create(&server, &format!("cm-{index:05}"), app);
    }
    server
}

/// Creates a config map labelled `app`; returns its resourceVersion.
pub fn create(server: &TestApiServer, name: &str, app: &str) -> String {
    server
        .storage()
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": name, "labels": {"app": app}}, "data": {"v": "0"}}),
        )
        .unwrap()
        .resource_version
        .to_string()
}

/// Sets a config map's `data.v`; returns its new resourceVersion.
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

pub fn client(server: &TestApiServer) -> RestClient {
    RestClient::new(Config::new(server.url())).unwrap()
}

/// What the shared helpers work with: config maps, whole
/// (`ConfigMap`) or compact (`Compact<ConfigMap>`).
pub trait TestObject:
    clientgo_apimachinery::ApiObject
    + k8s_openapi::Resource<Scope = k8s_openapi::NamespaceResourceScope>
{
}

impl<K> TestObject for K where
    K: clientgo_apimachinery::ApiObject
        + k8s_openapi::Resource<Scope = k8s_openapi::NamespaceResourceScope>
{
}

/// Options with millisecond backoffs, so fault tests finish quickly.
pub fn fast_options<K: TestObject>() -> SharedIndexInformerOptions<K> {
    SharedIndexInformerOptions::default().reflector(
        ReflectorOptions::default().backoff(
            BackoffOptions::default()
                .initial(Duration::from_millis(5))
                .cap(Duration::from_millis(50)),
        ),
    )
}

/// An informer of the config maps in `default`.
pub fn informer<K: TestObject>(
    server: &TestApiServer,
    options: SharedIndexInformerOptions<K>,
) -> SharedIndexInformer<K> {
    SharedIndexInformer::from_client(
        ResourceClient::<K>::namespaced(client(server), "default"),
        options,
    )
}

/// An informer running on its own task.
pub struct Running<K: TestObject = ConfigMap> {
    pub informer: SharedIndexInformer<K>,
    pub cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl<K: TestObject> Running<K> {
    pub fn start(informer: SharedIndexInformer<K>) -> Running<K> {
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, cancel) = (informer.clone(), cancel.clone());
            async move { informer.run(cancel).await }
        });
        Running {
            informer,
            cancel,
            task,
        }
    }

    pub async fn synced(&self) {
        let informer = self.informer.clone();
        eventually("the informer syncs", async move || informer.has_synced()).await;
    }

    pub async fn stop(self) {
        self.cancel.cancel();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the informer stops")
            .unwrap();
        assert!(self.informer.is_stopped());
    }
}

pub use clientgo_testing::eventually;

/// One notification as a handler saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Add {
        name: String,
        rv: String,
        initial: bool,
    },
    Update {
        name: String,
        old_rv: String,
        new_rv: String,
    },
    Delete {
        name: String,
        rv: String,
        tombstone: bool,
    },
}

impl Seen {
    pub fn name(&self) -> &str {
        match self {
            Seen::Add { name, .. } | Seen::Update { name, .. } | Seen::Delete { name, .. } => name,
        }
    }

    pub fn is_resync(&self) -> bool {
        matches!(self, Seen::Update { old_rv, new_rv, .. } if old_rv == new_rv)
    }
}

/// A gate a handler waits at until it is opened.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    fn pass(&self) {
        let mut open = self.0.0.lock().unwrap();
        while !*open {
            open = self.0.1.wait(open).unwrap();
        }
    }
}

fn name_of<K: Object>(object: &K) -> String {
    object.name().unwrap_or_default().to_string()
}

fn rv_of<K: Object>(object: &K) -> String {
    object.resource_version().unwrap_or_default().to_string()
}

/// Records every notification with the time it arrived; waits at its gate
/// (if any) before each one.
pub struct Recorder<K = ConfigMap> {
    seen: Arc<Mutex<Vec<(Seen, Instant)>>>,
    gate: Option<Gate>,
    /// The last object delivered per name, to compare with the cache.
    objects: Arc<Mutex<BTreeMap<String, Arc<K>>>>,
}

impl<K> Clone for Recorder<K> {
    fn clone(&self) -> Self {
        Recorder {
            seen: Arc::clone(&self.seen),
            gate: self.gate.clone(),
            objects: Arc::clone(&self.objects),
        }
    }
}

impl<K> Default for Recorder<K> {
    fn default() -> Self {
        Recorder {
            seen: Arc::default(),
            gate: None,
            objects: Arc::default(),
        }
    }
}

impl<K: Object> Recorder<K> {
    pub fn gated(gate: &Gate) -> Recorder<K> {
        Recorder {
            gate: Some(gate.clone()),
            ..Recorder::default()
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(seen, _)| seen.clone())
            .collect()
    }

    pub fn seen_at(&self) -> Vec<(Seen, Instant)> {
        self.seen.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub fn last_object(&self, name: &str) -> Option<Arc<K>> {
        self.objects.lock().unwrap().get(name).cloned()
    }

    fn record(&self, seen: Seen, object: Option<&Arc<K>>) {
        if let Some(gate) = &self.gate {
            gate.pass();
        }
        if let Some(object) = object {
            self.objects
                .lock()
                .unwrap()
                .insert(name_of::<K>(object), Arc::clone(object));
        }
        self.seen.lock().unwrap().push((seen, Instant::now()));
    }
}

impl<K: Object + Send + Sync + 'static> ResourceEventHandler<K> for Recorder<K> {
    fn on_add(&mut self, object: &Arc<K>, initial: bool) {
        let seen = Seen::Add {
            name: name_of::<K>(object),
            rv: rv_of::<K>(object),
            initial,
        };
        self.record(seen, Some(object));
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        let seen = Seen::Update {
            name: name_of::<K>(new),
            old_rv: rv_of::<K>(old),
            new_rv: rv_of::<K>(new),
        };
        self.record(seen, Some(new));
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        let seen = match object {
            ObjectOrTombstone::Object(o) => Seen::Delete {
                name: name_of::<K>(o),
                rv: rv_of::<K>(o),
                tombstone: false,
            },
            ObjectOrTombstone::Tombstone(t) => Seen::Delete {
                name: t.key.rsplit('/').next().unwrap_or_default().to_string(),
                rv: t.object.as_deref().map(rv_of::<K>).unwrap_or_default(),
                tombstone: true,
            },
        };
        self.record(seen, None);
    }
}

/// Starts the factory's informers and waits until every one has synced;
/// the returned token stops them.
pub async fn start_and_sync(
    factory: &clientgo_informers::SharedInformerFactory,
) -> CancellationToken {
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(PATIENCE).await.unwrap();
    stop
}
