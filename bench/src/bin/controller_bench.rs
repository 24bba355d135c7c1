//! `cargo run --release -p clientgo-bench --bin controller-bench [-- FLAGS]`:
//! the controller runtime against kube-rs's `Controller` doing the same
//! job (BENCHMARKS.md, "The controller runtime against kube-rs").
//!
//! N Deployments (the parents) are seeded in clientgo-testing's API
//! server, or with `--envtest` in a real kube-apiserver (envtest's
//! binaries: `CLIENTGO_ENVTEST_ASSETS`, `KUBEBUILDER_ASSETS` or
//! `../shared/envtest`); each client process runs a controller that keeps, for every
//! parent, a ConfigMap (its child, owned by it) holding the parent's
//! replicas, written by server-side apply. Measured per run: the time from
//! the process's start until every parent was reconciled once (and so has
//! its child), the RSS then, and the reconciles per second while the
//! server changes every parent's replicas (until every parent was
//! reconciled at its new value). Both controllers run 8 reconciles at
//! once.
//!
//! For a heap profile, `E2E_CLIENT_WRAPPER` and `E2E_EXIT_AT_SYNCED` work
//! as in the e2e bench; a client exits once every parent was reconciled.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::GroupResource;
use clientgo_bench::protocol::{CLIENT_WRAPPER, EXIT_AT_SYNCED, wrapped_command};
use clientgo_bench::report::median;
use clientgo_bench::{BoxError, real_server};
use clientgo_testing::process_cpu::cpu_seconds;
use clientgo_testing::process_memory::{rss_file_mib, rss_mib};
use clientgo_testing::{ObjectKey, TestApiServer};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Reconciles at once, in both controllers.
const WORKERS: usize = 8;

/// The controller runtime against kube-rs's Controller.
#[derive(Debug, clap::Parser)]
#[command(name = "controller-bench", version)]
struct Flags {
    /// Parents seeded
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    parents: usize,
    /// Runs per client
    #[arg(long, value_name = "R", default_value_t = 3)]
    runs: usize,
    /// Comma-separated clients: clientgo, kube-rs
    #[arg(long, value_name = "A,B", value_delimiter = ',', default_values_t = ["clientgo".to_string(), "kube-rs".to_string()])]
    clients: Vec<String>,
    /// The process's part
    #[arg(long, hide = true)]
    role: Option<String>,
    /// With --role client: which
    #[arg(long, hide = true)]
    client: Option<String>,
    /// With --role client: the server's URL
    #[arg(long, hide = true)]
    url: Option<String>,
    /// Seeds a real kube-apiserver (envtest) instead of the test server
    #[arg(long)]
    envtest: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// What one client run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Figures {
    /// From the process's start until every parent was reconciled once.
    all_reconciled_seconds: f64,
    /// RSS growth then, MiB.
    rss_mib: f64,
    /// Of it, file-backed pages (the program's code paged in), MiB.
    #[serde(default)]
    rss_file_mib: f64,
    /// Reconciles per second while every parent changed once.
    reconciles_per_second: f64,
    /// Reconciles in all.
    reconciles: u64,
    /// The client's CPU time (user and system) per reconcile over the
    /// same window as `reconciles_per_parent`, µs: what a reconcile costs the client itself,
    /// apart from the server it shares the cores with.
    #[serde(default)]
    cpu_us_per_reconcile: f64,
    /// Reconciles per parent for one change of every parent: from when the
    /// first phase's reconciles were done until none ran for 300 ms after
    /// the last parent converged (each change, and the child's change its
    /// apply made).
    #[serde(default)]
    reconciles_per_parent: f64,
    /// The server's CPU time per parent over the same phase, µs (filled
    /// in by the orchestrator): the churn's writes, the applies and the
    /// watch events they make.
    #[serde(default)]
    server_cpu_us_per_parent: f64,
}

