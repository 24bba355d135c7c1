//! Every `#[resource]` and `#[schema]` attribute, as the real server
//! reads it: validation, CEL rules, list and map types, the status and
//! scale subresources, printer columns, selectable fields, names,
//! deprecation, scope and versions.

use clientgo::crd::{
    CrdError, CrdInstallError, CrdInstallOptions, CustomResource, Schema, install_crds,
    merge_versions,
};
use clientgo::rest::discovery::{CachedDiscovery, DeferredRestMapper};
use clientgo::rest::scale::ScaleClient;
use clientgo::rest::{CreateOptions, Patch, PatchOptions};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support::server;

pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let versions = merge_versions([v1::Gadget::crd(), v2::Gadget::crd()], "v1");
    vec![
        Checked::crd(),
        Ruled::crd(),
        Listed::crd(),
        Scaled::crd(),
        Global::crd(),
        versions.unwrap(),
    ]
}

/// Value checks on fields.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "attributes.derive.test",
    version = "v1",
    kind = "Checked",
    namespaced
)]
pub(crate) struct CheckedSpec {
    #[schema(minimum = 1, maximum = 10)]
    bounded: i32,
    #[schema(minimum = 0, exclusive_minimum, multiple_of = 0.5)]
    positive: f64,
    #[schema(min_length = 2, max_length = 4, pattern = "^[a-z]+$")]
    word: String,
    #[schema(format = "uuid")]
    id: String,
    #[schema(values = ["fast", "slow"])]
    mode: String,
    #[schema(min_items = 1, max_items = 2)]
    few: Vec<i32>,
    #[schema(min_properties = 1, max_properties = 1)]
    one: std::collections::BTreeMap<String, String>,
    #[schema(nullable)]
    #[serde(default)]
    nullable: Option<String>,
}

fn checked() -> CheckedSpec {
    CheckedSpec {
        bounded: 5,
        positive: 1.5,
        word: "abc".into(),
        id: "7f3c0a56-4a5e-4c2b-9c1d-0c8c2a9f3b11".into(),
        mode: "fast".into(),
        few: vec![1],
        one: [("k".to_owned(), "v".to_owned())].into(),
        nullable: None,
    }
}

#[tokio::test]
async fn each_value_check_refuses_naming_its_field() {
    let Some(server) = server().await else { return };
    server.round_trip::<Checked>(checked()).await;
    server
        .round_trip::<Checked>(CheckedSpec {
            nullable: Some("x".into()),
            ..checked()
        })
        .await;
    // nullable keeps the null serde writes for None.
    let stored = server
        .send::<Checked>(serde_json::to_value(checked()).unwrap(), "")
        .await
        .unwrap();
    assert_eq!(stored["nullable"], Value::Null);
    assert!(stored.as_object().unwrap().contains_key("nullable"));
    let good = serde_json::to_value(checked()).unwrap();
    let cases: [(&str, Value, &str); 11] = [
        ("bounded", json!(0), "should be greater than or equal to 1"),
        ("bounded", json!(11), "should be less than or equal to 10"),
        ("positive", json!(0), "should be greater than 0"),
        ("positive", json!(0.3), "multiple of 0.5"),
        ("word", json!("a"), "at least 2 chars long"),
        ("word", json!("abcde"), "may not be more than 4 bytes"),
        ("word", json!("AB"), "should match"),
        ("id", json!("not-a-uuid"), "uuid"),
        ("mode", json!("medium"), "Unsupported value"),
        ("few", json!([]), "at least 1 items"),
        ("one", json!({}), "at least 1 properties"),
    ];
    for (field, value, message) in cases {
        let mut spec = good.clone();
        spec[field] = value;
        server
            .refused::<Checked>(spec, &[&format!("spec.{field}"), message])
            .await;
    }
}

/// CEL rules, with messages, field paths and reasons.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "attributes.derive.test",
    version = "v1",
    kind = "Ruled",
    namespaced
)]
#[serde(rename_all = "camelCase")]
#[schema(rule(
    rule = "self.minReplicas <= self.maxReplicas",
    message = "minReplicas must not exceed maxReplicas",
    field_path = ".minReplicas"
))]
#[schema(rule(
    rule = "self.name != 'forbidden'",
    message_expression = "'the name ' + self.name + ' is taken'",
    reason = "FieldValueForbidden"
))]
pub(crate) struct RuledSpec {
    min_replicas: i32,
    max_replicas: i32,
    #[schema(rule = "self.startsWith('r-')")]
    name: String,
    #[schema(rule(rule = "self == oldSelf", message = "immutable"))]
    fixed: String,
    #[schema(rule(rule = "string(self) != '0'", message = "a surge of zero"))]
    surge: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
}

