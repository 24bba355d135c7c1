//! `informer`: client-go's Deployment informer example, self-contained (copy
//! it into a crate with clap, clientgo-informers, clientgo-rest,
//! clientgo-testing, k8s-openapi and tokio). A factory resyncing every 30 s,
//! a handler printing every add, update and delete, and at the end the
//! `default` namespace's deployments, read from the cache.

// An example prints what it sees.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use clientgo::apimachinery::{GroupResource, LabelSelector};
use clientgo::informers::{
    InformerFactoryOptions, ObjectOrTombstone, ResourceEventHandlerFuncs, SharedInformerFactory,
    meta_namespace_key,
};
use clientgo::rest::{Config, RestClient};
use clientgo::testing::{ChurnOptions, ChurnWriter, TestApiServer, realistic_deployment};
use k8s_openapi::api::apps::v1::Deployment;
use tokio_util::sync::CancellationToken;

/// Prints every deployment added, updated (30-second resyncs included) and
/// deleted, then lists the default namespace's deployments from the cache.
#[derive(Parser)]
#[command(name = "informer", version)]
struct Flags {
    /// The cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config,
    /// in-cluster, else the embedded server).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Use an embedded API server with 30 deployments, two changed per second.
    #[arg(long)]
    embedded: bool,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long, value_name = "SECONDS")]
    duration: Option<u64>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run(Flags::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("informer: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    let _ = clientgo_examples::shutdown();
    // A cluster when one is named or found, else an embedded API server.
    let cluster = match &flags.kubeconfig {
        Some(path) => Some(Config::from_kubeconfig_file(path)?),
        None if flags.embedded => None,
        None => Config::infer().ok(),
    };
    let mut _embedded = None;
    let config = match cluster {
        Some(config) => config,
        None => {
            let server = TestApiServer::builder().start().await?;
            let deployments = GroupResource::new("apps", "deployments");
            for index in 0..30 {
                server.storage().create(
                    &deployments,
                    "default",
                    realistic_deployment(index, "default"),
                )?;
            }
            let churn = ChurnOptions::default()
                .rate(2.0)
                .namespaces(1)
                .first_index(30);
            let writer = ChurnWriter::start(
                server.storage().clone(),
                deployments,
                realistic_deployment,
                churn,
            );
            let config = Config::new(server.url());
            _embedded = Some((server, writer));
            config
        }
    };
    let options = InformerFactoryOptions::default().resync_period(Duration::from_secs(30));
    let factory = SharedInformerFactory::with_options(RestClient::new(config)?, options);
    let deployments = factory.apps().v1().deployments();
    deployments.informer().add_event_handler(
        ResourceEventHandlerFuncs::<Deployment>::new()
            .on_add(|new: &Arc<Deployment>, initial| {
                let initial = if initial { " (initial list)" } else { "" };
                println!("added {}{initial}", meta_namespace_key(&**new));
            })
            .on_update(|_, new: &Arc<Deployment>| {
                println!("updated {}", meta_namespace_key(&**new))
            })
            .on_delete(|old: &ObjectOrTombstone<Deployment>| {
                let key = old.object().map(|old| meta_namespace_key(&**old));
                println!("deleted {}", key.unwrap_or_default());
            }),
    )?;
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
    match flags.duration {
        Some(seconds) => tokio::time::sleep(Duration::from_secs(seconds)).await,
        None => clientgo_examples::shutdown().cancelled().await,
    }
    let in_default = deployments
        .lister()
        .deployments("default")
        .list(&LabelSelector::everything());
    println!(
        "{} deployments in namespace default (from the lister)",
        in_default.len()
    );
    stop.cancel();
    factory.shutdown().await;
    Ok(())
}
