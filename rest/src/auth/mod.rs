//! Credentials on every request (client-go's `plugin/pkg/client/auth` and
//! `plugin/pkg/client/auth/exec`, with the `transport` round trippers that
//! put them on requests): the configuration's
//! [`Credentials`](crate::config::Credentials) become an authenticator
//! that produces the `Authorization` header of each attempt.
//!
//! | file | what |
//! |---|---|
//! | `authenticator.rs` | the credential configured, as each attempt's `Authorization` |
//! | `authorization.rs` | what one attempt carries; a bearer token as a header |
//! | `token_file.rs` | a bearer token file read again every minute |
//! | `exec_plugin.rs`, `exec.rs`, `exec_interactivity.rs` | an exec plugin: running it, and caching its credential |
//! | `oidc.rs` | a kubeconfig's `oidc` auth-provider |
//! | `error.rs` | [`AuthError`], [`ExecError`] |

pub(crate) mod authenticator;
pub(crate) mod authorization;
pub(crate) mod error;
pub(crate) mod exec;
pub(crate) mod exec_interactivity;
pub(crate) mod exec_plugin;
pub(crate) mod oidc;
pub(crate) mod token_file;

pub use error::{AuthError, ExecError};