#[tokio::test]
async fn cel_rules_are_compiled_and_enforced_by_the_server() {
    let Some(server) = server().await else { return };
    let spec = RuledSpec {
        min_replicas: 1,
        max_replicas: 2,
        name: "r-a".into(),
        fixed: "f".into(),
        surge: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1),
    };
    let created = server.round_trip::<Ruled>(spec.clone()).await;
    let good = serde_json::to_value(&spec).unwrap();
    let mut zero = good.clone();
    zero["surge"] = json!(0);
    server
        .refused::<Ruled>(zero, &["spec.surge", "a surge of zero"])
        .await;
    let mut inverted = good.clone();
    inverted["minReplicas"] = json!(3);
    server
        .refused::<Ruled>(
            inverted,
            &[
                "spec.minReplicas",
                "minReplicas must not exceed maxReplicas",
            ],
        )
        .await;
    let mut prefix = good.clone();
    prefix["name"] = json!("x");
    server
        .refused::<Ruled>(prefix, &["spec.name", "failed rule: self.startsWith('r-')"])
        .await;
    let mut taken = good;
    taken["name"] = json!("forbidden");
    let message = server
        .refused::<Ruled>(taken, &["the name forbidden is taken"])
        .await;
    // The rule fails before the prefix rule is reached? Both may be said.
    assert!(
        message.contains("Forbidden") || message.contains("forbidden"),
        "{message}"
    );
    // A transition rule: the field cannot change.
    let name = created.metadata.name.clone().unwrap();
    let patch = Patch::Merge(json!({"spec": {"fixed": "g"}}));
    let error = server
        .api::<Ruled>()
        .patch(&name, &PatchOptions::default(), &patch)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("immutable"), "{error}");

    // A rule naming no field, or one that does not parse, only the server
    // can refuse: install reports its message.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
    #[resource(
        group = "attributes.derive.test",
        version = "v1",
        kind = "BrokenRule",
        namespaced
    )]
    #[schema(rule = "self.noSuchField > 1")]
    struct BrokenRuleSpec {
        present: i32,
    }
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
    #[resource(
        group = "attributes.derive.test",
        version = "v1",
        kind = "BadSyntax",
        namespaced
    )]
    struct BadSyntaxSpec {
        #[schema(rule = "self >")]
        present: i32,
    }
    for (crd, expected) in [
        (BrokenRule::crd(), "undefined field 'noSuchField'"),
        (BadSyntax::crd(), "Syntax error"),
    ] {
        let error = install_crds(&server.client, &[crd], &CrdInstallOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(error, CrdInstallError::Apply { .. }), "{error}");
        assert!(error.to_string().contains(expected), "{error}");
    }
}

/// Kubernetes' list and map semantics.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "attributes.derive.test",
    version = "v1",
    kind = "Listed",
    namespaced
)]
pub(crate) struct ListedSpec {
    #[schema(list_type = "map", list_map_keys = ["name"])]
    ports: Vec<NamedPort>,
    #[schema(list_type = "atomic")]
    args: Vec<String>,
    #[schema(map_type = "atomic")]
    labels: std::collections::BTreeMap<String, String>,
    whole: Whole,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NamedPort {
    name: String,
    port: i32,
}

/// Compared whole.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[schema(map_type = "atomic")]
pub(crate) struct Whole {
    a: String,
}

#[tokio::test]
async fn list_and_map_types_are_the_servers() {
    let Some(server) = server().await else { return };
    let spec = ListedSpec {
        ports: vec![
            NamedPort {
                name: "http".into(),
                port: 80,
            },
            NamedPort {
                name: "https".into(),
                port: 443,
            },
        ],
        args: vec!["a".into(), "a".into()],
        labels: [("k".to_owned(), "v".to_owned())].into(),
        whole: Whole { a: "a".into() },
    };
    server.round_trip::<Listed>(spec).await;
    let duplicate = json!({"ports": [{"name": "x", "port": 1}, {"name": "x", "port": 2}], "args": [], "labels": {}, "whole": {"a": ""}});
    server
        .refused::<Listed>(duplicate, &["spec.ports[1]", "Duplicate"])
        .await;
    let crd = Listed::crd();
    let schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
    let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["ports"]["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(spec["labels"]["x-kubernetes-map-type"], "atomic");
    assert_eq!(spec["whole"]["x-kubernetes-map-type"], "atomic");
}

/// Status and scale subresources, printer columns, selectable fields,
/// names, categories and deprecation.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "attributes.derive.test",
    version = "v1",
    kind = "Scaled",
    plural = "scaleds",
    singular = "scaled",
    namespaced
)]
#[resource(
    status = "ScaledStatus",
    short_name = "sc",
    short_name = "scl",
    category = "derive-tests"
)]
#[resource(scale(
    spec_replicas_path = ".spec.replicas",
    status_replicas_path = ".status.replicas",
    label_selector_path = ".status.selector"
))]
#[resource(printer_column(
    name = "Replicas",
    json_path = ".spec.replicas",
    description = "asked for"
))]
#[resource(printer_column(
    name = "Color",
    type = "string",
    json_path = ".spec.color",
    priority = 1
))]
#[resource(printer_column(name = "Age", json_path = ".metadata.creationTimestamp", type = "date"))]
#[resource(selectable_field = ".spec.color")]
#[resource(deprecated = "attributes.derive.test/v1 Scaled is a test")]
pub(crate) struct ScaledSpec {
    replicas: i32,
    color: String,
}