fn main() -> Result<(), BoxError> {
    let flags = <Flags as clap::Parser>::parse();
    clientgo_testing::install_log_subscriber("warn");
    match flags.role.as_deref() {
        Some("server") if flags.envtest => real_server(flags.parents),
        Some("server") => server(flags.parents),
        Some("client") => {
            let runtime = clientgo_bench::two_worker_runtime()?;
            let url = flags.url.clone().ok_or("--role client needs --url")?;
            let figures = runtime.block_on(client(
                flags.client.as_deref().unwrap_or_default(),
                &url,
                flags.parents,
            ))?;
            println!("result {}", serde_json::to_string(&figures)?);
            Ok(())
        }
        _ => orchestrate(&flags),
    }
}

// ---- The server -------------------------------------------------------------

fn deployment_json(index: usize, replicas: u64) -> serde_json::Value {
    let name = format!("app-{index}");
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": format!("ns-{}", index % 20), "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
            }
        }
    })
}

/// Seeds the parents, then carries out `churn` (every parent's replicas
/// to 2) and `reset` (replicas back to 1, every child deleted) orders.
fn server(parents: usize) -> Result<(), BoxError> {
    let runtime = clientgo_bench::two_worker_runtime()?;
    let server = runtime.block_on(
        TestApiServer::builder()
            .history_limit(4 * parents + 1_000)
            .encode_protobuf_on_write(true)
            .start(),
    )?;
    let deployments = GroupResource::new("apps", "deployments");
    let config_maps = GroupResource::new("", "configmaps");
    let mut keys = Vec::with_capacity(parents);
    for index in 0..parents {
        let namespace = format!("ns-{}", index % 20);
        let stored =
            server
                .storage()
                .create(&deployments, &namespace, deployment_json(index, 1))?;
        keys.push(ObjectKey::new(
            deployments.clone(),
            namespace,
            stored.key.name.clone(),
        ));
    }
    println!("ready {}", server.url());
    std::io::stdout().flush()?;
    for line in std::io::stdin().lock().lines() {
        let replicas = match line?.trim() {
            "churn" => 2,
            "reset" => {
                let (children, _) =
                    server
                        .storage()
                        .list(&config_maps, None, clientgo_testing::ReadAt::Latest)?;
                for child in children.iter() {
                    let _ = server
                        .storage()
                        .delete(&child.key, &clientgo_testing::Preconditions::default());
                }
                1
            }
            other => return Err(format!("unknown order {other:?}").into()),
        };
        for key in &keys {
            server.storage().modify(key, |parent| {
                parent["spec"]["replicas"] = json!(replicas);
            })?;
        }
        println!("done");
        std::io::stdout().flush()?;
    }
    Ok(())
}

/// [`server`] on a real kube-apiserver: seeds the parents through its API
/// (64 writes in flight), says where its kubeconfig is, and carries out
/// the orders the same way, by patches and deletes.
fn real_server(parents: usize) -> Result<(), BoxError> {
    use clientgo_rest::{CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient};

    let runtime = clientgo_bench::two_worker_runtime()?;
    runtime.block_on(async {
        let plane = real_server::start().await?;
        let client = plane.client()?;
        real_server::create_namespaces(&client, "ns-", 20).await?;
        let deployments = |index: usize| {
            ResourceClient::<Deployment>::namespaced(client.clone(), &format!("ns-{}", index % 20))
        };
        real_server::for_each_index(parents, |index| {
            let deployment: Deployment =
                serde_json::from_value(deployment_json(index, 1)).unwrap_or_default();
            let deployments = deployments(index);
            async move {
                deployments
                    .create(&CreateOptions::default(), &deployment)
                    .await
                    .map(drop)
            }
        })
        .await?;
        let kubeconfig = plane.write_kubeconfig()?;
        println!(
            "ready {}{} {}",
            real_server::KUBECONFIG,
            kubeconfig.display(),
            real_server::pids_word(&plane)
        );
        std::io::stdout().flush()?;
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin());
        loop {
            use tokio::io::AsyncBufReadExt;
            let mut line = String::new();
            if lines.read_line(&mut line).await? == 0 {
                return Ok(());
            }
            let replicas = match line.trim() {
                "churn" => 2,
                "reset" => {
                    real_server::for_each_index(parents, |index| {
                        let children = ResourceClient::<ConfigMap>::namespaced(
                            client.clone(),
                            &format!("ns-{}", index % 20),
                        );
                        async move {
                            match children
                                .delete(&format!("app-{index}-child"), &DeleteOptions::default())
                                .await
                            {
                                Err(error) if !error.is_not_found() => Err(error),
                                _ => Ok(()),
                            }
                        }
                    })
                    .await?;
                    1
                }
                other => return Err(format!("unknown order {other:?}").into()),
            };
            let patch = Patch::Merge(json!({"spec": {"replicas": replicas}}));
            real_server::for_each_index(parents, |index| {
                let deployments = deployments(index);
                let patch = &patch;
                async move {
                    deployments
                        .patch(&format!("app-{index}"), &PatchOptions::default(), patch)
                        .await
                        .map(drop)
                }
            })
            .await?;
            println!("done");
            std::io::stdout().flush()?;
        }
    })
}

