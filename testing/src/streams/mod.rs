//! A pod's streaming subresources over WebSockets: exec, attach and
//! port-forward.
//!
//! | file | what |
//! |---|---|
//! | `websocket.rs` | the upgrade, the socket, channel frames |
//! | `fake_container.rs` | exec and attach sessions in a fake container with a small shell |
//! | `port_forward.rs` | port-forward sessions to the TCP listeners a test names (`PortForwardTargets`) |

pub(crate) mod fake_container;
pub(crate) mod port_forward;
pub(crate) mod websocket;