#[derive(Schema, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScaledStatus {
    #[serde(default)]
    replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<String>,
    #[serde(default)]
    #[schema(list_type = "map", list_map_keys = ["type"])]
    conditions: Vec<Condition>,
}

#[tokio::test]
async fn subresources_columns_and_selectable_fields_work_on_the_server() {
    let Some(server) = server().await else { return };
    let created = server
        .round_trip::<Scaled>(ScaledSpec {
            replicas: 2,
            color: "red".into(),
        })
        .await;
    server
        .round_trip::<Scaled>(ScaledSpec {
            replicas: 1,
            color: "blue".into(),
        })
        .await;
    let name = created.metadata.name.clone().unwrap();
    let api = server.api::<Scaled>();

    // Status: the main endpoint ignores it; /status writes it.
    let mut with_status = created.clone();
    with_status.status = Some(ScaledStatus {
        replicas: 2,
        selector: Some("app=x".into()),
        conditions: vec![],
    });
    let replaced = api
        .replace(&name, &Default::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(replaced.status, None);
    let patch = Patch::Merge(json!({"status": {"replicas": 2, "selector": "app=x"}}));
    let patched = api
        .patch_status(&name, &PatchOptions::default(), &patch)
        .await
        .unwrap();
    assert_eq!(patched.status.as_ref().map(|s| s.replicas), Some(2));

    // Scale, through the scale client and discovery.
    let scales = ScaleClient::new(
        server.client.clone(),
        DeferredRestMapper::new(CachedDiscovery::new(server.client.clone())),
    );
    let scale = scales
        .get(
            "scaleds.attributes.derive.test",
            Some(&server.namespace),
            &name,
        )
        .await
        .unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(
        scale
            .status
            .as_ref()
            .and_then(|s| s.selector.clone())
            .as_deref(),
        Some("app=x")
    );
    scales
        .scale_to(
            "scaleds.attributes.derive.test",
            Some(&server.namespace),
            &name,
            5,
        )
        .await
        .unwrap();
    assert_eq!(api.get(&name).await.unwrap().spec.replicas, 5);

    // Printer columns, in the server's Table.
    let table: Value = server
        .client
        .get()
        .abs_path(format!(
            "/apis/attributes.derive.test/v1/namespaces/{}/scaleds/{name}",
            server.namespace
        ))
        .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .send()
        .await
        .unwrap();
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    // Age is the server's column only when a CRD names none: here it is named.
    assert_eq!(columns, ["Name", "Replicas", "Color", "Age"]);
    assert_eq!(table["rows"][0]["cells"][1], 5);
    assert_eq!(table["rows"][0]["cells"][2], "red");
    // The column's type came from the field's schema.
    let types: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(types[1], "integer");

    // Selectable fields: a field selector on .spec.color.
    let listed: Value = server
        .client
        .get()
        .abs_path(format!(
            "/apis/attributes.derive.test/v1/namespaces/{}/scaleds?fieldSelector=spec.color%3Dblue",
            server.namespace
        ))
        .send()
        .await
        .unwrap();
    let items = listed["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["spec"]["color"], "blue");

    // Names, categories and deprecation, as discovery and the CRD say.
    let resources: Value = server
        .client
        .get()
        .abs_path("/apis/attributes.derive.test/v1")
        .send()
        .await
        .unwrap();
    let scaled = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "scaleds")
        .unwrap()
        .clone();
    assert_eq!(scaled["shortNames"], json!(["sc", "scl"]));
    assert_eq!(scaled["categories"], json!(["derive-tests"]));
    assert_eq!(scaled["singularName"], "scaled");
    let version = &Scaled::crd().spec.versions[0];
    assert_eq!(
        version.deprecation_warning.as_deref(),
        Some("attributes.derive.test/v1 Scaled is a test")
    );

    // A condition list keyed by type.
    let conditions = Patch::Merge(json!({"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-29T12:00:00Z"},
        {"type": "Ready", "status": "False", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-29T12:00:00Z"}
    ]}}));
    let error = api
        .patch_status(&name, &PatchOptions::default(), &conditions)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Duplicate"), "{error}");
}

