//! Informer factories: the typed shared factory, the dynamic and metadata
//! factories, the registry of informers they share, generic informers, and
//! the factories' options (client-go's `informers` and `dynamicinformer`).

pub(crate) mod dynamic;
pub(crate) mod generic;
pub(crate) mod options;
pub(crate) mod registry;
pub(crate) mod typed;
