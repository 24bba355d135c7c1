//! Every enum representation serde has, alone, optional, nested and
//! flattened.

use clientgo::crd::{CustomResource, Schema};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::server;

pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![Enums::crd(), FlattenedEnums::crd()]
}

/// One field per representation.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "enums.derive.test",
    version = "v1",
    kind = "Enums",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EnumsSpec {
    unit: Color,
    /// None is written as null: the server drops it.
    optional_unit: Option<Color>,
    external: External,
    mixed: Mixed,
    internal: Internal,
    adjacent: Adjacent,
    untagged_objects: UntaggedObjects,
    untagged_scalars: UntaggedScalars,
    untagged_mixed: UntaggedMixed,
    many: Vec<Mixed>,
}

/// A color.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Color {
    /// The sky.
    Blue,
    Red,
    #[serde(rename = "GREEN")]
    Green,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum External {
    Text(String),
    Number(i64),
    Point { x: i32, y: i32 },
    Pair(i32, String),
    Empty {},
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Mixed {
    Nothing,
    Also,
    Some(String),
    Fields { a: i32 },
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub(crate) enum Internal {
    Git {
        url: String,
        branch_name: Option<String>,
    },
    Oci {
        image: String,
        #[serde(default)]
        insecure: bool,
    },
    Inline(InlineSource),
    None,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct InlineSource {
    text: String,
    /// Same name as Git's url, other type: kept as any value.
    url: i32,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", content = "c")]
pub(crate) enum Adjacent {
    Count(u32),
    Name(String),
    Point { x: i32 },
    Unit,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum UntaggedObjects {
    ByName { name: String },
    BySelector { selector: String, limit: i32 },
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum UntaggedScalars {
    Number(i64),
    Text(String),
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum UntaggedMixed {
    Flag(bool),
    Object { a: String },
    List(Vec<String>),
    Text(String),
}

fn good_spec() -> EnumsSpec {
    EnumsSpec {
        unit: Color::Blue,
        optional_unit: None,
        external: External::Text("t".into()),
        mixed: Mixed::Nothing,
        internal: Internal::Git {
            url: "https://x".into(),
            branch_name: None,
        },
        adjacent: Adjacent::Count(3),
        untagged_objects: UntaggedObjects::ByName { name: "n".into() },
        untagged_scalars: UntaggedScalars::Number(1),
        untagged_mixed: UntaggedMixed::Flag(true),
        many: vec![],
    }
}

#[tokio::test]
async fn every_variant_of_every_representation_round_trips() {
    let Some(server) = server().await else { return };
    let good = good_spec();
    let variants: Vec<EnumsSpec> = vec![
        good.clone(),
        EnumsSpec {
            unit: Color::Green,
            optional_unit: Some(Color::Red),
            ..good.clone()
        },
        EnumsSpec {
            external: External::Number(5),
            mixed: Mixed::Also,
            ..good.clone()
        },
        EnumsSpec {
            external: External::Point { x: 1, y: 2 },
            mixed: Mixed::Some("s".into()),
            ..good.clone()
        },
        EnumsSpec {
            external: External::Pair(1, "p".into()),
            mixed: Mixed::Fields { a: 1 },
            ..good.clone()
        },
        EnumsSpec {
            external: External::Empty {},
            ..good.clone()
        },
        EnumsSpec {
            internal: Internal::Git {
                url: "u".into(),
                branch_name: Some("main".into()),
            },
            adjacent: Adjacent::Name("n".into()),
            untagged_objects: UntaggedObjects::BySelector {
                selector: "a=b".into(),
                limit: 2,
            },
            untagged_scalars: UntaggedScalars::Text("t".into()),
            untagged_mixed: UntaggedMixed::Object { a: "a".into() },
            ..good.clone()
        },
        EnumsSpec {
            internal: Internal::Oci {
                image: "i".into(),
                insecure: true,
            },
            adjacent: Adjacent::Point { x: 1 },
            untagged_mixed: UntaggedMixed::List(vec!["l".into()]),
            ..good.clone()
        },
        EnumsSpec {
            internal: Internal::Inline(InlineSource {
                text: "t".into(),
                url: 3,
            }),
            adjacent: Adjacent::Unit,
            untagged_mixed: UntaggedMixed::Text("t".into()),
            ..good.clone()
        },
        EnumsSpec {
            internal: Internal::None,
            many: vec![
                Mixed::Nothing,
                Mixed::Some("x".into()),
                Mixed::Fields { a: 2 },
            ],
            ..good
        },
    ];
    for spec in variants {
        server.round_trip::<Enums>(spec).await;
    }
    // A variant's default is not filled into the others' objects.
    let stored = server
        .send::<Enums>(serde_json::to_value(good_spec()).unwrap(), "")
        .await
        .unwrap();
    assert_eq!(
        stored["internal"],
        json!({"kind": "git", "url": "https://x"})
    );
}

#[tokio::test]
async fn what_no_variant_reads_is_refused() {
    let Some(server) = server().await else { return };
    let good = serde_json::to_value(good_spec()).unwrap();
    let cases = [
        ("unit", json!("purple"), "spec.unit"),
        ("optionalUnit", json!("purple"), "spec.optionalUnit"),
        (
            "external",
            json!({"Text": "a", "Number": 1}),
            "spec.external",
        ),
        ("external", json!({}), "spec.external"),
        ("external", json!({"Number": "one"}), "spec.external.Number"),
        ("mixed", json!("Neither"), "spec.mixed"),
        ("mixed", json!({"Nothing": 1, "Some": "x"}), "spec.mixed"),
        ("mixed", json!(5), "spec.mixed"),
        ("mixed", json!([]), "spec.mixed"),
        ("mixed", json!(true), "spec.mixed"),
        (
            "internal",
            json!({"kind": "svn", "url": "u"}),
            "spec.internal.kind",
        ),
        ("internal", json!({"kind": "git"}), "spec.internal"),
        ("internal", json!({"url": "u"}), "spec.internal.kind"),
        (
            "adjacent",
            json!({"t": "Count", "c": "three"}),
            "spec.adjacent",
        ),
        ("adjacent", json!({"t": "Count"}), "spec.adjacent"),
        ("adjacent", json!({"t": "Other", "c": 1}), "spec.adjacent.t"),
        (
            "untaggedObjects",
            json!({"limit": 1}),
            "spec.untaggedObjects",
        ),
        ("untaggedScalars", json!(true), "spec.untaggedScalars"),
        ("untaggedScalars", json!(1.5), "spec.untaggedScalars"),
        ("untaggedMixed", json!(1), "spec.untaggedMixed"),
        ("many", json!(["Nothing", 7]), "spec.many[1]"),
    ];
    for (field, value, path) in cases {
        let mut spec = good.clone();
        spec[field] = value;
        server.refused::<Enums>(spec, &[path]).await;
    }
}

/// Enums flattened into a struct.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "enums.derive.test",
    version = "v1",
    kind = "FlattenedEnums",
    namespaced
)]
pub(crate) struct FlattenedEnumsSpec {
    name: String,
    #[serde(flatten)]
    source: Source,
    #[serde(flatten)]
    target: Target,
    #[serde(flatten)]
    shape: Shape,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Source {
    FromUrl(String),
    FromSecret { secret: String },
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Target {
    Host { host: String },
    Service { service: String, port: i32 },
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape")]
pub(crate) enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[tokio::test]
async fn flattened_enums_merge_into_their_struct() {
    let Some(server) = server().await else { return };
    let specs = [
        FlattenedEnumsSpec {
            name: "a".into(),
            source: Source::FromUrl("u".into()),
            target: Target::Host { host: "h".into() },
            shape: Shape::Circle { radius: 1.5 },
        },
        FlattenedEnumsSpec {
            name: "b".into(),
            source: Source::FromSecret { secret: "s".into() },
            target: Target::Service {
                service: "svc".into(),
                port: 80,
            },
            shape: Shape::Square { side: 2.0 },
        },
    ];
    for spec in specs {
        server.round_trip::<FlattenedEnums>(spec).await;
    }
    let base = json!({"name": "n", "fromUrl": "u", "host": "h", "shape": "Circle", "radius": 1});
    let mut both_sources = base.clone();
    both_sources["fromSecret"] = json!({"secret": "s"});
    server
        .refused::<FlattenedEnums>(both_sources, &["spec"])
        .await;
    let mut no_target = base.clone();
    no_target.as_object_mut().unwrap().remove("host");
    server.refused::<FlattenedEnums>(no_target, &["spec"]).await;
    let mut wrong_shape = base;
    wrong_shape["shape"] = json!("Triangle");
    server
        .refused::<FlattenedEnums>(wrong_shape, &["spec.shape"])
        .await;
}
