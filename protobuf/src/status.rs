//! [`status_json`]: a protobuf `Status` (the body of an error answer to a
//! protobuf request, or a watch's ERROR event) as the JSON the server
//! would have sent instead.

use clientgo_apimachinery::Unknown;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

use crate::message::Message;

/// The `Status` in `k8s\0`-enveloped protobuf `body`, as JSON with its
/// `apiVersion` and `kind`; `None` when `body` is not such a `Status`.
pub fn status_json(body: &[u8]) -> Option<serde_json::Value> {
    let envelope = Unknown::decode(body).ok()?;
    if envelope.kind != "Status" {
        return None;
    }
    status_message_json(envelope.raw)
}

/// A `Status` message (no envelope) as JSON with `apiVersion` and
/// `kind`; `None` when the bytes do not decode.
pub fn status_message_json(message: &[u8]) -> Option<serde_json::Value> {
    let status = Status::decode(message).ok()?;
    let mut value = serde_json::to_value(&status).ok()?;
    if let Some(object) = value.as_object_mut() {
        object.insert("apiVersion".into(), "v1".into());
        object.insert("kind".into(), "Status".into());
    }
    Some(value)
}

/// A `Status` given as JSON (apimachinery's `Status` serialised), as a
/// `Status` message (no envelope); `None` when the JSON is not a Status.
pub fn status_message_from_json(json: &serde_json::Value) -> Option<Vec<u8>> {
    let status: Status = serde_json::from_value(json.clone()).ok()?;
    Some(status.encode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protobuf_status_reads_as_its_json() {
        let status = Status {
            code: Some(410),
            reason: Some("Expired".into()),
            message: Some("too old resource version".into()),
            ..Default::default()
        };
        let body = Unknown {
            api_version: "v1",
            kind: "Status",
            raw: &status.encode(),
            content_encoding: "",
            content_type: "",
        }
        .encode();
        let json = status_json(&body).expect("a Status");
        assert_eq!(json["code"], 410);
        assert_eq!(json["reason"], "Expired");
        assert_eq!(json["kind"], "Status");
        assert!(status_json(b"{}").is_none());
        assert!(status_json(b"k8s\0garbage").is_none());
    }
}
