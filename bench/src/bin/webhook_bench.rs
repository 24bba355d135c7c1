//! `webhook-bench`: admission reviews per second and their latency at 8
//! concurrent requests, served by clientgo-webhook (a validator that
//! decodes the object and allows it) beside a plain hyper server that
//! echoes the review back over the same TLS (the floor: no decode, no
//! handler), each in a process of its own so its RSS is its own.
//!
//! `cargo run --release -p clientgo-bench --bin webhook-bench -- --seconds 10`
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use clientgo_webhook::{
    AdmissionRequest, Denial, DevelopmentCertificates, Validator, Warnings, WebhookOptions,
    WebhookServer, WebhookServerOptions,
};
use http_body_util::{BodyExt as _, Full};
use k8s_openapi::api::core::v1::ConfigMap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Admission webhook throughput against a plain echo floor.
#[derive(Debug, Parser)]
#[command(name = "webhook-bench")]
struct Flags {
    /// How long each server is loaded.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Internal: run one server (`webhook` or `echo`) with the
    /// certificates in this folder, printing its port.
    #[arg(long, hide = true)]
    serve: Option<String>,
    /// Internal: the certificate folder of `--serve`.
    #[arg(long, hide = true)]
    folder: Option<std::path::PathBuf>,
}

/// Allows every ConfigMap, after decoding it.
struct Allow;

impl Validator<ConfigMap> for Allow {
    async fn validate_create(
        &self,
        map: &ConfigMap,
        _: &AdmissionRequest,
    ) -> Result<Warnings, Denial> {
        std::hint::black_box(map);
        Ok(Vec::new())
    }
}

fn review(uid: usize) -> Vec<u8> {
    let data: serde_json::Map<String, serde_json::Value> = (0..16)
        .map(|i| {
            (
                format!("key-{i}"),
                serde_json::Value::from(format!("value-{i}-{}", "x".repeat(32))),
            )
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": format!("uid-{uid}"),
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "name": "settings", "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "admin", "groups": ["system:masters", "system:authenticated"]},
            "object": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "web"}},
                "data": data},
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
        }
    }))
    .unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flags = Flags::parse();
    let runtime = tokio::runtime::Runtime::new()?;
    match (&flags.serve, &flags.folder) {
        (Some(kind), Some(folder)) => runtime.block_on(serve(kind, folder)),
        _ => runtime.block_on(compare(&flags)),
    }
}

async fn serve(kind: &str, folder: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let (certificate, key) = (folder.join("tls.crt"), folder.join("tls.key"));
    let stop = tokio_util::sync::CancellationToken::new();
    if kind == "webhook" {
        let mut server = WebhookServer::new(
            WebhookServerOptions::default()
                .bind_address("127.0.0.1:0".parse()?)
                .certificate_files(certificate, key),
        );
        server.validating::<ConfigMap, _>(Allow, WebhookOptions::default().path("/validate"))?;
        let bound = server.bind().await?;
        println!("{}", bound.local_addr().port());
        bound.serve(stop).await?;
        return Ok(());
    }
    // The floor: hyper over the same TLS, the body echoed back.
    let chain = CertificateDer::pem_file_iter(&certificate)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(&key)?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?.port());
    loop {
        let (stream, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(
                |request: hyper::Request<hyper::body::Incoming>| async move {
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|c| c.to_bytes())
                        .unwrap_or_default();
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::<Bytes>::new(
                        body,
                    )))
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn compare(flags: &Flags) -> Result<(), Box<dyn std::error::Error>> {
    let certificates = DevelopmentCertificates::new(&["127.0.0.1"])?;
    let folder =
        std::env::temp_dir().join(format!("clientgo-webhook-bench-{}", std::process::id()));
    certificates.write_serving(&folder)?;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(
        certificates.ca_pem().as_bytes(),
    )?)?;
    println!("| server | reviews/s | p50 ms | p99 ms | RSS MiB |");
    println!("|---|---|---|---|---|");
    for (kind, path) in [("echo", "/"), ("webhook", "/validate")] {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--serve", kind, "--folder"])
            .arg(&folder)
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
        let port: u16 = line.trim().parse()?;
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots.clone())
        .with_no_client_auth();
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(config)
            .build()?;
        let url = format!("https://127.0.0.1:{port}{path}");
        // Warm up, then load.
        load(&client, &url, flags.concurrency, Duration::from_secs(1)).await;
        let (count, mut latencies) = load(
            &client,
            &url,
            flags.concurrency,
            Duration::from_secs(flags.seconds),
        )
        .await;
        latencies.sort();
        let at = |q: f64| {
            latencies
                .get(((latencies.len() as f64) * q) as usize)
                .copied()
                .unwrap_or_default()
        };
        let rss = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| {
                        l.split_whitespace()
                            .nth(1)
                            .and_then(|kb| kb.parse::<f64>().ok())
                    })
            })
            .unwrap_or_default()
            / 1024.0;
        println!(
            "| {kind} | {:.0} | {:.2} | {:.2} | {rss:.1} |",
            count as f64 / flags.seconds as f64,
            at(0.5).as_secs_f64() * 1000.0,
            at(0.99).as_secs_f64() * 1000.0
        );
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&folder);
    Ok(())
}

/// `concurrency` loops posting reviews for `window`: how many were
/// answered 200, and each one's latency.
async fn load(
    client: &reqwest::Client,
    url: &str,
    concurrency: usize,
    window: Duration,
) -> (usize, Vec<Duration>) {
    let deadline = Instant::now() + window;
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let (client, url) = (client.clone(), url.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut index = worker * 1_000_000;
            while Instant::now() < deadline {
                let began = Instant::now();
                let answer = client
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .body(review(index))
                    .send()
                    .await;
                if let Ok(response) = answer
                    && response.status().is_success()
                    && response.bytes().await.is_ok()
                {
                    latencies.push(began.elapsed());
                }
                index += 1;
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap_or_default());
    }
    (all.len(), all)
}
