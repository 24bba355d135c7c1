//! The REST path: how one built [`Request`](crate::Request) becomes a 2xx
//! response (client-go's `Request.request` loop), as explicit steps over a
//! plain [`Prepared`] value. Each attempt:
//!
//! 1. [`throttle`](ClientInner::throttle): waits in the client-side rate
//!    limiter (not a watch);
//! 2. [`authorize`](ClientInner::authorize): re-reads changed certificate
//!    files, then gets the attempt's credential (a token file read, an exec
//!    plugin run); a new client certificate renews the connections;
//! 3. [`connection`](ClientInner::connection): the shared pool for short
//!    requests, a connection lane for a watch;
//! 4. [`send_attempt`](ClientInner::send_attempt): sends it inside a span
//!    named `request`, and reports metrics;
//! 5. [`retry::decide`]: succeed, send again (after a wait, with fresh
//!    credentials, or on another lane) or fail.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::Method;
use reqwest::header::{self, HeaderMap, HeaderValue};
use tracing::Instrument;

use crate::auth::authorization::Authorization;
use crate::client::error::Error;
use crate::client::inner::ClientInner;
use crate::client::response::{error_from_response, path_of, retry_after_seconds};
use crate::client::retry::{self, Budget, Decision, Outcome};
use crate::transport::connection_lanes::LaneTicket;
use crate::transport::http::describe_http_error;

/// A request ready to send: everything the attempts need, and nothing of
/// how it was built.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    /// The body and its `Content-Type`.
    pub(crate) body: Option<(Bytes, HeaderValue)>,
    /// This request's time limit, over the client's.
    pub(crate) timeout: Option<Duration>,
    /// This request's retry limit, over the client's.
    pub(crate) max_retries: Option<u32>,
}

/// How a request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Throttled, under the client's time limit, on the shared pool.
    Short,
    /// Never throttled (client-go's rule: a relist storm is bounded by the
    /// reflector's backoff), no time limit but its own, on a connection
    /// lane of its own.
    Watch,
    /// A WebSocket upgrade (exec, attach, port-forward): not throttled (as
    /// client-go's stream executors, which dial outside the rate limiter),
    /// no time limit but its own, on an HTTP/1.1 connection of its own
    /// that the upgrade takes out of the pool.
    Upgrade,
}

/// A 2xx answer, its URL, and for a watch the lane it holds.
pub(crate) type Sent = (reqwest::Response, String, Option<LaneTicket>);

impl ClientInner {
    /// Sends `request` until [`retry::decide`] says it succeeded or failed;
    /// the error is the last attempt's.
    pub(crate) async fn execute(&self, request: Prepared, kind: Kind) -> Result<Sent, Error> {
        let watch = kind == Kind::Watch;
        let short = kind == Kind::Short;
        let timeout = request.timeout.or(if short { self.timeout } else { None });
        let mut budget = Budget {
            retries: 0,
            max_retries: request.max_retries.unwrap_or(self.max_retries),
            reauthenticated: false,
            get: request.method == Method::GET,
        };
        let mut lane = watch.then(|| self.lanes.long_running());
        loop {
            if short {
                self.throttle(&request.method).await;
            }
            let authorization = self.authorize().await?;
            let client = match kind {
                Kind::Upgrade => self.upgrade_http.clone(),
                Kind::Short | Kind::Watch => self.connection(&mut lane).await,
            };
            let builder = build(&client, &request, &authorization, timeout);
            let (sent, outcome) = self.send_attempt(&request, builder, lane.as_ref()).await;
            if let (Some(lane), Outcome::Answered { .. }) = (&mut lane, outcome) {
                lane.answered();
            }
            match (retry::decide(outcome, budget), sent) {
                (Decision::Succeed, Some(Ok(response))) => {
                    return Ok((response, request.url, lane));
                }
                // Only a queued attempt has nothing sent, and `decide`
                // sends it elsewhere.
                (Decision::SendElsewhere, _) | (_, None) => {
                    lane = Some(self.lanes.long_running());
                }
                (Decision::Reauthenticate, Some(Ok(response))) => {
                    budget.reauthenticated = true;
                    if !self.auth.unauthorized(&authorization).await {
                        return Err(error_from_response(response, &request.url).await);
                    }
                    self.counters
                        .reauthentications
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(url = %request.url, "401 Unauthorized; sending again with fresh credentials");
                }
                (Decision::RetryAfter(wait), sent) => {
                    budget.retries += 1;
                    self.counters.retries.fetch_add(1, Ordering::Relaxed);
                    log_retry(&request.url, sent.as_ref(), wait, budget);
                    tokio::time::sleep(wait).await;
                }
                (_, Some(Ok(response))) => {
                    return Err(error_from_response(response, &request.url).await);
                }
                (_, Some(Err(source))) => {
                    return Err(Error::Http {
                        url: request.url,
                        source,
                    });
                }
            }
        }
    }

    /// Step 1: waits in the rate limiter, when there is one, and counts
    /// the wait.
    async fn throttle(&self, method: &Method) {
        let Some(bucket) = &self.throttle else {
            return;
        };
        let waited = bucket.accept().await;
        if let Some(metrics) = self.request_metrics.get() {
            metrics.rate_limiter_latency(method.as_str(), &self.host_label, waited);
        }
        if !waited.is_zero() {
            self.counters.throttled.fetch_add(1, Ordering::Relaxed);
            self.counters
                .throttle_wait_micros
                .fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
        }
    }

