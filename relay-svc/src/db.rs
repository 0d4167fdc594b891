//! The relay's SQL: reading and deleting outbox rows, backlog figures, and the leader lock.
//!
//! The read rule lives in [`outbox_kit::outbox`]: read whatever rows are present in seq order,
//! delete exactly the confirmed seqs. Never a `seq > last` high-water mark, never `seq <= last`.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::error::Error;

/// The advisory-lock key the active relay holds (any 64-bit constant; "relay-svc" in ASCII).
/// Advisory locks are per database, so one leader per orders database.
pub const LEADER_LOCK_KEY: i64 = 0x72_656c_6179_7376;

/// One outbox row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OutboxRow {
    pub seq: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    /// An encoded `orders.events.v1.OrderPayload`.
    pub payload: Vec<u8>,
    pub traceparent: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// The oldest `limit` rows present. Rows that commit later with a smaller seq are simply found
/// by a later read; that is why there is no `where seq > $last`.
pub async fn fetch_batch(pool: &PgPool, limit: u32) -> Result<Vec<OutboxRow>, Error> {
    sqlx::query_as(
        "select seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at \
         from outbox order by seq limit $1",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(Error::from_db)
}

/// Deletes exactly the seqs the broker confirmed (and that no earlier failure of their order
/// holds back). Returns how many rows went away (fewer when another instance got there first).
pub async fn delete(pool: &PgPool, seqs: &[i64]) -> Result<u64, Error> {
    let done = sqlx::query("delete from outbox where seq = any($1)")
        .bind(seqs)
        .execute(pool)
        .await
        .map_err(Error::from_db)?;
    Ok(done.rows_affected())
}

/// Backlog figures: unsent rows and the creation time of the oldest one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub rows: u64,
    pub oldest: Option<DateTime<Utc>>,
}

/// Counts the outbox. The table is kept near empty (rows go as soon as they are confirmed), so
/// the count is cheap; under a large backlog the relay calls it at most once per cycle.
pub async fn backlog(pool: &PgPool) -> Result<Backlog, Error> {
    let (rows, oldest): (i64, Option<DateTime<Utc>>) =
        sqlx::query_as("select count(*), min(created_at) from outbox")
            .fetch_one(pool)
            .await
            .map_err(Error::from_db)?;
    Ok(Backlog {
        rows: u64::try_from(rows).unwrap_or(0),
        oldest,
    })
}

/// Tries to take the leader lock on `conn` without waiting. A session-level lock: it is held
/// for as long as this connection lives, and released by PostgreSQL the moment the session
/// ends, which is what lets a standby take over from a leader that crashed or lost the network.
pub async fn try_lock(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select pg_try_advisory_lock($1)")
        .bind(LEADER_LOCK_KEY)
        .fetch_one(conn)
        .await
}

/// Proves the lock connection (and therefore the lock) is still alive.
pub async fn ping(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("select 1").execute(conn).await.map(|_| ())
}
