//! Peak memory of a forced relist of many realistic pods (about 5 KB of JSON
//! each), for BENCHMARKS.md.
//!
//! `cargo bench -p clientgo-reflector --bench relist_memory` runs three
//! kinds of process, all this same program:
//! - the server: clientgo-testing's API server seeded with the pods, in a
//!   child process so its memory is not counted; on a `relist` line on its
//!   standard input it fails the next watch with a 500 and drops the open
//!   watch, which makes the reflector relist at its last resourceVersion;
//! - one client per scenario, each a fresh child process: a reflector
//!   syncs an indexer, reports its RSS, then the server forces a relist
//!   and the client reports the RSS high-water mark during it;
//! - the orchestrator (no arguments) starting them and printing a table
//!   and one JSON line per scenario.
//!
//! Scenarios: `paged` (pages of 500, as after an RV=0 list that came back
//! paginated) and `unpaged` (the relist at a resourceVersion in one
//! response, as client-go asks when the server has a watch cache), each
//! also with `+known`: the indexer's own `prepare`, which reuses the
//! cached `Arc` of each unchanged object instead of holding it twice;
//! without it, the indexer is behind a store that prepares nothing (as
//! before relist reuse existed).
//! `RELIST_PODS` sets the pod count (default 50,000). Linux only: it reads
//! `/proc/self/status` and resets the high-water mark through
//! `/proc/self/clear_refs`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::{GroupResource, Status};
use clientgo_listwatch::ResourceListerWatcher;
use clientgo_reflector::{Reflector, ReflectorOptions};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_store::{Indexer, IndexerOptions, ObjectOrTombstone, ReflectorStore, StoreError};
use clientgo_testing::process_memory::{high_water_mib, reset_high_water, rss_mib};
use clientgo_testing::{TestApiServer, Verb, realistic_pod};
use k8s_openapi::api::core::v1::Pod;
use tokio_util::sync::CancellationToken;

const ROLE: &str = "RELIST_BENCH_ROLE";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes `--bench`; ignore arguments.
    let pods: usize = std::env::var("RELIST_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server(pods),
        Ok(scenario) => {
            let url = std::env::var("RELIST_BENCH_URL")?;
            client(scenario, &url, pods)
        }
        Err(_) => orchestrate(pods),
    }
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

fn server(pods: usize) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = runtime()?;
    let server = runtime.block_on(TestApiServer::builder().start())?;
    let resource = GroupResource::new("", "pods");
    let mut json_bytes = 0;
    for index in 0..pods {
        let namespace = format!("namespace-{}", index % 20);
        let pod = realistic_pod(index, &namespace);
        json_bytes += serde_json::to_vec(&pod)?.len();
        server.storage().create(&resource, &namespace, pod)?;
    }
    println!("{} {json_bytes}", server.url());
    std::io::stdout().flush()?;
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "relist" {
            server
                .faults()
                .fail_next(Some(Verb::Watch), Status::internal_error("forced relist"));
            server.faults().drop_watches();
        }
    }
    Ok(())
}

fn client(scenario: &str, url: &str, pods: usize) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let rest = RestClient::new(Config::new(url))?;
        let lister = ResourceListerWatcher::new(ResourceClient::<Pod>::all(rest));
        let cache = Arc::new(Indexer::<Pod>::new(IndexerOptions::default()));
        let mut options = ReflectorOptions::default().use_watch_list(false);
        if scenario.starts_with("unpaged") {
            options = options.page_size(0);
        }
        let store: Arc<dyn ReflectorStore<Pod>> = if scenario.ends_with("+known") {
            cache.clone()
        } else {
            Arc::new(NoReuse(cache.clone()))
        };
        let reflector = Reflector::new(lister, store, options);
        let status = reflector.status();
        let cancel = CancellationToken::new();
        let task = tokio::spawn(reflector.run(cancel.clone()));
        let started = Instant::now();
        while cache.len() < pods {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let sync_seconds = started.elapsed().as_secs_f64();
        // Let the watch open before measuring.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss_synced = rss_mib();
        let reset = reset_high_water();
        println!("synced");
        std::io::stdout().flush()?;
        let relist_started = Instant::now();
        while status.stats().lists < 2 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let relist_seconds = relist_started.elapsed().as_secs_f64();
        let peak = high_water_mib();
        cancel.cancel();
        task.await?;
        println!(
            "{{\"scenario\":\"{scenario}\",\"pods\":{pods},\"sync_seconds\":{sync_seconds:.3},\"rss_synced_mib\":{rss_synced:.1},\"relist_peak_mib\":{peak:.1},\"relist_extra_mib\":{:.1},\"relist_seconds\":{relist_seconds:.3},\"high_water_reset\":{reset}}}",
            peak - rss_synced
        );
        Ok(())
    })
}

