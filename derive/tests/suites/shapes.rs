//! Structs and the types inside them: every serde attribute that changes
//! the JSON form, the standard library's types, Kubernetes' own types.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use clientgo::crd::{CustomResource, Schema};
use k8s_openapi::api::core::v1::{ConfigMap, PodTemplateSpec};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::server;

pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        Plain::crd(),
        Defaults::crd(),
        Flattened::crd(),
        Wrapped::crd(),
        Recursive::crd(),
        Tuples::crd(),
        Sets::crd(),
        Integers::crd(),
        Strict::crd(),
        AnyValues::crd(),
        KubeScalars::crd(),
        Embedded::crd(),
    ]
}

/// Fields as serde names them, documented.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Plain",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlainSpec {
    /// A string.
    text: String,
    count_of_things: i32,
    big: i64,
    on: bool,
    ratio: f64,
    list: Vec<String>,
    map: BTreeMap<String, i32>,
    hash: HashMap<String, Vec<bool>>,
    /// None is written as null, which the server drops.
    maybe: Option<String>,
    #[serde(rename = "x-renamed")]
    renamed: u16,
    #[serde(skip)]
    skipped: (),
    #[serde(skip_serializing_if = "Option::is_none")]
    maybe_skipped: Option<i32>,
    /// A generic type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pairing: Option<Pairing<u8>>,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pairing<T> {
    left: T,
    right: T,
}

#[tokio::test]
async fn plain_fields_round_trip_and_types_are_enforced() {
    let Some(server) = server().await else { return };
    let spec = PlainSpec {
        text: "hello".into(),
        count_of_things: -3,
        big: i64::MAX,
        on: true,
        ratio: 0.25,
        list: vec!["a".into(), "b".into()],
        map: [("k".to_owned(), 1)].into(),
        hash: [("h".to_owned(), vec![true, false])].into(),
        maybe: None,
        renamed: 65535,
        skipped: (),
        maybe_skipped: None,
        pairing: None,
    };
    server.round_trip::<Plain>(spec.clone()).await;
    server
        .round_trip::<Plain>(PlainSpec {
            maybe: Some("x".into()),
            maybe_skipped: Some(1),
            pairing: Some(Pairing { left: 1, right: 2 }),
            ..spec
        })
        .await;
    let good = json!({"text": "t", "countOfThings": 1, "big": 1, "on": true, "ratio": 1.5,
        "list": [], "map": {}, "hash": {}, "x-renamed": 1});
    server.send::<Plain>(good.clone(), "").await.unwrap();
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("text");
    server
        .refused::<Plain>(missing, &["spec.text", "Required"])
        .await;
    let mut wrong = good.clone();
    wrong["countOfThings"] = json!("one");
    server
        .refused::<Plain>(wrong, &["spec.countOfThings", "integer"])
        .await;
    let mut too_big = good.clone();
    too_big["x-renamed"] = json!(65536);
    server.refused::<Plain>(too_big, &["spec.x-renamed"]).await;
    let mut generic = good;
    generic["pairing"] = json!({"left": 1, "right": 256});
    server
        .refused::<Plain>(generic, &["spec.pairing.right"])
        .await;
}

fn seven() -> u32 {
    7
}

/// serde's defaults, filled in by the server.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Defaults",
    namespaced
)]
pub(crate) struct DefaultsSpec {
    #[serde(default)]
    plain: String,
    #[serde(default = "seven")]
    seven: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    items: Vec<String>,
    #[serde(default)]
    whole: Whole,
    #[schema(default = "from-attribute")]
    #[serde(skip_serializing_if = "Option::is_none")]
    attribute: Option<String>,
    tuned: Tuned,
    /// Nulls inside lists and maps are kept.
    #[serde(default)]
    gaps: Vec<Option<i32>>,
    #[serde(default)]
    unset: BTreeMap<String, Option<String>>,
    /// Written with its name beside its fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tagged: Option<Tagged>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pair: Option<SkippingPair>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<Id<Tagged>>,
}

/// A struct serde writes with a `kind` field naming it.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub(crate) struct Tagged {
    value: i32,
}

/// A tuple struct with a skipped field: one item.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SkippingPair(i32, #[serde(skip)] u8);

/// A transparent tuple struct with a marker.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Id<T>(String, #[serde(skip)] std::marker::PhantomData<T>);

