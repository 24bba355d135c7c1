//! `now_rfc3339`: the time now as the API server writes it in objects
//! (creation and deletion timestamps, managers' times).

/// Now, in UTC, to the second: `2026-11-27T18:00:00Z`.
pub(crate) fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
