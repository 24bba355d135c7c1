//! The REST client on the test server and on the real kube-apiserver (one
//! body, two backends): every verb, the Status of each error the server
//! decides, 403 from authorization, discovery and the RESTMapper, scale,
//! and protobuf reads.

use clientgo_apimachinery::{GroupResource, ListOptions, StatusReason};
use clientgo_rest::discovery::{CachedDiscovery, DeferredRestMapper};
use clientgo_rest::scale::ScaleClient;
use clientgo_rest::{
    Config, ContentType, CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient,
    RestClient, UpdateOptions,
};
use clientgo_testing::Verb;
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": "1"}})).unwrap()
}

#[tokio::test]
async fn every_verb_and_the_status_of_each_error() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("verbs").await.unwrap();
        let maps = ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
        let created = maps
            .create(&CreateOptions::default(), &config_map("one"))
            .await
            .unwrap();
        assert!(created.metadata.uid.is_some());

        // 409 AlreadyExists, with the object named in the details.
        let exists = maps
            .create(&CreateOptions::default(), &config_map("one"))
            .await
            .unwrap_err();
        let status = exists.status().unwrap();
        assert_eq!(
            (status.code, &status.reason),
            (409, &StatusReason::AlreadyExists)
        );
        assert_eq!(status.message, "configmaps \"one\" already exists");
        let details = status.details.as_ref().unwrap();
        assert_eq!(
            (details.name.as_str(), details.kind.as_str()),
            ("one", "configmaps")
        );

        // Replace, then a replace at the old resourceVersion: 409 Conflict.
        let mut changed = created.clone();
        changed.data = Some([("a".to_string(), "2".to_string())].into());
        let replaced = maps
            .replace("one", &UpdateOptions::default(), &changed)
            .await
            .unwrap();
        assert_ne!(
            replaced.metadata.resource_version,
            created.metadata.resource_version
        );
        let conflict = maps
            .replace("one", &UpdateOptions::default(), &changed)
            .await
            .unwrap_err();
        assert!(conflict.is_conflict(), "{conflict}");
        let status = conflict.status().unwrap();
        assert_eq!(status.reason, StatusReason::Conflict);
        assert!(
            status.message.starts_with(
                "Operation cannot be fulfilled on configmaps \"one\": the object has been modified"
            ),
            "{}",
            status.message
        );

        // Patches of three kinds.
        let merged = maps
            .patch(
                "one",
                &PatchOptions::default(),
                &Patch::Merge(json!({"data": {"b": "2"}})),
            )
            .await
            .unwrap();
        assert_eq!(merged.data.as_ref().unwrap().len(), 2);
        let patched = maps
            .patch(
                "one",
                &PatchOptions::default(),
                &Patch::Json(json!([{"op": "remove", "path": "/data/a"}])),
            )
            .await
            .unwrap();
        assert_eq!(patched.data.as_ref().unwrap().len(), 1);
        let applied = maps
            .patch(
                "one",
                &PatchOptions::apply("conformance"),
                &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "one"}, "data": {"c": "3"}})),
            )
            .await
            .unwrap();
        let managers: Vec<(String, String)> = applied
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .map(|entry| {
                (
                    entry.manager.unwrap_or_default(),
                    entry.operation.unwrap_or_default(),
                )
            })
            .collect();
        // The test server keeps ownership beside the object (the
        // divergence table in clientgo-testing's docs).
        if backend.is_real() {
            assert!(
                managers.contains(&("conformance".into(), "Apply".into())),
                "{managers:?}"
            );
        }

        // 422 Invalid, its causes naming the field (the test server checks
        // no names: the divergence table).
        if backend.is_real() {
            let invalid = maps
                .create(&CreateOptions::default(), &config_map("Not_A_Name"))
                .await
                .unwrap_err();
            let status = invalid.status().unwrap();
            assert_eq!((status.code, &status.reason), (422, &StatusReason::Invalid));
            let causes = &status.details.as_ref().unwrap().causes;
            assert!(
                causes.iter().any(|cause| cause.field == "metadata.name"),
                "{causes:?}"
            );
        }

        // Delete, then 404 NotFound for get and delete.
        maps.delete("one", &DeleteOptions::default()).await.unwrap();
        let missing = maps.get("one").await.unwrap_err();
        let status = missing.status().unwrap();
        assert_eq!(
            (status.code, &status.reason),
            (404, &StatusReason::NotFound)
        );
        assert_eq!(status.message, "configmaps \"one\" not found");
        assert!(maps.get_optional("one").await.unwrap().is_none());
        let gone = maps
            .delete("one", &DeleteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(gone.status().map(|s| s.code), Some(404));
        let listed = maps.list(&ListOptions::default()).await.unwrap();
        assert!(listed.items.is_empty());
    })
    .await;
}

