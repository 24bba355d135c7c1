//! [`FakeListerWatcher`]: an in-memory source of lists and watches, as
//! client-go's `FakeControllerSource`, to drive a reflector or informer
//! with no HTTP at all.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::{Error, EventStream, ListerWatcher};
use clientgo_apimachinery::{Bookmark, ListOptions, Object, ObjectList, Status, WatchEvent};
use futures_core::Stream;
use parking_lot::Mutex;
use tokio::sync::mpsc;

/// Lists and watches objects held in memory.
///
/// Every change ([`add`](Self::add), [`modify`](Self::modify),
/// [`delete`](Self::delete)) gets the next resourceVersion (1, 2, 3, …),
/// written into the object, is kept in a history, and goes at once to
/// every open watch. A watch behaves as kube-apiserver's with a watch
/// cache:
/// - from "" or "0": ADDED for every object, then the changes;
/// - from a resourceVersion: the changes after it from the history, or a
///   410 ERROR when [`compact`](Self::compact) has dropped them;
/// - with `sendInitialEvents=true` (watch-list): ADDED for every object,
///   a bookmark marking the end of the initial events, then the changes.
///
/// A list returns every object in one page at the current resourceVersion
/// (selectors and limits are not applied). Clones share the same state.
pub struct FakeListerWatcher<K> {
    state: Arc<Mutex<State<K>>>,
    watch_list: bool,
    object_type: Option<(String, String)>,
}

struct State<K> {
    objects: BTreeMap<String, K>,
    resource_version: u64,
    /// Changes after `compacted`, oldest first.
    history: Vec<(u64, WatchEvent<K>)>,
    compacted: u64,
    watchers: Vec<mpsc::UnboundedSender<Result<WatchEvent<K>, Error>>>,
    lists: u64,
    watches: u64,
}

impl<K> Clone for FakeListerWatcher<K> {
    fn clone(&self) -> Self {
        FakeListerWatcher {
            state: Arc::clone(&self.state),
            watch_list: self.watch_list,
            object_type: self.object_type.clone(),
        }
    }
}

impl<K> std::fmt::Debug for FakeListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("FakeListerWatcher")
            .field("objects", &state.objects.len())
            .field("resource_version", &state.resource_version)
            .field("open_watches", &state.watchers.len())
            .finish_non_exhaustive()
    }
}

impl<K> Default for FakeListerWatcher<K> {
    fn default() -> Self {
        FakeListerWatcher::new()
    }
}

impl<K> FakeListerWatcher<K> {
    /// An empty source at resourceVersion 0 that serves watch-lists.
    pub fn new() -> Self {
        FakeListerWatcher {
            state: Arc::new(Mutex::new(State {
                objects: BTreeMap::new(),
                resource_version: 0,
                history: Vec::new(),
                compacted: 0,
                watchers: Vec::new(),
                lists: 0,
                watches: 0,
            })),
            watch_list: true,
            object_type: None,
        }
    }

    /// Says the source serves objects of `api_version` `kind` (what an
    /// `ApiResource` tells a dynamic lister-watcher), so a reflector skips
    /// watch events whose object names another type. Objects of any type
    /// can still be added.
    #[must_use]
    pub fn serves_type(mut self, api_version: &str, kind: &str) -> Self {
        self.object_type = Some((api_version.to_string(), kind.to_string()));
        self
    }

    /// Whether the source says it serves watch-lists (default `true`).
    #[must_use]
    pub fn watch_list_supported(mut self, supported: bool) -> Self {
        self.watch_list = supported;
        self
    }

    /// The resourceVersion of the last change ("0" before any).
    pub fn resource_version(&self) -> String {
        self.state.lock().resource_version.to_string()
    }

    /// Lists answered so far.
    pub fn lists(&self) -> u64 {
        self.state.lock().lists
    }

    /// Watches opened so far.
    pub fn watches(&self) -> u64 {
        self.state.lock().watches
    }

    /// Watches open now (a dropped stream counts until the next change or
    /// bookmark finds it gone).
    pub fn open_watches(&self) -> usize {
        let mut state = self.state.lock();
        state.watchers.retain(|watcher| !watcher.is_closed());
        state.watchers.len()
    }

    /// Ends every open watch cleanly, as a server's timeout does.
    pub fn close_watches(&self) {
        self.state.lock().watchers.clear();
    }

    /// Ends every open watch with an ERROR event carrying `status`.
    pub fn fail_watches(&self, status: &Status) {
        let watchers = std::mem::take(&mut self.state.lock().watchers);
        for watcher in watchers {
            let _gone = watcher.send(Err(Error::WatchStatus {
                url: "fake".into(),
                status: Box::new(status.clone()),
            }));
        }
    }

    /// Forgets the history: a watch from an older resourceVersion then
    /// gets a 410 Expired ERROR.
    pub fn compact(&self) {
        let mut state = self.state.lock();
        state.compacted = state.resource_version;
        state.history.clear();
    }
}