/// A struct whose missing fields take a function's value.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default = "Tuned::recommended")]
pub(crate) struct Tuned {
    level: i32,
}

impl Tuned {
    fn recommended() -> Self {
        Tuned { level: 9 }
    }
}

/// A struct whose missing fields take the struct's `Default`.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Whole {
    level: i32,
    name: String,
}

impl Default for Whole {
    fn default() -> Self {
        Whole {
            level: 3,
            name: "w".into(),
        }
    }
}

#[tokio::test]
async fn defaults_are_applied_by_the_server() {
    let Some(server) = server().await else { return };
    let stored = server
        .send::<Defaults>(json!({"whole": {}, "tuned": {}}), "")
        .await
        .unwrap();
    assert_eq!(
        stored,
        json!({"plain": "", "seven": 7, "items": [], "whole": {"level": 3, "name": "w"},
            "attribute": "from-attribute", "tuned": {"level": 9}, "gaps": [], "unset": {}})
    );
    let spec = DefaultsSpec {
        plain: "p".into(),
        seven: 1,
        items: vec![],
        whole: Whole {
            level: 1,
            name: "n".into(),
        },
        attribute: Some("a".into()),
        tuned: Tuned { level: 1 },
        gaps: vec![Some(1), None, Some(3)],
        unset: [("a".to_owned(), None), ("b".to_owned(), Some("x".into()))].into(),
        tagged: Some(Tagged { value: 2 }),
        pair: Some(SkippingPair(4, 0)),
        id: Some(Id("id-1".into(), std::marker::PhantomData)),
    };
    let read = server.round_trip::<Defaults>(spec).await;
    assert_eq!(
        serde_json::to_value(&read.spec).unwrap()["tagged"],
        json!({"kind": "Tagged", "value": 2})
    );
    server
        .refused::<Defaults>(
            json!({"whole": {}, "tuned": {}, "pair": [1, 2]}),
            &["spec.pair"],
        )
        .await;
}

/// Flattened structs and maps.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Flattened",
    namespaced
)]
pub(crate) struct FlattenedSpec {
    own: String,
    #[serde(flatten)]
    inner: Inner,
    #[serde(flatten)]
    rest: BTreeMap<String, serde_json::Value>,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Inner {
    depth: i32,
}

#[tokio::test]
async fn flattened_fields_and_maps_are_kept() {
    let Some(server) = server().await else { return };
    let spec = FlattenedSpec {
        own: "o".into(),
        inner: Inner { depth: 2 },
        rest: [("extra".to_owned(), json!({"any": [1, "two"]}))].into(),
    };
    server.round_trip::<Flattened>(spec).await;
    server
        .refused::<Flattened>(json!({"own": "o"}), &["spec.depth", "Required"])
        .await;
}

/// Newtypes, transparent structs, and a field whose JSON form serde's
/// `with` gives.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Wrapped",
    namespaced
)]
pub(crate) struct WrappedSpec {
    port: Port,
    name: Name,
    /// serde writes it as seconds: the schema says so.
    #[serde(with = "seconds")]
    #[schema(with = u64)]
    timeout: std::time::Duration,
}

mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        value: &std::time::Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(value.as_secs())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<std::time::Duration, D::Error> {
        u64::deserialize(deserializer).map(std::time::Duration::from_secs)
    }
}

/// A port number.
#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[schema(minimum = 1, maximum = 65535)]
pub(crate) struct Port(i32);

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Name {
    #[schema(min_length = 1)]
    value: String,
}

#[tokio::test]
async fn newtypes_and_transparent_structs_are_their_inner_value() {
    let Some(server) = server().await else { return };
    let spec = WrappedSpec {
        port: Port(443),
        name: Name { value: "n".into() },
        timeout: std::time::Duration::from_secs(30),
    };
    server.round_trip::<Wrapped>(spec).await;
    for (spec, path) in [
        (json!({"port": 0, "name": "n", "timeout": 1}), "spec.port"),
        (json!({"port": 1, "name": "", "timeout": 1}), "spec.name"),
        (
            json!({"port": 1, "name": "n", "timeout": "30s"}),
            "spec.timeout",
        ),
    ] {
        server.refused::<Wrapped>(spec, &[path]).await;
    }
}

