//! The admin service's SQL: held chains, failed mails, and the audit rows (`admin_actions`,
//! migration 0004), each mutation in one transaction with its audit row.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

/// One order's chain with held events (an order lives in one orders-svc shard).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HeldOrder {
    pub shard: i32,
    pub order_id: i64,
    pub last_seq: Option<i64>,
    /// In seq (= chain) order.
    pub seqs: Vec<i64>,
    pub prevs: Vec<i64>,
    pub oldest_age_ms: i64,
}

impl HeldOrder {
    /// The missing seq the chain waits for: the lowest predecessor that is not held itself.
    pub fn waiting_for(&self) -> i64 {
        self.prevs
            .iter()
            .filter(|p| !self.seqs.contains(p))
            .min()
            .copied()
            .unwrap_or_default()
    }
}

/// Orders with held events, the longest waiting first, and the held events in all.
pub async fn held(pool: &PgPool, limit: i64) -> Result<(i64, Vec<HeldOrder>), sqlx::Error> {
    let total: i64 = sqlx::query_scalar("select count(*) from held_events")
        .fetch_one(pool)
        .await?;
    let orders = sqlx::query_as(
        "select h.shard, h.order_id, p.last_seq,
                array_agg(h.seq order by h.seq) as seqs,
                array_agg(h.prev_seq order by h.seq) as prevs,
                (extract(epoch from now() - min(h.held_at)) * 1000)::bigint as oldest_age_ms
           from held_events h
           left join order_progress p
             on p.shard = h.shard and p.aggregate_type = h.aggregate_type
            and p.order_id = h.order_id
          group by h.shard, h.order_id, p.last_seq
          order by min(h.held_at), h.order_id, h.shard
          limit $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok((total, orders))
}

/// A FAILED mail.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FailedMail {
    pub shard: i32,
    pub seq: i64,
    pub order_id: i64,
    pub event_type: String,
    pub recipient: String,
    pub last_error: Option<String>,
    pub attempts: i32,
    pub failed_at: DateTime<Utc>,
}

/// FAILED mails in all, and the oldest `limit` (of one order, or all).
pub async fn failed(
    pool: &PgPool,
    limit: i64,
    order_id: Option<i64>,
) -> Result<(i64, Vec<FailedMail>), sqlx::Error> {
    let total: i64 = sqlx::query_scalar(
        "select count(*) from mails
          where failed_at is not null and ($1::bigint is null or order_id = $1)",
    )
    .bind(order_id)
    .fetch_one(pool)
    .await?;
    let mails = sqlx::query_as(
        "select shard, seq, order_id, event_type, recipient, last_error, attempts, failed_at
           from mails
          where failed_at is not null and ($2::bigint is null or order_id = $2)
          order by seq, shard limit $1",
    )
    .bind(limit)
    .bind(order_id)
    .fetch_all(pool)
    .await?;
    Ok((total, mails))
}

/// Which failed mails a retry takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailFilter {
    /// These seqs of one orders-svc shard (seqs are unique per shard).
    Seqs {
        shard: i32,
        seqs: Vec<i64>,
    },
    Order(i64),
    AllFailed,
}

/// What a retry found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retried {
    pub retried: Vec<i64>,
    /// Named seqs whose mail is not FAILED (queued or sent): nothing done.
    pub not_failed: Vec<i64>,
    /// Named seqs without a mail.
    pub unknown: Vec<i64>,
}

