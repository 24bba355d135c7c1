//! Whether a request is sent again, and when: one pure function,
//! [`decide`], over what the last attempt came to (client-go's
//! `rest.Request` retry rules, `WithRetry` and its `IsNextRetry`).

use std::time::Duration;

/// The wait before sending again a GET whose connection broke (client-go
/// treats it as `Retry-After: 1`).
pub(crate) const BROKEN_CONNECTION_RETRY: Duration = Duration::from_secs(1);

/// What one attempt came to, as far as sending again is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The server answered with this status code and, when it sent one,
    /// an integer `Retry-After` (seconds).
    Answered {
        /// The HTTP status code.
        code: u16,
        /// The `Retry-After` header, when it is a whole number of seconds.
        retry_after: Option<u64>,
    },
    /// An established connection broke after the request went out and
    /// before an answer (reset, closed): not a timeout, not a failure to
    /// connect, never a TLS problem.
    ConnectionBroke,
    /// Any other failure without an answer (refused, TLS, timeout).
    Failed,
    /// A long-running request's headers did not come while its connection
    /// was at its HTTP/2 stream limit: it was queued, never sent.
    Queued,
}

/// What the request has used up so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Retries made (a resend of a queued request and the one resend
    /// with fresh credentials do not count).
    pub(crate) retries: u32,
    /// Retries allowed.
    pub(crate) max_retries: u32,
    /// Whether the request was already sent again with fresh credentials.
    pub(crate) reauthenticated: bool,
    /// Whether the request is a GET (only a GET is sent again after its
    /// connection broke: it cannot have changed anything).
    pub(crate) get: bool,
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// A 2xx answer: hand it to the caller.
    Succeed,
    /// A 401: ask the authenticator to forget its credential and, if it
    /// says a fresh one may help, send once more (not counted as a retry).
    Reauthenticate,
    /// Wait, then send again (one retry).
    RetryAfter(Duration),
    /// Send again at once on another connection (not a retry: it was
    /// never sent).
    SendElsewhere,
    /// Give up: the attempt's answer or failure is the error.
    Fail,
}

/// What to do after an attempt that came to `outcome`, with `budget`
/// used so far. Pure: the caller does the waiting, counting and sending.
pub(crate) fn decide(outcome: Outcome, budget: Budget) -> Decision {
    let retries_left = budget.retries < budget.max_retries;
    match outcome {
        Outcome::Queued => Decision::SendElsewhere,
        // 101: a connection upgrade (exec, attach, port-forward) was
        // accepted; no other request is ever answered with it.
        Outcome::Answered { code, .. } if code == 101 || (200..300).contains(&code) => {
            Decision::Succeed
        }
        Outcome::Answered { code: 401, .. } if !budget.reauthenticated => Decision::Reauthenticate,
        Outcome::Answered {
            code,
            retry_after: Some(seconds),
        } if (code == 429 || code >= 500) && retries_left => {
            Decision::RetryAfter(Duration::from_secs(seconds))
        }
        Outcome::ConnectionBroke if budget.get && retries_left => {
            Decision::RetryAfter(BROKEN_CONNECTION_RETRY)
        }
        Outcome::Answered { .. } | Outcome::ConnectionBroke | Outcome::Failed => Decision::Fail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: Budget = Budget {
        retries: 0,
        max_retries: 10,
        reauthenticated: false,
        get: true,
    };

    fn answered(code: u16, retry_after: Option<u64>) -> Outcome {
        Outcome::Answered { code, retry_after }
    }

    #[test]
    fn every_row_of_the_retry_table() {
        let spent = Budget {
            retries: 10,
            ..FRESH
        };
        let reauthenticated = Budget {
            reauthenticated: true,
            ..FRESH
        };
        let post = Budget {
            get: false,
            ..FRESH
        };
        let secs = Duration::from_secs;
        let rows: [(&str, Outcome, Budget, Decision); 19] = [
            ("200", answered(200, None), FRESH, Decision::Succeed),
            ("101 upgrade", answered(101, None), FRESH, Decision::Succeed),
            (
                "100 is not an answer",
                answered(100, None),
                FRESH,
                Decision::Fail,
            ),
            ("201", answered(201, None), FRESH, Decision::Succeed),
            (
                "2xx ignores Retry-After",
                answered(204, Some(5)),
                FRESH,
                Decision::Succeed,
            ),
            (
                "401 once",
                answered(401, None),
                FRESH,
                Decision::Reauthenticate,
            ),
            (
                "401 twice",
                answered(401, None),
                reauthenticated,
                Decision::Fail,
            ),
            (
                "429 with Retry-After",
                answered(429, Some(3)),
                FRESH,
                Decision::RetryAfter(secs(3)),
            ),
            (
                "503 with Retry-After",
                answered(503, Some(1)),
                post,
                Decision::RetryAfter(secs(1)),
            ),
            (
                "500 with Retry-After 0",
                answered(500, Some(0)),
                FRESH,
                Decision::RetryAfter(secs(0)),
            ),
            (
                "429 without Retry-After",
                answered(429, None),
                FRESH,
                Decision::Fail,
            ),
            (
                "500 without Retry-After",
                answered(500, None),
                FRESH,
                Decision::Fail,
            ),
            (
                "429, retries spent",
                answered(429, Some(1)),
                spent,
                Decision::Fail,
            ),
            (
                "409 with Retry-After",
                answered(409, Some(1)),
                FRESH,
                Decision::Fail,
            ),
            ("404", answered(404, None), FRESH, Decision::Fail),
            (
                "broken GET",
                Outcome::ConnectionBroke,
                FRESH,
                Decision::RetryAfter(BROKEN_CONNECTION_RETRY),
            ),
            (
                "broken POST",
                Outcome::ConnectionBroke,
                post,
                Decision::Fail,
            ),
            (
                "broken GET, retries spent",
                Outcome::ConnectionBroke,
                spent,
                Decision::Fail,
            ),
            ("other failure", Outcome::Failed, FRESH, Decision::Fail),
        ];
        for (name, outcome, budget, expected) in rows {
            assert_eq!(decide(outcome, budget), expected, "{name}");
        }
    }

    #[test]
    fn a_queued_request_is_sent_elsewhere_whatever_the_budget() {
        for budget in [
            FRESH,
            Budget {
                retries: 10,
                reauthenticated: true,
                get: false,
                ..FRESH
            },
        ] {
            assert_eq!(decide(Outcome::Queued, budget), Decision::SendElsewhere);
        }
    }
}
