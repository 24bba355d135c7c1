//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`)
//! for k8s-openapi's types, without intermediate protobuf structs: bytes
//! are decoded straight into `k8s_openapi::api::core::v1::Pod` and the
//! like, and encoded straight from them.
//!
//! - [`Message`] is implemented for every k8s-openapi type that has a
//!   message in the upstream `generated.proto` files. The
//!   implementations in `generated/` are written by `clientgo-codegen`'s
//!   `clientgo-protobuf-gen` from those files and k8s-openapi's source
//!   (committed; a test checks they are current); the types whose
//!   encoding is special are in `special`.
//! - [`codec`] finds a type's decoder and encoder at run time, which is
//!   how generic code (informers) uses protobuf for built-in types and
//!   JSON for the rest.
//! - Decoding is strict about the wire (typed [`DecodeError`]s naming the
//!   path of fields, never a panic) and lenient about content as
//!   protobuf is: unknown fields are skipped, the last value of a
//!   repeated scalar wins.
//!
//! The `k8s\0` envelope and the wire reader are in
//! `clientgo_apimachinery` (`Unknown`, `protobuf_wire`); lists and watch
//! streams are decoded by `clientgo-listwatch`.
//!
//! ```
//! use clientgo_protobuf::Message;
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let pod = Pod {
//!     metadata: ObjectMeta { name: Some("web".into()), ..Default::default() },
//!     ..Default::default()
//! };
//! let bytes = pod.encode();
//! assert_eq!(Pod::decode(&bytes)?.metadata.name.as_deref(), Some("web"));
//! assert!(clientgo_protobuf::codec::<Pod>().is_some());
//! # Ok::<(), clientgo_protobuf::DecodeError>(())
//! ```

mod compact;
mod error;
pub mod field;
// Formatted by prettyplease when generated; rustfmt would make it stale.
#[rustfmt::skip]
mod generated;
mod list_shard_info;
mod message;
pub mod put;
mod registry;
pub mod slot;
mod special;
mod status;

pub use compact::{compact_from_message, decode_whole};
pub use error::{DecodeError, Problem};
pub use list_shard_info::list_shard_selector;
pub use message::{Message, for_each_field};
pub use registry::{Codec, codec, registered_types};
#[cfg(feature = "kind-codecs")]
pub use registry::{KindCodec, by_kind};
pub use status::{status_json, status_message_from_json, status_message_json};