/// A tree of itself.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Recursive",
    namespaced
)]
pub(crate) struct RecursiveSpec {
    root: Node,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Node {
    label: String,
    #[serde(default)]
    children: Vec<Node>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next: Option<Box<Node>>,
}

#[tokio::test]
async fn recursive_types_are_accepted_at_any_depth() {
    let Some(server) = server().await else { return };
    let leaf = |label: &str| Node {
        label: label.into(),
        children: vec![],
        next: None,
    };
    let spec = RecursiveSpec {
        root: Node {
            label: "r".into(),
            children: vec![Node {
                label: "c".into(),
                children: vec![leaf("g")],
                next: Some(Box::new(leaf("n"))),
            }],
            next: None,
        },
    };
    server.round_trip::<Recursive>(spec).await;
    server
        .refused::<Recursive>(json!({"root": {"children": []}}), &["spec.root.label"])
        .await;
}

/// Tuples and fixed arrays.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Tuples",
    namespaced
)]
pub(crate) struct TuplesSpec {
    same: (i32, i32),
    mixed: (String, i64, bool),
    fixed: [u8; 3],
    pair: Pair,
}

#[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pair(String, i32);

#[tokio::test]
async fn tuples_are_arrays_of_their_length_and_types() {
    let Some(server) = server().await else { return };
    let spec = TuplesSpec {
        same: (1, 2),
        mixed: ("a".into(), 2, true),
        fixed: [1, 2, 3],
        pair: Pair("p".into(), 1),
    };
    server.round_trip::<Tuples>(spec).await;
    let good =
        json!({"same": [1, 2], "mixed": ["a", 2, true], "fixed": [1, 2, 3], "pair": ["p", 1]});
    let mut short = good.clone();
    short["same"] = json!([1]);
    server.refused::<Tuples>(short, &["spec.same"]).await;
    let mut wrong_type = good.clone();
    wrong_type["mixed"] = json!(["a", 2, {"x": 1}]);
    server
        .refused::<Tuples>(wrong_type, &["spec.mixed[2]"])
        .await;
    let mut fraction = good;
    fraction["pair"] = json!(["p", 1.5]);
    server.refused::<Tuples>(fraction, &["spec.pair[1]"]).await;
}

/// Sets keep their items unique.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Sets",
    namespaced
)]
pub(crate) struct SetsSpec {
    names: BTreeSet<String>,
    points: BTreeSet<Point>,
}

#[derive(Schema, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Point {
    x: i32,
    y: i32,
}

#[tokio::test]
async fn sets_refuse_duplicates() {
    let Some(server) = server().await else { return };
    let spec = SetsSpec {
        names: ["a".to_owned(), "b".to_owned()].into(),
        points: [Point { x: 1, y: 2 }, Point { x: 2, y: 1 }].into(),
    };
    server.round_trip::<Sets>(spec).await;
    server
        .refused::<Sets>(
            json!({"names": ["a", "a"], "points": []}),
            &["spec.names[1]", "Duplicate"],
        )
        .await;
    server
        .refused::<Sets>(
            json!({"names": [], "points": [{"x": 1, "y": 1}, {"x": 1, "y": 1}]}),
            &["spec.points[1]", "Duplicate"],
        )
        .await;
}

/// Integer widths.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Integers",
    namespaced
)]
pub(crate) struct IntegersSpec {
    tiny: i8,
    small: u8,
    medium: u32,
    large: u64,
    size: usize,
}

#[tokio::test]
async fn integer_widths_keep_their_bounds() {
    let Some(server) = server().await else { return };
    let spec = IntegersSpec {
        tiny: -128,
        small: 255,
        medium: u32::MAX,
        large: i64::MAX as u64,
        size: 0,
    };
    server.round_trip::<Integers>(spec).await;
    let good = json!({"tiny": 0, "small": 0, "medium": 0, "large": 0, "size": 0});
    for (field, value) in [
        ("tiny", json!(128)),
        ("small", json!(-1)),
        ("medium", json!(4294967296u64)),
        ("large", json!(-1)),
    ] {
        let mut bad = good.clone();
        bad[field] = value;
        server
            .refused::<Integers>(bad, &[&format!("spec.{field}")])
            .await;
    }
    // Past i64::MAX the server cannot keep an integer: refused on write,
    // never stored wrong.
    let mut past = good;
    past["large"] = json!(u64::MAX);
    server.refused::<Integers>(past, &["spec.large"]).await;
}

