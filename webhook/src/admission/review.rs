//! `AdmissionReview` (`admission.k8s.io/v1`): what kube-apiserver sends an
//! admission webhook and what it expects back.

use std::collections::BTreeMap;

use clientgo_apimachinery::Status;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The envelope both ways: a request from the API server, a response
/// back with the same `apiVersion` and the request's `uid`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1`.
    pub api_version: String,
    /// `AdmissionReview`.
    pub kind: String,
    /// What is asked (in a request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<AdmissionRequest>,
    /// The answer (in a response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<AdmissionResponse>,
}

/// A group, version and kind as a review names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kind {
    /// The API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// A group, version and resource as a review names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// The API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// What is being done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// A create (`object` set).
    Create,
    /// An update (`object` and `oldObject` set).
    Update,
    /// A delete (`oldObject` set).
    Delete,
    /// A connect (exec, attach, port-forward, proxy).
    Connect,
}

/// Who is asking.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The user's UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The user's groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// Whatever else the authenticator said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<BTreeMap<String, Vec<String>>>,
}

/// The request of a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Copied into the response.
    pub uid: String,
    /// The object's kind.
    #[serde(default)]
    pub kind: Kind,
    /// The resource.
    #[serde(default)]
    pub resource: Resource,
    /// The subresource (`status`, `scale`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// The kind the request was sent as (differs with `matchPolicy:
    /// Equivalent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<Kind>,
    /// The resource the request was sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<Resource>,
    /// The object's name (empty on a create with `generateName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The object's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What is being done.
    pub operation: Operation,
    /// Who is asking.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The object as it would be stored (create, update).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// The object as it is stored (update, delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// A dry run: nothing will be stored, and a handler must have no
    /// side effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options (`CreateOptions`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

impl AdmissionRequest {
    /// Whether this is a dry run.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run == Some(true)
    }
}

/// The response of a review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// Whether the request may go on.
    pub allowed: bool,
    /// Why not (its message is what the user sees), or a success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// A JSON patch (RFC 6902), base64-encoded, as the API server reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// `JSONPatch` when there is a patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Annotations for the audit log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings the user sees (kubectl prints them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_as_kube_apiserver_sends_it_reads() {
        let review: AdmissionReview = serde_json::from_value(serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "stable.example.com", "version": "v1", "kind": "CronTab"},
                "resource": {"group": "stable.example.com", "version": "v1", "resource": "crontabs"},
                "requestKind": {"group": "stable.example.com", "version": "v1", "kind": "CronTab"},
                "name": "a", "namespace": "default", "operation": "CREATE",
                "userInfo": {"username": "admin", "groups": ["system:masters"]},
                "object": {"spec": {}}, "oldObject": null, "dryRun": true,
                "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
            }
        }))
        .unwrap();
        let request = review.request.unwrap();
        assert_eq!(request.operation, Operation::Create);
        assert!(request.is_dry_run());
        assert_eq!(request.old_object, None);
    }
}
