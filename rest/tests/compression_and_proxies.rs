//! gzip-compressed answers and SOCKS5 proxies, against clientgo-testing's
//! server (which compresses as kube-apiserver does) and its SOCKS5 proxy,
//! over real loopback sockets.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, Ipv4Addr};

use crate::support::{TempDir, config_for};
use clientgo_apimachinery::{GroupResource, ListOptions};
use clientgo_rest::{
    Config, Error, ResourceClient, RestClient,
    config::{ConfigError, Proxy},
};
use clientgo_testing::{Socks5Proxy, Socks5ProxyOptions, Socks5Target, TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;

/// Enough config maps for a list over kube-apiserver's 128 KiB threshold.
async fn server_with_a_large_list(
    builder: clientgo_testing::TestApiServerBuilder,
) -> TestApiServer {
    let server = builder.start().await.unwrap();
    let filler = "x".repeat(1024);
    for i in 0..200 {
        server
            .storage()
            .create(
                &GroupResource::new("", "configmaps"),
                "default",
                serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}")},
                    "data": {"filler": filler},
                }),
            )
            .unwrap();
    }
    server
}

fn config_maps(client: RestClient) -> ResourceClient<ConfigMap> {
    ResourceClient::namespaced(client, "default")
}

fn last_list(server: &TestApiServer) -> clientgo_testing::RequestRecord {
    server
        .requests()
        .records()
        .into_iter()
        .rfind(|r| r.verb == Verb::List)
        .expect("a list was made")
}

/// Whether the request's `Accept-Encoding` named gzip.
fn asked_for_gzip(record: &clientgo_testing::RequestRecord) -> bool {
    record
        .header_values("accept-encoding")
        .iter()
        .any(|v| v.contains("gzip"))
}

/// Lists the config maps of `default` with a client built from `config`
/// and gives their number.
async fn count_config_maps(config: Config) -> usize {
    config_maps(RestClient::new(config).unwrap())
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn large_lists_are_asked_for_and_read_gzip_compressed() {
    let server = server_with_a_large_list(TestApiServer::builder()).await;
    let list = config_maps(RestClient::new(config_for(&server)).unwrap())
        .list(&ListOptions::default())
        .await
        .unwrap();
    assert_eq!(list.items.len(), 200);
    assert_eq!(
        list.items[7].data.as_ref().unwrap()["filler"].len(),
        1024,
        "the decompressed body is whole"
    );
    let record = last_list(&server);
    assert!(asked_for_gzip(&record), "{:?}", record.headers);
    assert_eq!(record.response_encoding.as_deref(), Some("gzip"));

    // A small answer is not compressed, as kube-apiserver leaves it.
    let client = RestClient::new(config_for(&server)).unwrap();
    let one = config_maps(client).get("cm-1").await.unwrap();
    assert_eq!(one.metadata.name.as_deref(), Some("cm-1"));
    let get = server.requests().records().into_iter().last().unwrap();
    assert_eq!(get.verb, Verb::Get);
    assert_eq!(get.response_encoding, None);
}

#[tokio::test]
async fn large_lists_stream_through_the_informer_path_compressed() {
    // The list decoder reads the decompressed body as it arrives, over TLS
    // and HTTP/2 as against a real cluster.
    let server = server_with_a_large_list(TestApiServer::builder().tls()).await;
    let client = RestClient::new(config_for(&server)).unwrap();
    let mut stream = config_maps(client)
        .list_stream(&ListOptions::default())
        .await
        .unwrap();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next_chunk().await.unwrap() {
        body.extend_from_slice(&chunk);
    }
    let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let count = list["items"].as_array().unwrap().len();
    assert_eq!(count, 200);
    assert_eq!(
        last_list(&server).response_encoding.as_deref(),
        Some("gzip")
    );
}

#[tokio::test]
async fn disable_compression_asks_for_plain_answers() {
    let server = server_with_a_large_list(TestApiServer::builder()).await;
    assert_eq!(
        count_config_maps(config_for(&server).disable_compression(true)).await,
        200
    );
    let record = last_list(&server);
    assert!(!asked_for_gzip(&record), "{:?}", record.headers);
    assert_eq!(record.response_encoding, None);
}

#[tokio::test]
async fn a_server_without_compression_answers_plain() {
    let server = server_with_a_large_list(TestApiServer::builder().gzip(false)).await;
    assert_eq!(count_config_maps(config_for(&server)).await, 200);
    assert_eq!(last_list(&server).response_encoding, None);
}

#[tokio::test]
async fn watches_are_never_compressed() {
    let server = server_with_a_large_list(TestApiServer::builder()).await;
    let client = config_maps(RestClient::new(config_for(&server)).unwrap());
    let list = client.list(&ListOptions::default()).await.unwrap();
    let options = ListOptions {
        resource_version: list.metadata.resource_version.clone(),
        ..ListOptions::default()
    };
    let mut events = client.watch(&options).await.unwrap();
    client.delete("cm-3", &Default::default()).await.unwrap();
    let mut seen = String::new();
    while !seen.contains("cm-3") {
        let chunk = events.next_chunk().await.unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("DELETED"), "{seen}");
    let watch = server
        .requests()
        .records()
        .into_iter()
        .find(|r| r.verb == Verb::Watch)
        .unwrap();
    assert!(asked_for_gzip(&watch));
    assert_eq!(watch.response_encoding, None);
}

fn kubeconfig(server_url: &str, cluster_extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         clusters:\n- name: k\n  cluster:\n    server: {server_url}\n{cluster_extra}\
         contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n\
         users:\n- name: u\n  user: {{}}\n"
    )
}