/// A cluster-scoped kind.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(group = "attributes.derive.test", version = "v1", kind = "Global")]
pub(crate) struct GlobalSpec {
    level: i32,
}

#[tokio::test]
async fn a_cluster_scoped_kind_has_no_namespace() {
    let Some(server) = server().await else { return };
    let read = server.round_trip::<Global>(GlobalSpec { level: 1 }).await;
    assert_eq!(read.metadata.namespace, None);
    assert_eq!(Global::crd().spec.scope, "Cluster");
}

/// Two versions of one kind, stored at v1 (the None conversion).
pub(crate) mod v1 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[resource(
        group = "attributes.derive.test",
        version = "v1",
        kind = "Gadget",
        namespaced
    )]
    pub(crate) struct GadgetSpec {
        pub(crate) size: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub(crate) color: Option<String>,
    }
}

pub(crate) mod v2 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[resource(
        group = "attributes.derive.test",
        version = "v2",
        kind = "Gadget",
        namespaced
    )]
    pub(crate) struct GadgetSpec {
        pub(crate) size: i32,
    }

    /// A v2 with a field v1 does not have: merging refuses it.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[resource(
        group = "attributes.derive.test",
        version = "v2",
        kind = "Gadget",
        root = "GadgetWithWeight",
        namespaced
    )]
    pub(crate) struct GadgetWithWeightSpec {
        pub(crate) size: i32,
        pub(crate) weight: i32,
    }
}

#[tokio::test]
async fn two_versions_round_trip_through_the_storage_version() {
    let Some(server) = server().await else { return };
    let written = server
        .round_trip::<v1::Gadget>(v1::GadgetSpec {
            size: 3,
            color: None,
        })
        .await;
    let name = written.metadata.name.clone().unwrap();
    let at_v2 = server.api::<v2::Gadget>().get(&name).await.unwrap();
    assert_eq!(at_v2.spec, v2::GadgetSpec { size: 3 });
    let created_v2 = server
        .api::<v2::Gadget>()
        .create(
            &CreateOptions::default(),
            &v2::Gadget::new("from-v2", v2::GadgetSpec { size: 4 }).in_namespace(&server.namespace),
        )
        .await
        .unwrap();
    assert_eq!(created_v2.spec.size, 4);
    let at_v1 = server.api::<v1::Gadget>().get("from-v2").await.unwrap();
    assert_eq!(
        at_v1.spec,
        v1::GadgetSpec {
            size: 4,
            color: None
        }
    );
    // Both versions list every object, whichever version wrote it.
    let list_v1 = server
        .api::<v1::Gadget>()
        .list(&Default::default())
        .await
        .unwrap();
    let list_v2 = server
        .api::<v2::Gadget>()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(list_v1.items.len(), 2);
    assert_eq!(list_v2.items.len(), 2);

    let crd = merge_versions([v1::Gadget::crd(), v2::Gadget::crd()], "v1").unwrap();
    assert_eq!(
        crd.spec.conversion.as_ref().map(|c| c.strategy.as_str()),
        Some("None")
    );
    let pruned = merge_versions([v1::Gadget::crd(), v2::GadgetWithWeight::crd()], "v1");
    assert!(
        matches!(&pruned, Err(CrdError::WouldPrune { field, .. }) if field == "spec.weight"),
        "{pruned:?}"
    );
}
