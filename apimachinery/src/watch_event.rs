//! [`WatchEvent`]: one event of a watch stream, and the BOOKMARK object.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::status::Status;

/// The annotation a BOOKMARK carries, with the value `"true"`, to mark the
/// end of the initial events of a watch-list request
/// (`sendInitialEvents=true`): every object that existed at the start has
/// been sent, and the bookmark's resourceVersion is the state they form.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// One event of a watch stream, decoded from the API server's
/// `{"type": "...", "object": {...}}` lines.
///
/// The server writes `type` before `object`, which decodes the object
/// straight into `K`; the other order is accepted too.
///
/// ```
/// use clientgo_apimachinery::WatchEvent;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let line = br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",
///   "metadata":{"resourceVersion":"4711","creationTimestamp":null,
///   "annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
/// let event: WatchEvent<Pod> = serde_json::from_slice(line).unwrap();
/// match event {
///     WatchEvent::Bookmark(bookmark) => {
///         assert_eq!(bookmark.resource_version(), "4711");
///         assert!(bookmark.is_initial_events_end());
///     }
///     other => panic!("expected a bookmark, got {}", other.type_name()),
/// }
/// ```
// An ERROR's Status is larger than a bookmark; events are moved once from
// the decoder to the store, and boxing the Status would cost an
// allocation on the path every ERROR takes for no gain elsewhere.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    content = "object",
    bound(serialize = "K: Serialize", deserialize = "K: Deserialize<'de>")
)]
pub enum WatchEvent<K> {
    /// An object was created (or, at the start of a watch from `""`/`"0"`
    /// or a watch-list, already existed).
    #[serde(rename = "ADDED")]
    Added(K),
    /// An object changed.
    #[serde(rename = "MODIFIED")]
    Modified(K),
    /// An object was deleted; this is its last state.
    #[serde(rename = "DELETED")]
    Deleted(K),
    /// The stream reached a resourceVersion; no object changed.
    #[serde(rename = "BOOKMARK")]
    Bookmark(Bookmark),
    /// The server ended the watch with an error (for example 410 Expired).
    #[serde(rename = "ERROR")]
    Error(Status),
}

impl<K> WatchEvent<K> {
    /// The event's wire type: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or
    /// `ERROR`.
    pub fn type_name(&self) -> &'static str {
        match self {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => "BOOKMARK",
            WatchEvent::Error(_) => "ERROR",
        }
    }

    /// The object of an ADDED, MODIFIED or DELETED event.
    pub fn object(&self) -> Option<&K> {
        match self {
            WatchEvent::Added(object)
            | WatchEvent::Modified(object)
            | WatchEvent::Deleted(object) => Some(object),
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => None,
        }
    }

    /// The same event with its object converted (for example wrapped in an
    /// `Arc`).
    pub fn map<U>(self, f: impl FnOnce(K) -> U) -> WatchEvent<U> {
        match self {
            WatchEvent::Added(object) => WatchEvent::Added(f(object)),
            WatchEvent::Modified(object) => WatchEvent::Modified(f(object)),
            WatchEvent::Deleted(object) => WatchEvent::Deleted(f(object)),
            WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
            WatchEvent::Error(status) => WatchEvent::Error(status),
        }
    }
}

/// The object of a BOOKMARK event: only the kind, apiVersion and a
/// metadata holding a resourceVersion (and, for the end of initial events,
/// an annotation). Any other metadata field the server sends (it sends
/// `creationTimestamp: null`) is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bookmark {
    /// The kind of the watched resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The apiVersion of the watched resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The bookmark's metadata.
    pub metadata: BookmarkMeta,
}

