//! [`Defaulter`]: a mutating webhook over a typed object. The user
//! changes `K`; the library makes the JSON patch kube-apiserver applies.

use std::future::Future;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::admission::denial::Denial;
use crate::admission::handler::{AdmissionHandler, BoxFuture, Warnings};
use crate::admission::review::{AdmissionRequest, AdmissionResponse, Operation};
use crate::admission::validator::decode;

/// Sets defaults on (or otherwise changes) objects of `K` being created
/// or updated, as controller-runtime's `admission.Defaulter[T]`; it may
/// also refuse. Deletes and connects are allowed untouched.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Changes `object` as it should be stored.
    fn default(
        &self,
        object: &mut K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;
}

/// A [`Defaulter`] as an [`AdmissionHandler`]. The patch is the
/// difference between the object as sent and the object as changed,
/// without the removals a plain decode and encode of `K` would also make
/// (fields `K` does not know, values serde leaves out): an older type
/// never erases what a newer one wrote. No change, no patch.
pub struct Mutating<K, D> {
    defaulter: D,
    kind: PhantomData<fn() -> K>,
}

impl<K, D> Mutating<K, D> {
    /// Wraps `defaulter`.
    pub fn new(defaulter: D) -> Self {
        Mutating {
            defaulter,
            kind: PhantomData,
        }
    }
}

/// The defaulter's own edits: the operations from the round trip to
/// `changed` (nothing the round trip did itself: no lost field, no `1`
/// become `1.0`), when they apply to `sent` as it is (their array
/// indexes are the round trip's); else [`patch_between`].
pub(crate) fn defaulter_patch(
    sent: &serde_json::Value,
    round_trip: &serde_json::Value,
    changed: &serde_json::Value,
) -> json_patch::Patch {
    let own = json_patch::diff(round_trip, changed);
    let mut probe = sent.clone();
    if json_patch::patch(&mut probe, &own).is_ok() {
        own
    } else {
        patch_between(sent, round_trip, changed)
    }
}

/// The operations from `sent` to `changed`, less removals that the
/// round trip `sent` → `K` → JSON (`round_trip`) makes by itself.
pub(crate) fn patch_between(
    sent: &serde_json::Value,
    round_trip: &serde_json::Value,
    changed: &serde_json::Value,
) -> json_patch::Patch {
    let incidental = json_patch::diff(sent, round_trip);
    let removed_by_round_trip: Vec<String> = incidental
        .0
        .iter()
        .filter_map(|operation| match operation {
            json_patch::PatchOperation::Remove(remove) => Some(remove.path.to_string()),
            _ => None,
        })
        .collect();
    let mut patch = json_patch::diff(sent, changed);
    patch.0.retain(|operation| match operation {
        json_patch::PatchOperation::Remove(remove) => {
            !removed_by_round_trip.contains(&remove.path.to_string())
        }
        _ => true,
    });
    patch
}

impl<K, D> AdmissionHandler for Mutating<K, D>
where
    K: DeserializeOwned + Serialize + Send + Sync + 'static,
    D: Defaulter<K>,
{
    fn handle<'a>(&'a self, request: &'a AdmissionRequest) -> BoxFuture<'a, AdmissionResponse> {
        Box::pin(async move {
            if !matches!(request.operation, Operation::Create | Operation::Update) {
                return AdmissionResponse::allowed();
            }
            let Some(sent) = request.object.as_ref() else {
                return AdmissionResponse::errored(400, "the request has no object");
            };
            let mut object = match decode::<K>(Some(sent), "object") {
                Ok(object) => object,
                Err(answer) => return *answer,
            };
            let round_trip = match serde_json::to_value(&object) {
                Ok(value) => value,
                Err(error) => {
                    return AdmissionResponse::errored(
                        500,
                        format!("encoding the object: {error}"),
                    );
                }
            };
            let warnings = match self.defaulter.default(&mut object, request).await {
                Ok(warnings) => warnings,
                Err(denial) => return AdmissionResponse::denied(&denial),
            };
            let changed = match serde_json::to_value(&object) {
                Ok(value) => value,
                Err(error) => {
                    return AdmissionResponse::errored(
                        500,
                        format!("encoding the object: {error}"),
                    );
                }
            };
            AdmissionResponse::patched(&defaulter_patch(sent, &round_trip, &changed))
                .with_warnings(warnings)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_patch_adds_what_changed_and_keeps_what_the_type_does_not_know() {
        let sent = json!({"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
            "spec": {"image": "i", "newerField": 1}});
        // The type knows image and replicas only: newerField is lost in its round trip.
        let round_trip = json!({"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
            "spec": {"image": "i"}});
        let changed = json!({"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x", "team": "t"}},
            "spec": {"image": "i", "replicas": 1}});
        let patch = serde_json::to_value(defaulter_patch(&sent, &round_trip, &changed)).unwrap();
        let operations = patch.as_array().unwrap();
        assert!(operations.iter().all(|op| op["op"] != "remove"), "{patch}");
        assert!(
            operations
                .iter()
                .any(|op| op["op"] == "add" && op["path"] == "/spec/replicas"),
            "{patch}"
        );
        assert!(
            operations
                .iter()
                .any(|op| op["path"] == "/metadata/labels/team"),
            "{patch}"
        );
    }

    #[test]
    fn what_the_round_trip_changes_is_not_the_defaulters() {
        // The type reads 1 as a float and writes 1.0; the defaulter adds b.
        let sent = json!({"spec": {"ratio": 1, "list": [{"keep": 1, "unknown": 2}]}});
        let round_trip = json!({"spec": {"ratio": 1.0, "list": [{"keep": 1}]}});
        let changed = json!({"spec": {"ratio": 1.0, "list": [{"keep": 1}], "b": true}});
        let patch = serde_json::to_value(defaulter_patch(&sent, &round_trip, &changed)).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/spec/b", "value": true}])
        );
    }

    #[test]
    fn no_change_no_patch() {
        let sent = json!({"spec": {"a": 1}});
        let patch = patch_between(&sent, &sent, &sent);
        let response = AdmissionResponse::patched(&patch);
        assert_eq!((response.patch, response.patch_type), (None, None));
    }
}
