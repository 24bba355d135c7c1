//! How requests reach the API server (client-go's `transport`): TLS
//! through rustls, certificate files re-read while the client runs, the
//! reqwest clients, the connection lanes watches go on ([`LaneStats`]),
//! and WebSocket upgrades ([`Upgraded`]).

pub(crate) mod client_certificate;
pub(crate) mod connection_lanes;
pub(crate) mod http;
pub(crate) mod tls;
pub(crate) mod tls_reload;
pub(crate) mod websocket;

pub use connection_lanes::LaneStats;
pub use websocket::{UPGRADE_TIMEOUT, UpgradeError, Upgraded, WebSocket};
