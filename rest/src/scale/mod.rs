//! The `scale` subresource of any scalable resource (client-go's `scale`):
//! [`ScaleClient`].

pub(crate) mod scale_client;

pub use scale_client::{ScaleClient, ScaleError};
