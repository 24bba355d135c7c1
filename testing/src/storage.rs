//! [`Storage`]: the test API server's object store, with etcd-like
//! revisions, a bounded event history, compaction, snapshots at past
//! revisions, and watches from any kept revision.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::status::cause_type;
use clientgo_apimachinery::{GroupResource, Status, StatusCause};
use parking_lot::Mutex;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

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

/// One page of a list: its objects, the revision it reads, and how many
/// matching objects follow it (when known).
#[derive(Debug)]
pub struct ListPage {
    /// The objects of the page, sorted by namespace and name.
    pub items: Vec<Arc<StoredObject>>,
    /// The revision the list reads.
    pub revision: u64,
    /// How many objects follow the page; `None` when not counted.
    pub remaining: Option<usize>,
    /// Whether at least one matching object follows the page.
    pub more: bool,
}

/// What [`Storage::list_page`] reads.
#[derive(Debug, Clone, Copy)]
pub struct PageRequest<'a> {
    /// The resource.
    pub resource: &'a GroupResource,
    /// One namespace, or all when `None`.
    pub namespace: Option<&'a str>,
    /// Which state to read.
    pub at: ReadAt,
    /// Start after this namespace and name (exclusive): a continue token's
    /// position.
    pub after: Option<(&'a str, &'a str)>,
    /// The most objects in the page.
    pub limit: Option<usize>,
    /// Count the objects after the page.
    pub count_remaining: bool,
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
}

impl Default for StorageOptions {
    /// Keeps the last 10,000 events.
    fn default() -> Self {
        StorageOptions {
            history_limit: 10_000,
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
}

struct State {
    revision: u64,
    objects: BTreeMap<ObjectKey, Arc<StoredObject>>,
    /// Every event with a revision above `compacted`, oldest first.
    history: VecDeque<Arc<StorageEvent>>,
    compacted: u64,
    generated_names: u64,
    uids: u64,
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
    state: Mutex<State>,
    history_limit: usize,
    events: broadcast::Sender<Arc<StorageEvent>>,
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

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn bad_request(message: String) -> Status {
    Status::bad_request(message)
}

/// The metadata object of a JSON object, created if absent.
fn metadata_mut(object: &mut Value) -> Result<&mut Map<String, Value>, Status> {
    let Value::Object(fields) = object else {
        return Err(bad_request(
            "the request body is not a JSON object".to_string(),
        ));
    };
    let metadata = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if metadata.is_null() {
        *metadata = Value::Object(Map::new());
    }
    metadata
        .as_object_mut()
        .ok_or_else(|| bad_request("metadata is not a JSON object".to_string()))
}

fn string_field<'a>(
    metadata: &'a Map<String, Value>,
    field: &str,
) -> Result<Option<&'a str>, Status> {
    match metadata.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => Ok(Some(value)),
        Some(other) => Err(bad_request(format!(
            "metadata.{field} must be a string, not {other}"
        ))),
    }
}

fn labels_of(metadata: &Map<String, Value>) -> Result<BTreeMap<String, String>, Status> {
    match metadata.get("labels") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(labels)) => labels
            .iter()
            .map(|(key, value)| match value {
                Value::String(value) => Ok((key.clone(), value.clone())),
                other => Err(bad_request(format!(
                    "metadata.labels[{key:?}] must be a string, not {other}"
                ))),
            })
            .collect(),
        Some(other) => Err(bad_request(format!(
            "metadata.labels must be an object, not {other}"
        ))),
    }
}

/// Whether two objects agree on everything but `metadata` and `status`:
/// what a generation counts. Compares in place, copying nothing.
fn same_desired_state(a: &Value, b: &Value) -> bool {
    let desired = |object: &Value| {
        object
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| *name != "metadata" && *name != "status")
            .count()
    };
    desired(a) == desired(b)
        && a.as_object().into_iter().flatten().all(|(name, value)| {
            name == "metadata" || name == "status" || b.get(name) == Some(value)
        })
}

/// Whether a resource is the core group's pods, whose deletion and status
/// updates follow their own rules.
fn is_pod(resource: &GroupResource) -> bool {
    resource.group.is_empty() && resource.resource == "pods"
}

