//! The `test-apiserver` program: flags, first-line URL, seeding, churn.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

const PROGRAM: &str = env!("CARGO_BIN_EXE_test-apiserver");

/// Kills the server when the test ends, whatever happens.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(arguments: &[&str]) -> (Running, String) {
    let mut child = Command::new(PROGRAM)
        .args(arguments)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    (Running(child), first.trim().to_string())
}

#[test]
fn help_and_bad_flags() {
    let help = Command::new(PROGRAM).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--seed-pods <N>"));
    let version = Command::new(PROGRAM).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
    let bad = Command::new(PROGRAM).arg("--bogus").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("'--bogus'"));
    let missing = Command::new(PROGRAM).arg("--seed-pods").output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--seed-pods"));
    let bad_code = Command::new(PROGRAM)
        .args(["--fail-code=404"])
        .output()
        .unwrap();
    assert_eq!(bad_code.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_code.stderr).contains("410, 429, 500, 503"));
    let not_a_number = Command::new(PROGRAM)
        .args(["--churn", "fast"])
        .output()
        .unwrap();
    assert_eq!(not_a_number.status.code(), Some(2));
}

#[tokio::test]
async fn seeds_pods_writes_a_kubeconfig_and_churns() {
    let directory = std::env::temp_dir().join(format!("test-apiserver-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let kubeconfig = directory.join("kubeconfig");
    let (_server, url) = start(&[
        "--seed-pods",
        "30",
        "--namespaces",
        "3",
        "--kubeconfig-out",
        kubeconfig.to_str().unwrap(),
        "--churn",
        "200",
    ]);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let client = crate::support::http_client();
    let list: Value = client
        .get(format!("{url}/api/v1/namespaces/namespace-1/pods"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let items = list["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|pod| pod["metadata"]["namespace"] == "namespace-1")
    );
    let first_rv: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again: Value = client
        .get(format!("{url}/api/v1/pods?limit=1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let later_rv: u64 = again["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(later_rv > first_rv, "the churn writer made writes");
    let written = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(written.contains(&format!("server: {url}")));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn fault_flags_inject_failures() {
    let (_server, url) = start(&[
        "--fail-every",
        "0.05",
        "--fail-code",
        "503",
        "--compact-every",
        "0.05",
    ]);
    let client = crate::support::http_client();
    let mut saw_503 = false;
    for _ in 0..40 {
        let response = client
            .get(format!("{url}/api/v1/pods"))
            .send()
            .await
            .unwrap();
        if response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE {
            saw_503 = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(saw_503, "--fail-every injected a 503");
}
