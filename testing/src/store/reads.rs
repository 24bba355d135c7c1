//! Reading [`Storage`] back: lists (whole, at a revision, or in pages
//! with continue tokens) and watches from the event history.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use clientgo_apimachinery::{GroupResource, Status};
use tokio::sync::broadcast;

use crate::store::object::{ObjectKey, StoredObject};
use crate::store::storage::{ReadAt, Storage, StorageEvent};

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

pub(crate) fn too_old(requested: u64, compacted: u64) -> Status {
    Status::expired(format!(
        "too old resource version: {requested} ({compacted})"
    ))
}

pub(crate) fn too_large(requested: u64, current: u64) -> Status {
    Status::resource_version_too_large(format!(
        "Too large resource version: {requested}, current: {current}"
    ))
}

#[derive(Debug, Clone)]
pub(crate) struct WatchFilter {
    pub(crate) resource: GroupResource,
    pub(crate) namespace: Option<String>,
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
    pub(crate) backlog: VecDeque<Arc<StorageEvent>>,
    pub(crate) live: broadcast::Receiver<Arc<StorageEvent>>,
    pub(crate) filter: WatchFilter,
    /// Live events at or below this revision were in the backlog (or
    /// before the start).
    pub(crate) last_revision: u64,
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

impl Storage {
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
    /// compacted away (the first it needs, `after + 1`, is older than the
    /// compacted revision, which etcd keeps).
    pub fn watch(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        after: u64,
    ) -> Result<StorageWatch, Status> {
        let state = self.state.lock();
        if after.saturating_add(1) < state.compacted {
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
}