#[tokio::test]
async fn a_request_authorization_refuses_is_a_403_naming_user_verb_and_resource() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("forbidden").await.unwrap();
        let client = match (backend.control_plane(), backend.test_server()) {
            (Some(plane), _) => RestClient::new(plane.user_config("nobody", &[]).unwrap()).unwrap(),
            (None, Some(server)) => {
                server.deny(Verb::List, GroupResource::new("", "pods"));
                backend.client().unwrap()
            }
            (None, None) => unreachable!(),
        };
        let error = ResourceClient::<Pod>::namespaced(client, &namespace)
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        let status = error.status().unwrap();
        assert_eq!(
            (status.code, &status.reason),
            (403, &StatusReason::Forbidden)
        );
        assert!(
            status.message.contains(&format!(
                "cannot list resource \"pods\" in API group \"\" in the namespace \"{namespace}\""
            )),
            "{}",
            status.message
        );
    })
    .await;
}

#[tokio::test]
async fn discovery_the_mapper_and_the_scale_subresource() {
    for_each_backend(Backend::both().await, |backend| async move {
        let client = backend.client().unwrap();
        let mapper = DeferredRestMapper::new(CachedDiscovery::new(client.clone()));
        for (argument, path) in [
            ("deployments", "apps/v1/deployments"),
            ("deploy", "apps/v1/deployments"),
            ("pods", "/v1/pods"),
            ("cm", "/v1/configmaps"),
            ("deployments.apps", "apps/v1/deployments"),
        ] {
            let found = mapper.resource_for(argument).await.unwrap();
            let resource = &found.resource;
            assert_eq!(
                format!(
                    "{}/{}/{}",
                    resource.group(),
                    resource.version(),
                    resource.plural()
                ),
                path,
                "{argument}"
            );
        }
        let all: Vec<String> = mapper
            .category("all")
            .await
            .unwrap()
            .iter()
            .map(|found| found.resource.plural().to_string())
            .collect();
        for expected in ["pods", "deployments", "services"] {
            assert!(all.contains(&expected.to_string()), "{expected} in {all:?}");
        }

        let namespace = backend.create_namespace("scale").await.unwrap();
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
        }))
        .unwrap();
        let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), &namespace);
        deployments
            .create(&CreateOptions::default(), &deployment)
            .await
            .unwrap();
        let scales = ScaleClient::new(client, mapper);
        let scale = scales
            .get("deployments", Some(&namespace), "web")
            .await
            .unwrap();
        assert_eq!(scale.spec.and_then(|spec| spec.replicas), Some(1));
        let scaled = scales
            .scale_to("deployments", Some(&namespace), "web", 3)
            .await
            .unwrap();
        assert_eq!(scaled.spec.and_then(|spec| spec.replicas), Some(3));
        let stored = deployments.get("web").await.unwrap();
        assert_eq!(stored.spec.and_then(|spec| spec.replicas), Some(3));
    })
    .await;
}

#[tokio::test]
async fn protobuf_reads_decode_as_json_ones() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("protobuf").await.unwrap();
        let json_maps = ResourceClient::<ConfigMap>::namespaced(
            RestClient::new(backend.config().content_type(ContentType::Json)).unwrap(),
            &namespace,
        );
        let proto_config: Config = backend.config().content_type(ContentType::Protobuf);
        let proto_maps = ResourceClient::<ConfigMap>::namespaced(
            RestClient::new(proto_config).unwrap(),
            &namespace,
        );
        for name in ["a", "b", "c"] {
            json_maps
                .create(&CreateOptions::default(), &config_map(name))
                .await
                .unwrap();
        }
        let by_json = json_maps.list(&ListOptions::default()).await.unwrap();
        let by_proto = proto_maps.list(&ListOptions::default()).await.unwrap();
        assert_eq!(by_json.items, by_proto.items);
        // (Their resourceVersions are the store's, which other tests on the
        // shared real server move between the two lists.)
        assert_eq!(
            json_maps.get("b").await.unwrap(),
            proto_maps.get("b").await.unwrap()
        );
        let missing = proto_maps.get("zzz").await.unwrap_err();
        assert_eq!(
            missing.status().map(|s| s.reason.clone()),
            Some(StatusReason::NotFound)
        );
    })
    .await;
}
