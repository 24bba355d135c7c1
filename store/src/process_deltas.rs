//! Applying popped deltas to a cache and telling a handler what changed
//! (client-go's `processDeltas`, `processReplacedAllInfo` and
//! `processDeltasInBatch`). The cache is always updated *before* the handler
//! is called, so a handler reading the cache sees the change it is told
//! about.

use std::collections::HashSet;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::delta::{Delta, DeltaType};
use crate::error::StoreError;
use crate::indexer::{Indexer, Transaction};
use crate::key::{DeletedFinalStateUnknown, KeyFunc, ObjectOrTombstone};
use crate::resource_event_handler::ResourceEventHandler;
use crate::store::Store;

/// Why deltas could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    /// The cache refused a change.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A batch held a delta that must be processed alone.
    #[error("a {0} delta cannot be processed in a batch")]
    NotBatchable(DeltaType),
    /// Some changes of a batch failed; the handler was told only about the
    /// others.
    #[error("not all changes of the batch were applied: {0}")]
    Transaction(#[from] crate::indexer::TransactionError),
}

/// Applies `deltas` (oldest first) to `store`, then tells `handler`:
///
/// - `Added`, `Updated`, `Replaced`, `Sync`: an update (old, new) if the key
///   was cached, otherwise an add;
/// - `Deleted`: removed, then a delete (object or tombstone);
/// - `ReplacedAll`: the cache is replaced in one step with the list at its
///   resourceVersion; then a tombstone delete for every cached key missing
///   from the list (sorted by key), then an update or add per listed object
///   in list order;
/// - `SyncAll`: an update (o, o) for every cached object;
/// - `Bookmark`: the cache's resourceVersion is set.
pub fn process_deltas<K, S, H>(
    handler: &mut H,
    store: &S,
    key_func: &KeyFunc<K>,
    deltas: Vec<Delta<K>>,
    is_in_initial_list: bool,
) -> Result<(), ProcessError>
where
    K: Object + Send + Sync + 'static,
    S: Store<K> + ?Sized,
    H: ResourceEventHandler<K> + ?Sized,
{
    for delta in deltas {
        match delta {
            Delta::Added(object)
            | Delta::Updated(object)
            | Delta::Replaced(object)
            | Delta::Sync(object) => match store.get(&object)? {
                Some(old) => {
                    store.update(Arc::clone(&object))?;
                    handler.on_update(&old, &object);
                }
                None => {
                    store.add(Arc::clone(&object))?;
                    handler.on_add(&object, is_in_initial_list);
                }
            },
            Delta::Deleted(target) => {
                store.delete(target.clone())?;
                handler.on_delete(&target);
            }
            Delta::ReplacedAll {
                resource_version,
                objects,
            } => {
                let cached = store.list_keys();
                let mut notifications = Vec::with_capacity(objects.len());
                let mut vanished: Vec<String> = Vec::new();
                if cached.is_empty() {
                    // The first list into an empty cache: every object is
                    // an add, and nothing vanished; no key is needed.
                    notifications.extend(objects.iter().map(|object| (None, Arc::clone(object))));
                } else {
                    let mut listed: HashSet<String> = HashSet::with_capacity(objects.len());
                    for object in &objects {
                        let key = key_func(object)?;
                        let old = store.get_by_key(&key);
                        listed.insert(key);
                        notifications.push((old, Arc::clone(object)));
                    }
                    vanished = cached
                        .into_iter()
                        .filter(|key| !listed.contains(key))
                        .collect();
                }
                vanished.sort_unstable();
                let tombstones: Vec<ObjectOrTombstone<K>> = vanished
                    .into_iter()
                    .map(|key| {
                        let object = store.get_by_key(&key);
                        DeletedFinalStateUnknown { key, object }.into()
                    })
                    .collect();
                store.replace(objects, &resource_version)?;
                for tombstone in &tombstones {
                    handler.on_delete(tombstone);
                }
                for (old, new) in &notifications {
                    match old {
                        Some(old) => handler.on_update(old, new),
                        None => handler.on_add(new, is_in_initial_list),
                    }
                }
            }
            Delta::SyncAll => {
                for object in store.list() {
                    handler.on_update(&object, &object);
                }
            }
            Delta::Bookmark { resource_version } => store.bookmark(&resource_version)?,
        }
    }
    Ok(())
}

