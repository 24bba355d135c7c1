//! The queue of notifications waiting for one handler: unbounded and in
//! order (client-go's growing ring buffer), or coalescing by key.

use std::collections::{HashMap, VecDeque};

use clientgo_apimachinery::Object;
use clientgo_store::{ObjectOrTombstone, meta_namespace_key};

use crate::handler::notification::Notification;

/// How a handler's pending notifications are kept while it is busy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HandlerQueue {
    /// Every notification, in order, however many (client-go's behaviour).
    /// A handler that falls behind makes this queue, and memory, grow.
    #[default]
    Unbounded,
    /// At most one pending delete and one pending add or update per object
    /// key, so the queue never holds more entries than there are objects
    /// (plus deleted ones). Not in client-go. For a key already pending:
    ///
    /// - an add or update merges into the pending add or update: the
    ///   handler gets the latest state (an add stays an add; an update keeps
    ///   the oldest `old`);
    /// - a delete replaces a pending add or update, and a pending delete:
    ///   deletes are never dropped, the latest one is kept;
    /// - an add or update after a pending delete waits behind it, so a
    ///   re-created object is seen deleted, then added.
    ///
    /// Keys are delivered in the order they first became pending.
    Coalescing,
}

/// One key's pending notifications in coalescing mode.
struct Slot<K> {
    deleted: Option<Notification<K>>,
    latest: Option<Notification<K>>,
}

impl<K> Slot<K> {
    fn initial_count(&self) -> usize {
        usize::from(self.deleted.as_ref().is_some_and(Notification::is_initial))
            + usize::from(self.latest.as_ref().is_some_and(Notification::is_initial))
    }

    fn len(&self) -> usize {
        usize::from(self.deleted.is_some()) + usize::from(self.latest.is_some())
    }
}

/// Pending notifications of one handler, with the count of initial-list
/// adds among them.
pub(crate) struct PendingQueue<K> {
    mode: HandlerQueue,
    in_order: VecDeque<Notification<K>>,
    order: VecDeque<String>,
    slots: HashMap<String, Slot<K>>,
    len: usize,
    initial: usize,
    /// How many notifications coalescing merged away.
    coalesced: u64,
    /// Distinguishes notifications whose key cannot be computed.
    unkeyed: u64,
}

impl<K> PendingQueue<K> {
    /// Drops everything pending.
    pub(crate) fn clear(&mut self) {
        self.in_order.clear();
        self.order.clear();
        self.slots.clear();
        self.len = 0;
        self.initial = 0;
    }
}

impl<K: Object> PendingQueue<K> {
    pub(crate) fn new(mode: HandlerQueue) -> Self {
        PendingQueue {
            mode,
            in_order: VecDeque::new(),
            order: VecDeque::new(),
            slots: HashMap::new(),
            len: 0,
            initial: 0,
            coalesced: 0,
            unkeyed: 0,
        }
    }

    /// Notifications waiting.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Initial-list adds waiting.
    pub(crate) fn initial(&self) -> usize {
        self.initial
    }

    /// Notifications merged away so far.
    pub(crate) fn coalesced(&self) -> u64 {
        self.coalesced
    }

    pub(crate) fn push(&mut self, notification: Notification<K>) {
        match self.mode {
            HandlerQueue::Unbounded => {
                self.initial += usize::from(notification.is_initial());
                self.len += 1;
                self.in_order.push_back(notification);
            }
            HandlerQueue::Coalescing => self.push_coalescing(notification),
        }
    }

    fn key_of(&mut self, notification: &Notification<K>) -> String {
        match notification {
            Notification::Delete(ObjectOrTombstone::Tombstone(tombstone)) => tombstone.key.clone(),
            other => match other.object() {
                Some(object) => meta_namespace_key(&**object),
                None => {
                    // Never merged with anything: a key no object can have.
                    self.unkeyed += 1;
                    format!("\0{}", self.unkeyed)
                }
            },
        }
    }

    fn push_coalescing(&mut self, notification: Notification<K>) {
        let key = self.key_of(&notification);
        let slot = match self.slots.get_mut(&key) {
            Some(slot) => slot,
            None => {
                self.order.push_back(key.clone());
                self.slots.entry(key).or_insert(Slot {
                    deleted: None,
                    latest: None,
                })
            }
        };
        let (before_len, before_initial) = (slot.len(), slot.initial_count());
        let incoming = 1;
        match notification {
            Notification::Delete(_) => {
                slot.latest = None;
                slot.deleted = Some(notification);
            }
            change => {
                slot.latest = Some(match slot.latest.take() {
                    None => change,
                    Some(pending) => merge(pending, change),
                });
            }
        }
        let (after_len, after_initial) = (slot.len(), slot.initial_count());
        self.coalesced += (before_len + incoming - after_len) as u64;
        self.len = self.len + after_len - before_len;
        self.initial = self.initial + after_initial - before_initial;
    }

    /// Takes what the handler gets next, in delivery order: everything
    /// pending for an unbounded queue; the first notification only for a
    /// coalescing one, so what stays queued can still be merged.
    pub(crate) fn take(&mut self) -> VecDeque<Notification<K>> {
        match self.mode {
            HandlerQueue::Unbounded => {
                self.len = 0;
                self.initial = 0;
                std::mem::take(&mut self.in_order)
            }
            HandlerQueue::Coalescing => {
                let mut taken = VecDeque::with_capacity(1);
                while taken.is_empty() {
                    let Some(key) = self.order.front() else {
                        break;
                    };
                    let Some(slot) = self.slots.get_mut(key) else {
                        self.order.pop_front();
                        continue;
                    };
                    let next = slot.deleted.take().or_else(|| slot.latest.take());
                    if slot.len() == 0 {
                        self.slots.remove(key);
                        self.order.pop_front();
                    }
                    if let Some(notification) = next {
                        self.len -= 1;
                        self.initial -= usize::from(notification.is_initial());
                        taken.push_back(notification);
                    }
                }
                taken
            }
        }
    }
}

