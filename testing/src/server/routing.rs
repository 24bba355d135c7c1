//! Routing one request: faults, authentication, the in-flight limit,
//! discovery and the version, then the resource handlers by verb.
use std::sync::Arc;

use bytes::Bytes;
use clientgo_apimachinery::{GroupResource, ListOptions, PROTOBUF_MEDIA_TYPE, Status};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};

use crate::api::crd::{self, create_crd, delete_crd};
use crate::api::discovery;
use crate::api::handlers::{self, Answer, Representation};
use crate::api::protobuf::Encoding;
use crate::api::request_path::{self, ResourcePath};
use crate::api::responses::{
    ResponseBody, answer_response, answer_response_in, json_response, page_not_found, read_body,
    status_response, text_response, too_many_requests_response, version_body,
};
use crate::api::subresources;
use crate::api::watch;
use crate::faults::controls::Failure;
use crate::faults::request_log::{RequestRecord, Verb};
use crate::server::auth::{authenticated, forbidden, verb_of};
use crate::server::state::ServerState;
use crate::store::field_owners::Writer;
use crate::store::writes::is_pod;

/// What the server knows of a connection's client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer {
    /// Whether it presented a client certificate the server trusts.
    pub(crate) certified: bool,
    /// The connection's number, from 1 in accept order.
    pub(crate) connection: u64,
}

