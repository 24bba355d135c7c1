//! An in-process Kubernetes API server for tests (work in progress).
//!
//! So far this crate holds the server's object store, [`Storage`]: etcd-like
//! revisions, the real server's write rules and Status errors, a bounded
//! event history with compaction, lists at past revisions, and watches
//! from any kept revision. The HTTP(S) server on loopback, list paging,
//! selectors, discovery, fault injection and the `test-apiserver` binary
//! are built on top of it next.
//!
//! ```
//! use clientgo_apimachinery::GroupResource;
//! use clientgo_testing::{ObjectKey, ReadAt, Storage};
//! use serde_json::json;
//!
//! let storage = Storage::default();
//! let pods = GroupResource::new("", "pods");
//! let created = storage.create(&pods, "default", json!({"metadata": {"name": "web"}, "spec": {}}))?;
//! let (items, revision) = storage.list(&pods, Some("default"), ReadAt::Latest)?;
//! assert_eq!(items.len(), 1);
//! assert_eq!(revision, created.resource_version);
//! # Ok::<(), clientgo_apimachinery::Status>(())
//! ```

// Every failure here is an API `Status`, the body the server answers with;
// it is large (280 bytes) but only ever built on error paths, where boxing
// it would add noise and save nothing.
#![allow(clippy::result_large_err)]

mod storage;

pub use storage::{
    EventType, ObjectKey, Preconditions, ReadAt, Storage, StorageEvent, StorageOptions,
    StorageWatch, StoredObject,
};