/// A pending add or update followed by another add or update of the same
/// key: one notification carrying the latest state.
fn merge<K>(pending: Notification<K>, later: Notification<K>) -> Notification<K> {
    let Some(latest) = later.object().cloned() else {
        return later;
    };
    match pending {
        Notification::Add {
            is_in_initial_list, ..
        } => Notification::Add {
            object: latest,
            is_in_initial_list,
        },
        Notification::Update { old, .. } => Notification::Update { old, new: latest },
        Notification::Delete(_) => later,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use clientgo_store::DeletedFinalStateUnknown;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn object(name: &str, rv: &str) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                resource_version: Some(rv.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn add(name: &str, rv: &str, initial: bool) -> Notification<ConfigMap> {
        Notification::Add {
            object: object(name, rv),
            is_in_initial_list: initial,
        }
    }

    fn update(name: &str, old: &str, new: &str) -> Notification<ConfigMap> {
        Notification::Update {
            old: object(name, old),
            new: object(name, new),
        }
    }

    fn delete(name: &str, rv: &str) -> Notification<ConfigMap> {
        Notification::Delete(object(name, rv).into())
    }

    fn describe(notification: &Notification<ConfigMap>) -> String {
        let rv = |o: &ConfigMap| o.metadata.resource_version.clone().unwrap_or_default();
        let name = |o: &ConfigMap| o.metadata.name.clone().unwrap_or_default();
        match notification {
            Notification::Add {
                object,
                is_in_initial_list,
            } => format!(
                "add {}@{} initial={is_in_initial_list}",
                name(object),
                rv(object)
            ),
            Notification::Update { old, new } => {
                format!("update {} {}->{}", name(new), rv(old), rv(new))
            }
            Notification::Delete(ObjectOrTombstone::Object(o)) => {
                format!("delete {}@{}", name(o), rv(o))
            }
            Notification::Delete(ObjectOrTombstone::Tombstone(t)) => format!("tombstone {}", t.key),
        }
    }

    fn drain(queue: &mut PendingQueue<ConfigMap>) -> Vec<String> {
        let mut drained = Vec::new();
        loop {
            let taken = queue.take();
            if taken.is_empty() {
                return drained;
            }
            drained.extend(taken.iter().map(describe));
        }
    }

    #[test]
    fn unbounded_keeps_everything_in_order() {
        let mut queue = PendingQueue::new(HandlerQueue::Unbounded);
        queue.push(add("a", "1", true));
        queue.push(update("a", "1", "2"));
        queue.push(delete("a", "3"));
        assert_eq!((queue.len(), queue.initial()), (3, 1));
        assert_eq!(
            drain(&mut queue),
            ["add a@1 initial=true", "update a 1->2", "delete a@3"]
        );
        assert!(queue.is_empty());
        assert_eq!(queue.initial(), 0);
    }

    #[test]
    fn coalescing_keeps_latest_state_and_every_delete() {
        let mut queue = PendingQueue::new(HandlerQueue::Coalescing);
        queue.push(add("a", "1", true));
        queue.push(update("a", "1", "2"));
        queue.push(update("b", "5", "6"));
        queue.push(update("a", "2", "3"));
        queue.push(update("b", "6", "7"));
        assert_eq!((queue.len(), queue.initial(), queue.coalesced()), (2, 1, 3));
        assert_eq!(drain(&mut queue), ["add a@3 initial=true", "update b 5->7"]);

        // A delete replaces a pending change; a re-create waits behind it.
        queue.push(update("c", "1", "2"));
        queue.push(delete("c", "3"));
        queue.push(add("c", "4", false));
        queue.push(update("c", "4", "5"));
        assert_eq!(drain(&mut queue), ["delete c@3", "add c@5 initial=false"]);

        // A second delete replaces the first; the tombstone's key is used.
        queue.push(delete("d", "1"));
        queue.push(add("d", "2", false));
        queue.push(Notification::Delete(
            DeletedFinalStateUnknown {
                key: "d".into(),
                object: Some(object("d", "2")),
            }
            .into(),
        ));
        assert_eq!(queue.len(), 1);
        assert_eq!(drain(&mut queue), ["tombstone d"]);
    }

    #[test]
    fn coalescing_counts_initial_adds_that_a_delete_replaced() {
        let mut queue = PendingQueue::new(HandlerQueue::Coalescing);
        queue.push(add("a", "1", true));
        queue.push(add("b", "1", true));
        assert_eq!(queue.initial(), 2);
        queue.push(delete("a", "2"));
        assert_eq!((queue.len(), queue.initial()), (2, 1));
        queue.clear();
        assert_eq!((queue.len(), queue.initial()), (0, 0));
    }

    #[test]
    fn coalescing_memory_is_bounded_by_keys() {
        let mut queue = PendingQueue::new(HandlerQueue::Coalescing);
        for round in 0..1000 {
            for key in 0..10 {
                queue.push(update(
                    &format!("k{key}"),
                    &round.to_string(),
                    &(round + 1).to_string(),
                ));
            }
        }
        assert_eq!(queue.len(), 10);
        assert_eq!(queue.coalesced(), 9990);
    }
}
