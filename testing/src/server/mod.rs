//! The running server: its handle and builder, the state its connections
//! share, the connections, the filter chain and routing.
//!
//! | file | what |
//! |---|---|
//! | `handle.rs` | `TestApiServer`, the running server's handle |
//! | `builder.rs` | `TestApiServerBuilder`, the defaults, `start()` |
//! | `state.rs` | `ServerState`, what connections share |
//! | `connection.rs` | the accept loop and each connection's service |
//! | `routing.rs` | one request: the filter chain, the request log, faults, then the handlers |
//! | `auth.rs` | authentication and deny rules |
//! | `in_flight.rs` | the max-in-flight limit |
//! | `compression.rs` | gzip of large answers |
//! | `oidc.rs` | `OidcIssuer`, an OpenID Connect issuer's endpoints |
//! | `tls.rs` | the CA, server and client certificates |

pub(crate) mod auth;
pub(crate) mod builder;
pub(crate) mod compression;
pub(crate) mod connection;
pub(crate) mod handle;
pub(crate) mod in_flight;
pub(crate) mod oidc;
pub(crate) mod routing;
pub(crate) mod state;
pub(crate) mod tls;
