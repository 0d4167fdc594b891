//! Helpers for the services' integration tests (feature `testing`): unique names so tests run in
//! parallel against the one real PostgreSQL and RabbitMQ, and [`Proxy`], a TCP relay that a test
//! can cut to produce a real outage of the real server behind it.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use tokio::{
    net::{TcpListener, TcpStream},
    sync::watch,
};

/// The PostgreSQL server tests use (`TEST_PG_URL`, default the local trust-auth server), without
/// a database name.
pub fn pg_server_url() -> String {
    std::env::var("TEST_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// The RabbitMQ URL tests use (`TEST_AMQP_URL`, default the local guest account).
pub fn amqp_url() -> String {
    std::env::var("TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// `host:port` of the tests' PostgreSQL server (what a [`Proxy`] in front of it relays to).
pub fn pg_addr() -> String {
    split_url(&pg_server_url()).2
}

/// `host:port` of the tests' RabbitMQ server.
pub fn amqp_addr() -> String {
    split_url(&amqp_url()).2
}

/// The tests' PostgreSQL server, with its credentials, reached at `addr` (e.g. a [`Proxy`]),
/// database `db`.
pub fn pg_url_via(addr: impl std::fmt::Display, db: &str) -> String {
    let (scheme, userinfo, _, _) = split_url(&pg_server_url());
    format!("{scheme}://{userinfo}{addr}/{db}")
}

/// The tests' RabbitMQ URL, with its credentials and vhost, reached at `addr` (e.g. a [`Proxy`]).
pub fn amqp_url_via(addr: impl std::fmt::Display) -> String {
    let (scheme, userinfo, _, path) = split_url(&amqp_url());
    format!("{scheme}://{userinfo}{addr}{path}")
}

/// `scheme://userinfo@host:port/path` → (scheme, `userinfo@` or empty, `host:port`, `/path` or
/// empty).
fn split_url(url: &str) -> (String, String, String, String) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (format!("{user}@"), host),
        None => (String::new(), authority),
    };
    (scheme.into(), userinfo, host.into(), path.into())
}

/// A name no other test (in this or another process) uses: `prefix_<pid>_<time>_<n>`.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000_000)
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{nanos}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A URL for a fresh database named `unique(prefix)`; the service creates it on startup.
pub fn fresh_database_url(prefix: &str) -> String {
    format!("{}/{}", pg_server_url(), unique(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_through_another_address_keep_credentials_and_path() {
        assert_eq!(
            split_url("amqp://guest:guest@127.0.0.1:5672/%2f"),
            (
                "amqp".into(),
                "guest:guest@".into(),
                "127.0.0.1:5672".into(),
                "/%2f".into()
            )
        );
        assert_eq!(
            split_url("postgres://127.0.0.1:5432"),
            (
                "postgres".into(),
                String::new(),
                "127.0.0.1:5432".into(),
                String::new()
            )
        );
    }
}

/// A TCP relay to a real server that a test can take down and bring back: while down it closes
/// every open connection and refuses new ones (accepts and drops them at once), as a crashed or
/// unreachable server would look to the client.
#[derive(Debug, Clone)]
pub struct Proxy {
    addr: SocketAddr,
    up: watch::Sender<bool>,
    accepted: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free local port and relays to `target` (`host:port`).
    pub async fn start(target: &str) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (up, _) = watch::channel(true);
        let accepted = Arc::new(AtomicU64::new(0));
        let proxy = Self { addr, up, accepted };
        let target = target.to_owned();
        let this = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if !*this.up.borrow() {
                    drop(client);
                    continue;
                }
                this.accepted.fetch_add(1, Ordering::Relaxed);
                let mut down = this.up.subscribe();
                let target = target.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(&target).await else {
                        return;
                    };
                    let (mut client, mut server) = (client, server);
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = down.wait_for(|up| !*up) => {}
                    }
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
        self.up.send_replace(false);
    }

    /// Relays again.
    pub fn restore(&self) {
        self.up.send_replace(true);
    }

    /// True while relaying.
    pub fn is_up(&self) -> bool {
        *self.up.borrow()
    }

    /// Connections relayed so far (a reconnecting client raises it).
    pub fn connections(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}
