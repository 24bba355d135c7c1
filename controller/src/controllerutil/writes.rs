//! Writing children and status (controller-runtime's `CreateOrUpdate`,
//! `Client.Apply` with a field owner, and status updates retried on
//! conflict).

use std::fmt;

use clientgo_apimachinery::{Object, StatusCause};
use clientgo_rest::util::retry::{Backoff, retry_on_conflict};
use clientgo_rest::{CreateOptions, Patch, PatchOptions, ResourceClient, UpdateOptions};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What [`create_or_update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationResult {
    /// The object did not exist and was created.
    Created,
    /// The object existed and the change was written.
    Updated,
    /// The object existed and the change left it as it was: nothing was
    /// written.
    Unchanged,
}

/// Makes the object `name` what `mutate` says (controller-runtime's
/// `CreateOrUpdate`): reads it from the server; when missing, runs
/// `mutate` on a default object with that name (in `client`'s namespace)
/// and creates it; otherwise runs `mutate` on the current object and
/// writes it back only if it changed (a write over a newer version fails
/// with a conflict). `mutate` must not change the name or namespace. A
/// field the server defaults differently from what `mutate` sets causes
/// an update on every call, as in controller-runtime.
pub async fn create_or_update<K>(
    client: &ResourceClient<K>,
    name: &str,
    mutate: impl FnOnce(&mut K),
) -> Result<(K, OperationResult), clientgo_rest::Error>
where
    K: Object + Default + Clone + PartialEq + Serialize + DeserializeOwned,
{
    match client.get_optional(name).await? {
        None => {
            let mut object = K::default();
            object.meta_mut().name = Some(name.to_string());
            object.meta_mut().namespace = client.namespace().map(str::to_string);
            mutate(&mut object);
            let created = client.create(&CreateOptions::default(), &object).await?;
            Ok((created, OperationResult::Created))
        }
        Some(current) => {
            let mut object = current.clone();
            mutate(&mut object);
            if object == current {
                return Ok((current, OperationResult::Unchanged));
            }
            let updated = client
                .replace(name, &UpdateOptions::default(), &object)
                .await?;
            Ok((updated, OperationResult::Updated))
        }
    }
}

/// Why a server-side apply failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// 409 Conflict: other field managers own fields this apply sets to
    /// other values (only without force; `conflicts` names them), or the
    /// applied object carries a resourceVersion the server has moved past
    /// (`conflicts` is empty).
    #[error("apply by {field_manager:?} conflicts: {message}")]
    Conflict {
        /// Who applied.
        field_manager: String,
        /// The server's message.
        message: String,
        /// The fields owned by another manager, one per field and manager
        /// (the Status's `FieldManagerConflict` causes).
        conflicts: Vec<FieldConflict>,
    },
    /// The object has no name.
    #[error("the object to apply has no name")]
    Unnamed,
    /// The object does not serialize.
    #[error("the object to apply does not serialize: {0}")]
    Serialize(#[source] serde_json::Error),
    /// Any other failure of the request.
    #[error(transparent)]
    Api(#[from] clientgo_rest::Error),
}

/// A field an apply would take from another manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    /// The field, as the server prints it (`.spec.replicas`).
    pub field: String,
    /// The manager owning it (`hpa-controller`).
    pub manager: String,
    /// How the server describes that manager (`conflict with
    /// "hpa-controller" using apps/v1 at 2026-11-27T18:00:00Z`): an
    /// update's manager is named with its API version and time.
    pub message: String,
}

impl FieldConflict {
    /// The conflict a Status cause of type `FieldManagerConflict` reports.
    fn from_cause(cause: &StatusCause) -> Option<Self> {
        if cause.reason != "FieldManagerConflict" {
            return None;
        }
        // `conflict with "<manager>"...`: the manager is the first quoted
        // text (Go's %q; a quote inside a name is escaped, so cut at the
        // first unescaped quote).
        let quoted = cause.message.split_once('"').map(|(_, rest)| rest)?;
        let mut manager = String::new();
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => manager.extend(chars.next()),
                '"' => break,
                c => manager.push(c),
            }
        }
        Some(FieldConflict {
            field: cause.field.clone(),
            manager,
            message: cause.message.clone(),
        })
    }
}