/// `deny_unknown_fields`: the server prunes unknown fields, and refuses
/// them when asked to be strict.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Strict",
    namespaced
)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictSpec {
    known: String,
}

#[tokio::test]
async fn unknown_fields_never_reach_a_deny_unknown_fields_type() {
    let Some(server) = server().await else { return };
    server
        .round_trip::<Strict>(StrictSpec { known: "k".into() })
        .await;
    let stored = server
        .send::<Strict>(json!({"known": "k", "unknown": 1}), "")
        .await
        .unwrap();
    assert_eq!(stored, json!({"known": "k"}));
    let _: StrictSpec = serde_json::from_value(stored).unwrap();
    let strict = server
        .send::<Strict>(
            json!({"known": "k", "unknown": 1}),
            "?fieldValidation=Strict",
        )
        .await;
    let Err(message) = strict else {
        panic!("Strict accepted an unknown field")
    };
    assert!(message.contains("unknown"), "{message}");
}

/// Any JSON.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "AnyValues",
    namespaced
)]
pub(crate) struct AnyValuesSpec {
    value: serde_json::Value,
    object: serde_json::Map<String, serde_json::Value>,
    values: Vec<serde_json::Value>,
}

#[tokio::test]
async fn any_value_keeps_what_is_written() {
    let Some(server) = server().await else { return };
    let spec = AnyValuesSpec {
        value: json!({"deep": {"er": [1, "x", null, {"y": true}]}}),
        object: json!({"a": 1}).as_object().cloned().unwrap(),
        values: vec![json!(1), json!("s"), json!([true])],
    };
    server.round_trip::<AnyValues>(spec).await;
    server
        .round_trip::<AnyValues>(AnyValuesSpec {
            value: json!("a string"),
            object: Default::default(),
            values: vec![],
        })
        .await;
    server
        .refused::<AnyValues>(
            json!({"value": 1, "object": "no", "values": []}),
            &["spec.object"],
        )
        .await;
}

/// Kubernetes' scalars.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "KubeScalars",
    namespaced
)]
pub(crate) struct KubeScalarsSpec {
    port: IntOrString,
    memory: Quantity,
    at: Time,
}

#[tokio::test]
async fn int_or_string_quantity_and_time() {
    let Some(server) = server().await else { return };
    let at = Time("2026-11-29T12:00:00Z".parse().unwrap());
    for (port, memory) in [
        (IntOrString::Int(80), "1Gi"),
        (IntOrString::String("http".into()), "500m"),
    ] {
        server
            .round_trip::<KubeScalars>(KubeScalarsSpec {
                port,
                memory: Quantity(memory.into()),
                at: at.clone(),
            })
            .await;
    }
    server
        .refused::<KubeScalars>(
            json!({"port": 1, "memory": "lots", "at": "2026-11-29T12:00:00Z"}),
            &["spec.memory"],
        )
        .await;
    server
        .refused::<KubeScalars>(
            json!({"port": 1.5, "memory": "1", "at": "2026-11-29T12:00:00Z"}),
            &["spec.port"],
        )
        .await;
    server
        .refused::<KubeScalars>(
            json!({"port": 1, "memory": "1", "at": "yesterday"}),
            &["spec.at"],
        )
        .await;
}

/// Kubernetes objects inside a spec.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "shapes.derive.test",
    version = "v1",
    kind = "Embedded",
    namespaced
)]
pub(crate) struct EmbeddedSpec {
    meta: ObjectMeta,
    template: PodTemplateSpec,
    config: ConfigMap,
}

#[tokio::test]
async fn embedded_objects_keep_their_fields_and_labels() {
    let Some(server) = server().await else { return };
    let template: PodTemplateSpec = serde_json::from_value(json!({
        "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}]}
    }))
    .unwrap();
    let config: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inner"}, "data": {"k": "v"}
    }))
    .unwrap();
    let meta = ObjectMeta {
        labels: Some([("l".to_owned(), "v".to_owned())].into()),
        ..ObjectMeta::default()
    };
    server
        .round_trip::<Embedded>(EmbeddedSpec {
            meta,
            template,
            config,
        })
        .await;
    // An embedded resource needs its apiVersion and kind.
    server
        .refused::<Embedded>(
            json!({"meta": {}, "template": {}, "config": {"data": {}}}),
            &["spec.config"],
        )
        .await;
}
