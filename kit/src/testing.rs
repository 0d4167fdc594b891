//! Helpers for the services' integration tests (feature `testing`): unique names so tests run in
//! parallel against the one real PostgreSQL and RabbitMQ, and [`Proxy`], a TCP relay that a test
//! can cut (or black-hole: silent, nothing closed) to produce a real outage of the real server
//! behind it; [`scrape`] and [`Exposition`]
//! read a service's real `/metrics` answer; [`init_tracing`], the trace contexts `main` installs; [`pki`], throwaway CAs for the TLS tests; [`health`], [`reflection`] and [`secrets`], what the
//! services' tests of those share; [`run_for`] and [`run_to_end`], for tests of the real binaries;
//! [`on_free_ports`], a service binary on ports of its own; [`run_in_own_process`], for a test
//! that must not share its process with the others; [`confirming_channel`], [`preload`] and
//! [`ready_messages`], the broker side of the tests (publishing with confirms, counting a queue);
//! [`rabbit_node`], a RabbitMQ node of a test's own for tests that restart or block a broker;
//! [`wait_until`], the one way tests wait for an outcome; [`chains`], the relay's guarantee
//! checked on what a consumer received; [`RefusingQueue`], a queue the broker nacks for;
//! [`orders`], test orders written through orders-svc or by hand (and the benches' writers);
//! [`settings`], checks of the settings every service declares alike; [`install_fault`], a
//! database that fails the statements a test names; [`assert_black_hole_noticed`], what the
//! black-hole tests hold a service to.

pub mod chains;
pub mod health;
pub mod orders;
pub mod pki;
pub mod rabbit_node;
pub mod reflection;
mod refusing;
pub mod secrets;
pub mod settings;

pub use refusing::RefusingQueue;

use std::{
    collections::{BTreeMap, BTreeSet},
    future::Future,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::watch,
};

/// Installs, once per test binary, what the services' `main` installs for traces: the
/// OpenTelemetry layer, without an exporter, so spans have trace contexts to store and send
/// on; and log lines when `RUST_LOG` is set (e.g. `RUST_LOG=relay_svc=info cargo test --
/// --nocapture`).
pub fn init_tracing() {
    use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let telemetry =
            crate::telemetry::Telemetry::build("test", None).expect("a pipeline without export");
        let logs = std::env::var("RUST_LOG").is_ok().then(|| {
            tracing_subscriber::fmt::layer()
                .with_test_writer()
                .with_filter(EnvFilter::from_default_env())
        });
        let subscriber = tracing_subscriber::registry()
            .with(logs)
            .with(telemetry.layer());
        // Another subscriber installed first (by the test itself) wins.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

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

/// The database a PostgreSQL URL names (its last path segment, without the query).
pub fn database_name(url: &str) -> &str {
    let path = url.split('?').next().unwrap_or(url);
    path.rsplit('/').next().unwrap_or(path)
}

/// Drops database `name` of the tests' server, ending its sessions (`with (force)`): a test's
/// own database when what it holds is not worth keeping until the next sweep.
pub async fn drop_database(name: &str) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", pg_server_url())).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "drop database if exists \"{name}\" with (force)"
    )))
    .execute(&mut admin)
    .await?;
    admin.close().await
}

/// [`drop_database`] from a `Drop` impl, which cannot await: on a thread and runtime of its own,
/// ending whatever still uses the database (the services and relays of the test that just
/// ended). Best effort: a leftover is swept by the next test run.
pub fn drop_database_blocking(name: String) {
    let done = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let _ = drop_database(&name).await;
        });
    });
    let _ = done.join();
}

/// Makes every write `on` (a trigger's events and table, e.g. `insert or update on progress`)
/// fail with a real PostgreSQL error of `sqlstate` while the one row of table `fault` says so
/// (`update fault set on_ = false` heals it): a database that fails some statements, not a
/// connection that is gone, in the test's own database.
pub async fn install_fault(db: &mut sqlx::PgConnection, on: &str, sqlstate: &str) {
    for sql in [
        "create table fault (on_ boolean not null)".to_owned(),
        "insert into fault values (true)".to_owned(),
        format!(
            "create function fault() returns trigger language plpgsql as $$
             begin
               if (select on_ from fault) then
                 raise exception 'injected fault' using errcode = '{sqlstate}';
               end if;
               return new;
             end $$"
        ),
        format!("create trigger fault before {on} for each row execute function fault()"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut *db)
            .await
            .expect("install the fault");
    }
}

/// The databases named by these URLs (e.g. made with [`fresh_database_url`] for a service to
/// create), dropped when the guard goes: a passing test leaves none behind, a failing one keeps
/// them to look at.
#[derive(Debug)]
pub struct DropDatabasesOnPass(pub Vec<String>);

