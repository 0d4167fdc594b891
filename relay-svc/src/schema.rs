//! The orders-svc schema this relay needs, and waiting for it at startup.
//!
//! relay-svc publishes every row with the relay library's default encoding, which needs the
//! row's routing key: orders-svc's migration 0006 gave the rows of the first orders outbox
//! theirs, and a relay reading the outbox before that migration committed would quarantine them
//! ("no routing key"). Its delete moves each published row into `outbox_published`, which
//! orders-svc's migration 0007 creates. So each database's relay starts only once orders-svc's
//! `_sqlx_migrations` records migration [`NEEDED_MIGRATION`] as applied (migrations apply in
//! order: 0006 is in too). Meanwhile the relay takes no leader lock (an older relay keeps
//! publishing), health is NOT_SERVING with the reason, and the wait is logged
//! (`relay: waiting for orders-svc migration 7 (schema at 5) retry=3`).

use std::time::Duration;

use outbox_support::backoff::Backoff;
use sqlx::{
    Connection, PgPool,
    postgres::{PgConnectOptions, PgConnection},
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The orders-svc migration relay-svc needs: 0007, the published rows (after 0006, the routing
/// keys of the first orders outbox).
pub const NEEDED_MIGRATION: i64 = 7;
/// While it waits, the relay looks again at least this often.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// How long one look may take before it counts as failed.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Where one database's orders-svc schema stands, as the relay last read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schema {
    /// Not read yet, or the read failed (why).
    Unknown(String),
    /// orders-svc's latest applied migration (0: none yet) does not include
    /// [`NEEDED_MIGRATION`].
    Behind(i64),
    /// [`NEEDED_MIGRATION`] is applied: the relay runs.
    Ready,
}

impl Schema {
    /// Why the relay is not running yet; `None` once it is ready.
    pub fn waiting(&self) -> Option<String> {
        match self {
            Schema::Ready => None,
            Schema::Unknown(why) => Some(format!("orders-svc schema not read yet: {why}")),
            Schema::Behind(at) => Some(format!(
                "orders-svc schema at migration {at}, waiting for migration {NEEDED_MIGRATION}"
            )),
        }
    }
}

/// The schema of the database `options` point at: [`Schema::Ready`] when orders-svc's
/// [`NEEDED_MIGRATION`] is applied (successfully: sqlx records a migration that ran outside a
/// transaction and failed with `success = false`), else its latest applied migration. Over a
/// connection of its own, not the relay's pool: a database that refuses connections answers at
/// once, where the pool would keep trying for its acquire time-out.
pub async fn read(options: &PgConnectOptions) -> Result<Schema, sqlx::Error> {
    let mut conn = PgConnection::connect_with(options).await?;
    let row: Result<(i64, bool), _> = sqlx::query_as(
        "select coalesce(max(version) filter (where success), 0),
                coalesce(bool_or(version = $1 and success), false)
           from _sqlx_migrations",
    )
    .bind(NEEDED_MIGRATION)
    .fetch_one(&mut conn)
    .await;
    let _ = conn.close().await;
    match row {
        Ok((_, true)) => Ok(Schema::Ready),
        Ok((latest, false)) => Ok(Schema::Behind(latest)),
        // No migrations table: orders-svc has not migrated this database at all.
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P01") => {
            Ok(Schema::Behind(0))
        }
        Err(e) => Err(e),
    }
}

/// Reads the schema until it is [`Schema::Ready`], publishing each answer to `state` and
/// looking again after `backoff`'s delay (at most 5 s); `database` names the setting
/// the pool's database came from, for the log. Returns false if shutdown came first.
pub async fn wait_until_ready(
    pool: &PgPool,
    database: &str,
    state: &watch::Sender<Schema>,
    mut backoff: Backoff,
    shutdown: &CancellationToken,
) -> bool {
    let options = pool.connect_options();
    loop {
        let schema = tokio::select! {
            _ = shutdown.cancelled() => return false,
            r = tokio::time::timeout(READ_TIMEOUT, read(&options)) => match r {
                Ok(Ok(schema)) => schema,
                Ok(Err(e)) => Schema::Unknown(e.to_string()),
                Err(_) => Schema::Unknown(format!("no answer within {READ_TIMEOUT:?}")),
            },
        };
        let Some(why) = schema.waiting() else {
            tracing::info!(
                database,
                "relay: orders-svc schema has migration {NEEDED_MIGRATION}, starting the relay"
            );
            state.send_replace(schema);
            return true;
        };
        let at = match &schema {
            Schema::Behind(at) => at.to_string(),
            _ => "unknown".to_owned(),
        };
        state.send_replace(schema);
        let delay = backoff.next_delay().min(MAX_WAIT);
        let retry = backoff.failures();
        tracing::warn!(
            database,
            retry,
            reason = %why,
            "relay: waiting for orders-svc migration {NEEDED_MIGRATION} (schema at {at}) retry={retry}"
        );
        tokio::select! {
            _ = shutdown.cancelled() => return false,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_ready_schema_lets_the_relay_run() {
        assert_eq!(Schema::Ready.waiting(), None);
        assert_eq!(
            Schema::Behind(5).waiting().as_deref(),
            Some("orders-svc schema at migration 5, waiting for migration 7")
        );
        let unknown = Schema::Unknown("connection refused".into()).waiting();
        assert!(
            unknown.is_some_and(|w| w.contains("connection refused")),
            "the reason is kept"
        );
    }
}
