//! Warm restarts: the options, the snapshot file format, what an informer
//! resumes from, and the source that saves and loads an informer's cache.

pub(crate) mod format;
pub(crate) mod options;
pub(crate) mod resume;
pub(crate) mod source;
