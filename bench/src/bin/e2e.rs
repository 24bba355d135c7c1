//! `cargo run --release -p clientgo-bench --bin e2e [-- FLAGS]`: the
//! end-to-end benchmark of clientgo-rs against kube-rs and a naive client
//! (see the crate's documentation and BENCHMARKS.md).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use clientgo_bench::clients::{self, ClientKind, ClientPlan};
use clientgo_bench::orchestrator::{self, BenchPlan, Server};
use clientgo_bench::protocol::{RESULT, announce};
use clientgo_bench::server::{self, ServerPlan};
use clientgo_bench::{BoxError, report};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The end-to-end benchmark of clientgo-rs against kube-rs and a naive
/// client.
///
/// Seeds clientgo-testing's API server (in a child process) with N
/// realistic pods (about 5 KB of JSON each), then runs each client R times,
/// each run in a fresh process: sync every pod, apply a burst of M watch
/// events (written while watches are held, then released at once), and go
/// through a relist forced by a 410 in the watch. With --envtest (or
/// --kubeconfig) the server is a real kube-apiserver and the clients only
/// sync. Prints a table of medians, one JSON line per figure, the client's
/// and the server's CPU, and the targets met or missed.
#[derive(Debug, clap::Parser)]
#[command(name = "e2e", version)]
struct Flags {
    /// Pods seeded
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = positive)]
    pods: usize,
    /// Watch events per burst
    #[arg(long, value_name = "M", default_value_t = 100_000, value_parser = positive)]
    events: usize,
    /// Runs per client
    #[arg(long, value_name = "R", default_value_t = 3, value_parser = positive)]
    runs: usize,
    /// Comma-separated clients (default: all): limit, stream, clientgo,
    /// clientgo-defaults, clientgo-nogzip, clientgo-watchlist, clientgo-strip, clientgo-compact,
    /// clientgo-compact-watchlist, clientgo-compact-typed,
    /// clientgo-compact-lz4, clientgo-protobuf, clientgo-protobuf-watchlist,
    /// clientgo-protobuf-compact, kube-rs, kube-rs-streaming
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', value_parser = client_kind)]
    clients: Vec<ClientKind>,
    /// Seed a real kube-apiserver and etcd (envtest's, from
    /// `CLIENTGO_ENVTEST_ASSETS`, `KUBEBUILDER_ASSETS` or `../shared/envtest`)
    /// instead of the test server. Pods are written through its API as a
    /// cluster leaves them; clients only sync (the burst and the forced
    /// relist need the test server's faults). `limit` does not run there.
    #[arg(long, conflicts_with = "kubeconfig")]
    envtest: bool,
    /// Run against the cluster of this kubeconfig, which already holds
    /// exactly --pods pods (for one seeded by `e2e --role server --envtest
    /// --pods N`, which prints its kubeconfig and server pids); clients
    /// only sync
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<std::path::PathBuf>,
    /// With --kubeconfig: the processes whose CPU is the server's
    #[arg(
        long,
        value_name = "PID,...",
        value_delimiter = ',',
        requires = "kubeconfig"
    )]
    server_pids: Vec<u32>,
    /// Threads spinning on the CPU while each client runs: a CPU-bound
    /// neighbour sharing the machine's cores
    #[arg(long, value_name = "N", default_value_t = 0)]
    neighbour_threads: usize,
    /// The process's part (the orchestrator starts its children with it)
    #[arg(long, hide = true)]
    role: Option<String>,
    /// With --role client: the client to run
    #[arg(long, hide = true, value_parser = client_kind)]
    client: Option<ClientKind>,
    /// With --role client: the server's URL
    #[arg(long, hide = true)]
    url: Option<String>,
    /// With --role client: stop once synced
    #[arg(long, hide = true)]
    sync_only: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// A positive number.
fn positive(text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("a positive number, not {text:?}"))
}

/// A client by its name.
fn client_kind(name: &str) -> Result<ClientKind, String> {
    ClientKind::from_name(name.trim()).ok_or_else(|| format!("unknown client {name:?}"))
}

fn main() {
    let mut flags = match <Flags as clap::Parser>::try_parse() {
        Ok(flags) => flags,
        Err(error) => error.exit(),
    };
    clientgo_testing::install_log_subscriber("warn");
    if flags.clients.is_empty() {
        flags.clients = ClientKind::ALL.to_vec();
    }
    if let Err(error) = run(&flags) {
        eprintln!("e2e: {error}");
        std::process::exit(1);
    }
}

fn run(flags: &Flags) -> Result<(), BoxError> {
    match flags.role.as_deref() {
        Some("server") => {
            let plan = ServerPlan {
                pods: flags.pods,
                events: flags.events,
            };
            if flags.envtest {
                server::run_real(plan)
            } else {
                server::run(plan)
            }
        }
        Some("client") => {
            let client = flags.client.ok_or("--role client needs --client")?;
            let plan = ClientPlan {
                url: flags.url.clone().ok_or("--role client needs --url")?,
                pods: flags.pods,
                events: flags.events as u64,
                sync_only: flags.sync_only,
            };
            let figures = clients::run(client, &plan)?;
            announce(&format!("{RESULT} {}", serde_json::to_string(&figures)?))?;
            Ok(())
        }
        Some(other) => Err(format!("unknown role {other:?}").into()),
        None => {
            let plan = BenchPlan {
                pods: flags.pods,
                events: flags.events,
                runs: flags.runs,
                clients: flags.clients.clone(),
                server: match &flags.kubeconfig {
                    Some(path) => Server::Kubeconfig {
                        path: path.clone(),
                        pids: flags.server_pids.clone(),
                    },
                    None if flags.envtest => Server::Envtest,
                    None => Server::TestServer,
                },
                neighbour_threads: flags.neighbour_threads,
            };
            let (summaries, json_bytes) = orchestrator::run(&plan)?;
            let seeded = if json_bytes > 0 {
                format!(
                    " ({:.1} MiB of JSON, {:.1} KB each)",
                    json_bytes as f64 / (1024.0 * 1024.0),
                    json_bytes as f64 / plan.pods as f64 / 1000.0
                )
            } else {
                String::new()
            };
            println!(
                "{} pods{seeded} on {}, {}, median of {} runs, {} cores{}",
                plan.pods,
                match plan.server {
                    Server::Kubeconfig { .. } => "the cluster of the kubeconfig",
                    Server::Envtest => "a real kube-apiserver (envtest)",
                    Server::TestServer => "the test server",
                },
                if plan.server.is_real() {
                    "sync only".to_string()
                } else {
                    format!("{} watch events per burst", plan.events)
                },
                plan.runs,
                std::thread::available_parallelism().map_or(0, |n| n.get()),
                if plan.neighbour_threads > 0 {
                    format!(", {} neighbour threads spinning", plan.neighbour_threads)
                } else {
                    String::new()
                }
            );
            println!();
            print!("{}", report::table(&summaries));
            println!();
            for line in report::json_lines(&summaries) {
                println!("{line}");
            }
            println!();
            for line in report::failures(&summaries) {
                println!("failed: {line}");
            }
            let setting = if plan.server.is_real() {
                report::Setting::RealServer {
                    neighbour: plan.neighbour_threads > 0,
                }
            } else {
                report::Setting::TestServer
            };
            for line in report::targets(&summaries, setting) {
                println!("target: {line}");
            }
            Ok(())
        }
    }
}
