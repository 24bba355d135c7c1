//! TLS, authentication, exec plugins and HTTP/2 against clientgo-testing's
//! server over real loopback sockets.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Duration;

use crate::support::{TempDir, config_for, json_string, unrelated_ca_pem};
use clientgo_apimachinery::ListOptions;
use clientgo_rest::{
    Config, Error, ResourceClient, RestClient,
    config::{ExecConfig, Impersonation},
    reqwest,
};
use clientgo_testing::{ServerCertificateOptions, TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;

async fn list_config_maps(client: RestClient) -> Result<usize, Error> {
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    Ok(config_maps.list(&ListOptions::default()).await?.items.len())
}

/// Builds a client from `config` and lists config maps with it.
async fn list_with(config: Config) -> Result<usize, Error> {
    list_config_maps(RestClient::new(config)?).await
}

#[tokio::test]
async fn the_servers_ca_is_trusted_and_another_ca_is_refused() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let client = RestClient::new(config_for(&server)).unwrap();
    assert_eq!(list_config_maps(client).await.unwrap(), 0);

    let wrong = Config::new(server.url()).certificate_authority_pem(unrelated_ca_pem());
    let error = list_with(wrong).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::Http { .. }), "{message}");
    assert!(
        message.contains(&server.url()),
        "the URL is named: {message}"
    );
    assert!(
        message.to_lowercase().contains("certificate"),
        "the cause is named: {message}"
    );
}

/// Verification is on by default: without the server's CA (so with the
/// system's roots only), its certificate is refused.
#[tokio::test]
async fn a_self_signed_server_is_refused_without_its_ca() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let error = list_with(Config::new(server.url())).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::Http { .. }), "{message}");
    assert!(message.contains("UnknownIssuer"), "{message}");
    assert_eq!(server.requests().count(Verb::List), 0, "nothing was sent");
}

/// Starts a server with a certificate made as `options` say and returns it
/// with the message of the error a client trusting its CA gets.
async fn refused(options: ServerCertificateOptions) -> (TestApiServer, String) {
    let server = TestApiServer::builder()
        .tls_server_certificate(options)
        .start()
        .await
        .unwrap();
    let error = list_with(config_for(&server)).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::Http { .. }), "{message}");
    assert!(
        message.contains(&server.url()),
        "the URL is named: {message}"
    );
    (server, message)
}

#[tokio::test]
async fn an_expired_server_certificate_is_refused() {
    let (_server, message) = refused(ServerCertificateOptions {
        expired: true,
        ..ServerCertificateOptions::default()
    })
    .await;
    assert!(
        message.contains("certificate expired"),
        "the cause is named: {message}"
    );
}

#[tokio::test]
async fn a_certificate_for_another_host_is_refused() {
    let (server, message) = refused(ServerCertificateOptions {
        names: Some(vec!["api.elsewhere.example".to_string()]),
        ..ServerCertificateOptions::default()
    })
    .await;
    assert!(
        message.contains("not valid for name"),
        "the cause is named: {message}"
    );
    // The name it is for passes.
    let right = config_for(&server).tls_server_name("api.elsewhere.example");
    assert_eq!(list_with(right).await.unwrap(), 0);
}

#[tokio::test]
async fn insecure_skip_verify_connects_without_a_ca() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let config = Config::new(server.url()).insecure_skip_tls_verify(true);
    assert_eq!(list_with(config).await.unwrap(), 0);
}

#[tokio::test]
async fn a_server_name_override_is_used_for_verification() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    // The server's certificate is for 127.0.0.1 and localhost; a wrong name
    // must fail, the right one must pass even with the IP in the URL.
    let wrong = config_for(&server).tls_server_name("not-the-server.example");
    assert!(list_with(wrong).await.is_err());
    let right = config_for(&server).tls_server_name("localhost");
    assert_eq!(list_with(right).await.unwrap(), 0);
}

#[tokio::test]
async fn bearer_tokens_are_required_and_sent() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("s3cret")
        .start()
        .await
        .unwrap();
    let anonymous = RestClient::new(config_for(&server)).unwrap();
    let error = list_config_maps(anonymous).await.unwrap_err();
    assert!(error.is_unauthorized(), "{error}");

    let client = RestClient::new(config_for(&server).bearer_token("s3cret")).unwrap();
    assert_eq!(list_config_maps(client).await.unwrap(), 0);
    let last = server.requests().records().pop().unwrap();
    assert_eq!(last.header_values("authorization"), vec!["Bearer s3cret"]);
}

