//! [`Denial`]: why a validator or defaulter refuses a request, and the
//! Status kube-apiserver shows the user.

use clientgo_apimachinery::status::{StatusCause, StatusDetails};
use clientgo_apimachinery::{Status, StatusReason};

/// A refusal. kube-apiserver prefixes its message with `admission
/// webhook "<name>" denied the request: ` and answers the client with its
/// code (a code below 400 would become 400).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Denial {
    /// The HTTP code (403 for [`forbidden`](Self::forbidden), 422 for
    /// [`invalid`](Self::invalid)).
    pub code: u16,
    /// The machine-readable reason.
    pub reason: StatusReason,
    /// What the user reads.
    pub message: String,
    /// The fields at fault, each with its message.
    pub causes: Vec<(String, String)>,
}

impl Denial {
    /// A refusal for a reason other than one field (403 Forbidden), as
    /// controller-runtime's `Denied`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Denial {
            code: 403,
            reason: StatusReason::Forbidden,
            message: message.into(),
            causes: Vec::new(),
        }
    }

    /// A field with a value that is not allowed (422 Invalid), with the
    /// field's path (`spec.replicas`), as the API server's own validation
    /// answers.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let message = message.into();
        Denial {
            code: 422,
            reason: StatusReason::Invalid,
            message: format!("{field}: {message}"),
            causes: vec![(field, message)],
        }
    }

    /// Another field at fault, in the same refusal.
    #[must_use]
    pub fn and_invalid(mut self, field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let message = message.into();
        self.message = format!("{}, {field}: {message}", self.message);
        self.causes.push((field, message));
        self
    }

    /// The Status of this refusal.
    pub fn to_status(&self) -> Status {
        let details = (!self.causes.is_empty()).then(|| StatusDetails {
            causes: self
                .causes
                .iter()
                .map(|(field, message)| StatusCause {
                    reason: "FieldValueInvalid".into(),
                    message: message.clone(),
                    field: field.clone(),
                })
                .collect(),
            ..StatusDetails::default()
        });
        Status {
            status: "Failure".into(),
            message: self.message.clone(),
            reason: self.reason.clone(),
            details,
            code: self.code,
            ..Status::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_field_is_a_422_naming_it() {
        let status = Denial::invalid("spec.replicas", "must be at most 10").to_status();
        assert_eq!(status.code, 422);
        assert_eq!(status.message, "spec.replicas: must be at most 10");
        let causes = status.details.map(|d| d.causes).unwrap_or_default();
        assert_eq!(causes[0].field, "spec.replicas");
        assert_eq!(Denial::forbidden("no").to_status().code, 403);
    }
}
