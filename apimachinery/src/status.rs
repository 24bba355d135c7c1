//! [`Status`]: the body the API server sends with every error (and in watch
//! ERROR events), with its [`StatusReason`], details and causes, the
//! predicates client-go's `apierrors` package offers, and constructors that
//! produce the real server's messages.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::group_version::GroupResource;

/// Why a request failed: the `reason` field of a [`Status`].
///
/// Every reason the API server sends has a variant. Any other string is kept
/// as [`StatusReason::Other`] and written back unchanged; an absent or empty
/// reason is [`StatusReason::Unknown`]. When the reason is not one of the
/// known values, the predicates on [`Status`] fall back to the HTTP code,
/// exactly as client-go does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum StatusReason {
    /// No reason was given (`""`).
    #[default]
    Unknown,
    /// 401: the request lacks valid credentials.
    Unauthorized,
    /// 403: the credentials are not allowed to do this.
    Forbidden,
    /// 404: the object or resource does not exist.
    NotFound,
    /// 409: the object to create already exists.
    AlreadyExists,
    /// 409: the write was based on a stale resourceVersion.
    Conflict,
    /// 410: the resource is gone (older servers' form of "too old").
    Gone,
    /// 422: the object failed validation.
    Invalid,
    /// 500 (usually): the server could not finish in time and the client
    /// should retry after a delay.
    ServerTimeout,
    /// 500: the server could not read the object from storage.
    StoreReadError,
    /// 504: the request timed out (also sent for a resourceVersion the
    /// server has not reached yet).
    Timeout,
    /// 429: the client is being throttled by the server.
    TooManyRequests,
    /// 400: the request itself is malformed.
    BadRequest,
    /// 405: the resource does not support this verb.
    MethodNotAllowed,
    /// 406: none of the accepted media types can be produced.
    NotAcceptable,
    /// 413: the request body is too large.
    RequestEntityTooLarge,
    /// 415: the request body's media type is not supported.
    UnsupportedMediaType,
    /// 500: an unexpected error inside the server.
    InternalError,
    /// 410: the requested resourceVersion is older than the server keeps.
    Expired,
    /// 503: the server cannot serve the request right now.
    ServiceUnavailable,
    /// Any other reason, kept as sent.
    Other(String),
}

impl StatusReason {
    /// Every known reason, for tests and documentation.
    pub const KNOWN: [StatusReason; 19] = [
        StatusReason::Unauthorized,
        StatusReason::Forbidden,
        StatusReason::NotFound,
        StatusReason::AlreadyExists,
        StatusReason::Conflict,
        StatusReason::Gone,
        StatusReason::Invalid,
        StatusReason::ServerTimeout,
        StatusReason::StoreReadError,
        StatusReason::Timeout,
        StatusReason::TooManyRequests,
        StatusReason::BadRequest,
        StatusReason::MethodNotAllowed,
        StatusReason::NotAcceptable,
        StatusReason::RequestEntityTooLarge,
        StatusReason::UnsupportedMediaType,
        StatusReason::InternalError,
        StatusReason::Expired,
        StatusReason::ServiceUnavailable,
    ];