/// Answers one request; `None` means "reset it unanswered".
pub(crate) async fn dispatch(
    state: Arc<ServerState>,
    request: Request<Incoming>,
    peer: Peer,
) -> Option<Response<ResponseBody>> {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let http_version = format!("{:?}", request.version());
    let headers = owned_headers(request.headers());
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    // Parsed once here, then handed to the deny check and the router.
    let parsed = request_path::parse(&path, &state.registry.read());
    let options = ListOptions::from_query(&query);
    let target = parsed.as_ref().ok().and_then(Option::as_ref);
    let watching = options.as_ref().is_ok_and(|o| o.watch);
    let verb = verb_of(&method, target, watching);
    // kube-apiserver's long-running requests: watches and the streaming
    // subresources (its `LongRunningRequestCheck`).
    let long_running = verb == Verb::Watch
        || target.is_some_and(|target| {
            matches!(
                target.subresource.as_deref(),
                Some("log" | "exec" | "attach" | "portforward" | "proxy")
            )
        });
    // kube-apiserver compresses resource requests' answers, never a
    // long-running one's (this server gathers a body to compress it).
    let compress = state.gzip
        && target.is_some()
        && !long_running
        && crate::server::compression::accepts_gzip(&headers);
    // The real filter chain: authentication, then max-in-flight (which
    // lets long-running requests through), then authorization. Injected
    // latency counts as serving time.
    let slot = (!long_running).then(|| state.in_flight.enter());
    let latency = state.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let issuer_path =
        path == crate::server::oidc::DISCOVERY_PATH || path == crate::server::oidc::TOKEN_PATH;
    let response = if let (Some(issuer), true) = (&state.oidc, issuer_path) {
        // The identity provider's endpoints, outside the API's filters.
        let body = read_body(request).await.unwrap_or_default();
        let scheme = if state.tls { "https" } else { "http" };
        let base_url = format!("{scheme}://{}", state.address);
        crate::server::oidc::answer(issuer, &base_url, &method, &path, &body)
    } else if !authenticated(&state.auth, &request, peer.certified) {
        Some(status_response(&Status::unauthorized("Unauthorized")))
    } else if matches!(slot, Some(None)) {
        Some(too_many_requests_response())
    } else {
        respond(&state, request, verb, parsed, options).await
    };
    drop(slot);
    let mut response = match response {
        Some(response) if compress => Some(
            crate::server::compression::gzip_response(
                response,
                crate::server::compression::GZIP_THRESHOLD_BYTES,
            )
            .await,
        ),
        other => other,
    };
    if let (Some(response), Some(text)) = (response.as_mut(), state.faults.warning()) {
        let quoted = format!("299 - {:?}", text);
        if let Ok(value) = header::HeaderValue::from_str(&quoted) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    state.log.record(RequestRecord {
        method: method.to_string(),
        path,
        query,
        verb,
        // A reset request is logged with status 0: it had no answer.
        status: response.as_ref().map_or(0, |r| r.status().as_u16()),
        duration: started.elapsed(),
        http_version,
        connection: peer.connection,
        headers,
        response_encoding: response.as_ref().and_then(|r| {
            r.headers()
                .get(header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        }),
    });
    response
}

pub(crate) async fn respond(
    state: &Arc<ServerState>,
    request: Request<Incoming>,
    verb: Verb,
    parsed: Result<Option<ResourcePath>, Status>,
    options: Result<ListOptions, clientgo_apimachinery::ListOptionsError>,
) -> Option<Response<ResponseBody>> {
    if let Some(status) = forbidden(
        &state.denied,
        parsed.as_ref().ok().and_then(Option::as_ref),
        verb,
    ) {
        return Some(status_response(&status));
    }
    let response = match state.faults.take_failure(verb) {
        Some(Failure::Reset) => return None,
        Some(Failure::Raw {
            code,
            content_type,
            body,
            retry_after,
        }) => {
            let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
            *response.status_mut() =
                StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            if let Ok(value) = header::HeaderValue::from_str(&content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            if let Some(value) =
                retry_after.and_then(|text: String| header::HeaderValue::from_str(&text).ok())
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Some(Failure::Status(status)) => {
            let mut response = status_response(&status);
            if let Some(seconds) = status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        None => route(Arc::clone(state), request, parsed, options).await,
    };
    Some(response)
}

pub(crate) async fn route(
    state: Arc<ServerState>,
    request: Request<Incoming>,
    parsed: Result<Option<ResourcePath>, Status>,
    options: Result<ListOptions, clientgo_apimachinery::ListOptionsError>,
) -> Response<ResponseBody> {
    let path = request.uri().path().to_string();
    match path.trim_end_matches('/') {
        "/version" => return json_response(200, version_body()),
        "/healthz" | "/readyz" | "/livez" => return text_response("ok"),
        "/api" | "/apis" => {
            let core = path.trim_end_matches('/') == "/api";
            let accept = request
                .headers()
                .get(header::ACCEPT)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default();
            if state.aggregated_discovery && discovery::wants_aggregated(accept) {
                let document = discovery::aggregated(&state.registry.read(), core);
                let mut response =
                    json_response(200, serde_json::to_vec(&document).unwrap_or_default());
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static(discovery::AGGREGATED_CONTENT_TYPE),
                );
                return response;
            }
            let document = if core {
                discovery::core_versions(&state.address.to_string())
            } else {
                discovery::group_list(&state.registry.read())
            };
            return json_response(200, serde_json::to_vec(&document).unwrap_or_default());
        }
        "/openapi/v2" => {
            return match &state.openapi_v2 {
                Some(spec) => {
                    let mut response = Response::new(Full::new(spec.clone()).boxed());
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("application/json"),
                    );
                    response
                }
                None => status_response(&Status::not_found(
                    &GroupResource::new("", ""),
                    "/openapi/v2",
                )),
            };
        }
        trimmed => {
            let segments: Vec<&str> = trimmed.trim_start_matches('/').split('/').collect();
            let group_version = match segments.as_slice() {
                ["api", version] => Some(("", *version)),
                ["apis", group, version] => Some((*group, *version)),
                _ => None,
            };
            if let Some((group, version)) = group_version {
                let document = discovery::resource_list(&state.registry.read(), group, version);
                return match document {
                    Some(document) => {
                        json_response(200, serde_json::to_vec(&document).unwrap_or_default())
                    }
                    None => page_not_found(),
                };
            }
        }
    }
    let header_text = |name: header::HeaderName| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let accept = header_text(header::ACCEPT);
    let target = match parsed {
        Ok(Some(target)) => target,
        Ok(None) => return page_not_found(),
        // In protobuf when asked, as the real server answers an unknown
        // resource of a served group.
        Err(status) => {
            let protobuf = state.protobuf && accept.contains(PROTOBUF_MEDIA_TYPE);
            return answer_response_in(Err(status), protobuf);
        }
    };
    let mut options = match options {
        Ok(options) => options,
        Err(e) => return status_response(&Status::bad_request(e.to_string())),
    };
    // With ShardedListAndWatch off (1.36's default) the field is ignored.
    if !state.sharded_list_and_watch {
        options.shard_selector = None;
    }
    let method = request.method().clone();
    let storage = Arc::clone(&state.storage);
    let representation = Representation::from_accept(&accept);
    let typed_items = !state.registry.read().is_builtin(&target.resource);
    let content_type = header_text(header::CONTENT_TYPE);
    let reads = request.method() == Method::GET;
    let encoding = match Encoding::negotiate(
        if state.protobuf {
            &accept
        } else {
            "application/json"
        },
        &target.resource,
        representation == Representation::MetadataOnly,
    ) {
        Ok(encoding) => encoding,
        Err(status) if reads => return status_response(&status),
        // Writes answer JSON whatever was asked (their bodies are JSON).
        Err(_) => Encoding::Json,
    };
    let protobuf = matches!(encoding, Encoding::Protobuf(_));
    let subresource = target.subresource.clone().unwrap_or_default();
    match (method, target.name.is_some()) {
        (_, true)
            if subresource == "scale"
                && !discovery::has_scale(target.resource.group(), target.resource.plural()) =>
        {
            let name = format!("{}/scale", target.name.as_deref().unwrap_or_default());
            status_response(&Status::not_found(&target.resource.group_resource(), &name))
        }
        (Method::GET, true) if subresource == "scale" => {
            answer_response(subresources::get_scale(&storage, &target))
        }
        (Method::PUT | Method::PATCH, true) if subresource == "scale" => {
            let patch = request.method() == Method::PATCH;
            with_body(request, |body| {
                subresources::write_scale(&storage, &target, body, patch)
            })
            .await
        }
        (Method::POST, true)
            if subresource == "eviction" && is_pod(&target.resource.group_resource()) =>
        {
            with_body(request, |body| subresources::evict(&storage, &target, body)).await
        }
        (Method::GET | Method::POST, true)
            if matches!(subresource.as_str(), "exec" | "attach")
                && is_pod(&target.resource.group_resource()) =>
        {
            crate::streams::fake_container::start(
                &state.storage,
                &state.faults,
                &state.shutdown,
                state.channel_v5,
                request,
                &target,
                subresource == "exec",
            )
        }
        (Method::GET | Method::POST, true)
            if subresource == "portforward" && is_pod(&target.resource.group_resource()) =>
        {
            crate::streams::port_forward::start(
                &state.storage,
                Arc::clone(&state.port_forwards),
                Arc::clone(&state.faults),
                state.shutdown.clone(),
                request,
                &target,
            )
        }
        (Method::GET, true)
            if subresource == "log" && is_pod(&target.resource.group_resource()) =>
        {
            let query = request.uri().query().unwrap_or_default().to_string();
            match subresources::log(
                &storage,
                &state.pod_logs,
                &target,
                &query,
                state.shutdown.clone(),
            ) {
                Ok(body) => {
                    let mut response = Response::new(body.boxed());
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("text/plain"),
                    );
                    response
                }
                Err(status) => status_response(&status),
            }
        }
        (Method::GET, false) if options.watch => {
            match watch::watch(
                storage,
                target,
                options,
                state.watch,
                state.shutdown.clone(),
                Arc::clone(&state.faults),
                (representation, encoding),
            ) {
                Ok(body) => {
                    let mut response = Response::new(body.boxed());
                    let media = if protobuf {
                        crate::api::protobuf::PROTOBUF_WATCH_MEDIA_TYPE
                    } else {
                        "application/json"
                    };
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static(media),
                    );
                    response
                }
                Err(status) => answer_response_in(Err(status), protobuf),
            }
        }
        (Method::GET, false) => answer_response_in(
            handlers::list(
                &storage,
                &target,
                &options,
                representation,
                encoding,
                typed_items,
                state.watch.watch_cache,
            )
            .await,
            protobuf,
        ),
        (Method::GET, true) => answer_response_in(
            handlers::get(&storage, &target, representation, encoding),
            protobuf,
        ),
        (Method::POST, false) if crd::is_crd_resource(&target.resource) => {
            with_body(request, |body| {
                create_crd(&state.storage, &state.registry, &target, body)
            })
            .await
        }
        (Method::POST, false) => {
            with_body(request, |body| handlers::create(&storage, &target, body)).await
        }
        (Method::PUT, true) => {
            let writer = writer_of(&request, &target);
            with_body(request, |body| {
                handlers::update(&storage, &target, body, &writer)
            })
            .await
        }
        (Method::PATCH, true) if crd::is_crd_resource(&target.resource) => {
            let writer = writer_of(&request, &target);
            with_body(request, |body| {
                crd::patch_crd(
                    &state.storage,
                    &state.registry,
                    &target,
                    &content_type,
                    body,
                    &writer,
                )
            })
            .await
        }
        (Method::PATCH, true) => {
            let writer = writer_of(&request, &target);
            with_body(request, |body| {
                handlers::patch(&storage, &target, &content_type, body, &writer)
            })
            .await
        }
        (Method::DELETE, false) => answer_response(handlers::delete_collection(
            &storage,
            &target,
            &options,
            typed_items,
        )),
        (Method::DELETE, true) if crd::is_crd_resource(&target.resource) => {
            with_body(request, |body| {
                delete_crd(&state.storage, &state.registry, &target, body)
            })
            .await
        }
        (Method::DELETE, true) => {
            with_body(request, |body| handlers::delete(&storage, &target, body)).await
        }
        (method, _) => status_response(&unsupported(&target, &method)),
    }
}

pub(crate) fn unsupported(target: &ResourcePath, method: &Method) -> Status {
    Status::method_not_supported(&target.resource.group_resource(), method.as_str())
}

pub(crate) async fn with_body(
    request: Request<Incoming>,
    handle: impl FnOnce(&[u8]) -> Result<Answer, Status>,
) -> Response<ResponseBody> {
    match read_body(request).await {
        Ok(body) => answer_response(handle(&body)),
        Err(status) => status_response(&status),
    }
}

/// Who a write is by, for server-side apply's field ownership.
fn writer_of(request: &Request<Incoming>, target: &ResourcePath) -> Writer {
    let user_agent = request
        .headers()
        .get(header::USER_AGENT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    Writer::from_request(
        request.uri().query().unwrap_or_default(),
        user_agent,
        target.resource.api_version(),
    )
}

/// A copy of `headers` that owns its bytes. hyper's parsed values are
/// slices of the connection's read buffer, so a plain clone kept in the
/// request log would keep each of those buffers alive for the server's
/// life (the chaos soak's residual memory rise, RELIABILITY.md).
fn owned_headers(headers: &header::HeaderMap) -> header::HeaderMap {
    let mut owned = header::HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        // Valid already (hyper parsed it), so this cannot fail; a value it
        // would refuse is kept as the shared original rather than lost.
        let mut copy =
            header::HeaderValue::from_bytes(value.as_bytes()).unwrap_or_else(|_| value.clone());
        copy.set_sensitive(value.is_sensitive());
        owned.append(name.clone(), copy);
    }
    owned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_headers_copy_every_value_out_of_the_read_buffer() {
        // A value sharing a larger buffer, as hyper parses them.
        let buffer = bytes::Bytes::from_static(b"GET / HTTP/1.1\r\nx-a: one\r\n");
        let shared =
            header::HeaderValue::from_maybe_shared(buffer.slice(21..24)).expect("a valid value");
        let mut headers = header::HeaderMap::new();
        headers.append("x-a", shared.clone());
        headers.append("x-a", header::HeaderValue::from_static("two"));
        let mut secret = header::HeaderValue::from_static("Bearer t");
        secret.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, secret);

        let owned = owned_headers(&headers);

        let values: Vec<_> = owned.get_all("x-a").iter().collect();
        assert_eq!(values, ["one", "two"], "every value, in order");
        assert_ne!(
            values[0].as_bytes().as_ptr(),
            shared.as_bytes().as_ptr(),
            "the copy must not point into the shared buffer"
        );
        let authorization = owned.get(header::AUTHORIZATION).expect("kept");
        assert!(authorization.is_sensitive(), "sensitivity is kept");
        assert_eq!(owned.len(), headers.len());
    }
}
