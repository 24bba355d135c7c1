//! `operator`: a CronTab operator on the controller runtime. For every
//! CronTab (`src/crontab.rs`, a derived custom resource) it keeps a Job running the
//! CronTab's image with its replicas as parallelism, owned by the CronTab:
//! a changed CronTab changes its Job, a deleted Job comes back, a deleted
//! CronTab takes its Job with it (through the garbage collector, on a
//! real cluster).
//!
//! The operator itself is the first part of this file: the reconcile
//! function and the `main_operator` wiring, about 50 lines. The rest
//! installs the CRD (made from the type) and, against the embedded server, plays a
//! short scene (CronTabs created, changed, a Job deleted) and prints what
//! the operator made.

use std::sync::Arc;
use std::time::Duration;

use clientgo::controller::controllerutil::{ApplyOptions, apply, set_controller_reference};
use clientgo::controller::{Action, Controller, ControllerHandle, Manager, ManagerOptions};
use clientgo::crd::{CrdInstallOptions, CustomResource, install_crds};
use clientgo::rest::{CreateOptions, DeleteOptions, ResourceClient, RestClient, UpdateOptions};
use clientgo_examples::crontab::{CronTab, CronTabSpec};
use clientgo_examples::crontab_webhooks;
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, print_table, run_main, say,
};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio_util::sync::CancellationToken;

type Error = Box<dyn std::error::Error + Send + Sync>;

// ---- The operator --------------------------------------------------------

/// Makes the CronTab's Job what the CronTab says, by server-side apply.
async fn reconcile(crontab: Arc<CronTab>, client: Arc<RestClient>) -> Result<Action, Error> {
    let namespace = crontab.metadata.namespace.clone().unwrap_or_default();
    let name = crontab.metadata.name.clone().unwrap_or_default();
    let container = Container {
        name: "run".into(),
        image: Some(crontab.spec.image.clone()),
        ..Container::default()
    };
    let mut job = Job {
        metadata: ObjectMeta {
            name: Some(format!("{name}-run")),
            namespace: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            parallelism: Some(crontab.spec.replicas),
            template: PodTemplateSpec {
                spec: Some(PodSpec {
                    containers: vec![container],
                    restart_policy: Some("Never".into()),
                    ..PodSpec::default()
                }),
                ..PodTemplateSpec::default()
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    };
    set_controller_reference(crontab.as_ref(), &mut job)?;
    let jobs = ResourceClient::<Job>::namespaced((*client).clone(), &namespace);
    apply(&jobs, &job, &ApplyOptions::new("crontab-operator")).await?;
    say!(
        "reconciled {namespace}/{name}: job {name}-run, parallelism {}",
        crontab.spec.replicas
    );
    Ok(Action::requeue_after(Duration::from_secs(300)))
}

/// The operator: CronTabs reconciled, their Jobs owned.
fn main_operator(client: RestClient) -> Result<(Manager, ControllerHandle), Error> {
    let manager = Manager::new(client.clone(), ManagerOptions::default());
    let handle = Controller::for_::<CronTab>(&manager)
        .owns::<Job>()
        .complete(reconcile, Arc::new(client))?;
    Ok((manager, handle))
}

// ---- Around it: the CRD, and a scene on the embedded server ---------------

/// A CronTab operator built on the controller runtime.
///
/// Keeps one Job per CronTab, owned by it. With no cluster configured it
/// runs against an embedded API server, or a real kube-apiserver started on
/// loopback (--envtest, or when CLIENTGO_ENVTEST_ASSETS or
/// KUBEBUILDER_ASSETS names its binaries), and plays a short scene; against
/// a cluster (which needs the CronTab CRD, created here if you may) it runs
/// until Ctrl-C or --duration.
#[derive(Debug, clap::Parser)]
#[command(name = "operator", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("operator", run)
}

async fn run(arguments: Flags) -> Result<(), Failure> {
    // From the start: a SIGTERM before the loop must not kill the
    // process outright.
    let _ = clientgo_examples::shutdown();
    let flags = arguments.common;
    let connection =
        Connection::open_preferring_envtest(&flags, EmbeddedOptions::default()).await?;
    let client = connection.client.clone();
    install_crd(&client).await?;
    let (manager, handle) = main_operator(client.clone()).map_err(|e| e.to_string())?;
    // Webhooks where kube-apiserver can call this machine: a real one
    // started on loopback (the embedded test server admits without them).
    let webhooks = connection.control_plane.is_some();
    let folder =
        std::env::temp_dir().join(format!("crontab-operator-webhook-{}", std::process::id()));
    if webhooks {
        crontab_webhooks::serve_with(&manager, &client, &folder)
            .await
            .map_err(|error| format!("cannot serve the webhooks: {error}"))?;
        say!("serving the CronTab webhooks (validating, defaulting) on 127.0.0.1");
    }
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (manager, stop) = (manager.clone(), stop.clone());
        async move { manager.run(stop).await }
    });
    if connection.is_local() {
        let namespace = flags.namespace.clone().unwrap_or_else(|| "default".into());
        scene(&client, &namespace, &manager).await?;
        if webhooks {
            webhook_scene(&client, &namespace).await?;
        }
    } else {
        match connection.duration {
            Some(duration) => tokio::time::sleep(duration).await,
            None => clientgo_examples::shutdown().cancelled().await,
        }
    }
    stop.cancel();
    running
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("the manager failed: {e}"))?;
    let _ = std::fs::remove_dir_all(&folder);
    let stats = handle.stats();
    say!(
        "operator stopped: {} reconciles ({} failed)",
        stats.reconciles(),
        stats.errors
    );
    Ok(())
}

