//! Queries and migrations. Every statement of the per-event transaction (see [`crate::process`])
//! and of the mailer lives here.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

/// The embedded migrations (watermarks, held events, mails, counters).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Counter names in the `counters` table.
pub const SKIPPED: &str = "skipped";
pub const DEAD_LETTERED: &str = "dead_lettered";

/// Serialises every transaction that touches `order_id` (across all instances) until commit:
/// the watermark read, the hold/process decision and the watermark write must not interleave
/// with another delivery of the same order. A transaction-scoped advisory lock also covers an
/// order that has no `order_progress` row yet (a `for update` would lock nothing).
pub async fn lock_order(conn: &mut PgConnection, order_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("select pg_advisory_xact_lock($1)")
        .bind(order_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The seq of the order's last processed event.
pub async fn watermark(conn: &mut PgConnection, order_id: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("select last_seq from order_progress where order_id = $1")
        .bind(order_id)
        .fetch_optional(conn)
        .await
}

/// Moves the order's watermark to `seq`.
pub async fn set_watermark(
    conn: &mut PgConnection,
    order_id: i64,
    seq: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into order_progress (order_id, last_seq) values ($1, $2)
         on conflict (order_id) do update set last_seq = excluded.last_seq",
    )
    .bind(order_id)
    .bind(seq)
    .execute(conn)
    .await?;
    Ok(())
}

/// Holds an event until its predecessor is processed. False when it is held already (a
/// duplicate delivery of a held event).
pub async fn hold(
    conn: &mut PgConnection,
    seq: i64,
    order_id: i64,
    prev_seq: i64,
    event: &[u8],
    traceparent: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "insert into held_events (seq, order_id, prev_seq, event, traceparent)
         values ($1, $2, $3, $4, $5)
         on conflict (seq) do nothing",
    )
    .bind(seq)
    .bind(order_id)
    .bind(prev_seq)
    .bind(event)
    .bind(traceparent)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes and returns the held successor of `prev_seq` in the order (the lowest seq if a faulty
/// producer forked the chain): its encoded event and traceparent.
pub async fn take_successor(
    conn: &mut PgConnection,
    order_id: i64,
    prev_seq: i64,
) -> Result<Option<(Vec<u8>, Option<String>)>, sqlx::Error> {
    sqlx::query_as(
        "delete from held_events
          where seq = (select seq from held_events
                        where order_id = $1 and prev_seq = $2
                        order by seq limit 1)
         returning event, traceparent",
    )
    .bind(order_id)
    .bind(prev_seq)
    .fetch_optional(conn)
    .await
}

/// A mail to queue.
#[derive(Debug, Clone)]
pub struct NewMail<'a> {
    pub seq: i64,
    pub order_id: i64,
    pub event_type: &'a str,
    pub recipient: &'a str,
    pub subject: &'a str,
    pub body: &'a str,
    pub idempotency_key: &'a str,
    pub traceparent: Option<&'a str>,
}

/// Queues a mail. The watermark guarantees a seq is processed once, so a conflict here means the
/// seq was reused by another order (a broken producer): the first mail stands.
pub async fn insert_mail(conn: &mut PgConnection, m: &NewMail<'_>) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "insert into mails (seq, order_id, event_type, recipient, subject, body, idempotency_key,
                            traceparent)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict do nothing",
    )
    .bind(m.seq)
    .bind(m.order_id)
    .bind(m.event_type)
    .bind(m.recipient)
    .bind(m.subject)
    .bind(m.body)
    .bind(m.idempotency_key)
    .bind(m.traceparent)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

// ---------------------------------------------------------------------------------------------
// The batch transaction (see `crate::process::apply_batch`): one statement per kind of write.

/// Takes the advisory locks of `order_ids` (see [`lock_order`]) in ONE statement. `order_ids` must
/// be sorted and distinct: the function scan over the array yields its elements in array order,
/// so every transaction takes its locks in ascending order and two batches that share orders
/// (on this or another instance) wait for each other instead of deadlocking.
pub async fn lock_orders(conn: &mut PgConnection, order_ids: &[i64]) -> Result<(), sqlx::Error> {
    debug_assert!(order_ids.windows(2).all(|w| w[0] < w[1]));
    sqlx::query("select count(pg_advisory_xact_lock(id)) from unnest($1::bigint[]) as t(id)")
        .bind(order_ids)
        .execute(conn)
        .await?;
    Ok(())
}

