//! Every example program run to completion against its embedded API
//! server, as a user would run it: exit status, first line and summary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::process::{Command, Output};

fn run(program: &str, args: &[&str]) -> Output {
    let path = match program {
        "controller" => env!("CARGO_BIN_EXE_controller"),
        "informer" => env!("CARGO_BIN_EXE_informer"),
        "crd" => env!("CARGO_BIN_EXE_crd"),
        "dynamic" => env!("CARGO_BIN_EXE_dynamic"),
        "lister-indexer" => env!("CARGO_BIN_EXE_lister-indexer"),
        "leader-election" => env!("CARGO_BIN_EXE_leader-election"),
        "events" => env!("CARGO_BIN_EXE_events"),
        "warm-restart" => env!("CARGO_BIN_EXE_warm-restart"),
        "protobuf" => env!("CARGO_BIN_EXE_protobuf"),
        "sharded-controller" => env!("CARGO_BIN_EXE_sharded-controller"),
        "operator" => env!("CARGO_BIN_EXE_operator"),
        other => panic!("no example {other}"),
    };
    Command::new(path)
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh temporary directory named after `label` holding a kubeconfig
/// for `server`: the directory (to remove) and the file.
fn kubeconfig_in_temp_dir(
    server: &clientgo::testing::TestApiServer,
    label: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let directory =
        std::env::temp_dir().join(format!("clientgo-examples-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let kubeconfig = directory.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    (directory, kubeconfig)
}

/// Runs `program` and returns its stdout, failing the test (with both
/// outputs) if it did not exit successfully.
fn run_ok(program: &str, args: &[&str]) -> String {
    let output = run(program, args);
    let text = stdout(&output);
    assert!(
        output.status.success(),
        "{program}: {text}\n{}",
        stderr(&output)
    );
    text
}

/// The number on the summary line that starts with `label`.
fn summary_number(text: &str, label: &str) -> u64 {
    let line = text
        .lines()
        .find(|line| line.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|word| word.parse().ok())
        .unwrap_or_else(|| panic!("no number on {line:?}"))
}

#[test]
fn the_controller_runs_embedded_and_its_cache_matches_the_server() {
    let text = run_ok(
        "controller",
        &[
            "--embedded",
            "--duration",
            "3",
            "--pods",
            "300",
            "--churn",
            "50",
        ],
    );
    assert!(
        text.starts_with("embedded API server at http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("summary"), "{text}");
    assert!(text.contains("cache check"), "{text}");
    assert!(text.contains("OK: all"), "{text}");
    assert!(summary_number(&text, "reconciles") >= 300, "{text}");
    assert!(summary_number(&text, "server writes") > 0, "{text}");
    assert_eq!(summary_number(&text, "retries"), 0, "{text}");
}

#[test]
fn the_controller_retries_injected_failures_and_drops_after_the_maximum() {
    let text = run_ok(
        "controller",
        &[
            "--embedded",
            "--duration",
            "3",
            "--pods",
            "200",
            "--churn",
            "20",
            "--fail-percent",
            "60",
            "--max-retries",
            "2",
        ],
    );
    let retries = summary_number(&text, "retries");
    let dropped = summary_number(&text, "dropped after max retries");
    assert!(retries > 100, "60% failures must be retried: {text}");
    assert!(
        dropped > 0,
        "some keys fail 3 times in a row at 60%: {text}"
    );
    assert!(text.contains("dropping "), "{text}");
    assert!(
        text.contains("OK: all"),
        "the cache is right regardless: {text}"
    );
    // Every dropped key is reported as a Warning event on its pod.
    let recorded = summary_number(&text, "events (recorded / written / dropped)");
    assert_eq!(recorded, dropped, "{text}");
}

#[test]
fn the_informer_example_prints_events_and_lists_the_default_namespace() {
    let text = run_ok("informer", &["--embedded", "--duration", "2"]);
    assert!(text.contains("(initial list)"), "{text}");
    assert!(
        text.contains("updated "),
        "the writer changes deployments: {text}"
    );
    assert!(
        text.contains("deployments in namespace default (from the lister"),
        "{text}"
    );
}

#[test]
fn the_crd_example_creates_watches_and_lists_its_custom_resources() {
    let text = run_ok("crd", &["--embedded"]);
    assert!(text.contains("installed CustomResourceDefinition crontabs.stable.example.com"));
    assert!(
        text.contains("informer: updated hourly-report (schedule \"30 * * * *\""),
        "{text}"
    );
    assert!(text.contains("informer: deleted cache-warmer"), "{text}");
    assert!(
        text.contains("2 CronTabs in default (from the lister)"),
        "{text}"
    );
}

/// `crd --yaml` prints the CRD made from the type, for `kubectl apply`.
#[test]
fn the_crd_example_prints_its_crd_as_yaml() {
    let text = run_ok("crd", &["--yaml"]);
    for line in [
        "kind: CustomResourceDefinition",
        "  name: crontabs.stable.example.com",
        "    name: v1",
        "                x-kubernetes-validations:",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
}

/// The README's operator run: its scene ends with each Job as its
/// CronTab says, owned by it.
#[test]
fn the_operator_example_keeps_each_crontabs_job() {
    let text = run_ok("operator", &["--embedded"]);
    for line in [
        "installed CustomResourceDefinition crontabs.stable.example.com",
        "scene: deleted Job backup-run",
        "backup-run  owner CronTab backup, parallelism 1",
        "report-run  owner CronTab report, parallelism 5",
        "reconciled default/report: job report-run, parallelism 5",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
    assert!(
        text.lines()
            .any(|line| line.starts_with("operator stopped: ") && line.ends_with("(0 failed)")),
        "{text}"
    );
}

/// On a real kube-apiserver (envtest) the operator also serves its
/// webhooks, and kube-apiserver calls them: a CronTab with too many copies
/// is refused with the validator's message, an untagged image defaulted.
#[test]
fn the_operator_serves_its_webhooks_to_a_real_api_server() {
    use clientgo::testing::envtest::{
        AssetSearch, Assets, assets_required, repository_unpack_script,
    };
    let search = AssetSearch {
        unpack_script: repository_unpack_script(),
        ..AssetSearch::default()
    };
    if let Err(error) = Assets::find(&search) {
        assert!(!assets_required(), "{error}");
        eprintln!("skipped: {error}");
        return;
    }
    let text = run_ok("operator", &["--envtest"]);
    for line in [
        "serving the CronTab webhooks (validating, defaulting) on 127.0.0.1",
        "scene: the webhook refused CronTab huge: admission webhook \"vcrontab-v1.stable.example.com\" denied the request: spec.replicas: more than 10 needs the annotation stable.example.com/large: \"true\"",
        "scene: the webhook defaulted CronTab plain's image to busybox:stable",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
}

/// With a kubeconfig the operator runs against that cluster: it creates
/// the CRD, and reconciles the CronTabs it finds there.
#[test]
fn the_operator_runs_against_a_kubeconfigs_cluster() {
    use clientgo::crd::CustomResource;
    use clientgo::rest::{Config, CreateOptions, ResourceClient, RestClient};
    use clientgo::testing::TestApiServer;
    use clientgo_examples::crontab::{CronTab, CronTabSpec};
    use k8s_openapi::api::batch::v1::Job;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestApiServer::builder().start()).unwrap();
    let (directory, kubeconfig) = kubeconfig_in_temp_dir(&server, "operator");
    let kubeconfig = kubeconfig.to_str().unwrap();
    // A first run installs the CRD; nothing to reconcile yet.
    let first = run_ok("operator", &["--kubeconfig", kubeconfig, "--duration", "1"]);
    assert!(
        first.contains("installed CustomResourceDefinition crontabs.stable.example.com"),
        "{first}"
    );
    assert!(first.contains("operator stopped: 0 reconciles"), "{first}");
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let spec = CronTabSpec {
        cron_spec: "0 1 * * *".into(),
        image: "nightly:3".into(),
        replicas: 2,
    };
    runtime
        .block_on(
            ResourceClient::<CronTab>::namespaced(client.clone(), "default").create(
                &CreateOptions::default(),
                &CronTab::new("nightly", spec).in_namespace("default"),
            ),
        )
        .unwrap();
    let second = run_ok("operator", &["--kubeconfig", kubeconfig, "--duration", "5"]);
    assert!(
        second.contains("reconciled default/nightly: job nightly-run, parallelism 2"),
        "{second}"
    );
    let job = runtime
        .block_on(ResourceClient::<Job>::namespaced(client, "default").get("nightly-run"))
        .unwrap();
    let owner = &job.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("CronTab", "nightly", Some(true))
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&directory);
}

/// A pod is stopped with SIGTERM: the operator (a manager) and the
/// controller (client-go's loop) stop gracefully on it, with their summary
/// and status 0, as on Ctrl-C.
#[test]
fn sigterm_stops_the_long_running_examples_gracefully() {
    use clientgo::testing::TestApiServer;
    use std::io::BufRead;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestApiServer::builder().start()).unwrap();
    let (directory, kubeconfig) = kubeconfig_in_temp_dir(&server, "sigterm");
    for (program, path, running, stopped) in [
        (
            "operator",
            env!("CARGO_BIN_EXE_operator"),
            "installed CustomResourceDefinition",
            "operator stopped: ",
        ),
        (
            "controller",
            env!("CARGO_BIN_EXE_controller"),
            "synced",
            "stopped by a signal; draining the queue",
        ),
    ] {
        let mut child = Command::new(path)
            .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        for line in lines.by_ref().map_while(Result::ok) {
            let started = line.contains(running);
            seen.push(line);
            if started {
                break;
            }
        }
        assert!(
            seen.iter().any(|line| line.contains(running)),
            "{program} never said {running:?}: {seen:?}"
        );
        let killed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        seen.extend(lines.map_while(Result::ok));
        let status = child.wait().unwrap();
        assert!(
            status.success(),
            "{program} exited {status:?} on SIGTERM: {seen:?}"
        );
        assert!(
            seen.iter().any(|line| line.contains(stopped)),
            "{program} stopped without {stopped:?}: {seen:?}"
        );
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn the_dynamic_example_finds_a_resource_through_discovery() {
    let text = run_ok(
        "dynamic",
        &["apps/v1/deployments", "--embedded", "--duration", "2"],
    );
    assert!(
        text.contains("watching deployments (kind Deployment)"),
        "{text}"
    );
    assert!(text.contains("deployments cached by namespace"), "{text}");

    let unknown = run(
        "dynamic",
        &["example.com/v1/widgets", "--embedded", "--duration", "1"],
    );
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("does not serve"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn help_bad_flags_and_unreachable_clusters_are_clear() {
    for program in ["controller", "informer", "crd", "dynamic", "operator"] {
        let help = run(program, &["--help"]);
        assert!(help.status.success());
        // Every program's flags come from clap, the shared ones included.
        assert!(
            stdout(&help).contains("--kubeconfig <FILE>"),
            "{program}: {}",
            stdout(&help)
        );
        let version = run(program, &["--version"]);
        assert!(version.status.success(), "{program}");
        assert!(
            stdout(&version).contains(env!("CARGO_PKG_VERSION")),
            "{program}: {}",
            stdout(&version)
        );

        let bad = run(program, &["--embedded", "--colour"]);
        assert_eq!(bad.status.code(), Some(2), "{program}");
        assert!(
            stderr(&bad).contains("\"--colour\"") || stderr(&bad).contains("'--colour'"),
            "{program}: {}",
            stderr(&bad)
        );
        assert!(!stderr(&bad).contains("panicked"));
    }
    let bad_number = run("controller", &["--workers", "many"]);
    assert_eq!(bad_number.status.code(), Some(2));
    assert!(
        stderr(&bad_number).contains("many") && stderr(&bad_number).contains("--workers"),
        "{}",
        stderr(&bad_number)
    );
    let bad_lease = run("controller", &["--lease-duration=0", "--embedded"]);
    assert_eq!(bad_lease.status.code(), Some(2));
    assert!(
        stderr(&bad_lease).contains("positive"),
        "{}",
        stderr(&bad_lease)
    );

    let directory = std::env::temp_dir().join(format!("clientgo-examples-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let kubeconfig = directory.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster: {server: \"https://127.0.0.1:1\"}\ncontexts:\n- name: gone\n  context: {cluster: gone, user: nobody}\ncurrent-context: gone\nusers:\n- name: nobody\n  user: {token: not-a-real-token}\n",
    )
    .unwrap();
    let unreachable = run(
        "controller",
        &["--kubeconfig", kubeconfig.to_str().unwrap()],
    );
    assert_eq!(unreachable.status.code(), Some(1));
    let message = stderr(&unreachable);
    assert!(
        message.contains("cannot reach the cluster at https://127.0.0.1:1"),
        "{message}"
    );
    assert!(
        !message.contains("not-a-real-token"),
        "no secrets in errors: {message}"
    );

    let missing = run("informer", &["--kubeconfig", "/no/such/kubeconfig"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("/no/such/kubeconfig"),
        "{}",
        stderr(&missing)
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Found against a real server: the controller, run by a user without RBAC
/// for pods, printed the 403 only after its 60 s sync timeout.
#[test]
fn the_controller_without_rbac_exits_with_the_403_at_once() {
    use clientgo::apimachinery::GroupResource;
    use clientgo::testing::{TestApiServer, Verb};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pods = GroupResource::new("", "pods");
    let server = runtime
        .block_on(
            TestApiServer::builder()
                .deny(Verb::List, pods.clone())
                .deny(Verb::Watch, pods)
                .start(),
        )
        .unwrap();
    let (directory, kubeconfig) = kubeconfig_in_temp_dir(&server, "rbac");
    let started = std::time::Instant::now();
    let output = run(
        "controller",
        &["--kubeconfig", kubeconfig.to_str().unwrap()],
    );
    let took = started.elapsed();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("forbidden"), "{message}");
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    drop(server);
    let _ = std::fs::remove_dir_all(&directory);
}

/// A controller process whose stdout lines arrive on a channel.
struct Replica {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Replica {
    fn start(kubeconfig: &std::path::Path, extra: &[&str]) -> Replica {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_controller"))
            .args([
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "--leader-elect",
                "--lease-duration",
                "3",
                "--duration",
                "60",
            ])
            .args(extra)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Replica {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits up to `patience` for a line starting with `prefix`.
    fn wait_for(&mut self, prefix: &str, patience: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + patience;
        if self.seen.iter().any(|line| line.starts_with(prefix)) {
            return true;
        }
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.starts_with(prefix);
                    self.seen.push(line);
                    if found {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two replicas with `--leader-elect` against one server: one leads, the
/// other waits; when the leader's process is killed (no release), the
/// other takes over once the 3 s lease has run out.
#[test]
fn two_controllers_hand_over_leadership_when_the_leader_dies() {
    use clientgo::testing::TestApiServer;
    use std::time::{Duration, Instant};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestApiServer::builder().start()).unwrap();
    let (directory, kubeconfig) = kubeconfig_in_temp_dir(&server, "leader");

    let mut first = Replica::start(&kubeconfig, &[]);
    assert!(
        first.wait_for("leading as ", Duration::from_secs(20)),
        "the first replica never led: {:?}",
        first.seen
    );
    let mut second = Replica::start(&kubeconfig, &[]);
    assert!(
        second.wait_for("waiting to lead as ", Duration::from_secs(20)),
        "{:?}",
        second.seen
    );
    // While the first renews, the second does not lead.
    assert!(
        !second.wait_for("leading as ", Duration::from_secs(4)),
        "two leaders: {:?}",
        second.seen
    );

    let killed = Instant::now();
    drop(first);
    assert!(
        second.wait_for("leading as ", Duration::from_secs(15)),
        "the second replica never took over: {:?}",
        second.seen
    );
    let took = killed.elapsed();
    // The lease (3 s) must run out first; then a retry period (0.4 s,
    // jittered up to 2.2x) and the requests.
    assert!(
        took >= Duration::from_millis(1_500),
        "took over after {took:?}"
    );
    assert!(took <= Duration::from_secs(8), "took over after {took:?}");
    drop(second);
    drop(server);
    let _ = std::fs::remove_dir_all(&directory);
}

/// With `--warm-standby` the waiting replica lists and watches before it
/// leads, so it takes over with every pod already cached.
#[test]
fn a_warm_standby_takes_over_with_a_synced_cache() {
    use clientgo::apimachinery::GroupResource;
    use clientgo::testing::TestApiServer;
    use std::time::Duration;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestApiServer::builder().start()).unwrap();
    for index in 0..20 {
        server
            .storage()
            .create(
                &GroupResource::new("", "pods"),
                "default",
                serde_json::json!({"metadata": {"name": format!("pod-{index}")}, "spec": {"containers": []}}),
            )
            .unwrap();
    }
    let (directory, kubeconfig) = kubeconfig_in_temp_dir(&server, "warm");

    let mut first = Replica::start(&kubeconfig, &[]);
    assert!(
        first.wait_for("leading as ", Duration::from_secs(20)),
        "{:?}",
        first.seen
    );
    let mut standby = Replica::start(&kubeconfig, &["--warm-standby"]);
    // Synced while the first leads.
    assert!(
        standby.wait_for("standing by with a synced cache", Duration::from_secs(20)),
        "{:?}",
        standby.seen
    );
    assert!(
        standby
            .seen
            .iter()
            .any(|line| line.starts_with("synced 20 pods")),
        "{:?}",
        standby.seen
    );
    assert!(
        !standby.seen.iter().any(|line| line.starts_with("leading")),
        "{:?}",
        standby.seen
    );
    drop(first);
    assert!(
        standby.wait_for("leading after ", Duration::from_secs(15)),
        "{:?}",
        standby.seen
    );
    let took_over = standby
        .seen
        .iter()
        .find(|line| line.starts_with("leading after "))
        .unwrap();
    assert!(took_over.contains("(20 pods)"), "{took_over}");
    drop(standby);
    drop(server);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn the_lister_indexer_example_reads_through_both_indexes() {
    let text = run_ok("lister-indexer", &["--embedded"]);
    assert!(text.contains("200 pods cached"), "{text}");
    assert!(
        text.contains("get default/no-such-pod: not cached"),
        "{text}"
    );
    for index in ["(index by-node)", "(index by-app)", "(lister)"] {
        let line = text
            .lines()
            .find(|line| line.ends_with(index))
            .unwrap_or_else(|| panic!("no {index} line: {text}"));
        let count: u64 = line
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(count >= 1, "{line}");
    }
    assert!(text.contains(": found, resourceVersion"), "{text}");
}

#[test]
fn the_leader_election_example_hands_the_lease_over() {
    let text = run_ok("leader-election", &["--embedded"]);
    let leads: Vec<&str> = text.lines().filter(|line| line.contains(" lead")).collect();
    assert!(
        text.contains("stepped down and released the lease"),
        "{text}"
    );
    assert!(text.contains("leads now"), "{text}");
    let first = leads[0].split_whitespace().next().unwrap();
    let second = text
        .lines()
        .find(|line| line.ends_with("leads now"))
        .unwrap();
    assert!(
        !second.starts_with(first),
        "the other candidate takes over: {text}"
    );
}

#[test]
fn the_events_example_counts_identical_events_on_one_object() {
    let text = run_ok("events", &["--embedded"]);
    assert!(text.contains("recorded 3, created 2, patched 1"), "{text}");
    assert!(
        text.contains("event Normal Checked: the pod looks fine (count 2)"),
        "{text}"
    );
    assert!(
        text.contains("event Warning Slow: the pod took long to answer (count 1)"),
        "{text}"
    );
}

#[test]
fn the_warm_restart_example_resumes_from_its_snapshot() {
    let text = run_ok("warm-restart", &["--embedded"]);
    assert!(text.contains("first run: 500 pods synced"), "{text}");
    assert!(text.contains("snapshots loaded 0, written 1"), "{text}");
    let second = text
        .lines()
        .find(|line| line.starts_with("second run:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(second.contains("(Resumed)"), "{second}");
    assert!(second.contains("snapshots loaded 1"), "{second}");
}

#[test]
fn the_protobuf_example_keeps_protobuf_smaller_than_json() {
    let text = run_ok("protobuf", &["--embedded"]);
    let kib = |prefix: &str| -> u64 {
        let line = text
            .lines()
            .find(|line| line.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}: {text}"));
        line.split("cache ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    let protobuf = kib("protobuf, compact (the default): 1000 pods");
    let json = kib("JSON, compact: 1000 pods");
    assert!(
        protobuf < json,
        "protobuf {protobuf} KiB against JSON {json} KiB"
    );
    assert!(text.contains("JSON, decoded: 1000 pods"), "{text}");
}

#[test]
fn the_sharded_controller_moves_shards_between_replica_processes() {
    let snapshots = std::env::temp_dir().join(format!("clientgo-sharded-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&snapshots);
    std::fs::create_dir_all(&snapshots).unwrap();
    let output = run(
        "sharded-controller",
        &[
            "--replicas",
            "3",
            "--pods",
            "600",
            // The kill at a third, the new replica at two thirds: 12 s
            // apart, so the killed replica's shards (about two 4 s lease
            // durations) are taken over before the new one joins and
            // handed to it from the takers' saves (at 24 s, 8 s apart, a
            // loaded CI machine gave the new replica the freed shards
            // directly, with nothing to resume).
            "--duration",
            "36",
            "--snapshot-dir",
            snapshots.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_dir_all(&snapshots);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}\n{}", stderr(&output));
    assert!(text.contains("killed replica-0"), "{text}");
    assert!(text.contains("started replica-3"), "{text}");
    assert!(text.contains("shards held     16 of 16"), "{text}");
    assert!(text.contains("pods cached     600 of 600"), "{text}");
    // The shards handed to the new replica start from the saves of the
    // replicas that released them.
    let resumed = summary_number(&text, "shards resumed");
    assert!(resumed >= 1, "{text}");
}