/// How [`apply`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    field_manager: String,
    force: bool,
}

impl ApplyOptions {
    /// Applies as `field_manager`, forcing ownership of the fields it sets
    /// (controller-runtime's `ForceOwnership`, which its documentation
    /// recommends for controllers).
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions {
            field_manager: field_manager.into(),
            force: true,
        }
    }

    /// Whether to take over fields other managers own (default true);
    /// without, such a field is an [`ApplyError::Conflict`].
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
}

/// Server-side applies `object` (the whole of what the caller means to
/// own: fields left out are given up) and returns the object as the
/// server has it. The object needs its `apiVersion` and `kind`; typed
/// k8s-openapi objects serialize them.
pub async fn apply<K>(
    client: &ResourceClient<K>,
    object: &K,
    options: &ApplyOptions,
) -> Result<K, ApplyError>
where
    K: Object + Serialize + DeserializeOwned,
{
    let name = object.name().ok_or(ApplyError::Unnamed)?.to_string();
    let body = serde_json::to_value(object).map_err(ApplyError::Serialize)?;
    let params = PatchOptions {
        field_manager: Some(options.field_manager.clone()),
        force: options.force,
        dry_run: false,
    };
    client
        .patch(&name, &params, &Patch::Apply(body))
        .await
        .map_err(|error| {
            if error.is_conflict() {
                let status = error.status();
                ApplyError::Conflict {
                    field_manager: options.field_manager.clone(),
                    message: status.map_or_else(|| error.to_string(), |s| s.message.clone()),
                    conflicts: status
                        .map(|s| {
                            s.causes()
                                .iter()
                                .filter_map(FieldConflict::from_cause)
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            } else {
                ApplyError::Api(error)
            }
        })
}

/// Writes the status of the object `name` as `mutate` makes it, reading
/// the object afresh and retrying on conflict (client-go's
/// `RetryOnConflict` with `DefaultRetry`: five attempts about 10 ms
/// apart). Returns the object as written.
pub async fn update_status<K>(
    client: &ResourceClient<K>,
    name: &str,
    mutate: impl FnMut(&mut K),
) -> Result<K, clientgo_rest::Error>
where
    K: Object + Serialize + DeserializeOwned,
{
    // Each attempt borrows `mutate` between its read and its write; the
    // lock is never held across an await.
    let mutate = parking_lot::Mutex::new(mutate);
    retry_on_conflict(Backoff::DEFAULT_RETRY, || {
        let fetched = client.get(name);
        let mutate = &mutate;
        async move {
            let mut object = fetched.await?;
            (mutate.lock())(&mut object);
            client
                .replace_status(name, &UpdateOptions::default(), &object)
                .await
        }
    })
    .await
}

impl fmt::Display for OperationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OperationResult::Created => "created",
            OperationResult::Updated => "updated",
            OperationResult::Unchanged => "unchanged",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_conflicts_are_read_from_the_causes() {
        let cause = |reason: &str, message: &str| StatusCause {
            reason: reason.into(),
            message: message.into(),
            field: ".spec.replicas".into(),
        };
        let table = [
            (
                cause("FieldManagerConflict", "conflict with \"op\""),
                Some("op"),
            ),
            (
                cause(
                    "FieldManagerConflict",
                    "conflict with \"hpa\" using apps/v1 at 2026-11-27T18:00:00Z",
                ),
                Some("hpa"),
            ),
            (
                cause("FieldManagerConflict", "conflict with \"a \\\"b\\\"\""),
                Some("a \"b\""),
            ),
            (cause("FieldManagerConflict", "no quotes"), None),
            (cause("FieldValueInvalid", "conflict with \"op\""), None),
        ];
        for (cause, manager) in table {
            let conflict = FieldConflict::from_cause(&cause);
            assert_eq!(
                conflict.as_ref().map(|c| c.manager.as_str()),
                manager,
                "{cause:?}"
            );
            if let Some(conflict) = conflict {
                assert_eq!(conflict.field, ".spec.replicas");
            }
        }
    }
}