// ---- The clients ------------------------------------------------------------

/// What the reconciles saw: per parent, the replicas last reconciled, and
/// the times the phases ended.
#[derive(Default)]
struct Seen {
    replicas: HashMap<String, i32>,
    at_one: usize,
    at_two: usize,
    reconciles: u64,
    first_at_two: Option<Instant>,
    all_at_one: Option<Instant>,
    all_at_two: Option<Instant>,
}

struct Shared {
    seen: Mutex<Seen>,
    parents: usize,
}

impl Shared {
    /// Records a reconcile of `key` at `replicas`.
    fn reconciled(&self, key: String, replicas: i32) {
        let mut seen = self.seen.lock();
        seen.reconciles += 1;
        let before = seen.replicas.insert(key, replicas);
        if before == Some(replicas) {
            return;
        }
        let now = Instant::now();
        match replicas {
            1 => {
                seen.at_one += 1;
                if seen.at_one == self.parents {
                    seen.all_at_one = Some(now);
                }
            }
            _ => {
                seen.first_at_two.get_or_insert(now);
                seen.at_two += 1;
                if seen.at_two == self.parents {
                    seen.all_at_two = Some(now);
                }
            }
        }
    }
}

/// The child of `parent`: its replicas, owned by it.
fn child(parent: &Deployment) -> ConfigMap {
    let name = parent.metadata.name.clone().unwrap_or_default();
    let replicas = parent.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{name}-child")),
            namespace: parent.metadata.namespace.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name,
                uid: parent.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        data: Some([("replicas".to_string(), replicas.to_string())].into()),
        ..ConfigMap::default()
    }
}

fn key_and_replicas(parent: &Deployment) -> (String, i32) {
    (
        format!(
            "{}/{}",
            parent.metadata.namespace.as_deref().unwrap_or_default(),
            parent.metadata.name.as_deref().unwrap_or_default()
        ),
        parent.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0),
    )
}

