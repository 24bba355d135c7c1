//! Helpers over the client (client-go's `util`).

pub mod retry;
