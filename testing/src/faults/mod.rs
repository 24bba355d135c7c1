//! What a test orders from the server and what it reads back from it:
//! the fault controls and the request log.
//!
//! | file | what |
//! |---|---|
//! | `controls.rs` | `Faults`, `Failure`, `Corruption`: failed requests, latency, dropped, stalled and corrupted watches, restarts |
//! | `request_log.rs` | `RequestLog`, `RequestRecord`, `Verb`: every request answered |

pub(crate) mod controls;
pub(crate) mod request_log;