async fn client(which: &str, url: &str, parents: usize) -> Result<Figures, BoxError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let baseline = rss_mib();
    let file_baseline = rss_file_mib();
    let started = Instant::now();
    let shared = Arc::new(Shared {
        seen: Mutex::new(Seen::default()),
        parents,
    });
    let stop = tokio_util::sync::CancellationToken::new();
    let running = match which {
        "clientgo" => clientgo_controller(url, Arc::clone(&shared), stop.clone())?,
        "kube-rs" => kube_rs_controller(url, Arc::clone(&shared), stop.clone()).await?,
        other => return Err(format!("unknown client {other:?}").into()),
    };
    let deadline = Instant::now() + Duration::from_secs(600);
    let all_at_one = wait_for(deadline, || shared.seen.lock().all_at_one).await?;
    let mut figures = Figures {
        all_reconciled_seconds: (all_at_one - started).as_secs_f64(),
        rss_mib: rss_mib() - baseline,
        rss_file_mib: rss_file_mib() - file_baseline,
        ..Figures::default()
    };
    if std::env::var_os(EXIT_AT_SYNCED).is_some() {
        // For a heap profile of the moment the RSS was read.
        println!("reconciled");
        std::io::stdout().flush()?;
        std::process::exit(0);
    }
    // The children's first changes are still being reconciled: the churn
    // phase's counts start once they are done.
    let reconciles_before = settled(deadline, &shared).await?;
    let cpu_before = cpu_seconds();
    println!("reconciled");
    std::io::stdout().flush()?;
    let all_at_two = wait_for(deadline, || shared.seen.lock().all_at_two).await?;
    let (first, reconciles) = {
        let seen = shared.seen.lock();
        (seen.first_at_two.unwrap_or(all_at_two), seen.reconciles)
    };
    let span = (all_at_two - first).as_secs_f64().max(1e-6);
    figures.reconciles_per_second = parents as f64 / span;
    figures.reconciles = reconciles;
    let churn_reconciles = settled(deadline, &shared)
        .await?
        .saturating_sub(reconciles_before);
    figures.cpu_us_per_reconcile =
        (cpu_seconds() - cpu_before) * 1e6 / churn_reconciles.max(1) as f64;
    figures.reconciles_per_parent = churn_reconciles as f64 / parents as f64;
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(30), running).await;
    Ok(figures)
}

/// Waits until no reconcile has run for 300 ms, and returns the count of
/// reconciles so far.
async fn settled(deadline: Instant, shared: &Shared) -> Result<u64, BoxError> {
    let mut last = shared.seen.lock().reconciles;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = shared.seen.lock().reconciles;
        if now == last {
            return Ok(now);
        }
        if Instant::now() > deadline {
            return Err("timed out".into());
        }
        last = now;
    }
}