/// Serializes an object with `apiVersion` and `kind` first, so lists can
/// leave them out by slicing; returns the JSON and where they end (1 when
/// the object has neither): `{` followed by the JSON from there is the
/// object without them.
fn encode_type_meta_first(object: Value) -> Result<(Vec<u8>, usize), serde_json::Error> {
    let Value::Object(mut fields) = object else {
        return Ok((serde_json::to_vec(&object)?, 1));
    };
    let type_meta: Vec<(&str, Value)> = ["apiVersion", "kind"]
        .into_iter()
        .filter_map(|name| fields.remove(name).map(|value| (name, value)))
        .collect();
    let rest = serde_json::to_vec(&fields)?;
    let mut json = Vec::with_capacity(rest.len() + 64);
    json.push(b'{');
    for (name, value) in &type_meta {
        serde_json::to_writer(&mut json, name)?;
        json.push(b':');
        serde_json::to_writer(&mut json, value)?;
        json.push(b',');
    }
    if rest == b"{}" && !type_meta.is_empty() {
        // Nothing else: the last type field's comma goes.
        json.pop();
    }
    let type_meta_end = json.len();
    json.extend_from_slice(rest.get(1..).unwrap_or_default());
    Ok((json, type_meta_end))
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
    fn commit(
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
        });
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
    fn publish(&self, event: &Arc<StorageEvent>) {
        // No receivers is fine: nobody is watching.
        let _ = self.events.send(Arc::clone(event));
    }

    /// Creates an object. A missing name is generated from
    /// `metadata.generateName`; the object gets its namespace, a UID, a
    /// creation timestamp and generation 1. An existing name is 409
    /// AlreadyExists.
    pub fn create(
        &self,
        resource: &GroupResource,
        namespace: &str,
        mut object: Value,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let metadata = metadata_mut(&mut object)?;
        let mut name = string_field(metadata, "name")?
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            let prefix = string_field(metadata, "generateName")?
                .unwrap_or_default()
                .to_string();
            if prefix.is_empty() {
                return Err(Status::invalid(
                    &resource.resource,
                    "",
                    vec![StatusCause {
                        reason: cause_type::FIELD_VALUE_REQUIRED.to_string(),
                        message: "Required value: name or generateName is required".to_string(),
                        field: "metadata.name".to_string(),
                    }],
                ));
            }
            state.generated_names += 1;
            name = format!("{prefix}{}", generated_suffix(state.generated_names));
        }
        let key = ObjectKey::new(resource.clone(), namespace, name.clone());
        if state.objects.contains_key(&key) {
            return Err(Status::already_exists(resource, &name));
        }
        state.uids += 1;
        metadata.insert("name".to_string(), Value::String(name));
        if !namespace.is_empty() {
            metadata.insert(
                "namespace".to_string(),
                Value::String(namespace.to_string()),
            );
        }
        if string_field(metadata, "uid")?.is_none() {
            let uid = format!("00000000-0000-4000-8000-{:012x}", state.uids);
            metadata.insert("uid".to_string(), Value::String(uid));
        }
        metadata.insert(
            "creationTimestamp".to_string(),
            Value::String(now_rfc3339()),
        );
        metadata.insert("generation".to_string(), Value::from(1));
        metadata.remove("deletionTimestamp");
        let event = self.commit(&mut state, key, object, EventType::Added, None)?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }

    /// Reads the object at `key`, lets `change` edit its JSON, and writes
    /// it back as a main [`update`](Self::update). The stored
    /// resourceVersion goes along as a precondition, so a write that
    /// happened in between makes it a Conflict rather than a lost update.
    pub fn modify(
        &self,
        key: &ObjectKey,
        change: impl FnOnce(&mut Value),
    ) -> Result<Arc<StoredObject>, Status> {
        let current = self
            .get(key)
            .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
        let mut object = current.to_value()?;
        change(&mut object);
        self.update(key, object, false)
    }

    /// Replaces an object (or, with `status_only`, only its `status`).
    ///
    /// A resourceVersion in the body must match the stored one (409
    /// Conflict otherwise); an empty one means "whatever is there". UID,
    /// creation timestamp and deletion timestamp cannot be changed. A main
    /// update keeps the stored `status`; the generation goes up when
    /// anything but metadata and status changes. An object marked for
    /// deletion whose last finalizer is removed is deleted.
    pub fn update(
        &self,
        key: &ObjectKey,
        mut object: Value,
        status_only: bool,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let Some(current) = state.objects.get(key).cloned() else {
            return Err(Status::not_found(&key.resource, &key.name));
        };
        let mut stored = current.to_value()?;
        let metadata = metadata_mut(&mut object)?;
        if let Some(rv) = string_field(metadata, "resourceVersion")?
            && !rv.is_empty()
            && rv != current.resource_version.to_string()
        {
            return Err(Status::conflict(
                &key.resource,
                &key.name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let stored_metadata = stored
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = stored_metadata
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        // Status updates take the stored object and the body's status; main
        // updates take the body and the stored status. Either way the parts
        // not taken are moved, not copied. A pod's status update is the
        // exception, as in the real server's pod status strategy: it takes
        // the body (metadata changes such as labels included) and only puts
        // back the stored spec and owner references.
        let (mut next, changed) = if status_only && is_pod(&key.resource) {
            if let (Value::Object(fields), Some(spec)) =
                (&mut object, stored.get_mut("spec").map(Value::take))
            {
                fields.insert("spec".to_string(), spec);
            }
            let owners = stored_metadata.get("ownerReferences").cloned();
            let metadata = metadata_mut(&mut object)?;
            match owners {
                Some(owners) => metadata.insert("ownerReferences".to_string(), owners),
                None => metadata.remove("ownerReferences"),
            };
            (object, false)
        } else if status_only {
            let status = object.get_mut("status").map(Value::take);
            if let (Value::Object(fields), Some(status)) = (&mut stored, status) {
                fields.insert("status".to_string(), status);
            }
            (stored, false)
        } else {
            let changed = !same_desired_state(&object, &stored);
            let status = stored.get_mut("status").map(Value::take);
            if let (Value::Object(fields), Some(status)) = (&mut object, status) {
                fields.insert("status".to_string(), status);
            }
            (object, changed)
        };
        let next_metadata = metadata_mut(&mut next)?;
        for preserved in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "namespace",
            "name",
        ] {
            match stored_metadata.get(preserved) {
                Some(value) => {
                    next_metadata.insert(preserved.to_string(), value.clone());
                }
                None => {
                    next_metadata.remove(preserved);
                }
            }
        }
        next_metadata.insert(
            "generation".to_string(),
            Value::from(if changed { generation + 1 } else { generation }),
        );
        let finalizers_left = next_metadata
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        let marked = next_metadata.contains_key("deletionTimestamp");
        let event_type = if marked && !finalizers_left {
            EventType::Deleted
        } else {
            EventType::Modified
        };
        let event = self.commit(&mut state, key.clone(), next, event_type, Some(current))?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }

    /// Deletes an object. With finalizers it is only marked (a deletion
    /// timestamp is set, once) and stays until they are removed. Failed
    /// preconditions are 409 Conflict.
    pub fn delete(
        &self,
        key: &ObjectKey,
        preconditions: &Preconditions,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let Some(current) = state.objects.get(key).cloned() else {
            return Err(Status::not_found(&key.resource, &key.name));
        };
        if let Some(uid) = &preconditions.uid
            && *uid != current.uid
        {
            return Err(Status::conflict(
                &key.resource,
                &key.name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    current.uid
                ),
            ));
        }
        if let Some(rv) = &preconditions.resource_version
            && *rv != current.resource_version.to_string()
        {
            return Err(Status::conflict(
                &key.resource,
                &key.name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    current.resource_version
                ),
            ));
        }
        let mut object = current.to_value()?;
        let metadata = metadata_mut(&mut object)?;
        let has_finalizers = metadata
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        let marked = metadata.contains_key("deletionTimestamp");
        if has_finalizers && marked {
            return Ok(current);
        }
        // Pods are deleted gracefully: the real server first writes the
        // deletion timestamp and grace period (a MODIFIED event), then,
        // with a grace period of 0 (an unscheduled pod, or a kubelet that
        // is done at once here), deletes the object (DELETED). Finalizers
        // stop after the first step.
        let pod = is_pod(&key.resource);
        let mut previous = current;
        if has_finalizers || (pod && !marked) {
            metadata.insert(
                "deletionTimestamp".to_string(),
                Value::String(now_rfc3339()),
            );
            if pod {
                metadata.insert("deletionGracePeriodSeconds".to_string(), Value::from(0));
            }
            // The marked object is also the deleted one's last state.
            let event = self.commit(
                &mut state,
                key.clone(),
                object.clone(),
                EventType::Modified,
                Some(previous),
            )?;
            self.publish(&event);
            previous = Arc::clone(&event.object);
            if has_finalizers {
                return Ok(previous);
            }
        }
        let event = self.commit(
            &mut state,
            key.clone(),
            object,
            EventType::Deleted,
            Some(previous),
        )?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }

    /// The objects of `resource` (in one namespace, or all when `None`)
    /// at the requested point, sorted by namespace and name, with the
    /// revision the list represents.
    pub fn list(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        at: ReadAt,
    ) -> Result<(Vec<Arc<StoredObject>>, u64), Status> {
        let state = self.state.lock();
        let matches = |key: &ObjectKey| {
            key.resource == *resource && namespace.is_none_or(|ns| key.namespace == ns)
        };
        let target = match at {
            ReadAt::Latest => state.revision,
            ReadAt::NotOlderThan(revision) => {
                if revision > state.revision {
                    return Err(too_large(revision, state.revision));
                }
                state.revision
            }
            ReadAt::Exact(revision) => {
                if revision > state.revision {
                    return Err(too_large(revision, state.revision));
                }
                if revision < state.compacted {
                    return Err(too_old(revision, state.compacted));
                }
                revision
            }
        };
        let mut objects: BTreeMap<ObjectKey, Arc<StoredObject>> = state
            .objects
            .iter()
            .filter(|(key, _)| matches(key))
            .map(|(key, object)| (key.clone(), Arc::clone(object)))
            .collect();
        // Undo every event after the target, newest first.
        for event in state.history.iter().rev() {
            if event.revision <= target {
                break;
            }
            if !matches(&event.object.key) {
                continue;
            }
            match &event.previous {
                Some(previous) => {
                    objects.insert(previous.key.clone(), Arc::clone(previous));
                }
                None => {
                    objects.remove(&event.object.key);
                }
            }
        }
        Ok((objects.into_values().collect(), target))
    }

    /// One page of a list: the objects after `request.after` (a namespace
    /// and name, exclusive) that pass `filter`, at most `request.limit` of
    /// them. At the
    /// current revision this walks the store from `after` without copying
    /// the rest; at a past revision it rebuilds the snapshot first. With
    /// `request.count_remaining` the objects after the page are counted (without
    /// `filter`, so callers ask only when there is no selector, as the real
    /// server reports `remainingItemCount` only then).
    pub fn list_page(
        &self,
        request: &PageRequest<'_>,
        filter: impl Fn(&StoredObject) -> bool,
    ) -> Result<ListPage, Status> {
        let PageRequest {
            resource,
            namespace,
            at,
            after,
            limit,
            count_remaining,
        } = *request;
        let limit = limit.unwrap_or(usize::MAX);
        let is_after = |key: &ObjectKey| {
            after.is_none_or(|(ns, name)| (key.namespace.as_str(), key.name.as_str()) > (ns, name))
        };
        let in_scope = |key: &ObjectKey| namespace.is_none_or(|ns| key.namespace == ns);
        let collect = |objects: &mut dyn Iterator<Item = &Arc<StoredObject>>| {
            let mut items = Vec::new();
            let mut remaining = 0usize;
            for object in objects {
                if items.len() < limit {
                    if filter(object) {
                        items.push(Arc::clone(object));
                    }
                } else if count_remaining {
                    remaining += 1;
                } else {
                    // One more match is enough to know there is a next page.
                    if filter(object) {
                        remaining = 1;
                        break;
                    }
                }
            }
            (items, remaining)
        };
        let state = self.state.lock();
        let current = state.revision;
        let latest = match at {
            ReadAt::Latest => true,
            ReadAt::NotOlderThan(revision) if revision <= current => true,
            ReadAt::Exact(revision) if revision == current => true,
            _ => false,
        };
        if latest {
            let start = ObjectKey::new(
                resource.clone(),
                after.map_or(namespace.unwrap_or_default(), |(ns, _)| ns),
                after.map_or("", |(_, name)| name),
            );
            let mut walk = state
                .objects
                .range(start..)
                .take_while(|(key, _)| key.resource == *resource)
                .filter(|(key, _)| in_scope(key) && is_after(key))
                .map(|(_, object)| object);
            let (items, remaining) = collect(&mut walk);
            return Ok(ListPage {
                items,
                revision: current,
                remaining: count_remaining.then_some(remaining),
                more: remaining > 0,
            });
        }
        drop(state);
        let (snapshot, revision) = self.list(resource, namespace, at)?;
        let mut walk = snapshot.iter().filter(|object| is_after(&object.key));
        let (items, remaining) = collect(&mut walk);
        Ok(ListPage {
            items,
            revision,
            remaining: count_remaining.then_some(remaining),
            more: remaining > 0,
        })
    }

    /// Starts a watch of `resource` (in one namespace, or all) for the
    /// events after revision `after`. 410 Expired if events after it were
    /// compacted away.
    pub fn watch(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        after: u64,
    ) -> Result<StorageWatch, Status> {
        let state = self.state.lock();
        if after < state.compacted {
            return Err(too_old(after, state.compacted));
        }
        // Subscribed under the lock: nothing can be written between the
        // backlog and the live stream.
        let live = self.events.subscribe();
        let filter = WatchFilter {
            resource: resource.clone(),
            namespace: namespace.map(str::to_string),
        };
        let backlog: VecDeque<Arc<StorageEvent>> = state
            .history
            .iter()
            .filter(|event| event.revision > after && filter.matches(&event.object.key))
            .cloned()
            .collect();
        Ok(StorageWatch {
            backlog,
            live,
            filter,
            last_revision: state.revision.max(after),
        })
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

/// Five characters after a `generateName` prefix, as the real server adds.
fn generated_suffix(counter: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut value = counter.wrapping_mul(2_654_435_761) % 27u64.pow(5);
    let mut suffix = [b'b'; 5];
    for slot in suffix.iter_mut().rev() {
        *slot = ALPHABET[(value % 27) as usize];
        value /= 27;
    }
    String::from_utf8_lossy(&suffix).into_owned()
}

fn too_old(requested: u64, compacted: u64) -> Status {
    Status::expired(format!(
        "too old resource version: {requested} ({compacted})"
    ))
}

fn too_large(requested: u64, current: u64) -> Status {
    Status::resource_version_too_large(format!(
        "Too large resource version: {requested}, current: {current}"
    ))
}

#[derive(Debug, Clone)]
struct WatchFilter {
    resource: GroupResource,
    namespace: Option<String>,
}

impl WatchFilter {
    fn matches(&self, key: &ObjectKey) -> bool {
        key.resource == self.resource
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| key.namespace == ns)
    }
}

