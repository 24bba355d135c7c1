//! `merge_patch`: a JSON merge patch (RFC 7386), the rule of merge
//! patches, strategic merge patches here, and server-side apply's merge.

use serde_json::Value;

/// Applies a JSON merge patch: objects merge key by key, `null` removes a
/// key, anything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_fields) = target {
        for (key, value) in patch_fields {
            if value.is_null() {
                target_fields.remove(key);
            } else {
                merge_patch(
                    target_fields.entry(key.clone()).or_insert(Value::Null),
                    value,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut target = json!({"a": "b", "c": {"d": "e", "f": "g"}, "list": [1, 2]});
        merge_patch(
            &mut target,
            &json!({"a": "z", "c": {"f": null}, "list": [3], "new": {"x": 1}}),
        );
        assert_eq!(
            target,
            json!({"a": "z", "c": {"d": "e"}, "list": [3], "new": {"x": 1}})
        );
        let mut scalar = json!("x");
        merge_patch(&mut scalar, &json!({"a": 1}));
        assert_eq!(scalar, json!({"a": 1}));
    }
}
