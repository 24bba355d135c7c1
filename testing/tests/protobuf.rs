//! The test server's protobuf, over real HTTP: what it answers for which
//! `Accept`, as kube-apiserver does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use clientgo_apimachinery::{GroupResource, PROTOBUF_MEDIA_TYPE, Unknown};
use clientgo_testing::TestApiServer;
use reqwest::StatusCode;

const PODS: &str = "/api/v1/namespaces/default/pods";
const BOTH: &str = "application/vnd.kubernetes.protobuf, application/json";

async fn get(server: &TestApiServer, path: &str, accept: &str) -> reqwest::Response {
    crate::support::http_client()
        .get(format!("{}{path}", server.url()))
        .header("accept", accept)
        .send()
        .await
        .unwrap()
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn built_in_types_are_served_in_protobuf_when_asked() {
    let server = TestApiServer::builder().start().await.unwrap();
    server
        .storage()
        .create(
            &GroupResource::new("", "pods"),
            "default",
            clientgo_testing::realistic_pod(1, "default"),
        )
        .unwrap();
    let listed = get(&server, PODS, BOTH).await;
    assert_eq!(listed.status(), StatusCode::OK);
    assert_eq!(content_type(&listed), PROTOBUF_MEDIA_TYPE);
    let body = listed.bytes().await.unwrap();
    let envelope = Unknown::decode(&body).unwrap();
    assert_eq!((envelope.api_version, envelope.kind), ("v1", "PodList"));

    let json = get(&server, PODS, "application/json").await;
    assert_eq!(content_type(&json), "application/json");

    // A missing pod: the Status comes in protobuf too.
    let missing = get(&server, &format!("{PODS}/nope"), BOTH).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(content_type(&missing), PROTOBUF_MEDIA_TYPE);
    let status = clientgo_protobuf::status_json(&missing.bytes().await.unwrap()).unwrap();
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["code"], 404);

    let watch = get(
        &server,
        &format!("{PODS}?watch=true&resourceVersion=0&timeoutSeconds=1"),
        BOTH,
    )
    .await;
    assert_eq!(
        content_type(&watch),
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let stream = watch.bytes().await.unwrap();
    let length = u32::from_be_bytes(stream[..4].try_into().unwrap()) as usize;
    // A bare WatchEvent, as kube-apiserver writes it: no envelope around
    // the event (field 1, the type, comes first), one around its object.
    let frame = &stream[4..4 + length];
    assert!(Unknown::decode(frame).is_err(), "no k8s\\0 magic");
    assert_eq!(frame[0], 0x0a, "WatchEvent.type");
    let event_type_length = usize::from(frame[1]);
    assert_eq!(&frame[2..2 + event_type_length], b"ADDED");
}

#[tokio::test]
async fn custom_resources_get_json_or_406() {
    let server = TestApiServer::builder().start().await.unwrap();
    let crd = clientgo_testing::custom_resource_definition(
        "stable.example.com",
        "v1",
        "CronTab",
        "crontabs",
        true,
    );
    let created = crate::support::http_client()
        .post(format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            server.url()
        ))
        .json(&crd)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let json_too = get(&server, crontabs, BOTH).await;
    assert_eq!(json_too.status(), StatusCode::OK);
    assert_eq!(content_type(&json_too), "application/json");
    let only_protobuf = get(&server, crontabs, PROTOBUF_MEDIA_TYPE).await;
    assert_eq!(only_protobuf.status(), StatusCode::NOT_ACCEPTABLE);
    let status: serde_json::Value = only_protobuf.json().await.unwrap();
    assert_eq!(status["reason"], "NotAcceptable");
    // Metadata-only requests stay JSON.
    let metadata = get(
        &server,
        PODS,
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(content_type(&metadata), "application/json");
}
