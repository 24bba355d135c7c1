//! [`ErasedReflector`]: a reflector with its ListerWatcher type hidden, so
//! an informer is generic over the object type only.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_listwatch::ListerWatcher;
use clientgo_reflector::{Error as ReflectorError, Reflector, ReflectorMode, ReflectorStats};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// The parts of a running reflector an informer uses.
pub(crate) trait ErasedReflector: Send + Sync {
    /// Runs the reflector until `cancel` fires.
    fn run(self: Arc<Self>, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>>;
    fn last_sync_resource_version(&self) -> String;
    fn last_error(&self) -> Option<Arc<ReflectorError>>;
    fn stats(&self) -> ReflectorStats;
    fn mode(&self) -> ReflectorMode;
}

impl<K, L> ErasedReflector for Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    fn run(self: Arc<Self>, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async move { Reflector::run(&self, cancel).await })
    }

    fn last_sync_resource_version(&self) -> String {
        Reflector::last_sync_resource_version(self)
    }

    fn last_error(&self) -> Option<Arc<ReflectorError>> {
        Reflector::last_error(self)
    }

    fn stats(&self) -> ReflectorStats {
        Reflector::stats(self)
    }

    fn mode(&self) -> ReflectorMode {
        Reflector::mode(self)
    }
}
