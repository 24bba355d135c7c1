//! Exec, attach and port-forward over WebSockets against clientgo-testing's
//! server, over TLS with a bearer token: output and exit codes, stdin
//! closed over v5 and the v4 fallback, terminal sizes, typed failures, a
//! session cut mid-stream, and local listeners forwarding many
//! connections to a pod's port.

use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use clientgo_rest::{
    Error, ResourceClient, RestClient,
    tools::portforward::{PortForward, PortForwardError, PortForwarder, PortMapping},
    tools::remotecommand::{
        RemoteCommandError, RemoteProcess, StreamOptions, TerminalSize, V4_CHANNEL_PROTOCOL,
        V5_CHANNEL_PROTOCOL,
    },
};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::config_for;

/// A TLS server that wants a token, with pod `web` (one container) and
/// pod `two` (two).
async fn server() -> (TestApiServer, ResourceClient<Pod>) {
    server_with(TestApiServer::builder()).await
}

async fn server_with(
    builder: clientgo_testing::TestApiServerBuilder,
) -> (TestApiServer, ResourceClient<Pod>) {
    let server = builder.tls().bearer_token("t0ken").start().await.unwrap();
    for (name, containers) in [("web", vec!["app"]), ("two", vec!["app", "sidecar"])] {
        let containers: Vec<_> = containers
            .iter()
            .map(|name| json!({"name": name, "image": "busybox"}))
            .collect();
        server
            .storage()
            .create(
                &GroupResource::new("", "pods"),
                "default",
                json!({"metadata": {"name": name}, "spec": {"containers": containers}}),
            )
            .unwrap();
    }
    let client = RestClient::new(config_for(&server).bearer_token("t0ken")).unwrap();
    (server, ResourceClient::namespaced(client, "default"))
}

/// `future`, or a failed test when it takes longer than 20 s (a session
/// that never ends is a bug, not a hang of the suite).
async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("the session did not end within 20 s")
}

async fn read_all(stream: Option<tokio::io::DuplexStream>) -> String {
    let mut text = String::new();
    if let Some(mut stream) = stream {
        stream.read_to_string(&mut text).await.unwrap();
    }
    text
}

#[tokio::test]
async fn exec_returns_stdout_stderr_and_the_exit_code_over_v5() {
    let (server, pods) = server().await;
    let mut process = RemoteProcess::exec(
        &pods,
        "web",
        ["sh", "-c", "echo out; echo err >&2; exit 3"],
        &StreamOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(process.protocol(), V5_CHANNEL_PROTOCOL);
    let (stdout, stderr) = (process.take_stdout(), process.take_stderr());
    let (stdout, stderr, status) = tokio::join!(read_all(stdout), read_all(stderr), process.wait());
    assert_eq!(stdout, "out\n");
    assert_eq!(stderr, "err\n");
    let status = status.unwrap();
    assert_eq!(status.code, 3);
    assert!(status.message.contains("exit code 3"), "{}", status.message);
    // The upgrade went over HTTP/1.1 with the token (else a 401).
    let exec = server
        .requests()
        .records()
        .into_iter()
        .find(|record| record.path.ends_with("/exec"))
        .unwrap();
    assert_eq!(exec.status, 101);
    assert_eq!(exec.http_version, "HTTP/1.1");
    assert!(exec.query.contains("command=sh"), "{}", exec.query);
}

#[tokio::test]
async fn stdin_reaches_the_command_and_its_close_ends_it() {
    let (_server, pods) = server().await;
    let mut process =
        RemoteProcess::exec(&pods, "web", ["cat"], &StreamOptions::default().stdin(true))
            .await
            .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    let stdout = process.take_stdout();
    // Far more than every pipe on the way holds, both ways at once:
    // back-pressure, not loss or deadlock.
    let input: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let expected = input.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&input).await.unwrap();
        stdin.shutdown().await.unwrap();
    });
    let mut echoed = Vec::new();
    let mut stdout = stdout.unwrap();
    let (read, status) =
        within(async { tokio::join!(stdout.read_to_end(&mut echoed), process.wait()) }).await;
    read.unwrap();
    writer.await.unwrap();
    assert_eq!(echoed.len(), expected.len());
    assert!(echoed == expected, "the echo differs from the input");
    assert!(status.unwrap().success());
}

#[tokio::test]
async fn a_v4_server_is_spoken_to_without_closing_stdin() {
    let (_server, pods) = server_with(TestApiServer::builder().channel_v5(false)).await;
    let mut process =
        RemoteProcess::exec(&pods, "web", ["sh"], &StreamOptions::default().stdin(true))
            .await
            .unwrap();
    assert_eq!(process.protocol(), V4_CHANNEL_PROTOCOL);
    let mut stdin = process.take_stdin().unwrap();
    stdin.write_all(b"echo hi\nexit 2\n").await.unwrap();
    let stdout = process.take_stdout();
    let (stdout, status) = tokio::join!(read_all(stdout), process.wait());
    assert_eq!(stdout, "hi\n");
    assert_eq!(status.unwrap().code, 2);
}

