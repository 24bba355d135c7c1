//! Options of write requests: [`Patch`] and [`PatchOptions`],
//! [`CreateOptions`] and [`UpdateOptions`], [`DeleteOptions`] with
//! preconditions and propagation (meta/v1's `PatchOptions`,
//! `CreateOptions`, `UpdateOptions` and `DeleteOptions`).

use serde::Serialize;

/// A patch and its type; the type picks the `Content-Type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// JSON merge patch (RFC 7386): `application/merge-patch+json`.
    Merge(serde_json::Value),
    /// JSON patch (RFC 6902), a list of operations:
    /// `application/json-patch+json`.
    Json(serde_json::Value),
    /// Kubernetes' strategic merge patch (built-in types only):
    /// `application/strategic-merge-patch+json`.
    Strategic(serde_json::Value),
    /// Server-side apply of a full intent (needs a field manager):
    /// `application/apply-patch+yaml` (JSON is valid YAML).
    Apply(serde_json::Value),
}

impl Patch {
    /// The `Content-Type` this patch is sent with.
    pub fn content_type(&self) -> &'static str {
        match self {
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Json(_) => "application/json-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
            Patch::Apply(_) => "application/apply-patch+yaml",
        }
    }

    /// The patch document.
    pub fn body(&self) -> &serde_json::Value {
        match self {
            Patch::Merge(value)
            | Patch::Json(value)
            | Patch::Strategic(value)
            | Patch::Apply(value) => value,
        }
    }
}

/// Options of a patch (meta/v1 `PatchOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchOptions {
    /// `fieldManager`: who owns the fields set (required for apply).
    pub field_manager: Option<String>,
    /// `force`: take over fields owned by other managers (apply only).
    pub force: bool,
    /// `dryRun=All`: validate without persisting.
    pub dry_run: bool,
}

impl PatchOptions {
    /// Server-side apply parameters for `field_manager`.
    pub fn apply(field_manager: impl Into<String>) -> Self {
        PatchOptions {
            field_manager: Some(field_manager.into()),
            ..PatchOptions::default()
        }
    }

    /// Takes over conflicting fields.
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    /// Validates without persisting.
    #[must_use]
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    pub(crate) fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if let Some(manager) = &self.field_manager {
            pairs.push(("fieldManager", manager.clone()));
        }
        if self.force {
            pairs.push(("force", "true".to_string()));
        }
        if self.dry_run {
            pairs.push(("dryRun", "All".to_string()));
        }
        pairs
    }
}

/// Options of a create (meta/v1 `CreateOptions`); a replace takes the same
/// ones, as [`UpdateOptions`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateOptions {
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// Options of a replace or a status replace (meta/v1 `UpdateOptions`,
/// which has the same fields as `CreateOptions`).
pub type UpdateOptions = CreateOptions;

impl CreateOptions {
    pub(crate) fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if let Some(manager) = &self.field_manager {
            pairs.push(("fieldManager", manager.clone()));
        }
        if self.dry_run {
            pairs.push(("dryRun", "All".to_string()));
        }
        pairs
    }
}

/// How dependents are deleted with their owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    /// Dependents become orphans.
    Orphan,
    /// Dependents are deleted in the background after the owner.
    Background,
    /// The owner waits (with a finalizer) until its dependents are gone.
    Foreground,
}

/// Conditions the object must meet for a delete to happen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object's UID must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's resourceVersion must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// The body of a delete: meta/v1 DeleteOptions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions {
    /// Seconds before the object is deleted; 0 means now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i64>,
    /// Conditions that must hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preconditions: Option<Preconditions>,
    /// What happens to dependents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<PropagationPolicy>,
    /// `["All"]` to validate without deleting.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dry_run: Vec<String>,
}

impl DeleteOptions {
    /// Deletes dependents in the background.
    pub fn background() -> Self {
        DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteOptions::default()
        }
    }

    /// Deletes dependents first.
    pub fn foreground() -> Self {
        DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..DeleteOptions::default()
        }
    }

    /// Orphans dependents.
    pub fn orphan() -> Self {
        DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Orphan),
            ..DeleteOptions::default()
        }
    }

    /// Deletes only if the object still has this resourceVersion.
    #[must_use]
    pub fn if_resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.preconditions
            .get_or_insert_with(Preconditions::default)
            .resource_version = Some(resource_version.into());
        self
    }

    /// Deletes only if the object still has this UID.
    #[must_use]
    pub fn if_uid(mut self, uid: impl Into<String>) -> Self {
        self.preconditions
            .get_or_insert_with(Preconditions::default)
            .uid = Some(uid.into());
        self
    }

    /// The request body: these options with the `kind` and `apiVersion`
    /// the server expects, serialized in one pass.
    pub(crate) fn body(&self) -> DeleteBody<'_> {
        DeleteBody {
            kind: "DeleteOptions",
            api_version: "v1",
            options: self,
        }
    }
}

/// [`DeleteOptions`] as sent: meta/v1 `DeleteOptions` with its type fields.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeleteBody<'a> {
    kind: &'static str,
    api_version: &'static str,
    #[serde(flatten)]
    options: &'a DeleteOptions,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_options_serialize_as_meta_v1() {
        let options = DeleteOptions::foreground().if_resource_version("42");
        let body = serde_json::to_value(options.body()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "kind": "DeleteOptions",
                "apiVersion": "v1",
                "propagationPolicy": "Foreground",
                "preconditions": { "resourceVersion": "42" }
            })
        );
    }

    #[test]
    fn patch_content_types() {
        let value = serde_json::json!({});
        assert_eq!(
            Patch::Apply(value.clone()).content_type(),
            "application/apply-patch+yaml"
        );
        assert_eq!(
            Patch::Json(value).content_type(),
            "application/json-patch+json"
        );
        let pairs = PatchOptions::apply("me").force().query_pairs();
        assert_eq!(
            pairs,
            vec![
                ("fieldManager", "me".to_string()),
                ("force", "true".to_string())
            ]
        );
    }
}
