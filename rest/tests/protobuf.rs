//! A protobuf request's error answer is a protobuf `Status`: the client
//! reads its code, reason and message as it reads a JSON one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use clientgo_apimachinery::StatusReason;
use clientgo_rest::{Config, ContentType, Error, RestClient, config::PROTOBUF_ACCEPT};
use clientgo_testing::TestApiServer;

#[tokio::test]
async fn a_protobuf_status_answer_is_read_like_a_json_one() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client =
        RestClient::new(Config::new(server.url()).content_type(ContentType::Protobuf)).unwrap();
    assert_eq!(client.content_type(), ContentType::Protobuf);
    let error = client
        .get()
        .abs_path("/api/v1/namespaces/default/pods/missing")
        .header("accept", PROTOBUF_ACCEPT)
        .send_raw()
        .await
        .unwrap_err();
    let Error::Api(status) = error else {
        panic!("{error}")
    };
    assert_eq!(status.code, 404);
    assert_eq!(status.reason, StatusReason::NotFound);
    assert_eq!(status.message, "pods \"missing\" not found");
    assert_eq!(
        status.details.as_ref().map(|d| d.name.as_str()),
        Some("missing")
    );
}
