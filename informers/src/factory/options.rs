//! [`InformerFactoryOptions`]: what every informer of a factory shares.

use clientgo_apimachinery::ShardSelector;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiResource, GroupVersionResource, KnownScope, Object};
use clientgo_listwatch::{ResourceListerWatcher, TweakListOptions};
use clientgo_reflector::ReflectorOptions;

use crate::cache::storage::Storage;
use crate::cache::transform::MetadataTransform;
use crate::informer::options::SharedIndexInformerOptions;
use crate::informer::wait::LastingErrors;
use crate::metrics::provider::{InformerMetricsProvider, NoopMetricsProvider};
use crate::warm_restart::options::SnapshotOptions;

/// The settings a factory applies to each informer it creates (client-go's
/// `SharedInformerOption`s), shared by the typed, dynamic and metadata
/// factories. Informers are created with the namespace index.
#[derive(Clone)]
pub struct InformerFactoryOptions {
    /// The resync period of informers without a custom one (zero: none;
    /// client-go's `defaultResync`).
    pub resync_period: Duration,
    /// Watch only this namespace (cluster-scoped resources ignore it).
    pub namespace: Option<String>,
    /// Adjusts every list and watch (label and field selectors).
    pub tweak_list_options: Option<TweakListOptions>,
    /// Resync periods by resource.
    pub custom_resync: HashMap<GroupVersionResource, Duration>,
    /// How every informer's cache keeps objects (compact by default).
    pub storage: Storage,
    /// Keep `metadata.managedFields` (false: dropped; see
    /// [`SharedIndexInformerOptions::keep_managed_fields`]).
    pub keep_managed_fields: bool,
    /// Applied to every object's metadata before caching it: each
    /// informer's [`Transform::Metadata`](crate::Transform::Metadata).
    pub transform: Option<MetadataTransform>,
    /// Every informer's reflector options (watch-list, backoff, the watch
    /// error handler, ...), as [`SharedIndexInformerOptions::reflector`].
    pub reflector: ReflectorOptions,
    /// Metrics of every informer and handler.
    pub metrics: Arc<dyn InformerMetricsProvider>,
    /// What `wait_for_cache_sync` does when every unsynced informer's last
    /// error will not heal by itself: give up at once (the default) or keep
    /// waiting.
    pub lasting_errors: LastingErrors,
    /// Save every informer's cache and resume from it at the next start
    /// (warm restart): each informer keeps its own file in the directory.
    /// Informers in compact storage do, and those of entry types named
    /// with [`SnapshotOptions::entry_type`].
    pub snapshot: Option<SnapshotOptions>,
    /// Every informer caches only these shards (see
    /// [`SharedIndexInformerOptions::shard_selector`]).
    pub shard_selector: Option<ShardSelector>,
}

impl Default for InformerFactoryOptions {
    fn default() -> Self {
        InformerFactoryOptions {
            resync_period: Duration::ZERO,
            namespace: None,
            tweak_list_options: None,
            custom_resync: HashMap::new(),
            storage: Storage::default(),
            keep_managed_fields: false,
            transform: None,
            reflector: ReflectorOptions::default(),
            metrics: Arc::new(NoopMetricsProvider),
            lasting_errors: LastingErrors::GiveUp,
            snapshot: None,
            shard_selector: None,
        }
    }
}

impl fmt::Debug for InformerFactoryOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerFactoryOptions")
            .field("resync_period", &self.resync_period)
            .field("namespace", &self.namespace)
            .field("tweak_list_options", &self.tweak_list_options.is_some())
            .field("custom_resync", &self.custom_resync)
            .field("storage", &self.storage)
            .field("keep_managed_fields", &self.keep_managed_fields)
            .field("transform", &self.transform.is_some())
            .field("reflector", &self.reflector)
            .field("lasting_errors", &self.lasting_errors)
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

