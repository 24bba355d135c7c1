//! An in-process Kubernetes API server for tests.
//!
//! [`TestApiServer`] serves the Kubernetes API over HTTP or HTTPS on
//! 127.0.0.1, so clients under test talk to it over real sockets exactly as
//! they would to a cluster. It provides:
//!
//! - get, list, create, update, status update, patch (JSON merge, JSON
//!   patch; strategic merge applied as a merge patch; server-side apply
//!   with field ownership: conflicts between managers as the real
//!   server's 409 with `FieldManagerConflict` causes, `force`, fields an
//!   applier stops applying removed, with the simplifications
//!   `store/field_owners.rs` lists), delete and deletecollection for the
//!   common
//!   built-in resources and any registered [`ApiResource`](clientgo_apimachinery::ApiResource),
//!   with the real server's Status answers;
//! - lists with label and field selectors, `limit`/`continue` paging over a
//!   consistent snapshot, and every resourceVersion rule (unset, `0`,
//!   Exact, NotOlderThan with a short wait then 504, 410 once compacted);
//! - watches from a resourceVersion or from the current state, bookmarks,
//!   `timeoutSeconds`, watch-list (`sendInitialEvents`) with the
//!   initial-events-end bookmark, selector transitions (ADDED/DELETED as
//!   objects enter and leave), and 410 as an ERROR event;
//! - metadata-only answers (`Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`)
//!   for get, list and watch;
//! - [`Storage`], the etcd-like store behind it, usable directly to seed
//!   or inspect state.
//!
//! - [`Faults`]: failed requests (any Status, with `Retry-After`), latency,
//!   dropped watches (now or after N events), stalled and corrupted
//!   (malformed, truncated, oversized) watch frames, restarts, compaction;
//! - [`RequestLog`]: every request with its verb, query and status, so a
//!   test can assert what a client sent.
//!
//! - discovery: `/version`, `/api`, `/apis` (aggregated, as
//!   `APIGroupDiscoveryList`, to a client asking for it), `/api/v1`,
//!   `/apis/{group}/{version}`, and `/openapi/v2` when a spec is given;
//!   `/healthz`, `/readyz`, `/livez`.
//! - subresources: `status`; `scale` of the workloads that have one; a
//!   pod's `eviction`, honouring PodDisruptionBudgets; a pod's `log`, from
//!   [`PodLogs`] a test fills, followed as it grows; a pod's `exec` and
//!   `attach` over WebSockets (`v5.channel.k8s.io`, `v4`;
//!   [`TestApiServerBuilder::channel_v5`]`(false)` for an older server),
//!   running a fake container's builtins (`echo`, `cat`, `hostname`,
//!   `stty size`, `sleep`, `exit N`, `sh`); a pod's `portforward` over a
//!   WebSocket to TCP listeners a test names ([`PortForwardTargets`]).
//! - field selectors: `metadata.name` and `metadata.namespace`, and for
//!   pods the fields kube-apiserver selects on (`spec.nodeName`,
//!   `status.phase`, …).
//!
//! - TLS with a CA generated at start (HTTP/2 and HTTP/1.1 by ALPN),
//!   bearer-token and client-certificate authentication (401 without), and
//!   a kubeconfig pointing at the server with its credentials.
//!
//! - deny rules: 403 Forbidden for a verb on a resource, with the real
//!   server's RBAC message, set on the builder or while running.
//!
//! - CustomResourceDefinitions created through the API: their served
//!   versions are served at once and the CRD reports `Established`.
//!
//! - [`realistic_pod`]: pods of about 5 KB shaped like a ReplicaSet's;
//! - the `test-apiserver` program (`cargo run -p clientgo-testing --bin
//!   test-apiserver -- --help`): prints its URL on its first line once
//!   ready, seeds realistic pods, churns them, writes a kubeconfig, and
//!   takes fault flags.
//!
//! - kube-apiserver 1.36's defaults (RELIABILITY.md lists each with its
//!   test): 100 HTTP/2 streams per connection, list items of built-in types
//!   without `kind`/`apiVersion`, bookmarks every 60 s from a watch cache
//!   ([`TestApiServerBuilder::watch_cache`]`(false)` for none), lists at
//!   "0" in one page, graceful pod deletion, plain-text 404s and
//!   max-in-flight 429s, one frame per watch event.
//!
//! - [`TestApiServerBuilder::watch_list`]`(false)`: answers watch-list
//!   requests as a server with the WatchList feature off (422), to test
//!   clients' fallback.
//!
//! Measured (BENCHMARKS.md, 2026-11-21): 50,000 realistic pods listed in
//! pages of 500 in about 0.8 s, over 115,000 watch events per second (then
//! coalesced into 64 KB chunks; now one frame per event, as
//! kube-apiserver writes them), stored objects taking 1.3x their JSON size.
//!
//! ```
//! use clientgo_testing::TestApiServer;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestApiServer::builder().start().await?;
//! // Seed state directly, then point the client under test at server.url().
//! server.storage().create(
//!     &clientgo_apimachinery::GroupResource::new("", "pods"),
//!     "default",
//!     json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}),
//! )?;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! # Ok(())
//! # }
//! ```
//!
//! # The real kube-apiserver, and where this server differs from it
//!
//! [`envtest`] (feature `envtest`) starts a real kube-apiserver and etcd
//! for tests. Each crate's conformance runs one test body on both
//! ([`envtest::Backend`]); this server is for the faults the real one
//! cannot make (dropped and stalled watches, corrupt and 17 MiB frames,
//! 429 storms, latency, restarts at a chosen moment). Where both answer
//! they agree, but for the rows below. `tests/agreement.rs` runs the same
//! requests on both (Status answers, writes, server-side apply and its
//! conflicts, preconditions, pages, selectors, a watch) and fails on any
//! difference rows 1 to 5 do not list, and on any of those rows no
//! difference needs any more; rows 6 to 8 are what this server does not
//! attempt, and the tests that need them run on the real server.
//!
//! | # | this server | kube-apiserver 1.36 | why it stays |
//! |---|---|---|---|
//! | 1 | keeps field ownership beside the object: no `metadata.managedFields` in answers | writes `managedFields` (FieldsV1) into every object | clients' caches drop them; the ownership rules themselves (conflicts, force, removal) agree, and tests that read `managedFields` run on the real server |
//! | 2 | server-side apply owns lists whole (finalizers, owner references): a second manager applying its own finalizer conflicts; status applies are not tracked; creates are not recorded (a first apply names `before-first-apply`) | merges associative lists item by item; tracks every subresource and every writer | the simplifications `store/field_owners.rs` lists; apply tests run on both backends, and only the real one decides these cases |
//! | 3 | checks no names and no built-in object's fields (a Deployment without a pod template is stored) | 422 Invalid with a cause per field | tests seed partial objects; validation, CRD schemas and CEL rules are the real server's (envtest) |
//! | 4 | takes objects in any namespace | 404 `namespaces "x" not found` for a namespace that does not exist | tests and seeds write into `default` or any namespace without creating it |
//! | 5 | words a label selector's syntax error as the project's parser does | Go's parser's words | code (400) and reason agree; the message names the same place |
//! | 6 | authorizes by deny rules ([`TestApiServer::deny`]) | RBAC | a 403's code, reason and message form agree; RBAC tests run on the real server |
//! | 7 | no admission: no webhooks, no CRD schema validation, pruning or defaulting; a CRD is served as soon as it is created | all of them; a CRD is served a moment after it is Established | admission is what envtest is for; [`envtest::ControlPlane::install_crds`] waits for the moment |
//! | 8 | bookmarks from a simulated watch cache; compaction as etcd's (the compacted revision kept) | a watch cache whose window also decides which old resourceVersions a watch may start from | tests of 410s run both without a watch cache (`--watch-cache=false`, [`TestApiServerBuilder::watch_cache`]) |

