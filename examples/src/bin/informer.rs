//! `informer`: client-go's documented Deployment informer example,
//! rewritten: a shared informer factory resyncing every 30 s, a handler
//! printing every add, update and delete, and at the end the deployments of
//! the `default` namespace, listed from the lister (the cache), not from
//! the API server.

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::LabelSelector;
use clientgo_examples::{
    Arguments, COMMON_FLAGS_HELP, CommonFlags, Connection, EmbeddedOptions, Failure,
    SeededResource, describe_delete, print_table, run_main, say, start_and_sync,
};
use clientgo_informers::{
    InformerFactoryOptions, ObjectOrTombstone, ResourceEventHandlerFuncs, SharedInformerFactory,
    meta_namespace_key,
};
use k8s_openapi::api::apps::v1::Deployment;

const HELP: &str = "\
informer: client-go's Deployment informer example.

Usage: informer [FLAGS]

Prints every deployment added, updated (including 30-second resyncs) and
deleted, then lists the default namespace's deployments from the cache.
Without a cluster, runs against an embedded API server with 30 deployments
and a writer changing two of them per second.

Flags:
";

fn main() -> std::process::ExitCode {
    let help = format!("{HELP}{COMMON_FLAGS_HELP}");
    run_main("informer", &help, run)
}

async fn run(mut arguments: Arguments) -> Result<(), Failure> {
    let flags = CommonFlags::take(&mut arguments).map_err(Failure::Usage)?;
    arguments.finish().map_err(Failure::Usage)?;
    let connection = Connection::open(
        &flags,
        EmbeddedOptions {
            namespaces: 3,
            ..EmbeddedOptions::default()
        }
        .with(SeededResource::deployments(30, 2.0)),
    )
    .await?;

    let mut options =
        InformerFactoryOptions::default().with_default_resync(Duration::from_secs(30));
    if let Some(namespace) = &flags.namespace {
        options = options.with_namespace(namespace.clone());
    }
    let factory = SharedInformerFactory::with_options(connection.client.clone(), options);
    let deployments = factory.apps().v1().deployments();
    let informer = deployments.informer();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::<Deployment>::new()
                .on_add(|deployment: &Arc<Deployment>, initial| {
                    let when = if initial { " (initial list)" } else { "" };
                    say!("added {}{when}", meta_namespace_key(deployment.as_ref()));
                })
                .on_update(|old: &Arc<Deployment>, new: &Arc<Deployment>| {
                    let resync = old.metadata.resource_version == new.metadata.resource_version;
                    let what = if resync { "resynced" } else { "updated" };
                    say!(
                        "{what} {} (resourceVersion {})",
                        meta_namespace_key(new.as_ref()),
                        new.metadata.resource_version.as_deref().unwrap_or_default()
                    );
                })
                .on_delete(|deleted: &ObjectOrTombstone<Deployment>| {
                    say!("deleted {}", describe_delete(deleted, meta_namespace_key));
                }),
        )
        .map_err(|error| format!("cannot add the event handler: {error}"))?;

    let _stop = start_and_sync(&factory).await?;

    match connection.duration {
        Some(duration) => {
            tokio::select! {
                _ = tokio::time::sleep(duration) => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        None => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }

    let in_default = deployments
        .lister()
        .deployments("default")
        .list(&LabelSelector::everything());
    let rows: Vec<(&str, String)> = in_default
        .iter()
        .map(|deployment| {
            let replicas = deployment.spec.as_ref().and_then(|spec| spec.replicas);
            (
                deployment.metadata.name.as_deref().unwrap_or_default(),
                format!("replicas {}", replicas.unwrap_or(1)),
            )
        })
        .collect();
    print_table(
        &format!(
            "{} deployments in namespace default (from the lister; {} cached in all)",
            in_default.len(),
            informer.stats().cached
        ),
        &rows,
    );
    factory.shutdown().await;
    Ok(())
}
