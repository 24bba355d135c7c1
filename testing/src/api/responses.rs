//! How answers are written: JSON bodies, Statuses, the plain-text
//! answers kube-apiserver gives, and reading a request's body.
use std::convert::Infallible;

use bytes::Bytes;
use clientgo_apimachinery::Status;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};

use crate::api::handlers::Answer;

/// The largest request body accepted (the real server's 3 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

pub(crate) type ResponseBody = BoxBody<Bytes, Infallible>;

pub(crate) fn json_response(code: u16, body: Vec<u8>) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) fn status_response(status: &Status) -> Response<ResponseBody> {
    let code = if status.code == 0 { 500 } else { status.code };
    json_response(code, serde_json::to_vec(status).unwrap_or_default())
}

pub(crate) fn answer_response(answer: Result<Answer, Status>) -> Response<ResponseBody> {
    match answer {
        Ok(answer) => typed_response(answer.code, answer.body, answer.content_type),
        Err(status) => status_response(&status),
    }
}

/// A body of the given media type.
pub(crate) fn typed_response(
    code: u16,
    body: Vec<u8>,
    content_type: &'static str,
) -> Response<ResponseBody> {
    let mut response = json_response(code, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}

/// An answer to a request that asked for protobuf: errors are protobuf
/// `Status`es, as the real server encodes them in the negotiated type.
pub(crate) fn answer_response_in(
    answer: Result<Answer, Status>,
    protobuf: bool,
) -> Response<ResponseBody> {
    match answer {
        Err(status) if protobuf => protobuf_status_response(&status),
        other => answer_response(other),
    }
}

/// A `Status` as a protobuf body.
pub(crate) fn protobuf_status_response(status: &Status) -> Response<ResponseBody> {
    let code = if status.code == 0 { 500 } else { status.code };
    typed_response(
        code,
        crate::api::protobuf::status_body(status),
        clientgo_apimachinery::PROTOBUF_MEDIA_TYPE,
    )
}

/// The max-in-flight filter's 429: plain text and `Retry-After: 1`.
pub(crate) fn too_many_requests_response() -> Response<ResponseBody> {
    let mut response = text_response(crate::faults::controls::TOO_MANY_REQUESTS_BODY);
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from_static(crate::faults::controls::TOO_MANY_REQUESTS_RETRY_AFTER),
    );
    response
}

/// What the real server answers for a path nothing serves (an unserved
/// group or version, a path that is not an API path): Go's mux's plain
/// text 404, not a Status.
pub(crate) fn page_not_found() -> Response<ResponseBody> {
    let mut response = text_response("404 page not found\n");
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

pub(crate) fn text_response(text: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub(crate) fn version_body() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "major": "1",
        "minor": "36",
        "gitVersion": "v1.36.0-clientgo-testing",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64",
    }))
    .unwrap_or_default()
}

pub(crate) async fn read_body(request: Request<Incoming>) -> Result<Bytes, Status> {
    Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| {
            Status::failure(
                413,
                clientgo_apimachinery::StatusReason::RequestEntityTooLarge,
                format!("Request entity too large: limit is {MAX_BODY_BYTES}: {e}"),
            )
        })
}

/// A body with nothing in it (a 101's).
pub(crate) fn empty_body() -> ResponseBody {
    Full::new(Bytes::new()).boxed()
}
