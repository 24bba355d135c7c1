//! Every upstream round-trip fixture (`../shared/fixtures/
//! api-testdata-v1.36`: the same object as `.json` and `.pb`) whose type
//! k8s-openapi has decodes from protobuf to the object its JSON gives, and
//! encodes back to bytes that decode to it again. Skips when `../shared`
//! is absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;

use clientgo_apimachinery::Unknown;

fn fixtures() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/api-testdata-v1.36");
    dir.is_dir().then_some(dir)
}

#[test]
fn every_fixture_decodes_to_its_json_twin_and_round_trips() {
    let Some(dir) = fixtures() else {
        println!("skipped: ../shared/fixtures/api-testdata-v1.36 is absent");
        return;
    };
    let mut pbs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pb"))
        .collect();
    pbs.sort();
    let (mut checked, mut without_type, mut unreadable) = (0, Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for pb in &pbs {
        let bytes = std::fs::read(pb).unwrap();
        let json = std::fs::read(pb.with_extension("json")).unwrap();
        let envelope = Unknown::decode(&bytes).unwrap();
        if let Some(check) = non_resource(envelope.api_version, envelope.kind) {
            match check(envelope.raw, &json) {
                Ok(()) => checked += 1,
                Err(problem) => failures.push(format!("{}: {problem}", pb.display())),
            }
            continue;
        }
        let Some(codec) = clientgo_protobuf::by_kind(envelope.api_version, envelope.kind) else {
            without_type.push(format!("{}/{}", envelope.api_version, envelope.kind));
            continue;
        };
        let name = pb.file_name().unwrap().to_string_lossy().into_owned();
        // A few fixtures hold what k8s-openapi cannot read from JSON either
        // (`null` for a required time); there is nothing to compare with.
        let Ok(expected) = codec.normalize_json(&json) else {
            unreadable.push(name);
            continue;
        };
        match codec.protobuf_to_json(envelope.raw) {
            Ok(decoded) if decoded == expected => {}
            Ok(decoded) => {
                failures.push(format!(
                    "{name}: decodes to a different object:\n{}",
                    diff(&expected, &decoded)
                ));
                continue;
            }
            Err(error) => {
                failures.push(format!("{name}: {error}"));
                continue;
            }
        }
        let encoded = codec.json_to_protobuf(&json).unwrap();
        match codec.protobuf_to_json(&encoded) {
            Ok(again) if again == expected => checked += 1,
            Ok(again) => failures.push(format!(
                "{name}: re-encoded differs:\n{}",
                diff(&expected, &again)
            )),
            Err(error) => failures.push(format!("{name}: re-encoded does not decode: {error}")),
        }
    }
    println!(
        "{checked} fixtures round-trip; {} have no k8s-openapi type: {without_type:?}; \
         k8s-openapi cannot read the JSON of {unreadable:?}",
        without_type.len()
    );
    assert!(
        unreadable.len() <= 5,
        "too many unreadable JSON fixtures: {unreadable:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} fail:\n{}",
        failures.len(),
        pbs.len(),
        failures.join("\n")
    );
    assert!(checked >= 95, "only {checked} fixtures were checked");
}

/// Fixture types k8s-openapi has as structs but not as resources (so
/// `by_kind` does not know them): checked through their `Message` directly.
type Check = fn(&[u8], &[u8]) -> Result<(), String>;

fn non_resource(api_version: &str, kind: &str) -> Option<Check> {
    match (api_version, kind) {
        ("v1", "DeleteOptions") => {
            Some(compare::<k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions>)
        }
        _ => None,
    }
}

/// Decodes `raw` as `T` and compares it with `json` read as `T` (type
/// fields aside: protobuf carries them in the envelope), then checks the
/// re-encoded bytes decode to the same.
fn compare<T>(raw: &[u8], json: &[u8]) -> Result<(), String>
where
    T: clientgo_protobuf::Message + serde::Serialize + serde::de::DeserializeOwned,
{
    let untyped = |value: &T| {
        let mut value = serde_json::to_value(value).map_err(|e| e.to_string())?;
        if let Some(object) = value.as_object_mut() {
            object.remove("apiVersion");
            object.remove("kind");
        }
        Ok::<_, String>(value)
    };
    let decoded = T::decode(raw).map_err(|e| e.to_string())?;
    let expected: T = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    let (got, want) = (untyped(&decoded)?, untyped(&expected)?);
    if got != want {
        return Err(format!(
            "decodes to a different object:\n{}",
            diff(&want, &got)
        ));
    }
    let again = T::decode(&decoded.encode()).map_err(|e| e.to_string())?;
    if untyped(&again)? != want {
        return Err("re-encoded differs".to_string());
    }
    Ok(())
}

/// The first few paths where two JSON values differ.
fn diff(expected: &serde_json::Value, actual: &serde_json::Value) -> String {
    let mut out = Vec::new();
    walk("", expected, actual, &mut out);
    out.truncate(8);
    out.join("\n")
}

fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                walk(
                    &format!("{path}.{key}"),
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), p, q, out);
            }
        }
        _ if a != b => out.push(format!("  {path}: expected {a}, got {b}")),
        _ => {}
    }
}

/// Every fixture's metadata, read straight into a compact entry's packed
/// metadata, is what the generated `ObjectMeta` decoder reads (managedFields
/// aside, which the entry keeps in its body). The fixtures fill every
/// metadata field with random values.
#[test]
fn every_fixtures_packed_metadata_is_what_the_object_meta_decoder_reads() {
    use clientgo_apimachinery::protobuf_wire::WireReader;
    use clientgo_apimachinery::{Compact, Protobuf};
    use clientgo_protobuf::Message;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    let Some(dir) = fixtures() else {
        println!("skipped: ../shared/fixtures/api-testdata-v1.36 is absent");
        return;
    };
    let (mut checked, mut with_labels) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pb") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let envelope = Unknown::decode(&bytes).unwrap();
        let mut expected = ObjectMeta::default();
        let mut reader = WireReader::new(envelope.raw);
        let mut metadata_found = false;
        let mut not_metadata = false;
        while let Some((number, value)) = reader.next_field().unwrap() {
            if let (1, clientgo_apimachinery::protobuf_wire::WireValue::Bytes(meta)) =
                (number, value)
            {
                metadata_found = true;
                not_metadata |= expected.merge_from(WireReader::new(meta)).is_err();
            }
        }
        // Types whose field 1 is not an ObjectMeta (options, reviews).
        if !metadata_found || not_metadata {
            continue;
        }
        expected.managed_fields = None;
        // The metadata is field 1 of every resource message: the type asked
        // for only decides how the body is decoded later.
        let entry: Compact<ConfigMap, Protobuf> =
            clientgo_protobuf::compact_from_message(envelope.raw).unwrap();
        assert_eq!(entry.to_object_meta(), expected, "{}", path.display());
        with_labels += usize::from(expected.labels.as_ref().is_some_and(|l| !l.is_empty()));
        checked += 1;
    }
    println!("{checked} fixtures' metadata compared, {with_labels} with labels");
    assert!(checked >= 90, "only {checked} fixtures were checked");
    assert!(with_labels >= 10, "only {with_labels} fixtures have labels");
}
