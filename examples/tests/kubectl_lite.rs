//! kubectl-lite run as a user runs it, against its embedded demo cluster:
//! each command's output and exit status.

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-lite"));
    command
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST");
    command
}

fn run(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?}: {}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

#[test]
fn get_finds_any_resource_by_any_name() {
    let pods = run_ok(&["get", "po"]);
    let lines: Vec<&str> = pods.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{pods}");
    assert!(
        lines[0].contains("STATUS") && lines[0].contains("NODE"),
        "{pods}"
    );
    assert!(pods.contains("web-0") && pods.contains("node-1"), "{pods}");
    assert_eq!(
        run_ok(&["get", "deploy", "-o", "name"]),
        "deployment.apps/web\n"
    );
    assert_eq!(
        run_ok(&["get", "pdb", "-o", "name"]),
        "poddisruptionbudget.policy/web\n"
    );
    let node: serde_json::Value =
        serde_json::from_str(&run_ok(&["get", "nodes", "node-2", "-o", "json"])).unwrap();
    assert_eq!(node["metadata"]["name"], "node-2");
    let unknown = run(&["get", "flurbs"]);
    assert!(!unknown.status.success());
    assert!(
        text(&unknown.stderr).contains("flurbs"),
        "{}",
        text(&unknown.stderr)
    );
}

#[test]
fn logs_are_read_and_followed() {
    let tail = run_ok(&["logs", "web-0", "--tail", "1"]);
    assert_eq!(tail, "10.244.0.9 - GET / 200\n", "{tail}");
    // Followed for 3 s: the demo pod writes a line a second.
    let followed = run_ok(&["--duration", "3", "logs", "-f", "web-1"]);
    let new_lines = followed
        .lines()
        .filter(|line| line.contains("/healthz"))
        .count();
    assert!(new_lines >= 2, "{followed}");
}

#[test]
fn exec_passes_streams_and_the_exit_code() {
    let output = run(&[
        "exec",
        "web-0",
        "--",
        "sh",
        "-c",
        "hostname; echo oops >&2; exit 3",
    ]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(text(&output.stdout), "web-0\n");
    assert!(text(&output.stderr).contains("oops\n"));
    let mut child = command(&["exec", "-i", "web-0", "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"through stdin\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(text(&output.stdout), "through stdin\n");
}

#[test]
fn port_forward_serves_local_connections() {
    let mut child = command(&["--duration", "20", "port-forward", "web-0", ":8080"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let first = text(&first);
    // "Forwarding from 127.0.0.1:PORT -> 8080"
    let address = first
        .strip_prefix("Forwarding from ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{first:?}"))
        .to_string();
    for _ in 0..2 {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: demo\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("hello from web"), "{answer}");
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn scale_and_drain_work_as_kubectls() {
    assert_eq!(
        run_ok(&["scale", "deploy/web", "--replicas", "5"]),
        "deployment.apps/web scaled (3 -> 5)\n"
    );
    let refused = run(&["drain", "node-1"]);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("--ignore-daemonsets"));
    // The budget (minAvailable 2 of 3) refuses the second eviction until
    // a replacement runs on node-2: retried after 5 s, as kubectl does.
    let output = run(&["drain", "node-1", "--ignore-daemonsets", "--timeout", "60"]);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("node/node-1 cordoned\n"), "{stdout}");
    for pod in ["web-0", "web-1", "web-2"] {
        assert!(stdout.contains(&format!("pod/{pod} evicted")), "{stdout}");
    }
    assert!(stdout.ends_with("node/node-1 drained\n"), "{stdout}");
    assert!(stderr.contains("will retry after 5s"), "{stderr}");
    assert!(stderr.contains("ignoring DaemonSet-managed pods: default/node-agent-node-1"));
}
