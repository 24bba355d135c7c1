//! `cargo run --release -p clientgo-bench --bin sharded [-- FLAGS]`: the
//! memory of a sharded controller's replicas against one unsharded
//! replica (BENCHMARKS.md, "Sharded replicas").
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::GroupResource;
use clientgo_bench::BoxError;
use clientgo_informers::{SharedIndexInformer, SharedIndexInformerOptions};
use clientgo_leaderelection::{LeaderElectionConfig, ShardElector, ShardElectorOptions};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_testing::{TestApiServer, process_memory, realistic_pod};
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// Seeds N realistic pods in the test server (with `ShardedListAndWatch`
/// on), then for each replica count starts that many replica processes
/// of a sharded controller (a compact pod informer per shard held) and
/// reports, once every pod is cached by one of them, the time it took
/// and each replica's resident memory; first one unsharded replica (one
/// pod informer, no shards), the baseline.
#[derive(Debug, clap::Parser)]
#[command(name = "sharded", version)]
struct Flags {
    /// Pods seeded
    #[arg(long, value_name = "N", default_value_t = 50_000)]
    pods: usize,
    /// Replica counts to measure
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', default_values_t = [1, 2, 4])]
    replicas: Vec<usize>,
    /// Shards
    #[arg(long, value_name = "S", default_value_t = 16)]
    shards: u32,
    /// Run as one replica (unsharded with `--shards 0`)
    #[arg(long, hide = true)]
    replica: Option<String>,
    /// With --replica: the server's URL
    #[arg(long, hide = true)]
    url: Option<String>,
    /// With --replica: the leases' name prefix
    #[arg(long, hide = true)]
    lease: Option<String>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> Result<(), BoxError> {
    let flags = <Flags as clap::Parser>::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    match flags.replica.clone() {
        Some(identity) => runtime.block_on(replica(&flags, identity)),
        None => runtime.block_on(orchestrate(&flags)),
    }
}

/// One replica: prints `STATE held=N cached=N rss=MiB` four times a
/// second until its stdin closes.
async fn replica(flags: &Flags, identity: String) -> Result<(), BoxError> {
    let url = flags.url.clone().ok_or("--replica needs --url")?;
    let client = RestClient::new(Config::new(url))?;
    let caches: Arc<Mutex<BTreeMap<u32, SharedIndexInformer<Pod>>>> = Arc::default();
    let stop = tokio_util::sync::CancellationToken::new();
    let mut controller = None;
    if flags.shards == 0 {
        let informer = SharedIndexInformer::from_client(
            ResourceClient::<Pod>::all(client),
            SharedIndexInformerOptions::default(),
        );
        caches.lock().insert(0, informer.clone());
        let stop = stop.clone();
        tokio::spawn(async move { informer.run(stop).await });
    } else {
        let election = LeaderElectionConfig::default()
            .lease_duration(Duration::from_secs(4))
            .renew_deadline(Duration::from_secs(3))
            .retry_period(Duration::from_millis(500));
        let config = ShardElectorOptions::new("default", flags.lease.clone().unwrap_or_default())
            .shards(flags.shards)
            .election(election);
        let (work_client, work_caches) = (client.clone(), Arc::clone(&caches));
        controller = Some(ShardElector::start(
            client,
            identity,
            config,
            move |shard, stop| {
                let informer = SharedIndexInformer::from_client(
                    ResourceClient::<Pod>::all(work_client.clone()),
                    SharedIndexInformerOptions::default().shard_selector(shard.selector.clone()),
                );
                work_caches.lock().insert(shard.index, informer.clone());
                let caches = Arc::clone(&work_caches);
                async move {
                    informer.run(stop).await;
                    caches.lock().remove(&shard.index);
                }
            },
        )?);
    }
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            line = stdin.next_line() => if !matches!(line, Ok(Some(_))) { break },
            _ = tick.tick() => {
                let held = controller.as_ref().map_or(1, |c| c.held().len());
                let cached: usize = caches.lock().values().map(|informer| informer.stats().cached).sum();
                println!("STATE held={held} cached={cached} rss={:.1}", process_memory::rss_mib());
            }
        }
    }
    stop.cancel();
    if let Some(controller) = controller {
        controller.stop().await;
    }
    Ok(())
}

