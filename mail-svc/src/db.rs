//! Queries and migrations. Every statement of the per-event transaction (see [`crate::process`])
//! and of the mailer lives here.

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

/// The watermarks of `order_ids` (orders without one are absent).
pub async fn watermarks(
    conn: &mut PgConnection,
    order_ids: &[i64],
) -> Result<Vec<(i64, i64)>, sqlx::Error> {
    sqlx::query_as("select order_id, last_seq from order_progress where order_id = any($1)")
        .bind(order_ids)
        .fetch_all(conn)
        .await
}

/// A held event as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HeldRow {
    pub seq: i64,
    pub order_id: i64,
    pub prev_seq: i64,
    pub event: Vec<u8>,
    pub traceparent: Option<String>,
}

/// Every held event of `order_ids`, lowest seq first.
pub async fn held_of(
    conn: &mut PgConnection,
    order_ids: &[i64],
) -> Result<Vec<HeldRow>, sqlx::Error> {
    sqlx::query_as(
        "select seq, order_id, prev_seq, event, traceparent from held_events
          where order_id = any($1) order by seq",
    )
    .bind(order_ids)
    .fetch_all(conn)
    .await
}

/// Deletes released held events.
pub async fn unhold(conn: &mut PgConnection, seqs: &[i64]) -> Result<(), sqlx::Error> {
    sqlx::query("delete from held_events where seq = any($1)")
        .bind(seqs)
        .execute(conn)
        .await?;
    Ok(())
}

/// Holds events (see [`hold`]) in one statement; returns the seqs actually stored (a seq already
/// held is not stored again).
pub async fn hold_all(conn: &mut PgConnection, holds: &[NewHold]) -> Result<Vec<i64>, sqlx::Error> {
    let seqs: Vec<i64> = holds.iter().map(|h| h.seq).collect();
    let orders: Vec<i64> = holds.iter().map(|h| h.order_id).collect();
    let prevs: Vec<i64> = holds.iter().map(|h| h.prev_seq).collect();
    let events: Vec<&[u8]> = holds.iter().map(|h| h.event.as_slice()).collect();
    let tps: Vec<Option<&str>> = holds.iter().map(|h| h.traceparent.as_deref()).collect();
    sqlx::query_scalar(
        "insert into held_events (seq, order_id, prev_seq, event, traceparent)
         select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bytea[], $5::text[])
         on conflict (seq) do nothing
         returning seq",
    )
    .bind(&seqs)
    .bind(&orders)
    .bind(&prevs)
    .bind(&events)
    .bind(&tps)
    .fetch_all(conn)
    .await
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

/// A mail to queue, owned (for [`insert_mails`]).
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

/// Queues mails (see [`insert_mail`]) in one statement, in slice order: `position` is an identity
/// taken row by row, and the `order by` on the array position makes the rows arrive in that order,
/// so an order's mails keep their chain order in `position`.
pub async fn insert_mails(conn: &mut PgConnection, mails: &[OwnedMail]) -> Result<(), sqlx::Error> {
    let col = |f: fn(&OwnedMail) -> &str| mails.iter().map(f).collect::<Vec<&str>>();
    let seqs: Vec<i64> = mails.iter().map(|m| m.seq).collect();
    let orders: Vec<i64> = mails.iter().map(|m| m.order_id).collect();
    let tps: Vec<Option<&str>> = mails.iter().map(|m| m.traceparent.as_deref()).collect();
    sqlx::query(
        "insert into mails (seq, order_id, event_type, recipient, subject, body, idempotency_key,
                            traceparent)
         select seq, order_id, event_type, recipient, subject, body, idempotency_key, traceparent
           from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::text[], $8::text[])
                with ordinality
                as t(seq, order_id, event_type, recipient, subject, body, idempotency_key,
                     traceparent, n)
          order by n
         on conflict do nothing",
    )
    .bind(&seqs)
    .bind(&orders)
    .bind(col(|m| m.event_type))
    .bind(col(|m| &m.recipient))
    .bind(col(|m| &m.subject))
    .bind(col(|m| &m.body))
    .bind(col(|m| &m.idempotency_key))
    .bind(&tps)
    .execute(conn)
    .await?;
    Ok(())
}

/// Moves several orders' watermarks in one statement (`order_ids` distinct).
pub async fn set_watermarks(
    conn: &mut PgConnection,
    order_ids: &[i64],
    seqs: &[i64],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into order_progress (order_id, last_seq)
         select * from unnest($1::bigint[], $2::bigint[])
         on conflict (order_id) do update set last_seq = excluded.last_seq",
    )
    .bind(order_ids)
    .bind(seqs)
    .execute(conn)
    .await?;
    Ok(())
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

/// Claims the next mail to deliver, locked until `conn`'s transaction ends: the lowest-seq unsent
/// mail that is due (not deferred to a later `next_attempt_at`) and whose order has no earlier
/// unsent mail. `skip locked` lets several mailers work side by side; the `not exists` keeps each
/// order's mails in order even then (while one mailer holds an order's earliest mail, or while that
/// mail waits for its next attempt, the order's later mails are not eligible for anyone). A
/// deferred mail is not due, so the claim passes over it to every other order's mails.
pub async fn claim_next(conn: &mut PgConnection) -> Result<Option<MailRow>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {MAIL_COLUMNS}
           from mails m
          where sent_at is null and failed_at is null
            and (next_attempt_at is null or next_attempt_at <= now())
            and not exists (select 1 from mails p
                             where p.order_id = m.order_id and p.seq < m.seq
                               and p.sent_at is null and p.failed_at is null)
          order by seq
          limit 1
          for update skip locked"
    )))
    .fetch_optional(conn)
    .await
}

/// Claims up to `limit` due mails at once, locked until `conn`'s transaction ends: the claim of
/// [`claim_next`] (so at most one mail per order, its earliest unsent one), lowest seq first.
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

/// Marks claimed mails delivered in one statement (see [`mark_sent`]).
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

/// Marks a claimed mail delivered. A deferred mail keeps its last error (why it was late).
pub async fn mark_sent(conn: &mut PgConnection, seq: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set sent_at = clock_timestamp(), attempts = attempts + 1,
                          next_attempt_at = null
          where seq = $1",
    )
    .bind(seq)
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