    /// Step 2: the attempt's credential, after re-reading certificate
    /// files that changed; either change of certificate renews the
    /// connections, so the next ones present it.
    async fn authorize(&self) -> Result<Authorization, Error> {
        if let Some(reload) = &self.tls_reload
            && reload.check()
        {
            self.renew_connections();
        }
        let authorization = self.auth.authorization().await?;
        if authorization.certificate_changed {
            self.renew_connections();
        }
        Ok(authorization)
    }

    /// Step 3: the HTTP client to send on: the shared pool, or the watch's
    /// lane once its connection is up (an upgrade has a client of its own).
    async fn connection(&self, lane: &mut Option<LaneTicket>) -> reqwest::Client {
        match lane {
            Some(ticket) => {
                ticket.wait_for_connection(self.watch_header_wait).await;
                ticket.client().clone()
            }
            None => self.lanes.general(),
        }
    }

    /// Step 4: sends one attempt in a `request` span (verb and path, never
    /// a header value; then status and duration), counts it and reports
    /// its metrics. `None` for a watch queued behind its connection's
    /// stream limit (never sent).
    async fn send_attempt(
        &self,
        request: &Prepared,
        builder: reqwest::RequestBuilder,
        lane: Option<&LaneTicket>,
    ) -> (Option<reqwest::Result<reqwest::Response>>, Outcome) {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let span = tracing::debug_span!(
            target: "clientgo_rest::request",
            "request",
            verb = %request.method,
            path = %path_of(&request.url),
            status = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        let sent = match lane {
            Some(lane) => {
                send_long_running(lane, builder, self.watch_header_wait)
                    .instrument(span.clone())
                    .await
            }
            None => Some(builder.send().instrument(span.clone()).await),
        };
        let Some(sent) = sent else {
            return (None, Outcome::Queued);
        };
        let latency = started.elapsed();
        let code = sent.as_ref().ok().map(|r| r.status().as_u16());
        if let Some(metrics) = self.request_metrics.get() {
            let code = code.map_or_else(|| "<error>".to_string(), |code| code.to_string());
            metrics.request_result(&code, request.method.as_str(), &self.host_label);
            metrics.request_latency(request.method.as_str(), &self.host_label, latency);
        }
        let duration_ms = latency.as_secs_f64() * 1000.0;
        if let Some(code) = code {
            span.record("status", code);
        }
        span.record("duration_ms", duration_ms);
        span.in_scope(|| {
            tracing::debug!(target: "clientgo_rest::request", status = ?code, duration_ms, "answered");
        });
        let outcome = match &sent {
            Ok(response) => {
                self.handle_warnings(response.headers());
                Outcome::Answered {
                    code: response.status().as_u16(),
                    retry_after: retry_after_seconds(response.headers()),
                }
            }
            Err(error) if connection_broke(error) => Outcome::ConnectionBroke,
            Err(_) => Outcome::Failed,
        };
        (Some(sent), outcome)
    }
}

/// The attempt as reqwest sends it: the request's headers, the
/// credential, the body, a default `Accept`, the time limit.
fn build(
    client: &reqwest::Client,
    request: &Prepared,
    authorization: &Authorization,
    timeout: Option<Duration>,
) -> reqwest::RequestBuilder {
    let mut builder = client
        .request(request.method.clone(), &request.url)
        .headers(request.headers.clone());
    if let Some(value) = &authorization.header {
        builder = builder.header(header::AUTHORIZATION, value.clone());
    }
    if let Some((body, content_type)) = &request.body {
        builder = builder
            .header(header::CONTENT_TYPE, content_type.clone())
            .body(body.clone());
    }
    if !request.headers.contains_key(header::ACCEPT) {
        builder = builder.header(header::ACCEPT, "application/json, */*");
    }
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder
}

/// Logs a retry: after a server's `Retry-After` (with the priority and
/// fairness flow schema that throttled it), or after a broken connection.
fn log_retry(
    url: &str,
    sent: Option<&reqwest::Result<reqwest::Response>>,
    wait: Duration,
    budget: Budget,
) {
    match sent {
        Some(Ok(response)) => {
            let flow_schema = response
                .headers()
                .get("x-kubernetes-pf-flowschema-uid")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            tracing::info!(
                %url,
                code = response.status().as_u16(),
                retry_after_seconds = wait.as_secs(),
                attempt = budget.retries,
                max_retries = budget.max_retries,
                flow_schema,
                "the API server asked to retry later"
            );
        }
        Some(Err(error)) => tracing::info!(
            %url,
            error = %describe_http_error(error),
            attempt = budget.retries,
            "GET failed without an answer; retrying"
        ),
        None => {}
    }
}

/// Sends a long-running request on its lane. `None` when its headers did
/// not come within `wait` while other requests on the lane were answered:
/// it is queued behind the connection's stream limit, and dropping it here
/// takes it out of that queue (an HTTP/2 request waiting for a stream was
/// never sent). Otherwise waits as long as the answer takes.
async fn send_long_running(
    lane: &LaneTicket,
    builder: reqwest::RequestBuilder,
    wait: Duration,
) -> Option<reqwest::Result<reqwest::Response>> {
    let send = builder.send();
    tokio::pin!(send);
    match tokio::time::timeout(wait, &mut send).await {
        Ok(sent) => Some(sent),
        Err(_) if lane.lane_is_full() => None,
        Err(_) => Some(send.await),
    }
}

/// Whether a request failed because an established connection broke (reset,
/// closed before the answer): client-go retries such GETs. Not a timeout,
/// not a failure to connect, and never a TLS problem (a wrong CA does not
/// get better by asking again).
fn connection_broke(error: &reqwest::Error) -> bool {
    if error.is_timeout() || error.is_connect() || !(error.is_request() || error.is_body()) {
        return false;
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.is::<rustls::Error>() {
            return false;
        }
        source = cause.source();
    }
    true
}
