//! No credential ever shows: every log line (all levels, captured by a
//! subscriber that records every field), every error message and every
//! `Debug` and `Display` of configurations and errors is scanned for the
//! tokens, passwords, keys and exec plugin output of an authenticated run
//! that also fails in every way a credential could leak through.
//!
//! One test in its own binary: it installs the process-wide subscriber.
//!
//! (Its own test binary: it installs the process-wide tracing subscriber.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod support;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use clientgo_apimachinery::{ListOptions, Status};
use clientgo_rest::{Config, Error, ResourceClient, RestClient, config::ExecConfig};
use clientgo_testing::{TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;
use support::{TempDir, config_for};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const TOKEN: &str = "token-SECRET-7f3a9c";
const ROTATED: &str = "token-SECRET-rotated-55e1";
const PASSWORD: &str = "password-SECRET-b0d2";
const EXEC_TOKEN: &str = "exec-SECRET-91aa";
const EXEC_ENV: &str = "env-SECRET-c4c4";
const LEAKED_BY_PLUGIN: &str = "partial-SECRET-0e0e";

/// Every span and event, written out as text with all its fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut text = self.0.lock().unwrap();
        let _ = write!(text, "\nspan {}", span.metadata().name());
        span.record(&mut Fields(&mut text));
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut text = self.0.lock().unwrap();
        let _ = write!(
            text,
            "\n{} {}",
            event.metadata().level(),
            event.metadata().target()
        );
        event.record(&mut Fields(&mut text));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

async fn list(client: &RestClient) -> Result<usize, Error> {
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    Ok(config_maps.list(&ListOptions::default()).await?.items.len())
}

/// Keeps the Display and Debug of `error` for the scan.
fn keep(shown: &mut Vec<String>, error: &Error) {
    shown.push(format!("{error}"));
    shown.push(format!("{error:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_password_or_key_reaches_a_log_an_error_or_a_debug_string() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();
    let mut shown: Vec<String> = Vec::new();

    // A bearer token over TLS: requests, a watch, a 401 after rotation.
    let server = TestApiServer::builder()
        .client_certificate_auth()
        .bearer_token(TOKEN)
        .start()
        .await
        .unwrap();
    let config = config_for(&server).bearer_token(TOKEN);
    shown.push(format!("{config:?}"));
    shown.push(format!("{config}"));
    let client = RestClient::new(config).unwrap();
    shown.push(format!("{client:?}"));
    assert_eq!(list(&client).await.unwrap(), 0);
    let watch = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .watch(&ListOptions::default())
        .await
        .unwrap();
    drop(watch);
    server
        .faults()
        .fail_next(Some(Verb::List), Status::internal_error("etcd hiccup"));
    keep(&mut shown, &list(&client).await.unwrap_err());
    server.rotate_bearer_token(ROTATED);
    let unauthorized = list(&client).await.unwrap_err();
    assert!(unauthorized.is_unauthorized(), "{unauthorized}");
    keep(&mut shown, &unauthorized);

    // Basic auth, which this server refuses.
    let basic = config_for(&server).basic_auth("jane", PASSWORD);
    shown.push(format!("{basic:?}"));
    shown.push(format!("{basic}"));
    keep(
        &mut shown,
        &list(&RestClient::new(basic).unwrap()).await.unwrap_err(),
    );

    // A client certificate: its key must not show.
    let certificate = server.client_certificate().unwrap().clone();
    let key_line = certificate.key_pem.lines().nth(1).unwrap().to_string();
    let with_certificate = config_for(&server).client_certificate_pem(
        certificate.certificate_pem.clone(),
        certificate.key_pem.clone(),
    );
    shown.push(format!("{with_certificate:?}"));
    let client = RestClient::new(with_certificate).unwrap();
    assert_eq!(list(&client).await.unwrap(), 0);

    // An exec plugin: its token, an env value, and output that is cut off
    // in the middle of a token.
    let directory = TempDir::new("secrets");
    server.rotate_bearer_token(EXEC_TOKEN);
    let good = directory.script(
        "good.sh",
        &format!(
            "printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{EXEC_TOKEN}\"}}}}'"
        ),
    );
    let exec = ExecConfig::new(good.to_string_lossy(), "client.authentication.k8s.io/v1")
        .env("CLOUD_SECRET", EXEC_ENV);
    let exec_config = config_for(&server).exec(exec);
    shown.push(format!("{exec_config:?}"));
    assert_eq!(
        list(&RestClient::new(exec_config).unwrap()).await.unwrap(),
        0
    );
    let cut_off = directory.script(
        "cut.sh",
        &format!(
            "printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{LEAKED_BY_PLUGIN}'"
        ),
    );
    let exec = ExecConfig::new(cut_off.to_string_lossy(), "client.authentication.k8s.io/v1");
    let error = list(&RestClient::new(config_for(&server).exec(exec)).unwrap())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("invalid ExecCredential"),
        "{error}"
    );
    keep(&mut shown, &error);

    // A kubeconfig holding a token, with a YAML error on the next line,
    // and one with a bad field elsewhere.
    for (name, text) in [
        (
            "broken-yaml",
            format!("users:\n- name: u\n  user:\n    token: {TOKEN}\n  bad: [unclosed\n"),
        ),
        (
            "bad-ca",
            format!(
                "clusters:\n- name: c\n  cluster:\n    server: https://c\n    certificate-authority-data: '***'\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n    password: {PASSWORD}\n    username: jane\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
            ),
        ),
    ] {
        let path = directory.write(name, text);
        let error = Config::from_kubeconfig_file(&path).unwrap_err();
        shown.push(format!("{error}"));
        shown.push(format!("{error:?}"));
    }

    let logs = capture.0.lock().unwrap().clone();
    assert!(
        logs.lines().count() > 5,
        "the capture saw the run's logs:\n{logs}"
    );
    let secrets = [
        TOKEN,
        ROTATED,
        PASSWORD,
        EXEC_TOKEN,
        EXEC_ENV,
        LEAKED_BY_PLUGIN,
        key_line.as_str(),
    ];
    let mut leaks = Vec::new();
    for secret in secrets {
        if logs.contains(secret) {
            leaks.push(format!("a log line holds {secret}"));
        }
        for text in &shown {
            if text.contains(secret) {
                leaks.push(format!("{secret} shows in: {text}"));
            }
        }
    }
    println!(
        "scanned {} log lines and {} error, Debug and Display strings for {} secrets",
        logs.lines().count(),
        shown.len(),
        secrets.len()
    );
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}
