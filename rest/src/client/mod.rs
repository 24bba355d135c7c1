//! The REST client (client-go's `rest`): [`RestClient`], the [`Request`]
//! builder and how a request is sent (throttling, credentials, retries),
//! what comes back ([`RawResponse`], [`ByteStream`]) and [`Error`].

pub(crate) mod error;
pub(crate) mod inner;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod rest_client;
pub(crate) mod retry;
pub(crate) mod send;
pub(crate) mod throttle;

pub use error::{Error, RequestError, Result};
pub use request::{ByteStream, RawResponse, Request};
pub use rest_client::{ClientStats, RestClient};
pub use throttle::TokenBucket;
