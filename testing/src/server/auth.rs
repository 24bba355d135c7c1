//! Authentication and authorization: who may call the server (bearer
//! token, client certificate) and which verbs on which resources are
//! denied.

use clientgo_apimachinery::{GroupResource, Status};
use hyper::body::Incoming;
use hyper::{Method, Request, header};
use parking_lot::Mutex;

use crate::api::request_path::ResourcePath;
use crate::faults::request_log::Verb;

/// Who may call the server.
pub(crate) struct Auth {
    /// The accepted token; replaceable to test token rotation.
    pub(crate) bearer_token: Mutex<Option<String>>,
    pub(crate) client_certificate: bool,
}

impl Auth {
    fn required(&self) -> bool {
        self.bearer_token.lock().is_some() || self.client_certificate
    }
}

/// Classifies a request for the log and for fault matching.
pub(crate) fn verb_of(method: &Method, target: Option<&ResourcePath>, watching: bool) -> Verb {
    let Some(target) = target else {
        return Verb::Other;
    };
    match (method, target.name.is_some()) {
        (&Method::GET, false) if watching => Verb::Watch,
        (&Method::GET, false) => Verb::List,
        (&Method::GET, true) => Verb::Get,
        (&Method::POST, _) => Verb::Create,
        (&Method::PUT, _) => Verb::Update,
        (&Method::PATCH, _) => Verb::Patch,
        (&Method::DELETE, true) => Verb::Delete,
        (&Method::DELETE, false) => Verb::DeleteCollection,
        _ => Verb::Other,
    }
}

/// Paths anyone may call, as the real server's public-info viewer allows.
pub(crate) fn is_public(path: &str) -> bool {
    matches!(path, "/version" | "/healthz" | "/readyz" | "/livez")
}

pub(crate) fn authenticated(auth: &Auth, request: &Request<Incoming>, certified: bool) -> bool {
    if !auth.required() || is_public(request.uri().path()) {
        return true;
    }
    if certified && auth.client_certificate {
        return true;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    matches!((auth.bearer_token.lock().as_ref(), presented), (Some(expected), Some(given)) if expected == given)
}

/// The 403 for a denied request, with the real server's message.
pub(crate) fn forbidden(
    denied: &Mutex<Vec<(Verb, GroupResource)>>,
    target: Option<&ResourcePath>,
    verb: Verb,
) -> Option<Status> {
    let target = target?;
    let resource = target.resource.group_resource();
    let denied = denied.lock();
    if !denied.iter().any(|(v, r)| *v == verb && *r == resource) {
        return None;
    }
    let scope = match &target.namespace {
        Some(namespace) => format!(" in the namespace {namespace:?}"),
        None => " at the cluster scope".to_string(),
    };
    let why = format!(
        "User \"clientgo-testing\" cannot {} resource {:?} in API group {:?}{scope}",
        verb.as_str(),
        resource.resource,
        resource.group
    );
    Some(Status::forbidden(
        &resource,
        target.name.as_deref().unwrap_or_default(),
        &why,
    ))
}
