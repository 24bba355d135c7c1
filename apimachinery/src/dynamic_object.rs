//! [`DynamicObject`]: any Kubernetes object, with typed metadata and every
//! other field kept as JSON.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::api_resource::ApiResource;
use crate::decode::DecodeError;
use crate::group_version::{GroupVersionKind, GroupVersionParseError};
use crate::object::Object;

/// Any Kubernetes object: `apiVersion`, `kind` and `metadata` decoded, and
/// every other top-level field (`spec`, `status`, `data`, …) kept as JSON in
/// [`data`](DynamicObject::data). The counterpart of client-go's
/// `unstructured.Unstructured`, for resources with no Rust type.
///
/// Decoding and re-encoding keeps every field: the result is the same JSON
/// value. Keys inside `metadata` that `ObjectMeta` does not have (a newer
/// server's fields, or the list metadata of a `Status`) are kept in
/// [`extra_metadata`](DynamicObject::extra_metadata) and written back.
/// Two things are normalised: a metadata field that is `null` reads as
/// absent, and an empty `metadata` object is not written back.
///
/// ```
/// use clientgo_apimachinery::{DynamicObject, Object};
///
/// let object: DynamicObject = serde_json::from_str(r#"{
///     "apiVersion": "stable.example.com/v1", "kind": "CronTab",
///     "metadata": {"name": "nightly", "namespace": "jobs"},
///     "spec": {"cronSpec": "0 3 * * *"}
/// }"#).unwrap();
/// assert_eq!(object.name(), Some("nightly"));
/// assert_eq!(object.data["spec"]["cronSpec"], "0 3 * * *");
/// assert_eq!(object.group_version_kind().unwrap().unwrap().kind, "CronTab");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DynamicObject {
    /// `apiVersion`; `None` when the object had none.
    pub api_version: Option<String>,
    /// `kind`; `None` when the object had none.
    pub kind: Option<String>,
    /// The object's metadata.
    pub metadata: ObjectMeta,
    /// Keys of `metadata` that `ObjectMeta` has no field for, as JSON.
    pub extra_metadata: Map<String, Value>,
    /// Every other top-level field. It must not hold `apiVersion`, `kind`
    /// or `metadata` keys; they are skipped when encoding.
    pub data: Map<String, Value>,
}

impl DynamicObject {
    /// An empty object of the given resource's kind, named `name`.
    pub fn new(name: impl Into<String>, resource: &ApiResource) -> Self {
        DynamicObject {
            api_version: Some(resource.api_version().to_string()),
            kind: Some(resource.kind().to_string()),
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            extra_metadata: Map::new(),
            data: Map::new(),
        }
    }

    /// Sets the namespace.
    pub fn within(mut self, namespace: impl Into<String>) -> Self {
        self.metadata.namespace = Some(namespace.into());
        self
    }

    /// Sets a top-level field (`spec`, `data`, …).
    pub fn with_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.data.insert(name.into(), value);
        self
    }

    /// The group, version and kind, if both `apiVersion` and `kind` are set.
    pub fn group_version_kind(&self) -> Option<Result<GroupVersionKind, GroupVersionParseError>> {
        let api_version = self.api_version.as_deref()?;
        let kind = self.kind.as_deref()?;
        Some(GroupVersionKind::from_api_version_kind(api_version, kind))
    }

    /// Converts a typed object into a dynamic one.
    pub fn from_typed<K: Serialize>(object: &K) -> Result<Self, DecodeError> {
        let what = std::any::type_name::<K>();
        let value = serde_json::to_value(object)
            .map_err(|error| DecodeError::data(what, error.to_string()))?;
        serde_json::from_value(value).map_err(|error| {
            DecodeError::data(format!("DynamicObject from {what}"), error.to_string())
        })
    }

    /// Converts this object into a typed one; the error names the target
    /// type and what did not fit.
    pub fn try_parse<K: DeserializeOwned>(&self) -> Result<K, DecodeError> {
        let what = std::any::type_name::<K>();
        let bytes =
            serde_json::to_vec(self).map_err(|error| DecodeError::data(what, error.to_string()))?;
        crate::decode::from_json_slice(&bytes, what)
    }
}

impl Object for DynamicObject {
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }

    fn object_type(&self) -> Option<(&str, &str)> {
        Some((self.api_version.as_deref()?, self.kind.as_deref()?))
    }

    fn fill_type_from_list(&mut self, list_api_version: &str, list_kind: &str) {
        let unset = |field: &Option<String>| field.as_deref().is_none_or(str::is_empty);
        if unset(&self.api_version) && unset(&self.kind) && !list_api_version.is_empty() {
            self.api_version = Some(list_api_version.to_string());
            self.kind = Some(
                list_kind
                    .strip_suffix("List")
                    .unwrap_or(list_kind)
                    .to_string(),
            );
        }
    }
}

