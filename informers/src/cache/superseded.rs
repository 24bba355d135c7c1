//! [`Superseded`]: how the cache's owner tells what keeps decodes of its
//! entries (the lister's decode cache) that an entry is no longer current.

/// Told of each cached entry that stopped being current: replaced by an
/// update or removed by a delete (a relist's too). Called on the
/// informer's task, under its delta lock: must be quick and must not
/// block.
pub(crate) trait Superseded<S>: Send + Sync {
    /// `entry` is no longer the cache's current version of its object.
    fn superseded(&self, entry: &S);
}
