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
use crate::{BoxError, Figures};

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
}

/// The server process and its pipes.
struct ServerProcess {
    child: Child,
    orders: ChildStdin,
    answers: BufReader<ChildStdout>,
    url: String,
    json_bytes: u64,
}

impl ServerProcess {
    fn start(program: &PathBuf, plan: &BenchPlan) -> Result<ServerProcess, BoxError> {
        let mut child = Command::new(program)
            .args(["--role", "server", "--pods", &plan.pods.to_string()])
            .args(["--events", &plan.events.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let orders = child.stdin.take().ok_or("the server has no stdin")?;
        let mut answers = BufReader::new(child.stdout.take().ok_or("the server has no stdout")?);
        let mut line = String::new();
        answers.read_line(&mut line)?;
        let mut words = line.split_whitespace();
        if words.next() != Some(READY) {
            return Err(format!("the server said {line:?} instead of ready").into());
        }
        let url = words.next().ok_or("the server gave no URL")?.to_string();
        let json_bytes = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        Ok(ServerProcess {
            child,
            orders,
            answers,
            url,
            json_bytes,
        })
    }

    /// Sends an order and returns the server's answer.
    fn order(&mut self, order: &str) -> Result<String, BoxError> {
        writeln!(self.orders, "{order}")?;
        self.orders.flush()?;
        let mut line = String::new();
        self.answers.read_line(&mut line)?;
        if !line.starts_with(DONE) {
            return Err(format!("the server answered {order:?} with {line:?}").into());
        }
        Ok(line.trim().to_string())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    let mut child = wrapped_command(program, &wrapper)
        .args(["--role", "client", "--client", client.name()])
        .args(["--url", &server.url, "--pods", &plan.pods.to_string()])
        .args(["--events", &plan.events.to_string()])
        .stdout(Stdio::piped())
        .spawn()?;
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
            let answer = server.order(BURST)?;
            eprintln!("  {}: synced; server: {answer}", client.name());
        } else if line == WATCHED {
            server.order(RELIST)?;
        } else if let Some(json) = line.strip_prefix(RESULT) {
            break serde_json::from_str::<Figures>(json.trim())?;
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
    eprintln!(
        "seeding the server with {} pods and a history for {} events...",
        plan.pods, plan.events
    );
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
    for run in 1..=plan.runs {
        for summary in &mut summaries {
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