#[tokio::test]
async fn a_terminal_session_sees_its_size_and_has_no_stderr() {
    let (_server, pods) = server().await;
    let mut process = RemoteProcess::exec(
        &pods,
        "web",
        ["sh"],
        &StreamOptions::default().stdin(true).tty(true),
    )
    .await
    .unwrap();
    assert!(process.take_stderr().is_none());
    let sizes = process.terminal_size().unwrap();
    sizes
        .send(TerminalSize {
            width: 100,
            height: 40,
        })
        .await
        .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    // A terminal's Enter is a carriage return.
    stdin.write_all(b"stty size\rexit 4\r").await.unwrap();
    let stdout = process.take_stdout();
    let (stdout, status) = tokio::join!(read_all(stdout), process.wait());
    // The terminal turns the newline into CR LF.
    assert!(stdout.contains("40 100\r\n"), "{stdout:?}");
    // The shell echoes what is typed, as a terminal does.
    assert!(stdout.starts_with("$ stty size\r\n"), "{stdout:?}");
    assert_eq!(status.unwrap().code, 4);
}

#[tokio::test]
async fn attach_joins_the_main_process() {
    let (_server, pods) = server().await;
    let mut process = RemoteProcess::attach(
        &pods,
        "web",
        &StreamOptions::default().stdin(true).stderr(false),
    )
    .await
    .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    stdin.write_all(b"ping\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    let stdout = process.take_stdout();
    let (stdout, status) = within(async { tokio::join!(read_all(stdout), process.wait()) }).await;
    assert_eq!(stdout, "ping\n");
    assert!(status.unwrap().success());
}

#[tokio::test]
async fn failures_are_typed_errors() {
    let (_server, pods) = server().await;
    let options = StreamOptions::default();
    let start_status = |result: Result<_, RemoteCommandError>| match result {
        Err(RemoteCommandError::Start(Error::Api(status))) => (status.code, status.message),
        Err(other) => panic!("not a refused start: {other}"),
        Ok(_) => panic!("started"),
    };
    let (code, _) = start_status(RemoteProcess::exec(&pods, "nope", ["true"], &options).await);
    assert_eq!(code, 404);
    let (code, message) = start_status(RemoteProcess::exec(&pods, "two", ["true"], &options).await);
    assert_eq!(code, 400);
    assert!(
        message.contains("choose one of: [app sidecar]"),
        "{message}"
    );
    let (code, message) = start_status(
        RemoteProcess::exec(&pods, "web", ["true"], &options.clone().container("db")).await,
    );
    assert_eq!(code, 400, "{message}");
    let (code, message) =
        start_status(RemoteProcess::exec(&pods, "web", Vec::<String>::new(), &options).await);
    assert_eq!(code, 400);
    assert!(message.contains("at least one command"), "{message}");
    // A command the container does not have fails with a Status, not an
    // exit code.
    let process = RemoteProcess::exec(
        &pods,
        "two",
        ["no-such-binary"],
        &options.clone().container("sidecar"),
    )
    .await
    .unwrap();
    match process.wait().await {
        Err(RemoteCommandError::Failed { pod, status }) => {
            assert_eq!(pod, "default/two");
            assert_eq!(status.code, 500);
            assert!(status.message.contains("executable file not found"));
        }
        other => panic!("not a failure: {other:?}"),
    }
}

#[tokio::test]
async fn a_session_cut_mid_stream_is_a_closed_connection() {
    let (server, pods) = server().await;
    let mut process =
        RemoteProcess::exec(&pods, "web", ["cat"], &StreamOptions::default().stdin(true))
            .await
            .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = process.take_stdout().unwrap();
    stdin.write_all(b"first\n").await.unwrap();
    let mut line = [0u8; 6];
    stdout.read_exact(&mut line).await.unwrap();
    assert_eq!(&line, b"first\n");
    server.faults().restart();
    let ended = within(process.wait()).await;
    assert!(
        matches!(ended, Err(RemoteCommandError::ConnectionClosed { ref pod }) if pod == "default/web"),
        "{ended:?}"
    );
    // The output stream ends rather than hanging.
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).await.unwrap();
}

/// A TCP service that answers each line with `echo: LINE` and closes.
async fn line_echo() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut line = Vec::new();
                let mut byte = [0u8; 1];
                while stream.read_exact(&mut byte).await.is_ok() && byte[0] != b'\n' {
                    line.push(byte[0]);
                }
                let answer = format!("echo: {}\n", String::from_utf8_lossy(&line));
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    address
}

