//! A SOCKS5 proxy on 127.0.0.1 for tests of clients configured with a
//! kubeconfig `proxy-url: socks5://…` (RFC 1928, the CONNECT command, with
//! no authentication or with a user name and password, RFC 1929).
//!
//! It records every target it was asked to connect to, as the client sent
//! it, so a test can tell whether the client resolved the name itself or
//! left it to the proxy; names are resolved through an optional table
//! first (so a test can use a name that does not exist outside it), then
//! through the system.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A target a client asked the proxy to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socks5Target {
    /// A host name, left for the proxy to resolve.
    Name(String, u16),
    /// An address the client resolved itself.
    Address(SocketAddr),
}

/// Options of a [`Socks5Proxy`].
#[derive(Debug, Clone, Default)]
pub struct Socks5ProxyOptions {
    /// Names the proxy resolves without asking the system.
    pub hosts: HashMap<String, IpAddr>,
    /// A user name and password the client must give; none by default.
    pub credentials: Option<(String, String)>,
}

impl Socks5ProxyOptions {
    /// Resolves `name` to `address` inside the proxy.
    #[must_use]
    pub fn host(mut self, name: impl Into<String>, address: IpAddr) -> Self {
        self.hosts.insert(name.into(), address);
        self
    }

    /// Requires this user name and password.
    #[must_use]
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((user.into(), password.into()));
        self
    }
}

/// A running SOCKS5 proxy; dropping it stops accepting connections and
/// ends the tunnels it carries.
#[derive(Debug)]
pub struct Socks5Proxy {
    address: SocketAddr,
    targets: Arc<Mutex<Vec<Socks5Target>>>,
    shutdown: CancellationToken,
}

impl Socks5Proxy {
    /// Starts a proxy on an ephemeral port of 127.0.0.1.
    pub async fn start(options: Socks5ProxyOptions) -> io::Result<Socks5Proxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        let targets = Arc::new(Mutex::new(Vec::new()));
        let shutdown = CancellationToken::new();
        let options = Arc::new(options);
        let accepted_targets = Arc::clone(&targets);
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = stop.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => continue,
                    },
                };
                let options = Arc::clone(&options);
                let targets = Arc::clone(&accepted_targets);
                let stop = stop.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        result = tunnel(stream, &options, &targets) => {
                            if let Err(error) = result {
                                tracing::debug!(%error, "socks5 tunnel ended");
                            }
                        }
                    }
                });
            }
        });
        Ok(Socks5Proxy {
            address,
            targets,
            shutdown,
        })
    }

    /// The proxy's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `socks5://127.0.0.1:<port>`, for a kubeconfig's `proxy-url`.
    pub fn url(&self) -> String {
        format!("socks5://{}", self.address)
    }

    /// The targets asked for so far, in order.
    pub fn targets(&self) -> Vec<Socks5Target> {
        self.targets.lock().clone()
    }
}

impl Drop for Socks5Proxy {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn protocol_error(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

/// One client: greeting, optional authentication, CONNECT, then bytes
/// both ways until either side closes.
async fn tunnel(
    mut client: TcpStream,
    options: &Socks5ProxyOptions,
    targets: &Mutex<Vec<Socks5Target>>,
) -> io::Result<()> {
    let mut head = [0u8; 2];
    client.read_exact(&mut head).await?;
    if head[0] != 5 {
        return Err(protocol_error("not SOCKS version 5"));
    }
    let mut methods = vec![0u8; usize::from(head[1])];
    client.read_exact(&mut methods).await?;
    let wanted = if options.credentials.is_some() { 2 } else { 0 };
    if !methods.contains(&wanted) {
        client.write_all(&[5, 0xff]).await?;
        return Err(protocol_error("no acceptable authentication method"));
    }
    client.write_all(&[5, wanted]).await?;
    if let Some((user, password)) = &options.credentials {
        let mut version_and_length = [0u8; 2];
        client.read_exact(&mut version_and_length).await?;
        let mut given_user = vec![0u8; usize::from(version_and_length[1])];
        client.read_exact(&mut given_user).await?;
        let mut length = [0u8; 1];
        client.read_exact(&mut length).await?;
        let mut given_password = vec![0u8; usize::from(length[0])];
        client.read_exact(&mut given_password).await?;
        let ok = given_user == user.as_bytes() && given_password == password.as_bytes();
        client.write_all(&[1, if ok { 0 } else { 1 }]).await?;
        if !ok {
            return Err(protocol_error("wrong user name or password"));
        }
    }
    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    if request[0] != 5 || request[1] != 1 {
        // Only CONNECT is offered.
        client.write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        return Err(protocol_error("only CONNECT is supported"));
    }
    let target = match request[3] {
        1 => {
            let mut octets = [0u8; 4];
            client.read_exact(&mut octets).await?;
            let port = client.read_u16().await?;
            Socks5Target::Address(SocketAddr::from((Ipv4Addr::from(octets), port)))
        }
        4 => {
            let mut octets = [0u8; 16];
            client.read_exact(&mut octets).await?;
            let port = client.read_u16().await?;
            Socks5Target::Address(SocketAddr::from((Ipv6Addr::from(octets), port)))
        }
        3 => {
            let mut length = [0u8; 1];
            client.read_exact(&mut length).await?;
            let mut name = vec![0u8; usize::from(length[0])];
            client.read_exact(&mut name).await?;
            let port = client.read_u16().await?;
            let name = String::from_utf8(name).map_err(|_| protocol_error("name not UTF-8"))?;
            Socks5Target::Name(name, port)
        }
        _ => return Err(protocol_error("unknown address type")),
    };
    targets.lock().push(target.clone());
    let connected = match &target {
        Socks5Target::Address(address) => TcpStream::connect(address).await,
        Socks5Target::Name(name, port) => match options.hosts.get(name) {
            Some(ip) => TcpStream::connect((*ip, *port)).await,
            None => TcpStream::connect((name.as_str(), *port)).await,
        },
    };
    let mut upstream = match connected {
        Ok(upstream) => upstream,
        Err(error) => {
            // 4: host unreachable.
            client.write_all(&[5, 4, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
            return Err(error);
        }
    };
    let bound = upstream.local_addr()?;
    let mut reply = vec![5, 0, 0];
    match bound {
        SocketAddr::V4(v4) => {
            reply.push(1);
            reply.extend_from_slice(&v4.ip().octets());
        }
        SocketAddr::V6(v6) => {
            reply.push(4);
            reply.extend_from_slice(&v6.ip().octets());
        }
    }
    reply.extend_from_slice(&bound.port().to_be_bytes());
    client.write_all(&reply).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}
