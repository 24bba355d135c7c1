//! [`ControlPlane`]: a real etcd and kube-apiserver on loopback, with
//! certificates, credentials and folders of its own.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_rest::{Config, RestClient};
use parking_lot::Mutex;

use crate::envtest::assets::{AssetSearch, Assets, repository_unpack_script};
use crate::envtest::error::Error;
use crate::envtest::process::{ManagedProcess, log_tail};
use crate::util::certificate_authority::{
    CertificateAuthority, ServerCertificateOptions, generate_key_pair,
};
use crate::util::seeded_random::SeededRandom;

/// How many lines of a process's log an error carries.
const LOG_TAIL_LINES: usize = 30;
/// How often readiness is asked.
const POLL: Duration = Duration::from_millis(100);
/// How many times automatically picked ports are picked again when one
/// turns out taken (another process took it between the pick and the bind).
const PORT_ATTEMPTS: usize = 3;

/// How a [`ControlPlane`] is started. The defaults find the binaries as
/// [`Assets::find`] says (with this repository's unpack script last),
/// pick free ports, and wait up to 60 s for each process.
#[derive(Debug, Clone)]
pub struct ControlPlaneOptions {
    /// Where the binaries are looked for.
    pub assets: AssetSearch,
    /// Flags added to kube-apiserver's (`--watch-cache=false`,
    /// `--feature-gates=...`); a flag given twice takes its last value, so
    /// these override envtest's own.
    pub api_server_flags: Vec<String>,
    /// kube-apiserver's port (default: a free one).
    pub secure_port: Option<u16>,
    /// etcd's client port (default: a free one).
    pub etcd_port: Option<u16>,
    /// How long each process may take to become ready.
    pub ready_timeout: Duration,
}

impl Default for ControlPlaneOptions {
    fn default() -> Self {
        ControlPlaneOptions {
            assets: AssetSearch {
                unpack_script: repository_unpack_script(),
                ..AssetSearch::default()
            },
            api_server_flags: Vec::new(),
            secure_port: None,
            etcd_port: None,
            ready_timeout: Duration::from_secs(60),
        }
    }
}

impl ControlPlaneOptions {
    /// Looks for the binaries in `folder` first.
    pub fn assets_folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.assets.folder = Some(folder.into());
        self
    }

    /// Requires kube-apiserver to report a version starting with `prefix`
    /// (`v1.36`).
    pub fn kubernetes_version(mut self, prefix: impl Into<String>) -> Self {
        self.assets.kubernetes_version = Some(prefix.into());
        self
    }

    /// Adds a kube-apiserver flag (`--watch-cache=false`).
    pub fn api_server_flag(mut self, flag: impl Into<String>) -> Self {
        self.api_server_flags.push(flag.into());
        self
    }

    /// Serves on this port instead of a free one.
    pub fn secure_port(mut self, port: u16) -> Self {
        self.secure_port = Some(port);
        self
    }

    /// Runs etcd's client endpoint on this port instead of a free one.
    pub fn etcd_port(mut self, port: u16) -> Self {
        self.etcd_port = Some(port);
        self
    }

    /// Waits this long for each process to become ready.
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }
}

/// A real etcd and kube-apiserver on 127.0.0.1, as controller-runtime's
/// envtest starts them: the operator's test talks to the real API server
/// (validation, admission, server-side apply, RBAC, watch cache), with no
/// controllers beside it (nothing garbage-collects, schedules or deletes
/// namespaces).
///
/// It makes its own CA, serving certificate (127.0.0.1, `localhost`) and
/// service-account key pair, an admin token (`system:masters`), and
/// client certificates for any other user on demand
/// ([`user_config`](Self::user_config)); RBAC is on.
///
/// Dropping it stops kube-apiserver, then etcd, and removes its folder;
/// the processes also die with the test process however it ends (see
/// `process.rs`), and a folder left by a killed run is removed by the next
/// start. Methods take `&self`: a plane is shared by the tests of a binary
/// ([`shared`](Self::shared)); [`restart_api_server`](Self::restart_api_server)
/// is then seen by all of them, so tests that restart start their own.
#[derive(Debug)]
pub struct ControlPlane {
    assets: Assets,
    folder: PathBuf,
    ca: CertificateAuthority,
    admin_token: String,
    secure_port: u16,
    etcd_port: u16,
    peer_port: u16,
    api_server_args: Vec<String>,
    api_server_flags: Mutex<Vec<String>>,
    ready_timeout: Duration,
    // Declared before etcd: dropped (stopped) first.
    api_server: Mutex<Option<ManagedProcess>>,
    etcd: Mutex<Option<ManagedProcess>>,
    started_in: Duration,
    /// Set when the start failed: the folder (its logs) is not removed.
    keep_folder: bool,
}

