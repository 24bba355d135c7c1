//! Helpers a reconcile writes with (controller-runtime's
//! `controllerutil`): owner references and finalizers.

pub mod finalizer;
mod owner_reference;

pub use owner_reference::{OwnerReferenceError, controller_reference, set_controller_reference};
