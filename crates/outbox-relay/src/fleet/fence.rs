//! The fencing token inside each outbox database: one row (`T_fence`, beside the outbox table
//! `T`) holding the epoch of the lease its current owner claimed in the registry.
//!
//! A lease alone cannot stop an instance that was frozen (SIGSTOP, a stalled VM) past its
//! lease: when it wakes, it may still be in the middle of a delete. So every effect a fleet
//! relay has on the outbox — the delete of a confirmed batch, a move to quarantine (the
//! relay's statements, `db::Queries::fenced`) — checks the fence row IN THE SAME
//! STATEMENT, under a `for share` lock of it, and changes nothing unless the row still holds the
//! relay's epoch. A new owner [`take`]s the fence before it reads anything: the take waits for
//! an older owner's fenced statement in flight (bounded by `lock_timeout`), and every fenced
//! statement that starts after it finds a newer epoch and reports
//! [`Error::Fenced`].

use std::time::Duration;

use outbox::TableName;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

use crate::error::Error;

/// How long a [`take`] waits for an older owner's fenced statement in flight.
pub const TAKE_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// The fence table of the outbox `table`: `T_fence` in the outbox's schema.
pub fn table(table: &TableName) -> String {
    format!("{}_fence", table.events())
}

/// Sets the fence of the outbox `outbox` on `conn` to `epoch` if it holds a lower one (or
/// none), creating the table if missing. Waits for an older owner's fenced statement in flight;
/// fails with [`Error::Fenced`] when a higher epoch is there already (a newer owner took it).
pub async fn take(conn: &mut PgConnection, outbox: &TableName, epoch: i64) -> Result<(), Error> {
    let fence = table(outbox);
    // Created by its first owner rather than by the writer's migration: a fleet adds databases
    // whose writers know nothing of it. `if not exists` can still race another owner's create
    // (a unique violation on the catalog): then it exists, which is all we need.
    let create = format!(
        "create table if not exists {fence} (\
           id boolean primary key default true check (id), \
           epoch bigint not null)"
    );
    if let Err(e) = sqlx::query(AssertSqlSafe(create)).execute(&mut *conn).await {
        let raced = matches!(&e, sqlx::Error::Database(d)
            if matches!(d.code().as_deref(), Some("23505" | "42P07")));
        if !raced {
            return Err(Error::from_db(e));
        }
    }
    let mut tx = conn.begin().await.map_err(Error::from_db)?;
    sqlx::query(AssertSqlSafe(format!(
        "set local lock_timeout = {}",
        TAKE_LOCK_TIMEOUT.as_millis()
    )))
    .execute(&mut *tx)
    .await
    .map_err(Error::from_db)?;
    // Taking the same epoch again (a reconnect of the same owner) is no change.
    let held: Option<i64> = sqlx::query_scalar(AssertSqlSafe(format!(
        "insert into {fence} (id, epoch) values (true, $1) \
         on conflict (id) do update set epoch = excluded.epoch \
          where {fence}.epoch <= excluded.epoch \
         returning epoch"
    )))
    .bind(epoch)
    .fetch_optional(&mut *tx)
    .await
    .map_err(Error::from_db)?;
    tx.commit().await.map_err(Error::from_db)?;
    match held {
        Some(_) => Ok(()),
        None => Err(Error::Fenced { epoch }),
    }
}

/// The epoch the fence of `outbox` holds (`None`: no owner took it yet).
pub async fn current(conn: &mut PgConnection, outbox: &TableName) -> Result<Option<i64>, Error> {
    let sql = format!("select epoch from {}", table(outbox));
    match sqlx::query_scalar(AssertSqlSafe(sql))
        .fetch_optional(conn)
        .await
        .map_err(Error::from_db)
    {
        Err(Error::OutboxMissing) => Ok(None),
        other => other,
    }
}