impl InformerFactoryOptions {
    /// Sets the resync period of informers without a custom one.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Sets how every informer's cache keeps objects (see [`Storage`]).
    #[must_use]
    pub fn storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    /// Watches only `namespace` (client-go's `WithNamespace`).
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Adjusts every list and watch (client-go's `WithTweakListOptions`).
    #[must_use]
    pub fn tweak_list_options(
        mut self,
        tweak: impl Fn(&mut clientgo_apimachinery::ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.tweak_list_options = Some(Arc::new(tweak));
        self
    }

    /// A resync period for the informer of `K` (client-go's
    /// `WithCustomResyncConfig`).
    #[must_use]
    pub fn custom_resync<K>(self, period: Duration) -> Self
    where
        K: k8s_openapi::Resource,
        K::Scope: KnownScope,
    {
        self.custom_resync_for(&ApiResource::of::<K>(), period)
    }

    /// A resync period for the informer of `resource`.
    #[must_use]
    pub fn custom_resync_for(mut self, resource: &ApiResource, period: Duration) -> Self {
        self.custom_resync
            .insert(resource.group_version_resource(), period);
        self
    }

    /// Saves every informer's cache and resumes from it at the next start
    /// (see the field).
    #[must_use]
    pub fn snapshot(mut self, snapshot: SnapshotOptions) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// Every informer caches only `selector`'s shards (see the field).
    #[must_use]
    pub fn shard_selector(mut self, selector: ShardSelector) -> Self {
        self.shard_selector = Some(selector);
        self
    }

    /// Applies `transform` to every object's metadata before caching
    /// (client-go's `WithTransform`, for the metadata every type has).
    #[must_use]
    pub fn transform(mut self, transform: MetadataTransform) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Keeps or drops `managedFields` in every informer (see the field).
    /// Dropped, the factory's lister-watchers leave them out of the JSON
    /// before decoding and cut them from protobuf bytes, so they are never
    /// built (faster, and no heap holes from trees built only to be
    /// dropped; client-go decodes them and drops them in a transform).
    #[must_use]
    pub fn keep_managed_fields(mut self, keep: bool) -> Self {
        self.keep_managed_fields = keep;
        self
    }

    /// What `wait_for_cache_sync` does when every unsynced informer's last
    /// error is a 403, a 401, or a 404 for a resource the server does not
    /// serve: [`LastingErrors::GiveUp`] at once (the default) or
    /// [`LastingErrors::KeepWaiting`] for the whole timeout.
    #[must_use]
    pub fn lasting_errors(mut self, lasting: LastingErrors) -> Self {
        self.lasting_errors = lasting;
        self
    }

    /// Sets every informer's reflector options (watch-list, backoff, ...).
    #[must_use]
    pub fn reflector(mut self, reflector: ReflectorOptions) -> Self {
        self.reflector = reflector;
        self
    }

    /// Calls `handler` with every list and watch error of every informer
    /// of the factory, on the informer's reflector task (it must not
    /// block).
    #[must_use]
    pub fn watch_error_handler(
        mut self,
        handler: impl Fn(&clientgo_reflector::Error) + Send + Sync + 'static,
    ) -> Self {
        self.reflector.watch_error_handler = Some(Arc::new(handler));
        self
    }

    /// Sets the metrics provider.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn InformerMetricsProvider>) -> Self {
        self.metrics = metrics;
        self
    }

    /// The namespace to list in, for `resource`.
    pub(crate) fn namespace_for(&self, resource: &ApiResource) -> Option<&str> {
        self.namespace
            .as_deref()
            .filter(|_| resource.is_namespaced())
    }

    /// The ListerWatcher for `client`, with the tweak applied.
    pub(crate) fn lister_watcher<K>(
        &self,
        client: clientgo_rest::ResourceClient<K>,
    ) -> ResourceListerWatcher<K> {
        let lister_watcher = ResourceListerWatcher::new(client);
        match &self.tweak_list_options {
            Some(tweak) => {
                let tweak = Arc::clone(tweak);
                lister_watcher.tweak_list_options(move |options| tweak(options))
            }
            None => lister_watcher,
        }
    }

    /// The options of the informer of `resource`.
    pub(crate) fn informer_options<K>(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformerOptions<K>
    where
        K: Object + Clone + Send + Sync + 'static,
    {
        let name = match self.namespace_for(resource) {
            Some(namespace) => format!("{} in {namespace}", resource.group_resource()),
            None => resource.group_resource().to_string(),
        };
        let resync = self
            .custom_resync
            .get(&resource.group_version_resource())
            .copied()
            .unwrap_or(self.resync_period);
        let mut options = SharedIndexInformerOptions::<K>::default()
            .name(name)
            .resource(resource.clone())
            .storage(self.storage)
            .resync_period(resync)
            .metrics(Arc::clone(&self.metrics))
            .reflector(self.reflector.clone());
        options.keep_managed_fields = self.keep_managed_fields;
        if let Some(transform) = &self.transform {
            options = options.transform(Arc::clone(transform));
        }
        if let Some(snapshot) = &self.snapshot {
            options = options.snapshot(snapshot.clone());
        }
        if let Some(selector) = &self.shard_selector {
            options = options.shard_selector(selector.clone());
        }
        options
    }
}
