//! A cache that cannot sync is reported at once with its reason; a
//! shutdown lets reconciles in flight finish, within its deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use clientgo_controller::{Action, Controller, Error, ManagerOptions};
use clientgo_testing::Verb;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::support::{Cluster, DropFlag, eventually, start};

/// A custom resource whose CRD is never installed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Widget {
    #[serde(default)]
    metadata: ObjectMeta,
}

impl k8s_openapi::Resource for Widget {
    const API_VERSION: &'static str = "example.com/v1";
    const GROUP: &'static str = "example.com";
    const KIND: &'static str = "Widget";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "widgets";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for Widget {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

async fn done<K>(_: Arc<K>, _: Arc<()>) -> Result<Action, String> {
    Ok(Action::done())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_crd_or_a_forbidden_kind_fails_the_sync_at_once() {
    let cluster = Cluster::start().await;
    let manager = cluster.manager();
    Controller::for_::<Widget>(&manager)
        .complete(done, Arc::new(()))
        .unwrap();
    let started = tokio::time::Instant::now();
    let error = manager.run(CancellationToken::new()).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let Error::CacheSync(sync) = &error else {
        panic!("{error}");
    };
    assert_eq!(sync.first_status_code(), Some(404), "{error}");
    assert!(error.to_string().contains("widgets"), "{error}");

    // Both ways to sync: a watch-list, and the list it falls back to.
    for verb in [Verb::Watch, Verb::List] {
        cluster
            .server()
            .deny(verb, GroupResource::new("", "configmaps"));
    }
    let manager = cluster.manager();
    Controller::for_::<Deployment>(&manager)
        .owns::<ConfigMap>()
        .complete(done, Arc::new(()))
        .unwrap();
    let error = manager.run(CancellationToken::new()).await.unwrap_err();
    let Error::CacheSync(sync) = &error else {
        panic!("{error}");
    };
    assert_eq!(sync.first_status_code(), Some(403), "{error}");
    assert!(error.to_string().contains("configmaps"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_reconciles_finish_within_the_deadline() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;

    // A reconcile shorter than the deadline finishes, and run returns Ok.
    let manager = cluster.manager();
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let context = Arc::new((Arc::clone(&started), Arc::clone(&finished)));
    Controller::for_::<Deployment>(&manager)
        .complete(
            |_: Arc<Deployment>, context: Arc<(Arc<AtomicUsize>, Arc<AtomicBool>)>| async move {
                context.0.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                context.1.store(true, Ordering::SeqCst);
                Ok::<_, String>(Action::done())
            },
            context,
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the reconcile to start", || async {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
    assert!(
        finished.load(Ordering::SeqCst),
        "the reconcile in flight finished"
    );

    // One longer than the deadline is abandoned, and run says so.
    let manager = cluster.manager_with(
        ManagerOptions::default().graceful_shutdown_timeout(Duration::from_millis(100)),
    );
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicBool::new(false));
    let context = Arc::new((Arc::clone(&started), Arc::clone(&stopped)));
    Controller::for_::<Deployment>(&manager)
        .complete(
            |_: Arc<Deployment>, context: Arc<(Arc<AtomicUsize>, Arc<AtomicBool>)>| async move {
                let _stopped = DropFlag(Arc::clone(&context.1));
                context.0.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok::<_, String>(Action::done())
            },
            context,
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the long reconcile to start", || async {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    stop.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("run returns soon after the deadline")
        .unwrap();
    assert!(
        matches!(result, Err(Error::ShutdownTimeout(_))),
        "{result:?}"
    );
}
