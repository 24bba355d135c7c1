//! Serving protobuf (`application/vnd.kubernetes.protobuf`) as
//! kube-apiserver does: for built-in types when the `Accept` header asks
//! for it, JSON for custom resources when JSON is also acceptable, and 406
//! when only protobuf is.
//!
//! Objects are encoded from their stored JSON through the type's
//! generated encoder (clientgo-protobuf), once per stored version, by the
//! stored object itself (`StoredObject::to_protobuf` in `store/object.rs`):
//! the bytes are kept beside the JSON, so a list does not re-encode. This
//! file frames them: envelopes, lists, Statuses and watch frames.

use bytes::Bytes;
use clientgo_apimachinery::{
    ApiResource, INITIAL_EVENTS_END_ANNOTATION, PROTOBUF_MEDIA_TYPE, Status, StatusReason, Unknown,
};
use clientgo_protobuf::KindCodec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;

use crate::store::object::StoredObject;

/// The `Content-Type` of a protobuf watch.
pub(crate) const PROTOBUF_WATCH_MEDIA_TYPE: &str =
    "application/vnd.kubernetes.protobuf;stream=watch";

/// How an answer is encoded.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Encoding {
    /// JSON.
    Json,
    /// Protobuf, with the resource type's codec.
    Protobuf(KindCodec),
}

impl Encoding {
    /// What `accept` gets for `resource`: protobuf when asked for and the
    /// type has a codec (a full object, not metadata-only); JSON when it is
    /// acceptable; otherwise 406, as the real server answers a protobuf
    /// request for a custom resource.
    pub(crate) fn negotiate(
        accept: &str,
        resource: &ApiResource,
        metadata_only: bool,
    ) -> Result<Encoding, Status> {
        if !accept.contains(PROTOBUF_MEDIA_TYPE) || metadata_only {
            return Ok(Encoding::Json);
        }
        if let Some(codec) = clientgo_protobuf::by_kind(resource.api_version(), resource.kind()) {
            return Ok(Encoding::Protobuf(codec));
        }
        let json_too = accept
            .split(',')
            .map(|part| part.split(';').next().unwrap_or_default().trim())
            .any(|media| matches!(media, "application/json" | "*/*" | "application/*"));
        if json_too {
            return Ok(Encoding::Json);
        }
        Err(Status::failure(
            406,
            StatusReason::NotAcceptable,
            "only the following media types are accepted: application/json, application/yaml",
        ))
    }
}

/// One object, as `GET` answers it.
pub(crate) fn object_body(object: &StoredObject, codec: &KindCodec) -> Result<Vec<u8>, Status> {
    Ok(Unknown::wrap(
        codec.api_version,
        codec.kind,
        &object.to_protobuf(codec)?,
    ))
}

/// A list's metadata as it is written.
pub(crate) struct ListMetadata<'a> {
    pub(crate) revision: u64,
    pub(crate) continue_token: Option<&'a str>,
    pub(crate) remaining: Option<usize>,
    /// The shard selector applied, echoed as sent (`shardInfo`).
    pub(crate) shard_selector: Option<&'a str>,
}

/// A list page: the `<Kind>List` message (`metadata = 1`, `items = 2`) in
/// the envelope.
pub(crate) fn list_body(
    codec: &KindCodec,
    list_metadata: &ListMetadata<'_>,
    items: &[std::sync::Arc<StoredObject>],
) -> Result<Vec<u8>, Status> {
    let metadata = ListMeta {
        resource_version: Some(list_metadata.revision.to_string()),
        continue_: list_metadata.continue_token.map(str::to_string),
        remaining_item_count: list_metadata.remaining.map(|r| r as i64),
        ..ListMeta::default()
    };
    let mut list = Vec::new();
    clientgo_protobuf::put::length_prefixed(&mut list, 1, |out| {
        clientgo_protobuf::Message::encode_fields(&metadata, out);
        // shardInfo (field 5, a ShardInfo whose field 1 is the selector),
        // written by hand: this crate builds with k8s-openapi versions
        // whose ListMeta has no such field.
        if let Some(selector) = list_metadata.shard_selector {
            clientgo_protobuf::put::length_prefixed(out, 5, |info| {
                clientgo_protobuf::put::put_string_value(info, 1, &Some(selector.to_string()));
            });
        }
    });
    for item in items {
        let bytes = item.to_protobuf(codec)?;
        clientgo_protobuf::put::length_prefixed(&mut list, 2, |out| out.extend_from_slice(&bytes));
    }
    Ok(Unknown::wrap(
        codec.api_version,
        &format!("{}List", codec.kind),
        &list,
    ))
}

/// A `Status` as a protobuf body.
pub(crate) fn status_body(status: &Status) -> Vec<u8> {
    let json = serde_json::to_value(status).unwrap_or_default();
    let message = clientgo_protobuf::status_message_from_json(&json).unwrap_or_default();
    Unknown::wrap("v1", "Status", &message)
}

