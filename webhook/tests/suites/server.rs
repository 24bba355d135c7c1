//! The server's own answers: a panicking handler, malformed and
//! oversized reviews, wrong methods and paths, and the metrics.

use std::time::Duration;

use clientgo_webhook::{AdmissionResponse, WebhookServerOptions, handler_fn};
use serde_json::{Value, json};

use super::support::{plane, start, unique, webhook_client};

fn review(uid: &str) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE", "userInfo": {}, "object": {"metadata": {"name": "a"}}}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_answered_and_a_panic_does_not_stop_the_server() {
    let Some(plane) = plane().await else { return };
    let options = WebhookServerOptions::default()
        .max_body_bytes(4096)
        .handler_timeout(Duration::from_millis(300));
    let running = start(plane, &unique("server"), options, |server| {
        server
            .admission(
                "/raw",
                handler_fn(|request| async move {
                    match request.name.as_deref() {
                        Some("panic") => panic!("a handler's bug"),
                        Some("slow") => {
                            tokio::time::sleep(Duration::from_secs(2)).await;
                            AdmissionResponse::allowed()
                        }
                        _ => AdmissionResponse::allowed().with_warnings(vec!["seen".into()]),
                    }
                }),
            )
            .unwrap();
    })
    .await;
    let client = webhook_client(&running);
    let post = |path: &'static str, body: Vec<u8>, content_type: &'static str| {
        let client = client.clone();
        async move {
            client
                .post()
                .abs_path(path)
                .body(body, content_type)
                .max_retries(0)
                .send_raw()
                .await
        }
    };
    // A review is answered with its uid and the request's apiVersion.
    let answer = post(
        "/raw",
        serde_json::to_vec(&review("u-1")).unwrap(),
        "application/json",
    )
    .await
    .unwrap();
    let body: Value = answer.json().unwrap();
    assert_eq!(body["response"]["uid"], "u-1");
    assert_eq!(body["response"]["allowed"], true);
    assert_eq!(body["response"]["warnings"], json!(["seen"]));
    assert_eq!(body["apiVersion"], "admission.k8s.io/v1");

    // A panic is a 500 in the review, and the next request is served.
    let mut panicking = review("u-2");
    panicking["request"]["name"] = json!("panic");
    let body: Value = post(
        "/raw",
        serde_json::to_vec(&panicking).unwrap(),
        "application/json",
    )
    .await
    .unwrap()
    .json()
    .unwrap();
    assert_eq!(body["response"]["allowed"], false);
    assert_eq!(body["response"]["status"]["code"], 500);
    let mut slow = review("u-3");
    slow["request"]["name"] = json!("slow");
    let body: Value = post(
        "/raw",
        serde_json::to_vec(&slow).unwrap(),
        "application/json",
    )
    .await
    .unwrap()
    .json()
    .unwrap();
    assert_eq!(body["response"]["status"]["code"], 500);
    assert!(
        body["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("in time")
    );
    let again: Value = post(
        "/raw",
        serde_json::to_vec(&review("u-4")).unwrap(),
        "application/json",
    )
    .await
    .unwrap()
    .json()
    .unwrap();
    assert_eq!(again["response"]["allowed"], true);

    // Malformed, empty, oversized, wrong type, wrong path.
    for (path, body, content_type, code) in [
        ("/raw", b"{not json".to_vec(), "application/json", 400),
        ("/raw", Vec::new(), "application/json", 400),
        (
            "/raw",
            serde_json::to_vec(
                &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
            )
            .unwrap(),
            "application/json",
            400,
        ),
        ("/raw", vec![b' '; 10_000], "application/json", 413),
        (
            "/raw",
            serde_json::to_vec(&review("u-5")).unwrap(),
            "text/plain",
            400,
        ),
        (
            "/nowhere",
            serde_json::to_vec(&review("u-6")).unwrap(),
            "application/json",
            404,
        ),
    ] {
        let error = post(path, body, content_type).await.unwrap_err();
        assert_eq!(
            error.status().map(|s| s.code),
            Some(code),
            "{path}: {error}"
        );
    }

    // controller-runtime's metric names.
    let families = running.registry.gather();
    let names: Vec<&str> = families.iter().map(|family| family.name()).collect();
    for name in [
        "controller_runtime_webhook_requests_total",
        "controller_runtime_webhook_latency_seconds",
        "controller_runtime_webhook_requests_in_flight",
        "controller_runtime_webhook_panics_total",
    ] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    let panics = families
        .iter()
        .find(|f| f.name() == "controller_runtime_webhook_panics_total")
        .unwrap();
    assert_eq!(panics.get_metric()[0].get_counter().get_value(), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_are_asked_for_when_a_client_ca_is_set() {
    use clientgo::rest::config::PemSource;
    use clientgo_testing::CertificateAuthority;
    let Some(plane) = plane().await else { return };
    let client_ca = CertificateAuthority::new("webhook clients").unwrap();
    let ca_file = std::env::temp_dir().join(unique("clientgo-webhook-client-ca"));
    std::fs::write(&ca_file, client_ca.certificate_pem()).unwrap();
    let options = WebhookServerOptions::default().client_ca_file(&ca_file);
    let running = start(plane, &unique("mtls"), options, |server| {
        server
            .admission(
                "/raw",
                handler_fn(|_| async { AdmissionResponse::allowed() }),
            )
            .unwrap();
    })
    .await;
    let send = |client: clientgo::rest::RestClient| async move {
        client
            .post()
            .abs_path("/raw")
            .body(
                serde_json::to_vec(&review("u-1")).unwrap(),
                "application/json",
            )
            .max_retries(0)
            .send_raw()
            .await
    };
    assert!(
        send(webhook_client(&running)).await.is_err(),
        "a client without a certificate is refused"
    );
    let pair = client_ca.client_certificate("kube-apiserver", &[]).unwrap();
    let mut config = clientgo::rest::Config::new(running.url.clone());
    config.tls.certificate_authority =
        Some(PemSource::Data(running.certificates.ca_pem().into_bytes()));
    config.tls.client_certificate = Some(PemSource::Data(pair.certificate_pem.into_bytes()));
    config.tls.client_key = Some(PemSource::Data(pair.key_pem.into_bytes()));
    let answer = send(clientgo::rest::RestClient::new(config).unwrap())
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    let _ = std::fs::remove_file(&ca_file);
}