const API_VERSION: &str = "apiVersion";
const KIND: &str = "kind";
const METADATA: &str = "metadata";

impl Serialize for DynamicObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(api_version) = &self.api_version {
            map.serialize_entry(API_VERSION, api_version)?;
        }
        if let Some(kind) = &self.kind {
            map.serialize_entry(KIND, kind)?;
        }
        if !self.extra_metadata.is_empty() {
            map.serialize_entry(
                METADATA,
                &MetadataWithExtra {
                    metadata: &self.metadata,
                    extra: &self.extra_metadata,
                },
            )?;
        } else if self.metadata != ObjectMeta::default() {
            map.serialize_entry(METADATA, &self.metadata)?;
        }
        for (name, value) in &self.data {
            if name != API_VERSION && name != KIND && name != METADATA {
                map.serialize_entry(name, value)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for DynamicObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DynamicObjectVisitor;

        impl<'de> Visitor<'de> for DynamicObjectVisitor {
            type Value = DynamicObject;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes object (a JSON object)")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut object = DynamicObject::default();
                let mut seen_metadata = false;
                while let Some(key) = access.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        API_VERSION => object.api_version = access.next_value()?,
                        KIND => object.kind = access.next_value()?,
                        METADATA => {
                            if seen_metadata {
                                return Err(de::Error::duplicate_field(METADATA));
                            }
                            seen_metadata = true;
                            let (metadata, extra) = access.next_value_seed(MetadataSeed)?;
                            object.metadata = metadata;
                            object.extra_metadata = extra;
                        }
                        _ => {
                            let value: Value = access.next_value()?;
                            object.data.insert(key.into_owned(), value);
                        }
                    }
                }
                Ok(object)
            }
        }

        deserializer.deserialize_map(DynamicObjectVisitor)
    }
}

/// The JSON keys of `ObjectMeta`. Keys outside this list go to
/// `extra_metadata`; the unit test `object_meta_keys_are_complete` checks
/// the list against what k8s-openapi's `ObjectMeta` writes.
const OBJECT_META_KEYS: [&str; 15] = [
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// Writes `ObjectMeta`'s fields and the extra keys as one JSON object.
#[derive(Serialize)]
struct MetadataWithExtra<'a> {
    #[serde(flatten)]
    metadata: &'a ObjectMeta,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
}

/// Decodes the `metadata` value: known keys stream into `ObjectMeta`,
/// other keys are collected as JSON, and `null` means empty metadata.
struct MetadataSeed;

impl<'de> de::DeserializeSeed<'de> for MetadataSeed {
    type Value = (ObjectMeta, Map<String, Value>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(MetadataVisitor)
    }
}

struct MetadataVisitor;