#[tokio::test]
async fn a_rotated_token_file_is_picked_up() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("first")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("token-file");
    let token_file = directory.write("token", "first\n");
    let client = RestClient::new(config_for(&server).bearer_token_file(&token_file)).unwrap();
    assert_eq!(list_config_maps(client.clone()).await.unwrap(), 0);

    // The token rotates: the server refuses the old one and the file holds
    // the new one. The cached token gets a 401, which makes the client read
    // the file again and retry once, well before the minute is up.
    server.rotate_bearer_token("second");
    std::fs::write(&token_file, "second").unwrap();
    assert_eq!(list_config_maps(client.clone()).await.unwrap(), 0);
    assert_eq!(client.stats().reauthentications, 1);
    let last = server.requests().records().pop().unwrap();
    assert_eq!(last.header_values("authorization"), vec!["Bearer second"]);
}

#[tokio::test]
async fn an_unreadable_token_file_is_an_auth_error_naming_it() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let client = RestClient::new(config_for(&server).bearer_token_file("/no/such/token")).unwrap();
    let error = list_config_maps(client).await.unwrap_err();
    assert!(matches!(error, Error::Auth(_)), "{error}");
    assert!(error.to_string().contains("/no/such/token"), "{error}");
}

#[tokio::test]
async fn client_certificates_authenticate() {
    let server = TestApiServer::builder()
        .tls()
        .client_certificate_auth()
        .start()
        .await
        .unwrap();
    let anonymous = RestClient::new(config_for(&server)).unwrap();
    assert!(
        list_config_maps(anonymous)
            .await
            .unwrap_err()
            .is_unauthorized()
    );
    let identity = server.client_certificate().unwrap();
    let config = config_for(&server)
        .client_certificate_pem(identity.certificate_pem.clone(), identity.key_pem.clone());
    assert_eq!(list_with(config).await.unwrap(), 0);
}

/// Found against a real kube-apiserver (100 streams per connection): with
/// every request on one HTTP/2 connection, the 101st watch and every GET
/// after it queued forever behind the open watches.
#[tokio::test]
async fn watches_past_the_servers_stream_limit_open_more_connections() {
    let server = TestApiServer::builder()
        .tls()
        .http2_max_concurrent_streams(3)
        .start()
        .await
        .unwrap();
    let client =
        RestClient::new(config_for(&server).watch_header_wait(Duration::from_secs(1))).unwrap();
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let mut watches = Vec::new();
    for _ in 0..10 {
        let watch = tokio::time::timeout(
            Duration::from_secs(10),
            config_maps.watch(&ListOptions::default()),
        )
        .await
        .expect("every watch is answered")
        .unwrap();
        assert_eq!(watch.http_version(), reqwest::Version::HTTP_2);
        watches.push(watch);
    }
    // A GET is answered at once, whatever the watches hold.
    tokio::time::timeout(Duration::from_secs(5), list_config_maps(client.clone()))
        .await
        .expect("a GET is answered")
        .unwrap();
    let stats = client.lane_stats();
    assert_eq!(stats.learned_limit, Some(3));
    assert_eq!(stats.assigned.iter().sum::<usize>(), 10);
    assert!(
        stats.assigned.iter().all(|&on_lane| on_lane <= 3),
        "{stats:?}"
    );
    let watch_connections: std::collections::BTreeSet<u64> = server
        .requests()
        .of(Verb::Watch)
        .iter()
        .filter(|record| record.status == 200)
        .map(|record| record.connection)
        .collect();
    assert_eq!(
        watch_connections.len(),
        4,
        "ten watches, three a connection"
    );
    // Watches opened together spread at once over lanes of the learned
    // limit.
    drop(watches);
    let _reopened = open_together(&config_maps, 10).await;
    assert_eq!(client.lane_stats().assigned.iter().sum::<usize>(), 10);
}

/// Opens `count` watches at once, each on its own task, as informers
/// starting together do; waits until every one is answered.
async fn open_together(
    config_maps: &ResourceClient<ConfigMap>,
    count: usize,
) -> Vec<clientgo_rest::client::ByteStream> {
    let opening: Vec<_> = (0..count)
        .map(|_| {
            let config_maps = config_maps.clone();
            tokio::spawn(async move { config_maps.watch(&ListOptions::default()).await })
        })
        .collect();
    let mut watches = Vec::new();
    for handle in opening {
        let watch = tokio::time::timeout(Duration::from_secs(10), handle)
            .await
            .expect("every concurrent watch is answered")
            .unwrap()
            .unwrap();
        watches.push(watch);
    }
    watches
}

