//! Sessions with a pod's containers (client-go's `tools`): exec and attach
//! ([`remotecommand`]) and port-forward ([`portforward`]).

pub mod portforward;
pub mod remotecommand;
