//! The `e2e` binary end to end at a tiny size: every client syncs, applies
//! the burst and relists, and the table, the JSON lines and the targets
//! are printed. (Its figures at this size mean nothing.)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::process::Command;

#[test]
fn every_client_runs_through_every_phase_and_the_report_is_printed() {
    let output = Command::new(env!("CARGO_BIN_EXE_e2e"))
        .args(["--pods", "60", "--events", "300", "--runs", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // The JSON lines, parsed once.
    let json: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // A client's median of a figure (NaN if absent).
    let figure = |client: &str, figure: &str| {
        json.iter()
            .find(|line| line["client"] == client && line["figure"] == figure)
            .and_then(|line| line["median"].as_f64())
            .unwrap_or(f64::NAN)
    };
    for client in [
        "limit",
        "clientgo",
        "clientgo-typed",
        "clientgo-decoded",
        "clientgo-list",
        "clientgo-lz4",
        "clientgo-json",
        "clientgo-watchlist",
        "clientgo-strip",
        "kube-rs",
        "kube-rs-streaming",
    ] {
        assert!(
            stdout.contains(&format!("| {client} | ")),
            "no row for {client}:\n{stdout}"
        );
        let lines: Vec<&serde_json::Value> = json
            .iter()
            .filter(|line| line["client"] == client)
            .collect();
        assert_eq!(lines.len(), 23, "{client}: one JSON line per figure");
        for line in &lines {
            assert_eq!(line["pods"], 60);
            assert_eq!(line["events"], 300);
        }
        let events = figure(client, "events_per_second");
        assert!(events > 0.0, "{client}: {events}");
        // The test server's process is the server whose CPU is read.
        let server = figure(client, "server_cpu_seconds");
        assert!(server >= 0.0, "{client}: server CPU {server}");
        if client != "limit" {
            let cpu = figure(client, "cpu_seconds");
            assert!(cpu > 0.0, "{client}: CPU {cpu}");
        }
    }
    assert!(stdout.contains("| client (CPU) |"), "{stdout}");
    // The defaults report their cache's bytes against their RSS.
    assert!(
        stdout.contains("| client (cache) |") && stdout.contains("| clientgo-decoded | "),
        "no cache table:\n{stdout}"
    );
    // The defaults time their lister's reads.
    assert!(
        stdout.contains("| client (lister) |") && stdout.contains("| clientgo-decoded | "),
        "no lister table:\n{stdout}"
    );
    // The compact clients save their cache and restart warm from it.
    for client in [
        "clientgo-compact",
        "clientgo-compact-watchlist",
        "clientgo-compact-typed",
    ] {
        assert!(
            stdout.contains(&format!("| {client} | ")),
            "no row for {client}:\n{stdout}"
        );
        assert_eq!(
            figure(client, "restart_listings"),
            0.0,
            "{client} resumed without listing"
        );
    }
    assert!(stdout.contains("| client (warm restart) |"));
    assert!(stdout.contains("target: warm restart (clientgo-compact): "));
    assert!(stdout.contains("target: initial sync (list): "));
    assert!(stdout.contains("target: relist (clientgo-json): peak RSS "));
    assert!(stdout.contains("target: defaults: sync "));
    // The stream's floor is timed and compared with the default informer.
    let stream_sync = figure("stream", "sync_seconds");
    assert!(stream_sync > 0.0, "stream: {stream_sync}");
    assert!(stdout.contains("target: limits: watch-list sync "));
    assert!(stdout.contains("target: limits (clientgo): RSS growth "));
    // The reader keeping the stream's frames is timed and compared too.
    assert!(figure("stream-keep", "sync_seconds") > 0.0, "{stdout}");
    assert!(figure("stream-keep", "cache_mib") > 0.0, "{stdout}");
    assert!(stdout.contains("a reader keeping each frame"));
    // A ReplicaSet controller's reads, from our lister and kube-rs's store.
    assert!(stdout.contains("| client (ReplicaSet reads) |"), "{stdout}");
    for client in ["clientgo", "kube-rs"] {
        assert!(
            figure(client, "replicaset_reads_per_s") > 0.0,
            "{client}: no ReplicaSet reads\n{stdout}"
        );
    }
}

/// Whether envtest's binaries are found (as the bench's server role finds
/// them); without them the real-server test is skipped, unless
/// `CLIENTGO_ENVTEST_REQUIRED` asks for them.
fn envtest_assets() -> bool {
    use clientgo_testing::envtest::{
        AssetSearch, Assets, assets_required, repository_unpack_script,
    };
    let search = AssetSearch {
        unpack_script: repository_unpack_script(),
        ..AssetSearch::default()
    };
    match Assets::find(&search) {
        Ok(_) => true,
        Err(error) if assets_required() => panic!("envtest's binaries are required: {error}"),
        Err(error) => {
            eprintln!("skipped: no envtest binaries ({error})");
            false
        }
    }
}

#[test]
fn on_a_real_kube_apiserver_the_clients_sync_and_both_sides_cpu_is_reported() {
    if !envtest_assets() {
        return;
    }
    let output = Command::new(env!("CARGO_BIN_EXE_e2e"))
        .args(["--envtest", "--pods", "120", "--runs", "1"])
        .args(["--clients", "stream,clientgo,clientgo-list,kube-rs"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("120 pods ("), "{stdout}");
    assert!(
        stdout.contains("on a real kube-apiserver (envtest), sync only"),
        "{stdout}"
    );
    let median = |client: &str, figure: &str| {
        stdout
            .lines()
            .filter(|line| line.starts_with('{'))
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .find(|line| line["client"] == client && line["figure"] == figure)
            .and_then(|line| line["median"].as_f64())
            .unwrap_or(f64::NAN)
    };
    for client in ["stream", "clientgo", "clientgo-list", "kube-rs"] {
        assert!(median(client, "sync_seconds") > 0.0, "{client}\n{stdout}");
        assert!(median(client, "cpu_seconds") > 0.0, "{client}\n{stdout}");
        // kube-apiserver answered every sync: its CPU moved.
        assert!(
            median(client, "server_cpu_seconds") > 0.0,
            "{client}\n{stdout}"
        );
    }
    // The caches hold every seeded pod (a sync with another count fails the run).
    assert!(!stdout.contains("failed: "), "{stdout}");
    assert!(stdout.contains("target: watch-list: sync "), "{stdout}");
    assert!(
        !stdout.contains("events/s with a metadata handler"),
        "{stdout}"
    );
    // limit speaks plain HTTP to the test server only.
    let limit = Command::new(env!("CARGO_BIN_EXE_e2e"))
        .args([
            "--kubeconfig",
            "/nowhere",
            "--pods",
            "1",
            "--runs",
            "1",
            "--clients",
            "limit",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&limit.stdout).contains("failed: limit run 1: "));
    assert!(String::from_utf8_lossy(&limit.stderr).contains("limit speaks plain HTTP"));
}

#[test]
fn bad_flags_exit_2_and_name_the_flag() {
    for (args, named) in [
        (&["--pods", "none"][..], "--pods"),
        (&["--clients", "limit,go"][..], "\"go\""),
        (&["--colour", "red"][..], "--colour"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_e2e"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
    let help = Command::new(env!("CARGO_BIN_EXE_e2e"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--events <M>"));
}

#[test]
fn the_controller_bench_runs_both_controllers_and_prints_its_targets() {
    let output = Command::new(env!("CARGO_BIN_EXE_controller-bench"))
        .args(["--parents", "40", "--runs", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for row in ["| clientgo | ", "| kube-rs | "] {
        assert!(stdout.contains(row), "no row {row:?}:\n{stdout}");
    }
    for target in [
        "target: time to all reconciled ",
        "target: reconciles/s under churn ",
        "target: RSS ",
    ] {
        assert!(stdout.contains(target), "no {target:?}:\n{stdout}");
    }
}
