//! The finalizer flow across a deletion: the finalizer is written in,
//! `Apply` runs, a delete runs `Cleanup`, the finalizer is written out and
//! the server lets the object go; on the test server and on the real
//! kube-apiserver (one body, two backends).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use clientgo_controller::controllerutil::finalizer::{self, Event, finalizer};
use clientgo_controller::{Action, Controller};
use clientgo_rest::{DeleteOptions, ResourceClient};
use k8s_openapi::api::apps::v1::Deployment;

use crate::support::{eventually, on_each_cluster, start};

const FINALIZER: &str = "example.com/cleanup";

struct Context {
    deployments: ResourceClient<Deployment>,
    applied: AtomicUsize,
    cleaned: AtomicUsize,
}

async fn reconcile(deployment: Arc<Deployment>, context: Arc<Context>) -> Result<Action, String> {
    let counts = Arc::clone(&context);
    finalizer(
        &context.deployments,
        FINALIZER,
        deployment,
        |event| async move {
            match event {
                Event::Apply(_) => counts.applied.fetch_add(1, Ordering::SeqCst),
                Event::Cleanup(_) => counts.cleaned.fetch_add(1, Ordering::SeqCst),
            };
            Ok::<_, String>(Action::done())
        },
    )
    .await
    .map_err(|error| error.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_runs_before_the_object_goes() {
    on_each_cluster(|cluster| async move {
        cluster.create_deployment("web").await;
        let manager = cluster.manager();
        let context = Arc::new(Context {
            deployments: cluster.deployments(),
            applied: AtomicUsize::new(0),
            cleaned: AtomicUsize::new(0),
        });
        let gone = Arc::new(AtomicUsize::new(0));
        let seen_gone = Arc::clone(&gone);
        Controller::for_::<Deployment>(&manager)
            .on_gone(move |_| {
                seen_gone.fetch_add(1, Ordering::SeqCst);
            })
            .complete(reconcile, Arc::clone(&context))
            .unwrap();
        let (stop, running) = start(&manager);
        let deployments = cluster.deployments();
        eventually("the finalizer written and Apply run", || async {
            context.applied.load(Ordering::SeqCst) >= 1
        })
        .await;
        let live = deployments.get("web").await.unwrap();
        assert!(finalizer::contains(&live.metadata, FINALIZER));
        assert_eq!(context.cleaned.load(Ordering::SeqCst), 0);

        deployments
            .delete("web", &DeleteOptions::default())
            .await
            .unwrap();
        eventually("the object to go", || async {
            deployments.get_optional("web").await.unwrap().is_none()
        })
        .await;
        // Once, or twice when the child-less owner was enqueued again while
        // the worker's cache still held its deleted copy (seen on the real
        // server): cleanups are idempotent, and the second one's removal
        // meets 404, which completes it (the test below).
        let cleaned = context.cleaned.load(Ordering::SeqCst);
        assert!((1..=2).contains(&cleaned), "cleaned {cleaned} times");
        eventually("the gone key reported", || async {
            gone.load(Ordering::SeqCst) >= 1
        })
        .await;
        // As for the cleanup: a key enqueued again after the object went
        // (a slow machine lets the owner's second event in) is reported
        // gone again.
        let reported = gone.load(Ordering::SeqCst);
        assert!(
            (1..=2).contains(&reported),
            "reported gone {reported} times"
        );
        stop.cancel();
        running.await.unwrap().unwrap();
    })
    .await;
}

/// A reconcile of a stale copy (being deleted, the finalizer listed) after
/// an earlier reconcile's removal let the object go: the cleanup runs
/// again and its removal meets 404, which completes the cleanup. On a real
/// server this race comes from `owns()` enqueuing the owner again while the
/// worker's cache still holds the deleted copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_the_finalizer_from_an_object_already_gone_completes_the_cleanup() {
    on_each_cluster(|cluster| async move {
        let deployments = cluster.deployments();
        let mut web = cluster.deployment("stale");
        web.metadata.finalizers = Some(vec![FINALIZER.to_string()]);
        deployments
            .create(&clientgo_rest::CreateOptions::default(), &web)
            .await
            .unwrap();
        deployments
            .delete("stale", &DeleteOptions::default())
            .await
            .unwrap();
        let stale = Arc::new(deployments.get("stale").await.unwrap());
        assert!(stale.metadata.deletion_timestamp.is_some());
        let context = Arc::new(Context {
            deployments: deployments.clone(),
            applied: AtomicUsize::new(0),
            cleaned: AtomicUsize::new(0),
        });

        let first = reconcile(Arc::clone(&stale), Arc::clone(&context)).await;
        assert_eq!(first, Ok(Action::done()));
        assert!(deployments.get_optional("stale").await.unwrap().is_none());
        let second = reconcile(stale, Arc::clone(&context)).await;
        assert_eq!(second, Ok(Action::done()), "a 404 completes the cleanup");
        assert_eq!(context.cleaned.load(Ordering::SeqCst), 2);
        assert_eq!(context.applied.load(Ordering::SeqCst), 0);
    })
    .await;
}
