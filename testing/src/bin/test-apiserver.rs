//! `test-apiserver`: the clientgo-testing API server as a program, for
//! examples, benchmarks and manual testing. Prints the server's URL on its
//! first line and runs until Ctrl-C.

// A program reports its errors on stderr; the lint is for library code.
#![allow(clippy::print_stderr)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use clientgo_testing::{ChurnOptions, ChurnWriter, TestApiServer, realistic_pod};

/// A Kubernetes API server for tests, on 127.0.0.1.
#[derive(Debug, clap::Parser)]
#[command(name = "test-apiserver", version)]
struct Options {
    /// Port to listen on (default: an ephemeral port)
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    port: u16,
    /// Serve HTTPS with a CA generated at start
    #[arg(long)]
    tls: bool,
    /// Require this bearer token
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Write a kubeconfig pointing at the server
    #[arg(long, value_name = "PATH")]
    kubeconfig_out: Option<String>,
    /// Create N realistic pods (about 5 KB each) at start
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed_pods: usize,
    /// Spread seeded pods over N namespaces
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = at_least_one)]
    namespaces: usize,
    /// Writes per second by a background writer: updates, creates and
    /// deletes of pods
    #[arg(long, value_name = "RATE", default_value_t = 0.0, value_parser = non_negative)]
    churn: f64,
    /// Seconds between watch bookmarks (default: 60)
    #[arg(long, value_name = "SECONDS")]
    bookmark_interval: Option<f64>,
    /// Events of history kept (default: 10000)
    #[arg(long, value_name = "N")]
    history: Option<usize>,
    /// Delay every request
    #[arg(long, value_name = "MS", default_value_t = 0)]
    latency_ms: u64,
    /// Drop every open watch periodically
    #[arg(long, value_name = "SECONDS")]
    drop_watches_every: Option<f64>,
    /// Compact the history periodically (watches and exact lists from
    /// before get 410)
    #[arg(long, value_name = "SECONDS")]
    compact_every: Option<f64>,
    /// Close every connection periodically, keeping data
    #[arg(long, value_name = "SECONDS")]
    restart_every: Option<f64>,
    /// Periodically answer the next request with an error
    #[arg(long, value_name = "SECONDS")]
    fail_every: Option<f64>,
    /// The error for --fail-every: 410, 429 (with Retry-After: 1), 500 or
    /// 503
    #[arg(long, value_name = "CODE", default_value_t = 500, value_parser = fail_code)]
    fail_code: u16,
}

/// A count of one or more.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(count) if count >= 1 => Ok(count),
        _ => Err(format!("{text:?} is not a number of at least 1")),
    }
}

/// A number of writes per second, zero or more.
fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err(format!("{text:?} is not a non-negative number")),
    }
}

/// One of the codes `--fail-every` can answer with.
fn fail_code(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(code) if [410, 429, 500, 503].contains(&code) => Ok(code),
        _ => Err(format!("{text:?} is not one of 410, 429, 500, 503")),
    }
}

fn positive_duration(name: &str, seconds: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{name} must be a positive number of seconds"))
}

/// Prints a line; a closed stdout (a parent that read only the URL) is not
/// a reason to stop serving.
fn say(line: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// The error `--fail-every` injects.
fn injected_failure(code: u16) -> clientgo_apimachinery::Status {
    use clientgo_apimachinery::Status;
    match code {
        410 => Status::expired("too old resource version (injected by test-apiserver)"),
        429 => Status::too_many_requests("too many requests (injected by test-apiserver)", 1),
        503 => Status::service_unavailable("service unavailable (injected by test-apiserver)"),
        _ => Status::internal_error("injected by test-apiserver"),
    }
}

/// Runs `action` every `period` until the program ends.
fn every(period: Duration, action: impl Fn() + Send + 'static) {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(period);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            action();
        }
    });
}

async fn run(options: Options) -> Result<(), String> {
    let mut builder = TestApiServer::builder().port(options.port);
    if options.tls {
        builder = builder.tls();
    }
    if let Some(token) = &options.token {
        builder = builder.bearer_token(token.clone());
    }
    if let Some(seconds) = options.bookmark_interval {
        builder = builder.bookmark_interval(positive_duration("--bookmark-interval", seconds)?);
    }
    if let Some(history) = options.history {
        builder = builder.history_limit(history);
    }
    let server = builder
        .start()
        .await
        .map_err(|e| format!("cannot start the server on port {}: {e}", options.port))?;
    let pods = GroupResource::new("", "pods");
    for index in 0..options.seed_pods {
        let namespace = format!("namespace-{}", index % options.namespaces);
        server
            .storage()
            .create(&pods, &namespace, realistic_pod(index, &namespace))
            .map_err(|e| format!("seeding pod {index}: {e}"))?;
    }
    if let Some(path) = &options.kubeconfig_out {
        server
            .write_kubeconfig(path)
            .map_err(|e| format!("cannot write the kubeconfig to {path}: {e}"))?;
    }
    // The first line is the URL, printed once the server is seeded and
    // ready, for programs that start this one.
    say(&server.url());
    if let Some(path) = &options.kubeconfig_out {
        say(&format!("kubeconfig written to {path}"));
    }
    if options.seed_pods > 0 {
        say(&format!(
            "seeded {} pods in {} namespaces (revision {})",
            options.seed_pods,
            options.namespaces,
            server.storage().current_revision()
        ));
    }
    if options.latency_ms > 0 {
        server
            .faults()
            .set_latency(Duration::from_millis(options.latency_ms));
    }
    // Kept until the program ends (dropping it stops the writes).
    let _churn = (options.churn > 0.0).then(|| {
        say(&format!("churning at {} writes per second", options.churn));
        ChurnWriter::start(
            Arc::clone(server.storage()),
            pods.clone(),
            realistic_pod,
            ChurnOptions::default()
                .rate(options.churn)
                .namespaces(options.namespaces)
                .first_index(options.seed_pods),
        )
    });
    let period = |name: &str, seconds: Option<f64>| {
        seconds
            .map(|seconds| positive_duration(name, seconds))
            .transpose()
    };
    let drop_every = period("--drop-watches-every", options.drop_watches_every)?;
    let compact_every = period("--compact-every", options.compact_every)?;
    let restart_every = period("--restart-every", options.restart_every)?;
    let fail_every = period("--fail-every", options.fail_every)?;
    let server = Arc::new(server);
    if let Some(period) = drop_every {
        let server = Arc::clone(&server);
        every(period, move || server.faults().drop_watches());
    }
    if let Some(period) = compact_every {
        let server = Arc::clone(&server);
        every(period, move || server.compact_history());
    }
    if let Some(period) = restart_every {
        let server = Arc::clone(&server);
        every(period, move || server.faults().restart());
    }
    if let Some(period) = fail_every {
        let server = Arc::clone(&server);
        let code = options.fail_code;
        every(period, move || {
            server.faults().fail_next(None, injected_failure(code));
        });
    }
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| format!("waiting for Ctrl-C: {e}"))?;
    server.stop();
    Ok(())
}

fn main() -> ExitCode {
    let options = match <Options as clap::Parser>::try_parse() {
        Ok(options) => options,
        Err(error) => {
            // Help and version go to stdout with status 0; mistakes to
            // stderr with 2.
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    clientgo_testing::install_log_subscriber("warn");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("test-apiserver: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("test-apiserver: {message}");
            ExitCode::FAILURE
        }
    }
}
