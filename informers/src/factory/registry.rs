//! [`InformerRegistry`]: the informers of a factory, each created once,
//! and their start, sync and shutdown, shared by the typed, dynamic and
//! metadata factories.

use std::collections::BTreeMap;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::factory::generic::GenericInformer;
use crate::informer::wait::{
    InformerSynced, LastingErrors, SyncError, SyncWaitOptions, wait_for_cache_sync,
};

struct Entry<Key> {
    key: Key,
    informer: GenericInformer,
    started: bool,
}

struct State<Key> {
    entries: Vec<Entry<Key>>,
    shut_down: bool,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

/// Informers by key (a type, or a resource), each created once.
///
/// **Locking.** One mutex guards the registry; it is never held across an
/// `.await` or while an informer is created by a caller's closure that
/// could call back into the factory.
pub(crate) struct InformerRegistry<Key> {
    state: Mutex<State<Key>>,
}

impl<Key> Drop for InformerRegistry<Key> {
    /// Dropping the factory stops its informers, as `shutdown` does but
    /// without waiting: each task cancels its informer, which stops its
    /// reflector and handlers and returns.
    fn drop(&mut self) {
        self.state.get_mut().stop.cancel();
    }
}

impl<Key: PartialEq> InformerRegistry<Key> {
    pub(crate) fn new() -> Self {
        InformerRegistry {
            state: Mutex::new(State {
                entries: Vec::new(),
                shut_down: false,
                stop: CancellationToken::new(),
                tasks: Vec::new(),
            }),
        }
    }

    /// The informer registered under `key`.
    pub(crate) fn find(&self, key: &Key) -> Option<GenericInformer> {
        let state = self.state.lock();
        state
            .entries
            .iter()
            .find(|entry| &entry.key == key)
            .map(|entry| entry.informer.clone())
    }

    /// The informer registered under `key`, created with `make` if there
    /// is none. If two callers race, the first registration wins.
    pub(crate) fn get_or_insert(
        &self,
        key: Key,
        make: impl FnOnce() -> GenericInformer,
    ) -> GenericInformer {
        if let Some(existing) = self.find(&key) {
            return existing;
        }
        let created = make();
        let mut state = self.state.lock();
        if let Some(existing) = state.entries.iter().find(|entry| entry.key == key) {
            return existing.informer.clone();
        }
        state.entries.push(Entry {
            key,
            informer: created.clone(),
            started: false,
        });
        created
    }

    /// Starts, each on its own task, every informer not started yet;
    /// returns at once. They run until `cancel` fires or the factory shuts
    /// down. Does nothing after shutdown.
    pub(crate) fn start(&self, cancel: &CancellationToken) {
        let mut state = self.state.lock();
        if state.shut_down {
            tracing::warn!("the factory has been shut down; start does nothing");
            return;
        }
        let mut to_start = Vec::new();
        for entry in state.entries.iter_mut().filter(|entry| !entry.started) {
            entry.started = true;
            to_start.push(entry.informer.clone());
        }
        let stop = state.stop.clone();
        for informer in to_start {
            let token = cancel.child_token();
            let stop = stop.clone();
            let run = informer.run(token.clone());
            state.tasks.push(tokio::spawn(async move {
                let mut run = std::pin::pin!(run);
                tokio::select! {
                    () = &mut run => return,
                    () = stop.cancelled() => token.cancel(),
                }
                // Shutdown: let the informer stop cleanly.
                run.await;
            }));
        }
    }

    /// Waits up to `timeout` for every started informer to sync: every
    /// started informer's name (each synced), or the error naming those
    /// that did not sync and why.
    pub(crate) async fn wait_for_cache_sync(
        &self,
        timeout: Duration,
        lasting: LastingErrors,
    ) -> Result<BTreeMap<String, bool>, SyncError> {
        let started: Vec<GenericInformer> = {
            let state = self.state.lock();
            state
                .entries
                .iter()
                .filter(|entry| entry.started)
                .map(|entry| entry.informer.clone())
                .collect()
        };
        let synced_refs: Vec<&dyn InformerSynced> =
            started.iter().map(GenericInformer::as_synced).collect();
        let options = SyncWaitOptions::default()
            .timeout(timeout)
            .lasting_errors(lasting);
        wait_for_cache_sync(&synced_refs, options).await?;
        Ok(started
            .iter()
            .map(|informer| (informer.name(), informer.has_synced()))
            .collect())
    }

    /// Stops every started informer and waits until each has returned;
    /// later starts do nothing.
    pub(crate) async fn shutdown(&self) {
        let tasks = {
            let mut state = self.state.lock();
            state.shut_down = true;
            state.stop.cancel();
            std::mem::take(&mut state.tasks)
        };
        for task in tasks {
            if let Err(error) = task.await {
                tracing::error!(%error, "an informer's task failed");
            }
        }
    }
}
