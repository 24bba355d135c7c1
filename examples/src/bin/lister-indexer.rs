//! `lister-indexer`: reading an informer's cache instead of the API server
//! (client-go's listers and `Indexer`). A pod informer gets two indexes
//! besides the namespace one: `by-node`, over whole pods (`spec.nodeName`),
//! and `by-app`, over metadata only (the `app` label, which never decodes
//! a pod in the default compact storage). Once synced it reads a node's
//! pods and an app's pods through the indexes, one namespace through the
//! lister, and one pod by name.

use std::collections::HashMap;
use std::sync::Arc;

use clientgo::apimachinery::LabelSelector;
use clientgo::informers::{
    Indexers, InformerFactoryOptions, MetadataIndexers, SharedInformerFactory,
};
use clientgo::prelude::Object;
use clientgo::store::IndexFuncError;
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, SeededResource, run_main, say,
};
use k8s_openapi::api::core::v1::Pod;

/// Reads pods through a lister and two indexes.
#[derive(Debug, clap::Parser)]
#[command(name = "lister-indexer", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("lister-indexer", run)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    let seed = EmbeddedOptions::default().with(SeededResource::pods(200, 0.0));
    let connection = Connection::open(&flags.common, seed).await?;
    let factory = SharedInformerFactory::with_options(
        connection.client.clone(),
        InformerFactoryOptions::default(),
    );
    let informer = factory.core().v1().pods().informer();
    // Index functions are added before the informer starts (or later:
    // cached objects are then indexed at once).
    let by_node: Indexers<Pod> = HashMap::from([(
        "by-node".to_string(),
        Arc::new(|pod: &Pod| -> Result<Vec<String>, IndexFuncError> {
            Ok(pod
                .spec
                .as_ref()
                .and_then(|spec| spec.node_name.clone())
                .into_iter()
                .collect())
        }) as _,
    )]);
    let by_app: MetadataIndexers = HashMap::from([(
        "by-app".to_string(),
        Arc::new(|meta: &dyn Object| {
            Ok(meta
                .labels()
                .get("app")
                .map(str::to_string)
                .into_iter()
                .collect())
        }) as _,
    )]);
    informer
        .add_indexers(by_node)
        .map_err(|error| error.to_string())?;
    informer
        .add_metadata_indexers(by_app)
        .map_err(|error| error.to_string())?;
    let stop = clientgo_examples::start_and_sync(&factory).await?;

    let lister = informer.lister();
    say!("{} pods cached", lister.len());
    let first = lister.list(&LabelSelector::everything()).into_iter().next();
    if let Some(pod) = first {
        let node = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.node_name.clone())
            .unwrap_or_default();
        let on_node = lister
            .by_index("by-node", &node)
            .map_err(|error| error.to_string())?;
        say!("{} pods on node {node:?} (index by-node)", on_node.len());
        let app = pod.labels().get("app").unwrap_or_default().to_string();
        let of_app = lister
            .by_index("by-app", &app)
            .map_err(|error| error.to_string())?;
        say!("{} pods of app {app:?} (index by-app)", of_app.len());
        let namespace = pod.namespace().unwrap_or_default().to_string();
        let in_namespace = lister
            .namespace(namespace.as_str())
            .list(&LabelSelector::everything());
        say!(
            "{} pods in namespace {namespace:?} (lister)",
            in_namespace.len()
        );
        let name = pod.name().unwrap_or_default();
        match lister.namespace(namespace.as_str()).get(name) {
            Some(found) => say!(
                "get {namespace}/{name}: found, resourceVersion {}",
                found.resource_version().unwrap_or_default()
            ),
            None => say!("get {namespace}/{name}: not cached"),
        }
    }
    say!(
        "get default/no-such-pod: {}",
        if lister.namespace("default").get("no-such-pod").is_some() {
            "found"
        } else {
            "not cached"
        }
    );
    stop.cancel();
    factory.shutdown().await;
    Ok(())
}
