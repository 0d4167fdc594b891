//! The workspace's test helpers, a crate of their own that is never published: the services' and
//! the crates' integration tests, the examples' tests and the end-to-end package depend on it
//! (the published crates' packaged tests do not).
//!
//! - unique names ([`unique`], [`fresh_database_url`]), so tests run in parallel against the one
//!   real PostgreSQL and RabbitMQ; `deploy/test.sh` sweeps what they leave by these names;
//! - [`Proxy`], a TCP relay that a test can cut (or black-hole: silent, nothing closed) to produce
//!   a real outage of the real server behind it;
//! - [`scrape`] and [`Exposition`]: a service's real `/metrics` answer;
//! - [`init_tracing`], the trace contexts `main` installs;
//! - [`pki`], throwaway CAs for the TLS tests; [`health`], [`reflection`] and [`secrets`], what the
//!   services' tests of those share;
//! - [`run_for`] and [`run_to_end`], for tests of the real binaries; [`on_free_ports`], a service
//!   binary on ports of its own; [`free_local_addr`], a port for a child to listen on;
//!   [`run_in_own_process`], for a test that must not share its process with the others;
//! - [`confirming_channel`], [`preload`] and [`ready_messages`], the broker side of the tests
//!   (publishing with confirms, counting a queue); [`RefusingQueue`], a queue the broker nacks for;
//!   [`rabbit_node`], a RabbitMQ node of a test's own for tests that restart or block a broker;
//! - [`Made`], the guard that removes what a test made (databases, queues, exchanges), whether
//!   it passed or failed; [`Running`], a service running in-process and the one way to stop it;
//!   `stack` (feature `stack`), the three services in-process for the operator tools' tests;
//! - [`wait_until`] and [`eventually`], the one way tests wait for an outcome;
//! - [`chains`], the relay's guarantee checked on what a consumer received;
//! - [`orders`], test orders written through orders-svc or by hand (and the benches' writers);
//! - [`settings`], checks of the settings every service declares alike;
//! - [`install_fault`], a database that fails the statements a test names;
//!   [`assert_black_hole_noticed`], what the black-hole tests hold a service to.

pub mod chains;
pub mod health;
mod made;
mod metrics;
pub mod orders;
pub mod pki;
mod process;
mod proxy;
pub mod rabbit_node;
pub mod reflection;
mod refusing;
mod running;
pub mod secrets;
pub mod settings;
#[cfg(feature = "stack")]
pub mod stack;

pub use made::Made;
pub use running::{Running, STOP_PATIENCE};

pub use metrics::{Exposition, PROCESS_METRICS, scrape};
pub use process::{
    against_absent_servers, assert_refuses, free_local_addr, on_free_ports, output_text, run_for,
    run_in_own_process, run_to_end,
};
pub use proxy::Proxy;
pub use refusing::RefusingQueue;

use std::{
    future::Future,
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

/// Installs, once per test binary, what the services' `main` installs for traces: the
/// OpenTelemetry layer, without an exporter, so spans have trace contexts to store and send
/// on; and log lines when `RUST_LOG` is set (e.g. `RUST_LOG=relay_svc=info cargo test --
/// --nocapture`).
pub fn init_tracing() {
    use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let telemetry = outbox_kit::telemetry::Telemetry::build("test", None)
            .expect("a pipeline without export");
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

/// The file a test run names in this variable (deploy/test.sh) collects the pids of its test
/// processes, so that its check at the end counts the names of this run only.
pub const PIDS_FILE_VAR: &str = "OUTBOX_TEST_PIDS_FILE";

/// A name no other test (in this or another process) uses: `prefix_<pid>_<time>_<n>`. The first
/// call of a process adds its pid to the run's [`PIDS_FILE_VAR`] file, if any.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static RECORDED: std::sync::Once = std::sync::Once::new();
    RECORDED.call_once(record_pid);
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

/// Appends this process's pid to the run's [`PIDS_FILE_VAR`] file (one short `O_APPEND` write:
/// the lines of processes writing at once never mix).
fn record_pid() {
    use std::io::Write;
    let Some(path) = std::env::var_os(PIDS_FILE_VAR) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{}\n", std::process::id()).as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot record this test process in {}: {e}", path.display());
    }
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

/// [`drop_database`] from a `Drop` impl, which cannot await (see [`on_own_runtime`]), ending
/// whatever still uses the database (the services and relays of the test that just ended).
/// Best effort: a failure is printed.
pub fn drop_database_blocking(name: String) {
    on_own_runtime(async move {
        if let Err(e) = drop_database(&name).await {
            eprintln!("cannot drop database {name}: {e}");
        }
    });
}

/// Runs `work` to its end on a thread and runtime of its own: for a `Drop` impl, which cannot
/// await, and whose caller may be the test's only runtime thread, blocked until this returns.
pub fn on_own_runtime(work: impl Future<Output = ()> + Send + 'static) {
    let done = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(work);
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

/// Polls `check` every 50 ms until it returns `Some`, for at most `secs` seconds (for waits
/// longer than [`PATIENCE`]); what it returned.
pub async fn eventually<T, F, Fut>(what: &str, secs: u64, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs}s waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Empties `queue` (an operator's mistake, in a test of what the tools do about it); how many
/// messages it held.
pub async fn purge(queue: &str) -> u32 {
    let (conn, ch) = confirming_channel().await;
    let purged = ch
        .queue_purge(queue.into(), lapin::options::QueuePurgeOptions::default())
        .await
        .expect("purge");
    let _ = conn.close(200, "purged".into()).await;
    purged
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
