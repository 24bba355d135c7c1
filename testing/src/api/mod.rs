//! The Kubernetes API over the store: request paths, discovery, the verbs,
//! patches, encodings, watches, subresources and CRDs.
//!
//! | file | what |
//! |---|---|
//! | `registry.rs` | `ResourceRegistry`, `DiscoveryNames`: which resources are served |
//! | `request_path.rs` | a request path parsed into resource, namespace, name and subresource |
//! | `discovery.rs` | `/api`, `/apis`, resource lists, aggregated discovery |
//! | `patch.rs` | JSON merge patch and JSON patch |
//! | `protobuf.rs` | protobuf negotiation and framing: objects, lists, Statuses, watch frames |
//! | `handlers.rs` | list, get, create, update, patch, delete(collection); selectors and continue tokens |
//! | `responses.rs` | how answers are written: JSON, Statuses, plain text; reading bodies |
//! | `watch.rs` | watch streams: JSON and protobuf, bookmarks, faults |
//! | `subresources.rs` | scale, eviction, pod logs (`PodLogs`) |
//! | `crd.rs` | CustomResourceDefinitions created through the API |

pub(crate) mod crd;
pub(crate) mod discovery;
pub(crate) mod handlers;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod registry;
pub(crate) mod request_path;
pub(crate) mod responses;
pub(crate) mod subresources;
pub(crate) mod watch;
