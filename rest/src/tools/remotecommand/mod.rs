//! Exec and attach over a WebSocket (client-go's `tools/remotecommand`):
//! [`RemoteProcess::exec`] and [`RemoteProcess::attach`].

pub(crate) mod remote_command;

pub use remote_command::{
    ExitStatus, RemoteCommandError, RemoteProcess, StreamOptions, TerminalSize,
    V4_CHANNEL_PROTOCOL, V5_CHANNEL_PROTOCOL,
};