/// What one replica reported last: shards held, pods cached, RSS.
type State = Arc<Mutex<(usize, usize, f64)>>;

fn parse(line: &str) -> Option<(usize, usize, f64)> {
    let mut fields = line.strip_prefix("STATE ")?.split(' ');
    let mut value = |name: &str| fields.next()?.strip_prefix(name).map(str::to_string);
    let held = value("held=")?.parse().ok()?;
    let cached = value("cached=")?.parse().ok()?;
    let rss = value("rss=")?.parse().ok()?;
    Some((held, cached, rss))
}

async fn orchestrate(flags: &Flags) -> Result<(), BoxError> {
    let server = TestApiServer::builder()
        .sharded_list_and_watch(true)
        .watch_list(true)
        .encode_protobuf_on_write(true)
        .start()
        .await?;
    let pods = GroupResource::new("", "pods");
    for index in 0..flags.pods {
        let namespace = format!("namespace-{}", index % 20);
        server
            .storage()
            .create(&pods, &namespace, realistic_pod(index, &namespace))?;
    }
    eprintln!("{} pods seeded at {}", flags.pods, server.url());
    let program = std::env::current_exe()?;
    println!(
        "| replicas | shards | settled | pods per replica (max) | RSS per replica (max) | RSS, all replicas |"
    );
    println!("|---|---|---|---|---|---|");
    let mut runs: Vec<usize> = vec![0];
    runs.extend(&flags.replicas);
    for (run, count) in runs.into_iter().enumerate() {
        let shards = if count == 0 { 0 } else { flags.shards };
        let replicas = count.max(1);
        let lease = format!("bench-{run}");
        let mut children = Vec::new();
        let mut states: Vec<State> = Vec::new();
        let started = Instant::now();
        for index in 0..replicas {
            let mut child = Command::new(&program)
                .args([
                    "--replica",
                    &format!("r{index}"),
                    "--url",
                    &server.url(),
                    "--lease",
                    &lease,
                ])
                .args(["--shards", &shards.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .kill_on_drop(true)
                .spawn()?;
            let state: State = Arc::new(Mutex::new((0, 0, 0.0)));
            if let Some(stdout) = child.stdout.take() {
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Some(parsed) = parse(&line) {
                            *state.lock() = parsed;
                        }
                    }
                });
            }
            children.push(child);
            states.push(state);
        }
        let wanted_shards = if shards == 0 { 1 } else { shards as usize };
        let settled = loop {
            let (held, cached): (usize, usize) = states
                .iter()
                .map(|state| {
                    let state = state.lock();
                    (state.0, state.1)
                })
                .fold((0, 0), |(h, c), (held, cached)| (h + held, c + cached));
            if held == wanted_shards && cached == flags.pods {
                break started.elapsed();
            }
            if started.elapsed() > Duration::from_secs(600) {
                return Err(format!(
                    "{replicas} replicas did not settle: {held} shards, {cached} pods"
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        // Let allocations settle before reading memory.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let finals: Vec<(usize, usize, f64)> = states.iter().map(|state| *state.lock()).collect();
        let most_pods = finals.iter().map(|s| s.1).max().unwrap_or(0);
        let most_rss = finals.iter().map(|s| s.2).fold(0.0, f64::max);
        let all_rss: f64 = finals.iter().map(|s| s.2).sum();
        let label = if count == 0 {
            "1 (unsharded)".to_string()
        } else {
            count.to_string()
        };
        println!(
            "| {label} | {} | {:.2} s | {most_pods} | {most_rss:.0} MiB | {all_rss:.0} MiB |",
            if shards == 0 {
                "-".to_string()
            } else {
                shards.to_string()
            },
            settled.as_secs_f64()
        );
        for child in &mut children {
            drop(child.stdin.take());
        }
        for child in &mut children {
            let _ = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
        }
    }
    Ok(())
}
