//! PostgreSQL bootstrap: each service owns a database, creates it when missing, then migrates.

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use sqlx::{
    AssertSqlSafe, ConnectOptions, Connection, PgPool,
    postgres::{PgConnectOptions, PgConnection, PgPoolOptions},
};

/// Parses `url`, creates its database if it does not exist yet, and opens a pool of at most
/// `max_connections`. Errors name `DATABASE_URL`, the setting an operator has to fix.
pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<PgPool> {
    let options = PgConnectOptions::from_str(url)
        .with_context(|| format!("DATABASE_URL is not a valid PostgreSQL URL: {url}"))?;
    create_database_if_missing(&options)
        .await
        .context("DATABASE_URL: cannot reach PostgreSQL to create the database")?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        // A query waits this long for a pooled connection while the database is away; then the
        // caller sees an error (UNAVAILABLE on gRPC) instead of hanging.
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options)
        .await
        .context("DATABASE_URL: cannot connect to PostgreSQL")
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

/// True for errors that mean "the database is unreachable right now" rather than a bad query:
/// callers map them to UNAVAILABLE and retry later.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => true,
        // Class 08: connection exception; 57P01..57P03: admin shutdown, crash shutdown, cannot
        // connect now (the server is starting or stopping).
        sqlx::Error::Database(e) => e
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}