    /// The reason as sent on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            StatusReason::Unknown => "",
            StatusReason::Unauthorized => "Unauthorized",
            StatusReason::Forbidden => "Forbidden",
            StatusReason::NotFound => "NotFound",
            StatusReason::AlreadyExists => "AlreadyExists",
            StatusReason::Conflict => "Conflict",
            StatusReason::Gone => "Gone",
            StatusReason::Invalid => "Invalid",
            StatusReason::ServerTimeout => "ServerTimeout",
            StatusReason::StoreReadError => "StorageReadError",
            StatusReason::Timeout => "Timeout",
            StatusReason::TooManyRequests => "TooManyRequests",
            StatusReason::BadRequest => "BadRequest",
            StatusReason::MethodNotAllowed => "MethodNotAllowed",
            StatusReason::NotAcceptable => "NotAcceptable",
            StatusReason::RequestEntityTooLarge => "RequestEntityTooLarge",
            StatusReason::UnsupportedMediaType => "UnsupportedMediaType",
            StatusReason::InternalError => "InternalError",
            StatusReason::Expired => "Expired",
            StatusReason::ServiceUnavailable => "ServiceUnavailable",
            StatusReason::Other(other) => other,
        }
    }

    /// Reads a reason from its wire form; unknown strings become
    /// [`StatusReason::Other`].
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "" => StatusReason::Unknown,
            "Unauthorized" => StatusReason::Unauthorized,
            "Forbidden" => StatusReason::Forbidden,
            "NotFound" => StatusReason::NotFound,
            "AlreadyExists" => StatusReason::AlreadyExists,
            "Conflict" => StatusReason::Conflict,
            "Gone" => StatusReason::Gone,
            "Invalid" => StatusReason::Invalid,
            "ServerTimeout" => StatusReason::ServerTimeout,
            "StorageReadError" => StatusReason::StoreReadError,
            "Timeout" => StatusReason::Timeout,
            "TooManyRequests" => StatusReason::TooManyRequests,
            "BadRequest" => StatusReason::BadRequest,
            "MethodNotAllowed" => StatusReason::MethodNotAllowed,
            "NotAcceptable" => StatusReason::NotAcceptable,
            "RequestEntityTooLarge" => StatusReason::RequestEntityTooLarge,
            "UnsupportedMediaType" => StatusReason::UnsupportedMediaType,
            "InternalError" => StatusReason::InternalError,
            "Expired" => StatusReason::Expired,
            "ServiceUnavailable" => StatusReason::ServiceUnavailable,
            other => StatusReason::Other(other.to_string()),
        }
    }

    /// Whether this is one of the reasons the API server defines (not
    /// [`Unknown`](StatusReason::Unknown) or [`Other`](StatusReason::Other)).
    pub fn is_known(&self) -> bool {
        !matches!(self, StatusReason::Unknown | StatusReason::Other(_))
    }

    /// The reason client-go gives an HTTP status code when the body carries
    /// no Status (`NewGenericServerResponse`).
    pub fn for_http_code(code: u16) -> Self {
        match code {
            400 => StatusReason::BadRequest,
            401 => StatusReason::Unauthorized,
            403 => StatusReason::Forbidden,
            404 => StatusReason::NotFound,
            405 => StatusReason::MethodNotAllowed,
            406 => StatusReason::NotAcceptable,
            409 => StatusReason::Conflict,
            410 => StatusReason::Gone,
            413 => StatusReason::RequestEntityTooLarge,
            415 => StatusReason::UnsupportedMediaType,
            422 => StatusReason::Invalid,
            429 => StatusReason::TooManyRequests,
            500 => StatusReason::InternalError,
            503 => StatusReason::ServiceUnavailable,
            504 => StatusReason::Timeout,
            _ => StatusReason::Unknown,
        }
    }
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StatusReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StatusReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let reason = <Option<std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
        Ok(reason.map_or(StatusReason::Unknown, |r| StatusReason::from_wire(&r)))
    }
}

/// Well-known values of [`StatusCause::reason`] (`metav1.CauseType`).
pub mod cause_type {
    /// A required field or value was not found.
    pub const FIELD_VALUE_NOT_FOUND: &str = "FieldValueNotFound";
    /// A required field was empty.
    pub const FIELD_VALUE_REQUIRED: &str = "FieldValueRequired";
    /// A value was duplicated where it must be unique.
    pub const FIELD_VALUE_DUPLICATE: &str = "FieldValueDuplicate";
    /// A value is invalid.
    pub const FIELD_VALUE_INVALID: &str = "FieldValueInvalid";
    /// A value is not one of the supported ones.
    pub const FIELD_VALUE_NOT_SUPPORTED: &str = "FieldValueNotSupported";
    /// A value is forbidden in this context.
    pub const FIELD_VALUE_FORBIDDEN: &str = "FieldValueForbidden";
    /// A value is too long.
    pub const FIELD_VALUE_TOO_LONG: &str = "FieldValueTooLong";
    /// A list has too many items.
    pub const FIELD_VALUE_TOO_MANY: &str = "FieldValueTooMany";
    /// The server hit an internal error while validating.
    pub const INTERNAL_ERROR: &str = "InternalError";
    /// A value has the wrong type.
    pub const FIELD_VALUE_TYPE_INVALID: &str = "FieldValueTypeInvalid";
    /// The server's response could not be understood by a client.
    pub const UNEXPECTED_SERVER_RESPONSE: &str = "UnexpectedServerResponse";
    /// Server-side apply found a field owned by another manager.
    pub const FIELD_MANAGER_CONFLICT: &str = "FieldManagerConflict";
    /// The requested resourceVersion is newer than the server has seen.
    pub const RESOURCE_VERSION_TOO_LARGE: &str = "ResourceVersionTooLarge";
}

