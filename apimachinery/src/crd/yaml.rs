//! [`to_yaml`]: a manifest as YAML for `kubectl apply -f`, as
//! controller-gen and kube-rs's `crdgen` print them.

use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;

/// `value` (a CRD, or any object) as a YAML document: block style, keys
/// in serde's order, strings quoted where YAML would read them as
/// something else.
pub fn to_yaml(value: &impl Serialize) -> Result<String, serde_json::Error> {
    let value = serde_json::to_value(value)?;
    let mut out = String::new();
    match &value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_list(&mut out, items, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    Ok(out)
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        let _ = write!(out, "{:indent$}{}:", "", key_text(key));
        write_value(out, value, indent);
    }
}

fn write_list(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        let _ = write!(out, "{:indent$}-", "");
        match item {
            Value::Object(map) if !map.is_empty() => {
                // The first key on the dash's line, the rest below it.
                let mut first = true;
                for (key, value) in map {
                    if first {
                        let _ = write!(out, " {}:", key_text(key));
                        first = false;
                    } else {
                        let _ = write!(out, "{:width$}{}:", "", key_text(key), width = indent + 2);
                    }
                    write_value(out, value, indent + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_list(out, inner, indent + 2);
            }
            scalar => {
                let _ = writeln!(out, " {}", scalar_text(scalar));
            }
        }
    }
}

fn write_value(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, map, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_list(out, items, indent);
        }
        scalar => {
            let _ = writeln!(out, " {}", scalar_text(scalar));
        }
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) if plain(text) => text.clone(),
        // A JSON string is a YAML double-quoted scalar.
        Value::String(_) => value.to_string(),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

fn key_text(key: &str) -> String {
    if plain(key) {
        key.to_owned()
    } else {
        Value::String(key.to_owned()).to_string()
    }
}

/// Whether YAML reads `text` unquoted as this same string.
fn plain(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    let Some(first) = text.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && !WORDS.contains(&text.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_style_with_quotes_where_needed() {
        let value = serde_json::json!({
            "kind": "CustomResourceDefinition",
            "spec": {"names": {"shortNames": ["ct", "yes"]}, "empty": {}, "none": []},
            "versions": [{"name": "v1", "served": true}, "x"],
            "pattern": "^a+$",
            "n": 3
        });
        let yaml = to_yaml(&value).unwrap_or_default();
        let expected = "kind: CustomResourceDefinition\n\"n\": 3\npattern: \"^a+$\"\nspec:\n  empty: {}\n  names:\n    shortNames:\n    - ct\n    - \"yes\"\n  none: []\nversions:\n- name: v1\n  served: true\n- x\n";
        assert_eq!(yaml, expected);
    }
}
