//! Response compression as kube-apiserver does it (the
//! `APIResponseCompression` feature, on by default): a resource request
//! that is not a watch, from a client whose `Accept-Encoding` names gzip,
//! gets its body gzip-compressed at the fastest level when the body is
//! larger than 128 KiB. Smaller bodies, watches (streams that must flush
//! event by event) and discovery answers are sent as they are.
use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Response, header};
use std::io::Write;

use crate::api::responses::ResponseBody;

/// kube-apiserver's threshold (`defaultGzipThresholdBytes`): bodies up to
/// this size are not worth compressing.
pub(crate) const GZIP_THRESHOLD_BYTES: usize = 128 * 1024;

/// Whether the request's `Accept-Encoding` asks for gzip. kube-apiserver
/// looks for the token anywhere in the header; this also honours an
/// explicit `q=0`, which refuses it.
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            coding.eq_ignore_ascii_case("gzip") && !refused
        })
}

/// Compresses `response`'s body when it is over `threshold` bytes and not
/// already encoded; the body must be a complete one (not a stream), which
/// every non-watch answer of this server is.
pub(crate) async fn gzip_response(
    response: Response<ResponseBody>,
    threshold: usize,
) -> Response<ResponseBody> {
    if response.headers().contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    if bytes.len() <= threshold {
        return Response::from_parts(parts, Full::new(bytes).boxed());
    }
    let mut encoder = GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        // kube-apiserver compresses at level 1 (BestSpeed).
        Compression::fast(),
    );
    let compressed = encoder.write_all(&bytes).and_then(|()| encoder.finish());
    let Ok(compressed) = compressed else {
        // Writing to a Vec cannot fail; send the body as it is if it did.
        return Response::from_parts(parts, Full::new(bytes).boxed());
    };
    parts.headers.insert(
        header::CONTENT_ENCODING,
        header::HeaderValue::from_static("gzip"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.append(
        header::VARY,
        header::HeaderValue::from_static("Accept-Encoding"),
    );
    Response::from_parts(parts, Full::new(Bytes::from(compressed)).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            header::HeaderValue::from_str(value).unwrap(),
        );
        headers
    }

    #[test]
    fn accept_encoding_table() {
        for (value, expected) in [
            ("gzip", true),
            ("GZIP", true),
            ("deflate, gzip;q=0.5", true),
            ("br, gzip", true),
            ("gzip;q=0", false),
            ("identity", false),
            ("deflate", false),
            ("", false),
        ] {
            assert_eq!(accepts_gzip(&headers(value)), expected, "{value:?}");
        }
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn compresses_only_above_the_threshold() {
        use flate2::read::GzDecoder;
        use std::io::Read;

        let small = crate::api::responses::json_response(200, vec![b'a'; 100]);
        let small = gzip_response(small, 1024).await;
        assert!(!small.headers().contains_key(header::CONTENT_ENCODING));

        let body = b"{\"items\":[]}".repeat(1000);
        let large = crate::api::responses::json_response(200, body.clone());
        let large = gzip_response(large, 1024).await;
        assert_eq!(large.headers()[header::CONTENT_ENCODING], "gzip");
        let compressed = large.into_body().collect().await.unwrap().to_bytes();
        assert!(compressed.len() < body.len() / 10);
        let mut plain = Vec::new();
        GzDecoder::new(&compressed[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, body);
    }
}