#[tokio::test]
async fn a_forwarder_carries_many_connections_to_the_pods_port() {
    let (server, pods) = server().await;
    server
        .port_forwards()
        .insert("default", "web", 8080, line_echo().await);
    let mapping: PortMapping = ":8080".parse().unwrap();
    let forwarder = PortForwarder::bind(pods, "web", &[mapping], PortForwarder::LOCALHOST)
        .await
        .unwrap();
    let local = forwarder.ports()[0].local;
    assert_ne!(local.port(), 0);
    let clients = (0..5).map(|i| async move {
        let mut stream = TcpStream::connect(local).await.unwrap();
        stream
            .write_all(format!("hello {i}\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    });
    let answers = futures_util::future::join_all(clients).await;
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer, &format!("echo: hello {i}\n"));
    }
    // Each connection's end is counted once its session is closed.
    within(async {
        while forwarder.stats().closed < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(forwarder.stats().connections, 5);
    assert_eq!(forwarder.stats().failures, 0);
    // One WebSocket per connection, each naming the port.
    let sessions = server
        .requests()
        .records()
        .into_iter()
        .filter(|record| record.path.ends_with("/portforward"))
        .inspect(|record| assert_eq!(record.query, "ports=8080"))
        .count();
    assert_eq!(sessions, 5);
}

#[tokio::test]
async fn a_port_nothing_listens_on_is_the_servers_error() {
    let (server, pods) = server().await;
    server
        .port_forwards()
        .insert("default", "web", 80, line_echo().await);
    let mut session = PortForward::open(&pods, "web", &[80, 81]).await.unwrap();
    let mut stream = session.take_stream(80).unwrap();
    assert!(session.take_stream(80).is_none());
    stream.write_all(b"over one socket\n").await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert_eq!(answer, "echo: over one socket\n");
    match session.join().await {
        Err(PortForwardError::Remote { port, message, .. }) => {
            assert_eq!(port, 81);
            assert!(message.contains("failed to connect"), "{message}");
        }
        other => panic!("not the port's error: {other:?}"),
    }
    let missing = PortForward::open(&pods, "nope", &[80]).await;
    assert!(
        matches!(missing, Err(PortForwardError::Start(ref e)) if e.status().is_some_and(|s| s.code == 404)),
        "{missing:?}"
    );
}

/// A TCP service echoing everything back, never closing first; it reports
/// each connection's end.
async fn keep_alive_echo() -> (std::net::SocketAddr, tokio::sync::mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (ended_tx, ended) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let ended_tx = ended_tx.clone();
            tokio::spawn(async move {
                let (mut read, mut write) = stream.into_split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
                let _ = ended_tx.send(()).await;
            });
        }
    });
    (address, ended)
}

#[tokio::test]
async fn a_forwarded_connection_closed_locally_is_closed_in_the_pod() {
    let (server, pods) = server().await;
    let (address, mut ended) = keep_alive_echo().await;
    server
        .port_forwards()
        .insert("default", "web", 6379, address);
    let forwarder = PortForwarder::bind(
        pods.clone(),
        "web",
        &["0:6379".parse().unwrap()],
        PortForwarder::LOCALHOST,
    )
    .await
    .unwrap();
    let mut stream = TcpStream::connect(forwarder.ports()[0].local)
        .await
        .unwrap();
    // Megabytes both ways through one connection: nothing waits on the
    // other direction.
    let sent: Vec<u8> = (0..2_000_000u32).map(|i| (i % 253) as u8).collect();
    let (mut read, mut write) = stream.split();
    let mut echoed = vec![0u8; sent.len()];
    let (wrote, read) =
        within(async { tokio::join!(write.write_all(&sent), read.read_exact(&mut echoed)) }).await;
    wrote.unwrap();
    read.unwrap();
    assert!(echoed == sent, "the echo differs");
    drop(stream);
    // The pod's side is closed after the grace, though it never closes
    // first.
    within(ended.recv()).await.unwrap();
    within(async {
        while forwarder.stats().closed < 1 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(forwarder.stats().failures, 0);
}

#[tokio::test]
async fn ports_one_websocket_cannot_carry_are_refused() {
    let (_server, pods) = server().await;
    let many: Vec<u16> = (1..=129).collect();
    for ports in [&many[..], &[80, 80][..], &[][..], &[0][..]] {
        let refused = PortForward::open(&pods, "web", ports).await;
        assert!(
            matches!(refused, Err(PortForwardError::Ports { .. })),
            "{ports:?}: {refused:?}"
        );
    }
}