/// One watch frame as kube-apiserver writes it: a 4-byte big-endian
/// length, then a bare `meta.v1.WatchEvent` (`type = 1`, `object = 2` a
/// `RawExtension` whose `raw` is the enveloped object). The event itself
/// has no `k8s\0` envelope; only the object inside it does (recorded in
/// `real-apiserver-1.36/watch-pods.pb.body`).
fn frame(event_type: &str, object_envelope: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(object_envelope.len() + 32);
    clientgo_protobuf::put::put_string(&mut event, 1, &event_type.to_string());
    clientgo_protobuf::put::length_prefixed(&mut event, 2, |out| {
        clientgo_apimachinery::protobuf_wire::put_bytes(out, 1, object_envelope);
    });
    let mut bytes = Vec::with_capacity(event.len() + 4);
    bytes.extend_from_slice(&(event.len() as u32).to_be_bytes());
    bytes.extend_from_slice(&event);
    Bytes::from(bytes)
}

/// An ADDED, MODIFIED or DELETED frame.
pub(crate) fn event_frame(
    codec: &KindCodec,
    event_type: &str,
    object: &StoredObject,
) -> Result<Bytes, Status> {
    Ok(frame(event_type, &object_body(object, codec)?))
}

/// A BOOKMARK frame: an object of the type with only a resourceVersion
/// (and the initial-events-end annotation when it ends watch-list's
/// initial events).
pub(crate) fn bookmark_frame(codec: &KindCodec, revision: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = serde_json::json!({ "resourceVersion": revision.to_string() });
    if initial_events_end {
        metadata["annotations"] = serde_json::json!({ INITIAL_EVENTS_END_ANNOTATION: "true" });
    }
    let json = serde_json::json!({
        "apiVersion": codec.api_version,
        "kind": codec.kind,
        "metadata": metadata,
    });
    let message = serde_json::to_vec(&json)
        .ok()
        .and_then(|json| codec.json_to_protobuf(&json).ok())
        .unwrap_or_else(|| {
            // A type whose JSON needs more than metadata: the metadata field
            // alone, which is what a bookmark carries.
            let mut out = Vec::new();
            let meta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                resource_version: Some(revision.to_string()),
                ..Default::default()
            };
            clientgo_protobuf::put::put_message::<
                k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
                _,
            >(&mut out, 1, &meta);
            out
        });
    frame(
        "BOOKMARK",
        &Unknown::wrap(codec.api_version, codec.kind, &message),
    )
}

/// A well-formed ADDED frame of a core `Event`, for the foreign-event
/// fault.
pub(crate) fn foreign_event_frame() -> Bytes {
    let Some(events) = clientgo_protobuf::by_kind("v1", "Event") else {
        return Bytes::new();
    };
    let json = br#"{"apiVersion":"v1","kind":"Event","metadata":{"name":"foreign-object","namespace":"default"},"reason":"Foreign","involvedObject":{}}"#;
    let message = events.json_to_protobuf(json).unwrap_or_default();
    frame("ADDED", &Unknown::wrap("v1", "Event", &message))
}

/// An ERROR frame carrying `status`.
pub(crate) fn error_frame(status: &Status) -> Bytes {
    frame("ERROR", &status_body(status))
}

/// The message of a `ListMeta`, for tests.
#[cfg(test)]
fn list_meta(bytes: &[u8]) -> ListMeta {
    use clientgo_protobuf::Message;
    ListMeta::decode(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_is_negotiated_for_built_in_types_only() {
        let pods = ApiResource::of::<k8s_openapi::api::core::v1::Pod>();
        let crontabs = ApiResource::namespaced(
            clientgo_apimachinery::GroupVersionKind::new("stable.example.com", "v1", "CronTab"),
            "crontabs",
        );
        let both = "application/vnd.kubernetes.protobuf, application/json";
        assert!(matches!(
            Encoding::negotiate(both, &pods, false),
            Ok(Encoding::Protobuf(_))
        ));
        assert!(matches!(
            Encoding::negotiate(both, &pods, true),
            Ok(Encoding::Json)
        ));
        assert!(matches!(
            Encoding::negotiate("application/json", &pods, false),
            Ok(Encoding::Json)
        ));
        assert!(matches!(
            Encoding::negotiate(both, &crontabs, false),
            Ok(Encoding::Json)
        ));
        let refused = Encoding::negotiate(PROTOBUF_MEDIA_TYPE, &crontabs, false).unwrap_err();
        assert_eq!(refused.code, 406);
    }

    #[test]
    fn an_empty_list_still_carries_its_metadata() {
        let pods = clientgo_protobuf::by_kind("v1", "Pod").unwrap();
        let metadata = ListMetadata {
            revision: 7,
            continue_token: Some("next"),
            remaining: Some(3),
            shard_selector: Some(
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
            ),
        };
        let body = list_body(&pods, &metadata, &[]).unwrap();
        let envelope = Unknown::decode(&body).unwrap();
        assert_eq!(envelope.kind, "PodList");
        let mut reader = clientgo_apimachinery::protobuf_wire::WireReader::new(envelope.raw);
        let (number, value) = reader.next_field().unwrap().unwrap();
        assert_eq!(number, 1);
        let clientgo_apimachinery::protobuf_wire::WireValue::Bytes(bytes) = value else {
            panic!("not bytes")
        };
        let meta = list_meta(bytes);
        assert_eq!(meta.resource_version.as_deref(), Some("7"));
        assert_eq!(meta.continue_.as_deref(), Some("next"));
        assert_eq!(meta.remaining_item_count, Some(3));
        // shardInfo, written by hand, reads back as field 5.
        assert_eq!(
            meta.shard_info.map(|info| info.selector).as_deref(),
            metadata.shard_selector
        );
    }
}