fn orchestrate(pods: usize) -> Result<(), Box<dyn std::error::Error>> {
    let me = std::env::current_exe()?;
    let mut server = Command::new(&me)
        .env(ROLE, "server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut server_in = server.stdin.take().ok_or("no server stdin")?;
    let mut server_out = BufReader::new(server.stdout.take().ok_or("no server stdout")?);
    let mut first = String::new();
    server_out.read_line(&mut first)?;
    let mut parts = first.split_whitespace();
    let url = parts.next().ok_or("the server printed no URL")?.to_string();
    let json_mib = parts
        .next()
        .and_then(|b| b.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / (1024.0 * 1024.0);
    println!("{pods} realistic pods, {json_mib:.1} MiB of JSON, served from a child process");
    let mut results = Vec::new();
    for scenario in ["paged", "unpaged", "paged+known", "unpaged+known"] {
        let mut child = Command::new(&me)
            .env(ROLE, scenario)
            .env("RELIST_BENCH_URL", &url)
            .stdout(Stdio::piped())
            .spawn()?;
        let mut out = BufReader::new(child.stdout.take().ok_or("no client stdout")?);
        let mut line = String::new();
        out.read_line(&mut line)?;
        if line.trim() != "synced" {
            return Err(format!("client {scenario} said {line:?}").into());
        }
        writeln!(server_in, "relist")?;
        server_in.flush()?;
        line.clear();
        out.read_line(&mut line)?;
        child.wait()?;
        println!("{}", line.trim());
        results.push(line.trim().to_string());
    }
    drop(server_in);
    let _ = server.kill();
    let _ = server.wait();
    println!();
    println!(
        "| scenario | sync s | RSS synced MiB | relist peak MiB | extra during relist MiB | extra / synced RSS | extra / JSON size |"
    );
    println!("|---|---|---|---|---|---|---|");
    for result in results {
        let value: serde_json::Value = serde_json::from_str(&result)?;
        let extra = value["relist_extra_mib"].as_f64().unwrap_or(f64::NAN);
        let synced = value["rss_synced_mib"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {} | {} | {synced} | {} | {extra} | {:.2} | {:.2} |",
            value["scenario"].as_str().unwrap_or_default(),
            value["sync_seconds"],
            value["relist_peak_mib"],
            extra / synced,
            extra / json_mib
        );
    }
    Ok(())
}

/// An indexer behind the default `prepare`: every listed object is held
/// anew until the replace.
struct NoReuse(Arc<Indexer<Pod>>);

impl ReflectorStore<Pod> for NoReuse {
    fn add(&self, object: Arc<Pod>) -> Result<(), StoreError> {
        self.0.add(object)
    }

    fn update(&self, object: Arc<Pod>) -> Result<(), StoreError> {
        self.0.update(object)
    }

    fn delete(&self, object: ObjectOrTombstone<Pod>) -> Result<(), StoreError> {
        self.0.delete(object)
    }

    fn replace(&self, objects: Vec<Arc<Pod>>, resource_version: &str) -> Result<(), StoreError> {
        self.0.replace(objects, resource_version)
    }

    fn resync(&self) -> Result<(), StoreError> {
        self.0.resync()
    }
}