#[tokio::test]
async fn http2_is_negotiated_and_watches_share_the_connection() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let client = RestClient::new(config_for(&server)).unwrap();
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let mut first = config_maps.watch(&ListOptions::default()).await.unwrap();
    let mut second = config_maps.watch(&ListOptions::default()).await.unwrap();
    assert_eq!(first.http_version(), reqwest::Version::HTTP_2);
    assert_eq!(second.http_version(), reqwest::Version::HTTP_2);
    list_config_maps(client).await.unwrap();
    let records = server.requests().records();
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record.http_version, "HTTP/2.0", "{record:?}");
    }
    assert_eq!(
        records[0].connection, records[1].connection,
        "two watches share one connection"
    );
    assert_ne!(
        records[2].connection, records[0].connection,
        "a list never queues behind watches: it has a connection of its own"
    );
    drop((first.next_chunk(), second.next_chunk()));

    // Over HTTP/1.1 a watch holds its connection: the next request opens
    // another.
    let http1 = RestClient::new(config_for(&server).disable_http2(true)).unwrap();
    server.requests().clear();
    let http1_watch = ResourceClient::<ConfigMap>::namespaced(http1.clone(), "default")
        .watch(&ListOptions::default())
        .await
        .unwrap();
    list_config_maps(http1).await.unwrap();
    let records = server.requests().records();
    assert_eq!(records[0].http_version, "HTTP/1.1");
    assert_ne!(records[0].connection, records[1].connection);
    drop(http1_watch);
}

#[tokio::test]
async fn user_agent_and_impersonation_headers_are_sent() {
    let server = TestApiServer::builder().start().await.unwrap();
    let mut impersonation = Impersonation {
        user: Some("jane".to_string()),
        uid: Some("uid-1".to_string()),
        groups: vec!["devs".to_string(), "ops".to_string()],
        ..Impersonation::default()
    };
    impersonation
        .extra
        .insert("scopes".to_string(), vec!["a".to_string(), "b".to_string()]);
    let client = RestClient::new(Config::new(server.url()).impersonate(impersonation)).unwrap();
    list_config_maps(client).await.unwrap();
    let record = server.requests().records().pop().unwrap();
    assert_eq!(record.header_values("impersonate-user"), vec!["jane"]);
    assert_eq!(record.header_values("impersonate-uid"), vec!["uid-1"]);
    assert_eq!(
        record.header_values("impersonate-group"),
        vec!["devs", "ops"]
    );
    assert_eq!(
        record.header_values("impersonate-extra-scopes"),
        vec!["a", "b"]
    );
    // client-go's form: the program's name first (the server's default
    // field manager is the agent up to its first `/`), then the library.
    let agent = record.header_values("user-agent").pop().unwrap();
    let program = std::env::current_exe().unwrap();
    let program = program.file_name().unwrap().to_string_lossy();
    assert!(agent.starts_with(&format!("{program}/")), "{agent}");
    assert!(agent.ends_with(" clientgo-rs"), "{agent}");
}

/// An exec plugin printing an ExecCredential with `status`, counting its
/// runs in `runs` and saving KUBERNETES_EXEC_INFO in `exec-info.json`.
fn exec_plugin(directory: &TempDir, status: &str) -> ExecConfig {
    let runs = directory.path().join("runs");
    let info = directory.path().join("exec-info.json");
    let script = directory.script(
        "plugin.sh",
        &format!(
            "echo run >> {runs}\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > {info}\n\
             echo \"plugin says hello on stderr\" >&2\n\
             cat <<'JSON'\n{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{status}}}\nJSON",
            runs = runs.display(),
            info = info.display(),
        ),
    );
    ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1")
}

fn runs(directory: &TempDir) -> usize {
    std::fs::read_to_string(directory.path().join("runs"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test]
async fn an_exec_plugin_token_is_cached_until_it_expires() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("from-plugin")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("exec-token");
    let mut exec = exec_plugin(
        &directory,
        r#"{"token":"from-plugin","expirationTimestamp":"2099-01-01T00:00:00Z"}"#,
    );
    exec.provide_cluster_info = true;
    let client = RestClient::new(config_for(&server).exec(exec)).unwrap();
    for _ in 0..3 {
        assert_eq!(list_config_maps(client.clone()).await.unwrap(), 0);
    }
    assert_eq!(runs(&directory), 1, "the credential is cached");

    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(directory.path().join("exec-info.json")).unwrap())
            .unwrap();
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], server.url());
    assert!(
        info["spec"]["cluster"]["certificateAuthorityData"]
            .as_str()
            .is_some_and(|ca| !ca.is_empty())
    );
}