// Every failure here is an API `Status`, the body the server answers with;
// it is large (280 bytes) but only ever built on error paths, where boxing
// it would add noise and save nothing.
#![allow(clippy::result_large_err)]

mod api;
#[cfg(feature = "envtest")]
pub mod envtest;
mod faults;
mod load;
mod server;
mod standalone;
mod store;
mod streams;
mod util;

pub use api::crd::custom_resource_definition;
pub use api::registry::{DiscoveryNames, ResourceRegistry};
pub use api::subresources::PodLogs;
pub use faults::controls::{Corruption, Failure, Faults};
pub use faults::request_log::{RequestLog, RequestRecord, Verb};
pub use load::churn::{ChurnCounts, ChurnOptions, ChurnWriter, ObjectGenerator};
pub use load::realistic::{REALISTIC_POD_APPS, realistic_deployment, realistic_pod};
pub use server::builder::{
    DEFAULT_BOOKMARK_INTERVAL, DEFAULT_HTTP2_MAX_STREAMS, DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    TestApiServerBuilder,
};
pub use server::handle::TestApiServer;
pub use server::oidc::OidcIssuer;
pub use server::tls::TlsSetupError;
pub use standalone::cuttable_proxy::CuttableProxy;
pub use standalone::recorded_answer::{RecordedAnswer, ReplayServer, ReplayedRequest};
pub use standalone::socks5_proxy::{Socks5Proxy, Socks5ProxyOptions, Socks5Target};
pub use store::object::{ObjectKey, StoredObject};
pub use store::reads::{ListPage, PageRequest, StorageWatch};
pub use store::storage::{EventType, Preconditions, ReadAt, Storage, StorageEvent, StorageOptions};
pub use streams::port_forward::PortForwardTargets;
pub use util::certificate_authority::{
    CertificateAndKey, CertificateAuthority, ServerCertificateOptions, generate_key_pair,
};
pub use util::eventually::{PATIENCE, eventually, never_within};
pub use util::log_subscriber::install_log_subscriber;
pub use util::process_cpu;
pub use util::process_memory;
pub use util::seeded_random::SeededRandom;
