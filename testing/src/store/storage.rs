//! [`Storage`]: the test API server's object store, with etcd-like
//! revisions, a bounded event history, compaction, snapshots at past
//! revisions, and watches from any kept revision. This file holds the
//! types, the state and the one commit path every write goes through; the
//! write rules are in `storage_writes.rs`, lists, pages and watches in
//! `storage_reads.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{GroupResource, Status};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::broadcast;

pub use crate::storage_reads::{ListPage, PageRequest, StorageWatch};
use crate::storage_writes::{encode_type_meta_first, labels_of, metadata_mut, string_field};

/// Where an object lives: its resource, namespace (empty for
/// cluster-scoped objects) and name. Keys order like etcd's, by resource,
/// then namespace, then name, so lists come out sorted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The resource (`deployments.apps`).
    pub resource: GroupResource,
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// A key.
    pub fn new(
        resource: GroupResource,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectKey {
            resource,
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.resource, self.name)
        } else {
            write!(f, "{} {}/{}", self.resource, self.namespace, self.name)
        }
    }
}

/// One stored version of an object: its JSON, serialized once when it was
/// written (so serving it costs no encoding), and the metadata that
/// selectors and preconditions read.
#[derive(Debug)]
pub struct StoredObject {
    /// Where it lives.
    pub key: ObjectKey,
    /// The revision that wrote this version (its resourceVersion).
    pub resource_version: u64,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The whole object as JSON, with this version's resourceVersion;
    /// `apiVersion` and `kind`, when set, come first.
    pub json: Arc<[u8]>,
    /// Where the type fields (`"apiVersion":…,"kind":…,`) end in `json`:
    /// 1 when it has none.
    type_meta_end: usize,
    /// The object's protobuf message, encoded the first time a protobuf
    /// client asks (or why it cannot be).
    pub(crate) protobuf: std::sync::OnceLock<Result<bytes::Bytes, String>>,
}

impl StoredObject {
    /// The object's JSON without `apiVersion` and `kind`, as the real
    /// server writes the items of a list of a built-in type: `{` followed
    /// by the returned slice.
    pub fn json_without_type_meta(&self) -> &[u8] {
        self.json.get(self.type_meta_end..).unwrap_or_default()
    }

    /// The object, parsed.
    pub fn to_value(&self) -> Result<Value, Status> {
        serde_json::from_slice(&self.json).map_err(|e| {
            Status::internal_error(&format!("stored object {} is not JSON: {e}", self.key))
        })
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object was changed.
    Modified,
    /// The object was removed.
    Deleted,
}

impl EventType {
    /// The watch event type on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One write, as kept in the history and sent to watchers.
#[derive(Debug)]
pub struct StorageEvent {
    /// The write's revision.
    pub revision: u64,
    /// What happened.
    pub event_type: EventType,
    /// The object after the write (for a delete, its last state, carrying
    /// the delete's resourceVersion).
    pub object: Arc<StoredObject>,
    /// The object before the write; `None` for a create.
    pub previous: Option<Arc<StoredObject>>,
}

/// Which state a list reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// The latest state.
    Latest,
    /// Exactly this revision (410 once compacted; too large if in the
    /// future).
    Exact(u64),
    /// This revision or newer (too large if the store has not reached it).
    NotOlderThan(u64),
}

/// Preconditions of a delete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The object must have this UID.
    pub uid: Option<String>,
    /// The object must be at this resourceVersion.
    pub resource_version: Option<String>,
}

/// How a [`Storage`] is built.
#[derive(Debug, Clone, Copy)]
pub struct StorageOptions {
    history_limit: usize,
    encode_protobuf: bool,
}

impl Default for StorageOptions {
    /// Keeps the last 10,000 events.
    fn default() -> Self {
        StorageOptions {
            history_limit: 10_000,
            encode_protobuf: false,
        }
    }
}

impl StorageOptions {
    /// How many events the history keeps (at least 1); older ones are
    /// compacted away, and watches or exact reads from before them get 410.
    pub fn history_limit(mut self, limit: usize) -> Self {
        self.history_limit = limit.max(1);
        self
    }

    /// Encodes every object of a built-in type as protobuf when it is
    /// written, as kube-apiserver holds its objects ready in either
    /// encoding, instead of the first time a protobuf client asks (the
    /// default, so JSON-only tests pay nothing). For benchmarks that
    /// compare protobuf with JSON clients: the server's own encoding then
    /// stays out of the client's figures.
    pub fn encode_protobuf_on_write(mut self, encode: bool) -> Self {
        self.encode_protobuf = encode;
        self
    }
}

pub(crate) struct State {
    pub(crate) revision: u64,
    pub(crate) objects: BTreeMap<ObjectKey, Arc<StoredObject>>,
    /// Every event with a revision above `compacted`, oldest first.
    pub(crate) history: VecDeque<Arc<StorageEvent>>,
    pub(crate) compacted: u64,
    pub(crate) generated_names: u64,
    pub(crate) uids: u64,
}

