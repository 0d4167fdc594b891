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
/// Sent mails deleted by the retention prune: `processed` counts them still.
pub const PRUNED: &str = "pruned";

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
///
/// The mail is its order's head (the next to send, see migration 0006) when the order has no
/// unsent mail. The caller holds the order's inbox lock ([`outbox_inbox::Inbox::apply`] and
/// `release_held` take it before calling the handler), taken in an earlier statement, so this
/// statement's snapshot already sees a mailer's commit that made the order's last unsent mail
/// leave, and a mailer that has yet to mark one waits for this transaction (see
/// [`promote_next`]).
pub async fn insert_mail(conn: &mut PgConnection, m: &NewMail<'_>) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "insert into mails (shard, seq, order_id, event_type, recipient, subject, body,
                            idempotency_key, traceparent, head)
         select $1, $2, $3, $4, $5, $6, $7, $8, $9,
                not exists (select 1 from mails u
                             where u.shard = $1 and u.order_id = $3
                               and u.sent_at is null and u.failed_at is null)
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
///
/// An order's lowest new seq is its head (see [`insert_mail`]) when the order has no unsent mail
/// yet; the batch took its orders' locks in an earlier statement. A row that would conflict (a
/// seq reused by another order, see [`insert_mail`]) is left out before the head is chosen, or
/// its order would be left without one.
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
                              idempotency_key, traceparent, head)
           select shard, seq, order_id, event_type, recipient, subject, body, idempotency_key,
                  traceparent,
                  seq = min(seq) over (partition by shard, order_id)
                    and not exists (select 1 from mails u
                                     where u.shard = t.shard and u.order_id = t.order_id
                                       and u.sent_at is null and u.failed_at is null)
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
            where not exists (select 1 from mails c where c.shard = t.shard and c.seq = t.seq)
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
/// Records a dead letter: the event it was (when the message is one; else only the seq its
/// `message_id` names, if any) and why. Written with the counter, before the message's ack.
pub async fn record_dead_letter(
    conn: &mut PgConnection,
    event: Option<&outbox_inbox::Envelope>,
    message_seq: Option<i64>,
    reason: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into dead_letters (shard, aggregate_type, order_id, seq, reason)
         values ($1, $2, $3, $4, $5)",
    )
    .bind(event.map(|e| e.shard))
    .bind(event.map(|e| e.aggregate_type.as_str()))
    .bind(event.map(|e| e.aggregate_id))
    .bind(event.map(|e| e.seq).or(message_seq))
    .bind(reason)
    .execute(conn)
    .await
    .map(drop)
}

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

/// The columns of [`MailRow`], in its order (a macro, so that [`CLAIM_SQL`] is a constant).
macro_rules! mail_columns {
    () => {
        "shard, seq, order_id, event_type, recipient, subject, body, idempotency_key, traceparent, \
         queued_at, sent_at, failed_at, last_error, attempts, next_attempt_at"
    };
}

/// The columns of [`MailRow`], in its order.
const MAIL_COLUMNS: &str = mail_columns!();

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

/// The claim's statement (see [`claim_batch`]; `$1` is the batch size), public so that a test can
/// explain the very statement the mailer runs.
///
/// Its cost is O(batch) whatever the backlog, and does not depend on statistics: the one index
/// that fits (`mails_claim`, migration 0006) holds only the orders' heads, in the order of the
/// `order by`, so the plan is a walk from the index's start that stops after `$1` rows it could
/// lock. Rows another loop holds are stepped over (`skip locked`); a deferred head's key is its
/// next attempt, beyond the end of the range until it is due.
pub const CLAIM_SQL: &str = concat!(
    "select ",
    mail_columns!(),
    "
       from mails
      where head and sent_at is null and failed_at is null
        and coalesce(next_attempt_at, queued_at) <= now()
      order by coalesce(next_attempt_at, queued_at), seq
      limit $1
      for update skip locked"
);

/// Claims up to `limit` mails to deliver, locked until `conn`'s transaction ends: orders' heads
/// (each order's next mail, see migration 0006, so at most one mail per order) that are due (not
/// deferred to a later `next_attempt_at`), the longest due first. `skip locked` lets several
/// mailers work side by side. An order's next mail becomes its head only in the transaction
/// that marks the head sent or failed ([`promote_next`]), so while one mailer holds an order's
/// head, or while the head waits for its next attempt, the order's later mails are not eligible
/// for anyone; a deferred head is not due, so the claim passes over it to every other order's.
pub async fn claim_batch(conn: &mut PgConnection, limit: i64) -> Result<Vec<MailRow>, sqlx::Error> {
    sqlx::query_as(CLAIM_SQL).bind(limit).fetch_all(conn).await
}

