//! Client certificate and certificate authority files are re-read while
//! the client runs, as client-go rotates them: a changed file is used by
//! the next connections, a broken one leaves the old credentials in use.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::{TempDir, unrelated_ca_pem};
use clientgo_apimachinery::ListOptions;
use clientgo_rest::{Config, Error, ResourceClient, RestClient, config::PemSource};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::ConfigMap;

const INTERVAL: Duration = Duration::from_millis(200);

async fn list(client: &RestClient) -> Result<usize, Error> {
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    Ok(config_maps.list(&ListOptions::default()).await?.items.len())
}

/// A client certificate and key no CA of the server signed.
fn unrelated_client_pair() -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["stranger".to_string()]).unwrap();
    (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
}

#[tokio::test]
async fn a_rotated_client_certificate_file_is_presented_on_new_connections() {
    let server = TestApiServer::builder()
        .tls()
        .client_certificate_auth()
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("client-cert-rotation");
    let (stranger_cert, stranger_key) = unrelated_client_pair();
    let cert = directory.write("client.crt", &stranger_cert);
    let key = directory.write("client.key", &stranger_key);
    let mut config = Config::new(server.url())
        .certificate_authority_pem(server.ca_pem().unwrap())
        .tls_file_reload_interval(INTERVAL)
        .max_retries(0);
    config.tls.client_certificate = Some(PemSource::File(cert.clone()));
    config.tls.client_key = Some(PemSource::File(key.clone()));
    let client = RestClient::new(config).unwrap();
    assert!(list(&client).await.is_err(), "a stranger's certificate");

    // The renewed pair lands in the files (key first, as a rotation tool
    // writing two files may: the check in between sees a mismatched pair
    // and keeps the old one).
    let identity = server.client_certificate().unwrap();
    std::fs::write(&key, &identity.key_pem).unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert!(
        list(&client).await.is_err(),
        "a mismatched pair is not used"
    );
    std::fs::write(&cert, &identity.certificate_pem).unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert_eq!(
        list(&client).await.unwrap(),
        0,
        "the new pair authenticates"
    );

    // A broken file afterwards keeps the working pair.
    std::fs::write(&cert, "not a certificate").unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert_eq!(list(&client).await.unwrap(), 0);
}

#[tokio::test]
async fn a_rotated_certificate_authority_file_is_trusted_on_new_connections() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let directory = TempDir::new("ca-rotation");
    let authority = directory.write("ca.crt", unrelated_ca_pem());
    let mut config = Config::new(server.url())
        .tls_file_reload_interval(INTERVAL)
        .max_retries(0);
    config.tls.certificate_authority = Some(PemSource::File(authority.clone()));
    let client = RestClient::new(config).unwrap();
    let refused = list(&client).await.unwrap_err();
    assert!(matches!(refused, Error::Http { .. }), "{refused}");

    std::fs::write(&authority, server.ca_pem().unwrap()).unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert_eq!(
        list(&client).await.unwrap(),
        0,
        "the new authority is trusted"
    );

    std::fs::write(&authority, "").unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert_eq!(list(&client).await.unwrap(), 0, "an empty file is ignored");
}

#[tokio::test]
async fn inline_data_and_a_zero_interval_are_never_reloaded() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let directory = TempDir::new("no-rotation");
    let authority = directory.write("ca.crt", unrelated_ca_pem());
    let mut config = Config::new(server.url())
        .tls_file_reload_interval(Duration::ZERO)
        .max_retries(0);
    config.tls.certificate_authority = Some(PemSource::File(authority.clone()));
    let client = RestClient::new(config).unwrap();
    assert!(list(&client).await.is_err());
    std::fs::write(&authority, server.ca_pem().unwrap()).unwrap();
    tokio::time::sleep(INTERVAL * 2).await;
    assert!(list(&client).await.is_err(), "reloading is off");
}
