//! What comes back: a 2xx body decoded, and an error answer turned into a
//! Status (client-go's `Result` and `transformResponse`).

use clientgo_apimachinery::Status;
use reqwest::header::{self, HeaderMap};
use serde::de::DeserializeOwned;

use crate::client::error::Error;

/// The most of a non-Status error body kept in a synthesized Status.
const MAX_ERROR_TEXT: usize = 2048;
/// The most of an error body read to look for a Status.
const MAX_ERROR_BODY: usize = 1024 * 1024;

/// An integer `Retry-After` header (seconds); client-go ignores the
/// HTTP-date form, and so does this.
pub(crate) fn retry_after_seconds(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Decodes a JSON body, naming the URL and a snippet on failure.
pub(crate) fn decode<T: DeserializeOwned>(body: &[u8], url: &str) -> Result<T, Error> {
    clientgo_apimachinery::decode::from_json_slice(body, std::any::type_name::<T>()).map_err(
        |source| Error::Decode {
            url: url.to_string(),
            source,
        },
    )
}

/// Turns a non-2xx answer into [`Error::Api`]: the Status in the body, or
/// one made from the HTTP code and the body's text.
pub(crate) async fn error_from_response(mut response: reqwest::Response, url: &str) -> Error {
    let code = response.status().as_u16();
    let retry_after = retry_after_seconds(response.headers());
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    Error::Api(Box::new(status_from_body(
        code,
        &content_type,
        &body,
        retry_after,
        url,
    )))
}

/// The Status an error answer carries, or one synthesized from its code.
pub(crate) fn status_from_body(
    code: u16,
    content_type: &str,
    body: &[u8],
    retry_after: Option<u64>,
    url: &str,
) -> Status {
    if let Ok(mut status) = serde_json::from_slice::<Status>(body)
        && status.kind == "Status"
    {
        if status.code == 0 {
            status.code = code;
        }
        return status;
    }
    // The answer to a protobuf request is a protobuf Status.
    if let Some(mut status) = clientgo_protobuf::status_json(body)
        .and_then(|json| serde_json::from_value::<Status>(json).ok())
    {
        if status.code == 0 {
            status.code = code;
        }
        return status;
    }
    let mut text = String::from_utf8_lossy(body).trim().to_string();
    if text.len() > MAX_ERROR_TEXT {
        let mut end = MAX_ERROR_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    let what = match code {
        400 => "the server rejected our request for an unknown reason",
        401 => "the server has asked for the client to provide credentials",
        403 => "the server does not allow access to the requested resource",
        404 => "the server could not find the requested resource",
        405 => "the server does not allow this method on the requested resource",
        409 => "the server reported a conflict",
        410 => "the server could not find the requested resource (gone)",
        413 => "the request is too large",
        415 => "the server does not support the content type sent",
        422 => "the server rejected our request due to an error in our request",
        429 => "the server has received too many requests and has asked us to try again later",
        500 => "an error on the server has prevented the request from succeeding",
        502..=504 => "the server is currently unable to handle the request",
        _ => "the server answered with an error",
    };
    let shown_type = if content_type.is_empty() {
        "no content type"
    } else {
        content_type
    };
    let message = if text.is_empty() {
        format!("{what} (HTTP {code} from {url}, empty body)")
    } else {
        format!("{what} (HTTP {code} from {url}, {shown_type} body: {text})")
    };
    let mut status = Status::from_http_code(code, message);
    if let Some(seconds) = retry_after {
        let details = status.details.get_or_insert_with(Default::default);
        details.retry_after_seconds = u32::try_from(seconds).unwrap_or(u32::MAX);
    }
    status
}

/// The path and query of `url`, for logs (the scheme and host are the
/// client's and the same for every request).
pub(crate) fn path_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find('/')
        .map_or("/", |i| &url[after_scheme + i..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn logged_paths_drop_scheme_and_host() {
        for (url, path) in [
            ("https://h:6443/api/v1/pods?watch=1", "/api/v1/pods?watch=1"),
            (
                "http://127.0.0.1:1/prefix/apis/apps/v1",
                "/prefix/apis/apps/v1",
            ),
            ("https://h", "/"),
        ] {
            assert_eq!(path_of(url), path);
        }
    }

    #[test]
    fn html_pages_become_a_status_with_capped_text() {
        let page = format!("<html><body>{}</body></html>", "x".repeat(5000));
        let status = status_from_body(502, "text/html", page.as_bytes(), None, "https://h/api");
        assert_eq!(status.code, 502);
        assert!(status.message.contains("<html>"));
        assert!(status.message.len() < 2300, "{}", status.message.len());
        assert!(status.message.contains("text/html"));
    }

    #[test]
    fn a_status_body_is_used_as_is() {
        let body = serde_json::to_vec(&Status::too_many_requests("slow down", 2)).unwrap();
        let status = status_from_body(429, "application/json", &body, Some(2), "u");
        assert_eq!(status.message, "slow down");
        assert_eq!(status.retry_after_seconds(), Some(2));
    }

    #[test]
    fn retry_after_is_integer_seconds_only() {
        let mut headers = HeaderMap::new();
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static(" 3 "));
        assert_eq!(retry_after_seconds(&headers), Some(3));
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after_seconds(&headers), None);
    }
}
