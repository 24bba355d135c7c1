//! Informers against a test server that behaves as kube-apiserver 1.36
//! does, for what was found wrong against a real one: more watches than a
//! connection's HTTP/2 stream limit, and waits that sat out errors that
//! could not heal.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clientgo_apimachinery::{ApiResource, GroupResource, GroupVersionKind, Status};
use clientgo_informers::ReflectorOptions;
use clientgo_informers::{
    DynamicSharedInformerFactory, InformerFactoryOptions, InformerSynced, LastingErrors,
    SharedIndexInformer, SharedIndexInformerOptions, SharedInformerFactory, SyncError, SyncFailure,
    SyncWaitOptions, wait_for_cache_sync,
};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_testing::{TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;
use tokio_util::sync::CancellationToken;

fn tls_client(server: &TestApiServer) -> RestClient {
    let config = Config::new(server.url())
        .certificate_authority_pem(server.ca_pem().unwrap())
        .watch_header_wait(Duration::from_secs(1));
    RestClient::new(config).unwrap()
}

/// `count` informers of config maps, one per namespace, on one client; all
/// must sync, and a GET on the client must still be answered.
async fn namespaced_informers_sync(server: &TestApiServer, count: usize) {
    let client = tls_client(server);
    let informers: Vec<SharedIndexInformer<ConfigMap>> = (0..count)
        .map(|index| {
            SharedIndexInformer::from_client(
                ResourceClient::namespaced(client.clone(), &format!("ns-{index}")),
                SharedIndexInformerOptions::default(),
            )
        })
        .collect();
    let stop = CancellationToken::new();
    let tasks: Vec<_> = informers
        .iter()
        .map(|informer| {
            let (informer, stop) = (informer.clone(), stop.clone());
            tokio::spawn(async move { informer.run(stop).await })
        })
        .collect();
    let synced: Vec<&dyn InformerSynced> = informers
        .iter()
        .map(|informer| informer as &dyn InformerSynced)
        .collect();
    wait_for_cache_sync(
        &synced,
        SyncWaitOptions::default().timeout(Duration::from_secs(30)),
    )
    .await
    .unwrap_or_else(|error| panic!("{count} informers: {error}"));
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let options = clientgo_apimachinery::ListOptions::default();
    tokio::time::timeout(Duration::from_secs(5), config_maps.list(&options))
        .await
        .expect("a GET on the same client is answered")
        .unwrap();
    stop.cancel();
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_informers_than_the_servers_stream_limit_all_sync() {
    // kube-apiserver's default: 100 streams per HTTP/2 connection.
    let server = TestApiServer::builder().tls().start().await.unwrap();
    namespaced_informers_sync(&server, 110).await;
    let server = TestApiServer::builder()
        .tls()
        .http2_max_concurrent_streams(3)
        .start()
        .await
        .unwrap();
    namespaced_informers_sync(&server, 10).await;
}

/// Checks that a wait started at `started` gave up at once (well within
/// its 30 s) on a lasting error with HTTP status `code`.
fn gave_up_at_once(
    started: Instant,
    result: Result<BTreeMap<String, bool>, SyncError>,
    code: u16,
) -> SyncError {
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let error = result.unwrap_err();
    assert_eq!(error.failure, SyncFailure::LastingErrors);
    assert_eq!(error.first_status_code(), Some(code));
    error
}

fn plain_client(server: &TestApiServer) -> RestClient {
    RestClient::new(Config::new(server.url())).unwrap()
}

/// Found against a real server: a controller whose user lacks RBAC waited
/// out its whole sync timeout although the 403 was known after 20 ms.
#[tokio::test]
async fn a_forbidden_list_ends_the_wait_at_once() {
    let server = TestApiServer::builder()
        .deny(Verb::List, GroupResource::new("", "configmaps"))
        .deny(Verb::Watch, GroupResource::new("", "configmaps"))
        .start()
        .await
        .unwrap();
    let factory = SharedInformerFactory::new(plain_client(&server), Duration::ZERO);
    factory.informer_for::<ConfigMap>();
    let stop = CancellationToken::new();
    factory.start(&stop);
    let started = Instant::now();
    let result = factory.wait_for_cache_sync(Duration::from_secs(30)).await;
    let error = gave_up_at_once(started, result, 403);
    assert!(error.to_string().contains("forbidden"), "{error}");

    // Asked to, it keeps waiting until the timeout.
    let patient = SharedInformerFactory::with_options(
        plain_client(&server),
        InformerFactoryOptions::default().lasting_errors(LastingErrors::KeepWaiting),
    );
    patient.informer_for::<ConfigMap>();
    patient.start(&stop);
    let started = Instant::now();
    let error = patient
        .wait_for_cache_sync(Duration::from_millis(800))
        .await
        .unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert_eq!(
        error.failure,
        SyncFailure::TimedOut(Duration::from_millis(800))
    );
    assert_eq!(error.first_status_code(), Some(403));
    stop.cancel();
    factory.shutdown().await;
    patient.shutdown().await;
}

#[tokio::test]
async fn a_resource_the_server_does_not_serve_ends_the_wait_at_once() {
    let server = TestApiServer::builder().start().await.unwrap();
    let widgets = ApiResource::namespaced(
        GroupVersionKind::new("example.com", "v1", "Widget"),
        "widgets",
    );
    let factory = DynamicSharedInformerFactory::new(plain_client(&server), Duration::ZERO);
    factory.for_resource(&widgets);
    let stop = CancellationToken::new();
    factory.start(&stop);
    let started = Instant::now();
    let result = factory.wait_for_cache_sync(Duration::from_secs(30)).await;
    gave_up_at_once(started, result, 404);
    stop.cancel();
    factory.shutdown().await;
}

#[tokio::test]
async fn a_404_for_a_served_resource_is_waited_out() {
    // A 404 while discovery lists the resource (a CRD being installed):
    // the informer retries and syncs, and the wait does not give up.
    let server = TestApiServer::builder().start().await.unwrap();
    for _ in 0..3 {
        server.faults().fail_next(
            Some(Verb::List),
            Status::not_found(&GroupResource::new("", "configmaps"), ""),
        );
    }
    let factory = SharedInformerFactory::with_options(
        plain_client(&server),
        InformerFactoryOptions::default()
            .reflector(ReflectorOptions::default().use_watch_list(false)),
    );
    factory.informer_for::<ConfigMap>();
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    stop.cancel();
    factory.shutdown().await;
}
