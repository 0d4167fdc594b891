//! [`Proxy`]: a TCP relay to a real server that a test can cut or black-hole.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::watch,
};

/// What a [`Proxy`] does with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Relays.
    Up,
    /// Closes every connection, refuses new ones.
    Cut,
    /// Moves nothing, closes nothing.
    Blackhole,
}

/// A TCP relay to a real server that a test can take down and bring back: while cut it closes
/// every open connection and refuses new ones (accepts and drops them at once), as a crashed or
/// unreachable server would look to the client; while black-holed it moves no byte in either
/// direction and closes nothing, as a firewall or a half-dead NAT that drops packets looks to
/// both sides (only their heartbeats and time-outs can tell).
#[derive(Debug, Clone)]
pub struct Proxy {
    addr: SocketAddr,
    mode: watch::Sender<Mode>,
    accepted: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free local port and relays to `target` (`host:port`).
    pub async fn start(target: &str) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (mode, _) = watch::channel(Mode::Up);
        let accepted = Arc::new(AtomicU64::new(0));
        let proxy = Self {
            addr,
            mode,
            accepted,
        };
        let target = target.to_owned();
        let this = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *this.mode.borrow() == Mode::Cut {
                    drop(client);
                    continue;
                }
                this.accepted.fetch_add(1, Ordering::Relaxed);
                let mut mode = this.mode.subscribe();
                let target = target.clone();
                tokio::spawn(async move {
                    // A connection made into the black hole gets no answer, ever.
                    match after_blackhole(&mut mode).await {
                        Flow::Up => {}
                        Flow::Cut => return,
                        Flow::Swallowed => return hold(client).await,
                    }
                    let Ok(server) = TcpStream::connect(&target).await else {
                        return;
                    };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    tokio::join!(
                        pump(client_read, server_write, Side::FromClient, mode.clone()),
                        pump(server_read, client_write, Side::FromServer, mode),
                    );
                });
            }
        });
        Ok(proxy)
    }

    /// The local address to give the client instead of the server's.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cuts every connection and refuses new ones until [`Proxy::restore`].
    pub fn cut(&self) {
        self.mode.send_replace(Mode::Cut);
    }

    /// Stops moving bytes on every connection, in both directions, without closing any;
    /// connections made meanwhile are accepted and get no answer. Both peers' kernels still
    /// acknowledge what they send (the proxy's sockets are open), so only an application's
    /// heartbeats and time-outs can tell: exactly what a silent network leaves them.
    ///
    /// After [`Proxy::restore`] new connections relay again, but every connection the black
    /// hole swallowed stays silent toward the client for good, while its server side is closed
    /// (as a NAT that lost its state, and the server's own keepalives, leave it): a client that
    /// waits on such a socket waits forever unless a time-out of its own frees it.
    pub fn blackhole(&self) {
        self.mode.send_replace(Mode::Blackhole);
    }

    /// Relays again: new connections go through (connections a cut closed stay closed; those a
    /// black hole swallowed stay silent, see [`Proxy::blackhole`]).
    pub fn restore(&self) {
        self.mode.send_replace(Mode::Up);
    }

    /// Connections relayed so far (a reconnecting client raises it).
    pub fn connections(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

/// What became of a connection, once no black hole holds it.
enum Flow {
    /// Relaying.
    Up,
    /// Cut (or the proxy is gone): close it.
    Cut,
    /// A black hole swallowed it: silent toward the client for good, its server side closed.
    Swallowed,
}

/// Waits while black-holed, then says what became of the connection.
async fn after_blackhole(mode: &mut watch::Receiver<Mode>) -> Flow {
    let swallowed = *mode.borrow_and_update() == Mode::Blackhole;
    match mode.wait_for(|m| *m != Mode::Blackhole).await {
        Ok(m) if *m == Mode::Up && swallowed => Flow::Swallowed,
        Ok(m) if *m == Mode::Up => Flow::Up,
        _ => Flow::Cut,
    }
}

/// Keeps `socket` open and silent until the test's runtime ends.
async fn hold<T>(socket: T) {
    let _socket = socket;
    std::future::pending::<()>().await
}

/// Which way a [`pump`] copies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    FromClient,
    FromServer,
}

/// Copies one direction until end of file or an error (then shuts the other side's writing
/// down, as `copy_bidirectional` does), moving nothing while black-holed and stopping when cut.
/// After a black hole the client's half is held open and silent, the server's dropped.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    side: Side,
    mut mode: watch::Receiver<Mode>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match after_blackhole(&mut mode).await {
            Flow::Up => {}
            Flow::Cut => return,
            Flow::Swallowed => {
                // Dropping the server's half ends its session; the client's stays open.
                return match side {
                    Side::FromClient => {
                        drop(to);
                        hold(from).await
                    }
                    Side::FromServer => {
                        drop(from);
                        hold(to).await
                    }
                };
            }
        }
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    let _ = to.shutdown().await;
                    return;
                }
                Ok(n) => n,
            },
            // Look at the mode again before reading on.
            _ = mode.changed() => continue,
        };
        // What was read before a black hole began is still delivered (it was in flight).
        let written = tokio::select! {
            w = to.write_all(&buf[..n]) => w.is_ok(),
            _ = mode.wait_for(|m| *m == Mode::Cut) => false,
        };
        if !written {
            return;
        }
    }
}
