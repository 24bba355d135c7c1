//! The protobuf codecs of `clientgo-protobuf`: reads Kubernetes'
//! `generated.proto` files and k8s-openapi's source and generates, for
//! every k8s-openapi type that has a message, a `Message` implementation
//! that decodes straight into the struct and encodes straight from it.
//!
//! The inputs:
//! - the `.proto` files (`../shared/proto/k8s.io`): field numbers and
//!   protobuf types;
//! - k8s-openapi's source, every version module (`v1_33` … `v1_37`): which
//!   structs and fields exist in which version (fields missing from a
//!   version are put behind a `cfg`), and each field's Rust name by its
//!   JSON name;
//! - the list of Go value fields with `omitempty`
//!   (`codegen/data/protobuf-value-fields.txt`), whose zero value is read
//!   back as absent.
//!
//! A proto field of a generated type that cannot be placed in the struct
//! is an error (the decoder would drop data); a proto field no k8s-openapi
//! version has is listed in the summary.

mod error;
mod files;
mod generate;
mod go_value_fields;
mod k8s_openapi_source;
mod proto;

use std::path::{Path, PathBuf};

pub use error::ProtobufGenError;

use crate::generate::GeneratedFile;

/// What [`generate_protobuf`] reads.
#[derive(Debug, Clone)]
pub struct ProtobufGenOptions {
    /// The directory holding the `.proto` files (searched recursively).
    pub proto_dir: PathBuf,
    /// k8s-openapi 0.29's source directory (the one with `src/v1_36`).
    pub k8s_openapi_src: PathBuf,
    /// The list of Go value fields with `omitempty`.
    pub value_fields: PathBuf,
    /// The command that regenerates the output, for the files' header.
    pub command: String,
}

/// What was generated and what was left out.
#[derive(Debug, Clone)]
pub struct ProtobufSummary {
    /// Types given a `Message` implementation.
    pub messages: usize,
    /// Of those, resource types registered for `codec::<K>()`.
    pub resources: usize,
    /// Proto fields of those types that no k8s-openapi version has
    /// (`k8s.io.api.core.v1.Pod.field (number)`).
    pub absent_fields: Vec<String>,
}

/// Generates `clientgo-protobuf`'s `src/generated/` files; see the module
/// documentation.
pub fn generate_protobuf(
    options: &ProtobufGenOptions,
) -> Result<(Vec<GeneratedFile>, ProtobufSummary), ProtobufGenError> {
    let files = proto::read_dir(&options.proto_dir)?;
    let structs = k8s_openapi_source::read(&options.k8s_openapi_src)?;
    let value_fields = go_value_fields::read_list(&options.value_fields)?;
    let (generated, summary) =
        generate::generate(&files, &structs, &value_fields, &options.command)?;
    Ok((
        generated,
        ProtobufSummary {
            messages: summary.messages,
            resources: summary.resources,
            absent_fields: summary.absent_fields,
        },
    ))
}

/// Learns the list of Go value fields with `omitempty` from Go sources:
/// `go_roots` pairs a Go module path (`k8s.io/api`) with its checkout.
/// Returns the list file's text.
pub fn learn_value_fields(
    proto_dir: &Path,
    go_roots: &[(String, PathBuf)],
) -> Result<String, ProtobufGenError> {
    let mut packages = Vec::new();
    for path in files::with_extension(proto_dir, "proto")? {
        let text = std::fs::read_to_string(&path).map_err(|source| ProtobufGenError::Read {
            path: path.clone(),
            source,
        })?;
        let file = proto::parse(&path, &text)?;
        let go_package = text.lines().find_map(|line| {
            line.trim()
                .strip_prefix("option go_package = \"")
                .and_then(|rest| rest.strip_suffix("\";"))
                .map(str::to_string)
        });
        if let Some(go_package) = go_package {
            packages.push((go_package, file.package));
        }
    }
    go_value_fields::learn(&packages, go_roots)
}

/// k8s-openapi's source directory as Cargo resolved it for the workspace
/// in `workspace` (through `cargo metadata`); `None` when Cargo cannot
/// say.
pub fn k8s_openapi_source_dir(workspace: &Path) -> Option<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(workspace)
        .args(["metadata", "--format-version", "1"])
        .output()
        .ok()?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let manifest = metadata["packages"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == "k8s-openapi")?["manifest_path"]
        .as_str()?;
    Path::new(manifest).parent().map(Path::to_path_buf)
}