/// Installs the CronTab CRD, made from the type (`CronTab::crd()`), by
/// server-side apply, and waits until the server serves it.
async fn install_crd(client: &RestClient) -> Result<(), Failure> {
    install_crds(client, &[CronTab::crd()], &CrdInstallOptions::default())
        .await
        .map_err(|error| format!("cannot install the CRD: {error}"))?;
    say!("installed CustomResourceDefinition {}", CronTab::CRD_NAME);
    Ok(())
}

/// What the webhooks do: a CronTab asking for too many copies refused
/// with the validator's message; an image without a tag defaulted.
async fn webhook_scene(client: &RestClient, namespace: &str) -> Result<(), Failure> {
    let crontabs = ResourceClient::<CronTab>::namespaced(client.clone(), namespace);
    let spec = |image: &str, replicas| CronTabSpec {
        cron_spec: "*/5 * * * *".into(),
        image: image.into(),
        replicas,
    };
    match crontabs
        .create(
            &CreateOptions::default(),
            &CronTab::new("huge", spec("huge:1", 50)).in_namespace(namespace),
        )
        .await
    {
        Err(error) => say!(
            "scene: the webhook refused CronTab huge: {}",
            error
                .status()
                .map(|s| s.message.clone())
                .unwrap_or_default()
        ),
        Ok(_) => return Err("the validating webhook let 50 replicas through".into()),
    }
    let created = crontabs
        .create(
            &CreateOptions::default(),
            &CronTab::new("plain", spec("busybox", 1)).in_namespace(namespace),
        )
        .await
        .map_err(|error| format!("cannot create CronTab plain: {error}"))?;
    say!(
        "scene: the webhook defaulted CronTab plain's image to {}",
        created.spec.image
    );
    Ok(())
}

/// Waits up to 10 s for `done`.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) -> Result<(), Failure> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done().await {
        if tokio::time::Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// CronTabs created and changed, a Job deleted, and what the operator
/// made of it.
async fn scene(client: &RestClient, namespace: &str, manager: &Manager) -> Result<(), Failure> {
    let crontabs = ResourceClient::<CronTab>::namespaced(client.clone(), namespace);
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), namespace);
    for (name, image, replicas) in [("backup", "backup:1.4", 1), ("report", "report:2.0", 2)] {
        let spec = CronTabSpec {
            cron_spec: "0 3 * * *".into(),
            image: image.into(),
            replicas,
        };
        crontabs
            .create(
                &CreateOptions::default(),
                &CronTab::new(name, spec).in_namespace(namespace),
            )
            .await
            .map_err(|error| format!("cannot create CronTab {name}: {error}"))?;
        say!("scene: created CronTab {name}");
    }
    eventually("the manager to be ready", async || manager.is_ready()).await?;
    // A Job as the server has it now (None while missing or unreadable).
    let job = async |name: &str| jobs.get_optional(name).await.ok().flatten();
    eventually("both Jobs", async || {
        job("report-run").await.is_some() && job("backup-run").await.is_some()
    })
    .await?;
    let mut report = crontabs.get("report").await.map_err(|e| e.to_string())?;
    report.spec.replicas = 5;
    crontabs
        .replace("report", &UpdateOptions::default(), &report)
        .await
        .map_err(|e| e.to_string())?;
    say!("scene: report's replicas 2 -> 5");
    jobs.delete("backup-run", &DeleteOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    say!("scene: deleted Job backup-run");
    eventually(
        "report's Job to follow and backup's to come back",
        async || {
            let parallelism = job("report-run")
                .await
                .and_then(|j| j.spec)
                .and_then(|s| s.parallelism);
            parallelism == Some(5) && job("backup-run").await.is_some()
        },
    )
    .await?;
    let listed = jobs
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    let rows: Vec<(String, String)> = listed
        .items
        .iter()
        .map(|job| {
            let owner = job
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|owner| owner.controller == Some(true))
                .map_or("none".to_string(), |o| format!("{} {}", o.kind, o.name));
            let parallelism = job.spec.as_ref().and_then(|s| s.parallelism).unwrap_or(0);
            (
                job.metadata.name.clone().unwrap_or_default(),
                format!("owner {owner}, parallelism {parallelism}"),
            )
        })
        .collect();
    let rows: Vec<(&str, String)> = rows.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    print_table(&format!("Jobs in {namespace}"), &rows);
    Ok(())
}
