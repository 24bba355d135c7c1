//! [`ResourceEventHandlerRegistration`]: the handle `add_event_handler`
//! returns.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::Object;
use serde::de::DeserializeOwned;

use crate::informer::SharedIndexInformer;
use crate::listener::{HandlerStats, Listener};

/// A registered handler (client-go's `ResourceEventHandlerRegistration`):
/// whether it has seen the initial state, its counters, and what
/// [`remove_event_handler`](SharedIndexInformer::remove_event_handler)
/// and [`shutdown_event_handler`](SharedIndexInformer::shutdown_event_handler)
/// take.
pub struct ResourceEventHandlerRegistration<K> {
    pub(crate) informer: SharedIndexInformer<K>,
    pub(crate) listener: Arc<Listener<K>>,
}

impl<K> Clone for ResourceEventHandlerRegistration<K> {
    fn clone(&self) -> Self {
        ResourceEventHandlerRegistration {
            informer: self.informer.clone(),
            listener: Arc::clone(&self.listener),
        }
    }
}

impl<K> fmt::Debug for ResourceEventHandlerRegistration<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEventHandlerRegistration")
            .field("informer", &self.informer.name())
            .field("handler", &self.listener.name)
            .finish()
    }
}

impl<K: Object + DeserializeOwned + Send + Sync + 'static> ResourceEventHandlerRegistration<K> {
    /// Whether the handler has been called with every object of the
    /// initial state: the informer has synced, and every initial-list add
    /// queued to this handler (including the replay a handler added while
    /// running gets) has been delivered.
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced() && self.listener.initial_delivered()
    }

    /// The handler's name (from [`HandlerOptions`](crate::HandlerOptions),
    /// else its type name).
    pub fn name(&self) -> &str {
        &self.listener.name
    }

    /// Counters: pending and delivered notifications, coalesced ones,
    /// panics.
    pub fn stats(&self) -> HandlerStats {
        self.listener.stats()
    }

    /// Notifications waiting for the handler.
    pub fn pending(&self) -> usize {
        self.listener.stats().pending
    }

    /// The resync period in effect for this handler (zero: none).
    pub fn resync_period(&self) -> Duration {
        self.listener.resync_periods().1
    }

    /// Whether the handler was removed (or its informer stopped).
    pub fn is_removed(&self) -> bool {
        self.listener.is_closed()
    }

    /// The informer the handler is registered with.
    pub fn informer(&self) -> &SharedIndexInformer<K> {
        &self.informer
    }
}