/// The metadata of a [`Bookmark`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BookmarkMeta {
    /// The resourceVersion the stream has reached.
    pub resource_version: String,
    /// Annotations; see [`INITIAL_EVENTS_END_ANNOTATION`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// A bookmark at `resource_version`.
    pub fn new(resource_version: impl Into<String>) -> Self {
        Bookmark {
            kind: None,
            api_version: None,
            metadata: BookmarkMeta {
                resource_version: resource_version.into(),
                annotations: BTreeMap::new(),
            },
        }
    }

    /// The resourceVersion the stream has reached.
    pub fn resource_version(&self) -> &str {
        &self.metadata.resource_version
    }

    /// Whether this bookmark ends the initial events of a watch-list
    /// request (its [`INITIAL_EVENTS_END_ANNOTATION`] is `"true"`).
    pub fn is_initial_events_end(&self) -> bool {
        self.metadata
            .annotations
            .get(INITIAL_EVENTS_END_ANNOTATION)
            .is_some_and(|value| value == "true")
    }

    /// Marks this bookmark as the end of the initial events.
    pub fn mark_initial_events_end(mut self) -> Self {
        self.metadata.annotations.insert(
            INITIAL_EVENTS_END_ANNOTATION.to_string(),
            "true".to_string(),
        );
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;
    use crate::status::StatusReason;
    use k8s_openapi::api::core::v1::Pod;

    fn decode(json: &str) -> WatchEvent<Pod> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn decodes_object_events() {
        let added = decode(
            r#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}}"#,
        );
        assert_eq!(added.type_name(), "ADDED");
        assert_eq!(added.object().and_then(|p| p.name()), Some("a"));
        let modified = decode(
            r#"{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"6"}}}"#,
        );
        assert!(
            matches!(modified, WatchEvent::Modified(ref p) if p.resource_version() == Some("6"))
        );
        let deleted = decode(r#"{"type":"DELETED","object":{"metadata":{"name":"a"}}}"#);
        assert!(matches!(deleted, WatchEvent::Deleted(_)));
    }

    #[test]
    fn object_before_type_is_accepted() {
        let event = decode(r#"{"object":{"metadata":{"name":"late"}},"type":"ADDED"}"#);
        assert_eq!(event.object().and_then(|p| p.name()), Some("late"));
    }

    #[test]
    fn decodes_a_plain_bookmark_as_the_server_sends_it() {
        let event = decode(
            r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345","creationTimestamp":null}}}"#,
        );
        let WatchEvent::Bookmark(bookmark) = event else {
            panic!("not a bookmark");
        };
        assert_eq!(bookmark.resource_version(), "12345");
        assert!(!bookmark.is_initial_events_end());
        assert_eq!(bookmark.kind.as_deref(), Some("Pod"));
    }

    #[test]
    fn initial_events_end_needs_the_value_true() {
        let end = Bookmark::new("9").mark_initial_events_end();
        assert!(end.is_initial_events_end());
        let mut not_end = Bookmark::new("9");
        not_end
            .metadata
            .annotations
            .insert(INITIAL_EVENTS_END_ANNOTATION.into(), "false".into());
        assert!(!not_end.is_initial_events_end());
        assert_eq!(INITIAL_EVENTS_END_ANNOTATION, "k8s.io/initial-events-end");
    }

    #[test]
    fn decodes_an_error_event() {
        let event = decode(
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}}"#,
        );
        let WatchEvent::Error(status) = event else {
            panic!("not an error");
        };
        assert_eq!(status.reason, StatusReason::Expired);
        assert!(status.is_expired_or_gone());
    }

    #[test]
    fn bad_events_are_errors() {
        for bad in [
            r#"{"type":"typeValue","object":{}}"#,
            r#"{"type":"ADDED"}"#,
            r#"{"object":{}}"#,
            r#"{"type":"ADDED","object":{"metadata":{"name":7}}}"#,
            r#"{"type":"BOOKMARK","object":{"metadata":{}}}"#,
            r#"[]"#,
            r#"{"type":"ADDED","object":{}"#,
        ] {
            assert!(
                serde_json::from_str::<WatchEvent<Pod>>(bad).is_err(),
                "accepted {bad}"
            );
        }
    }

    #[test]
    fn encodes_in_the_wire_form() {
        let event: WatchEvent<Pod> = WatchEvent::Bookmark(Bookmark::new("3"));
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "3"}}})
        );
        assert_eq!(
            serde_json::from_value::<WatchEvent<Pod>>(json).unwrap(),
            event
        );
    }

    #[test]
    fn map_converts_the_object_and_keeps_the_rest() {
        let event: WatchEvent<Pod> = WatchEvent::Added(Pod::default());
        let mapped = event.map(std::sync::Arc::new);
        assert!(matches!(mapped, WatchEvent::Added(_)));
        let bookmark: WatchEvent<Pod> = WatchEvent::Bookmark(Bookmark::new("1"));
        assert!(matches!(bookmark.map(|_| 0u8), WatchEvent::Bookmark(_)));
    }
}