/// What a batch finds for its orders once they are locked, read in ONE statement (one snapshot,
/// taken after the locks): each order's watermark and its held events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrdersState {
    /// Orders without a watermark are absent.
    pub watermarks: HashMap<i64, i64>,
    /// Held events by order.
    pub held: HashMap<i64, Vec<HeldRow>>,
}

/// Reads [`OrdersState`] for `order_ids` (locked by [`lock_orders`] in the same transaction).
pub async fn orders_state(
    conn: &mut PgConnection,
    order_ids: &[i64],
) -> Result<OrdersState, sqlx::Error> {
    type Row = (
        i64,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<Vec<u8>>,
        Option<String>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "select o.id, p.last_seq, h.seq, h.prev_seq, h.event, h.traceparent
           from unnest($1::bigint[]) as o(id)
           left join order_progress p on p.order_id = o.id
           left join held_events h on h.order_id = o.id",
    )
    .bind(order_ids)
    .fetch_all(conn)
    .await?;
    let mut state = OrdersState::default();
    for (order_id, last_seq, seq, prev_seq, event, traceparent) in rows {
        if let Some(w) = last_seq {
            state.watermarks.insert(order_id, w);
        }
        if let (Some(seq), Some(prev_seq), Some(event)) = (seq, prev_seq, event) {
            state.held.entry(order_id).or_default().push(HeldRow {
                seq,
                order_id,
                prev_seq,
                event,
                traceparent,
            });
        }
    }
    Ok(state)
}

/// A held event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRow {
    pub seq: i64,
    pub order_id: i64,
    pub prev_seq: i64,
    pub event: Vec<u8>,
    pub traceparent: Option<String>,
}

/// An event to hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewHold {
    pub seq: i64,
    pub order_id: i64,
    pub prev_seq: i64,
    pub event: Vec<u8>,
    pub traceparent: Option<String>,
}

/// A mail to queue, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedMail {
    pub seq: i64,
    pub order_id: i64,
    pub event_type: &'static str,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub idempotency_key: String,
    pub traceparent: Option<String>,
}

/// Everything a batch writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchWrites {
    /// In chain order per order.
    pub mails: Vec<OwnedMail>,
    pub holds: Vec<NewHold>,
    /// Stored held events the batch released.
    pub released: Vec<i64>,
    /// Distinct orders whose watermark moves, and where to.
    pub watermark_orders: Vec<i64>,
    pub watermark_seqs: Vec<i64>,
    /// Duplicates found (this instance's `skipped` counter).
    pub skipped: i64,
}

