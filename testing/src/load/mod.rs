//! Load for tests and benchmarks: realistic objects and a background
//! writer that churns them.
//!
//! | file | what |
//! |---|---|
//! | `churn.rs` | `ChurnWriter`, `ChurnOptions`, `ChurnCounts`, `ObjectGenerator`: steady creates, updates and deletes |
//! | `realistic.rs` | `realistic_pod`, `realistic_deployment` |

pub(crate) mod churn;
pub(crate) mod realistic;
