//! PostgreSQL bootstrap: each service owns a database, creates it when missing, then migrates.
//! [`connect`] needs the database now; [`prepare`] and [`wait_until_prepared`] are for services
//! that start while it is away and wait for it.

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use sqlx::{
    AssertSqlSafe, ConnectOptions, Connection, PgPool,
    migrate::{MigrateError, Migrator},
    postgres::{PgConnectOptions, PgConnection, PgPoolOptions},
};
use tokio_util::sync::CancellationToken;

use outbox_support::{backoff::Backoff, secret::SecretUrl};

/// How long one attempt to connect (and create and migrate) may take before the database counts
/// as unreachable: a black-holed address must not hold start-up for the TCP timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses `DATABASE_URL`; the error names the setting and never shows the password.
///
/// TLS follows the URL as with libpq: `sslmode=disable|prefer|require|verify-ca|verify-full`
/// (default `prefer`) and `sslrootcert=`, `sslcert=`, `sslkey=` (PEM files). The files are
/// checked here, at start-up: a missing one would otherwise look like an unreachable database.
pub fn options(url: &SecretUrl) -> anyhow::Result<PgConnectOptions> {
    options_for("DATABASE_URL", url)
}

/// [`options`] of a database given by another `setting` (e.g. one entry of `SHARDS`), named in
/// its errors.
pub fn options_for(setting: &str, url: &SecretUrl) -> anyhow::Result<PgConnectOptions> {
    let options = url.parse(setting, "PostgreSQL URL", PgConnectOptions::from_str)?;
    if let Ok(parsed) = url::Url::parse(url) {
        for (key, value) in parsed.query_pairs() {
            if matches!(&*key, "sslrootcert" | "sslcert" | "sslkey")
                && let Err(e) = std::fs::metadata(&*value).and_then(|m| {
                    if m.is_file() {
                        std::fs::File::open(&*value).map(drop)
                    } else {
                        Err(std::io::Error::other("not a file"))
                    }
                })
            {
                anyhow::bail!("{setting}: {key}={value} cannot be read: {e}");
            }
        }
    }
    Ok(options)
}

/// Parses `url`, creates its database if it does not exist yet, and opens a pool of at most
/// `max_connections`. Errors name `DATABASE_URL`, the setting an operator has to fix, and never
/// show its password (a [`SecretUrl`] derefs to the `&str` this takes).
pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<PgPool> {
    connect_with(
        "DATABASE_URL",
        options(&SecretUrl::from(url))?,
        max_connections,
    )
    .await
}

/// [`connect`] with `options` already parsed (by [`options_for`] a database given by another
/// `setting`, e.g. one entry of `SHARDS`, named in the errors) and tuned (e.g. [`custom_plans`]).
pub async fn connect_with(
    setting: &str,
    options: PgConnectOptions,
    max_connections: u32,
) -> anyhow::Result<PgPool> {
    create_database_if_missing(&options)
        .await
        .with_context(|| format!("{setting}: cannot reach PostgreSQL to create the database"))?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        // A query waits this long for a pooled connection while the database is away; then the
        // caller sees an error (UNAVAILABLE on gRPC) instead of hanging.
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options)
        .await
        .with_context(|| format!("{setting}: cannot connect to PostgreSQL"))
}

/// Sessions that plan every statement for its own arguments (`plan_cache_mode =
/// force_custom_plan`). A prepared statement otherwise switches to a generic plan after five
/// runs, chosen with the statistics of that moment and kept while the table grows: on a fresh
/// database (or before autovacuum's analyze caught up with a burst) that is a sequential scan or
/// a hash join of the whole table where an index probe per key is right. Measured at the
/// end-to-end maximum: mail-svc's promotion walked 330,000 buffers for 18 chains, and
/// orders-svc's `where id = any($1) … for update` read 422 rows of `orders` per event by
/// sequential scans. Planning each statement costs less than either.
pub fn custom_plans(options: PgConnectOptions) -> PgConnectOptions {
    options.options([("plan_cache_mode", "force_custom_plan")])
}

