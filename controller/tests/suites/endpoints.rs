//! `/metrics` with controller-runtime's names, `/healthz` and `/readyz`, on
//! the test server and on the real kube-apiserver (one body, two
//! backends): the manager reaches the server through a proxy the test cuts,
//! so no cache can sync until it is restored.

use std::sync::Arc;

use clientgo_controller::{Action, Controller, ManagerOptions};
use clientgo_rest::RestClient;
use clientgo_testing::CuttableProxy;
use k8s_openapi::api::apps::v1::Deployment;

use crate::support::{eventually, on_each_cluster, start};

async fn get(url: String) -> (u16, String) {
    let response = clientgo_rest::reqwest::get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_probes_are_served() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    on_each_cluster(|cluster| async move {
        cluster.create_deployment("web").await;
        let local = "127.0.0.1:0".parse().unwrap();
        let proxy = CuttableProxy::start(cluster.backend().address())
            .await
            .unwrap();
        let through_proxy =
            RestClient::new(cluster.backend().config_at(proxy.https_url())).unwrap();
        let manager = clientgo_controller::Manager::new(
            through_proxy,
            cluster.scoped(
                ManagerOptions::default()
                    .metrics_bind_address(local)
                    .health_probe_bind_address(local),
            ),
        );
        Controller::for_::<Deployment>(&manager)
            .max_concurrent_reconciles(2)
            .complete(
                |_: Arc<Deployment>, _: Arc<()>| async { Ok::<_, String>(Action::done()) },
                Arc::new(()),
            )
            .unwrap();
        // No cache can sync while the manager is cut off.
        proxy.cut().await;
        let (stop, running) = start(&manager);
        eventually("the endpoints to listen", || async {
            manager.metrics_address().is_some() && manager.health_probe_address().is_some()
        })
        .await;
        let metrics = format!("http://{}/metrics", manager.metrics_address().unwrap());
        let probes = manager.health_probe_address().unwrap();
        assert_eq!(
            get(format!("http://{probes}/readyz")).await,
            (503, "caches not synced".to_string())
        );
        assert_eq!(
            get(format!("http://{probes}/healthz")).await,
            (200, "ok".to_string())
        );
        assert!(!manager.is_ready());
        proxy.restore();
        eventually("a reconcile counted", || async {
            get(metrics.clone()).await.1.contains(
            "controller_runtime_reconcile_total{controller=\"deployment\",result=\"success\"} 1",
        )
        })
        .await;
        let (status, text) = get(metrics.clone()).await;
        assert_eq!(status, 200);
        for line in [
            "controller_runtime_reconcile_total{controller=\"deployment\",result=\"error\"} 0",
            "controller_runtime_max_concurrent_reconciles{controller=\"deployment\"} 2",
            "controller_runtime_active_workers{controller=\"deployment\"} 0",
            "controller_runtime_reconcile_time_seconds_count{controller=\"deployment\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"deployment\"} 0",
            "workqueue_adds_total{name=\"deployment\"} 1",
        ] {
            assert!(text.contains(line), "no {line} in\n{text}");
        }
        // The REST client's families, from the requests the informer made.
        let host = proxy.address().to_string();
        let requests =
            format!("rest_client_requests_total{{code=\"200\",host=\"{host}\",method=\"GET\"}} ");
        let count = text
            .lines()
            .find_map(|line| line.strip_prefix(requests.as_str()))
            .and_then(|count| count.parse::<u64>().ok());
        assert!(
            count.is_some_and(|count| count > 0),
            "no {requests}in\n{text}"
        );
        assert!(
            text.contains("rest_client_request_duration_seconds_count{host="),
            "no request latency in\n{text}"
        );
        assert_eq!(
            get(format!("http://{probes}/healthz")).await,
            (200, "ok".to_string())
        );
        assert_eq!(
            get(format!("http://{probes}/readyz")).await,
            (200, "ok".to_string())
        );
        assert_eq!(get(format!("http://{probes}/nothing")).await.0, 404);
        stop.cancel();
        running.await.unwrap().unwrap();
        // Stopped: not ready, and no longer listening.
        assert!(!manager.is_ready());
        assert!(
            clientgo_rest::reqwest::get(format!("http://{probes}/healthz"))
                .await
                .is_err()
        );
    })
    .await;
}