#[tokio::test]
async fn an_expired_exec_credential_runs_the_plugin_again() {
    let server = TestApiServer::builder()
        .bearer_token("t")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("exec-expired");
    let exec = exec_plugin(
        &directory,
        r#"{"token":"t","expirationTimestamp":"2001-01-01T00:00:00Z"}"#,
    );
    let client = RestClient::new(Config::new(server.url()).exec(exec)).unwrap();
    list_config_maps(client.clone()).await.unwrap();
    list_config_maps(client).await.unwrap();
    assert_eq!(runs(&directory), 2);
}

#[tokio::test]
async fn a_401_refreshes_the_exec_credential_and_retries_once() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("fresh")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("exec-401");
    // The first run hands out a token the server no longer accepts.
    let runs_file = directory.path().join("runs");
    let script = directory.script(
        "plugin.sh",
        &format!(
            "echo run >> {runs}\nif [ \"$(wc -l < {runs})\" -le 1 ]; then token=stale; else token=fresh; fi\n\
             printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\"}}}}' \"$token\"",
            runs = runs_file.display()
        ),
    );
    let exec = ExecConfig::new(
        script.to_string_lossy(),
        "client.authentication.k8s.io/v1beta1",
    );
    let client = RestClient::new(config_for(&server).exec(exec)).unwrap();
    assert_eq!(list_config_maps(client.clone()).await.unwrap(), 0);
    assert_eq!(runs(&directory), 2);
    assert_eq!(client.stats().reauthentications, 1);
    // 401 then 200: the request was retried exactly once.
    let statuses: Vec<u16> = server
        .requests()
        .of(Verb::List)
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, vec![401, 200]);
}

#[tokio::test]
async fn an_exec_plugin_client_certificate_authenticates() {
    let server = TestApiServer::builder()
        .tls()
        .client_certificate_auth()
        .start()
        .await
        .unwrap();
    let identity = server.client_certificate().unwrap();
    let directory = TempDir::new("exec-cert");
    let status = format!(
        r#"{{"clientCertificateData":{},"clientKeyData":{}}}"#,
        json_string(&identity.certificate_pem),
        json_string(&identity.key_pem)
    );
    let exec = exec_plugin(&directory, &status);
    let client = RestClient::new(config_for(&server).exec(exec)).unwrap();
    assert_eq!(list_config_maps(client).await.unwrap(), 0);
    assert_eq!(runs(&directory), 1);
}

#[tokio::test]
async fn a_failing_exec_plugin_reports_its_stderr() {
    let server = TestApiServer::builder().start().await.unwrap();
    let directory = TempDir::new("exec-fail");
    let script = directory.script(
        "plugin.sh",
        "echo 'error: you must log in first (run: cloud auth login)' >&2\nexit 3",
    );
    let exec = ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1");
    let client = RestClient::new(Config::new(server.url()).exec(exec)).unwrap();
    let error = list_config_maps(client).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::Exec(_)), "{message}");
    assert!(message.contains("you must log in first"), "{message}");
    assert!(message.contains('3'), "the exit status is shown: {message}");
    assert_eq!(server.requests().records().len(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_hanging_exec_plugin_times_out_with_its_stderr() {
    let server = TestApiServer::builder().start().await.unwrap();
    let directory = TempDir::new("exec-hang");
    let script = directory.script(
        "plugin.sh",
        "echo 'waiting for browser login' >&2\nexec sleep 30",
    );
    let exec = ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1")
        .timeout(Duration::from_millis(300));
    let client = RestClient::new(Config::new(server.url()).exec(exec)).unwrap();
    let started = std::time::Instant::now();
    let error = list_config_maps(client).await.unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the plugin was killed"
    );
    assert!(error.contains("did not finish"), "{error}");
    assert!(error.contains("waiting for browser login"), "{error}");
}

#[tokio::test]
async fn exec_plugin_bad_output_and_missing_command_are_clear_errors() {
    let server = TestApiServer::builder().start().await.unwrap();
    let directory = TempDir::new("exec-bad");
    let script = directory.script("plugin.sh", "echo '<html>login page</html>'");
    let exec = ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1");
    let client = RestClient::new(Config::new(server.url()).exec(exec)).unwrap();
    let error = list_config_maps(client).await.unwrap_err().to_string();
    assert!(error.contains("invalid ExecCredential"), "{error}");
    assert!(error.contains("login page"), "the output is shown: {error}");

    let mut missing = ExecConfig::new(
        directory.path().join("not-installed").to_string_lossy(),
        "client.authentication.k8s.io/v1",
    );
    missing.install_hint = Some("install it with: brew install cloud-auth".to_string());
    let client = RestClient::new(Config::new(server.url()).exec(missing)).unwrap();
    let error = list_config_maps(client).await.unwrap_err().to_string();
    assert!(error.contains("not-installed"), "{error}");
    assert!(error.contains("brew install cloud-auth"), "{error}");
}

#[tokio::test]
async fn the_kubeconfig_the_server_writes_works_end_to_end() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("kube-token")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("server-kubeconfig");
    let path = directory.write("config", server.kubeconfig());
    let config = Config::from_kubeconfig_file(&path).unwrap();
    assert_eq!(config.namespace, "default");
    let shown = format!("{config:?} {config}");
    assert!(
        !shown.contains("kube-token"),
        "secrets are redacted: {shown}"
    );
    assert_eq!(list_with(config).await.unwrap(), 0);
}

