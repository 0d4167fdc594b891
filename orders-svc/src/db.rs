//! Queries and migrations. The statements of the one write path (`crate::batch::apply`, for a
//! batch of one call as for a batch of many): [`lock_orders`], then the outbox crate's append,
//! then [`write_round`] per round — set-based, so that one transaction and a fixed number of round
//! trips serve any number of calls.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use outbox::{Appended, NewEvent, Outbox, trace::TraceHeaders};
use outbox_proto::orders::events::v1::{self as events, OrderPayload};
use prost::Message;
use sqlx::{PgPool, Postgres, Transaction};

use crate::{error::Error, order::Status};

/// The embedded migrations (the `orders` table and the `outbox`; 0003 brings the outbox to the
/// `outbox` crate's shape, 0006 gives the rows written before it their routing keys: relay-svc
/// waits for it).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// An order as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRow {
    pub id: i64,
    pub status: Status,
    pub customer_email: String,
    pub version: i64,
    pub last_event_seq: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What one `Upsert` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpsertOutcome {
    pub order: OrderRow,
    pub created: bool,
    /// The appended event's seq; `None` when the status was already the requested one.
    pub event_seq: Option<i64>,
}

type RawRow = (i64, String, String, i64, i64, DateTime<Utc>, DateTime<Utc>);
/// A [`RawRow`] after a "created by this statement" flag.
type FlaggedRawRow = (
    bool,
    i64,
    String,
    String,
    i64,
    i64,
    DateTime<Utc>,
    DateTime<Utc>,
);

const ORDER_COLUMNS: &str =
    "id, status, customer_email, version, last_event_seq, created_at, updated_at";

fn to_row(raw: RawRow) -> Result<OrderRow, Error> {
    let (id, status, customer_email, version, last_event_seq, created_at, updated_at) = raw;
    let status = Status::from_db(&status).ok_or_else(|| Error::Corrupt {
        id,
        reason: format!("unknown status {status:?}"),
    })?;
    Ok(OrderRow {
        id,
        status,
        customer_email,
        version,
        last_event_seq,
        created_at,
        updated_at,
    })
}

/// Reads one order.
pub async fn get_order(pool: &PgPool, id: i64) -> Result<OrderRow, Error> {
    let raw: Option<RawRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from orders where id = $1"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await?;
    to_row(raw.ok_or(Error::NotFound(id))?)
}

/// The outbox orders-svc appends to (table `outbox`, migrations 0001–0003).
pub fn outbox() -> &'static Outbox {
    static OUTBOX: LazyLock<Outbox> = LazyLock::new(|| {
        Outbox::new(outbox_kit::defaults::ORDERS_OUTBOX).expect("`outbox` is a valid table name")
    });
    &OUTBOX
}

/// The outbox event of an order change: its type, its routing key and its `OrderPayload`, in the
/// trace of the call that caused it (given explicitly: the group commit's writer appends for
/// many calls, none of whose spans is current there).
pub fn order_event(
    id: i64,
    event_type: &'static str,
    payload: &OrderPayload,
    trace: Option<&TraceHeaders>,
) -> NewEvent {
    let routing_key = events::routing_key(event_type).expect("an order event type");
    let event = NewEvent::new(
        events::AGGREGATE_TYPE,
        id,
        event_type,
        routing_key,
        payload.encode_to_vec(),
    );
    match trace {
        Some(trace) => event.trace(trace.clone()),
        None => event,
    }
}

/// Locks the orders a batch touches and reads them, in ONE statement. The rows are locked in id
/// order (`order by id` sits below the row locking), so two transactions locking overlapping sets
/// of orders (two writers, two replicas) wait for each other instead of deadlocking. Ids with no
/// row are left out: their creation is decided by the caller and raced on the primary key.
///
/// A row this version cannot read is returned as `Err(reason)` for its id, so that only the calls
/// on that order fail.
pub async fn lock_orders(
    tx: &mut Transaction<'_, Postgres>,
    ids: &[i64],
) -> Result<Vec<(i64, Result<OrderRow, String>)>, Error> {
    let raws: Vec<RawRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from orders where id = any($1) order by id for update"
    )))
    .bind(ids)
    .fetch_all(&mut **tx)
    .await?;
    Ok(raws
        .into_iter()
        .map(|raw| {
            let id = raw.0;
            let row = to_row(raw).map_err(|e| match e {
                Error::Corrupt { reason, .. } => reason,
                other => other.to_string(),
            });
            (id, row)
        })
        .collect())
}

/// One event of a [`write_round`]: a new order with its `OrderCreated`, or a status change of a
/// locked order with its `OrderStatusChanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventWrite {
    pub id: i64,
    pub status: Status,
    /// Set for a creation (the new order's email), `None` for a change.
    pub create_email: Option<String>,
    /// The outbox event (its chain position is decided by the outbox crate at append).
    pub event: NewEvent,
}

