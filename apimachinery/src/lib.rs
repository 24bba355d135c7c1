//! The shared vocabulary of clientgo-rs, as k8s.io/apimachinery is for
//! client-go: how objects, resources, requests, lists, watch events and API
//! errors are represented. Every other clientgo-rs crate builds on it.
//!
//! | item | client-go counterpart | what it is |
//! |---|---|---|
//! | [`Object`] | `metav1.Object` | read access to the `ObjectMeta` of any object |
//! | [`ApiResource`] | `schema.GroupVersionResource` + REST mapping | group, version, kind, plural, scope; URL paths |
//! | [`GroupVersionKind`], [`GroupVersionResource`], [`GroupResource`], [`GroupVersion`] | `schema.*` | names with Kubernetes' string forms |
//! | [`ListOptions`] | `metav1.ListOptions` | list and watch query parameters |
//! | [`ObjectList`] | `*List` types | a page of a list response |
//! | [`WatchEvent`], [`Bookmark`] | `watch.Event` | one event of a watch stream |
//! | [`Status`], [`StatusReason`] | `metav1.Status`, `apierrors` | the API error body and its predicates |
//! | [`DynamicObject`] | `unstructured.Unstructured` | any object, metadata typed, the rest JSON |
//! | [`PartialObjectMetadata`] | `metav1.PartialObjectMetadata` | an object reduced to its metadata |
//! | [`LabelSelector`], [`FieldSelector`] | `labels.Selector`, `fields.Selector` | selector parsing, matching, printing |
//! | [`crd`] | controller-gen's CRD schemas | custom resources from Rust types: structural schemas, the CRD, the server's rules |
//! | [`clock::Clock`] | `k8s.io/utils/clock` | an injectable clock for time-dependent code |
//!
//! Typed objects come from [k8s-openapi](k8s_openapi). This crate never
//! enables a k8s-openapi version feature; the final binary chooses one.
//!
//! ```
//! use clientgo_apimachinery::{ApiResource, LabelSelector, ListOptions, Object, ObjectList};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! // Where pods live, and the request a reflector's first list sends.
//! let pods = ApiResource::of::<Pod>();
//! let selector: LabelSelector = "app=web".parse().unwrap();
//! let options = ListOptions::default()
//!     .label_selector(selector.to_string())
//!     .resource_version("0")
//!     .limit(500);
//! let url = format!("{}?{}", pods.collection_path(Some("default")).unwrap(), options.to_query_string());
//! assert_eq!(url, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb&resourceVersion=0&limit=500");
//!
//! // What comes back.
//! let page: ObjectList<Pod> = serde_json::from_str(
//!     r#"{"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"web-0","labels":{"app":"web"}}}]}"#,
//! ).unwrap();
//! assert!(page.iter().all(|pod| selector.matches(pod.labels())));
//! ```

mod api_resource;
pub mod clock;
mod compact;
mod compact_body;
mod compact_meta;
pub mod crd;
pub mod decode;
mod dynamic_object;
pub mod field_selector;
mod group_version;
pub mod json_scan;
pub mod label_selector;
mod list_options;
mod object;
mod object_list;
mod owner_refs;
mod packed_ends;
mod partial_object_metadata;
mod protobuf_envelope;
pub mod protobuf_wire;
pub mod random;
mod record_codec;
mod shard_selector;
pub mod status;
mod str_map;
pub mod validation;
mod watch_event;

pub use api_resource::{ApiResource, KnownScope, PathError, SegmentProblem, check_path_segment};
pub use compact::{
    Compact, CompactDecodeError, CompactDecodes, CompactRecordError, compact_decodes,
};
pub use compact_body::{CompactBody, Json, Lz4, MessageDecoder, Protobuf};
pub use compact_meta::{CompactMeta, MetaFields};
pub use decode::{DecodeError, DecodeErrorKind, from_json_slice};
pub use dynamic_object::DynamicObject;
pub use field_selector::{FieldOperator, FieldSelector, FieldSelectorError};
pub use group_version::{
    GroupResource, GroupVersion, GroupVersionKind, GroupVersionParseError, GroupVersionResource,
};
pub use label_selector::{
    LabelSelector, LabelSelectorError, Operator, Requirement, SelectorProblem,
};
pub use list_options::{ListOptions, ListOptionsError, ResourceVersionMatch};
pub use object::{ApiObject, Object};
pub use object_list::ObjectList;
pub use owner_refs::{OwnerRef, OwnerRefs};
pub use partial_object_metadata::{
    META_API_VERSION, PARTIAL_OBJECT_METADATA_ACCEPT, PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
    PartialObjectMetadata, PartialObjectMetadataList,
};
pub use protobuf_envelope::{EnvelopeError, PROTOBUF_MAGIC, PROTOBUF_MEDIA_TYPE, Unknown};
pub use record_codec::RecordCodec;
pub use shard_selector::{
    HASH_SPACE_END, ShardField, ShardRange, ShardSelector, ShardSelectorError, fnv1a_64,
};
pub use status::{Status, StatusCause, StatusDetails, StatusReason};
pub use str_map::{StrMap, StrMapIter};
pub use watch_event::{Bookmark, BookmarkMeta, INITIAL_EVENTS_END_ANNOTATION, WatchEvent};

/// Re-exported so users of this crate name the same k8s-openapi version.
pub use k8s_openapi;