impl Drop for DropDatabasesOnPass {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            for url in &self.0 {
                drop_database_blocking(database_name(url).to_owned());
            }
        }
    }
}

/// Spawns every one of `tasks` at once and, in a task of its own, gathers what they return in
/// task order: a test's concurrent writers, each returning what it wrote.
pub fn spawn_gathered<T, Fut>(
    tasks: impl IntoIterator<Item = Fut>,
) -> tokio::task::JoinHandle<Vec<T>>
where
    Fut: Future<Output = Vec<T>> + Send + 'static,
    T: Send + 'static,
{
    let tasks: Vec<_> = tasks.into_iter().map(tokio::spawn).collect();
    tokio::spawn(async move {
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("writer"));
        }
        all
    })
}

/// Generous: tests wait for outcomes, they never assert speed.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The promise of AMQP heartbeats that the black-hole tests hold a service to: a connection
/// whose broker went silent is noticed within two `heartbeat`s (plus 5 s for a slow machine).
/// Prints when it was `noticed` and when the service was `resuming` (e.g. "consuming from the
/// next address") after `resumed`, both counted from the moment the broker went silent.
pub fn assert_black_hole_noticed(
    heartbeat: Duration,
    noticed: Duration,
    resuming: &str,
    resumed: Duration,
) {
    println!(
        "broker black hole (AMQP_HEARTBEAT {heartbeat:?}): noticed after {noticed:.1?}, \
         {resuming} after {resumed:.1?}"
    );
    assert!(
        noticed <= heartbeat * 2 + Duration::from_secs(5),
        "noticed after {noticed:?}"
    );
}

/// Polls `check` until it returns true, failing the test after [`PATIENCE`] with `what`.
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_the_last_path_segment_without_the_query() {
        let url = "postgres://postgres@127.0.0.1:5432/orders_1_2_3?sslmode=disable";
        assert_eq!(database_name(url), "orders_1_2_3");
        assert_eq!(database_name("postgres://h/mail"), "mail");
    }

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

/// A connection to the test broker and a channel on it in confirm mode: once a publish's confirm
/// is awaited, the broker has the message.
pub async fn confirming_channel() -> (lapin::Connection, lapin::Channel) {
    // Bounded, so a broker that never answers fails the test naming the step instead of hanging it.
    let url = amqp_url();
    let connect = lapin::Connection::connect(&url, lapin::ConnectionProperties::default());
    let conn = tokio::time::timeout(PATIENCE, connect)
        .await
        .expect("RabbitMQ answers within PATIENCE (30 s)")
        .expect("connect to RabbitMQ");
    let ch = conn.create_channel().await.expect("channel");
    ch.confirm_select(lapin::options::ConfirmSelectOptions::default())
        .await
        .expect("confirms");
    (conn, ch)
}

/// Messages ready (not yet delivered to any consumer) in `queue`: a passive declare on `ch`.
pub async fn ready_messages(ch: &lapin::Channel, queue: &str) -> u32 {
    let passive = lapin::options::QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    ch.queue_declare(queue.into(), passive, lapin::types::FieldTable::default())
        .await
        .expect("passive declare")
        .message_count()
}

/// Publishes `events` messages (`routing(i)`: routing key, body, properties) to `exchange` with
/// confirms, 1,000 in flight.
pub async fn preload(
    ch: &lapin::Channel,
    exchange: &str,
    routing: impl Fn(u64) -> (String, Vec<u8>, lapin::BasicProperties),
    events: u64,
) -> anyhow::Result<()> {
    ch.confirm_select(lapin::options::ConfirmSelectOptions::default())
        .await?;
    let mut i = 0;
    while i < events {
        let mut confirms = Vec::new();
        for _ in 0..1000.min(events - i) {
            let (key, body, props) = routing(i);
            confirms.push(
                ch.basic_publish(
                    exchange.into(),
                    key.as_str().into(),
                    lapin::options::BasicPublishOptions::default(),
                    &body,
                    props,
                )
                .await?,
            );
            i += 1;
        }
        for c in confirms {
            anyhow::ensure!(c.await?.is_ack(), "broker nacked a preload message");
        }
    }
    Ok(())
}

/// The body of `GET /metrics` at `addr`, as Prometheus would fetch it (HTTP/1.0, so the server
/// closes the connection after the answer); an error for anything but a 200.
pub async fn scrape(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: metrics\r\n\r\n")
        .await?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).await?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(format!(
            "GET http://{addr}/metrics: {}",
            head.lines().next().unwrap_or("no answer")
        )));
    }
    let content_type = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        })
        .map(|(_, v)| v.trim());
    if content_type != Some(crate::metrics::TEXT_FORMAT) {
        return Err(std::io::Error::other(format!(
            "GET http://{addr}/metrics: content type {content_type:?}, not the text format's"
        )));
    }
    Ok(body.to_owned())
}

