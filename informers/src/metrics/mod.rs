//! The informers' metrics: the provider traits, and the Prometheus
//! implementation behind the `prometheus` feature.

#[cfg(feature = "prometheus")]
pub(crate) mod prometheus;
pub(crate) mod provider;
