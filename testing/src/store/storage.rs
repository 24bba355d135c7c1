//! [`Storage`]: the test API server's object store, with etcd-like
//! revisions, a bounded event history, compaction, snapshots at past
//! revisions, and watches from any kept revision. This file holds the
//! types, the state and the one commit path every write goes through; the
//! stored object and its encodings are in `object.rs`, the write rules in
//! `writes.rs`, lists, pages and watches in `reads.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Status;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::store::field_owners::FieldOwners;
use crate::store::object::{ObjectKey, StoredObject};

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
    /// Every event from revision `compacted` on, oldest first.
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
    /// Server-side apply's field managers of the objects applied.
    pub(crate) field_owners: FieldOwners,
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
            field_owners: FieldOwners::default(),
        }
    }

    /// The latest revision.
    pub fn current_revision(&self) -> u64 {
        self.state.lock().revision
    }

    /// How many events the history keeps at most (see
    /// [`StorageOptions::history_limit`]); watchers' event channel holds as
    /// many, so this many past events stay in memory once written.
    pub fn history_limit(&self) -> usize {
        self.history_limit
    }

    /// The compacted revision, as etcd's: the lowest revision still held.
    /// Exact reads at it or later are answered, and watches whose first
    /// event would be at it or later (from `compacted - 1` on).
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
        object: Value,
        event_type: EventType,
        previous: Option<Arc<StoredObject>>,
    ) -> Result<Arc<StorageEvent>, Status> {
        let revision = state.revision + 1;
        let stored = Arc::new(StoredObject::encode(
            key.clone(),
            revision,
            object,
            self.encode_protobuf && event_type != EventType::Deleted,
        )?);
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
                // The lowest revision still held is the next one.
                state.compacted = oldest.revision + 1;
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

    /// Drops the history before `revision` (at most the current one), as
    /// etcd's compaction does: exact reads at an older revision, and
    /// watches that would need an event before it (from `revision - 2` or
    /// older), get 410 from now on; the event at `revision` itself is kept,
    /// so a watch from `revision - 1` still starts.
    pub fn compact(&self, revision: u64) {
        let mut state = self.state.lock();
        let revision = revision.min(state.revision);
        while state
            .history
            .front()
            .is_some_and(|event| event.revision < revision)
        {
            state.history.pop_front();
        }
        state.compacted = state.compacted.max(revision);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_encoded_on_write_only_when_asked() {
        let pods = clientgo_apimachinery::GroupResource::new("", "pods");
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
        let lazy = Storage::new(StorageOptions::default());
        let stored = lazy.create(&pods, "default", pod.clone()).unwrap();
        assert!(stored.protobuf.get().is_none());
        let eager = Storage::new(StorageOptions::default().encode_protobuf_on_write(true));
        let stored = eager.create(&pods, "default", pod).unwrap();
        assert!(matches!(stored.protobuf.get(), Some(Ok(bytes)) if !bytes.is_empty()));
    }
}
