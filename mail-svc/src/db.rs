//! Queries and migrations. Every statement of mail-svc's own tables (the mails, the counters)
//! lives here; the watermark and held-event statements are the `outbox-inbox` crate's (see
//! [`crate::process`]).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};

/// The embedded migrations (watermarks, held events, mails, counters).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Counter names in the `counters` table.
pub const SKIPPED: &str = "skipped";
pub const DEAD_LETTERED: &str = "dead_lettered";

/// A mail to queue.
#[derive(Debug, Clone)]
pub struct NewMail<'a> {
    pub shard: i32,
    pub seq: i64,
    pub order_id: i64,
    pub event_type: &'a str,
    pub recipient: &'a str,
    pub subject: &'a str,
    pub body: &'a str,
    pub idempotency_key: &'a str,
    pub traceparent: Option<&'a str>,
}

/// Queues a mail. The watermark guarantees an event is processed once, so a conflict here means
/// the (shard, seq) was reused by another order (a broken producer): the first mail stands.
pub async fn insert_mail(conn: &mut PgConnection, m: &NewMail<'_>) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "insert into mails (shard, seq, order_id, event_type, recipient, subject, body,
                            idempotency_key, traceparent)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         on conflict do nothing",
    )
    .bind(m.shard)
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

/// A mail to queue, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedMail {
    pub shard: i32,
    pub seq: i64,
    pub order_id: i64,
    pub event_type: &'static str,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub idempotency_key: String,
    pub traceparent: Option<String>,
}

/// Pushes the batch statement's own CTEs (see [`outbox_inbox::Batch::write`]): queue `mails`
/// (see [`insert_mail`]) and add `skipped` to this instance's skip counter.
///
/// The mails are inserted in slice order: `position` is an identity taken row by row, and the
/// `order by` on the array position makes the rows arrive in that order, so an order's mails
/// keep their chain order in `position`. The inbox's CTEs touch other tables, so sharing one
/// snapshot changes nothing.
pub fn push_mail_ctes(
    q: &mut QueryBuilder<Postgres>,
    instance: &str,
    mails: &[OwnedMail],
    skipped: i64,
) {
    let col = |f: fn(&OwnedMail) -> &str| mails.iter().map(f).collect::<Vec<&str>>();
    let shards: Vec<i32> = mails.iter().map(|m| m.shard).collect();
    let seqs: Vec<i64> = mails.iter().map(|m| m.seq).collect();
    let orders: Vec<i64> = mails.iter().map(|m| m.order_id).collect();
    let tps: Vec<Option<&str>> = mails.iter().map(|m| m.traceparent.as_deref()).collect();
    q.push(
        "queued as (
           insert into mails (shard, seq, order_id, event_type, recipient, subject, body,
                              idempotency_key, traceparent)
           select shard, seq, order_id, event_type, recipient, subject, body, idempotency_key,
                  traceparent
             from unnest(",
    );
    q.push_bind(shards).push("::integer[], ");
    q.push_bind(seqs).push("::bigint[], ");
    q.push_bind(orders).push("::bigint[], ");
    q.push_bind(col(|m| m.event_type)).push("::text[], ");
    q.push_bind(col(|m| &m.recipient)).push("::text[], ");
    q.push_bind(col(|m| &m.subject)).push("::text[], ");
    q.push_bind(col(|m| &m.body)).push("::text[], ");
    q.push_bind(col(|m| &m.idempotency_key)).push("::text[], ");
    q.push_bind(tps).push(
        "::text[])
                  with ordinality
                  as t(shard, seq, order_id, event_type, recipient, subject, body, idempotency_key,
                       traceparent, n)
            order by n
           on conflict do nothing
         ),
         counted as (
           insert into counters (name, instance, value)
           select * from (values (",
    );
    q.push_bind(SKIPPED).push("::text, ");
    q.push_bind(instance.to_owned()).push("::text, ");
    q.push_bind(skipped).push(
        "::bigint)) as v(name, instance, value) where value > 0
           on conflict (name, instance) do update set value = counters.value + excluded.value
         ),",
    );
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
    /// The orders-svc shard of its event (see `Event::shard`).
    pub shard: i32,
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
const MAIL_COLUMNS: &str = "shard, seq, order_id, event_type, recipient, subject, body, idempotency_key, \
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
                             where p.order_id = m.order_id and p.shard = m.shard
                               and p.seq < m.seq
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
pub async fn mark_all_sent(conn: &mut PgConnection, mails: &[&MailRow]) -> Result<(), sqlx::Error> {
    let shards: Vec<i32> = mails.iter().map(|m| m.shard).collect();
    let seqs: Vec<i64> = mails.iter().map(|m| m.seq).collect();
    sqlx::query(
        "update mails set sent_at = clock_timestamp(), attempts = attempts + 1,
                          next_attempt_at = null
          where (shard, seq) in (select * from unnest($1::integer[], $2::bigint[]))",
    )
    .bind(shards)
    .bind(seqs)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a claimed mail rejected for good by the server (it will not be retried).
pub async fn mark_failed(
    conn: &mut PgConnection,
    mail: &MailRow,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set failed_at = clock_timestamp(), last_error = $3, attempts = attempts + 1,
                          next_attempt_at = null
          where shard = $1 and seq = $2",
    )
    .bind(mail.shard)
    .bind(mail.seq)
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
    mail: &MailRow,
    error: &str,
    delay: std::time::Duration,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set attempts = attempts + 1, last_error = $3,
                          next_attempt_at = clock_timestamp() + $4 * interval '1 millisecond'
          where shard = $1 and seq = $2",
    )
    .bind(mail.shard)
    .bind(mail.seq)
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
