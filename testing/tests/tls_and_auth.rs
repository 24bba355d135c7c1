//! HTTPS, ALPN, bearer-token and client-certificate authentication, and the
//! kubeconfig the server writes, checked with a rustls client over real
//! sockets.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use base64::Engine as _;
use clientgo_apimachinery::Status;
use clientgo_testing::{CertificateAndKey, TestApiServer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;

struct Answer {
    status: u16,
    body: Vec<u8>,
}

fn connector(ca_pem: &str, client: Option<&CertificateAndKey>, alpn: &[&[u8]]) -> TlsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match client {
        Some(client) => builder
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(client.certificate_pem.as_bytes())
                    .map(Result::unwrap)
                    .collect(),
                PrivateKeyDer::from_pem_slice(client.key_pem.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

/// Sends one HTTP/1.1 GET over TLS and reads the whole answer.
async fn get(
    server: &TestApiServer,
    ca_pem: &str,
    path: &str,
    token: Option<&str>,
    client: Option<&CertificateAndKey>,
) -> std::io::Result<Answer> {
    let tcp = tokio::net::TcpStream::connect(server.address()).await?;
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = connector(ca_pem, client, &[b"http/1.1"])
        .connect(name, tcp)
        .await?;
    let authorization = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{authorization}Connection: close\r\n\r\n"
    );
    tls.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    tls.read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body_start = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(raw.len(), |i| i + 4);
    Ok(Answer {
        status,
        body: raw[body_start..].to_vec(),
    })
}

#[tokio::test]
async fn https_verified_by_the_servers_ca() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let ca = server.ca_pem().unwrap().to_string();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
    let answer = get(&server, &ca, "/api/v1/namespaces/default/pods", None, None)
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn the_wrong_ca_is_refused() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let other = TestApiServer::builder().tls().start().await.unwrap();
    let wrong_ca = other.ca_pem().unwrap().to_string();
    let result = get(&server, &wrong_ca, "/version", None, None).await;
    assert!(
        result.is_err(),
        "a certificate from another CA must not be trusted"
    );
}

#[tokio::test]
async fn http2_is_negotiated_by_alpn() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let ca = server.ca_pem().unwrap().to_string();
    let tcp = tokio::net::TcpStream::connect(server.address())
        .await
        .unwrap();
    let tls = connector(&ca, None, &[b"h2", b"http/1.1"])
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
}

#[tokio::test]
async fn bearer_tokens_are_required_except_on_public_paths() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("s3cret")
        .start()
        .await
        .unwrap();
    let ca = server.ca_pem().unwrap().to_string();
    let pods = "/api/v1/namespaces/default/pods";
    let anonymous = get(&server, &ca, pods, None, None).await.unwrap();
    assert_eq!(anonymous.status, 401);
    let status: Status = serde_json::from_slice(&anonymous.body).unwrap();
    assert!(status.is_unauthorized());
    assert_eq!(
        get(&server, &ca, pods, Some("wrong"), None)
            .await
            .unwrap()
            .status,
        401
    );
    assert_eq!(
        get(&server, &ca, pods, Some("s3cret"), None)
            .await
            .unwrap()
            .status,
        200
    );
    assert_eq!(
        get(&server, &ca, "/healthz", None, None)
            .await
            .unwrap()
            .status,
        200
    );
    assert_eq!(
        get(&server, &ca, "/version", None, None)
            .await
            .unwrap()
            .status,
        200
    );
}

#[tokio::test]
async fn client_certificates_authenticate() {
    let server = TestApiServer::builder()
        .client_certificate_auth()
        .start()
        .await
        .unwrap();
    let ca = server.ca_pem().unwrap().to_string();
    let client = server.client_certificate().unwrap().clone();
    assert!(format!("{client:?}").contains("<redacted>"));
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(
        get(&server, &ca, pods, None, Some(&client))
            .await
            .unwrap()
            .status,
        200
    );
    assert_eq!(
        get(&server, &ca, pods, None, None).await.unwrap().status,
        401
    );
}

#[tokio::test]
async fn kubeconfig_points_at_the_server_with_its_credentials() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("t0ken")
        .start()
        .await
        .unwrap();
    let kubeconfig = server.kubeconfig();
    assert!(kubeconfig.contains(&format!("server: {}", server.url())));
    assert!(kubeconfig.contains("token: t0ken"));
    assert!(kubeconfig.contains("current-context: clientgo-testing"));
    assert!(kubeconfig.contains("namespace: default"));
    let ca_line = kubeconfig
        .lines()
        .find_map(|line| line.trim().strip_prefix("certificate-authority-data: "))
        .unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(ca_line)
        .unwrap();
    assert_eq!(
        String::from_utf8(decoded).unwrap(),
        server.ca_pem().unwrap()
    );

    let directory = std::env::temp_dir().join(format!("clientgo-testing-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("kubeconfig");
    server.write_kubeconfig(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), kubeconfig);
    std::fs::remove_dir_all(&directory).unwrap();

    let plain = TestApiServer::builder().start().await.unwrap();
    assert!(!plain.kubeconfig().contains("certificate-authority-data"));
    assert!(plain.kubeconfig().contains("user:\n    {}"));
}