/// The object store of the test API server.
///
/// **Revisions.** One counter for the whole store, as in etcd: every write
/// (create, update, delete, marking for deletion) takes the next revision
/// and stamps it as the object's resourceVersion.
///
/// **History.** The last `history_limit` events are kept. A list at an
/// exact past revision is rebuilt by undoing newer events; a watch replays
/// the events after its starting revision, then follows live ones. Both
/// answer 410 Expired once the revision they need is compacted away.
///
/// **Locking.** One mutex guards everything; live events go out through a
/// broadcast channel after the write, in revision order.
pub struct Storage {
    pub(crate) state: Mutex<State>,
    pub(crate) history_limit: usize,
    pub(crate) events: broadcast::Sender<Arc<StorageEvent>>,
    /// [`StorageOptions::encode_protobuf_on_write`].
    encode_protobuf: bool,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Storage")
            .field("revision", &state.revision)
            .field("objects", &state.objects.len())
            .field("compacted", &state.compacted)
            .finish()
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage::new(StorageOptions::default())
    }
}

impl Storage {
    /// An empty store at revision 1 (the first write is revision 2, as a
    /// fresh etcd's first key).
    pub fn new(options: StorageOptions) -> Self {
        let (events, _) = broadcast::channel(options.history_limit);
        Storage {
            state: Mutex::new(State {
                revision: 1,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                compacted: 1,
                generated_names: 0,
                uids: 0,
            }),
            history_limit: options.history_limit,
            events,
            encode_protobuf: options.encode_protobuf,
        }
    }

    /// The latest revision.
    pub fn current_revision(&self) -> u64 {
        self.state.lock().revision
    }

    /// The highest compacted revision: exact reads and watches must start
    /// at or after it.
    pub fn compacted_revision(&self) -> u64 {
        self.state.lock().compacted
    }

    /// The object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<StoredObject>> {
        self.state.lock().objects.get(key).cloned()
    }

    /// Serializes `object`, stamps its revision and records the event.
    /// Called with the lock held; the caller publishes the event before
    /// releasing it.
    pub(crate) fn commit(
        &self,
        state: &mut State,
        key: ObjectKey,
        mut object: Value,
        event_type: EventType,
        previous: Option<Arc<StoredObject>>,
    ) -> Result<Arc<StorageEvent>, Status> {
        let revision = state.revision + 1;
        let metadata = metadata_mut(&mut object)?;
        metadata.insert(
            "resourceVersion".to_string(),
            Value::String(revision.to_string()),
        );
        let uid = string_field(metadata, "uid")?
            .unwrap_or_default()
            .to_string();
        let labels = labels_of(metadata)?;
        let codec = if self.encode_protobuf && event_type != EventType::Deleted {
            let field = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default();
            clientgo_protobuf::by_kind(field("apiVersion"), field("kind"))
        } else {
            None
        };
        let (json, type_meta_end) = encode_type_meta_first(object)
            .map_err(|e| Status::internal_error(&format!("encoding {key}: {e}")))?;
        let json: Arc<[u8]> = json.into();
        let stored = Arc::new(StoredObject {
            key: key.clone(),
            resource_version: revision,
            uid,
            labels,
            json,
            type_meta_end,
            protobuf: std::sync::OnceLock::new(),
        });
        if let Some(codec) = codec {
            let _ = crate::protobuf::message(&stored, &codec);
        }
        state.revision = revision;
        match event_type {
            EventType::Deleted => state.objects.remove(&key),
            EventType::Added | EventType::Modified => {
                state.objects.insert(key, Arc::clone(&stored))
            }
        };
        let event = Arc::new(StorageEvent {
            revision,
            event_type,
            object: stored,
            previous,
        });
        state.history.push_back(Arc::clone(&event));
        while state.history.len() > self.history_limit {
            if let Some(oldest) = state.history.pop_front() {
                state.compacted = oldest.revision;
            }
        }
        Ok(event)
    }

    /// Sends `event` to live watches. Call it with the lock held: with
    /// writers on several threads, watches must receive events in revision
    /// order, since a watch skips any revision at or below the last it saw.
    pub(crate) fn publish(&self, event: &Arc<StorageEvent>) {
        // No receivers is fine: nobody is watching.
        let _ = self.events.send(Arc::clone(event));
    }

    /// Drops the history up to `revision` (at most the current one):
    /// exact reads and watches from before it get 410 from now on.
    pub fn compact(&self, revision: u64) {
        let mut state = self.state.lock();
        let revision = revision.min(state.revision);
        while state
            .history
            .front()
            .is_some_and(|event| event.revision <= revision)
        {
            state.history.pop_front();
        }
        state.compacted = state.compacted.max(revision);
    }
}
