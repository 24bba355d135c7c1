//! Helpers a reconcile writes with (controller-runtime's
//! `controllerutil`): owner references, finalizers, and writes of
//! children and status.

pub mod finalizer;
mod owner_reference;
mod writes;

pub use writes::{
    ApplyError, ApplyOptions, FieldConflict, OperationResult, apply, create_or_update,
    update_status,
};

pub use owner_reference::{OwnerReferenceError, controller_reference, set_controller_reference};