/// The message older API servers (1.17.0 to 1.18.5, and before 1.17 in the
/// Status message) used for a resourceVersion newer than they had seen.
pub const TOO_LARGE_RESOURCE_VERSION_MESSAGE: &str = "Too large resource version";

/// One cause of a failure, usually naming the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCause {
    /// A machine-readable cause (see [`cause_type`]); empty when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field at fault, as a JSON-path-like string (`spec.replicas`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// Extra detail about a failure: the object concerned, causes, and a
/// suggested retry delay.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The name of the object concerned, when there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its API group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Its kind, or its resource (plural) when that is what the server knew.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Its UID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The causes, when the server listed them.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub causes: Vec<StatusCause>,
    /// How long the client should wait before retrying, in seconds; 0 when
    /// the server made no suggestion.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_after_seconds: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// Metadata of a Status (only meaningful on list-like responses).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusMeta {
    /// The resource version, when the server set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// A fresh continue token: a 410 `Expired` answer to a list whose
    /// continue token was compacted away carries one, to go on with an
    /// inconsistent list (client-go's pager does not use it; it lists
    /// again).
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<String>,
}

/// The `status` field of a [`Status`]: whether the operation succeeded.
pub mod status_value {
    /// The operation succeeded.
    pub const SUCCESS: &str = "Success";
    /// The operation failed.
    pub const FAILURE: &str = "Failure";
}

/// The API server's error body (`metav1.Status`, `kind: Status`), also the
/// object of a watch ERROR event.
///
/// ```
/// use clientgo_apimachinery::{Status, StatusReason};
///
/// let body = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
///   "message":"too old resource version: 1 (5)","reason":"Expired","code":410}"#;
/// let status: Status = serde_json::from_slice(body).unwrap();
/// assert_eq!(status.reason, StatusReason::Expired);
/// assert!(status.is_expired_or_gone());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Always `v1` when sent by the server.
    #[serde(default = "default_status_api_version")]
    pub api_version: String,
    /// Always `Status`.
    #[serde(default = "default_status_kind")]
    pub kind: String,
    /// List metadata; usually empty.
    #[serde(default)]
    pub metadata: StatusMeta,
    /// `Success` or `Failure` (see [`status_value`]); empty when unset.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The machine-readable reason.
    #[serde(default, skip_serializing_if = "is_unknown_reason")]
    pub reason: StatusReason,
    /// Extra detail, when the server gave some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code; 0 when unset.
    #[serde(default, skip_serializing_if = "is_zero_code")]
    pub code: u16,
}

fn default_status_api_version() -> String {
    "v1".to_string()
}

fn default_status_kind() -> String {
    "Status".to_string()
}

fn is_unknown_reason(reason: &StatusReason) -> bool {
    *reason == StatusReason::Unknown
}

fn is_zero_code(code: &u16) -> bool {
    *code == 0
}

impl Default for Status {
    fn default() -> Self {
        Status {
            api_version: default_status_api_version(),
            kind: default_status_kind(),
            metadata: StatusMeta::default(),
            status: String::new(),
            message: String::new(),
            reason: StatusReason::Unknown,
            details: None,
            code: 0,
        }
    }
}

impl fmt::Display for Status {
    /// The message, or when there is none, the reason and code.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.message.is_empty() {
            f.write_str(&self.message)
        } else if self.reason != StatusReason::Unknown {
            write!(f, "{} ({})", self.reason, self.code)
        } else {
            write!(f, "the server responded with HTTP status {}", self.code)
        }
    }
}

