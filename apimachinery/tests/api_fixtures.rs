//! Decodes the Kubernetes API fixtures (a real object of every built-in
//! type, from `../shared/fixtures/api-testdata/` next to the project root)
//! into `DynamicObject` and re-encodes them without loss, and decodes a few
//! into their k8s-openapi types.
//!
//! The fixtures are not part of this repository. When the folder is absent
//! the tests print a notice and pass without checking anything; set
//! `CLIENTGO_SHARED_DIR` to point at another copy of `shared/`.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;

use clientgo_apimachinery::{DynamicObject, Object, from_json_slice};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde_json::Value;

fn fixtures_dir() -> Option<PathBuf> {
    let shared = match std::env::var_os("CLIENTGO_SHARED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let dir = shared.join("fixtures/api-testdata");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "notice: skipping API fixture tests: {} does not exist",
            dir.display()
        );
        None
    }
}

fn read(dir: &std::path::Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"))
}

#[test]
fn every_fixture_round_trips_through_dynamic_object() {
    let Some(dir) = fixtures_dir() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() > 100,
        "expected the full fixture set, found {} files in {}",
        files.len(),
        dir.display()
    );

    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path).unwrap();
        let original: Value = serde_json::from_slice(&bytes).unwrap();
        let object: DynamicObject = match from_json_slice(&bytes, &name) {
            Ok(object) => object,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let encoded = serde_json::to_value(&object).unwrap();
        if encoded != original {
            failures.push(format!(
                "{name}: re-encoded value differs\n  original: {original}\n  encoded:  {encoded}"
            ));
        }
        // What the metadata accessors see must be what the file says.
        if let Some(name_in_file) = original.pointer("/metadata/name").and_then(Value::as_str)
            && object.name() != Some(name_in_file)
        {
            failures.push(format!(
                "{name}: name {:?} != {name_in_file:?}",
                object.name()
            ));
        }
        if let Some(kind) = original.get("kind").and_then(Value::as_str)
            && object.kind.as_deref() != Some(kind)
        {
            failures.push(format!("{name}: kind {:?} != {kind:?}", object.kind));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    println!("{} fixtures round-tripped", files.len());
}

#[test]
fn pod_fixture_decodes_into_its_type() {
    let Some(dir) = fixtures_dir() else { return };
    let bytes = read(&dir, "core.v1.Pod.json");
    let pod: Pod = from_json_slice(&bytes, "Pod").unwrap();
    assert_eq!(pod.name(), Some("nameValue"));
    assert_eq!(pod.namespace(), Some("namespaceValue"));
    assert_eq!(pod.resource_version(), Some("resourceVersionValue"));
    assert_eq!(pod.labels().get("labelsKey"), Some("labelsValue"));
    assert!(pod.deletion_timestamp().is_some());
    let spec = pod.spec.as_ref().expect("the fixture has a spec");
    assert!(!spec.containers.is_empty());
    // The typed form and the dynamic form agree on what they both hold.
    let dynamic: DynamicObject = from_json_slice(&bytes, "Pod").unwrap();
    assert_eq!(dynamic.metadata, pod.metadata);
    let reparsed: Pod = dynamic.try_parse().unwrap();
    assert_eq!(reparsed, pod);
}

#[test]
fn deployment_fixture_decodes_into_its_type() {
    let Some(dir) = fixtures_dir() else { return };
    let bytes = read(&dir, "apps.v1.Deployment.json");
    let deployment: Deployment = from_json_slice(&bytes, "Deployment").unwrap();
    assert_eq!(deployment.name(), Some("nameValue"));
    assert_eq!(deployment.owner_references().len(), 1);
    let spec = deployment.spec.as_ref().expect("the fixture has a spec");
    assert!(spec.replicas.is_some());
    assert!(deployment.status.is_some());
}

#[test]
fn config_map_fixture_decodes_into_its_type() {
    let Some(dir) = fixtures_dir() else { return };
    let bytes = read(&dir, "core.v1.ConfigMap.json");
    let config_map: ConfigMap = from_json_slice(&bytes, "ConfigMap").unwrap();
    assert_eq!(config_map.immutable, Some(true));
    assert_eq!(
        config_map
            .data
            .as_ref()
            .and_then(|d| d.get("dataKey"))
            .map(String::as_str),
        Some("dataValue")
    );
    let binary = config_map
        .binary_data
        .as_ref()
        .and_then(|d| d.get("binaryDataKey"))
        .expect("binaryData in the fixture");
    assert_eq!(binary.0, vec![3u8]);
    assert_eq!(config_map.finalizers(), ["finalizersValue".to_string()]);
}
