//! [`AdmissionHandler`]: what answers the admission reviews of one path;
//! the raw form every typed validator and defaulter becomes, and the
//! escape hatch for any kind ([`handler_fn`]).

use std::future::Future;
use std::pin::Pin;

use base64::Engine as _;

use crate::admission::denial::Denial;
use crate::admission::review::{AdmissionRequest, AdmissionResponse};

/// A boxed future, as [`AdmissionHandler::handle`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Warnings a handler gives back; kubectl prints each (keep them under
/// 120 characters).
pub type Warnings = Vec<String>;

/// Answers admission requests. Implementations may read caches (a
/// manager's listers) but should not wait on the API server: it waits for
/// the answer only `timeoutSeconds`.
pub trait AdmissionHandler: Send + Sync + 'static {
    /// The response to `request`; its `uid` is filled in by the server.
    fn handle<'a>(&'a self, request: &'a AdmissionRequest) -> BoxFuture<'a, AdmissionResponse>;
}

/// A handler from an async function of the request.
pub fn handler_fn<F, Fut>(function: F) -> impl AdmissionHandler
where
    F: Fn(AdmissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send + 'static,
{
    FnHandler(function)
}

struct FnHandler<F>(F);

impl<F, Fut> AdmissionHandler for FnHandler<F>
where
    F: Fn(AdmissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send + 'static,
{
    fn handle<'a>(&'a self, request: &'a AdmissionRequest) -> BoxFuture<'a, AdmissionResponse> {
        Box::pin((self.0)(request.clone()))
    }
}

impl AdmissionResponse {
    /// Allowed, unchanged.
    pub fn allowed() -> Self {
        AdmissionResponse {
            allowed: true,
            ..AdmissionResponse::default()
        }
    }

    /// Refused with `denial`'s Status.
    pub fn denied(denial: &Denial) -> Self {
        AdmissionResponse {
            allowed: false,
            status: Some(denial.to_status()),
            ..AdmissionResponse::default()
        }
    }

    /// Refused because the request could not be handled (`code`: 400 for
    /// a request the handler cannot read, 500 for its own failure).
    pub fn errored(code: u16, message: impl Into<String>) -> Self {
        let mut denial = Denial::forbidden(message);
        denial.code = code;
        denial.reason = if code == 400 {
            clientgo_apimachinery::StatusReason::BadRequest
        } else {
            clientgo_apimachinery::StatusReason::InternalError
        };
        AdmissionResponse::denied(&denial)
    }

    /// Allowed, changed by `operations` (a JSON patch, RFC 6902); no
    /// patch when there are none.
    pub fn patched(operations: &json_patch::Patch) -> Self {
        let mut response = AdmissionResponse::allowed();
        if !operations.0.is_empty() {
            let bytes = serde_json::to_vec(operations).unwrap_or_default();
            response.patch = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
            response.patch_type = Some("JSONPatch".into());
        }
        response
    }

    /// With `warnings` for the user.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        if !warnings.is_empty() {
            self.warnings = Some(warnings);
        }
        self
    }
}
