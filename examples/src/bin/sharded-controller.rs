//! `sharded-controller`: a controller spread over replicas, each a
//! process of its own. The pods' uid space is split into shards, each
//! owned by one replica through a Lease; a replica caches only the pods
//! of the shards it holds (a sharded informer per shard: the server
//! filters with Kubernetes 1.36's `ShardedListAndWatch`, the informer
//! itself otherwise).
//!
//! It starts `--replicas` processes, prints who holds what every second,
//! kills one (SIGKILL: its shards are taken over once their leases
//! expire), starts another (the others hand it its share), and checks at
//! the end that every pod is cached by exactly one live replica. With no
//! kubeconfig it runs against the embedded API server with the gate on.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo::informers::{SharedIndexInformer, SharedIndexInformerOptions, SnapshotOptions};
use clientgo::leaderelection::{LeaderElectionConfig, ShardElector, ShardElectorOptions};
use clientgo::rest::{Config, ResourceClient, RestClient};
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, SeededResource, run_main, say,
};
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A controller sharded over replica processes.
#[derive(Debug, clap::Parser)]
#[command(name = "sharded-controller", version)]
struct Flags {
    /// Replica processes to start
    #[arg(long, value_name = "N", default_value_t = 3)]
    replicas: usize,
    /// Shards of the uid space (every replica must use the same)
    #[arg(long, value_name = "S", default_value_t = 16)]
    shards: u32,
    /// Pods seeded in the embedded server
    #[arg(long, value_name = "N", default_value_t = 2_000)]
    pods: usize,
    /// The leases' name prefix (in --namespace, else default)
    #[arg(long, value_name = "NAME", default_value = "sharded-controller")]
    lease: String,
    /// A directory every replica can reach: each saves its shards' caches
    /// there, and a shard taken over starts from the last save any
    /// replica made of it (warm restart) instead of a list
    #[arg(long, value_name = "DIR")]
    snapshot_dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    common: CommonFlags,
    /// Run as one replica (the program starts them so)
    #[arg(long, hide = true)]
    replica: Option<String>,
    /// With --replica: the embedded server's URL
    #[arg(long, hide = true)]
    server: Option<String>,
}

fn main() -> std::process::ExitCode {
    run_main("sharded-controller", run)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    match flags.replica.clone() {
        Some(identity) => replica(flags, identity).await,
        None => orchestrate(flags).await,
    }
}

/// The leases' timings: client-go's 15/10/2 s shortened, so a killed
/// replica's shards move within the example's run.
fn election() -> LeaderElectionConfig {
    LeaderElectionConfig::default()
        .lease_duration(Duration::from_secs(4))
        .renew_deadline(Duration::from_secs(3))
        .retry_period(Duration::from_millis(500))
}

