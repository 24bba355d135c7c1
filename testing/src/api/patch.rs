//! Patch formats: JSON merge patch (RFC 7386, in `util::merge_patch`) and
//! JSON patch (RFC 6902).
//!
//! Strategic merge patch is applied as a JSON merge patch: lists are
//! replaced rather than merged by key. That is a simplification of the
//! real server, documented where the server routes it.

use clientgo_apimachinery::Status;
use serde_json::Value;

pub(crate) use crate::util::merge_patch::merge_patch;

/// The patch types the server accepts, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json` (applied as a merge patch).
    StrategicMerge,
    /// `application/apply-patch+yaml` (server-side apply; JSON bodies only,
    /// applied as a merge patch, creating the object when missing).
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type` header value.
    pub(crate) fn from_content_type(content_type: &str) -> Option<Self> {
        let media_type = content_type.split(';').next().unwrap_or_default().trim();
        match media_type {
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/json-patch+json" => Some(PatchType::Json),
            "application/strategic-merge-patch+json" => Some(PatchType::StrategicMerge),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                Some(PatchType::Apply)
            }
            _ => None,
        }
    }
}

fn invalid(message: &str) -> Status {
    Status::failure(
        422,
        clientgo_apimachinery::StatusReason::Invalid,
        format!("the JSON patch could not be applied: {message}"),
    )
}

/// Splits a JSON pointer into unescaped tokens (`~1` is `/`, `~0` is `~`).
fn pointer_tokens(pointer: &str) -> Result<Vec<String>, Status> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(invalid(&format!(
            "path {pointer:?} does not start with '/'"
        )));
    };
    Ok(rest
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// The parent container of a pointer and the last token.
fn parent<'a>(document: &'a mut Value, pointer: &str) -> Result<(&'a mut Value, String), Status> {
    let mut tokens = pointer_tokens(pointer)?;
    let Some(last) = tokens.pop() else {
        return Err(invalid("the root cannot be the target of this operation"));
    };
    let mut current = document;
    for token in &tokens {
        current = match current {
            Value::Object(fields) => fields
                .get_mut(token)
                .ok_or_else(|| invalid(&format!("path {pointer:?} does not exist")))?,
            Value::Array(items) => {
                let index: usize = token
                    .parse()
                    .map_err(|_| invalid(&format!("{token:?} in {pointer:?} is not an index")))?;
                items.get_mut(index).ok_or_else(|| {
                    invalid(&format!("index {index} in {pointer:?} is out of range"))
                })?
            }
            _ => return Err(invalid(&format!("path {pointer:?} goes through a scalar"))),
        };
    }
    Ok((current, last))
}

fn get<'a>(document: &'a Value, pointer: &str) -> Result<&'a Value, Status> {
    document
        .pointer(pointer)
        .ok_or_else(|| invalid(&format!("path {pointer:?} does not exist")))
}

fn add(document: &mut Value, pointer: &str, value: Value) -> Result<(), Status> {
    if pointer.is_empty() {
        *document = value;
        return Ok(());
    }
    let (container, last) = parent(document, pointer)?;
    match container {
        Value::Object(fields) => {
            fields.insert(last, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if last == "-" {
                items.len()
            } else {
                last.parse()
                    .map_err(|_| invalid(&format!("{last:?} in {pointer:?} is not an index")))?
            };
            if index > items.len() {
                return Err(invalid(&format!(
                    "index {index} in {pointer:?} is out of range"
                )));
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(invalid(&format!("path {pointer:?} goes through a scalar"))),
    }
}

fn remove(document: &mut Value, pointer: &str) -> Result<Value, Status> {
    let (container, last) = parent(document, pointer)?;
    match container {
        Value::Object(fields) => fields
            .remove(&last)
            .ok_or_else(|| invalid(&format!("path {pointer:?} does not exist"))),
        Value::Array(items) => {
            let index: usize = last
                .parse()
                .map_err(|_| invalid(&format!("{last:?} in {pointer:?} is not an index")))?;
            if index >= items.len() {
                return Err(invalid(&format!(
                    "index {index} in {pointer:?} is out of range"
                )));
            }
            Ok(items.remove(index))
        }
        _ => Err(invalid(&format!("path {pointer:?} goes through a scalar"))),
    }
}

/// Applies a JSON patch (a list of add, remove, replace, move, copy and
/// test operations), all or nothing.
pub(crate) fn json_patch(target: &mut Value, patch: &Value) -> Result<(), Status> {
    let Value::Array(operations) = patch else {
        return Err(Status::bad_request(
            "a JSON patch must be a list of operations",
        ));
    };
    let mut document = target.clone();
    for operation in operations {
        let field = |name: &str| operation.get(name);
        let path = field("path")
            .and_then(Value::as_str)
            .ok_or_else(|| Status::bad_request("every JSON patch operation needs a \"path\""))?;
        let value = || {
            field("value").cloned().ok_or_else(|| {
                Status::bad_request(format!("operation on {path:?} needs a \"value\""))
            })
        };
        let from = || {
            field("from").and_then(Value::as_str).ok_or_else(|| {
                Status::bad_request(format!("operation on {path:?} needs a \"from\""))
            })
        };
        match field("op").and_then(Value::as_str) {
            Some("add") => add(&mut document, path, value()?)?,
            Some("remove") => {
                remove(&mut document, path)?;
            }
            Some("replace") => {
                remove(&mut document, path)?;
                add(&mut document, path, value()?)?;
            }
            Some("move") => {
                let moved = remove(&mut document, from()?)?;
                add(&mut document, path, moved)?;
            }
            Some("copy") => {
                let copied = get(&document, from()?)?.clone();
                add(&mut document, path, copied)?;
            }
            Some("test") => {
                if *get(&document, path)? != value()? {
                    return Err(invalid(&format!("test of {path:?} failed")));
                }
            }
            other => {
                return Err(Status::bad_request(format!(
                    "unknown JSON patch operation {other:?}"
                )));
            }
        }
    }
    *target = document;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json; charset=utf-8"),
            Some(PatchType::Json)
        );
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json"),
            Some(PatchType::StrategicMerge)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml"),
            Some(PatchType::Apply)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
    }

    #[test]
    fn json_patch_operations() {
        let mut target = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"items": [1, 2, 3]}});
        json_patch(
            &mut target,
            &json!([
                {"op": "test", "path": "/metadata/labels/a", "value": "1"},
                {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
                {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
                {"op": "remove", "path": "/spec/items/0"},
                {"op": "add", "path": "/spec/items/-", "value": 4},
                {"op": "copy", "from": "/spec/items/0", "path": "/spec/first"},
                {"op": "move", "from": "/spec/first", "path": "/spec/moved"}
            ]),
        )
        .unwrap();
        assert_eq!(
            target,
            json!({"metadata": {"labels": {"a": "9", "b/c": "2"}}, "spec": {"items": [2, 3, 4], "moved": 2}})
        );
    }

    #[test]
    fn json_patch_is_all_or_nothing() {
        let original = json!({"a": 1});
        let mut target = original.clone();
        let err = json_patch(
            &mut target,
            &json!([{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 1}]),
        )
        .unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(target, original);
        for bad in [
            json!({"op": "add"}),
            json!([{"op": "add", "value": 1}]),
            json!([{"op": "explode", "path": "/a"}]),
            json!([{"op": "remove", "path": "/missing"}]),
            json!([{"op": "add", "path": "no-slash", "value": 1}]),
            json!([{"op": "add", "path": "/a/b", "value": 1}]),
        ] {
            assert!(json_patch(&mut target, &bad).is_err(), "{bad}");
        }
    }
}