/// Applies a batch of per-object deltas with distinct keys in one
/// transaction on `indexer`, then tells `handler` about each applied change
/// in order. Changes that failed are reported in the error and not told to
/// the handler. Atomic deltas are refused.
pub fn process_deltas_in_batch<K, H>(
    handler: &mut H,
    indexer: &Indexer<K>,
    deltas: Vec<Delta<K>>,
    is_in_initial_list: bool,
) -> Result<(), ProcessError>
where
    K: Object + Send + Sync + 'static,
    H: ResourceEventHandler<K> + ?Sized,
{
    enum Notice<K> {
        Add(Arc<K>),
        Update(Arc<K>, Arc<K>),
        Delete(ObjectOrTombstone<K>),
    }
    let mut transactions = Vec::with_capacity(deltas.len());
    let mut notices = Vec::with_capacity(deltas.len());
    for delta in deltas {
        match delta {
            Delta::Added(object)
            | Delta::Updated(object)
            | Delta::Replaced(object)
            | Delta::Sync(object) => match indexer.get(&object)? {
                Some(old) => {
                    transactions.push(Transaction::Update(Arc::clone(&object)));
                    notices.push(Notice::Update(old, object));
                }
                None => {
                    transactions.push(Transaction::Add(Arc::clone(&object)));
                    notices.push(Notice::Add(object));
                }
            },
            Delta::Deleted(target) => {
                transactions.push(Transaction::Delete(target.clone()));
                notices.push(Notice::Delete(target));
            }
            other => return Err(ProcessError::NotBatchable(other.delta_type())),
        }
    }
    let outcome = indexer.transaction(transactions);
    let applied: Box<dyn Fn(usize) -> bool> = match &outcome {
        Ok(()) => Box::new(|_| true),
        Err(error) => {
            let successful: HashSet<usize> = error.successful_indices.iter().copied().collect();
            Box::new(move |position| successful.contains(&position))
        }
    };
    for (position, notice) in notices.into_iter().enumerate() {
        if !applied(position) {
            continue;
        }
        match notice {
            Notice::Add(object) => handler.on_add(&object, is_in_initial_list),
            Notice::Update(old, new) => handler.on_update(&old, &new),
            Notice::Delete(target) => handler.on_delete(&target),
        }
    }
    outcome.map_err(ProcessError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::IndexerOptions;
    use crate::key::meta_namespace_key_func;
    use crate::store::ReflectorStore;
    use k8s_openapi::api::core::v1::ConfigMap;

    use crate::test_support::config_map as object;

    fn name(object: &ConfigMap) -> String {
        object.metadata.name.clone().unwrap_or_default()
    }

    /// Records notifications and what the store held when each arrived.
    struct Recorder<'a> {
        store: &'a Indexer<ConfigMap>,
        events: Vec<String>,
    }

    impl ResourceEventHandler<ConfigMap> for Recorder<'_> {
        fn on_add(&mut self, object: &Arc<ConfigMap>, initial: bool) {
            let cached = Store::get_by_key(self.store, &name(object)).is_some();
            self.events.push(format!(
                "add {} initial={initial} cached={cached}",
                name(object)
            ));
        }
        fn on_update(&mut self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
            self.events.push(format!(
                "update {} {}->{}",
                name(new),
                old.metadata.resource_version.as_deref().unwrap_or(""),
                new.metadata.resource_version.as_deref().unwrap_or("")
            ));
        }
        fn on_delete(&mut self, object: &ObjectOrTombstone<ConfigMap>) {
            let cached = match object {
                ObjectOrTombstone::Tombstone(t) => {
                    self.events.push(format!(
                        "tombstone {} cached={}",
                        t.key,
                        Store::get_by_key(self.store, &t.key).is_some()
                    ));
                    return;
                }
                ObjectOrTombstone::Object(o) => Store::get_by_key(self.store, &name(o)).is_some(),
            };
            self.events.push(format!(
                "delete {} cached={cached}",
                object.object().map(|o| name(o)).unwrap_or_default()
            ));
        }
    }

    fn setup() -> Indexer<ConfigMap> {
        Indexer::new(IndexerOptions::default())
    }

    #[test]
    fn store_is_updated_before_the_handler_runs() {
        let store = setup();
        let mut recorder = Recorder {
            store: &store,
            events: vec![],
        };
        let key_func = meta_namespace_key_func();
        process_deltas(
            &mut recorder,
            &store,
            &key_func,
            vec![
                Delta::Added(object("a", "1")),
                Delta::Updated(object("a", "2")),
                Delta::Sync(object("b", "3")),
                Delta::Deleted(object("a", "4").into()),
            ],
            true,
        )
        .unwrap();
        assert_eq!(
            recorder.events,
            [
                "add a initial=true cached=true",
                "update a 1->2",
                "add b initial=true cached=true",
                "delete a cached=false",
            ]
        );
    }

    #[test]
    fn replaced_all_swaps_the_store_then_notifies_deletes_then_list_order() {
        let store = setup();
        store.add(object("gone", "1")).unwrap();
        store.add(object("kept", "1")).unwrap();
        let mut recorder = Recorder {
            store: &store,
            events: vec![],
        };
        process_deltas(
            &mut recorder,
            &store,
            &meta_namespace_key_func(),
            vec![Delta::ReplacedAll {
                resource_version: "9".into(),
                objects: vec![object("new", "9"), object("kept", "2")],
            }],
            false,
        )
        .unwrap();
        assert_eq!(
            recorder.events,
            [
                "tombstone gone cached=false",
                "add new initial=false cached=true",
                "update kept 1->2",
            ]
        );
        assert_eq!(store.last_store_sync_resource_version(), "9");
    }

    #[test]
    fn sync_all_and_bookmark() {
        let store = setup();
        store.add(object("a", "1")).unwrap();
        let mut recorder = Recorder {
            store: &store,
            events: vec![],
        };
        process_deltas(
            &mut recorder,
            &store,
            &meta_namespace_key_func(),
            vec![
                Delta::SyncAll,
                Delta::Bookmark {
                    resource_version: "12".into(),
                },
            ],
            false,
        )
        .unwrap();
        assert_eq!(recorder.events, ["update a 1->1"]);
        assert_eq!(store.last_store_sync_resource_version(), "12");
    }

    #[test]
    fn batch_applies_in_one_transaction_and_refuses_atomic_deltas() {
        let store = setup();
        store.add(object("a", "1")).unwrap();
        let mut recorder = Recorder {
            store: &store,
            events: vec![],
        };
        process_deltas_in_batch(
            &mut recorder,
            &store,
            vec![
                Delta::Updated(object("a", "2")),
                Delta::Added(object("b", "2")),
                Delta::Deleted(
                    DeletedFinalStateUnknown {
                        key: "c".into(),
                        object: None,
                    }
                    .into(),
                ),
            ],
            false,
        )
        .unwrap();
        assert_eq!(
            recorder.events,
            [
                "update a 1->2",
                "add b initial=false cached=true",
                "tombstone c cached=false"
            ]
        );
        let err = process_deltas_in_batch(&mut recorder, &store, vec![Delta::SyncAll], false)
            .unwrap_err();
        assert_eq!(err, ProcessError::NotBatchable(DeltaType::SyncAll));
    }

    #[test]
    fn batch_notifies_only_applied_changes() {
        let key_func: KeyFunc<ConfigMap> =
            Arc::new(|o: &ConfigMap| match o.metadata.name.as_deref() {
                Some("bad") => Err(StoreError::Key {
                    object: "bad".into(),
                    reason: "no".into(),
                }),
                _ => Ok(crate::key::meta_namespace_key(o)),
            });
        let store = Indexer::new(IndexerOptions::default().key_func(key_func));
        let mut recorder = Recorder {
            store: &store,
            events: vec![],
        };
        let err = process_deltas_in_batch(
            &mut recorder,
            &store,
            vec![
                Delta::Deleted(
                    DeletedFinalStateUnknown {
                        key: "x".into(),
                        object: None,
                    }
                    .into(),
                ),
                Delta::Added(object("ok", "1")),
            ],
            false,
        );
        assert!(err.is_ok());
        let result = process_deltas_in_batch(
            &mut recorder,
            &store,
            vec![Delta::Deleted(object("bad", "1").into())],
            false,
        );
        assert!(matches!(result, Err(ProcessError::Transaction(_))));
        assert_eq!(recorder.events.len(), 2, "{:?}", recorder.events);
    }
}