/// The order rows a round wrote, per order, and whether each was created by it. `None` when a
/// concurrent creator won the race for one of the round's new orders: the caller must roll back
/// and go again (the row exists then).
pub type RoundRows = Option<Vec<(bool, OrderRow)>>;

/// Writes the orders of one round, in ONE statement: the new orders with one `insert`, the
/// changed orders with one `update`, each with its event as `appended` (same index) by
/// [`outbox()`]. Each order appears at most once per round (its next event is in the next round).
/// The changed orders must be locked by [`lock_orders`] in the same transaction.
pub async fn write_round(
    tx: &mut Transaction<'_, Postgres>,
    events: &[EventWrite],
    appended: &[Appended],
) -> Result<RoundRows, Error> {
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    let seqs: Vec<i64> = appended.iter().map(|a| a.seq).collect();
    let ats: Vec<DateTime<Utc>> = appended.iter().map(|a| a.created_at).collect();
    let statuses: Vec<&str> = events.iter().map(|e| e.status.as_str()).collect();
    let emails: Vec<&str> = events
        .iter()
        .map(|e| e.create_email.as_deref().unwrap_or(""))
        .collect();
    let creates: Vec<bool> = events.iter().map(|e| e.create_email.is_some()).collect();
    // `on conflict do nothing` waits for a concurrent creator of the same order to finish and then
    // skips the row; the caller sees fewer created rows than it asked for and starts over.
    let raws: Vec<FlaggedRawRow> = sqlx::query_as(
        "with w as (
             select * from unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::text[],
                                  $5::text[], $6::bool[])
                    as w(id, seq, ev_at, status, email, is_new)
         ),
         created as (
             insert into orders (id, status, customer_email, version, last_event_seq,
                                 created_at, updated_at)
             select w.id, w.status, w.email, 1, w.seq, w.ev_at, w.ev_at from w where w.is_new
             -- In id order, like the row locks: two batches creating the same orders
             -- wait for each other instead of deadlocking.
             order by w.id
             on conflict (id) do nothing
             returning id, status, customer_email, version, last_event_seq, created_at,
                       updated_at
         ),
         changed as (
             update orders o
                set status = w.status, version = o.version + 1, last_event_seq = w.seq,
                    updated_at = w.ev_at
               from w
              where not w.is_new and o.id = w.id
             returning o.id, o.status, o.customer_email, o.version, o.last_event_seq,
                       o.created_at, o.updated_at
         )
         select true, * from created
         union all
         select false, * from changed",
    )
    .bind(&ids)
    .bind(&seqs)
    .bind(&ats)
    .bind(&statuses)
    .bind(&emails)
    .bind(&creates)
    .fetch_all(&mut **tx)
    .await?;
    if raws.len() < events.len() {
        return Ok(None);
    }
    let mut rows = Vec::with_capacity(raws.len());
    for (created, id, status, email, version, last, created_at, updated_at) in raws {
        let row = to_row((id, status, email, version, last, created_at, updated_at))?;
        rows.push((created, row));
    }
    Ok(Some(rows))
}

/// Wakes the relay: `NOTIFY` on the outbox channel, delivered when `executor`'s transaction
/// commits (at once for a pool). See [`crate::wake`] for when.
pub async fn notify_relay<'c>(executor: impl sqlx::PgExecutor<'c>) -> Result<(), sqlx::Error> {
    outbox().notify(executor).await
}

#[cfg(test)]
mod tests {
    /// Migration 0003 adopts the old outbox with the crate's own heads trigger: if the crate's
    /// trigger changes, orders-svc needs a new migration, never an edited one.
    #[test]
    fn migration_0003_installs_the_crates_heads_trigger() {
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let migration = squash(include_str!("../migrations/0003_outbox_crate.sql"));
        let trigger = squash(&super::outbox().table().heads_trigger_sql());
        assert!(migration.contains(&trigger), "{trigger}");
    }

    /// Migration 0005 is the crate's second migration (the relay's read floor) for `outbox`.
    #[test]
    fn migration_0005_is_the_crates_read_floor() {
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let migration = squash(include_str!("../migrations/0005_outbox_read_floor.sql"));
        let floor = squash(&super::outbox().table().read_floor_sql());
        assert!(migration.contains(&floor), "{floor}");
    }

    /// Migration 0007 is the crate's third migration (the published rows) for `outbox`.
    #[test]
    fn migration_0007_is_the_crates_published_rows() {
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let migration = squash(include_str!("../migrations/0007_outbox_published.sql"));
        let published = squash(&super::outbox().table().published_sql());
        assert!(migration.contains(&published), "{published}");
    }
}
