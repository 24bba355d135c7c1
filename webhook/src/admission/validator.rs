//! [`Validator`]: a validating webhook over a typed object (create,
//! update with the old object, delete), as controller-runtime's
//! `admission.Validator[T]`.

use std::future::Future;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::admission::denial::Denial;
use crate::admission::handler::{AdmissionHandler, BoxFuture, Warnings};
use crate::admission::review::{AdmissionRequest, AdmissionResponse, Operation};

/// Validates objects of `K`. Each method allows (with warnings) or
/// refuses with a [`Denial`], whose message and fields the user sees. The
/// request says who asks, and whether it is a dry run (a validator must
/// have no side effects then). Unimplemented operations allow.
pub trait Validator<K>: Send + Sync + 'static {
    /// A create of `object`.
    fn validate_create(
        &self,
        object: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (object, request);
        async { Ok(Vec::new()) }
    }

    /// An update from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (old, new, request);
        async { Ok(Vec::new()) }
    }

    /// A delete of `old`.
    fn validate_delete(
        &self,
        old: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (old, request);
        async { Ok(Vec::new()) }
    }
}

/// A shared validator (a test keeping a handle to read what it saw, or
/// state shared with a controller).
impl<K, V: Validator<K>> Validator<K> for std::sync::Arc<V> {
    fn validate_create(
        &self,
        object: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        V::validate_create(self, object, request)
    }

    fn validate_update(
        &self,
        old: &K,
        new: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        V::validate_update(self, old, new, request)
    }

    fn validate_delete(
        &self,
        old: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        V::validate_delete(self, old, request)
    }
}

/// A [`Validator`] as an [`AdmissionHandler`]: decodes the request's
/// objects into `K` (a request that does not decode is refused with 400
/// naming the error), calls the method of the operation, and allows
/// CONNECT unchecked.
pub struct Validating<K, V> {
    validator: V,
    kind: PhantomData<fn() -> K>,
}

impl<K, V> Validating<K, V> {
    /// Wraps `validator`.
    pub fn new(validator: V) -> Self {
        Validating {
            validator,
            kind: PhantomData,
        }
    }
}

/// `value` decoded into `K`, or the 400 answer naming why not.
pub(crate) fn decode<K: DeserializeOwned>(
    value: Option<&serde_json::Value>,
    which: &str,
) -> Result<K, Box<AdmissionResponse>> {
    let Some(value) = value else {
        return Err(Box::new(AdmissionResponse::errored(
            400,
            format!("the request has no {which}"),
        )));
    };
    K::deserialize(value).map_err(|error| {
        Box::new(AdmissionResponse::errored(
            400,
            format!(
                "the request's {which} is not a {}: {error}",
                std::any::type_name::<K>()
            ),
        ))
    })
}

impl<K, V> AdmissionHandler for Validating<K, V>
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: Validator<K>,
{
    fn handle<'a>(&'a self, request: &'a AdmissionRequest) -> BoxFuture<'a, AdmissionResponse> {
        Box::pin(async move {
            let outcome = match request.operation {
                Operation::Connect => return AdmissionResponse::allowed(),
                Operation::Create => match decode::<K>(request.object.as_ref(), "object") {
                    Ok(object) => self.validator.validate_create(&object, request).await,
                    Err(answer) => return *answer,
                },
                Operation::Update => {
                    let new = match decode::<K>(request.object.as_ref(), "object") {
                        Ok(new) => new,
                        Err(answer) => return *answer,
                    };
                    match decode::<K>(request.old_object.as_ref(), "oldObject") {
                        Ok(old) => self.validator.validate_update(&old, &new, request).await,
                        Err(answer) => return *answer,
                    }
                }
                Operation::Delete => match decode::<K>(request.old_object.as_ref(), "oldObject") {
                    Ok(old) => self.validator.validate_delete(&old, request).await,
                    Err(answer) => return *answer,
                },
            };
            match outcome {
                Ok(warnings) => AdmissionResponse::allowed().with_warnings(warnings),
                Err(denial) => AdmissionResponse::denied(&denial),
            }
        })
    }
}