async fn wait_for(
    deadline: Instant,
    mut done: impl FnMut() -> Option<Instant>,
) -> Result<Instant, BoxError> {
    loop {
        if let Some(at) = done() {
            return Ok(at);
        }
        if Instant::now() > deadline {
            return Err("timed out".into());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// clientgo-rs: the controller runtime with its defaults (among them, no
/// client-side rate limit, as kube-rs has none) and 8 workers.
fn clientgo_controller(
    url: &str,
    shared: Arc<Shared>,
    stop: tokio_util::sync::CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, BoxError> {
    use clientgo_controller::controllerutil::{ApplyOptions, apply};
    use clientgo_controller::{Action, Controller, Manager, ManagerOptions};
    use clientgo_rest::{ResourceClient, RestClient};

    let client = RestClient::new(real_server::clientgo_config(url)?)?;
    let manager = Manager::new(client.clone(), ManagerOptions::default());
    let context = Arc::new((client, shared));
    Controller::for_::<Deployment>(&manager)
        .owns::<ConfigMap>()
        .max_concurrent_reconciles(WORKERS)
        .complete(
            |parent: Arc<Deployment>, context: Arc<(RestClient, Arc<Shared>)>| async move {
                let child = child(&parent);
                let namespace = child.metadata.namespace.clone().unwrap_or_default();
                let children =
                    ResourceClient::<ConfigMap>::namespaced(context.0.clone(), &namespace);
                apply(&children, &child, &ApplyOptions::new("bench"))
                    .await
                    .map_err(|e| e.to_string())?;
                let (key, replicas) = key_and_replicas(&parent);
                context.1.reconciled(key, replicas);
                Ok::<_, String>(Action::done())
            },
            context,
        )?;
    Ok(tokio::spawn(async move {
        if let Err(error) = manager.run(stop).await {
            eprintln!("clientgo: {error}");
        }
    }))
}

/// kube-rs: `Controller::new(..).owns(..).run(..)` with its defaults but
/// for 8 reconciles at once.
async fn kube_rs_controller(
    url: &str,
    shared: Arc<Shared>,
    stop: tokio_util::sync::CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, BoxError> {
    use futures_util::StreamExt;
    use kube::api::{Api, Patch, PatchParams};
    use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
    use kube::runtime::watcher;

    let config = real_server::kube_config(url).await?;
    let client = kube::Client::try_from(config)?;
    let parents = Api::<Deployment>::all(client.clone());
    let children = Api::<ConfigMap>::all(client.clone());
    let context = Arc::new((client, shared));
    let controller = Controller::new(parents, watcher::Config::default())
        .owns(children, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(WORKERS as u16))
        .graceful_shutdown_on(async move { stop.cancelled().await })
        .run(
            |parent: Arc<Deployment>, context: Arc<(kube::Client, Arc<Shared>)>| async move {
                let child = child(&parent);
                let namespace = child.metadata.namespace.clone().unwrap_or_default();
                let name = child.metadata.name.clone().unwrap_or_default();
                Api::<ConfigMap>::namespaced(context.0.clone(), &namespace)
                    .patch(
                        &name,
                        &PatchParams::apply("bench").force(),
                        &Patch::Apply(&child),
                    )
                    .await?;
                let (key, replicas) = key_and_replicas(&parent);
                context.1.reconciled(key, replicas);
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::requeue(Duration::from_millis(100)),
            context,
        )
        .for_each(|_| async {});
    Ok(tokio::spawn(controller))
}

// ---- The orchestrator -----------------------------------------------------------

struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Process {
    /// Starts this program with `args`, put after the words of `wrapper`
    /// when given (a profiler; see [`CLIENT_WRAPPER`]).
    fn start(args: &[&str], wrapper: Option<&str>) -> Result<Process, BoxError> {
        let mut child = wrapped_command(std::env::current_exe()?, wrapper.unwrap_or_default())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Process {
            child,
            stdin,
            stdout,
        })
    }

    /// Waits up to 30 s for the process to end on its own (so a profiler
    /// wrapping it writes its data), then kills it.
    fn wait_for_exit(mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn line(&mut self) -> Result<String, BoxError> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err("the process ended".into());
        }
        Ok(line.trim().to_string())
    }

    fn order(&mut self, order: &str) -> Result<(), BoxError> {
        let stdin = self.stdin.as_mut().ok_or("no stdin")?;
        writeln!(stdin, "{order}")?;
        stdin.flush()?;
        match self.line()?.as_str() {
            "done" => Ok(()),
            other => Err(format!("the server answered {other:?}").into()),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn orchestrate(flags: &Flags) -> Result<(), BoxError> {
    let parents = flags.parents.to_string();
    eprintln!("seeding {parents} parents...");
    let mut server_args = vec!["--role", "server", "--parents", &parents];
    if flags.envtest {
        server_args.push("--envtest");
    }
    let mut server = Process::start(&server_args, None)?;
    let ready = server.line()?;
    let words: Vec<&str> = ready.split_whitespace().collect();
    let url = match words.as_slice() {
        ["ready", url, ..] => url.to_string(),
        _ => return Err(format!("the server said {ready:?}").into()),
    };
    // The test server's process, or kube-apiserver's and etcd's (not the
    // process seeding and churning them, which is the load).
    let server_pids = real_server::server_pids(&words, server.child.id());
    let mut results: HashMap<String, Vec<Figures>> = HashMap::new();
    let count = flags.clients.len();
    for run in 1..=flags.runs {
        // Each round starts one client further on (see the e2e
        // orchestrator): the server's periodic costs land on each in turn.
        for which in (0..count).map(|i| &flags.clients[(i + run - 1) % count.max(1)]) {
            eprintln!("run {run}/{}: {which}", flags.runs);
            let wrapper = std::env::var(CLIENT_WRAPPER).ok();
            let mut client = Process::start(
                &[
                    "--role",
                    "client",
                    "--client",
                    which,
                    "--url",
                    &url,
                    "--parents",
                    &parents,
                ],
                wrapper.as_deref(),
            )?;
            // Lines before it are a wrapper's (a profiler's) own.
            loop {
                match client.line()?.as_str() {
                    "reconciled" => break,
                    other if wrapper.is_some() => eprintln!("  {which}: {other}"),
                    other => return Err(format!("{which} said {other:?}").into()),
                }
            }
            let server_cpu = real_server::cpu_seconds_of(&server_pids);
            server.order("churn")?;
            let result = client.line()?;
            let mut figures: Figures = serde_json::from_str(
                result
                    .strip_prefix("result ")
                    .ok_or_else(|| format!("{which} said {result:?}"))?,
            )?;
            figures.server_cpu_us_per_parent =
                (real_server::cpu_seconds_of(&server_pids) - server_cpu) * 1e6
                    / flags.parents as f64;
            eprintln!(
                "  all reconciled {:.2} s, {:.0} reconciles/s, {:.0} MiB ({:.1} MiB of code paged in)",
                figures.all_reconciled_seconds,
                figures.reconciles_per_second,
                figures.rss_mib,
                figures.rss_file_mib
            );
            results.entry(which.clone()).or_default().push(figures);
            client.wait_for_exit();
            server.order("reset")?;
        }
    }
    let medians = |which: &str, read: fn(&Figures) -> f64| {
        median(
            &results
                .get(which)
                .map(|runs| runs.iter().map(read).collect::<Vec<_>>())
                .unwrap_or_default(),
        )
    };
    // The median and, over several runs, the lowest and highest.
    let spread = |which: &str, read: fn(&Figures) -> f64, decimals: usize| {
        let values: Vec<f64> = results
            .get(which)
            .map(|runs| runs.iter().map(read).collect())
            .unwrap_or_default();
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let middle = median(&values);
        if values.len() > 1 {
            format!("{middle:.decimals$} ({low:.decimals$}–{high:.decimals$})")
        } else {
            format!("{middle:.decimals$}")
        }
    };
    println!(
        "{} parents, each owning one child; {} reconciles at once; {}; median (lowest–highest) of {} runs",
        flags.parents,
        WORKERS,
        if flags.envtest {
            "a real kube-apiserver (envtest)"
        } else {
            "the test server"
        },
        flags.runs
    );
    println!();
    println!(
        "| client | all reconciled s | RSS MiB | of it, code paged in MiB | reconciles/s under churn | client CPU µs per reconcile | reconciles per parent | server CPU µs per parent |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for which in &flags.clients {
        println!(
            "| {which} | {} | {} | {} | {} | {} | {} | {} |",
            spread(which, |f| f.all_reconciled_seconds, 2),
            spread(which, |f| f.rss_mib, 0),
            spread(which, |f| f.rss_file_mib, 1),
            spread(which, |f| f.reconciles_per_second, 0),
            spread(which, |f| f.cpu_us_per_reconcile, 0),
            spread(which, |f| f.reconciles_per_parent, 2),
            spread(which, |f| f.server_cpu_us_per_parent, 0)
        );
    }
    if results.contains_key("clientgo") && results.contains_key("kube-rs") {
        let ratio =
            |read: fn(&Figures) -> f64| medians("clientgo", read) / medians("kube-rs", read);
        let verdict = |met: bool| if met { "met" } else { "MISSED" };
        let time = ratio(|f| f.all_reconciled_seconds);
        let rate = ratio(|f| f.reconciles_per_second);
        let memory = ratio(|f| f.rss_mib);
        let cpu = ratio(|f| f.cpu_us_per_reconcile);
        println!();
        println!(
            "target: time to all reconciled {time:.2}x kube-rs's (target at most 0.5x: {})",
            verdict(time <= 0.5)
        );
        println!(
            "target: reconciles/s under churn {rate:.2}x kube-rs's (target at least 2x: {})",
            verdict(rate >= 2.0)
        );
        println!(
            "target: RSS {memory:.2}x kube-rs's (target at most 0.3x: {})",
            verdict(memory <= 0.3)
        );
        println!(
            "target: client CPU per reconcile under churn {cpu:.2}x kube-rs's, with {rate:.2}x its rate (target at most 0.8x, at least 1x: {})",
            verdict(cpu <= 0.8 && rate >= 1.0)
        );
    }
    Ok(())
}
