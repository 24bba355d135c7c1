//! [`ShardedListerWatcher`]: one shard of a collection, filtered by the
//! server when it applies shard selectors and by this client when it does
//! not.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};

use clientgo_apimachinery::{ListOptions, Object, ObjectList, ShardSelector, WatchEvent};
use futures_core::Stream;

use crate::error::Error;
use crate::event_stream::EventStream;
use crate::lister_watcher::ListerWatcher;

/// Who filters a sharded source's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardFiltering {
    /// Not known yet: no list answered so far.
    Unknown,
    /// The server: its lists echo the selector (`metadata.shardInfo`).
    Server,
    /// This client: the server ignores the selector (the
    /// `ShardedListAndWatch` gate off, a server before 1.36, or a
    /// k8s-openapi built for one).
    Client,
}

/// What a sharded source has done, for stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardStats {
    /// Who filters.
    pub filtering: ShardFiltering,
    /// Objects and events this client dropped as outside the shard
    /// (none when the server filters).
    pub filtered_out: u64,
}

/// The shared, cheap status handle of a [`ShardedListerWatcher`].
#[derive(Debug, Default)]
pub struct ShardStatus {
    filtering: AtomicU8,
    filtered_out: AtomicU64,
}

impl ShardStatus {
    /// The stats now.
    pub fn stats(&self) -> ShardStats {
        ShardStats {
            filtering: match self.filtering.load(Ordering::Relaxed) {
                1 => ShardFiltering::Server,
                2 => ShardFiltering::Client,
                _ => ShardFiltering::Unknown,
            },
            filtered_out: self.filtered_out.load(Ordering::Relaxed),
        }
    }

    fn set(&self, filtering: ShardFiltering) {
        let value = match filtering {
            ShardFiltering::Unknown => 0,
            ShardFiltering::Server => 1,
            ShardFiltering::Client => 2,
        };
        self.filtering.store(value, Ordering::Relaxed);
    }

    fn dropped(&self, count: u64) {
        if count > 0 {
            self.filtered_out.fetch_add(count, Ordering::Relaxed);
        }
    }
}

/// A [`ListerWatcher`] for one shard (Kubernetes 1.36's `shardSelector`):
/// every list and watch carries the selector, and objects outside it are
/// dropped here too.
///
/// A server that applies the selector sends only the shard, so nothing
/// is dropped here and the list says so; one that ignores it sends
/// everything, and this filters lists, watches and watch-lists the same
/// way, from the metadata alone (`metadata.uid` or `metadata.namespace`:
/// a compact object decodes nothing for it). The shard of an object never
/// changes (its uid and namespace are fixed), so an object is never
/// dropped half-way through its life. [`status`](Self::status) says which
/// side filters. A watch-list (no list) probes with a one-item list the
/// first time, to learn it.
///
/// The selector is part of the [`identity`](ListerWatcher::identity), so a
/// saved cache of one shard is never resumed as another.
#[derive(Debug, Clone)]
pub struct ShardedListerWatcher<L> {
    inner: L,
    shard: Shard,
}

/// A selector and its text, shared by clones and their watches.
#[derive(Debug, Clone)]
struct Shard {
    selector: Arc<ShardSelector>,
    text: Arc<str>,
    status: Arc<ShardStatus>,
}

impl<L> ShardedListerWatcher<L> {
    /// `inner`'s objects in `selector`'s shards.
    pub fn new(inner: L, selector: ShardSelector) -> Self {
        let shard = Shard {
            text: Arc::from(selector.to_string()),
            selector: Arc::new(selector),
            status: Arc::default(),
        };
        ShardedListerWatcher { inner, shard }
    }

    /// The selector.
    pub fn selector(&self) -> &ShardSelector {
        &self.shard.selector
    }

    /// Who filters, and how much this client dropped; shared by clones.
    pub fn status(&self) -> Arc<ShardStatus> {
        Arc::clone(&self.shard.status)
    }

