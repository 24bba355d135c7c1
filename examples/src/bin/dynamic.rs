//! `dynamic`: an informer for any resource, named on the command line as
//! `group/version/resource` (`apps/v1/deployments`) or `version/resource`
//! for the core group (`v1/pods`), found through discovery and cached as
//! `DynamicObject`s: no Rust type needed (client-go's dynamic informer).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clientgo::apimachinery::{DynamicObject, GroupVersionResource, LabelSelector};
use clientgo::informers::{
    DynamicSharedInformerFactory, InformerFactoryOptions, ObjectOrTombstone,
    ResourceEventHandlerFuncs,
};
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, Progress, SeededResource, print_table,
    run_main, say,
};
use tokio_util::sync::CancellationToken;

/// A dynamic informer for any resource, found through discovery.
///
/// Without a cluster, runs against an embedded API server with pods and
/// deployments being changed.
#[derive(Debug, clap::Parser)]
#[command(name = "dynamic", version)]
struct Flags {
    /// group/version/resource (apps/v1/deployments), or version/resource for
    /// the core group (v1/pods)
    #[arg(value_name = "RESOURCE", value_parser = parse_resource)]
    resource: GroupVersionResource,
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("dynamic", run)
}

/// `apps/v1/deployments` or `v1/pods`.
fn parse_resource(text: &str) -> Result<GroupVersionResource, String> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [version, resource] if !version.is_empty() && !resource.is_empty() => {
            Ok(GroupVersionResource::new("", *version, *resource))
        }
        [group, version, resource]
            if !group.is_empty() && !version.is_empty() && !resource.is_empty() =>
        {
            Ok(GroupVersionResource::new(*group, *version, *resource))
        }
        _ => Err(format!(
            "{text:?} is not group/version/resource (apps/v1/deployments) or version/resource (v1/pods)"
        )),
    }
}

#[derive(Debug, Default)]
struct Counts {
    adds: AtomicU64,
    updates: AtomicU64,
    deletes: AtomicU64,
}

async fn run(arguments: Flags) -> Result<(), Failure> {
    // From the start: a SIGTERM before the loop must not kill the
    // process outright.
    let _ = clientgo_examples::shutdown();
    let flags = arguments.common;
    let resource = arguments.resource;

    let connection = Connection::open(
        &flags,
        EmbeddedOptions {
            namespaces: 5,
            ..EmbeddedOptions::default()
        }
        .with(SeededResource::pods(200, 10.0))
        .with(SeededResource::deployments(50, 5.0)),
    )
    .await?;

    let mut options = InformerFactoryOptions::default();
    if let Some(namespace) = &flags.namespace {
        options = options.namespace(namespace.clone());
    }
    let factory = DynamicSharedInformerFactory::with_options(connection.client.clone(), options);
    let informer = factory
        .for_group_version_resource(&resource)
        .await
        .map_err(|error| error.to_string())?;
    let counts = Arc::new(Counts::default());
    let (add, update, delete) = (
        Arc::clone(&counts),
        Arc::clone(&counts),
        Arc::clone(&counts),
    );
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::<DynamicObject>::new()
                .on_add(move |_: &Arc<DynamicObject>, _| {
                    add.adds.fetch_add(1, Ordering::Relaxed);
                })
                .on_update(move |_: &Arc<DynamicObject>, _: &Arc<DynamicObject>| {
                    update.updates.fetch_add(1, Ordering::Relaxed);
                })
                .on_delete(move |_: &ObjectOrTombstone<DynamicObject>| {
                    delete.deletes.fetch_add(1, Ordering::Relaxed);
                }),
        )
        .map_err(|error| format!("cannot add the event handler: {error}"))?;

    let stop = CancellationToken::new();
    factory.start(&stop);
    factory
        .wait_for_cache_sync(Duration::from_secs(60))
        .await
        .map_err(|error| format!("the cache did not sync: {error}"))?;
    let kind = informer
        .resource()
        .map(|found| found.kind().to_string())
        .unwrap_or_default();
    say!("watching {} (kind {kind})", resource.resource);

    let deadline = connection.duration.map(|d| tokio::time::Instant::now() + d);
    let mut progress = Progress::new();
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = clientgo_examples::shutdown().cancelled_owned() => break,
        }
        if deadline.is_some_and(|deadline| tokio::time::Instant::now() >= deadline) {
            break;
        }
        progress.show(&format!(
            "cached {} | adds {} | updates {} | deletes {}",
            informer.stats().cached,
            counts.adds.load(Ordering::Relaxed),
            counts.updates.load(Ordering::Relaxed),
            counts.deletes.load(Ordering::Relaxed)
        ));
    }
    progress.finish();

    // Objects per namespace, from the cache.
    let mut per_namespace: BTreeMap<String, usize> = BTreeMap::new();
    for object in informer.lister().list(&LabelSelector::everything()) {
        let namespace = object.metadata.namespace.clone().unwrap_or_default();
        *per_namespace.entry(namespace).or_default() += 1;
    }
    let rows: Vec<(&str, String)> = per_namespace
        .iter()
        .map(|(namespace, count)| {
            let label = if namespace.is_empty() {
                "(cluster-scoped)"
            } else {
                namespace.as_str()
            };
            (label, count.to_string())
        })
        .collect();
    print_table(
        &format!(
            "{} cached by namespace ({} adds, {} updates, {} deletes seen)",
            resource.resource,
            counts.adds.load(Ordering::Relaxed),
            counts.updates.load(Ordering::Relaxed),
            counts.deletes.load(Ordering::Relaxed)
        ),
        &rows,
    );
    factory.shutdown().await;
    Ok(())
}
