//! The one field of list metadata whose presence depends on the
//! k8s-openapi version a program builds with.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;

/// The shard selector a server says it applied to a list
/// (`metadata.shardInfo.selector`, Kubernetes 1.36+), as decoded from
/// JSON or protobuf into `ListMeta`. Always `None` when k8s-openapi was
/// built for a Kubernetes version before 1.36, whose `ListMeta` has no
/// such field (a client then filters itself; see
/// `clientgo_listwatch::ShardedListerWatcher`).
pub fn list_shard_selector(metadata: &ListMeta) -> Option<&str> {
    #[cfg(k8s_openapi_ge_1_36)]
    {
        metadata
            .shard_info
            .as_ref()
            .map(|info| info.selector.as_str())
    }
    #[cfg(not(k8s_openapi_ge_1_36))]
    {
        let _ = metadata;
        None
    }
}
