//! What the server serves (client-go's `discovery`, its `cached` clients,
//! and `restmapper`): [`Discovery`], everything at once ([`ApiDiscovery`]),
//! kept in memory and on disk ([`CachedDiscovery`]), and kinds and kubectl
//! arguments mapped to resources ([`RestMapper`], [`DeferredRestMapper`]).

pub(crate) mod aggregated;
pub(crate) mod cache;
pub(crate) mod discovery_client;
pub(crate) mod resource;
pub(crate) mod rest_mapper;

pub use aggregated::{
    AGGREGATED_DISCOVERY_ACCEPT, ApiDiscovery, DiscoveredGroup, DiscoveredVersion,
};
pub use cache::{CachedDiscovery, DEFAULT_DISCOVERY_CACHE_TTL, DiscoveryCacheStats};
pub use discovery_client::Discovery;
pub use resource::DiscoveredResource;
pub use rest_mapper::{DEFAULT_MISS_REFRESH_INTERVAL, DeferredRestMapper, MapperError, RestMapper};
