//! [`TypedResource`]: the bound of a Rust type a factory makes an
//! informer of.

use clientgo_apimachinery::{ApiObject, KnownScope};

/// A Rust type of one resource (fixed group, version, kind and scope, as
/// k8s-openapi's types and generated custom resources have) that an
/// informer can cache: what
/// [`SharedInformerFactory::informer_for`](crate::SharedInformerFactory::informer_for)
/// and the generated accessors take. Every such type has it; name it in
/// bounds instead of spelling the parts out.
pub trait TypedResource: k8s_openapi::Resource<Scope: KnownScope> + ApiObject + Clone {}

impl<K> TypedResource for K where K: k8s_openapi::Resource<Scope: KnownScope> + ApiObject + Clone {}
