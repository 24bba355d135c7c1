//! A controller's watches: each registers a metadata handler with the
//! shared informer of its type, mapping events to requests in the
//! controller's queue.

use std::sync::Arc;

use clientgo_apimachinery::ApiResource;
use clientgo_informers::{HandlerOptions, InformerSynced, SharedInformerFactory, TypedResource};

use crate::error::Error;
use crate::handler::{EnqueueMapping, Enqueuer};
use crate::predicate::Predicate;

/// What a watch is given when its controller is registered.
pub(crate) struct WatchContext<'a> {
    pub(crate) factory: &'a SharedInformerFactory,
    pub(crate) controller: &'a str,
    /// The controller's event filters, asked before each watch's own.
    pub(crate) predicates: Arc<[Arc<dyn Predicate>]>,
    /// The one namespace requests may be in, if any.
    pub(crate) namespace: Option<Arc<str>>,
    pub(crate) queue: clientgo_workqueue::RateLimitingQueue<String>,
}

/// Registers one watch's handler with the factory's informer of its type
/// and returns the registration, which syncs once the handler has seen
/// the informer's initial list.
pub(crate) type Watch =
    Box<dyn FnOnce(&WatchContext<'_>) -> Result<Arc<dyn InformerSynced>, Error> + Send>;

/// The watch of `W`'s events through `mapping`, passing the controller's
/// filters and then `own`.
pub(crate) fn watch_of<W>(mapping: EnqueueMapping, own: Vec<Arc<dyn Predicate>>) -> Watch
where
    W: TypedResource + Send + Sync + 'static,
{
    Box::new(move |context| {
        let informer = context.factory.informer_for::<W>();
        let predicates = if own.is_empty() {
            Arc::clone(&context.predicates)
        } else {
            context.predicates.iter().chain(&own).cloned().collect()
        };
        let handler = Enqueuer {
            mapping,
            predicates,
            namespace: context.namespace.clone(),
            queue: context.queue.clone(),
        };
        let options =
            HandlerOptions::default().name(format!("{} {}", context.controller, informer.name()));
        informer
            .add_metadata_event_handler_with_options(handler, options)
            .map(|registration| Arc::new(registration) as Arc<dyn InformerSynced>)
            .map_err(|source| Error::Watch {
                controller: context.controller.to_string(),
                resource: ApiResource::of::<W>().plural().to_string(),
                source: Box::new(source),
            })
    })
}
