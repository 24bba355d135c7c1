//! Answers a client must survive: every error code on every verb, bodies
//! that are not Statuses (empty, cut off, HTML), 2xx bodies of the wrong
//! content type, and Statuses with reasons this client does not know. Each
//! must be a typed error that names the problem, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;

use clientgo_apimachinery::{ListOptions, Status, StatusReason};
use clientgo_rest::{
    Config, CreateOptions, DeleteOptions, Error, Patch, PatchOptions, ResourceClient, RestClient,
    UpdateOptions,
};
use clientgo_testing::{Failure, TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

const CODES: [u16; 7] = [401, 403, 404, 410, 429, 500, 503];

async fn server_and_config_maps() -> (TestApiServer, ResourceClient<ConfigMap>) {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    config_maps
        .create(&CreateOptions::default(), &config_map("present"))
        .await
        .unwrap();
    (server, config_maps)
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_string(), "v".to_string())])),
        ..ConfigMap::default()
    }
}

/// Calls `verb` once and returns its error (a success is a test failure).
async fn call(config_maps: &ResourceClient<ConfigMap>, verb: Verb) -> Error {
    let result = match verb {
        Verb::Get => config_maps.get("present").await.map(drop),
        Verb::List => config_maps.list(&ListOptions::default()).await.map(drop),
        Verb::Watch => config_maps.watch(&ListOptions::default()).await.map(drop),
        Verb::Create => config_maps
            .create(&CreateOptions::default(), &config_map("new"))
            .await
            .map(drop),
        Verb::Update => {
            let mut current = config_maps.get("present").await.unwrap();
            current.data = None;
            config_maps
                .replace("present", &UpdateOptions::default(), &current)
                .await
                .map(drop)
        }
        Verb::Patch => config_maps
            .patch(
                "present",
                &PatchOptions::default(),
                &Patch::Merge(json!({"data": {"k": "w"}})),
            )
            .await
            .map(drop),
        Verb::Delete => config_maps
            .delete("present", &DeleteOptions::default())
            .await
            .map(drop),
        Verb::DeleteCollection => config_maps
            .delete_collection(&DeleteOptions::default(), &ListOptions::default())
            .await
            .map(drop),
        Verb::Other => unreachable!("not a verb of this test"),
    };
    match result {
        Ok(()) => panic!("{verb:?} succeeded though the server was told to fail it"),
        Err(error) => error,
    }
}

const VERBS: [Verb; 8] = [
    Verb::Get,
    Verb::List,
    Verb::Watch,
    Verb::Create,
    Verb::Update,
    Verb::Patch,
    Verb::Delete,
    Verb::DeleteCollection,
];

#[tokio::test]
async fn every_error_code_on_every_verb_is_an_api_error_with_its_code_and_reason() {
    let (server, config_maps) = server_and_config_maps().await;
    let mut tried = 0;
    for verb in VERBS {
        for code in CODES {
            // No retry delay in the Status, so no Retry-After: the client
            // must not retry and must report this answer.
            let reason = StatusReason::for_http_code(code);
            server.faults().fail_next(
                Some(verb),
                Status::failure(code, reason.clone(), format!("told to fail {code}")),
            );
            let error = call(&config_maps, verb).await;
            let status = error
                .status()
                .unwrap_or_else(|| panic!("{verb:?} {code}: not an Api error: {error}"));
            assert_eq!(status.code, code, "{verb:?}: {error}");
            assert_eq!(status.reason, reason, "{verb:?} {code}: {error}");
            let message = error.to_string();
            assert!(
                message.contains(&code.to_string()) && message.contains("told to fail"),
                "{verb:?} {code}: the message names the code and the server's words: {message}"
            );
            assert_eq!(
                error.is_unauthorized(),
                code == 401,
                "{verb:?} {code}: {error}"
            );
            assert_eq!(error.is_not_found(), code == 404, "{verb:?} {code}");
            assert_eq!(error.is_expired_or_gone(), code == 410, "{verb:?} {code}");
            assert_eq!(error.is_too_many_requests(), code == 429, "{verb:?} {code}");
            tried += 1;
        }
    }
    println!("{tried} (verb, code) answers tried");
    assert_eq!(tried, VERBS.len() * CODES.len());
}

