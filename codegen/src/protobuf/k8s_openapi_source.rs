//! Reading k8s-openapi's source: which structs each Kubernetes version
//! module has, their fields, and the JSON name of each field (from the
//! `"hostIP" => Field::Key_host_ip` lines of their `Deserialize`
//! impls). k8s-openapi's code is generated and regular, so a line reader
//! is enough; what it does not recognise it leaves out, and the generator
//! then refuses the proto fields it cannot place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ProtobufGenError;

/// The oldest and newest minor versions k8s-openapi 0.29 has.
pub(crate) const MINORS: std::ops::RangeInclusive<u32> = 33..=37;

/// One struct in one version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RustStruct {
    /// JSON name → Rust field name.
    pub(crate) fields: BTreeMap<String, String>,
    /// Whether it implements `k8s_openapi::Resource` (a top-level kind).
    pub(crate) is_resource: bool,
    /// A `pub struct Name(pub serde_json::Value)`: how k8s-openapi holds
    /// an object with no properties (its proto message has no fields).
    pub(crate) opaque: bool,
    /// Whether it derives `Default` (all but a few with required times).
    pub(crate) has_default: bool,
    /// Rust field name → its type as written (`crate::…::Time`), in
    /// declaration order.
    pub(crate) types: Vec<(String, String)>,
}

/// Every struct of every version: type path (`api::core::v1::Pod`) →
/// minor version → struct.
pub(crate) type Structs = BTreeMap<String, BTreeMap<u32, RustStruct>>;

/// Reads `src/v1_<minor>/` for every supported minor under k8s-openapi's
/// root directory.
pub(crate) fn read(root: &Path) -> Result<Structs, ProtobufGenError> {
    let mut structs = Structs::new();
    for minor in MINORS {
        let dir = root.join("src").join(format!("v1_{minor}"));
        let files: Vec<PathBuf> = super::files::with_extension(&dir, "rs")?
            .into_iter()
            .filter(|path| path.file_name().is_some_and(|name| name != "mod.rs"))
            .collect();
        if files.is_empty() {
            return Err(ProtobufGenError::K8sOpenapiSource(format!(
                "{} has no .rs files",
                dir.display()
            )));
        }
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|source| ProtobufGenError::Read {
                path: file.clone(),
                source,
            })?;
            let Some((name, parsed)) = parse(&text) else {
                continue;
            };
            let module: Vec<String> = file
                .parent()
                .and_then(|p| p.strip_prefix(&dir).ok())
                .map(|p| {
                    p.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let path = format!("{}::{name}", module.join("::"));
            structs.entry(path).or_default().insert(minor, parsed);
        }
    }
    Ok(structs)
}

/// The struct a k8s-openapi file defines (a plain `pub struct Name {`,
/// not generic), with its JSON-named fields.
pub(crate) fn parse(text: &str) -> Option<(String, RustStruct)> {
    let mut name = None;
    let mut rust_fields = Vec::new();
    let mut in_struct = false;
    let mut parsed = RustStruct::default();
    for line in text.lines() {
        if line.starts_with("#[derive(") && line.contains("Default") && name.is_none() {
            parsed.has_default = true;
        }
        if let Some(rest) = line.strip_prefix("pub struct ") {
            if let Some(candidate) = rest.strip_suffix("(pub crate::serde_json::Value);") {
                name = Some(candidate.to_string());
                parsed.opaque = true;
                continue;
            }
            let candidate = rest.strip_suffix(" {")?;
            if candidate.contains('<') || name.is_some() {
                return None;
            }
            name = Some(candidate.to_string());
            in_struct = true;
        } else if in_struct {
            if line == "}" {
                in_struct = false;
            } else if let Some((field, ty)) = line
                .trim()
                .strip_prefix("pub ")
                .and_then(|rest| rest.split_once(':'))
            {
                rust_fields.push(field.trim().to_string());
                parsed.types.push((
                    field.trim().to_string(),
                    ty.trim().trim_end_matches(',').to_string(),
                ));
            }
        } else if let Some((json, rest)) = line.trim().split_once("\" => Field::Key_") {
            let json = json.trim_start_matches('"');
            let rust = rest.trim_end_matches(',');
            if rust_fields.iter().any(|f| f == rust) {
                parsed.fields.insert(json.to_string(), rust.to_string());
            }
        } else if line.starts_with("impl crate::Resource for ") {
            parsed.is_resource = true;
        }
    }
    Some((name?, parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_by_their_json_names() {
        let text = "#[derive(Default)]\npub struct PodStatus {\n    /// doc\n    pub host_ip: Option<String>,\n\n    pub type_: String,\n}\n\
                    impl crate::Resource for PodStatus {}\n\
                    fn f() { match x {\n    \"hostIP\" => Field::Key_host_ip,\n    \"type\" => Field::Key_type_,\n    \"apiVersion\" => Field::Key_api_version,\n} }\n";
        let (name, parsed) = parse(text).unwrap();
        assert_eq!(name, "PodStatus");
        assert!(parsed.is_resource);
        assert_eq!(parsed.fields.len(), 2, "apiVersion is not a struct field");
        assert_eq!(parsed.fields["hostIP"], "host_ip");
        assert_eq!(parsed.fields["type"], "type_");
    }

    #[test]
    fn generic_and_enum_types_are_left_out() {
        assert!(parse("pub struct List<T> {\n}\n").is_none());
        assert!(parse("pub enum IntOrString {\n}\n").is_none());
        let (name, opaque) = parse("pub struct Spec(pub crate::serde_json::Value);\n").unwrap();
        assert_eq!(name, "Spec");
        assert!(opaque.opaque);
    }
}
