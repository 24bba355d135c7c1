//! The orchestrator: starts the server process, then one client process
//! per client and run (clients interleaved, so a drift of the machine is
//! shared), passes the clients' progress on to the server as orders, and
//! collects every run's [`Figures`].

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::clients::ClientKind;
use crate::protocol::{
    BURST, CLIENT_WRAPPER, DONE, READY, RELIST, RESULT, SYNCED, WATCHED, wrapped_command,
};
use crate::report::Summary;
use crate::{BoxError, Figures, real_server};

/// Threads spinning on the CPU until dropped: a CPU-bound neighbour of the
/// client and the server.
struct Neighbour {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Neighbour {
    fn start(threads: usize) -> Neighbour {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 1_u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                            );
                        }
                    }
                })
            })
            .collect();
        Neighbour { stop, threads }
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The server of a bench run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// clientgo-testing's API server, started here: every phase.
    TestServer,
    /// A real kube-apiserver and etcd (envtest), started here; the clients
    /// only sync.
    Envtest,
    /// A cluster already holding the plan's pods, reached by its
    /// kubeconfig; the clients only sync.
    Kubeconfig {
        /// The kubeconfig.
        path: PathBuf,
        /// The processes whose CPU is its server's, when it runs on this
        /// machine.
        pids: Vec<u32>,
    },
}