/// Writes a batch in ONE statement (data-modifying CTEs, one round trip): deletes the released
/// held events, queues the mails (see [`insert_mail`]), holds the waiting events (see [`hold`]),
/// moves the watermarks and adds to this instance's skip counter. Returns the seqs of the holds
/// actually stored (a seq held already is not stored again).
///
/// The mails are inserted in slice order: `position` is an identity taken row by row, and the
/// `order by` on the array position makes the rows arrive in that order, so an order's mails
/// keep their chain order in `position`. The CTEs touch disjoint rows (a released seq is never
/// held again: a later delivery of it is a duplicate), so sharing one snapshot changes nothing.
pub async fn write_batch(
    conn: &mut PgConnection,
    instance: &str,
    w: &BatchWrites,
) -> Result<Vec<i64>, sqlx::Error> {
    let mail_col = |f: fn(&OwnedMail) -> &str| w.mails.iter().map(f).collect::<Vec<&str>>();
    let mail_seqs: Vec<i64> = w.mails.iter().map(|m| m.seq).collect();
    let mail_orders: Vec<i64> = w.mails.iter().map(|m| m.order_id).collect();
    let mail_tps: Vec<Option<&str>> = w.mails.iter().map(|m| m.traceparent.as_deref()).collect();
    let hold_seqs: Vec<i64> = w.holds.iter().map(|h| h.seq).collect();
    let hold_orders: Vec<i64> = w.holds.iter().map(|h| h.order_id).collect();
    let hold_prevs: Vec<i64> = w.holds.iter().map(|h| h.prev_seq).collect();
    let hold_events: Vec<&[u8]> = w.holds.iter().map(|h| h.event.as_slice()).collect();
    let hold_tps: Vec<Option<&str>> = w.holds.iter().map(|h| h.traceparent.as_deref()).collect();
    sqlx::query_scalar(
        "with released as (
           delete from held_events where seq = any($1)
         ),
         queued as (
           insert into mails (seq, order_id, event_type, recipient, subject, body,
                              idempotency_key, traceparent)
           select seq, order_id, event_type, recipient, subject, body, idempotency_key,
                  traceparent
             from unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[],
                         $7::text[], $8::text[], $9::text[])
                  with ordinality
                  as t(seq, order_id, event_type, recipient, subject, body, idempotency_key,
                       traceparent, n)
            order by n
           on conflict do nothing
         ),
         moved as (
           insert into order_progress (order_id, last_seq)
           select * from unnest($10::bigint[], $11::bigint[])
           on conflict (order_id) do update set last_seq = excluded.last_seq
         ),
         counted as (
           insert into counters (name, instance, value)
           select $17, $18, $19 where $19 > 0
           on conflict (name, instance) do update set value = counters.value + excluded.value
         ),
         held as (
           insert into held_events (seq, order_id, prev_seq, event, traceparent)
           select * from unnest($12::bigint[], $13::bigint[], $14::bigint[], $15::bytea[],
                                $16::text[])
           on conflict (seq) do nothing
           returning seq
         )
         select seq from held",
    )
    .bind(&w.released)
    .bind(&mail_seqs)
    .bind(&mail_orders)
    .bind(mail_col(|m| m.event_type))
    .bind(mail_col(|m| &m.recipient))
    .bind(mail_col(|m| &m.subject))
    .bind(mail_col(|m| &m.body))
    .bind(mail_col(|m| &m.idempotency_key))
    .bind(&mail_tps)
    .bind(&w.watermark_orders)
    .bind(&w.watermark_seqs)
    .bind(&hold_seqs)
    .bind(&hold_orders)
    .bind(&hold_prevs)
    .bind(&hold_events)
    .bind(&hold_tps)
    .bind(SKIPPED)
    .bind(instance)
    .bind(w.skipped)
    .fetch_all(conn)
    .await
}

/// Adds `n` to this instance's row of counter `name`. Only this instance writes the row, so the
/// update never waits for another instance.
pub async fn bump(
    conn: &mut PgConnection,
    instance: &str,
    name: &str,
    n: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into counters (name, instance, value) values ($1, $2, $3)
         on conflict (name, instance) do update set value = counters.value + excluded.value",
    )
    .bind(name)
    .bind(instance)
    .bind(n)
    .execute(conn)
    .await?;
    Ok(())
}

/// A mail as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MailRow {
    pub seq: i64,
    pub order_id: i64,
    pub event_type: String,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub idempotency_key: String,
    pub traceparent: Option<String>,
    pub queued_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    /// The latest rejection: why the server refused it for good (failed), or why the last
    /// attempt was deferred (kept once the mail is sent).
    pub last_error: Option<String>,
    /// Deliveries the server answered: each deferral, and the final acceptance or rejection.
    pub attempts: i32,
    /// When a deferred mail is due again (`None`: due now).
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// The columns of [`MailRow`], in its order.
const MAIL_COLUMNS: &str = "seq, order_id, event_type, recipient, subject, body, idempotency_key, \
                            traceparent, queued_at, sent_at, failed_at, last_error, attempts, \
                            next_attempt_at";

/// The order's mails in the order they were queued (see migration 0002), which is the order the
/// mailer sends them in.
pub async fn list_mails(pool: &PgPool, order_id: i64) -> Result<Vec<MailRow>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {MAIL_COLUMNS} from mails where order_id = $1 order by position"
    )))
    .bind(order_id)
    .fetch_all(pool)
    .await
}

