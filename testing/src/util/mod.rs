//! Small helpers that know nothing of the server: the deterministic
//! generator, the process's memory, the log subscriber, certificates, a kubeconfig, a JSON merge
//! patch.
//!
//! | file | what |
//! |---|---|
//! | `merge_patch.rs` | `merge_patch`, a JSON merge patch (RFC 7386) |
//! | `timestamp.rs` | `now_rfc3339`, the time as objects carry it |
//! | `seeded_random.rs` | `SeededRandom`, the deterministic generator behind churn, UIDs and fault schedules |
//! | `process_cpu.rs` | the process's CPU time, from `/proc` (public as `process_cpu`) |
//! | `process_memory.rs` | the process's RSS and high-water mark, from `/proc` (public as `process_memory`) |
//! | `certificate_authority.rs` | `CertificateAuthority`: a CA in memory and the serving and client certificates it signs |
//! | `kubeconfig.rs` | a kubeconfig's text for one server and user |
//! | `log_subscriber.rs` | `install_log_subscriber`: events to stderr, filtered by `RUST_LOG` |
//! | `eventually.rs` | `eventually` and `never_within`: waiting in tests |

pub(crate) mod certificate_authority;
pub(crate) mod eventually;
pub(crate) mod kubeconfig;
pub(crate) mod log_subscriber;
pub(crate) mod merge_patch;
pub mod process_cpu;
pub mod process_memory;
pub(crate) mod seeded_random;
pub(crate) mod timestamp;