/// A pool that connects on first use, so that a service can start while its database is away.
///
/// A connection handed back is checked within [`RELEASE_CHECK_TIMEOUT`] and closed when the
/// check gets no answer: sqlx checks every returned connection with a round trip (and first
/// waits for the rest of a statement whose caller gave up), which on a socket gone silent would
/// wait forever and keep the pool's slot taken for good. An idle connection is checked before
/// use within [`ACQUIRE_CHECK_TIMEOUT`] (sqlx's own check is bounded only by the whole
/// acquire's 5 s, one silent idle connection at a time), every time however briefly it was idle:
/// a connection the server ended meanwhile (a restart, `pg_terminate_backend`, a database closed
/// to connections) would otherwise fail the statement it is taken for, and not every caller
/// retries (an admin listing reports the shard unavailable).
pub fn lazy_pool(options: &PgConnectOptions, max_connections: u32) -> PgPool {
    PgPoolOptions::new()
        .max_connections(max_connections)
        // As in `connect`: a caller waits at most this long while the database is away.
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(false)
        .before_acquire(|conn, _| {
            Box::pin(async move {
                match tokio::time::timeout(ACQUIRE_CHECK_TIMEOUT, conn.ping()).await {
                    Ok(Ok(())) => Ok(true),
                    Ok(Err(e)) => Err(e),
                    Err(_) => Err(sqlx::Error::PoolTimedOut),
                }
            })
        })
        .after_release(|conn, _| {
            Box::pin(async move {
                match tokio::time::timeout(RELEASE_CHECK_TIMEOUT, conn.ping()).await {
                    Ok(Ok(())) => Ok(true),
                    Ok(Err(e)) => Err(e),
                    Err(_) => {
                        tracing::warn!(
                            "a database connection gave no answer within \
                             {RELEASE_CHECK_TIMEOUT:?}; closing it (a silent network?)"
                        );
                        Err(sqlx::Error::PoolTimedOut)
                    }
                }
            })
        })
        .connect_lazy_with(options.clone())
}

/// How long [`lazy_pool`]'s check of an idle connection before use may take.
pub const ACQUIRE_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long [`lazy_pool`]'s check of a returned connection may take.
pub const RELEASE_CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// `options` with the server-side time-outs that free what a vanished or silent client holds:
/// `statement_timeout` (a statement running longer is cancelled), and
/// `idle_in_transaction_session_timeout` (a session idle inside a transaction for longer is
/// ended, its locks released: a client whose socket went silent mid-transaction never sends its
/// commit or rollback), plus TCP keepalives from the server (`tcp_keepalives_*`,
/// `tcp_user_timeout`: about 11 s) so that PostgreSQL ends the session of a client whose host
/// or network vanished. Ignored on a Unix socket (the TCP ones).
pub fn with_session_timeouts(
    options: &PgConnectOptions,
    statement: Duration,
    idle_in_transaction: Duration,
) -> PgConnectOptions {
    let ms = |d: Duration| d.as_millis().max(1).to_string();
    options.clone().options([
        ("statement_timeout", ms(statement)),
        (
            "idle_in_transaction_session_timeout",
            ms(idle_in_transaction),
        ),
        ("tcp_keepalives_idle", "5".to_owned()),
        ("tcp_keepalives_interval", "2".to_owned()),
        ("tcp_keepalives_count", "3".to_owned()),
        ("tcp_user_timeout", "11000".to_owned()),
    ])
}

/// The help text every service gives `DB_STATEMENT_TIMEOUT`.
pub const STATEMENT_TIMEOUT_HELP: &str = "The longest a database statement may run (PostgreSQL's \
     statement_timeout for the service's sessions), and how long the service waits for one \
     database step (a statement, a commit) before it counts the connection as dead, closes it \
     and retries: a socket gone silent (a firewall, a NAT) must not hang a cycle. From 1s to \
     1h.";

/// `DB_STATEMENT_TIMEOUT`'s default.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Parses `DB_STATEMENT_TIMEOUT` (1 s to 1 h).
pub fn parse_statement_timeout(s: &str) -> Result<Duration, String> {
    let d = crate::config::parse_duration(s)?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
        return Err(format!("{s:?} must be between 1s and 1h"));
    }
    Ok(d)
}

/// How long a client waits for one database step under a statement time-out of `statement`:
/// a second more, so that PostgreSQL's own cancel (an error the caller can read) comes first
/// when the server is merely slow.
pub fn step_timeout(statement: Duration) -> Duration {
    statement + Duration::from_secs(1)
}

/// Why [`prepare`] failed.
#[derive(Debug, thiserror::Error)]
#[error("DATABASE_URL: {error:#}")]
pub struct PrepareError {
    /// True when the database could not be reached (worth waiting for); false for anything
    /// else (refused credentials, a failed migration): those need a person.
    pub unreachable: bool,
    error: anyhow::Error,
}

/// Creates the database if missing and runs `migrator` on it, over a connection of its own,
/// within [`CONNECT_TIMEOUT`].
pub async fn prepare(options: &PgConnectOptions, migrator: &Migrator) -> Result<(), PrepareError> {
    let attempt = async {
        create_database_if_missing(options)
            .await
            .map_err(|e| classify(e, "cannot reach PostgreSQL to create the database"))?;
        // A one-connection pool rather than a bare connection: `Migrator::run` on a pool is a
        // future that can move to another task (start-up may wait in a spawned one).
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(|e| classify(e.into(), "cannot connect to PostgreSQL"))?;
        let migrated = migrator.run(&pool).await;
        pool.close().await;
        migrated.map_err(|e| {
            let unreachable = match &e {
                MigrateError::Execute(e) | MigrateError::ExecuteMigration(e, _) => {
                    is_unavailable(e)
                }
                _ => false,
            };
            PrepareError {
                unreachable,
                error: anyhow::Error::new(e).context("running the migrations"),
            }
        })?;
        Ok(())
    };
    tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| {
            Err(PrepareError {
                unreachable: true,
                error: anyhow::anyhow!("PostgreSQL did not answer within {CONNECT_TIMEOUT:?}"),
            })
        })
}