/// The `process_*` metrics every service must export.
pub const PROCESS_METRICS: &[&str] = crate::metrics::process::NAMES;

/// A Prometheus text exposition, parsed far enough to check its hygiene.
#[derive(Debug, Default)]
pub struct Exposition {
    /// Family name → HELP text.
    pub help: BTreeMap<String, String>,
    /// Family name → TYPE.
    pub types: BTreeMap<String, String>,
    /// Every sample: (sample name, the labels between the braces, value).
    pub samples: Vec<(String, String, f64)>,
}

impl Exposition {
    pub fn parse(text: &str) -> Self {
        let mut e = Self::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
                e.help.insert(name.into(), help.into());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
                e.types.insert(name.into(), kind.into());
            } else if !line.starts_with('#') {
                let name_end = line.find(['{', ' ']).unwrap_or(line.len());
                let name = &line[..name_end];
                let (labels, value) = match line[name_end..].strip_prefix('{') {
                    Some(rest) => rest.rsplit_once('}').unwrap_or((rest, "")),
                    None => ("", &line[name_end..]),
                };
                let value = value.split_whitespace().next().unwrap_or("");
                e.samples.push((
                    name.into(),
                    labels.into(),
                    value.parse().unwrap_or(f64::NAN),
                ));
            }
        }
        e
    }

    /// The family a sample belongs to: `x_bucket`, `x_sum` and `x_count` belong to the
    /// histogram or summary `x`.
    pub fn family<'a>(&self, sample: &'a str) -> &'a str {
        if self.types.contains_key(sample) {
            return sample;
        }
        ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                sample
                    .strip_suffix(suffix)
                    .filter(|f| self.types.contains_key(*f))
            })
            .unwrap_or(sample)
    }

    /// The value of one series, written as exported: `name` or `name{label="value",…}`.
    pub fn value(&self, series: &str) -> Option<f64> {
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.strip_suffix('}').unwrap_or(rest)),
            None => (series, ""),
        };
        self.samples
            .iter()
            .find(|(n, l, _)| n == name && l == labels)
            .map(|(_, _, v)| *v)
    }

    /// Every family with at least one sample.
    pub fn families(&self) -> BTreeSet<String> {
        self.samples
            .iter()
            .map(|(name, _, _)| self.family(name).to_owned())
            .collect()
    }

    /// Whether a name a query may use (a family or one of its `_bucket`/`_sum`/`_count`
    /// series) has a sample.
    pub fn has_series(&self, name: &str) -> bool {
        self.samples.iter().any(|(n, _, _)| n == name)
    }

    /// Which metrics of a service's declared list are not exported, or are exported with a HELP
    /// text other than the list's.
    pub fn declared_problems(&self, declared: &[outbox_support::metrics::Metric]) -> Vec<String> {
        let families = self.families();
        let mut problems = Vec::new();
        for m in declared {
            if !families.contains(m.name) {
                problems.push(format!("{} is not exported", m.name));
            }
            let help = self.help.get(m.name).map(String::as_str);
            if help != Some(m.help) {
                problems.push(format!(
                    "{}'s HELP is {help:?}, not the one the list gives ({:?})",
                    m.name, m.help
                ));
            }
        }
        problems
    }

    /// What is wrong with the hygiene of `service`'s metrics: a family without HELP text or
    /// TYPE, a missing `process_*` figure, no `build_info{service="<service>"} 1`.
    pub fn hygiene_problems(&self, service: &str) -> Vec<String> {
        let mut problems = Vec::new();
        for family in self.families() {
            if self.help.get(&family).is_none_or(|h| h.trim().is_empty()) {
                problems.push(format!("{family} has no HELP text"));
            }
            if !self.types.contains_key(&family) {
                problems.push(format!("{family} has no TYPE"));
            }
        }
        for name in PROCESS_METRICS {
            if !self.has_series(name) {
                problems.push(format!("{name} is missing"));
            }
        }
        let build_info = self.samples.iter().any(|(name, labels, value)| {
            name == "build_info"
                && labels.contains(&format!("service=\"{service}\""))
                && labels.contains("version=\"")
                && *value == 1.0
        });
        if !build_info {
            problems.push(format!(
                "no build_info{{service=\"{service}\",version=…}} 1"
            ));
        }
        problems
    }
}

