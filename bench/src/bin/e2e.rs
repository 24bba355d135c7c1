//! `cargo run --release -p clientgo-bench --bin e2e [-- FLAGS]`: the
//! end-to-end benchmark of clientgo-rs against kube-rs and a naive client
//! (see the crate's documentation and BENCHMARKS.md).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use clientgo_bench::clients::{self, ClientKind, ClientPlan};
use clientgo_bench::orchestrator::{self, BenchPlan};
use clientgo_bench::protocol::{RESULT, announce};
use clientgo_bench::server::{self, ServerPlan};
use clientgo_bench::{BoxError, report};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
usage: e2e [--pods N] [--events M] [--runs R] [--clients a,b,...]

Seeds clientgo-testing's API server (in a child process) with N realistic
pods (about 5 KB of JSON each), then runs each client R times, each run in a
fresh process: sync every pod, apply a burst of M watch events (written
while watches are held, then released at once), and go through a relist
forced by a 410 in the watch. Prints a table of medians, one JSON line per
figure, and the targets met or missed.

  --pods N       pods seeded (default 10000)
  --events M     watch events per burst (default 100000)
  --runs R       runs per client (default 3)
  --clients ...  comma-separated, from: limit, clientgo, clientgo-watchlist,
                 clientgo-strip, clientgo-compact, clientgo-compact-watchlist,
                 clientgo-compact-typed, clientgo-compact-lz4,
                 clientgo-protobuf, clientgo-protobuf-watchlist, kube-rs,
                 kube-rs-streaming
                 (default all)";

#[derive(Debug)]
struct Flags {
    role: Option<String>,
    client: Option<ClientKind>,
    url: Option<String>,
    pods: usize,
    events: usize,
    runs: usize,
    clients: Vec<ClientKind>,
}

fn parse(arguments: &[String]) -> Result<Flags, String> {
    let mut flags = Flags {
        role: None,
        client: None,
        url: None,
        pods: 10_000,
        events: 100_000,
        runs: 3,
        clients: ClientKind::ALL.to_vec(),
    };
    let mut rest = arguments.iter();
    while let Some(flag) = rest.next() {
        if flag == "--bench" {
            continue;
        }
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || -> Result<usize, String> {
            value
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} takes a positive number, not {value:?}"))
        };
        match flag.as_str() {
            "--role" => flags.role = Some(value.clone()),
            "--client" => {
                flags.client = Some(
                    ClientKind::from_name(value)
                        .ok_or_else(|| format!("unknown client {value:?}"))?,
                )
            }
            "--url" => flags.url = Some(value.clone()),
            "--pods" => flags.pods = number()?,
            "--events" => flags.events = number()?,
            "--runs" => flags.runs = number()?,
            "--clients" => {
                flags.clients = value
                    .split(',')
                    .map(|name| {
                        ClientKind::from_name(name.trim())
                            .ok_or_else(|| format!("unknown client {name:?}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(flags)
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let flags = match parse(&arguments) {
        Ok(flags) => flags,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return;
        }
        Err(message) => {
            eprintln!("e2e: {message}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(error) = run(&flags) {
        eprintln!("e2e: {error}");
        std::process::exit(1);
    }
}

fn run(flags: &Flags) -> Result<(), BoxError> {
    match flags.role.as_deref() {
        Some("server") => server::run(ServerPlan {
            pods: flags.pods,
            events: flags.events,
        }),
        Some("client") => {
            let client = flags.client.ok_or("--role client needs --client")?;
            let plan = ClientPlan {
                url: flags.url.clone().ok_or("--role client needs --url")?,
                pods: flags.pods,
                events: flags.events as u64,
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
            };
            let (summaries, json_bytes) = orchestrator::run(&plan)?;
            println!(
                "{} pods ({:.1} MiB of JSON, {:.1} KB each), {} watch events per burst, median of {} runs, {} cores",
                plan.pods,
                json_bytes as f64 / (1024.0 * 1024.0),
                json_bytes as f64 / plan.pods as f64 / 1000.0,
                plan.events,
                plan.runs,
                std::thread::available_parallelism().map_or(0, |n| n.get())
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
            for line in report::targets(&summaries) {
                println!("target: {line}");
            }
            Ok(())
        }
    }
}