/// One replica: holds shards, runs a sharded pod informer per shard, and
/// prints `STATE held=… cached=…` twice a second until its stdin closes.
async fn replica(flags: Flags, identity: String) -> Result<(), Failure> {
    let client = match &flags.server {
        Some(url) => RestClient::new(Config::new(url.clone())),
        None => RestClient::new(
            Connection::open_quietly(&flags.common, EmbeddedOptions::default())
                .await?
                .0
                .config,
        ),
    }
    .map_err(|error| Failure::Run(error.to_string()))?;
    let namespace = flags
        .common
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_string());
    let caches: Arc<Mutex<BTreeMap<u32, SharedIndexInformer<Pod>>>> = Arc::default();
    // Shards whose informer started from a snapshot.
    let resumed = Arc::new(AtomicU64::new(0));
    let config = ShardElectorOptions::new(namespace, flags.lease.clone())
        .shards(flags.shards)
        .election(election());
    let (work_client, work_caches, work_resumed) =
        (client.clone(), Arc::clone(&caches), Arc::clone(&resumed));
    let snapshot_dir = flags.snapshot_dir.clone();
    let controller = ShardElector::start(client, identity, config, move |shard, stop| {
        let mut options =
            SharedIndexInformerOptions::default().shard_selector(shard.selector.clone());
        // One file per shard (the selector is part of the informer's
        // identity), whichever replica wrote it.
        if let Some(dir) = &snapshot_dir {
            options = options.snapshot(SnapshotOptions::new(dir));
        }
        let informer = SharedIndexInformer::from_client(
            ResourceClient::<Pod>::all(work_client.clone()),
            options,
        );
        work_caches.lock().insert(shard.index, informer.clone());
        let (caches, resumed) = (Arc::clone(&work_caches), Arc::clone(&work_resumed));
        async move {
            let synced = {
                let (informer, stop) = (informer.clone(), stop.clone());
                async move {
                    while !informer.has_synced() && !stop.is_cancelled() {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if informer.snapshot_stats().loaded > 0 {
                        resumed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            };
            // A real controller would start its workers here too. The
            // cache is saved when the run ends, before the shard is
            // released.
            tokio::join!(informer.run(stop), synced);
            caches.lock().remove(&shard.index);
        }
    })
    .map_err(|error| Failure::Run(error.to_string()))?;
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            line = stdin.next_line() => if !matches!(line, Ok(Some(_))) { break },
            _ = tick.tick() => {
                let held = controller.held();
                let cached: usize = caches.lock().values().map(|informer| informer.stats().cached).sum();
                let held: Vec<String> = held.iter().map(u32::to_string).collect();
                let resumed = resumed.load(Ordering::Relaxed);
                say!("STATE held={} cached={cached} resumed={resumed}", held.join(","));
            }
        }
    }
    controller.stop().await;
    Ok(())
}

/// A replica process and the last state it printed.
struct Replica {
    name: String,
    child: Child,
    state: Arc<Mutex<State>>,
}

/// What a replica printed last: shards held, pods cached, shards started
/// from a snapshot.
type State = (Vec<u32>, usize, u64);