/// Claims up to `limit` mails to deliver, locked until `conn`'s transaction ends: unsent mails
/// that are due (not deferred to a later `next_attempt_at`) and whose order has no earlier unsent
/// mail (so at most one per order, its earliest), lowest seq first. `skip locked` lets several
/// mailers work side by side; the `not exists` keeps each order's mails in order even then (while
/// one mailer holds an order's earliest mail, or while that mail waits for its next attempt, the
/// order's later mails are not eligible for anyone). A deferred mail is not due, so the claim
/// passes over it to every other order's mails.
pub async fn claim_batch(conn: &mut PgConnection, limit: i64) -> Result<Vec<MailRow>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {MAIL_COLUMNS}
           from mails m
          where sent_at is null and failed_at is null
            and (next_attempt_at is null or next_attempt_at <= now())
            and not exists (select 1 from mails p
                             where p.order_id = m.order_id and p.seq < m.seq
                               and p.sent_at is null and p.failed_at is null)
          order by seq
          limit $1
          for update skip locked"
    )))
    .bind(limit)
    .fetch_all(conn)
    .await
}

/// Marks claimed mails delivered in one statement. A deferred mail keeps its last error (why it
/// was late).
pub async fn mark_all_sent(conn: &mut PgConnection, seqs: &[i64]) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set sent_at = clock_timestamp(), attempts = attempts + 1,
                          next_attempt_at = null
          where seq = any($1)",
    )
    .bind(seqs)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a claimed mail rejected for good by the server (it will not be retried).
pub async fn mark_failed(
    conn: &mut PgConnection,
    seq: i64,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set failed_at = clock_timestamp(), last_error = $2, attempts = attempts + 1,
                          next_attempt_at = null
          where seq = $1",
    )
    .bind(seq)
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}

/// Defers a claimed mail that the server rejected for now: it is due again `delay` from now (the
/// database's clock, which every instance's claim reads). Committed like a delivery, so the
/// claim passes over the mail until then.
pub async fn mark_deferred(
    conn: &mut PgConnection,
    seq: i64,
    error: &str,
    delay: std::time::Duration,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set attempts = attempts + 1, last_error = $2,
                          next_attempt_at = clock_timestamp() + $3 * interval '1 millisecond'
          where seq = $1",
    )
    .bind(seq)
    .bind(error)
    .bind(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX) as f64)
    .execute(conn)
    .await?;
    Ok(())
}

/// The numbers behind `GetStatus` and the gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub processed: i64,
    pub skipped: i64,
    pub held: i64,
    pub dead_lettered: i64,
    pub oldest_held_age_ms: i64,
    pub unsent: i64,
}

/// Reads every count in one statement (one snapshot).
pub async fn stats(pool: &PgPool) -> Result<Stats, sqlx::Error> {
    let (processed, skipped, held, dead_lettered, oldest_held_age_ms, unsent): (
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = sqlx::query_as(
        "select (select count(*) from mails),
                (select coalesce(sum(value), 0)::bigint from counters where name = $1),
                (select count(*) from held_events),
                (select coalesce(sum(value), 0)::bigint from counters where name = $2),
                (select coalesce((extract(epoch from now() - min(held_at)) * 1000)::bigint, 0)
                   from held_events),
                (select count(*) from mails where sent_at is null and failed_at is null)",
    )
    .bind(SKIPPED)
    .bind(DEAD_LETTERED)
    .fetch_one(pool)
    .await?;
    Ok(Stats {
        processed,
        skipped,
        held,
        dead_lettered,
        oldest_held_age_ms,
        unsent,
    })
}

/// The oldest held event: seq, order, the seq it waits for, and its age in ms.
pub async fn oldest_held(pool: &PgPool) -> Result<Option<(i64, i64, i64, i64)>, sqlx::Error> {
    sqlx::query_as(
        "select seq, order_id, prev_seq,
                (extract(epoch from now() - held_at) * 1000)::bigint
           from held_events order by held_at, seq limit 1",
    )
    .fetch_optional(pool)
    .await
}