impl ControlPlane {
    /// Finds the binaries, makes the credentials and folders, starts etcd
    /// and kube-apiserver and waits until `/readyz` answers ok. Takes about
    /// 3 s on two cores.
    pub async fn start(options: ControlPlaneOptions) -> Result<ControlPlane, Error> {
        let began = Instant::now();
        let assets = tokio::task::spawn_blocking({
            let search = options.assets.clone();
            move || Assets::find(&search)
        })
        .await
        .map_err(|error| Error::Io {
            what: "finding the binaries".into(),
            source: std::io::Error::other(error),
        })??;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match ControlPlane::start_once(&assets, &options, began).await {
                Err(Error::PortTaken { binary, port, .. })
                    if attempt < PORT_ATTEMPTS
                        && options.secure_port.is_none()
                        && options.etcd_port.is_none() =>
                {
                    tracing::info!(
                        binary,
                        port,
                        "port taken after it was picked; picking again"
                    );
                }
                other => return other,
            }
        }
    }

    async fn start_once(
        assets: &Assets,
        options: &ControlPlaneOptions,
        began: Instant,
    ) -> Result<ControlPlane, Error> {
        let folder = make_folder()?;
        let prepared = ControlPlane::prepare(assets, options, folder.clone());
        let mut plane = match prepared {
            Ok(plane) => plane,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&folder);
                return Err(error);
            }
        };
        let started = match plane.start_etcd().await {
            Ok(()) => plane.start_api_server().await,
            Err(error) => Err(error),
        };
        if let Err(error) = started {
            // The logs the error names stay for the reader (the next start
            // removes the folder once this process is gone); a taken port is
            // retried with a folder of its own.
            plane.keep_folder = !matches!(error, Error::PortTaken { .. });
            return Err(error);
        }
        plane.started_in = began.elapsed();
        tracing::info!(
            url = %plane.url(),
            version = %plane.assets.kubernetes_version,
            started_in = ?plane.started_in,
            "envtest control plane ready"
        );
        Ok(plane)
    }

    /// The credentials, files and ports of a plane in `folder`, nothing
    /// started yet.
    fn prepare(
        assets: &Assets,
        options: &ControlPlaneOptions,
        folder: PathBuf,
    ) -> Result<ControlPlane, Error> {
        let ca = CertificateAuthority::new("clientgo envtest CA")?;
        let serving = ca.serving_certificate(&ServerCertificateOptions::default())?;
        let (sa_private, sa_public) = generate_key_pair()?;
        let admin_token = random_token();
        let write = |name: &str, text: &str| -> Result<String, Error> {
            let path = folder.join(name);
            std::fs::write(&path, text)
                .map_err(Error::io(format!("writing {}", path.display())))?;
            Ok(path.display().to_string())
        };
        let ca_file = write("ca.crt", &ca.certificate_pem())?;
        let cert_file = write("apiserver.crt", &serving.certificate_pem)?;
        let key_file = write("apiserver.key", &serving.key_pem)?;
        let sa_key = write("sa.key", &sa_private)?;
        let sa_pub = write("sa.pub", &sa_public)?;
        let tokens = write(
            "tokens.csv",
            &format!("{admin_token},admin,admin,\"system:masters\"\n"),
        )?;
        let etcd_port = match options.etcd_port {
            Some(port) => port,
            None => free_port()?,
        };
        let peer_port = free_port()?;
        let secure_port = match options.secure_port {
            Some(port) => port,
            None => free_port()?,
        };
        let api_server_args = vec![
            format!("--etcd-servers=http://127.0.0.1:{etcd_port}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={secure_port}"),
            format!("--cert-dir={}", folder.join("certs").display()),
            format!("--tls-cert-file={cert_file}"),
            format!("--tls-private-key-file={key_file}"),
            format!("--client-ca-file={ca_file}"),
            format!("--token-auth-file={tokens}"),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            format!("--service-account-key-file={sa_pub}"),
            format!("--service-account-signing-key-file={sa_key}"),
            "--service-cluster-ip-range=10.96.0.0/16".into(),
            "--authorization-mode=RBAC".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--allow-privileged=true".into(),
        ];
        let plane = ControlPlane {
            assets: assets.clone(),
            folder,
            ca,
            admin_token,
            secure_port,
            etcd_port,
            peer_port,
            api_server_args,
            api_server_flags: Mutex::new(options.api_server_flags.clone()),
            ready_timeout: options.ready_timeout,
            api_server: Mutex::new(None),
            etcd: Mutex::new(None),
            started_in: Duration::ZERO,
            keep_folder: false,
        };
        Ok(plane)
    }

    async fn start_etcd(&self) -> Result<(), Error> {
        let peer_port = self.peer_port;
        let client_url = self.etcd_url();
        let args = vec![
            format!("--data-dir={}", self.folder.join("etcd").display()),
            format!("--listen-client-urls={client_url}"),
            format!("--advertise-client-urls={client_url}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
            "--unsafe-no-fsync".into(),
        ];
        let process = ManagedProcess::start(
            "etcd",
            &self.assets.etcd,
            &args,
            &self.folder.join("etcd.log"),
        )?;
        *self.etcd.lock() = Some(process);
        let client = RestClient::new(Config::new(client_url)).map_err(Error::request("etcd"))?;
        self.wait_ready("etcd", self.etcd_port, &self.etcd, &client, "/health")
            .await
    }

    async fn start_api_server(&self) -> Result<(), Error> {
        let mut args = self.api_server_args.clone();
        args.extend(self.api_server_flags.lock().iter().cloned());
        let process = ManagedProcess::start(
            "kube-apiserver",
            &self.assets.kube_apiserver,
            &args,
            &self.folder.join("kube-apiserver.log"),
        )?;
        *self.api_server.lock() = Some(process);
        let client = self.client()?;
        self.wait_ready(
            "kube-apiserver",
            self.secure_port,
            &self.api_server,
            &client,
            "/readyz",
        )
        .await
    }

    /// Polls `path` until it answers 200, the process exits, or the
    /// timeout passes.
    async fn wait_ready(
        &self,
        binary: &'static str,
        port: u16,
        process: &Mutex<Option<ManagedProcess>>,
        client: &RestClient,
        path: &str,
    ) -> Result<(), Error> {
        let began = Instant::now();
        loop {
            let answer = client
                .get()
                .abs_path(path)
                .timeout(Duration::from_secs(2))
                .max_retries(0)
                .send_raw()
                .await;
            let last = match answer {
                Ok(response) if response.status == 200 => return Ok(()),
                Ok(response) => format!(
                    "{path} answered {}: {}",
                    response.status,
                    String::from_utf8_lossy(&response.body).trim()
                ),
                Err(error) => format!("{path}: {error}"),
            };
            let (exited, log) = {
                let mut guard = process.lock();
                match guard.as_mut() {
                    Some(process) => (process.exited(), process.log().to_path_buf()),
                    None => (None, PathBuf::new()),
                }
            };
            if let Some(status) = exited {
                let log_tail = log_tail(&log, LOG_TAIL_LINES);
                if log_tail.contains("address already in use") {
                    return Err(Error::PortTaken {
                        binary,
                        port,
                        log_tail,
                    });
                }
                return Err(Error::Exited {
                    binary,
                    status: status.to_string(),
                    log,
                    log_tail,
                });
            }
            if began.elapsed() > self.ready_timeout {
                return Err(Error::NotReady {
                    binary,
                    waited: self.ready_timeout,
                    last,
                    log_tail: log_tail(&log, LOG_TAIL_LINES),
                    log,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Stops kube-apiserver (etcd and its data stay), then starts it again
    /// on the same port with `flags` in place of the flags it was given
    /// before (those of [`ControlPlaneOptions::api_server_flags`] or the
    /// last restart), and waits for `/readyz`. Clients see their
    /// connections end and the server come back, as in a rolling restart.
    pub async fn restart_api_server(&self, flags: &[&str]) -> Result<(), Error> {
        let stopping = self.api_server.lock().take();
        if let Some(mut process) = stopping {
            tokio::task::spawn_blocking(move || process.stop())
                .await
                .map_err(|error| Error::Io {
                    what: "stopping kube-apiserver".into(),
                    source: std::io::Error::other(error),
                })?;
        }
        *self.api_server_flags.lock() = flags.iter().map(|flag| flag.to_string()).collect();
        self.start_api_server().await
    }

    /// Compacts etcd's history up to its current revision (through etcd's
    /// HTTP gateway) and returns that revision. Watches and lists at older
    /// resourceVersions are then answered 410 Gone by kube-apiserver once
    /// its watch cache no longer holds them (at once with
    /// `--watch-cache=false`).
    pub async fn compact_etcd(&self) -> Result<i64, Error> {
        let client =
            RestClient::new(Config::new(self.etcd_url())).map_err(Error::request("etcd"))?;
        let range: serde_json::Value = client
            .post()
            .abs_path("/v3/kv/range")
            .json_body(&serde_json::json!({"key": "AA=="}))
            .send()
            .await
            .map_err(Error::request("etcd: reading the current revision"))?;
        let revision = range["header"]["revision"]
            .as_str()
            .and_then(|text| text.parse::<i64>().ok())
            .or_else(|| range["header"]["revision"].as_i64())
            .ok_or_else(|| Error::Io {
                what: "etcd: reading the current revision".into(),
                source: std::io::Error::other(format!("no revision in {range}")),
            })?;
        let _: serde_json::Value = client
            .post()
            .abs_path("/v3/kv/compaction")
            .json_body(&serde_json::json!({"revision": revision.to_string(), "physical": true}))
            .send()
            .await
            .map_err(Error::request(format!("etcd: compacting to {revision}")))?;
        Ok(revision)
    }

    /// Stops kube-apiserver, then etcd, now (as dropping does), waiting for
    /// both: SIGTERM, then SIGKILL after 5 s. Blocks the calling thread
    /// (well under a second here for each; at most 5 s), in `drop` too: a
    /// plane dropped inside a runtime blocks that runtime's thread as long.
    pub fn stop(&self) {
        if let Some(mut process) = self.api_server.lock().take() {
            process.stop();
        }
        if let Some(mut process) = self.etcd.lock().take() {
            process.stop();
        }
    }

    /// The API server's URL (`https://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.secure_port)
    }

    /// etcd's client URL (`http://127.0.0.1:PORT`).
    pub fn etcd_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.etcd_port)
    }

    /// The CA the serving certificate is signed by (PEM).
    pub fn ca_pem(&self) -> String {
        self.ca.certificate_pem()
    }

    /// The CA itself, to sign more certificates (a webhook's serving
    /// certificate the API server trusts through the same bundle).
    pub fn certificate_authority(&self) -> &CertificateAuthority {
        &self.ca
    }

    /// What kube-apiserver reports as its version (`v1.36.2`).
    pub fn kubernetes_version(&self) -> &str {
        &self.assets.kubernetes_version
    }

    /// How long [`start`](Self::start) took, from finding the binaries to
    /// `/readyz` ok.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// The folder holding the certificates, tokens, logs and etcd's data.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// kube-apiserver's PID while it runs.
    pub fn api_server_pid(&self) -> Option<u32> {
        self.api_server
            .lock()
            .as_ref()
            .and_then(ManagedProcess::pid)
    }

    /// etcd's PID while it runs.
    pub fn etcd_pid(&self) -> Option<u32> {
        self.etcd.lock().as_ref().and_then(ManagedProcess::pid)
    }

    /// A configuration for the admin (`system:masters`, by bearer token).
    pub fn config(&self) -> Config {
        Config::new(self.url())
            .certificate_authority_pem(self.ca_pem())
            .bearer_token(self.admin_token.clone())
    }

    /// A client for the admin. Make one per test: a client's connections
    /// belong to the tokio runtime it first ran on.
    pub fn client(&self) -> Result<RestClient, Error> {
        RestClient::new(self.config()).map_err(Error::request("building the admin client"))
    }

    /// A configuration for `user` in `groups`, by a client certificate
    /// signed now by the plane's CA (as controller-runtime's
    /// `AddUser`): RBAC decides what it may do, and with no binding it may
    /// do next to nothing.
    pub fn user_config(&self, user: &str, groups: &[&str]) -> Result<Config, Error> {
        let certificate = self.ca.client_certificate(user, groups)?;
        Ok(Config::new(self.url())
            .certificate_authority_pem(self.ca_pem())
            .client_certificate_pem(certificate.certificate_pem, certificate.key_pem))
    }

    /// A kubeconfig for the admin (context `envtest`, namespace
    /// `default`), for programs under test.
    pub fn kubeconfig(&self) -> String {
        crate::util::kubeconfig::kubeconfig(
            "envtest",
            &self.url(),
            Some(&self.ca_pem()),
            Some(&self.admin_token),
            None,
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) into the plane's folder and
    /// returns its path.
    pub fn write_kubeconfig(&self) -> Result<PathBuf, Error> {
        let path = self.folder.join("kubeconfig");
        std::fs::write(&path, self.kubeconfig())
            .map_err(Error::io(format!("writing {}", path.display())))?;
        Ok(path)
    }

    /// The address kube-apiserver listens on.
    pub fn address(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.secure_port))
    }

    /// The flags kube-apiserver was last started with beyond envtest's
    /// own.
    pub fn api_server_flags(&self) -> Vec<String> {
        self.api_server_flags.lock().clone()
    }

    /// Creates a namespace no other test of this process has
    /// (`{prefix}-{n}`, `prefix` lowercased to what a name allows) and
    /// returns its name. It is not deleted: nothing on the plane would
    /// finish the deletion (no namespace controller), and a plane's data
    /// goes with it.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String, Error> {
        let name = next_namespace_name(prefix);
        let namespace = k8s_openapi::api::core::v1::Namespace {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        let client = self.client()?;
        clientgo_rest::ResourceClient::<k8s_openapi::api::core::v1::Namespace>::all(client)
            .create(&Default::default(), &namespace)
            .await
            .map_err(Error::request(format!("creating namespace {name}")))?;
        Ok(name)
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.stop();
        if self.keep_folder {
            return;
        }
        if let Err(error) = std::fs::remove_dir_all(&self.folder) {
            tracing::warn!(folder = %self.folder.display(), %error, "cannot remove the envtest folder");
        }
    }
}

/// `{prefix}-{n}`: `prefix` lowercased to what a namespace name allows,
/// `n` counting up in this process.
pub(crate) fn next_namespace_name(prefix: &str) -> String {
    static NAMESPACES: AtomicU64 = AtomicU64::new(0);
    let mut base: String = prefix
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() { c } else { '-' }
        })
        .collect();
    base.truncate(50);
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "test" } else { base };
    format!("{base}-{}", NAMESPACES.fetch_add(1, Ordering::Relaxed) + 1)
}

