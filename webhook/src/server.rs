//! The HTTPS server: options, the certificate watcher, registrations,
//! routing and metrics.

pub(crate) mod certificate_watcher;
pub(crate) mod metrics;
pub(crate) mod options;
pub(crate) mod registration;
pub(crate) mod webhook_server;