#[tokio::test]
async fn kubeconfig_disable_compression_is_honoured() {
    let server = server_with_a_large_list(TestApiServer::builder()).await;
    let directory = TempDir::new("disable-compression");
    let path = directory.write(
        "config",
        kubeconfig(&server.url(), "    disable-compression: true\n"),
    );
    let config = Config::from_kubeconfig_file(&path).unwrap();
    assert!(config.disable_compression);
    assert_eq!(count_config_maps(config).await, 200);
    assert_eq!(last_list(&server).response_encoding, None);
}

#[tokio::test]
async fn a_socks5_proxy_from_kubeconfig_carries_requests_and_resolves_the_name() {
    let server = TestApiServer::builder().start().await.unwrap();
    // A name only the proxy knows: the client must not resolve it itself,
    // as Go's client hands socks5 proxies the host name.
    let proxy = Socks5Proxy::start(
        Socks5ProxyOptions::default()
            .host("apiserver.behind.proxy", IpAddr::V4(Ipv4Addr::LOCALHOST)),
    )
    .await
    .unwrap();
    let port = server.address().port();
    let directory = TempDir::new("socks5");
    let path = directory.write(
        "config",
        kubeconfig(
            &format!("http://apiserver.behind.proxy:{port}"),
            &format!("    proxy-url: {}\n", proxy.url()),
        ),
    );
    let config = Config::from_kubeconfig_file(&path).unwrap();
    assert_eq!(config.proxy, Proxy::Url(proxy.url()));
    let client = config_maps(RestClient::new(config).unwrap());
    assert_eq!(
        client
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .len(),
        0
    );
    assert_eq!(
        proxy.targets().first(),
        Some(&Socks5Target::Name(
            "apiserver.behind.proxy".to_string(),
            port
        ))
    );
}

#[tokio::test]
async fn tls_and_credentials_go_through_a_socks5_proxy() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let proxy = Socks5Proxy::start(Socks5ProxyOptions::default().credentials("me", "secret"))
        .await
        .unwrap();
    let port = server.address().port();
    let address = proxy.address();
    let ca = server.ca_pem().unwrap().to_string();
    let through = |user: &str| {
        Config::new(format!("https://localhost:{port}"))
            .certificate_authority_pem(ca.clone())
            .proxy(Proxy::Url(format!("socks5://{user}@{address}")))
    };
    let client = RestClient::new(through("me:secret")).unwrap();
    assert_eq!(
        config_maps(client)
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .len(),
        0
    );
    assert_eq!(
        proxy.targets(),
        vec![Socks5Target::Name("localhost".to_string(), port)]
    );
    let refused = RestClient::new(through("me:wrong")).unwrap();
    let error = config_maps(refused)
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Http { .. }), "{error}");
}

#[tokio::test]
async fn an_unsupported_proxy_scheme_is_a_config_error_naming_the_field() {
    let directory = TempDir::new("bad-proxy");
    let path = directory.write(
        "config",
        kubeconfig("https://10.0.0.1", "    proxy-url: socks4://proxy:1080\n"),
    );
    let error = Config::from_kubeconfig_file(&path).unwrap_err();
    let ConfigError::InvalidField { field, message, .. } = &error else {
        panic!("{error}")
    };
    assert_eq!(field, "clusters[k].cluster.proxy-url");
    assert!(message.contains("socks4"), "{message}");
    assert!(message.contains("socks5"), "{message}");
}
