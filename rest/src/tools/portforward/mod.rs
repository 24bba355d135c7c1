//! A pod's ports over a WebSocket (client-go's `tools/portforward`):
//! [`PortForward::open`] and local listeners, [`PortForwarder`].

pub(crate) mod port_forward;

pub use port_forward::{
    ForwardedPort, ForwarderStats, LOCAL_CLOSE_GRACE, MAX_PORTS_PER_SESSION, PortForward,
    PortForwardError, PortForwarder, PortMapping,
};
