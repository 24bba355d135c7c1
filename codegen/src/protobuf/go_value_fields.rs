//! Which fields Go holds as values with `omitempty`: the API server's
//! protobuf always carries them (zero included) while its JSON leaves them
//! out when zero, so a decoder has to read their zero value as "absent"
//! to give the struct a JSON decode gives. Protobuf files do not say
//! which fields those are; the Go types do.
//!
//! The list is learnt from the Go sources of k8s.io/api, apimachinery,
//! apiextensions-apiserver and kube-aggregator (`--go-source`) and kept
//! as a small text file, one field per line (`<message> <number>
//! <name>`), which the generator reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::error::ProtobufGenError;

/// `(full message name, field number)` of every Go value field with
/// `omitempty`.
pub(crate) type ValueFields = BTreeSet<(String, u32)>;

/// Reads the list file.
pub(crate) fn read_list(path: &Path) -> Result<ValueFields, ProtobufGenError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProtobufGenError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut fields = ValueFields::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        let number = parts.get(1).and_then(|n| n.parse::<u32>().ok());
        match (parts.first(), number) {
            (Some(message), Some(number)) => {
                fields.insert(((*message).to_string(), number));
            }
            _ => {
                return Err(ProtobufGenError::Proto {
                    file: path.to_path_buf(),
                    line: index + 1,
                    problem: "not `<message> <number> <name>`".into(),
                });
            }
        }
    }
    Ok(fields)
}

/// Learns the list from Go sources: `go_package` (`k8s.io/api/core/v1`)
/// → proto package, and `roots` pairs of a Go module path
/// (`k8s.io/api`) and its checkout. Returns the file's text.
pub(crate) fn learn(
    packages: &[(String, String)],
    roots: &[(String, PathBuf)],
) -> Result<String, ProtobufGenError> {
    let mut lines = BTreeSet::new();
    for (go_package, proto_package) in packages {
        // The longest module the package is in (k8s.io/api is a prefix of
        // k8s.io/apimachinery's packages but not their module).
        let Some((module, root)) = roots
            .iter()
            .filter(|(module, _)| {
                go_package == module || go_package.starts_with(&format!("{module}/"))
            })
            .max_by_key(|(module, _)| module.len())
        else {
            continue;
        };
        let dir = root.join(go_package[module.len()..].trim_start_matches('/'));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "go")
                    && !p.to_string_lossy().ends_with("_test.go")
                    && !p.to_string_lossy().ends_with(".pb.go")
            })
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|source| ProtobufGenError::Read {
                path: file.clone(),
                source,
            })?;
            for (message, number, name) in value_fields(&text) {
                lines.insert(format!("{proto_package}.{message} {number} {name}"));
            }
        }
    }
    let mut text = String::from(
        "# Go value fields with `omitempty` (zero = absent in JSON), by proto message and\n\
         # field number. Learnt from the Go types by clientgo-protobuf-gen --go-source.\n",
    );
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

/// `(struct, protobuf field number, proto name)` of the value fields with
/// `omitempty` in one Go file.
fn value_fields(text: &str) -> Vec<(String, u32, String)> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("type ") {
            current = rest
                .strip_suffix(" struct {")
                .filter(|name| !name.contains(' '))
                .map(str::to_string);
            continue;
        }
        if line == "}" {
            current = None;
            continue;
        }
        let Some(message) = &current else {
            continue;
        };
        let trimmed = line.trim();
        let Some((declaration, tag)) = trimmed.split_once('`') else {
            continue;
        };
        let parts: Vec<&str> = declaration.split_whitespace().collect();
        let [_, go_type] = parts[..] else {
            continue;
        };
        let Some(protobuf) = tag_value(tag, "protobuf") else {
            continue;
        };
        let json = tag_value(tag, "json").unwrap_or_default();
        let omitempty = json.split(',').skip(1).any(|o| o == "omitempty");
        let is_value =
            !go_type.starts_with('*') && !go_type.starts_with("[]") && !go_type.starts_with("map[");
        let mut spec = protobuf.split(',');
        let number = spec.nth(1).and_then(|n| n.parse::<u32>().ok());
        let name = protobuf
            .split(',')
            .find_map(|part| part.strip_prefix("name="))
            .unwrap_or_default();
        if let (true, true, Some(number)) = (omitempty, is_value, number) {
            found.push((message.clone(), number, name.to_string()));
        }
    }
    found
}

/// The value of `key:"…"` in a Go struct tag.
fn tag_value<'a>(tag: &'a str, key: &str) -> Option<&'a str> {
    let start = tag.find(&format!("{key}:\""))? + key.len() + 2;
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_fields_with_omitempty_are_found() {
        let go = "type PodSpec struct {\n\
            \tNodeName string `json:\"nodeName,omitempty\" protobuf:\"bytes,10,opt,name=nodeName\"`\n\
            \tReplicas *int32 `json:\"replicas,omitempty\" protobuf:\"varint,1,opt,name=replicas\"`\n\
            \tContainers []Container `json:\"containers\" protobuf:\"bytes,2,rep,name=containers\"`\n\
            \tName string `json:\"name\" protobuf:\"bytes,3,opt,name=name\"`\n\
            \tHostPort int32 `json:\"hostPort,omitempty\" protobuf:\"varint,4,opt,name=hostPort\"`\n\
            }\n";
        assert_eq!(
            value_fields(go),
            vec![
                ("PodSpec".to_string(), 10, "nodeName".to_string()),
                ("PodSpec".to_string(), 4, "hostPort".to_string()),
            ]
        );
    }
}
