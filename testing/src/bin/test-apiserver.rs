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

const HELP: &str = "\
test-apiserver: a Kubernetes API server for tests, on 127.0.0.1

USAGE:
    test-apiserver [OPTIONS]

OPTIONS:
    --port <PORT>                  Port to listen on (default: an ephemeral port)
    --tls                          Serve HTTPS with a CA generated at start
    --token <TOKEN>                Require this bearer token
    --kubeconfig-out <PATH>        Write a kubeconfig pointing at the server
    --seed-pods <N>                Create N realistic pods (about 5 KB each) at start
    --namespaces <N>               Spread seeded pods over N namespaces (default: 10)
    --churn <RATE>                 Writes per second by a background writer: updates,
                                   creates and deletes of pods (default: 0)
    --bookmark-interval <SECONDS>  Seconds between watch bookmarks (default: 60)
    --history <N>                  Events of history kept (default: 10000)
    --latency-ms <MS>              Delay every request
    --drop-watches-every <SECONDS> Drop every open watch periodically
    --compact-every <SECONDS>      Compact the history periodically (watches and
                                   exact lists from before get 410)
    --restart-every <SECONDS>      Close every connection periodically, keeping data
    --fail-every <SECONDS>         Periodically answer the next request with an error
    --fail-code <CODE>             The error for --fail-every: 410, 429 (with
                                   Retry-After: 1), 500 or 503 (default: 500)
    -h, --help                     Print this help
";

#[derive(Debug, Default)]
struct Options {
    port: u16,
    tls: bool,
    token: Option<String>,
    kubeconfig_out: Option<String>,
    seed_pods: usize,
    namespaces: usize,
    churn: f64,
    bookmark_interval: Option<f64>,
    history: Option<usize>,
    latency_ms: u64,
    drop_watches_every: Option<f64>,
    compact_every: Option<f64>,
    restart_every: Option<f64>,
    fail_every: Option<f64>,
    fail_code: u16,
}

fn parse_options(arguments: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        namespaces: 10,
        fail_code: 500,
        ..Options::default()
    };
    let mut iterator = arguments.iter();
    while let Some(flag) = iterator.next() {
        let mut value = |name: &str| {
            iterator
                .next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
            text.parse()
                .map_err(|_| format!("{name}: {text:?} is not a valid number"))
        }
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => options.port = number("--port", &value("--port")?)?,
            "--tls" => options.tls = true,
            "--token" => options.token = Some(value("--token")?),
            "--kubeconfig-out" => options.kubeconfig_out = Some(value("--kubeconfig-out")?),
            "--seed-pods" => options.seed_pods = number("--seed-pods", &value("--seed-pods")?)?,
            "--namespaces" => {
                options.namespaces =
                    number::<usize>("--namespaces", &value("--namespaces")?)?.max(1)
            }
            "--churn" => options.churn = number("--churn", &value("--churn")?)?,
            "--bookmark-interval" => {
                options.bookmark_interval = Some(number(
                    "--bookmark-interval",
                    &value("--bookmark-interval")?,
                )?)
            }
            "--history" => options.history = Some(number("--history", &value("--history")?)?),
            "--latency-ms" => options.latency_ms = number("--latency-ms", &value("--latency-ms")?)?,
            "--drop-watches-every" => {
                options.drop_watches_every = Some(number(
                    "--drop-watches-every",
                    &value("--drop-watches-every")?,
                )?)
            }
            "--compact-every" => {
                options.compact_every = Some(number("--compact-every", &value("--compact-every")?)?)
            }
            "--restart-every" => {
                options.restart_every = Some(number("--restart-every", &value("--restart-every")?)?)
            }
            "--fail-every" => {
                options.fail_every = Some(number("--fail-every", &value("--fail-every")?)?)
            }
            "--fail-code" => {
                options.fail_code = number("--fail-code", &value("--fail-code")?)?;
                if ![410, 429, 500, 503].contains(&options.fail_code) {
                    return Err(format!(
                        "--fail-code: {} is not one of 410, 429, 500, 503",
                        options.fail_code
                    ));
                }
            }
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    if !(options.churn.is_finite() && options.churn >= 0.0) {
        return Err("--churn must be a non-negative number".to_string());
    }
    Ok(Some(options))
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
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_options(&arguments) {
        Ok(Some(options)) => options,
        Ok(None) => {
            say(HELP.trim_end());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("test-apiserver: {message}");
            return ExitCode::from(2);
        }
    };
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
