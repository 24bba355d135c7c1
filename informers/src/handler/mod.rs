//! What handlers are told and how it reaches them: notifications, the
//! handler adapters and their options, each handler's pending queue and
//! listener, and the processor that fans out to them (the handler half of
//! client-go's `shared_informer.go`), and the sync signal that listeners
//! and the informer raise for those waiting on them.

pub(crate) mod filtering;
pub(crate) mod funcs;
pub(crate) mod listener;
pub(crate) mod notification;
pub(crate) mod object_handler;
pub(crate) mod options;
pub(crate) mod pending_queue;
pub(crate) mod processor;
pub(crate) mod sync_signal;