/// Marks claimed mails delivered in one statement, each with the server's answer to it (`None`:
/// the log mailer). A deferred mail keeps its last error (why it was late). Their orders need
/// their next head: [`promote_next`].
pub async fn mark_all_sent(
    conn: &mut PgConnection,
    mails: &[(&MailRow, Option<String>)],
) -> Result<(), sqlx::Error> {
    let shards: Vec<i32> = mails.iter().map(|(m, _)| m.shard).collect();
    let seqs: Vec<i64> = mails.iter().map(|(m, _)| m.seq).collect();
    let replies: Vec<Option<&str>> = mails.iter().map(|(_, r)| r.as_deref()).collect();
    sqlx::query(
        "update mails m set sent_at = clock_timestamp(), attempts = attempts + 1,
                            next_attempt_at = null, head = false, smtp_reply = s.reply
           from unnest($1::integer[], $2::bigint[], $3::text[]) as s(shard, seq, reply)
          where m.shard = s.shard and m.seq = s.seq",
    )
    .bind(shards)
    .bind(seqs)
    .bind(replies)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a claimed mail rejected for good by the server (it will not be retried). Its order needs
/// its next head: [`promote_next`].
pub async fn mark_failed(
    conn: &mut PgConnection,
    mail: &MailRow,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update mails set failed_at = clock_timestamp(), last_error = $3, attempts = attempts + 1,
                          next_attempt_at = null, head = false
          where shard = $1 and seq = $2",
    )
    .bind(mail.shard)
    .bind(mail.seq)
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}

/// Makes each chain's (shard, order) earliest unsent mail its head, after its head was marked
/// sent or failed in this transaction; a chain without unsent mails is left as it is. The caller
/// holds the orders' inbox locks ([`outbox_inbox::Inbox::lock_aggregates`]), taken in an earlier
/// statement: a mail queued by a transaction that committed before is seen here, and one queued
/// after waits for this commit and then sees the order's head gone (see [`insert_mail`]). Without
/// the lock each could miss the other and leave the order without a head for good.
///
/// One index probe per chain (`mails_unsent`), whatever the chain's or the queue's length.
pub async fn promote_next(
    conn: &mut PgConnection,
    chains: &[(i32, i64)],
) -> Result<(), sqlx::Error> {
    update_chains(conn, chains, PROMOTE_EARLIEST_UNSENT).await
}

/// Makes the earliest unsent mail of each chain ($1 shards, $2 orders) its head; public so that a
/// test can explain the very statement the mailer runs.
pub const PROMOTE_EARLIEST_UNSENT: &str = "update mails m set head = true
           from unnest($1::integer[], $2::bigint[]) as c(shard, order_id),
                lateral (select n.seq from mails n
                          where n.shard = c.shard and n.order_id = c.order_id
                            and n.sent_at is null and n.failed_at is null
                          order by n.seq limit 1) as first
          where m.shard = c.shard and m.seq = first.seq and not m.head";

/// Gives these chains their right heads after FAILED mails of theirs were put back in the queue
/// (an operator's retry), in the caller's transaction, which holds the orders' inbox locks (see
/// [`promote_next`]). A retried mail goes before its chain's later unsent mails, as if it had
/// never failed: the chain's head steps back for it, unless a mailer holds the head (is sending
/// it right now: `skip locked`, so nothing here waits for a send, and no mailer waits for this
/// transaction while holding what it waits for); that head goes first, and the retried mail
/// follows it ([`promote_next`] takes the earliest unsent mail). A chain with no head (no unsent
/// mail before the retry) gets its earliest unsent mail as its head.
pub async fn reseat_heads(
    conn: &mut PgConnection,
    chains: &[(i32, i64)],
) -> Result<(), sqlx::Error> {
    update_chains(
        &mut *conn,
        chains,
        "update mails set head = false
          where (shard, seq) in (
                select h.shard, h.seq
                  from unnest($1::integer[], $2::bigint[]) as c(shard, order_id)
                  join mails h on h.shard = c.shard and h.order_id = c.order_id
                              and h.sent_at is null and h.failed_at is null and h.head
                 where exists (select 1 from mails e
                                where e.shard = h.shard and e.order_id = h.order_id
                                  and e.seq < h.seq
                                  and e.sent_at is null and e.failed_at is null)
                   for update of h skip locked)",
    )
    .await?;
    // The chains left without a head: their earliest unsent mail (a statement of constants).
    let promote_headless = sqlx::AssertSqlSafe(format!(
        "{PROMOTE_EARLIEST_UNSENT}
            and not exists (select 1 from mails h
                             where h.shard = c.shard and h.order_id = c.order_id
                               and h.sent_at is null and h.failed_at is null and h.head)"
    ));
    update_chains(conn, chains, promote_headless).await
}