#[tokio::test]
async fn exec_plugins_get_their_args_and_env() {
    let server = TestApiServer::builder()
        .bearer_token("from-arg-and-env")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("exec-args");
    let script = directory.script(
        "plugin.sh",
        "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s-%s\"}}' \"$1\" \"$PLUGIN_SUFFIX\"",
    );
    let exec = ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1")
        .args(["from-arg"])
        .env("PLUGIN_SUFFIX", "and-env");
    let client = RestClient::new(Config::new(server.url()).exec(exec)).unwrap();
    assert_eq!(list_config_maps(client).await.unwrap(), 0);
}

/// client-go's interactive rule: a plugin that may talk to the user gets
/// the terminal, is told `interactive: true` and has no timeout; `Always`
/// without a terminal is refused, naming why.
#[tokio::test]
async fn interactive_plugins_get_the_terminal_and_no_timeout() {
    let server = TestApiServer::builder()
        .tls()
        .bearer_token("from-plugin")
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("exec-interactive");
    let info = directory.path().join("exec-info.json");
    let script = directory.script(
        "slow-login.sh",
        &format!(
            "printf '%s' \"$KUBERNETES_EXEC_INFO\" > {info}\nsleep 2\n\
             echo '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"from-plugin\"}}}}'",
            info = info.display(),
        ),
    );
    let plugin = |mode: &str, terminal: bool| {
        let mut exec = ExecConfig::new(script.to_string_lossy(), "client.authentication.k8s.io/v1")
            .timeout(Duration::from_secs(1));
        exec.interactive_mode = Some(mode.to_string());
        exec.stdin_is_terminal = Some(terminal);
        exec
    };

    // At a terminal: interactive, and the 2 s login outlasts the 1 s timeout.
    let client = RestClient::new(config_for(&server).exec(plugin("IfAvailable", true))).unwrap();
    assert_eq!(list_config_maps(client).await.unwrap(), 0);
    let seen: serde_json::Value = serde_json::from_slice(&std::fs::read(&info).unwrap()).unwrap();
    assert_eq!(seen["spec"]["interactive"], true);

    // Without one: told so, and held to the timeout.
    let client = RestClient::new(config_for(&server).exec(plugin("IfAvailable", false))).unwrap();
    let error = list_config_maps(client).await.unwrap_err().to_string();
    assert!(
        error.contains("1s") || error.contains("timed out") || error.contains("time"),
        "{error}"
    );
    let seen: serde_json::Value = serde_json::from_slice(&std::fs::read(&info).unwrap()).unwrap();
    assert_eq!(seen["spec"]["interactive"], false);

    // Always without a terminal: refused before anything runs.
    std::fs::remove_file(&info).unwrap();
    let refused = RestClient::new(config_for(&server).exec(plugin("Always", false)));
    let message = match refused {
        Err(error) => error.to_string(),
        Ok(client) => list_config_maps(client).await.unwrap_err().to_string(),
    };
    assert!(
        message.contains("Always") && message.contains("terminal"),
        "{message}"
    );
    assert!(!info.exists(), "the plugin did not run");
}

