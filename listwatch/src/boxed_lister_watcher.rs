//! [`BoxedListerWatcher`]: any [`ListerWatcher`] behind one type, so the
//! components that own one (an informer's reflector) are built without
//! naming the source's type.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use clientgo_apimachinery::{ListOptions, ObjectList};

use crate::error::Error;
use crate::event_stream::EventStream;
use crate::lister_watcher::ListerWatcher;

/// A watch of a [`BoxedListerWatcher`].
pub type BoxedWatch<K> = Box<dyn EventStream<K>>;

/// A future of a [`BoxedListerWatcher`]'s list or watch.
type BoxedFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

impl<K: Send> EventStream<K> for BoxedWatch<K> {
    fn progress(&self) -> u64 {
        (**self).progress()
    }
}

/// What a [`BoxedListerWatcher`] calls: [`ListerWatcher`] with its futures
/// and watch boxed.
trait ErasedListerWatcher<K>: Send + Sync {
    fn list<'a>(&'a self, options: &'a ListOptions) -> BoxedFuture<'a, ObjectList<K>>;
    fn watch<'a>(&'a self, options: &'a ListOptions) -> BoxedFuture<'a, BoxedWatch<K>>;
    fn supports_watch_list(&self) -> bool;
    fn describe(&self) -> String;
    fn object_type(&self) -> Option<(String, String)>;
    fn identity(&self) -> String;
}

impl<K, L> ErasedListerWatcher<K> for L
where
    K: Send + 'static,
    L: ListerWatcher<K>,
{
    fn list<'a>(&'a self, options: &'a ListOptions) -> BoxedFuture<'a, ObjectList<K>> {
        Box::pin(ListerWatcher::list(self, options))
    }

    fn watch<'a>(&'a self, options: &'a ListOptions) -> BoxedFuture<'a, BoxedWatch<K>> {
        Box::pin(async move {
            let watch = ListerWatcher::watch(self, options).await?;
            Ok(Box::new(watch) as BoxedWatch<K>)
        })
    }

    fn supports_watch_list(&self) -> bool {
        ListerWatcher::supports_watch_list(self)
    }

    fn describe(&self) -> String {
        ListerWatcher::describe(self)
    }

    fn object_type(&self) -> Option<(String, String)> {
        ListerWatcher::object_type(self)
    }

    fn identity(&self) -> String {
        ListerWatcher::identity(self)
    }
}

/// Any [`ListerWatcher`] of `K` behind one type: each list and watch
/// costs one boxed future, and each watch one boxed stream. Clones share
/// the source.
pub struct BoxedListerWatcher<K> {
    inner: Arc<dyn ErasedListerWatcher<K>>,
}

impl<K> Clone for BoxedListerWatcher<K> {
    fn clone(&self) -> Self {
        BoxedListerWatcher {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> std::fmt::Debug for BoxedListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxedListerWatcher")
            .field(&self.inner.describe())
            .finish()
    }
}

impl<K: Send + 'static> BoxedListerWatcher<K> {
    /// Boxes `lister_watcher`.
    pub fn new<L: ListerWatcher<K> + 'static>(lister_watcher: L) -> Self {
        BoxedListerWatcher {
            inner: Arc::new(lister_watcher),
        }
    }
}

impl<K: Send + 'static> ListerWatcher<K> for BoxedListerWatcher<K> {
    type Watch = BoxedWatch<K>;

    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>, Error> {
        self.inner.list(options).await
    }

    async fn watch(&self, options: &ListOptions) -> Result<Self::Watch, Error> {
        self.inner.watch(options).await
    }

    fn supports_watch_list(&self) -> bool {
        self.inner.supports_watch_list()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn object_type(&self) -> Option<(String, String)> {
        self.inner.object_type()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }
}
