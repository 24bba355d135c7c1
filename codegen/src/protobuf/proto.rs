//! Reading Kubernetes' `generated.proto` files: packages, top-level
//! messages and their fields. Only what go-to-protobuf writes is
//! understood (proto2, `optional`/`repeated`/`map<,>` fields, no nested
//! messages, enums or oneofs); anything else is an error naming the line.

use std::path::Path;

use super::error::ProtobufGenError;

/// One `.proto` file.
#[derive(Debug, Clone)]
pub(crate) struct ProtoFile {
    /// `k8s.io.api.core.v1`.
    pub(crate) package: String,
    /// Its messages, in file order.
    pub(crate) messages: Vec<ProtoMessage>,
}

/// One message.
#[derive(Debug, Clone)]
pub(crate) struct ProtoMessage {
    /// `Pod`.
    pub(crate) name: String,
    /// Its fields, in file order.
    pub(crate) fields: Vec<ProtoField>,
}

/// How a field repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Label {
    /// `optional`.
    Optional,
    /// `repeated`.
    Repeated,
    /// `map<string, V>`: the value type.
    Map(String),
}

/// One field.
#[derive(Debug, Clone)]
pub(crate) struct ProtoField {
    /// How it repeats.
    pub(crate) label: Label,
    /// The type as written (`string`, `PodSpec`,
    /// `.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta`); for a map,
    /// `string` (the key).
    pub(crate) ty: String,
    /// The field's name (Kubernetes uses the JSON name).
    pub(crate) name: String,
    /// The field number.
    pub(crate) number: u32,
}

/// Every `generated.proto` under `root`, sorted by path.
pub(crate) fn read_dir(root: &Path) -> Result<Vec<ProtoFile>, ProtobufGenError> {
    super::files::with_extension(root, "proto")?
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).map_err(|source| ProtobufGenError::Read {
                path: path.clone(),
                source,
            })?;
            parse(path, &text)
        })
        .collect()
}

/// Parses one file's text.
pub(crate) fn parse(file: &Path, text: &str) -> Result<ProtoFile, ProtobufGenError> {
    let problem = |line: usize, problem: String| ProtobufGenError::Proto {
        file: file.to_path_buf(),
        line,
        problem,
    };
    let mut package = None;
    let mut messages = Vec::new();
    let mut current: Option<ProtoMessage> = None;
    let mut in_comment = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let mut line = raw.trim();
        if in_comment {
            match line.find("*/") {
                Some(end) => {
                    in_comment = false;
                    line = line[end + 2..].trim();
                }
                None => continue,
            }
        }
        // Whichever comment starts first decides: `//` hides a `/*`
        // after it, and the other way round.
        let line_comment = line.find("//");
        let block_comment = line.find("/*");
        match (line_comment, block_comment) {
            (Some(slashes), Some(block)) if slashes < block => line = line[..slashes].trim(),
            (_, Some(block)) => {
                if !line[block..].contains("*/") {
                    in_comment = true;
                }
                line = line[..block].trim();
            }
            (Some(slashes), None) => line = line[..slashes].trim(),
            (None, None) => {}
        }
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("package ") {
            package = Some(rest.trim_end_matches(';').trim().to_string());
        } else if line.starts_with("syntax ")
            || line.starts_with("import ")
            || line.starts_with("option ")
        {
        } else if let Some(rest) = line.strip_prefix("message ") {
            if current.is_some() {
                return Err(problem(line_no, "nested messages are not supported".into()));
            }
            let name = rest.trim_end_matches('{').trim();
            current = Some(ProtoMessage {
                name: name.to_string(),
                fields: Vec::new(),
            });
            if rest.trim_end().ends_with('}') {
                return Err(problem(line_no, "a one-line message".into()));
            }
        } else if line == "}" {
            match current.take() {
                Some(message) => messages.push(message),
                None => return Err(problem(line_no, "a `}` outside a message".into())),
            }
        } else if let Some(message) = current.as_mut() {
            message
                .fields
                .push(parse_field(line).map_err(|p| problem(line_no, p))?);
        } else {
            return Err(problem(line_no, format!("unexpected `{line}`")));
        }
    }
    if current.is_some() {
        return Err(problem(
            text.lines().count(),
            "a message is not closed".into(),
        ));
    }
    let package = package.ok_or_else(|| problem(1, "no package".into()))?;
    Ok(ProtoFile { package, messages })
}

/// `optional string name = 1;`, `repeated X items = 2;`,
/// `map<string, string> labels = 11;`.
fn parse_field(line: &str) -> Result<ProtoField, String> {
    let body = line
        .strip_suffix(';')
        .ok_or_else(|| format!("a field without `;`: `{line}`"))?;
    let (declaration, number) = body
        .split_once('=')
        .ok_or_else(|| format!("a field without a number: `{line}`"))?;
    let number: u32 = number
        .trim()
        .parse()
        .map_err(|_| format!("a field number that is not a number: `{line}`"))?;
    let declaration = declaration.trim();
    let (label, ty, name) = if let Some(rest) = declaration.strip_prefix("map<") {
        let (types, name) = rest
            .split_once('>')
            .ok_or_else(|| format!("an unclosed map type: `{line}`"))?;
        let (key, value) = types
            .split_once(',')
            .ok_or_else(|| format!("a map type without a value: `{line}`"))?;
        (
            Label::Map(value.trim().to_string()),
            key.trim().to_string(),
            name.trim().to_string(),
        )
    } else {
        let parts: Vec<&str> = declaration.split_whitespace().collect();
        let [label, ty, name] = parts[..] else {
            return Err(format!("not `label type name`: `{line}`"));
        };
        let label = match label {
            "optional" => Label::Optional,
            "repeated" => Label::Repeated,
            other => return Err(format!("the label `{other}` is not supported")),
        };
        (label, ty.to_string(), name.to_string())
    };
    Ok(ProtoField {
        label,
        ty,
        name,
        number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_every_shape_are_read() {
        let text = "syntax = \"proto2\";\npackage k8s.io.api.core.v1;\n/* a\n comment */\n\
                    // A pod.\nmessage Pod {\n  // its metadata\n  optional .k8s.io.x.ObjectMeta metadata = 1;\n\
                    repeated string names = 2;\n  map<string, Quantity> limits = 3;\n}\n";
        let file = parse(Path::new("t.proto"), text).unwrap();
        assert_eq!(file.package, "k8s.io.api.core.v1");
        let fields = &file.messages[0].fields;
        assert_eq!(fields.len(), 3);
        assert_eq!(fields[0].ty, ".k8s.io.x.ObjectMeta");
        assert_eq!(fields[1].label, Label::Repeated);
        assert_eq!(fields[2].label, Label::Map("Quantity".into()));
        assert_eq!(fields[2].name, "limits");
        assert_eq!(fields[2].number, 3);
    }

    #[test]
    fn what_is_not_understood_names_the_line() {
        for bad in [
            "package p;\nmessage A {\n  required string a = 1;\n}\n",
            "package p;\nmessage A {\n  optional string a;\n}\n",
            "package p;\nmessage A {\n  message B {\n",
            "package p;\nenum E {\n",
            "package p;\nmessage A {\n  optional string a = x;\n}\n",
        ] {
            let error = parse(Path::new("bad.proto"), bad).unwrap_err().to_string();
            assert!(error.starts_with("bad.proto:"), "{error}");
        }
    }
}
