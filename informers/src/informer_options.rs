//! [`SharedIndexInformerOptions`]: how one informer is built (name,
//! resource, resync, indexers, transform, reflector options, metrics).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiResource, Object};
use clientgo_reflector::ReflectorOptions;
use clientgo_store::{Indexers, TransformFunc, namespace_indexers};

use crate::metrics::{InformerMetricsProvider, NoopMetricsProvider};
use crate::snapshot::SnapshotOptions;

/// How a [`SharedIndexInformer`](crate::SharedIndexInformer) is built.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `name` | the ListerWatcher's description | `Identifier` / type name |
/// | `resource` | from the client, when built with `from_client` | the example object's type |
/// | `resync_period` | zero: no resync | `defaultEventHandlerResyncPeriod` |
/// | `indexers` | the namespace index | none (the factories add the namespace index) |
/// | `transform` | none | `SetTransform` |
/// | `reflector` | the reflector's defaults (watch-list on, backoff 800 ms to 30 s) | the same |
/// | `metrics` | nothing recorded | `InformerMetricsProvider` |
/// | `snapshot` | none: every start lists | none (warm restart is ours) |
pub struct SharedIndexInformerOptions<K> {
    /// The name in logs, metrics and sync errors.
    pub name: Option<String>,
    /// The resource cached (listers name it in not-found errors).
    pub resource: Option<ApiResource>,
    /// The resync period of handlers added without one; also the
    /// informer's resync check period. Zero: no resync.
    pub resync_period: Duration,
    /// The cache's indexes.
    pub indexers: Indexers<K>,
    /// Applied to every object before it is queued and cached.
    pub transform: Option<TransformFunc<K>>,
    /// The reflector's settings. The informer sets its resync period,
    /// `should_resync`, transform and known objects itself.
    pub reflector: ReflectorOptions<K>,
    /// Creates the informer's and its handlers' metrics.
    pub metrics: Arc<dyn InformerMetricsProvider>,
    /// Saves the cache to disk and resumes from it at the next start
    /// (warm restart); only objects that can be saved are
    /// ([`Object::record_codec`](clientgo_apimachinery::Object::record_codec):
    /// compact entries).
    pub snapshot: Option<SnapshotOptions>,
}

impl<K: Object + 'static> Default for SharedIndexInformerOptions<K> {
    fn default() -> Self {
        SharedIndexInformerOptions {
            name: None,
            resource: None,
            resync_period: Duration::ZERO,
            indexers: namespace_indexers(),
            transform: None,
            reflector: ReflectorOptions::default(),
            metrics: Arc::new(NoopMetricsProvider),
            snapshot: None,
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformerOptions<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut indexes: Vec<&String> = self.indexers.keys().collect();
        indexes.sort();
        f.debug_struct("SharedIndexInformerOptions")
            .field("name", &self.name)
            .field("resource", &self.resource)
            .field("resync_period", &self.resync_period)
            .field("indexers", &indexes)
            .field("transform", &self.transform.is_some())
            .field("reflector", &self.reflector)
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

impl<K> SharedIndexInformerOptions<K> {
    /// Names the informer.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Says which resource is cached.
    #[must_use]
    pub fn resource(mut self, resource: ApiResource) -> Self {
        self.resource = Some(resource);
        self
    }

    /// Sets the default handler resync period (and the check period).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Replaces the indexes (the namespace index is dropped unless included).
    #[must_use]
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers = indexers;
        self
    }

    /// Transforms objects before they are cached.
    #[must_use]
    pub fn transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Sets the reflector's settings.
    #[must_use]
    pub fn reflector(mut self, reflector: ReflectorOptions<K>) -> Self {
        self.reflector = reflector;
        self
    }

    /// Sets the metrics provider.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn InformerMetricsProvider>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Saves the cache in `options.dir` and resumes from it at the next
    /// start instead of listing (warm restart; see [`SnapshotOptions`]).
    /// Only objects that can be saved are:
    /// [`Compact`](clientgo_apimachinery::Compact) entries, typed or
    /// dynamic; for other types the informer logs a warning and lists as
    /// usual.
    #[must_use]
    pub fn snapshot(mut self, options: SnapshotOptions) -> Self {
        self.snapshot = Some(options);
        self
    }
}