/// A watch on a [`Storage`]: the kept events after its start, then live
/// ones, for one resource and optionally one namespace.
#[derive(Debug)]
pub struct StorageWatch {
    backlog: VecDeque<Arc<StorageEvent>>,
    live: broadcast::Receiver<Arc<StorageEvent>>,
    filter: WatchFilter,
    /// Live events at or below this revision were in the backlog (or
    /// before the start).
    last_revision: u64,
}

impl StorageWatch {
    /// The latest revision this watch has processed: every matching event
    /// up to it has been returned by [`next`](Self::next), so it is what a
    /// BOOKMARK may carry.
    pub fn progress(&self) -> u64 {
        match self.backlog.front() {
            Some(next) => next.revision - 1,
            None => self.last_revision,
        }
    }

    /// The next event if one is ready now, without waiting: `None` when
    /// nothing is ready (or the watcher must call [`next`](Self::next) to
    /// learn it fell behind or the store is gone).
    pub fn try_next(&mut self) -> Option<Arc<StorageEvent>> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(event);
        }
        loop {
            let event = self.live.try_recv().ok()?;
            if event.revision <= self.last_revision {
                continue;
            }
            self.last_revision = event.revision;
            if self.filter.matches(&event.object.key) {
                return Some(event);
            }
        }
    }

    /// The next event, waiting for one if needed. A watcher that fell so
    /// far behind that the channel dropped events gets 410 Expired, as a
    /// slow watcher of a real server does; `None` means the store is gone.
    pub async fn next(&mut self) -> Option<Result<Arc<StorageEvent>, Status>> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(Ok(event));
        }
        loop {
            match self.live.recv().await {
                Ok(event) => {
                    if event.revision <= self.last_revision {
                        continue;
                    }
                    // Filtered-out events still move the watch forward, so
                    // a bookmark can name the latest revision processed.
                    self.last_revision = event.revision;
                    if self.filter.matches(&event.object.key) {
                        return Some(Ok(event));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    return Some(Err(Status::expired(format!(
                        "the watcher fell behind and {missed} events were dropped; watch again from a newer resource version"
                    ))));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{` and the JSON after the type fields is the object without them,
    /// whatever the object holds.
    #[test]
    fn type_fields_come_first_and_slice_off() {
        for (object, bare) in [
            (
                serde_json::json!({"metadata": {"name": "a"}, "kind": "Pod", "apiVersion": "v1"}),
                serde_json::json!({"metadata": {"name": "a"}}),
            ),
            (
                serde_json::json!({"kind": "Pod", "apiVersion": "v1"}),
                serde_json::json!({}),
            ),
            (
                serde_json::json!({"metadata": {}}),
                serde_json::json!({"metadata": {}}),
            ),
            (serde_json::json!({}), serde_json::json!({})),
        ] {
            let (json, end) = encode_type_meta_first(object.clone()).unwrap();
            let whole: Value = serde_json::from_slice(&json).unwrap();
            assert_eq!(whole, object);
            let mut without = b"{".to_vec();
            without.extend_from_slice(&json[end..]);
            let without: Value = serde_json::from_slice(&without).unwrap();
            assert_eq!(without, bare, "{}", String::from_utf8_lossy(&json));
        }
    }
}