async fn orchestrate(flags: Flags) -> Result<(), Failure> {
    let seed = EmbeddedOptions::default()
        .with(SeededResource::pods(flags.pods, 0.0))
        .sharded_list_and_watch(true);
    let connection = Connection::open(&flags.common, seed).await?;
    let url = connection.embedded.as_ref().map(|embedded| embedded.url());
    // Long enough for a takeover (about two lease durations) and a
    // hand-over to a new replica: 30 s unless --duration says otherwise.
    let duration = flags.common.duration.unwrap_or(Duration::from_secs(30));
    let total_pods = ResourceClient::<Pod>::all(connection.client.clone())
        .list(&Default::default())
        .await
        .map_err(|error| Failure::Run(error.to_string()))?
        .items
        .len();
    let program = std::env::current_exe().map_err(|error| Failure::Run(error.to_string()))?;
    let spawn = |index: usize| -> Result<Replica, Failure> {
        let name = format!("replica-{index}");
        let mut command = Command::new(&program);
        command
            .args([
                "--replica",
                &name,
                "--lease",
                &flags.lease,
                "--shards",
                &flags.shards.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        match &url {
            Some(url) => {
                command.args(["--server", url]);
            }
            None => {
                if let Some(path) = &flags.common.kubeconfig {
                    command.arg("--kubeconfig").arg(path);
                }
                if let Some(context) = &flags.common.context {
                    command.args(["--context", context]);
                }
            }
        }
        if let Some(namespace) = &flags.common.namespace {
            command.args(["--namespace", namespace]);
        }
        if let Some(dir) = &flags.snapshot_dir {
            command.arg("--snapshot-dir").arg(dir);
        }
        let mut child = command
            .spawn()
            .map_err(|error| Failure::Run(format!("cannot start {name}: {error}")))?;
        let state: Arc<Mutex<State>> = Arc::default();
        if let Some(stdout) = child.stdout.take() {
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(parsed) = parse_state(&line) {
                        *state.lock() = parsed;
                    }
                }
            });
        }
        Ok(Replica { name, child, state })
    };
    let mut replicas: Vec<Replica> = (0..flags.replicas).map(spawn).collect::<Result<_, _>>()?;
    let mut next = flags.replicas;
    let started = Instant::now();
    let (kill_at, add_at) = (duration / 3, duration * 2 / 3);
    let (mut killed, mut added) = (false, false);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    while started.elapsed() < duration {
        tick.tick().await;
        if !killed && started.elapsed() >= kill_at && !replicas.is_empty() {
            let mut victim = replicas.remove(0);
            let _ = victim.child.start_kill();
            say!(
                "killed {} (SIGKILL): its shards move once their leases expire",
                victim.name
            );
            killed = true;
        }
        if !added && started.elapsed() >= add_at {
            replicas.push(spawn(next)?);
            say!("started replica-{next}: the others hand it its share");
            next += 1;
            added = true;
        }
        print_states(started.elapsed(), &replicas, total_pods);
    }
    // Every pod cached by exactly one live replica, once the last moves
    // are done (at most 20 s more).
    let settle_by = Instant::now() + Duration::from_secs(20);
    let totals = |replicas: &[Replica]| -> (usize, usize) {
        replicas.iter().fold((0, 0), |(held, cached), replica| {
            let state = replica.state.lock();
            (held + state.0.len(), cached + state.1)
        })
    };
    while totals(&replicas) != (flags.shards as usize, total_pods) && Instant::now() < settle_by {
        tick.tick().await;
        print_states(started.elapsed(), &replicas, total_pods);
    }
    let (held, cached) = totals(&replicas);
    // And no shard held twice.
    let mut shards: Vec<u32> = replicas
        .iter()
        .flat_map(|replica| replica.state.lock().0.clone())
        .collect();
    shards.sort_unstable();
    shards.dedup();
    let held = held.min(shards.len());
    for replica in &mut replicas {
        drop(replica.child.stdin.take());
    }
    for replica in &mut replicas {
        let _ = tokio::time::timeout(Duration::from_secs(10), replica.child.wait()).await;
    }
    say!("summary");
    say!("  shards held     {held} of {}", flags.shards);
    say!("  pods cached     {cached} of {total_pods} (each by one replica)");
    if flags.snapshot_dir.is_some() {
        let resumed: u64 = replicas.iter().map(|replica| replica.state.lock().2).sum();
        say!("  shards resumed  {resumed} (started from a snapshot by the live replicas)");
    }
    if held != flags.shards as usize || cached != total_pods {
        return Err(Failure::Run(
            "the shards did not settle before the end".to_string(),
        ));
    }
    Ok(())
}

fn print_states(elapsed: Duration, replicas: &[Replica], total: usize) {
    let mut line = format!("[{:5.1}s]", elapsed.as_secs_f64());
    for replica in replicas {
        let (held, cached, _) = replica.state.lock().clone();
        line.push_str(&format!(
            " | {} {:>2} shards {:>5} pods",
            replica.name,
            held.len(),
            cached
        ));
    }
    let cached: usize = replicas.iter().map(|replica| replica.state.lock().1).sum();
    line.push_str(&format!(" | {cached}/{total}"));
    say!("{line}");
}

/// `STATE held=0,3 cached=250 resumed=1` as held shards, cached pods and
/// shards resumed.
fn parse_state(line: &str) -> Option<State> {
    let rest = line.strip_prefix("STATE held=")?;
    let (held, rest) = rest.split_once(" cached=")?;
    let (cached, resumed) = rest.split_once(" resumed=")?;
    let held = held
        .split(',')
        .filter(|part| !part.is_empty())
        .map(str::parse)
        .collect::<Result<Vec<u32>, _>>()
        .ok()?;
    Some((
        held,
        cached.trim().parse().ok()?,
        resumed.trim().parse().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_states_parse() {
        assert_eq!(
            parse_state("STATE held=0,3 cached=250 resumed=1"),
            Some((vec![0, 3], 250, 1))
        );
        assert_eq!(
            parse_state("STATE held= cached=0 resumed=0"),
            Some((vec![], 0, 0))
        );
        assert_eq!(parse_state("STATE held=x cached=0 resumed=0"), None);
        assert_eq!(parse_state("hello"), None);
    }
}
