//! [`FilteringResourceEventHandler`]: passes on only the objects a filter
//! accepts, turning updates that cross the filter into adds and deletes.

use std::sync::Arc;

use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};

/// Wraps a handler so it sees only objects `filter` accepts (client-go's
/// `FilteringResourceEventHandler`):
///
/// | notification | filter result | the wrapped handler gets |
/// |---|---|---|
/// | add | accepted | the add |
/// | update | old and new accepted | the update |
/// | update | only new accepted | an add of new (not in the initial list) |
/// | update | only old accepted | a delete of old |
/// | update | neither | nothing |
/// | delete | accepted | the delete |
/// | delete of a tombstone without an object | (cannot be filtered) | the delete |
///
/// A delete is judged on the last known state of the object, so an
/// object that passed the filter is always seen deleted: filters never
/// swallow deletions.
pub struct FilteringResourceEventHandler<K, H> {
    filter: Arc<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H> std::fmt::Debug for FilteringResourceEventHandler<K, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteringResourceEventHandler")
            .finish_non_exhaustive()
    }
}

impl<K, H: ResourceEventHandler<K>> FilteringResourceEventHandler<K, H> {
    /// `handler`, seeing only what `filter` accepts.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, handler: H) -> Self {
        FilteringResourceEventHandler {
            filter: Arc::new(filter),
            handler,
        }
    }

    /// The wrapped handler.
    pub fn inner(&self) -> &H {
        &self.handler
    }
}

impl<K, H: ResourceEventHandler<K>> ResourceEventHandler<K>
    for FilteringResourceEventHandler<K, H>
{
    fn on_add(&mut self, object: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(object) {
            self.handler.on_add(object, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self
                .handler
                .on_delete(&ObjectOrTombstone::Object(Arc::clone(old))),
            (false, false) => {}
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        let accepted = match object.object() {
            Some(last_known) => (self.filter)(last_known),
            None => true,
        };
        if accepted {
            self.handler.on_delete(object);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_store::DeletedFinalStateUnknown;

    #[derive(Default)]
    struct Record(Vec<String>);

    impl ResourceEventHandler<i32> for Record {
        fn on_add(&mut self, object: &Arc<i32>, initial: bool) {
            self.0.push(format!("add {object} {initial}"));
        }
        fn on_update(&mut self, old: &Arc<i32>, new: &Arc<i32>) {
            self.0.push(format!("update {old}->{new}"));
        }
        fn on_delete(&mut self, object: &ObjectOrTombstone<i32>) {
            match object.object() {
                Some(o) => self.0.push(format!("delete {o}")),
                None => self.0.push("delete ?".into()),
            }
        }
    }

    #[test]
    fn updates_crossing_the_filter_become_adds_and_deletes() {
        let mut handler =
            FilteringResourceEventHandler::new(|n: &i32| n % 2 == 0, Record::default());
        handler.on_add(&Arc::new(1), true);
        handler.on_add(&Arc::new(2), true);
        handler.on_update(&Arc::new(2), &Arc::new(4));
        handler.on_update(&Arc::new(3), &Arc::new(6));
        handler.on_update(&Arc::new(6), &Arc::new(7));
        handler.on_update(&Arc::new(7), &Arc::new(9));
        handler.on_delete(&ObjectOrTombstone::Object(Arc::new(9)));
        handler.on_delete(&ObjectOrTombstone::Object(Arc::new(8)));
        handler.on_delete(
            &DeletedFinalStateUnknown {
                key: "k".into(),
                object: Some(Arc::new(10)),
            }
            .into(),
        );
        handler.on_delete(
            &DeletedFinalStateUnknown::<i32> {
                key: "k".into(),
                object: None,
            }
            .into(),
        );
        assert_eq!(
            handler.inner().0,
            [
                "add 2 true",
                "update 2->4",
                "add 6 false",
                "delete 6",
                "delete 8",
                "delete 10",
                "delete ?"
            ]
        );
    }
}
