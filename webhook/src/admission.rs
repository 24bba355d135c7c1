//! Admission webhooks: the review types, typed validators and defaulters,
//! and raw handlers for any kind.

mod defaulter;
mod denial;
mod handler;
mod review;
mod validator;

pub use defaulter::{Defaulter, Mutating};
pub use denial::Denial;
pub use handler::{AdmissionHandler, BoxFuture, Warnings, handler_fn};
pub use review::{
    AdmissionRequest, AdmissionResponse, AdmissionReview, Kind, Operation, Resource, UserInfo,
};
pub use validator::{Validating, Validator};
