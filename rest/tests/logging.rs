//! Every request attempt is a debug span `request` carrying the verb, the
//! path, the status and the duration, and never a header value.
//!
//! (Its own test binary: tracing decides once per process whether a call
//! site is of interest, so a test that ran first with no subscriber would
//! hide the spans from this one.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use clientgo_apimachinery::ListOptions;
use clientgo_rest::{ResourceClient, RestClient};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use support::config_for;

/// Collects what the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn each_request_is_a_debug_span_without_header_values() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("clientgo_rest::request=debug")
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let server = TestApiServer::builder()
                .bearer_token("very-secret-token")
                .start()
                .await
                .unwrap();
            let client =
                RestClient::new(config_for(&server).bearer_token("very-secret-token")).unwrap();
            let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
            config_maps.list(&ListOptions::default()).await.unwrap();
            config_maps.get("missing").await.unwrap_err();
        });
    });
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains(
            "request{verb=GET path=/api/v1/namespaces/default/configmaps status=200 duration_ms="
        ),
        "{text}"
    );
    assert!(
        text.contains("path=/api/v1/namespaces/default/configmaps/missing status=404"),
        "{text}"
    );
    assert!(!text.contains("very-secret-token"), "{text}");
    assert!(
        !text.to_ascii_lowercase().contains("authorization"),
        "{text}"
    );
}