/// The root of every plane's folder: `$TMPDIR/clientgo-envtest`.
fn folders_root() -> PathBuf {
    std::env::temp_dir().join("clientgo-envtest")
}

/// A new folder `{root}/{pid}-{n}`, after removing those of processes
/// that are gone (a test binary that was killed cannot remove its own).
fn make_folder() -> Result<PathBuf, Error> {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let root = folders_root();
    std::fs::create_dir_all(&root).map_err(Error::io(format!("creating {}", root.display())))?;
    remove_stale_folders(&root);
    let folder = root.join(format!(
        "{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder)
        .map_err(Error::io(format!("creating {}", folder.display())))?;
    Ok(folder)
}

fn remove_stale_folders(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = Path::new("/proc").join(pid.to_string()).exists();
        if !alive && Path::new("/proc/self").exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A port free now on 127.0.0.1 (bound and released: another process may
/// still take it before ours binds, which start() detects and retries).
fn free_port() -> Result<u16, Error> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(Error::io("binding 127.0.0.1:0 to find a free port"))?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(Error::io("reading a bound port"))
}

/// 32 hex characters, different for every plane of every process.
fn random_token() -> String {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos() as u64)
        .unwrap_or_default()
        ^ u64::from(std::process::id()).rotate_left(32);
    let mut random = SeededRandom::new(seed);
    format!("{:016x}{:016x}", random.next_u64(), random.next_u64())
}
