//! `ConversionReview` (`apiextensions.k8s.io/v1`): objects kube-apiserver
//! asks to have converted to another version of their CRD.

use clientgo_apimachinery::Status;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The envelope both ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReview {
    /// `apiextensions.k8s.io/v1`.
    pub api_version: String,
    /// `ConversionReview`.
    pub kind: String,
    /// What is asked (in a request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ConversionRequest>,
    /// The answer (in a response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ConversionResponse>,
}

/// Objects to convert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionRequest {
    /// Copied into the response.
    pub uid: String,
    /// The `apiVersion` every object must have after.
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    /// The objects, each in its own version.
    #[serde(default)]
    pub objects: Vec<Value>,
}

/// The converted objects, in the request's order, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// The objects converted (empty on failure).
    #[serde(default)]
    pub converted_objects: Vec<Value>,
    /// `Success`, or `Failure` with a message naming the object.
    pub result: Status,
}
