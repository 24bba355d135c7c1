//! Property tests: random pods round-trip through protobuf unchanged, and
//! random bytes, truncations and bit flips never make a decoder panic.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use clientgo_protobuf::Message;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, Pod, PodSpec, PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use proptest::prelude::*;

/// A string Go holds as a value with omitempty: absent or not empty (an
/// empty one reads back as absent, by design).
fn value_string() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[a-z0-9.-]{1,12}")
}

fn labels() -> impl Strategy<Value = Option<BTreeMap<String, String>>> {
    proptest::option::of(proptest::collection::btree_map(
        "[a-z]{1,8}",
        "[a-zA-Z0-9 ]{0,8}",
        1..4,
    ))
}

fn container() -> impl Strategy<Value = Container> {
    (
        "[a-z]{1,10}",
        value_string(),
        // Protobuf cannot tell an empty list or map from an absent one (Go's JSON
        // leaves both out too): a list is absent or has elements.
        proptest::option::of(proptest::collection::vec(".{0,6}", 1..3)),
        proptest::collection::vec((any::<i32>(), value_string()), 0..3),
        proptest::option::of(proptest::collection::btree_map(
            "[a-z]{1,6}",
            "[0-9]{1,4}(m|Mi|Gi)?",
            1..3,
        )),
    )
        .prop_map(|(name, image, args, ports, limits)| Container {
            name,
            image,
            args,
            ports: (!ports.is_empty()).then(|| {
                ports
                    .into_iter()
                    .map(|(port, port_name)| ContainerPort {
                        container_port: port,
                        name: port_name,
                        ..Default::default()
                    })
                    .collect()
            }),
            resources: limits.map(|limits| ResourceRequirements {
                limits: Some(limits.into_iter().map(|(k, v)| (k, Quantity(v))).collect()),
                ..Default::default()
            }),
            ..Default::default()
        })
}

fn pod() -> impl Strategy<Value = Pod> {
    (
        value_string(),
        value_string(),
        labels(),
        proptest::option::of(-1_000_000_000i64..4_000_000_000),
        proptest::option::of(1i64..i64::MAX),
        proptest::collection::vec(container(), 1..3),
        value_string(),
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop_oneof![
            any::<i32>().prop_map(IntOrString::Int),
            "[a-z%0-9]{1,5}".prop_map(IntOrString::String)
        ]),
    )
        .prop_map(
            |(
                name,
                namespace,
                labels,
                created,
                generation,
                containers,
                node_name,
                host_network,
                surge,
            )| {
                let _ = surge;
                Pod {
                    metadata: ObjectMeta {
                        name,
                        namespace,
                        labels,
                        creation_timestamp: created
                            .and_then(|s| Timestamp::new(s, 0).ok())
                            .map(Time),
                        generation,
                        ..Default::default()
                    },
                    spec: Some(PodSpec {
                        containers,
                        node_name,
                        // A Go value bool with omitempty: false reads back as absent.
                        host_network: host_network.filter(|b| *b),
                        ..Default::default()
                    }),
                    status: Some(PodStatus::default()),
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_pods_round_trip(pod in pod()) {
        let bytes = pod.encode();
        prop_assert_eq!(Pod::decode(&bytes).unwrap(), pod);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Pod::decode(&bytes);
        let _ = k8s_openapi::api::apps::v1::Deployment::decode(&bytes);
        let _ = clientgo_protobuf::status_json(&bytes);
    }

    #[test]
    fn truncations_and_flips_of_a_real_pod_never_panic(
        pod in pod(),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let bytes = pod.encode();
        let _ = Pod::decode(&bytes[..cut.index(bytes.len() + 1)]);
        let mut flipped = bytes;
        if !flipped.is_empty() {
            let at = flip.index(flipped.len());
            flipped[at] ^= 1 << bit;
        }
        let _ = Pod::decode(&flipped);
    }
}

#[test]
fn errors_name_the_path_of_fields() {
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("nginx".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let bytes = pod.encode();
    let error = Pod::decode(&bytes[..bytes.len() - 3]).unwrap_err();
    assert!(error.to_string().contains("cut off"), "{error}");
    // A container name that is not UTF-8.
    let at = bytes.windows(3).position(|w| w == b"app").unwrap();
    let mut bad = bytes;
    bad[at..at + 3].copy_from_slice(&[0xff, 0xfe, 0xfd]);
    let error = Pod::decode(&bad).unwrap_err();
    assert_eq!(
        error.path,
        ["Pod(2)", "PodSpec(2)", "Container(1)"],
        "{error}"
    );
    assert!(error.to_string().contains("not UTF-8"), "{error}");
}

#[test]
fn negative_int32s_and_large_int64s_keep_their_value() {
    let pod = Pod {
        metadata: ObjectMeta {
            generation: Some(i64::MAX),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                ports: Some(vec![ContainerPort {
                    container_port: -7,
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(Pod::decode(&pod.encode()).unwrap(), pod);
}
