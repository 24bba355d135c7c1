//! [`ResourceEventHandlerRegistration`]: the handle `add_event_handler`
//! returns.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use clientgo_apimachinery::ApiObject;

use crate::handler::listener::{HandlerStats, ListenerView};
use crate::informer::engine::Engine;

/// A registered handler (client-go's `ResourceEventHandlerRegistration`):
/// whether it has seen the initial state, its counters, and what
/// [`remove_event_handler`](crate::SharedIndexInformer::remove_event_handler)
/// and [`shutdown_event_handler`](crate::SharedIndexInformer::shutdown_event_handler)
/// take. [`informer`](Self::informer) gives the informer back.
///
/// It does not keep the informer alive: a handler may capture its own
/// registration without making a cycle that outlives every other handle.
/// Once the informer is dropped, the handler counts as removed.
pub struct ResourceEventHandlerRegistration<K> {
    /// The informer's engine, not kept alive by this handle.
    pub(crate) informer: Weak<dyn Engine<K>>,
    pub(crate) listener: Arc<dyn ListenerView>,
}

impl<K> Clone for ResourceEventHandlerRegistration<K> {
    fn clone(&self) -> Self {
        ResourceEventHandlerRegistration {
            informer: Weak::clone(&self.informer),
            listener: Arc::clone(&self.listener),
        }
    }
}

impl<K> ResourceEventHandlerRegistration<K> {
    /// The informer's name, or a placeholder once it was dropped.
    pub(crate) fn informer_name(&self) -> String {
        self.informer.upgrade().map_or_else(
            || "(dropped informer)".to_string(),
            |engine| engine.state().name.clone(),
        )
    }
}

impl<K> fmt::Debug for ResourceEventHandlerRegistration<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEventHandlerRegistration")
            .field("informer", &self.informer_name())
            .field("handler", &self.listener.name())
            .finish()
    }
}

impl<K: ApiObject> ResourceEventHandlerRegistration<K> {
    /// Whether the handler has been called with every object of the
    /// initial state: the informer has synced, and every initial-list add
    /// queued to this handler (including the replay a handler added while
    /// running gets) has been delivered.
    pub fn has_synced(&self) -> bool {
        self.informer
            .upgrade()
            .is_some_and(|engine| engine.state().has_synced())
            && self.listener.initial_delivered()
    }

    /// The handler's name (from [`HandlerOptions`](crate::HandlerOptions),
    /// else its type name).
    pub fn name(&self) -> &str {
        self.listener.name()
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

    /// Whether the handler was removed (or its informer stopped or was
    /// dropped).
    pub fn is_removed(&self) -> bool {
        self.listener.is_closed()
    }
}
