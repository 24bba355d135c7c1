//! Servers of their own, beside the test API server: a replay of recorded
//! answers and a SOCKS5 proxy.
//!
//! | file | what |
//! |---|---|
//! | `recorded_answer.rs` | `RecordedAnswer`, `ReplayServer`, `ReplayedRequest`: a real server's answers served again |
//! | `socks5_proxy.rs` | `Socks5Proxy`, `Socks5ProxyOptions`, `Socks5Target` |

pub(crate) mod recorded_answer;
pub(crate) mod socks5_proxy;