    /// The inner source.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    fn options(&self, options: &ListOptions) -> ListOptions {
        ListOptions {
            shard_selector: Some(self.shard.text.to_string()),
            ..options.clone()
        }
    }
}

impl<K> ShardedListerWatcher<crate::ResourceListerWatcher<K>> {
    /// The same source and shard, decoding objects as `E` (the status is
    /// shared).
    pub fn retyped<E>(self) -> ShardedListerWatcher<crate::ResourceListerWatcher<E>> {
        ShardedListerWatcher {
            inner: self.inner.retyped(),
            shard: self.shard,
        }
    }
}

impl<K, L> ListerWatcher<K> for ShardedListerWatcher<L>
where
    K: Object + Send + 'static,
    L: ListerWatcher<K>,
{
    type Watch = ShardedWatch<K, L::Watch>;

    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>, Error> {
        let mut list = self.inner.list(&self.options(options)).await?;
        let shard = &self.shard;
        if shard.applied_by(&list) {
            shard.status.set(ShardFiltering::Server);
        } else {
            shard.status.set(ShardFiltering::Client);
            let before = list.items.len();
            list.items
                .retain(|object| shard.selector.matches(object.uid(), object.namespace()));
            shard.status.dropped((before - list.items.len()) as u64);
        }
        Ok(list)
    }

    async fn watch(&self, options: &ListOptions) -> Result<Self::Watch, Error> {
        let options = self.options(options);
        let shard = &self.shard;
        if options.send_initial_events == Some(true)
            && shard.status.stats().filtering == ShardFiltering::Unknown
        {
            // A watch-list never sees list metadata: one item tells.
            // Not at resourceVersion "0": the watch cache may ignore the
            // limit there.
            let probe = ListOptions {
                limit: Some(1),
                ..ListOptions::default()
            };
            if let Ok(list) = self.inner.list(&self.options(&probe)).await {
                shard.status.set(if shard.applied_by(&list) {
                    ShardFiltering::Server
                } else {
                    ShardFiltering::Client
                });
            }
        }
        let inner = self.inner.watch(&options).await?;
        Ok(ShardedWatch {
            inner,
            selector: Arc::clone(&shard.selector),
            status: Arc::clone(&shard.status),
            _objects: std::marker::PhantomData,
        })
    }

    fn supports_watch_list(&self) -> bool {
        self.inner.supports_watch_list()
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.inner.describe(), self.shard.text)
    }

    fn object_type(&self) -> Option<(String, String)> {
        self.inner.object_type()
    }

    fn identity(&self) -> String {
        format!(
            "{} shardSelector={}",
            self.inner.identity(),
            self.shard.text
        )
    }
}

impl Shard {
    /// Whether the server says it applied this shard's selector.
    fn applied_by<K>(&self, list: &ObjectList<K>) -> bool {
        clientgo_protobuf::list_shard_selector(&list.metadata) == Some(&*self.text)
    }
}

/// The events of a sharded watch: those of objects outside the shard
/// dropped (bookmarks and errors pass).
#[derive(Debug)]
pub struct ShardedWatch<K, W> {
    inner: W,
    selector: Arc<ShardSelector>,
    status: Arc<ShardStatus>,
    _objects: std::marker::PhantomData<fn() -> K>,
}

impl<K, W> Stream for ShardedWatch<K, W>
where
    K: Object,
    W: EventStream<K>,
{
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let event = match Pin::new(&mut self.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(event))) => event,
                other => return other,
            };
            let object = match &event {
                WatchEvent::Added(object)
                | WatchEvent::Modified(object)
                | WatchEvent::Deleted(object) => object,
                _ => return Poll::Ready(Some(Ok(event))),
            };
            if self.selector.matches(object.uid(), object.namespace()) {
                return Poll::Ready(Some(Ok(event)));
            }
            self.status.dropped(1);
        }
    }
}

impl<K, W> EventStream<K> for ShardedWatch<K, W>
where
    K: Object + Send,
    W: EventStream<K>,
{
    fn progress(&self) -> u64 {
        self.inner.progress()
    }
}
