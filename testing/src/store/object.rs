//! [`StoredObject`], one stored version of an object, and [`ObjectKey`],
//! where it lives. A stored object owns its encodings: its JSON is
//! serialized once when the version is written ([`StoredObject::encode`]),
//! its protobuf message once, the first time a protobuf client asks (or at
//! write time when the store is told to).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use clientgo_apimachinery::{GroupResource, Status};
use clientgo_protobuf::KindCodec;
use serde_json::{Map, Value};

/// Where an object lives: its resource, namespace (empty for
/// cluster-scoped objects) and name. Keys order like etcd's, by resource,
/// then namespace, then name, so lists come out sorted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The resource (`deployments.apps`).
    pub resource: GroupResource,
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// A key.
    pub fn new(
        resource: GroupResource,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectKey {
            resource,
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.resource, self.name)
        } else {
            write!(f, "{} {}/{}", self.resource, self.namespace, self.name)
        }
    }
}

/// One stored version of an object: its JSON, serialized once when it was
/// written (so serving it costs no encoding), and the metadata that
/// selectors and preconditions read.
#[derive(Debug)]
pub struct StoredObject {
    /// Where it lives.
    pub key: ObjectKey,
    /// The revision that wrote this version (its resourceVersion).
    pub resource_version: u64,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The whole object as JSON, with this version's resourceVersion;
    /// `apiVersion` and `kind`, when set, come first.
    pub json: Arc<[u8]>,
    /// Where the type fields (`"apiVersion":…,"kind":…,`) end in `json`:
    /// 1 when it has none.
    type_meta_end: usize,
    /// The object's protobuf message, encoded the first time a protobuf
    /// client asks (or why it cannot be).
    pub(super) protobuf: OnceLock<Result<Bytes, String>>,
}

impl StoredObject {
    /// The object's JSON without `apiVersion` and `kind`, as the real
    /// server writes the items of a list of a built-in type: `{` followed
    /// by the returned slice.
    pub fn json_without_type_meta(&self) -> &[u8] {
        self.json.get(self.type_meta_end..).unwrap_or_default()
    }

    /// The object, parsed.
    pub fn to_value(&self) -> Result<Value, Status> {
        serde_json::from_slice(&self.json).map_err(|e| {
            Status::internal_error(&format!("stored object {} is not JSON: {e}", self.key))
        })
    }

    /// The version `revision` writes: stamps `metadata.resourceVersion`,
    /// reads the UID and labels, and serializes the object with its type
    /// fields first. With `protobuf_now`, also encodes its protobuf message
    /// when the kind has a codec.
    pub(crate) fn encode(
        key: ObjectKey,
        revision: u64,
        mut object: Value,
        protobuf_now: bool,
    ) -> Result<StoredObject, Status> {
        let metadata = metadata_mut(&mut object)?;
        metadata.insert(
            "resourceVersion".to_string(),
            Value::String(revision.to_string()),
        );
        let uid = string_field(metadata, "uid")?
            .unwrap_or_default()
            .to_string();
        let labels = labels_of(metadata)?;
        let codec = if protobuf_now {
            let field = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default();
            clientgo_protobuf::by_kind(field("apiVersion"), field("kind"))
        } else {
            None
        };
        let (json, type_meta_end) = encode_type_meta_first(object)
            .map_err(|e| Status::internal_error(&format!("encoding {key}: {e}")))?;
        let json: Arc<[u8]> = json.into();
        let stored = StoredObject {
            key,
            resource_version: revision,
            uid,
            labels,
            json,
            type_meta_end,
            protobuf: OnceLock::new(),
        };
        if let Some(codec) = codec {
            let _ = stored.to_protobuf(&codec);
        }
        Ok(stored)
    }

    /// The object's protobuf message (no envelope), encoded once per
    /// stored version.
    pub(crate) fn to_protobuf(&self, codec: &KindCodec) -> Result<Bytes, Status> {
        self.protobuf
            .get_or_init(|| {
                codec
                    .json_to_protobuf(&self.json)
                    .map(Bytes::from)
                    .map_err(|e| format!("cannot encode {} as protobuf: {e}", self.key))
            })
            .clone()
            .map_err(|why| Status::internal_error(&why))
    }
}

