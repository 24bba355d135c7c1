//! Servers of their own, beside the test API server: a replay of recorded
//! answers, a SOCKS5 proxy, and a TCP proxy a test cuts.
//!
//! | file | what |
//! |---|---|
//! | `cuttable_proxy.rs` | `CuttableProxy`: a TCP proxy whose link a test cuts and restores |
//! | `recorded_answer.rs` | `RecordedAnswer`, `ReplayServer`, `ReplayedRequest`: a real server's answers served again |
//! | `socks5_proxy.rs` | `Socks5Proxy`, `Socks5ProxyOptions`, `Socks5Target` |

pub(crate) mod cuttable_proxy;
pub(crate) mod recorded_answer;
pub(crate) mod socks5_proxy;