impl Server {
    /// Whether it is a real kube-apiserver (the clients only sync).
    pub fn is_real(&self) -> bool {
        *self != Server::TestServer
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchPlan {
    /// Pods seeded.
    pub pods: usize,
    /// Watch events per burst.
    pub events: usize,
    /// Runs per client (the table shows medians).
    pub runs: usize,
    /// The clients, in table order.
    pub clients: Vec<ClientKind>,
    /// The server the clients run against.
    pub server: Server,
    /// Threads spinning on the CPU in this process while each client runs:
    /// a CPU-bound neighbour on the machine's cores.
    pub neighbour_threads: usize,
}

/// A server the orchestrator started: its process and pipes.
struct Pipes {
    child: Child,
    orders: ChildStdin,
    answers: BufReader<ChildStdout>,
}

/// The server the clients are run against.
struct ServerProcess {
    /// None for a cluster given by its kubeconfig.
    pipes: Option<Pipes>,
    url: String,
    json_bytes: u64,
    /// The processes whose CPU is the server's.
    pids: Vec<u32>,
}

impl ServerProcess {
    fn start(program: &PathBuf, plan: &BenchPlan) -> Result<ServerProcess, BoxError> {
        if let Server::Kubeconfig { path, pids } = &plan.server {
            return Ok(ServerProcess {
                pipes: None,
                url: format!("{}{}", real_server::KUBECONFIG, path.display()),
                json_bytes: 0,
                pids: pids.clone(),
            });
        }
        let mut command = Command::new(program);
        command
            .args(["--role", "server", "--pods", &plan.pods.to_string()])
            .args(["--events", &plan.events.to_string()]);
        if plan.server == Server::Envtest {
            command.arg("--envtest");
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let orders = child.stdin.take().ok_or("the server has no stdin")?;
        let mut answers = BufReader::new(child.stdout.take().ok_or("the server has no stdout")?);
        let mut line = String::new();
        answers.read_line(&mut line)?;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&READY) {
            return Err(format!("the server said {line:?} instead of ready").into());
        }
        let url = words.get(1).ok_or("the server gave no URL")?.to_string();
        let json_bytes = words.get(2).and_then(|w| w.parse().ok()).unwrap_or(0);
        let pids = real_server::server_pids(&words, child.id());
        Ok(ServerProcess {
            pipes: Some(Pipes {
                child,
                orders,
                answers,
            }),
            url,
            json_bytes,
            pids,
        })
    }

    /// Sends an order and returns the server's answer.
    fn order(&mut self, order: &str) -> Result<String, BoxError> {
        let pipes = self
            .pipes
            .as_mut()
            .ok_or("a server given by its kubeconfig takes no orders")?;
        writeln!(pipes.orders, "{order}")?;
        pipes.orders.flush()?;
        let mut line = String::new();
        pipes.answers.read_line(&mut line)?;
        if !line.starts_with(DONE) {
            return Err(format!("the server answered {order:?} with {line:?}").into());
        }
        Ok(line.trim().to_string())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(pipes) = &mut self.pipes {
            let _ = pipes.child.kill();
            let _ = pipes.child.wait();
        }
    }
}

/// Runs one client process through its phases.
fn run_client(
    program: &PathBuf,
    server: &mut ServerProcess,
    plan: &BenchPlan,
    client: ClientKind,
) -> Result<Figures, BoxError> {
    let wrapper = std::env::var(CLIENT_WRAPPER).unwrap_or_default();
    let mut command = wrapped_command(program, &wrapper);
    command
        .args(["--role", "client", "--client", client.name()])
        .args(["--url", &server.url, "--pods", &plan.pods.to_string()])
        .args(["--events", &plan.events.to_string()]);
    if plan.server.is_real() {
        command.arg("--sync-only");
    }
    let _neighbour = Neighbour::start(plan.neighbour_threads);
    let server_cpu_before = real_server::cpu_seconds_of(&server.pids);
    let mut server_cpu = None;
    let mut child = command.stdout(Stdio::piped()).spawn()?;
    let mut output = BufReader::new(child.stdout.take().ok_or("the client has no stdout")?);
    let mut line = String::new();
    let figures = loop {
        line.clear();
        if output.read_line(&mut line)? == 0 {
            let status = child.wait()?;
            return Err(format!("{} ended ({status}) without a result", client.name()).into());
        }
        let line = line.trim();
        if line == SYNCED {
            // The settle after the sync is in it: the server is idle then.
            server_cpu = Some(real_server::cpu_seconds_of(&server.pids) - server_cpu_before);
            if !plan.server.is_real() {
                let answer = server.order(BURST)?;
                eprintln!("  {}: synced; server: {answer}", client.name());
            }
        } else if line == WATCHED {
            server.order(RELIST)?;
        } else if let Some(json) = line.strip_prefix(RESULT) {
            let mut figures = serde_json::from_str::<Figures>(json.trim())?;
            // A client that does not announce its sync (`stream`) ends
            // there.
            figures.server_cpu_seconds = server_cpu
                .or_else(|| Some(real_server::cpu_seconds_of(&server.pids) - server_cpu_before))
                .filter(|_| !server.pids.is_empty());
            break figures;
        } else {
            eprintln!("  {}: {line}", client.name());
        }
    };
    child.wait()?;
    Ok(figures)
}

/// Runs the whole plan: every client `plan.runs` times against one server.
/// Progress goes to standard error.
pub fn run(plan: &BenchPlan) -> Result<(Vec<Summary>, u64), BoxError> {
    let program = std::env::current_exe()?;
    if !matches!(plan.server, Server::Kubeconfig { .. }) {
        eprintln!(
            "seeding the server with {} pods and a history for {} events...",
            plan.pods, plan.events
        );
    }
    let mut server = ServerProcess::start(&program, plan)?;
    let mut summaries: Vec<Summary> = plan
        .clients
        .iter()
        .map(|client| Summary {
            client: *client,
            runs: Vec::new(),
            failures: Vec::new(),
        })
        .collect();
    let count = summaries.len();
    for run in 1..=plan.runs {
        // Each round starts one client further on, so a cost of the
        // server that comes round periodically (kube-apiserver's garbage
        // collection of its heap) lands on each client in turn.
        for index in (0..count).map(|i| (i + run - 1) % count.max(1)) {
            let summary = &mut summaries[index];
            eprintln!("run {run}/{}: {}", plan.runs, summary.client.name());
            let figures = match run_client(&program, &mut server, plan, summary.client) {
                Ok(figures) => figures,
                Err(error) => {
                    // A failed run is a finding, not the end of the
                    // benchmark: it is counted and shown with the table.
                    eprintln!("  run failed: {error}");
                    summary.failures.push(format!("run {run}: {error}"));
                    continue;
                }
            };
            eprintln!(
                "  sync {:.2} s, {:.0} events/s, {:.1} KiB per pod, relist peak {:.2}x",
                figures.sync_seconds,
                figures.events_per_second(),
                figures.kib_per_object(),
                figures.relist_peak_ratio()
            );
            summary.runs.push(figures);
        }
    }
    Ok((summaries, server.json_bytes))
}