fn bad_request(message: String) -> Status {
    Status::bad_request(message)
}

/// The metadata object of a JSON object, created if absent.
pub(crate) fn metadata_mut(object: &mut Value) -> Result<&mut Map<String, Value>, Status> {
    let Value::Object(fields) = object else {
        return Err(bad_request(
            "the request body is not a JSON object".to_string(),
        ));
    };
    let metadata = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if metadata.is_null() {
        *metadata = Value::Object(Map::new());
    }
    metadata
        .as_object_mut()
        .ok_or_else(|| bad_request("metadata is not a JSON object".to_string()))
}

pub(crate) fn string_field<'a>(
    metadata: &'a Map<String, Value>,
    field: &str,
) -> Result<Option<&'a str>, Status> {
    match metadata.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => Ok(Some(value)),
        Some(other) => Err(bad_request(format!(
            "metadata.{field} must be a string, not {other}"
        ))),
    }
}

fn labels_of(metadata: &Map<String, Value>) -> Result<BTreeMap<String, String>, Status> {
    match metadata.get("labels") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(labels)) => labels
            .iter()
            .map(|(key, value)| match value {
                Value::String(value) => Ok((key.clone(), value.clone())),
                other => Err(bad_request(format!(
                    "metadata.labels[{key:?}] must be a string, not {other}"
                ))),
            })
            .collect(),
        Some(other) => Err(bad_request(format!(
            "metadata.labels must be an object, not {other}"
        ))),
    }
}

/// Serializes an object with `apiVersion` and `kind` first, so lists can
/// leave them out by slicing; returns the JSON and where they end (1 when
/// the object has neither): `{` followed by the JSON from there is the
/// object without them.
fn encode_type_meta_first(object: Value) -> Result<(Vec<u8>, usize), serde_json::Error> {
    let Value::Object(mut fields) = object else {
        return Ok((serde_json::to_vec(&object)?, 1));
    };
    let type_meta: Vec<(&str, Value)> = ["apiVersion", "kind"]
        .into_iter()
        .filter_map(|name| fields.remove(name).map(|value| (name, value)))
        .collect();
    let rest = serde_json::to_vec(&fields)?;
    let mut json = Vec::with_capacity(rest.len() + 64);
    json.push(b'{');
    for (name, value) in &type_meta {
        serde_json::to_writer(&mut json, name)?;
        json.push(b':');
        serde_json::to_writer(&mut json, value)?;
        json.push(b',');
    }
    if rest == b"{}" && !type_meta.is_empty() {
        // Nothing else: the last type field's comma goes.
        json.pop();
    }
    let type_meta_end = json.len();
    json.extend_from_slice(rest.get(1..).unwrap_or_default());
    Ok((json, type_meta_end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{` and the JSON after the type fields is the object without them,
    /// whatever the object holds.
    #[test]
    fn type_fields_come_first_and_slice_off() {
        for (object, bare) in [
            (
                serde_json::json!({"metadata": {"name": "a"}, "kind": "Pod", "apiVersion": "v1"}),
                serde_json::json!({"metadata": {"name": "a"}}),
            ),
            (
                serde_json::json!({"kind": "Pod", "apiVersion": "v1"}),
                serde_json::json!({}),
            ),
            (
                serde_json::json!({"metadata": {}}),
                serde_json::json!({"metadata": {}}),
            ),
            (serde_json::json!({}), serde_json::json!({})),
        ] {
            let (json, end) = encode_type_meta_first(object.clone()).unwrap();
            let whole: Value = serde_json::from_slice(&json).unwrap();
            assert_eq!(whole, object);
            let mut without = b"{".to_vec();
            without.extend_from_slice(&json[end..]);
            let without: Value = serde_json::from_slice(&without).unwrap();
            assert_eq!(without, bare, "{}", String::from_utf8_lossy(&json));
        }
    }
}