impl<K: Object + Clone + Send + 'static> FakeListerWatcher<K> {
    /// Creates `object` (or replaces one with its key); returns it with its
    /// new resourceVersion.
    pub fn add(&self, object: K) -> K {
        self.change(object, WatchEvent::Added)
    }

    /// Updates `object`; returns it with its new resourceVersion.
    pub fn modify(&self, object: K) -> K {
        self.change(object, WatchEvent::Modified)
    }

    /// Deletes the object with `object`'s key; `None` when there was none.
    /// The DELETED event carries the last state at a new resourceVersion.
    pub fn delete(&self, object: &K) -> Option<K> {
        let mut state = self.state.lock();
        let existing = state.objects.remove(&key(object))?;
        Some(state.record(existing, WatchEvent::Deleted))
    }

    /// Sends every open watch a bookmark at the current resourceVersion,
    /// as a watch cache does every minute.
    pub fn bookmark(&self) {
        let mut state = self.state.lock();
        let bookmark = Bookmark::new(state.resource_version.to_string());
        state.send(&WatchEvent::Bookmark(bookmark));
    }

    /// Every object held now, ordered by key.
    pub fn objects(&self) -> Vec<K> {
        self.state.lock().objects.values().cloned().collect()
    }

    fn change(&self, object: K, event: fn(K) -> WatchEvent<K>) -> K {
        let mut state = self.state.lock();
        let object = state.record(object, event);
        state.objects.insert(key(&object), object.clone());
        object
    }
}

impl<K: Object + Clone> State<K> {
    /// Gives `object` the next resourceVersion, keeps the change and sends
    /// it to open watches.
    fn record(&mut self, mut object: K, event: fn(K) -> WatchEvent<K>) -> K {
        self.resource_version += 1;
        object.meta_mut().resource_version = Some(self.resource_version.to_string());
        let change = event(object.clone());
        self.send(&change);
        self.history.push((self.resource_version, change));
        object
    }

    fn send(&mut self, event: &WatchEvent<K>) {
        self.watchers
            .retain(|watcher| watcher.send(Ok(event.clone())).is_ok());
    }

    fn current_state(&self) -> impl Iterator<Item = Result<WatchEvent<K>, Error>> + '_ {
        self.objects
            .values()
            .map(|object| Ok(WatchEvent::Added(object.clone())))
    }
}

fn key<K: Object>(object: &K) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name().unwrap_or_default()
    )
}

impl<K: Object + Clone + Send + Sync + 'static> ListerWatcher<K> for FakeListerWatcher<K> {
    type Watch = FakeWatch<K>;

    async fn list(&self, _options: &ListOptions) -> Result<ObjectList<K>, Error> {
        let mut state = self.state.lock();
        state.lists += 1;
        let mut list = ObjectList {
            items: state.objects.values().cloned().collect(),
            ..ObjectList::default()
        };
        list.metadata.resource_version = Some(state.resource_version.to_string());
        Ok(list)
    }

    async fn watch(&self, options: &ListOptions) -> Result<FakeWatch<K>, Error> {
        let mut state = self.state.lock();
        state.watches += 1;
        let (sender, events) = mpsc::unbounded_channel();
        let from = options.resource_version.as_deref().unwrap_or_default();
        let initial: Vec<_> = if options.send_initial_events == Some(true) {
            let end = Bookmark::new(state.resource_version.to_string()).mark_initial_events_end();
            state
                .current_state()
                .chain([Ok(WatchEvent::Bookmark(end))])
                .collect()
        } else if from.is_empty() || from == "0" {
            state.current_state().collect()
        } else {
            match from.parse::<u64>() {
                Ok(from) if from >= state.compacted => state
                    .history
                    .iter()
                    .filter(|(version, _)| *version > from)
                    .map(|(_, event)| Ok(event.clone()))
                    .collect(),
                _ => vec![Err(Error::WatchStatus {
                    url: "fake".into(),
                    status: Box::new(Status::expired(format!(
                        "too old resource version: {from} ({})",
                        state.compacted
                    ))),
                })],
            }
        };
        let failed = initial.iter().any(Result::is_err);
        for event in initial {
            let _open = sender.send(event);
        }
        if !failed {
            state.watchers.push(sender);
        }
        Ok(FakeWatch {
            events,
            done: false,
        })
    }

    fn supports_watch_list(&self) -> bool {
        self.watch_list
    }

    fn object_type(&self) -> Option<(String, String)> {
        self.object_type.clone()
    }

    fn describe(&self) -> String {
        "fake".into()
    }
}

/// One watch of a [`FakeListerWatcher`]: its events as an
/// [`EventStream`]. Ends when the source closes its watches; ends after
/// the first error. Dropping it closes the watch.
#[derive(Debug)]
pub struct FakeWatch<K> {
    events: mpsc::UnboundedReceiver<Result<WatchEvent<K>, Error>>,
    done: bool,
}

impl<K> Stream for FakeWatch<K> {
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let next = std::task::ready!(self.events.poll_recv(cx));
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        Poll::Ready(next)
    }
}

impl<K: Send> EventStream<K> for FakeWatch<K> {}
