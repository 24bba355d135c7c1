//! Finalizers: cleanup that must run before an object goes.
//!
//! [`add`], [`remove`] and [`contains`] edit an object's metadata in
//! memory, as controller-runtime's helpers do; the caller writes it back.
//! [`finalizer`] runs the whole flow against the API server, as
//! kube-runtime's helper does: a reconcile of a live object first adds the
//! finalizer (and does nothing else, asking to run again at once: the
//! write's own event may be filtered out, by `generation_changed` say),
//! then runs [`Event::Apply`]; a reconcile of an object
//! being deleted runs [`Event::Cleanup`] and removes the finalizer once it
//! succeeded, after which the server deletes the object. Each write
//! carries the object's resourceVersion, so a write over a change the
//! reconcile has not seen fails with a conflict instead of undoing it
//! (the reconcile is then retried on the latest state).

use std::future::Future;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_rest::{Patch, PatchOptions, ResourceClient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;

use crate::reconcile::Action;

/// Whether `meta` lists the finalizer `name`.
pub fn contains(meta: &ObjectMeta, name: &str) -> bool {
    meta.finalizers.iter().flatten().any(|f| f == name)
}

/// Adds the finalizer `name` unless listed; whether the list changed.
pub fn add(meta: &mut ObjectMeta, name: &str) -> bool {
    if contains(meta, name) {
        return false;
    }
    meta.finalizers
        .get_or_insert_with(Vec::new)
        .push(name.to_string());
    true
}

/// Removes every copy of the finalizer `name`; whether the list changed.
pub fn remove(meta: &mut ObjectMeta, name: &str) -> bool {
    let Some(finalizers) = meta.finalizers.as_mut() else {
        return false;
    };
    let before = finalizers.len();
    finalizers.retain(|f| f != name);
    finalizers.len() != before
}

/// What [`finalizer`] asks of the caller's function.
#[derive(Debug)]
pub enum Event<K> {
    /// The object is live and has the finalizer: reconcile it.
    Apply(Arc<K>),
    /// The object is being deleted and still has the finalizer: clean up
    /// (idempotently: a failed cleanup is tried again, and a cleanup may
    /// run for an object whose `Apply` never ran).
    Cleanup(Arc<K>),
}

/// What [`finalizer`] failed at.
#[derive(Debug, thiserror::Error)]
pub enum FinalizerError<E> {
    /// The caller's `Apply` failed.
    #[error("apply failed: {0}")]
    ApplyFailed(#[source] E),
    /// The caller's `Cleanup` failed; the finalizer stays.
    #[error("cleanup failed: {0}")]
    CleanupFailed(#[source] E),
    /// Writing the finalizer in failed (a conflict: the object changed).
    #[error("adding finalizer {name:?} to {object}: {source}")]
    Add {
        /// The finalizer.
        name: String,
        /// The object's key.
        object: String,
        /// The server's answer.
        #[source]
        source: clientgo_rest::Error,
    },
    /// Writing the finalizer out failed (a conflict: the object changed).
    /// Never a 404: an object already gone has no finalizer left to
    /// remove, and the cleanup counts as done.
    #[error("removing finalizer {name:?} from {object}: {source}")]
    Remove {
        /// The finalizer.
        name: String,
        /// The object's key.
        object: String,
        /// The server's answer.
        #[source]
        source: clientgo_rest::Error,
    },
    /// The object has no name.
    #[error("the object has no name")]
    Unnamed,
}

/// The step [`finalizer`] takes for an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Write the finalizer in; nothing else this time.
    AddFinalizer,
    /// Run `Apply`.
    Apply,
    /// Run `Cleanup`, then write the finalizer out.
    Cleanup,
    /// Nothing: being deleted, and our cleanup is done.
    Nothing,
}

/// The step for an object that does or does not list the finalizer and
/// is or is not being deleted.
fn step(listed: bool, deleting: bool) -> Step {
    match (listed, deleting) {
        (false, false) => Step::AddFinalizer,
        (true, false) => Step::Apply,
        (true, true) => Step::Cleanup,
        (false, true) => Step::Nothing,
    }
}

/// Writes `finalizers` as the object's whole list, over the
/// resourceVersion `meta` was read at (a merge patch carrying it, so a
/// newer object is a conflict, not overwritten).
async fn write_finalizers<K>(
    client: &ResourceClient<K>,
    name: &str,
    meta: &ObjectMeta,
    finalizers: Vec<String>,
) -> Result<(), clientgo_rest::Error>
where
    K: DeserializeOwned,
{
    let patch = Patch::Merge(serde_json::json!({
        "metadata": {
            "resourceVersion": meta.resource_version,
            "finalizers": finalizers,
        }
    }));
    client
        .patch(name, &PatchOptions::default(), &patch)
        .await
        .map(drop)
}

/// Runs `object`'s reconcile under the finalizer `name` (see the module
/// documentation): `client` is the object's resource client in its
/// namespace, `handle` the reconcile proper. Returns `handle`'s action;
/// after writing the finalizer in, a requeue at once
/// (`Action::RequeueAfter(0)`); [`Action::Done`] when there is nothing to
/// do.
pub async fn finalizer<K, F, Fut, E>(
    client: &ResourceClient<K>,
    name: &str,
    object: Arc<K>,
    handle: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Object + DeserializeOwned,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
{
    let meta = object.meta().clone();
    let object_name = meta.name.clone().ok_or(FinalizerError::Unnamed)?;
    let key = match &meta.namespace {
        Some(namespace) => format!("{namespace}/{object_name}"),
        None => object_name.clone(),
    };
    match step(contains(&meta, name), meta.deletion_timestamp.is_some()) {
        Step::AddFinalizer => {
            let mut finalizers = meta.finalizers.clone().unwrap_or_default();
            finalizers.push(name.to_string());
            write_finalizers(client, &object_name, &meta, finalizers)
                .await
                .map_err(|source| FinalizerError::Add {
                    name: name.to_string(),
                    object: key,
                    source,
                })?;
            Ok(Action::RequeueAfter(std::time::Duration::ZERO))
        }
        Step::Apply => handle(Event::Apply(object))
            .await
            .map_err(FinalizerError::ApplyFailed),
        Step::Cleanup => {
            let action = handle(Event::Cleanup(object))
                .await
                .map_err(FinalizerError::CleanupFailed)?;
            let finalizers: Vec<String> = meta
                .finalizers
                .iter()
                .flatten()
                .filter(|f| *f != name)
                .cloned()
                .collect();
            match write_finalizers(client, &object_name, &meta, finalizers).await {
                // The object is gone: an earlier reconcile of it removed
                // the finalizer (this one worked on a stale copy), or
                // someone else did. Either way the cleanup is complete.
                Err(source) if source.is_not_found() => Ok(action),
                Err(source) => Err(FinalizerError::Remove {
                    name: name.to_string(),
                    object: key,
                    source,
                }),
                Ok(()) => Ok(action),
            }
        }
        Step::Nothing => Ok(Action::Done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_follows_the_finalizer_and_the_deletion() {
        assert_eq!(step(false, false), Step::AddFinalizer);
        assert_eq!(step(true, false), Step::Apply);
        assert_eq!(step(true, true), Step::Cleanup);
        assert_eq!(step(false, true), Step::Nothing);
    }

    #[test]
    fn in_memory_edits_say_whether_they_changed_the_list() {
        let mut meta = ObjectMeta::default();
        assert!(!contains(&meta, "a/b"));
        assert!(!remove(&mut meta, "a/b"));
        assert!(add(&mut meta, "a/b"));
        assert!(!add(&mut meta, "a/b"));
        meta.finalizers
            .get_or_insert_with(Vec::new)
            .push("a/b".into());
        meta.finalizers
            .get_or_insert_with(Vec::new)
            .push("c/d".into());
        assert!(remove(&mut meta, "a/b"));
        assert_eq!(meta.finalizers, Some(vec!["c/d".to_string()]));
    }
}