/// Runs `sql`, a statement on the chains (shard, order) given as `$1` (their shards) and `$2`
/// (their orders); nothing when there are none.
async fn update_chains(
    conn: &mut PgConnection,
    chains: &[(i32, i64)],
    sql: impl sqlx::SqlSafeStr,
) -> Result<(), sqlx::Error> {
    if chains.is_empty() {
        return Ok(());
    }
    let (shards, orders): (Vec<i32>, Vec<i64>) = chains.iter().copied().unzip();
    sqlx::query(sql)
        .bind(shards)
        .bind(orders)
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

/// The prune's statement ([`prune_sent`], public so that a test can explain the very statement
/// that runs): deletes up to `$3` sent mails that were sent at or after `$1` (the cursor: the
/// last batch's latest `sent_at`; null: from the oldest) and more than `$2` ms ago, oldest
/// first, and adds them to this instance's (`$4`) counter `$5` ([`PRUNED`]), in one statement.
///
/// O(batch) whatever the table's size, and with or without statistics: the inner select walks
/// `mails_sent_at` (migration 0007) from the cursor and stops after `$3` rows, the rows are
/// deleted by their `ctid` (a TID scan: no join whose plan could turn into a scan of the table),
/// and the cut-off is checked on those rows only (a range of two bounds would be estimated, on
/// a table without statistics, at a few rows, and read whole and sorted). When the walk reaches
/// mails sent after the cut-off, fewer than `$3` are deleted (the walk's rows past it are locked
/// for this one statement and left): the prune has caught up. The
/// batches already deleted (dead index entries until vacuum removes them) lie before the cursor,
/// so a long prune does not walk them again and again. Rows someone holds are passed over (`skip
/// locked`; nobody is expected to hold a sent mail), so a prune never waits, and it holds its
/// batch's row locks for one statement.
pub const PRUNE_SENT_SQL: &str = "
    with gone as (
           delete from mails
            where ctid = any(array(
                    select ctid from mails
                     where sent_at >= coalesce($1, '-infinity'::timestamptz)
                     order by sent_at
                     limit $3
                       for update skip locked))
              and sent_at < now() - $2 * interval '1 millisecond'
           returning sent_at),
         counted as (
           insert into counters (name, instance, value)
           select $5::text, $4::text, count(*) from gone having count(*) > 0
           on conflict (name, instance) do update set value = counters.value + excluded.value)
    select count(*), max(sent_at) from gone";

/// Mails deleted per prune transaction: small enough that a batch holds its locks for
/// milliseconds, large enough that a million mails go in a thousand statements.
pub const PRUNE_BATCH: i64 = 1000;

/// Deletes one batch of mails sent longer than `retention` ago (see [`PRUNE_SENT_SQL`]), from
/// `cursor` on. Returns how many, and the cursor for the next batch.
pub async fn prune_sent(
    pool: &PgPool,
    instance: &str,
    retention: std::time::Duration,
    cursor: Option<DateTime<Utc>>,
    batch: i64,
) -> Result<(i64, Option<DateTime<Utc>>), sqlx::Error> {
    sqlx::query_as(PRUNE_SENT_SQL)
        .bind(cursor)
        .bind(retention.as_millis() as f64)
        .bind(batch)
        .bind(instance)
        .bind(PRUNED)
        .fetch_one(pool)
        .await
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

/// Reads every count in one statement (one snapshot). `processed` counts the mails pruned by
/// retention too (see [`prune_sent`], which moves each deleted mail to the `pruned` counter in
/// the same statement).
pub async fn stats(pool: &PgPool) -> Result<Stats, sqlx::Error> {
    let (processed, skipped, held, dead_lettered, oldest_held_age_ms, unsent): (
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = sqlx::query_as(
        "select (select count(*) from mails)
                  + (select coalesce(sum(value), 0)::bigint from counters where name = $3),
                (select coalesce(sum(value), 0)::bigint from counters where name = $1),
                (select count(*) from held_events),
                (select coalesce(sum(value), 0)::bigint from counters where name = $2),
                (select coalesce((extract(epoch from now() - min(held_at)) * 1000)::bigint, 0)
                   from held_events),
                (select count(*) from mails where sent_at is null and failed_at is null)",
    )
    .bind(SKIPPED)
    .bind(DEAD_LETTERED)
    .bind(PRUNED)
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