/// Puts FAILED mails back in the send queue (due now; attempts and the last error are kept, so
/// the history shows) and writes the audit row, in `tx`. Nothing changes when a seq is unknown.
pub async fn retry(
    tx: &mut PgConnection,
    filter: &MailFilter,
    reason: &str,
    operator: Option<&str>,
) -> Result<Retried, sqlx::Error> {
    let mut out = Retried::default();
    if let MailFilter::Seqs { shard, seqs } = filter {
        let known: Vec<(i64, bool)> = sqlx::query_as(
            "select seq, failed_at is not null from mails
              where shard = $1 and seq = any($2) order by seq",
        )
        .bind(shard)
        .bind(seqs)
        .fetch_all(&mut *tx)
        .await?;
        out.unknown = seqs
            .iter()
            .filter(|s| !known.iter().any(|(k, _)| k == *s))
            .copied()
            .collect();
        out.not_failed = known.iter().filter(|(_, f)| !f).map(|(s, _)| *s).collect();
        if !out.unknown.is_empty() {
            return Ok(out);
        }
    }
    let (shard, seqs, order_id) = match filter {
        MailFilter::Seqs { shard, seqs } => (Some(*shard), Some(seqs.clone()), None),
        MailFilter::Order(o) => (None, None, Some(*o)),
        MailFilter::AllFailed => (None, None, None),
    };
    // The orders concerned, locked with the inbox's lock before anything changes: a retried
    // mail may become its order's head (migration 0006, `db::reseat_heads`), which must not
    // interleave with a mail being queued for the order or a mailer moving the order's head.
    // Mails that fail after this read are not retried (they were not FAILED when asked).
    let orders: Vec<i64> = sqlx::query_scalar(
        "select distinct order_id from mails
          where failed_at is not null
            and ($1::bigint[] is null or (shard = $3 and seq = any($1)))
            and ($2::bigint is null or order_id = $2)
          order by order_id",
    )
    .bind(&seqs)
    .bind(order_id)
    .bind(shard)
    .fetch_all(&mut *tx)
    .await?;
    if orders.is_empty() {
        return Ok(out);
    }
    crate::process::INBOX.lock_aggregates(tx, &orders).await?;
    // `for update` through the update itself: a mailer holds no FAILED mail (it claims only
    // unsent ones), so nothing waits here.
    let retried: Vec<(i64, i32, i64)> = sqlx::query_as(
        "update mails set failed_at = null, next_attempt_at = null
          where failed_at is not null and order_id = any($4)
            and ($1::bigint[] is null or (shard = $3 and seq = any($1)))
            and ($2::bigint is null or order_id = $2)
          returning seq, shard, order_id",
    )
    .bind(seqs)
    .bind(order_id)
    .bind(shard)
    .bind(&orders)
    .fetch_all(&mut *tx)
    .await?;
    let mut chains: Vec<(i32, i64)> = retried.iter().map(|&(_, s, o)| (s, o)).collect();
    chains.sort_unstable();
    chains.dedup();
    crate::db::reseat_heads(tx, &chains).await?;
    out.retried = retried.into_iter().map(|(seq, _, _)| seq).collect();
    out.retried.sort_unstable();
    if !out.retried.is_empty() {
        outbox_kit::admin::audit(
            tx,
            "RetryMails",
            &out.retried,
            reason,
            operator,
            match (order_id, shard) {
                (Some(o), _) => serde_json::json!({ "order_id": o }),
                (None, Some(s)) if s != 0 => serde_json::json!({ "shard": s }),
                _ => serde_json::json!({}),
            },
        )
        .await?;
    }
    Ok(out)
}

/// Whether an earlier `ReleaseHeld` released this order's chain.
pub async fn released_before(tx: &mut PgConnection, order_id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "select exists (select 1 from admin_actions
                         where action = 'ReleaseHeld' and (detail ->> 'order_id')::bigint = $1)",
    )
    .bind(order_id)
    .fetch_one(tx)
    .await
}

/// Deletes up to `batch` audit rows older than `retention` (ADMIN_ACTIONS_RETENTION), oldest
/// first, walking `admin_actions_at` (migration 0004) and stopping after the batch; returns how
/// many. A `ReleaseHeld` whose row was pruned is no longer "released before": repeating it then
/// answers that nothing is held instead of "already released" (nothing changes either way).
pub async fn prune_admin_actions(
    pool: &PgPool,
    retention: std::time::Duration,
    batch: i64,
) -> Result<i64, sqlx::Error> {
    // Deleted by ctid, as the mails' prune (`db::PRUNE_SENT_SQL`): the walk's rows only.
    sqlx::query_scalar(
        "with gone as (
                delete from admin_actions
                 where ctid = any(array(
                         select ctid from admin_actions
                          where at < now() - $1 * interval '1 millisecond'
                          order by at
                          limit $2
                            for update skip locked))
                returning 1)
         select count(*) from gone",
    )
    .bind(retention.as_millis() as f64)
    .bind(batch)
    .fetch_one(pool)
    .await
}