impl std::error::Error for Status {}

impl Status {
    /// A failure Status with the given code, reason and message.
    pub fn failure(code: u16, reason: StatusReason, message: impl Into<String>) -> Self {
        Status {
            status: status_value::FAILURE.to_string(),
            message: message.into(),
            reason,
            code,
            ..Status::default()
        }
    }

    /// A success Status (`status: Success`, code 200), as returned by some
    /// deletes.
    pub fn success() -> Self {
        Status {
            status: status_value::SUCCESS.to_string(),
            code: 200,
            ..Status::default()
        }
    }

    /// Adds details to this Status.
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(details);
        self
    }

    /// A failure Status for an HTTP response that carried no Status body
    /// (for example an HTML error page from a proxy), with the reason client
    /// go derives from the code.
    pub fn from_http_code(code: u16, message: impl Into<String>) -> Self {
        Status::failure(code, StatusReason::for_http_code(code), message)
    }

    fn details_for(resource: &GroupResource, name: &str) -> StatusDetails {
        StatusDetails {
            name: name.to_string(),
            group: resource.group.clone(),
            kind: resource.resource.clone(),
            ..StatusDetails::default()
        }
    }

    /// 404 NotFound: `pods "web" not found`.
    pub fn not_found(resource: &GroupResource, name: &str) -> Self {
        Status::failure(
            404,
            StatusReason::NotFound,
            format!("{resource} {name:?} not found"),
        )
        .with_details(Status::details_for(resource, name))
    }

    /// 409 AlreadyExists: `pods "web" already exists`.
    pub fn already_exists(resource: &GroupResource, name: &str) -> Self {
        Status::failure(
            409,
            StatusReason::AlreadyExists,
            format!("{resource} {name:?} already exists"),
        )
        .with_details(Status::details_for(resource, name))
    }

    /// 409 Conflict: `Operation cannot be fulfilled on pods "web": <why>`.
    pub fn conflict(resource: &GroupResource, name: &str, why: &str) -> Self {
        Status::failure(
            409,
            StatusReason::Conflict,
            format!("Operation cannot be fulfilled on {resource} {name:?}: {why}"),
        )
        .with_details(Status::details_for(resource, name))
    }

    /// 410 Expired, as a list or watch from a compacted resourceVersion
    /// gets: the message is given whole, for example `too old resource
    /// version: 5 (100)` or `The provided continue parameter is too old…`.
    pub fn expired(message: impl Into<String>) -> Self {
        Status::failure(410, StatusReason::Expired, message)
    }

    /// 410 Gone.
    pub fn gone(message: impl Into<String>) -> Self {
        Status::failure(410, StatusReason::Gone, message)
    }

    /// 403 Forbidden:
    /// `pods "web" is forbidden: <why>`, or `pods is forbidden: <why>`
    /// without a name.
    pub fn forbidden(resource: &GroupResource, name: &str, why: &str) -> Self {
        let message = if name.is_empty() {
            format!("{resource} is forbidden: {why}")
        } else {
            format!("{resource} {name:?} is forbidden: {why}")
        };
        Status::failure(403, StatusReason::Forbidden, message)
            .with_details(Status::details_for(resource, name))
    }

    /// 401 Unauthorized.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Status::failure(401, StatusReason::Unauthorized, message)
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Status::failure(400, StatusReason::BadRequest, message)
    }

    /// 405 MethodNotAllowed:
    /// `<verb> is not supported on resources of kind "<resource>"`.
    pub fn method_not_supported(resource: &GroupResource, verb: &str) -> Self {
        Status::failure(
            405,
            StatusReason::MethodNotAllowed,
            format!("{verb} is not supported on resources of kind {resource:?}"),
        )
        .with_details(Status::details_for(resource, ""))
    }

    /// 422 Invalid: `<Kind> "<name>" is invalid: <causes>`.
    pub fn invalid(kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let summary: Vec<String> = causes
            .iter()
            .map(|cause| {
                if cause.field.is_empty() {
                    cause.message.clone()
                } else {
                    format!("{}: {}", cause.field, cause.message)
                }
            })
            .collect();
        let message = match summary.len() {
            0 => format!("{kind} {name:?} is invalid"),
            1 => format!("{kind} {name:?} is invalid: {}", summary[0]),
            _ => format!("{kind} {name:?} is invalid: [{}]", summary.join(", ")),
        };
        Status::failure(422, StatusReason::Invalid, message).with_details(StatusDetails {
            name: name.to_string(),
            kind: kind.to_string(),
            causes,
            ..StatusDetails::default()
        })
    }

    /// 429 TooManyRequests with a suggested delay in seconds (0 for none).
    pub fn too_many_requests(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        Status::failure(429, StatusReason::TooManyRequests, message).with_details(StatusDetails {
            retry_after_seconds,
            ..StatusDetails::default()
        })
    }

    /// 504 Timeout for a resourceVersion the server has not reached, as a
    /// current server sends it: the cause `ResourceVersionTooLarge`.
    pub fn resource_version_too_large(message: impl Into<String>) -> Self {
        Status::failure(504, StatusReason::Timeout, message).with_details(StatusDetails {
            causes: vec![StatusCause {
                reason: cause_type::RESOURCE_VERSION_TOO_LARGE.to_string(),
                message: TOO_LARGE_RESOURCE_VERSION_MESSAGE.to_string(),
                field: String::new(),
            }],
            retry_after_seconds: 1,
            ..StatusDetails::default()
        })
    }

    /// 504 Timeout.
    pub fn timeout(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        Status::failure(504, StatusReason::Timeout, message).with_details(StatusDetails {
            retry_after_seconds,
            ..StatusDetails::default()
        })
    }

    /// 500 InternalError: `Internal error occurred: <why>`.
    pub fn internal_error(why: &str) -> Self {
        Status::failure(
            500,
            StatusReason::InternalError,
            format!("Internal error occurred: {why}"),
        )
        .with_details(StatusDetails {
            causes: vec![StatusCause {
                message: why.to_string(),
                ..StatusCause::default()
            }],
            ..StatusDetails::default()
        })
    }

    /// 503 ServiceUnavailable.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Status::failure(503, StatusReason::ServiceUnavailable, message)
    }

    /// client-go's rule for every predicate below: the reason matches, or
    /// the reason is not a known one and the code matches.
    fn reason_or_code(&self, reason: &StatusReason, code: u16) -> bool {
        self.reason == *reason || (!self.reason.is_known() && self.code == code)
    }

    /// The causes listed in the details; empty when there are none.
    pub fn causes(&self) -> &[StatusCause] {
        self.details.as_ref().map_or(&[], |d| d.causes.as_slice())
    }

    /// Whether any cause has the given [`cause_type`].
    pub fn has_cause(&self, cause: &str) -> bool {
        self.causes().iter().any(|c| c.reason == cause)
    }

    /// NotFound, or 404 with an unknown reason.
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code(&StatusReason::NotFound, 404)
    }

    /// AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.reason == StatusReason::AlreadyExists
    }

    /// Conflict, or 409 with an unknown reason.
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code(&StatusReason::Conflict, 409)
    }

    /// Invalid, or 422 with an unknown reason.
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code(&StatusReason::Invalid, 422)
    }

    /// Gone, or 410 with an unknown reason.
    pub fn is_gone(&self) -> bool {
        self.reason_or_code(&StatusReason::Gone, 410)
    }

    /// Expired: the requested resourceVersion or continue token is older
    /// than the server keeps.
    pub fn is_resource_expired(&self) -> bool {
        self.reason == StatusReason::Expired
    }

    /// What the reflector treats as "too old, relist": Expired or Gone
    /// (client-go's `isExpiredError`), including a bare 410.
    pub fn is_expired_or_gone(&self) -> bool {
        self.is_resource_expired() || self.is_gone()
    }

    /// Forbidden, or 403 with an unknown reason.
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code(&StatusReason::Forbidden, 403)
    }

    /// Unauthorized, or 401 with an unknown reason.
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code(&StatusReason::Unauthorized, 401)
    }

    /// BadRequest, or 400 with an unknown reason.
    pub fn is_bad_request(&self) -> bool {
        self.reason_or_code(&StatusReason::BadRequest, 400)
    }

    /// MethodNotAllowed, or 405 with an unknown reason.
    pub fn is_method_not_supported(&self) -> bool {
        self.reason_or_code(&StatusReason::MethodNotAllowed, 405)
    }

    /// NotAcceptable, or 406 with an unknown reason.
    pub fn is_not_acceptable(&self) -> bool {
        self.reason_or_code(&StatusReason::NotAcceptable, 406)
    }

    /// UnsupportedMediaType, or 415 with an unknown reason.
    pub fn is_unsupported_media_type(&self) -> bool {
        self.reason_or_code(&StatusReason::UnsupportedMediaType, 415)
    }

    /// RequestEntityTooLarge, or 413 with an unknown reason.
    pub fn is_request_entity_too_large(&self) -> bool {
        self.reason_or_code(&StatusReason::RequestEntityTooLarge, 413)
    }

    /// TooManyRequests, or 429 whatever the reason (client-go checks the
    /// code on its own here, since API Priority and Fairness rejections
    /// carry it).
    pub fn is_too_many_requests(&self) -> bool {
        self.reason == StatusReason::TooManyRequests || self.code == 429
    }

    /// Timeout, or 504 with an unknown reason.
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code(&StatusReason::Timeout, 504)
    }

    /// ServerTimeout.
    pub fn is_server_timeout(&self) -> bool {
        self.reason == StatusReason::ServerTimeout
    }

    /// InternalError, or 500 with an unknown reason.
    pub fn is_internal_error(&self) -> bool {
        self.reason_or_code(&StatusReason::InternalError, 500)
    }

    /// ServiceUnavailable, or 503 with an unknown reason.
    pub fn is_service_unavailable(&self) -> bool {
        self.reason_or_code(&StatusReason::ServiceUnavailable, 503)
    }

    /// Whether the server refused a resourceVersion newer than it has seen,
    /// in any of the three forms servers have used: the cause
    /// `ResourceVersionTooLarge` (1.18.6 and later); a Timeout whose cause
    /// message is "Too large resource version" (1.17.0 to 1.18.5); or a
    /// Timeout with that text in its message (before 1.17).
    pub fn is_too_large_resource_version(&self) -> bool {
        if self.has_cause(cause_type::RESOURCE_VERSION_TOO_LARGE) {
            return true;
        }
        if !self.is_timeout() {
            return false;
        }
        let Some(details) = &self.details else {
            return false;
        };
        details
            .causes
            .iter()
            .any(|cause| cause.message == TOO_LARGE_RESOURCE_VERSION_MESSAGE)
            || self.message.contains(TOO_LARGE_RESOURCE_VERSION_MESSAGE)
    }

    /// The delay the server asked for, in seconds (client-go's
    /// `SuggestsClientDelay`): present whenever details exist and either
    /// the reason is ServerTimeout (even with 0 seconds) or the details name
    /// a positive delay.
    pub fn retry_after_seconds(&self) -> Option<u32> {
        let details = self.details.as_ref()?;
        if self.reason == StatusReason::ServerTimeout || details.retry_after_seconds > 0 {
            Some(details.retry_after_seconds)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(json: &str) -> Status {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn decodes_a_real_not_found_body() {
        let status = decode(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"pods \"web\" not found","reason":"NotFound",
            "details":{"name":"web","kind":"pods"},"code":404}"#,
        );
        assert_eq!(status.reason, StatusReason::NotFound);
        assert_eq!(status.code, 404);
        assert_eq!(status.message, "pods \"web\" not found");
        let details = status.details.as_ref().unwrap();
        assert_eq!(details.name, "web");
        assert_eq!(details.kind, "pods");
        assert!(status.is_not_found());
        assert!(!status.is_conflict());
        assert_eq!(status.to_string(), "pods \"web\" not found");
    }

    #[test]
    fn every_known_reason_round_trips_through_its_wire_form() {
        for reason in StatusReason::KNOWN {
            assert!(reason.is_known());
            assert_eq!(StatusReason::from_wire(reason.as_str()), reason);
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(serde_json::from_str::<StatusReason>(&json).unwrap(), reason);
        }
    }

    #[test]
    fn unknown_reasons_are_kept_as_sent() {
        let status = decode(r#"{"reason":"SomethingNew","code":418,"message":"teapot"}"#);
        assert_eq!(status.reason, StatusReason::Other("SomethingNew".into()));
        assert!(!status.reason.is_known());
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["reason"], "SomethingNew");
        let empty = decode(r#"{"code":500}"#);
        assert_eq!(empty.reason, StatusReason::Unknown);
        let null = decode(r#"{"reason":null,"code":500}"#);
        assert_eq!(null.reason, StatusReason::Unknown);
    }

    #[test]
    fn predicates_fall_back_to_the_code_only_for_unknown_reasons() {
        let bare_404 = Status::failure(404, StatusReason::Unknown, "");
        assert!(bare_404.is_not_found());
        let other_404 = Status::failure(404, StatusReason::Other("X".into()), "");
        assert!(other_404.is_not_found());
        // A known reason wins over the code.
        let forbidden_404 = Status::failure(404, StatusReason::Forbidden, "");
        assert!(!forbidden_404.is_not_found());
        assert!(forbidden_404.is_forbidden());

        type Predicate = fn(&Status) -> bool;
        let cases: [(u16, Predicate); 13] = [
            (409, Status::is_conflict),
            (422, Status::is_invalid),
            (410, Status::is_gone),
            (403, Status::is_forbidden),
            (401, Status::is_unauthorized),
            (400, Status::is_bad_request),
            (405, Status::is_method_not_supported),
            (406, Status::is_not_acceptable),
            (415, Status::is_unsupported_media_type),
            (413, Status::is_request_entity_too_large),
            (504, Status::is_timeout),
            (500, Status::is_internal_error),
            (503, Status::is_service_unavailable),
        ];
        for (code, predicate) in cases {
            assert!(
                predicate(&Status::failure(code, StatusReason::Unknown, "")),
                "code {code}"
            );
            assert!(
                !predicate(&Status::failure(code, StatusReason::NotFound, "")),
                "code {code} with a known reason"
            );
            assert!(
                !predicate(&Status::failure(418, StatusReason::Unknown, "")),
                "code 418 for {code}"
            );
        }
    }

    #[test]
    fn expired_and_gone() {
        let expired = Status::expired("too old resource version: 1 (20)");
        assert!(expired.is_resource_expired());
        assert!(expired.is_expired_or_gone());
        assert!(!expired.is_gone());
        let gone = Status::gone("gone");
        assert!(gone.is_gone());
        assert!(gone.is_expired_or_gone());
        let bare_410 = Status::failure(410, StatusReason::Unknown, "");
        assert!(bare_410.is_expired_or_gone());
        assert!(!Status::not_found(&GroupResource::new("", "pods"), "x").is_expired_or_gone());
    }

    #[test]
    fn too_many_requests_counts_the_code_whatever_the_reason() {
        let apf = Status::failure(429, StatusReason::Other("Throttled".into()), "slow down");
        assert!(apf.is_too_many_requests());
        let by_reason = Status::too_many_requests("slow down", 3);
        assert!(by_reason.is_too_many_requests());
        assert_eq!(by_reason.retry_after_seconds(), Some(3));
    }

    #[test]
    fn too_large_resource_version_in_all_three_server_forms() {
        // 1.18.6 and later: the cause.
        let current = Status::resource_version_too_large(
            "Timeout: Too large resource version: 20, current: 10",
        );
        assert!(current.is_too_large_resource_version());
        let json = serde_json::to_value(&current).unwrap();
        assert_eq!(
            json["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        // 1.17.0 - 1.18.5: a Timeout whose cause message says so.
        let middle = Status::timeout("Timeout", 1).with_details(StatusDetails {
            causes: vec![StatusCause {
                message: TOO_LARGE_RESOURCE_VERSION_MESSAGE.into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        assert!(middle.is_too_large_resource_version());
        // Before 1.17: the message; details must still be present.
        let old = Status::timeout("Too large resource version: 5, current: 3", 0);
        assert!(old.is_too_large_resource_version());
        // The message alone, on something that is not a Timeout, is not enough.
        let not_timeout = Status::internal_error("Too large resource version");
        assert!(!not_timeout.is_too_large_resource_version());
        // A Timeout without details is not enough either.
        let no_details = Status::failure(504, StatusReason::Timeout, "Too large resource version");
        assert!(!no_details.is_too_large_resource_version());
    }

    #[test]
    fn retry_after_follows_suggests_client_delay() {
        let server_timeout =
            Status::failure(500, StatusReason::ServerTimeout, "").with_details(StatusDetails {
                retry_after_seconds: 0,
                ..Default::default()
            });
        assert_eq!(server_timeout.retry_after_seconds(), Some(0));
        let internal =
            Status::failure(500, StatusReason::InternalError, "").with_details(StatusDetails {
                retry_after_seconds: 7,
                ..Default::default()
            });
        assert_eq!(internal.retry_after_seconds(), Some(7));
        assert_eq!(Status::bad_request("x").retry_after_seconds(), None);
        let zero = Status::too_many_requests("x", 0);
        assert_eq!(zero.retry_after_seconds(), None);
    }

    #[test]
    fn constructors_use_the_real_server_messages() {
        let pods = GroupResource::new("", "pods");
        let deployments = GroupResource::new("apps", "deployments");
        assert_eq!(
            Status::not_found(&deployments, "web").message,
            "deployments.apps \"web\" not found"
        );
        assert_eq!(
            Status::already_exists(&pods, "web").message,
            "pods \"web\" already exists"
        );
        let conflict = Status::conflict(
            &pods,
            "web",
            "the object has been modified; please apply your changes to the latest version and try again",
        );
        assert!(conflict.is_conflict());
        assert!(
            conflict
                .message
                .starts_with("Operation cannot be fulfilled on pods \"web\": ")
        );
        assert_eq!(
            Status::forbidden(&pods, "", "User \"bob\" cannot list resource \"pods\"").message,
            "pods is forbidden: User \"bob\" cannot list resource \"pods\""
        );
        let invalid = Status::invalid(
            "Pod",
            "web",
            vec![StatusCause {
                reason: cause_type::FIELD_VALUE_REQUIRED.into(),
                message: "Required value".into(),
                field: "spec.containers".into(),
            }],
        );
        assert_eq!(
            invalid.message,
            "Pod \"web\" is invalid: spec.containers: Required value"
        );
        assert!(invalid.is_invalid());
        assert_eq!(Status::method_not_supported(&pods, "patch").code, 405);
        assert_eq!(
            Status::internal_error("boom").message,
            "Internal error occurred: boom"
        );
    }

    #[test]
    fn encodes_like_the_server() {
        let status = Status::not_found(&GroupResource::new("", "pods"), "web");
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {},
                "status": "Failure",
                "message": "pods \"web\" not found",
                "reason": "NotFound",
                "details": {"name": "web", "kind": "pods"},
                "code": 404
            })
        );
        assert_eq!(serde_json::from_value::<Status>(json).unwrap(), status);
    }

    #[test]
    fn http_code_without_a_body_gets_client_go_reason() {
        let status = Status::from_http_code(502, "<html>Bad Gateway</html>");
        assert_eq!(status.reason, StatusReason::Unknown);
        assert_eq!(status.code, 502);
        assert_eq!(
            Status::from_http_code(503, "").reason,
            StatusReason::ServiceUnavailable
        );
        assert!(Status::from_http_code(404, "").is_not_found());
        assert_eq!(
            Status::from_http_code(502, "").to_string(),
            "the server responded with HTTP status 502"
        );
    }

    #[test]
    fn null_causes_decode_as_empty() {
        let status = decode(r#"{"code":422,"reason":"Invalid","details":{"causes":null}}"#);
        assert!(status.causes().is_empty());
    }
}
