//! Metrics as a scraper sees them: the REST client's and the workqueue's
//! families under client-go's names, served at `/metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use clientgo::rest::{Config, RestClient, metrics::PrometheusRequestMetrics};
use clientgo::testing::TestApiServer;
use clientgo_examples::MetricsServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn scrape(address: std::net::SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_results_latencies_and_waits_are_counted_under_client_gos_names() {
    let server = TestApiServer::builder().start().await.unwrap();
    let registry = prometheus::Registry::new();
    let metrics = PrometheusRequestMetrics::register(&registry).unwrap();
    let client =
        // A limit set, so requests wait in it and the wait is counted (there
        // is none by default).
        RestClient::new(
            Config::new(server.url())
                .rate_limit(1000.0, 10)
                .request_metrics(Arc::new(metrics)),
        )
        .unwrap();
    let _ = client.get().abs_path("/version").send_raw().await.unwrap();
    let missing = client
        .get()
        .abs_path("/api/v1/namespaces/default/pods/missing")
        .send_raw()
        .await;
    assert!(missing.is_err());
    let metrics = MetricsServer::start("127.0.0.1:0".parse().unwrap(), registry)
        .await
        .unwrap();
    let text = scrape(metrics.address).await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let host = server.url().trim_start_matches("http://").to_string();
    for line in [
        format!("rest_client_requests_total{{code=\"200\",host=\"{host}\",method=\"GET\"}} 1"),
        format!("rest_client_requests_total{{code=\"404\",host=\"{host}\",method=\"GET\"}} 1"),
        format!("rest_client_request_duration_seconds_count{{host=\"{host}\",verb=\"GET\"}} 2"),
        format!(
            "rest_client_rate_limiter_duration_seconds_count{{host=\"{host}\",verb=\"GET\"}} 2"
        ),
    ] {
        assert!(text.contains(&line), "{line} not in:\n{text}");
    }
    assert!(!text.contains("authorization"), "no header values");
}

#[test]
fn the_controller_serves_metrics_with_metrics_addr() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_controller"))
        .args([
            "--embedded",
            "--pods",
            "50",
            "--duration",
            "4",
            "--metrics-addr",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("the controller printed its metrics address")
            .unwrap();
        if let Some(rest) = line.strip_prefix("metrics at http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    // Let it sync and reconcile a little, then scrape.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    assert!(text.contains("rest_client_requests_total{"), "{text}");
    assert!(text.contains("workqueue_adds_total{"), "{text}");
    assert!(
        text.contains("informer_processing_latency_seconds_count{"),
        "{text}"
    );
    for line in lines.by_ref() {
        let _ = line;
    }
    assert!(child.wait().unwrap().success());
}
