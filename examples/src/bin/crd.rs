//! `crd`: a custom resource end to end. The CronTab type is derived from
//! its spec struct (`src/crontab.rs`); its CRD (`CronTab::crd()`) is
//! installed by server-side apply and waited for; its informer and lister
//! are the factory's own (`factory.informer_for::<CronTab>()`, no code
//! generator); then a few CronTabs are created, changed and deleted
//! through the API while a handler prints what the informer sees, and the
//! cache is listed at the end. `--yaml` prints the CRD for `kubectl apply
//! -f -` instead.

use std::sync::Arc;
use std::time::Duration;

use clientgo::apimachinery::LabelSelector;
use clientgo::crd::{CrdInstallOptions, CustomResource, install_crds, to_yaml};
use clientgo::informers::{ObjectOrTombstone, ResourceEventHandlerFuncs, SharedInformerFactory};
use clientgo::rest::{CreateOptions, DeleteOptions, ResourceClient, UpdateOptions};
use clientgo_examples::crontab::{CronTab, CronTabSpec};
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, describe_delete, print_table, run_main, say,
    start_and_sync,
};

/// A custom resource derived from its spec struct.
///
/// Installs the CronTab CRD (stable.example.com/v1), starts a CronTab
/// informer, creates, updates and deletes three
/// CronTabs in the namespace (default: default) and prints what the
/// informer sees. Against a cluster you need the right to create CRDs; the
/// CRD is left in place.
#[derive(Debug, clap::Parser)]
#[command(name = "crd", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
    /// Print the CRD as YAML (for `kubectl apply -f -`) and exit.
    #[arg(long)]
    yaml: bool,
}

fn main() -> std::process::ExitCode {
    run_main("crd", run)
}

fn describe(crontab: &CronTab) -> String {
    format!(
        "{} (schedule {:?}, image {:?})",
        crontab.metadata.name.as_deref().unwrap_or_default(),
        crontab.spec.cron_spec,
        crontab.spec.image
    )
}

async fn run(arguments: Flags) -> Result<(), Failure> {
    if arguments.yaml {
        let yaml =
            to_yaml(&CronTab::crd()).map_err(|error| format!("cannot print the CRD: {error}"))?;
        say!("{}", yaml.trim_end());
        return Ok(());
    }
    let flags = arguments.common;
    let connection = Connection::open(&flags, EmbeddedOptions::default()).await?;
    let client = connection.client.clone();
    let namespace = flags.namespace.clone().unwrap_or_else(|| "default".into());

    // The CRD, from the type itself.
    install_crds(&client, &[CronTab::crd()], &CrdInstallOptions::default())
        .await
        .map_err(|error| format!("cannot install the CRD: {error}"))?;
    say!("installed CustomResourceDefinition {}", CronTab::CRD_NAME);

    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    factory
        .informer_for::<CronTab>()
        .add_event_handler(
            ResourceEventHandlerFuncs::<CronTab>::new()
                .on_add(|crontab: &Arc<CronTab>, _| say!("informer: added {}", describe(crontab)))
                .on_update(|_: &Arc<CronTab>, new: &Arc<CronTab>| {
                    say!("informer: updated {}", describe(new));
                })
                .on_delete(|deleted: &ObjectOrTombstone<CronTab>| {
                    say!("informer: deleted {}", describe_delete(deleted, describe));
                }),
        )
        .map_err(|error| format!("cannot add the event handler: {error}"))?;
    // A new CRD takes a moment to be served; the reflector retries.
    let _stop = start_and_sync(&factory).await?;

    let api = ResourceClient::<CronTab>::namespaced(client, &namespace);
    let schedules = [
        ("nightly-backup", "0 3 * * *", "backup:1.4"),
        ("hourly-report", "0 * * * *", "report:2.0"),
        ("cache-warmer", "*/5 * * * *", "warmer:0.9"),
    ];
    let pause = Duration::from_millis(300);
    for (name, schedule, image) in schedules {
        let crontab = CronTab::new(
            name,
            CronTabSpec {
                cron_spec: schedule.into(),
                image: image.into(),
                replicas: 1,
            },
        )
        .in_namespace(&namespace);
        match api.create(&CreateOptions::default(), &crontab).await {
            Ok(_) => say!("api: created {name}"),
            Err(error) if error.status().is_some_and(|s| s.is_already_exists()) => {
                say!("api: {name} already exists");
            }
            Err(error) => return Err(format!("cannot create CronTab {name}: {error}").into()),
        }
        tokio::time::sleep(pause).await;
    }
    let mut changed = api
        .get("hourly-report")
        .await
        .map_err(|error| format!("cannot read CronTab hourly-report: {error}"))?;
    changed.spec.cron_spec = "30 * * * *".into();
    api.replace("hourly-report", &UpdateOptions::default(), &changed)
        .await
        .map_err(|error| format!("cannot update CronTab hourly-report: {error}"))?;
    say!("api: moved hourly-report to half past");
    tokio::time::sleep(pause).await;
    api.delete("cache-warmer", &DeleteOptions::default())
        .await
        .map_err(|error| format!("cannot delete CronTab cache-warmer: {error}"))?;
    say!("api: deleted cache-warmer");

    // Wait until the cache shows the last write (or the duration ends).
    let deadline =
        tokio::time::Instant::now() + connection.duration.unwrap_or(Duration::from_secs(20));
    let lister = factory.lister_for::<CronTab>();
    while lister.namespace(&namespace).get("cache-warmer").is_some()
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cached = lister
        .namespace(&namespace)
        .list(&LabelSelector::everything());
    let rows: Vec<(&str, String)> = cached
        .iter()
        .map(|crontab| {
            (
                crontab.metadata.name.as_deref().unwrap_or_default(),
                format!("{:?} {}", crontab.spec.cron_spec, crontab.spec.image),
            )
        })
        .collect();
    print_table(
        &format!("{} CronTabs in {namespace} (from the lister)", cached.len()),
        &rows,
    );
    // Leave a cluster as it was found, apart from the CRD.
    for (name, _, _) in schedules {
        let _ = api.delete(name, &DeleteOptions::default()).await;
    }
    factory.shutdown().await;
    Ok(())
}