impl<'de> Visitor<'de> for MetadataVisitor {
    type Value = (ObjectMeta, Map<String, Value>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("object metadata (a JSON object or null)")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((ObjectMeta::default(), Map::new()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((ObjectMeta::default(), Map::new()))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let mut extra = Map::new();
        let metadata = ObjectMeta::deserialize(KnownKeysOnly {
            access,
            extra: &mut extra,
        })?;
        Ok((metadata, extra))
    }
}

/// A map that shows `ObjectMeta` only the keys it knows, setting the
/// others aside in `extra`.
struct KnownKeysOnly<'e, A> {
    access: A,
    extra: &'e mut Map<String, Value>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for KnownKeysOnly<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        while let Some(key) = self.access.next_key::<String>()? {
            if OBJECT_META_KEYS.contains(&key.as_str()) {
                return seed
                    .deserialize(de::value::StringDeserializer::<A::Error>::new(key))
                    .map(Some);
            }
            let value: Value = self.access.next_value()?;
            self.extra.insert(key, value);
        }
        Ok(None)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        self.access.next_value_seed(seed)
    }
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for KnownKeysOnly<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    #[test]
    fn round_trips_every_field() {
        let input = json!({
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "nightly", "namespace": "jobs", "labels": {"a": "b"},
                         "resourceVersion": "7", "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"cronSpec": "0 3 * * *", "replicas": 2, "nested": [1, {"x": null}]},
            "status": {"active": true}
        });
        let object: DynamicObject = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(object.name(), Some("nightly"));
        assert_eq!(object.namespace(), Some("jobs"));
        assert_eq!(object.resource_version(), Some("7"));
        assert_eq!(object.data.len(), 2);
        assert_eq!(serde_json::to_value(&object).unwrap(), input);
    }

    #[test]
    fn objects_without_metadata_or_kind_round_trip() {
        for input in [
            json!({"kind": "ListOptions", "apiVersion": "v1", "limit": 5}),
            json!({"type": "ADDED", "object": {"kind": "X"}}),
            json!({}),
        ] {
            let object: DynamicObject = serde_json::from_value(input.clone()).unwrap();
            assert_eq!(serde_json::to_value(&object).unwrap(), input);
        }
    }

    #[test]
    fn unknown_metadata_keys_are_kept() {
        let input = json!({
            "kind": "Status",
            "metadata": {"resourceVersion": "5", "continue": "tok", "remainingItemCount": 4,
                         "shardInfo": {"selector": "x"}, "name": "n"}
        });
        let object: DynamicObject = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(object.resource_version(), Some("5"));
        assert_eq!(object.name(), Some("n"));
        assert_eq!(object.extra_metadata.len(), 3);
        assert_eq!(object.extra_metadata["continue"], "tok");
        assert_eq!(serde_json::to_value(&object).unwrap(), input);
        let text = serde_json::to_string(&object).unwrap();
        assert_eq!(text.matches("\"resourceVersion\"").count(), 1, "{text}");
    }

    #[test]
    fn object_meta_keys_are_complete() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
            ManagedFieldsEntry, OwnerReference, Time,
        };
        let time = Time("2024-01-01T00:00:00Z".parse().unwrap());
        let full = ObjectMeta {
            annotations: Some(Default::default()),
            creation_timestamp: Some(time.clone()),
            deletion_grace_period_seconds: Some(1),
            deletion_timestamp: Some(time),
            finalizers: Some(vec![]),
            generate_name: Some(String::new()),
            generation: Some(1),
            labels: Some(Default::default()),
            managed_fields: Some(vec![ManagedFieldsEntry::default()]),
            name: Some(String::new()),
            namespace: Some(String::new()),
            owner_references: Some(vec![OwnerReference::default()]),
            resource_version: Some(String::new()),
            self_link: Some(String::new()),
            uid: Some(String::new()),
        };
        let written = serde_json::to_value(&full).unwrap();
        let mut keys: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, OBJECT_META_KEYS);
    }

    #[test]
    fn null_metadata_reads_as_empty() {
        let object: DynamicObject =
            serde_json::from_value(json!({"kind": "X", "metadata": null})).unwrap();
        assert_eq!(object.metadata, ObjectMeta::default());
    }

    #[test]
    fn rejects_non_objects_and_bad_metadata() {
        for bad in [
            json!([]),
            json!("text"),
            json!({"metadata": {"name": 1}}),
            json!({"kind": 5}),
        ] {
            assert!(
                serde_json::from_value::<DynamicObject>(bad.clone()).is_err(),
                "accepted {bad}"
            );
        }
        assert!(serde_json::from_str::<DynamicObject>(r#"{"metadata":{},"metadata":{}}"#).is_err());
    }

    #[test]
    fn converts_to_and_from_typed_objects() {
        let config_map = ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            data: Some([("k".to_string(), "v".to_string())].into()),
            ..Default::default()
        };
        let dynamic = DynamicObject::from_typed(&config_map).unwrap();
        assert_eq!(dynamic.kind.as_deref(), Some("ConfigMap"));
        assert_eq!(dynamic.api_version.as_deref(), Some("v1"));
        assert_eq!(dynamic.data["data"]["k"], "v");
        let back: ConfigMap = dynamic.try_parse().unwrap();
        assert_eq!(back, config_map);
    }

    #[test]
    fn parse_errors_name_the_target_type() {
        let dynamic = DynamicObject::default().with_field("data", json!({"k": 1}));
        let err = dynamic.try_parse::<ConfigMap>().unwrap_err();
        assert!(err.what.contains("ConfigMap"), "{}", err.what);
        assert_eq!(err.kind, crate::decode::DecodeErrorKind::Data);
    }

    #[test]
    fn built_for_a_resource() {
        let resource = ApiResource::namespaced(
            GroupVersionKind::new("stable.example.com", "v1", "CronTab"),
            "crontabs",
        );
        let object = DynamicObject::new("nightly", &resource)
            .within("jobs")
            .with_field("spec", json!({"cronSpec": "* * * * *"}));
        assert_eq!(
            serde_json::to_value(&object).unwrap(),
            json!({
                "apiVersion": "stable.example.com/v1",
                "kind": "CronTab",
                "metadata": {"name": "nightly", "namespace": "jobs"},
                "spec": {"cronSpec": "* * * * *"}
            })
        );
        assert_eq!(
            object.group_version_kind().unwrap().unwrap(),
            resource.group_version_kind()
        );
        assert!(DynamicObject::default().group_version_kind().is_none());
    }

    #[test]
    fn reserved_keys_in_data_are_not_written_twice() {
        let mut object = DynamicObject {
            kind: Some("X".into()),
            ..Default::default()
        };
        assert!(object.extra_metadata.is_empty());
        object.data.insert("kind".into(), json!("Y"));
        object.data.insert("metadata".into(), json!({"name": "z"}));
        let text = serde_json::to_string(&object).unwrap();
        assert_eq!(text, r#"{"kind":"X"}"#);
    }
}
