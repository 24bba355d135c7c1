//! [`CuttableProxy`]: a TCP proxy on 127.0.0.1 whose link a test cuts and
//! restores, to take a client off the network while the server goes on
//! (the same fault on the test server and on a real kube-apiserver).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A TCP proxy from a port on 127.0.0.1 to `target`. While cut, every
/// connection through it is closed and new ones are closed as soon as
/// accepted (a client sees resets, as when its node loses the network).
/// TLS passes through untouched: the server's certificate must name
/// 127.0.0.1. Dropping the proxy stops it.
#[derive(Debug)]
pub struct CuttableProxy {
    address: SocketAddr,
    cut: watch::Sender<bool>,
    stop: CancellationToken,
    /// Connections being forwarded now.
    open: Arc<AtomicUsize>,
}

impl CuttableProxy {
    /// Starts a proxy to `target` on a free port.
    pub async fn start(target: SocketAddr) -> std::io::Result<CuttableProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (cut, cut_receiver) = watch::channel(false);
        let stop = CancellationToken::new();
        let cut_receiver = Arc::new(cut_receiver);
        let stopped = stop.clone();
        let open = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&open);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = stopped.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((client, _)) = accepted else { continue };
                // Counted before the cut is read: `cut()` sets the cut, then
                // waits for the count, so a connection it does not wait for
                // has seen the cut.
                let open = Arc::clone(&counted);
                open.fetch_add(1, Ordering::SeqCst);
                if *cut_receiver.borrow() {
                    drop(client);
                    open.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let mut cut_now = (*cut_receiver).clone();
                let stopped = stopped.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(target).await {
                        let (mut client, mut server) = (client, server);
                        // The cut first: once it is set, nothing more is
                        // forwarded.
                        tokio::select! {
                            biased;
                            _ = cut_now.wait_for(|cut| *cut) => {}
                            () = stopped.cancelled() => {}
                            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Ok(CuttableProxy {
            address,
            cut,
            stop,
            open,
        })
    }

    /// The proxy's address (connect here instead of to the target).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `https://127.0.0.1:PORT` through the proxy.
    pub fn https_url(&self) -> String {
        format!("https://{}", self.address)
    }

    /// `http://127.0.0.1:PORT` through the proxy.
    pub fn http_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Closes every connection through the proxy and refuses new ones;
    /// returns once none is open, so nothing the server sends from then on
    /// reaches a client (waits at most a second for the proxy's tasks).
    pub async fn cut(&self) {
        self.cut.send_replace(true);
        for _ in 0..200 {
            if self.open.load(Ordering::SeqCst) == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Connections being forwarded now.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.cut.send_replace(false);
    }
}

impl Drop for CuttableProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
