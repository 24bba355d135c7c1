//! [`ObjectList`]: one page of a list response.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::{Deserialize, Deserializer, Serialize};

/// One page of a list response (`PodList`, `DeploymentList`, a custom
/// resource's list), typed by its items.
///
/// `items` may be `null` on the wire (some servers and proxies send that
/// for an empty page); it decodes as an empty vector.
///
/// ```
/// use clientgo_apimachinery::ObjectList;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let page: ObjectList<Pod> = serde_json::from_str(r#"{
///     "kind": "PodList", "apiVersion": "v1",
///     "metadata": {"resourceVersion": "1200", "continue": "next", "remainingItemCount": 3},
///     "items": [{"metadata": {"name": "a", "namespace": "default"}}]
/// }"#).unwrap();
/// assert_eq!(page.resource_version(), Some("1200"));
/// assert_eq!(page.continue_token(), Some("next"));
/// assert_eq!(page.remaining_item_count(), Some(3));
/// assert_eq!(page.items.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectList<K> {
    /// The list's `apiVersion`, when the server sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The list's `kind` (`PodList`), when the server sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The list metadata: resourceVersion, continue and remainingItemCount.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects of this page.
    #[serde(
        default = "Vec::new",
        deserialize_with = "null_as_empty",
        bound(deserialize = "K: Deserialize<'de>")
    )]
    pub items: Vec<K>,
}

impl<K: crate::Object> ObjectList<K> {
    /// Gives every item without `apiVersion` and `kind` the list's (its
    /// kind without `List`), as client-go does when it decodes a list of
    /// unstructured objects: the API server sends the items of a list of a
    /// built-in type without them. Typed items are left as they are.
    pub fn fill_item_types(&mut self) {
        let (Some(api_version), Some(kind)) = (&self.api_version, &self.kind) else {
            return;
        };
        for item in &mut self.items {
            item.fill_type_from_list(api_version, kind);
        }
    }
}

fn null_as_empty<'de, D, K>(deserializer: D) -> Result<Vec<K>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de>,
{
    Ok(Option::<Vec<K>>::deserialize(deserializer)?.unwrap_or_default())
}

impl<K> Default for ObjectList<K> {
    fn default() -> Self {
        ObjectList {
            api_version: None,
            kind: None,
            metadata: ListMeta::default(),
            items: Vec::new(),
        }
    }
}

impl<K> ObjectList<K> {
    /// The resourceVersion at which this list was served: the point a watch
    /// should continue from after the last page.
    pub fn resource_version(&self) -> Option<&str> {
        self.metadata
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty())
    }

    /// The token for the next page; `None` on the last page.
    pub fn continue_token(&self) -> Option<&str> {
        self.metadata
            .continue_
            .as_deref()
            .filter(|token| !token.is_empty())
    }

    /// How many items remain after this page, when the server knows.
    pub fn remaining_item_count(&self) -> Option<i64> {
        self.metadata.remaining_item_count
    }

    /// Iterates over the items.
    pub fn iter(&self) -> std::slice::Iter<'_, K> {
        self.items.iter()
    }
}

impl<K> IntoIterator for ObjectList<K> {
    type Item = K;
    type IntoIter = std::vec::IntoIter<K>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, K> IntoIterator for &'a ObjectList<K> {
    type Item = &'a K;
    type IntoIter = std::slice::Iter<'a, K>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn dynamic_items_without_type_fields_get_the_lists() {
        let mut page: ObjectList<crate::DynamicObject> = serde_json::from_str(
            r#"{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[
            {"metadata":{"name":"bare"}},
            {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"own"}},
            {"kind":"Half","metadata":{"name":"half"}}]}"#,
        )
        .unwrap();
        page.fill_item_types();
        let types: Vec<_> = page
            .iter()
            .map(|item| (item.api_version.as_deref(), item.kind.as_deref()))
            .collect();
        assert_eq!(
            types,
            [
                (Some("v1"), Some("Pod")),
                (Some("example.com/v1"), Some("Widget")),
                (None, Some("Half")),
            ]
        );
    }

    #[test]
    fn decodes_a_page_with_all_list_metadata() {
        let page: ObjectList<ConfigMap> = serde_json::from_str(
            r#"{"kind":"ConfigMapList","apiVersion":"v1",
            "metadata":{"resourceVersion":"77","continue":"tok","remainingItemCount":10},
            "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#,
        )
        .unwrap();
        assert_eq!(page.kind.as_deref(), Some("ConfigMapList"));
        assert_eq!(page.api_version.as_deref(), Some("v1"));
        assert_eq!(page.resource_version(), Some("77"));
        assert_eq!(page.continue_token(), Some("tok"));
        assert_eq!(page.remaining_item_count(), Some(10));
        let names: Vec<_> = page.iter().filter_map(|cm| cm.name()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn null_or_missing_items_and_empty_tokens_read_as_absent() {
        let page: ObjectList<ConfigMap> = serde_json::from_str(
            r#"{"metadata":{"resourceVersion":"5","continue":""},"items":null}"#,
        )
        .unwrap();
        assert!(page.items.is_empty());
        assert_eq!(page.continue_token(), None);
        let page: ObjectList<ConfigMap> = serde_json::from_str(r#"{}"#).unwrap();
        assert!(page.items.is_empty());
        assert_eq!(page.resource_version(), None);
    }

    #[test]
    fn a_bad_item_is_an_error_not_a_panic() {
        let result: Result<ObjectList<ConfigMap>, _> =
            serde_json::from_str(r#"{"items":[{"metadata":{"name":5}}]}"#);
        assert!(result.is_err());
    }

    #[test]
    fn encodes_and_decodes_back() {
        let page = ObjectList {
            api_version: Some("v1".into()),
            kind: Some("ConfigMapList".into()),
            metadata: ListMeta {
                resource_version: Some("9".into()),
                ..Default::default()
            },
            items: vec![ConfigMap::default()],
        };
        let json = serde_json::to_string(&page).unwrap();
        let back: ObjectList<ConfigMap> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, page);
        let owned: Vec<ConfigMap> = back.into_iter().collect();
        assert_eq!(owned.len(), 1);
    }
}
