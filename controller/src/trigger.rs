//! External triggers of a controller ([`Builder::reconcile_on`](crate::Builder::reconcile_on)).

use crate::reconcile::Request;

/// What an external trigger asks a controller to reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// One object's key (dropped when outside the controller's namespace).
    Request(Request),
    /// Every object of the reconciled kind in the cache.
    All,
}

impl From<Request> for Trigger {
    fn from(request: Request) -> Self {
        Trigger::Request(request)
    }
}