/// A raw answer for the next request of `verb`.
fn raw(server: &TestApiServer, verb: Verb, code: u16, content_type: &str, body: &str) {
    server.faults().fail_next_with(
        Some(verb),
        Failure::Raw {
            code,
            content_type: content_type.to_string(),
            body: body.to_string(),
            retry_after: None,
        },
    );
}

#[tokio::test]
async fn an_empty_error_body_is_an_api_error_from_the_http_code() {
    let (server, config_maps) = server_and_config_maps().await;
    raw(&server, Verb::Get, 500, "application/json", "");
    let error = call(&config_maps, Verb::Get).await;
    let status = error.status().expect("an Api error");
    assert_eq!(status.code, 500);
    assert_eq!(status.reason, StatusReason::InternalError, "{error}");
}

#[tokio::test]
async fn a_cut_off_status_is_an_api_error_quoting_what_arrived() {
    let (server, config_maps) = server_and_config_maps().await;
    raw(
        &server,
        Verb::List,
        403,
        "application/json",
        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no ent"#,
    );
    let error = call(&config_maps, Verb::List).await;
    let status = error.status().expect("an Api error");
    assert_eq!(status.code, 403);
    assert!(status.message.contains("no ent"), "{error}");
}

#[tokio::test]
async fn a_status_with_an_unknown_reason_keeps_the_reason_and_the_code() {
    let (server, config_maps) = server_and_config_maps().await;
    raw(
        &server,
        Verb::Create,
        422,
        "application/json",
        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"quota says no","reason":"QuotaFromTheFuture","code":422}"#,
    );
    let error = call(&config_maps, Verb::Create).await;
    let status = error.status().expect("an Api error");
    assert_eq!(status.code, 422);
    assert_eq!(status.reason.as_str(), "QuotaFromTheFuture");
    assert!(!status.reason.is_known());
    assert!(error.to_string().contains("quota says no"), "{error}");
}

#[tokio::test]
async fn a_2xx_html_page_is_a_decode_error_naming_the_url() {
    let (server, config_maps) = server_and_config_maps().await;
    raw(
        &server,
        Verb::Get,
        200,
        "text/html",
        "<html><body>Sign in to continue</body></html>",
    );
    let error = call(&config_maps, Verb::Get).await;
    assert!(matches!(error, Error::Decode { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains(&server.url()), "{message}");
    assert!(message.contains("configmaps/present"), "{message}");
}

#[tokio::test]
async fn a_2xx_empty_or_cut_off_body_is_a_decode_error() {
    let (server, config_maps) = server_and_config_maps().await;
    for body in [
        "",
        r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{"metadata":"#,
    ] {
        raw(&server, Verb::List, 200, "application/json", body);
        let error = call(&config_maps, Verb::List).await;
        assert!(matches!(error, Error::Decode { .. }), "{body:?}: {error}");
        assert!(error.to_string().contains(&server.url()), "{error}");
    }
}

#[tokio::test]
async fn a_2xx_object_of_the_wrong_content_type_is_refused_or_decoded_never_a_panic() {
    let (server, config_maps) = server_and_config_maps().await;
    // A YAML body where JSON was asked for: not decodable as JSON.
    raw(
        &server,
        Verb::Get,
        200,
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: present\n",
    );
    let error = call(&config_maps, Verb::Get).await;
    assert!(matches!(error, Error::Decode { .. }), "{error}");
    // A protobuf-looking body: the magic prefix, then bytes.
    raw(
        &server,
        Verb::Get,
        200,
        "application/vnd.kubernetes.protobuf",
        "k8s\u{0}\u{a}\u{2}v1",
    );
    let error = call(&config_maps, Verb::Get).await;
    assert!(matches!(error, Error::Decode { .. }), "{error}");
}
