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
    #[serde(default, deserialize_with = "null_as_empty")]
    pub objects: Vec<Value>,
}

/// The converted objects, in the request's order, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// The objects converted (empty on failure).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub converted_objects: Vec<Value>,
    /// `Success`, or `Failure` with a message naming the object.
    #[serde(default)]
    pub result: Status,
}

/// kube-apiserver writes empty lists as `null` (Go's nil slices), even
/// in the `response` of the requests it sends.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Value>, D::Error> {
    Ok(Option::<Vec<Value>>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_as_kube_apiserver_sends_it_reads() {
        let review: ConversionReview = serde_json::from_value(serde_json::json!({
            "kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": [{"apiVersion": "example.com/v1"}]},
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}, "status": ""}}
        }))
        .unwrap();
        assert_eq!(review.request.map(|r| r.objects.len()), Some(1));
    }
}