/// A JWT (unsigned: the test server compares tokens as strings) expiring
/// at `exp`, seconds since the epoch.
fn jwt(exp: u64) -> String {
    use base64::Engine as _;
    let encode = |value: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
    };
    format!(
        "{}.{}.signature",
        encode(serde_json::json!({"alg": "RS256"})),
        encode(serde_json::json!({"sub": "me", "exp": exp}))
    )
}

/// A kubeconfig for `server` whose user is an `oidc` auth-provider.
fn oidc_kubeconfig(
    server: &TestApiServer,
    directory: &TempDir,
    id_token: &str,
    refresh: &str,
) -> std::path::PathBuf {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(server.ca_pem().unwrap());
    let path = directory.path().join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
             clusters:\n- name: k\n  cluster: {{server: \"{url}\", certificate-authority-data: {ca}}}\n\
             contexts:\n- name: c\n  context: {{cluster: k, user: u}}\n\
             users:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n      config:\n\
             \x20       client-id: kubectl\n        client-secret: s3cret\n        id-token: \"{id_token}\"\n\
             \x20       refresh-token: {refresh}\n        idp-issuer-url: \"{url}\"\n        idp-certificate-authority-data: {ca}\n",
            url = server.url(),
        ),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn an_expired_oidc_token_is_refreshed_through_the_issuer() {
    let fresh = jwt(4_000_000_000);
    let server = TestApiServer::builder()
        .tls()
        .bearer_token(fresh.clone())
        .oidc_issuer(clientgo_testing::OidcIssuer {
            client_id: "kubectl".into(),
            refresh_token: "refresh-1".into(),
            id_token: fresh.clone(),
            next_refresh_token: "refresh-2".into(),
        })
        .start()
        .await
        .unwrap();
    let directory = TempDir::new("oidc");
    let kubeconfig = oidc_kubeconfig(&server, &directory, &jwt(1), "refresh-1");
    let config = Config::from_kubeconfig_file(&kubeconfig).unwrap();
    let client = RestClient::new(config).unwrap();
    for _ in 0..3 {
        assert_eq!(list_config_maps(client.clone()).await.unwrap(), 0);
    }
    let records = server.requests().records();
    let token_requests = records.iter().filter(|r| r.path == "/oidc/token").count();
    assert_eq!(
        token_requests, 1,
        "refreshed once, then the fresh token is used"
    );
    let api: Vec<_> = records
        .iter()
        .filter(|r| r.path.starts_with("/api"))
        .collect();
    assert!(
        api.iter().all(|r| r.status == 200),
        "no request went out with the expired token"
    );
    let written = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(!written.contains("refresh-2"), "nothing is persisted");

    // A refresh the issuer refuses is an error naming the issuer, never a
    // token.
    let refused = oidc_kubeconfig(&server, &directory, &jwt(1), "stolen");
    let client = RestClient::new(Config::from_kubeconfig_file(&refused).unwrap()).unwrap();
    let error = list_config_maps(client).await.unwrap_err().to_string();
    assert!(
        error.contains("oidc") && error.contains(&server.url()),
        "{error}"
    );
    assert!(
        !error.contains("stolen") && !error.contains(&fresh),
        "{error}"
    );
}

/// The wire issue: watches started together on a fresh client (ten
/// informers starting at once) raced to dial before HTTP/2 was
/// negotiated, and each opened a connection of its own. A lane dials once
/// and the others share its connection.
#[tokio::test]
async fn watches_started_together_share_one_connection() {
    let server = TestApiServer::builder().tls().start().await.unwrap();
    let client = RestClient::new(config_for(&server)).unwrap();
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let watches = open_together(&config_maps, 10).await;
    assert!(
        watches
            .iter()
            .all(|watch| watch.http_version() == reqwest::Version::HTTP_2)
    );
    let watch_connections: std::collections::BTreeSet<u64> = server
        .requests()
        .of(Verb::Watch)
        .iter()
        .map(|record| record.connection)
        .collect();
    assert_eq!(watch_connections.len(), 1, "{watch_connections:?}");
    assert_eq!(
        server.connections_accepted(),
        1,
        "no spare connection dialed and left idle"
    );
    assert_eq!(client.lane_stats().assigned, [10]);
}