/// [`prepare`] until it succeeds, retrying with `backoff` (capped, jittered) while the database
/// is unreachable and logging each retry (`database unreachable, retrying in 1.6s retry=3`).
/// Returns `Ok(false)` if shutdown came first, and an error for anything that waiting cannot fix.
pub async fn wait_until_prepared(
    options: &PgConnectOptions,
    migrator: &Migrator,
    mut backoff: Backoff,
    shutdown: &CancellationToken,
) -> anyhow::Result<bool> {
    loop {
        let result = tokio::select! {
            _ = shutdown.cancelled() => return Ok(false),
            r = prepare(options, migrator) => r,
        };
        match result {
            Ok(()) => {
                if backoff.failures() > 0 {
                    tracing::info!(
                        "database reachable again after {} retries",
                        backoff.failures()
                    );
                }
                return Ok(true);
            }
            Err(e) if e.unreachable => {
                let delay = backoff.next_delay();
                tracing::warn!(
                    error = %e,
                    retry = backoff.failures(),
                    "database unreachable, retrying in {delay:.1?} retry={}",
                    backoff.failures()
                );
                tokio::select! {
                    _ = shutdown.cancelled() => return Ok(false),
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn classify(e: anyhow::Error, what: &str) -> PrepareError {
    let unreachable = e.downcast_ref::<sqlx::Error>().is_some_and(is_unavailable);
    PrepareError {
        unreachable,
        error: e.context(what.to_owned()),
    }
}

async fn create_database_if_missing(options: &PgConnectOptions) -> anyhow::Result<()> {
    let Some(name) = options.get_database().map(str::to_owned) else {
        return Ok(());
    };
    // Connect to the maintenance database; the target may not exist yet.
    let mut conn: PgConnection = options.clone().database("postgres").connect().await?;
    let exists: bool =
        sqlx::query_scalar("select exists (select 1 from pg_database where datname = $1)")
            .bind(&name)
            .fetch_one(&mut conn)
            .await?;
    if !exists {
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        let create = format!("create database {quoted}");
        match sqlx::query(AssertSqlSafe(create)).execute(&mut conn).await {
            Ok(_) => tracing::info!(database = %name, "created database"),
            // Another instance created it between our check and our create.
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => {}
            Err(e) => return Err(e.into()),
        }
    }
    conn.close().await?;
    Ok(())
}

/// How a call that failed on the database is answered: an outage ([`is_unavailable`]) is
/// UNAVAILABLE (retry later), anything else INTERNAL; the detail is logged, never sent.
pub fn grpc_status(err: &sqlx::Error) -> tonic::Status {
    if is_unavailable(err) {
        tracing::warn!(error = %err, "database unavailable");
        tonic::Status::unavailable("database unavailable, retry later")
    } else {
        tracing::error!(error = %err, "database error");
        tonic::Status::internal("internal error")
    }
}

/// True for errors that mean "the database is unreachable right now" rather than a bad query:
/// callers map them to UNAVAILABLE and retry later.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    if is_certificate_failure(err) {
        return false;
    }
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => true,
        // The connection closed before the server answered sqlx's TLS request (sslmode=prefer
        // and up): sqlx reads the missing answer byte as 0x00.
        sqlx::Error::Protocol(m) => m.contains("unexpected response from SSLRequest: 0x00"),
        // Class 08: connection exception; 57P01..57P03: admin shutdown, crash shutdown, cannot
        // connect now (the server is starting or stopping); 55000 at connect: the database is
        // closed for maintenance (`alter database … allow_connections false`) and opens again.
        sqlx::Error::Database(e) => e.code().is_some_and(|c| {
            c.starts_with("08")
                || c.starts_with("57P")
                || (c == "55000" && e.message().contains("not currently accepting connections"))
        }),
        _ => false,
    }
}

/// True when `err` (or what it wraps) is a certificate that did not verify, on either side
/// (wrong CA, wrong host name, expired, a client certificate refused): waiting cannot fix it,
/// a person has to. rustls errors come wrapped in `io::Error`, whose `source()` skips them.
pub fn is_certificate_failure(err: &(dyn std::error::Error + 'static)) -> bool {
    use rustls::{AlertDescription as Alert, Error as Tls};
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            && is_certificate_failure(inner)
        {
            return true;
        }
        if let Some(tls) = e.downcast_ref::<Tls>() {
            return matches!(
                tls,
                Tls::InvalidCertificate(_)
                    | Tls::NoCertificatesPresented
                    | Tls::AlertReceived(
                        Alert::BadCertificate
                            | Alert::UnsupportedCertificate
                            | Alert::CertificateRevoked
                            | Alert::CertificateExpired
                            | Alert::CertificateUnknown
                            | Alert::UnknownCA
                            | Alert::CertificateRequired
                    )
            );
        }
        next = e.source();
    }
    false
}
