//! [`Engine`]: what a [`SharedIndexInformer`](crate::SharedIndexInformer)
//! of `K` asks of its machinery, whatever its cache keeps; implemented
//! once, by [`StoredEngine`], over any [`Stored`] form of `K`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use clientgo_apimachinery::ApiObject;
use clientgo_store::{Indexers, ResourceEventHandler};
use tokio_util::sync::CancellationToken;

use crate::cache::decode_cache::DecodeCache;
use crate::cache::lister::{Cache, Lister};
use crate::cache::metadata_index::{MetadataIndexers, over_metadata};
use crate::cache::metadata_view::{MetadataHandler, MetadataView};
use crate::cache::storage::Storage;
use crate::cache::stored::Stored;
use crate::error::Error;
use crate::handler::listener::ListenerView;
use crate::handler::object_handler::ObjectHandler;
use crate::handler::options::HandlerOptions;
use crate::informer::pipeline::Pipeline;
use crate::informer::state::InformerState;
use crate::informer::stats::InformerStats;
use crate::warm_restart::options::SnapshotStats;

/// The machinery of an informer of `K`, its storage erased. The
/// storage-independent state is [`state`](Self::state); every other method
/// is implemented once over [`Stored`].
pub(crate) trait Engine<K>: Send + Sync {
    fn state(&self) -> &Arc<InformerState>;
    fn storage(&self) -> Storage;
    fn run(&self, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>>;
    fn add_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<K>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<dyn ListenerView>, Error>;
    fn add_metadata_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<MetadataView>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<dyn ListenerView>, Error>;
    fn remove_handler(&self, id: u64);
    fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error>;
    fn add_metadata_indexers(&self, indexers: MetadataIndexers) -> Result<(), Error>;
    fn lister(&self) -> Lister<K>;
    fn cache_bytes(&self) -> usize;
    fn stats(&self) -> InformerStats;
    fn snapshot_stats(&self) -> SnapshotStats;
}

/// An informer's [`Pipeline`] over `S` and the decoder that turns its
/// entries into `K`.
pub(crate) struct StoredEngine<K, S> {
    pipeline: Pipeline<S>,
    decoder: Arc<DecodeCache<K, S>>,
    /// Made once; [`Engine::lister`] hands out clones.
    lister: Lister<K>,
    storage: Storage,
}

impl<K, S> StoredEngine<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    /// `pipeline`, read through `decoder`, in `storage`.
    pub(crate) fn new(
        pipeline: Pipeline<S>,
        decoder: Arc<DecodeCache<K, S>>,
        storage: Storage,
    ) -> Self {
        let lister = Lister::over(
            Cache::new(Arc::clone(pipeline.indexer()), Arc::clone(&decoder)),
            pipeline.state().group_resource.clone(),
        );
        StoredEngine {
            pipeline,
            decoder,
            lister,
            storage,
        }
    }
}

impl<K, S> Engine<K> for StoredEngine<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    fn state(&self) -> &Arc<InformerState> {
        self.pipeline.state()
    }

    fn storage(&self) -> Storage {
        self.storage
    }

    fn run(&self, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let pipeline = self.pipeline.clone();
        Box::pin(async move { pipeline.run(cancel).await })
    }

    fn add_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<K>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<dyn ListenerView>, Error> {
        let handler = ObjectHandler::new(Arc::clone(&self.decoder), handler);
        let listener = self
            .pipeline
            .add_handler(Box::new(handler), name, options)?;
        Ok(listener)
    }

    fn add_metadata_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<MetadataView>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<dyn ListenerView>, Error> {
        let listener =
            self.pipeline
                .add_handler(Box::new(MetadataHandler(handler)), name, options)?;
        Ok(listener)
    }

    fn remove_handler(&self, id: u64) {
        self.pipeline.remove_handler(id);
    }

    fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.pipeline.add_indexers(S::indexers(indexers))
    }

    fn add_metadata_indexers(&self, indexers: MetadataIndexers) -> Result<(), Error> {
        self.pipeline.add_indexers(over_metadata(indexers))
    }

    fn lister(&self) -> Lister<K> {
        self.lister.clone()
    }

    fn cache_bytes(&self) -> usize {
        let mut bytes = 0;
        self.pipeline
            .indexer()
            .for_each_object(|entry| bytes += entry.heap_bytes());
        bytes
    }

    fn stats(&self) -> InformerStats {
        let state = self.state();
        InformerStats {
            reflector: state.reflector.stats(),
            mode: state.reflector.mode(),
            queued: self.pipeline.queued(),
            cached: self.pipeline.indexer().len(),
            handlers: self.pipeline.handlers(),
            decodes: self.decoder.stats(),
            shard: state.shard.as_ref().map(|status| status.stats()),
        }
    }

    fn snapshot_stats(&self) -> SnapshotStats {
        self.pipeline.snapshot_stats()
    }
}