/// Runs a service binary that is expected to keep running: waits `for_`, reports whether it was
/// still running, then kills it (the child this call started) and returns everything it wrote to
/// stdout and stderr.
pub fn run_for(command: &mut std::process::Command, for_: std::time::Duration) -> (bool, String) {
    use std::{io::Read, process::Stdio};

    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    std::thread::sleep(for_);
    let running = child.try_wait().expect("status").is_none();
    if running {
        child.kill().expect("kill the child this test started");
    }
    child.wait().expect("reaped");
    let mut all = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut all).expect("stdout");
    }
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut all).expect("stderr");
    }
    (running, all)
}

/// The service binary at `binary` pointed at servers that are not there (PostgreSQL, database
/// `database`, and RabbitMQ on port 1), its own ports 0 and `RUST_LOG=info`: it starts and
/// keeps retrying, logging, for as long as it runs.
pub fn against_absent_servers(binary: &str, database: &str) -> std::process::Command {
    let mut cmd = on_free_ports(binary);
    cmd.env(
        "DATABASE_URL",
        format!("postgres://postgres@127.0.0.1:1/{database}"),
    )
    .env("AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
    .env("RUST_LOG", "info");
    cmd
}

/// The service binary at `binary` with its gRPC and `/metrics` listeners on free ports
/// (`GRPC_ADDR` and `METRICS_ADDR` `127.0.0.1:0`), so that it runs beside anything.
pub fn on_free_ports(binary: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(binary);
    cmd.env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0");
    cmd
}

/// Runs a service binary to its end: (succeeded, stdout + stderr).
pub fn run_to_end(command: &mut std::process::Command) -> (bool, String) {
    let out = command.output().expect("the binary runs");
    (out.status.success(), output_text(&out))
}

/// What a finished command wrote: its stdout, then its stderr.
pub fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a service binary that must refuse to start: asserts it fails and that its output says
/// each of `says` (the settings it names, the bad value). Returns the output.
pub fn assert_refuses(command: &mut std::process::Command, says: &[&str]) -> String {
    let (ok, all) = run_to_end(command);
    assert!(!ok, "refuses to start: {all}");
    for said in says {
        assert!(all.contains(said), "says {said:?}: {all}");
    }
    all
}

/// The variable that tells a child test process which test [`run_in_own_process`] started it for.
const OWN_PROCESS_VAR: &str = "OUTBOX_TEST_OWN_PROCESS";

/// For a test that reads process-wide state which the other tests of its binary would disturb
/// (the metrics recorder's counters start at 0 only in a process nothing else has recorded in):
/// runs the test again, alone, in a child process of the test binary, and asserts that it passed
/// there, forwarding its output. Returns `true` in the binary's own process once that is done
/// (the test then returns at once) and `false` in the child, where the test goes on with its
/// body.
///
/// `test` is the test's path in its binary as `concat!(module_path!(), "::name")` spells it
/// (the crate name in front is dropped).
pub fn run_in_own_process(test: &str) -> bool {
    let name = test.split_once("::").map_or(test, |(_, path)| path);
    if std::env::var(OWN_PROCESS_VAR).is_ok_and(|v| v == name) {
        return false;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let (passed, output) = run_to_end(
        std::process::Command::new(exe)
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(OWN_PROCESS_VAR, name),
    );
    // Through the harness's capture: shown on failure or with --nocapture, as the test's own.
    print!("{output}");
    assert!(passed, "{name} failed in its own process");
    // A name that matched no test would pass without running anything.
    assert!(
        output.contains("test result: ok. 1 passed"),
        "{name} did not run in its own process"
    );
    true
}

#[cfg(test)]
mod exposition_tests {
    use super::*;

    #[test]
    fn a_family_without_help_or_build_info_is_named() {
        let text = "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n\
                    # TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 0.5\nh_count 1\n\
                    # HELP build_info Build.\n# TYPE build_info gauge\n\
                    build_info{service=\"relay-svc\",version=\"0.1.0\"} 1\n";
        let e = Exposition::parse(text);
        assert_eq!(e.family("h_bucket"), "h");
        assert_eq!(e.family("a_total"), "a_total");
        assert!(e.has_series("h_bucket") && !e.has_series("h"));
        assert_eq!(e.value("a_total"), Some(3.0));
        assert_eq!(e.value("h_bucket{le=\"1\"}"), Some(1.0));
        assert_eq!(e.value("h_bucket{le=\"2\"}"), None);
        let problems = e.hygiene_problems("relay-svc");
        assert!(
            problems.contains(&"h has no HELP text".to_owned()),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.starts_with("a_total")),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.contains("build_info")),
            "{problems:?}"
        );
        assert!(problems.contains(&"process_open_fds is missing".to_owned()));
        let other = e.hygiene_problems("mail-svc");
        assert!(other.iter().any(|p| p.contains("build_info")), "{other:?}");
    }
}
