//! What is stuck, one page at a time, read from the databases the audit and the trace read
//! (read-only sessions, see [`crate::audit::Sources`]): quarantined rows (the orders database of
//! a shard), held chains and dead-lettered events not applied since (mail-svc's database).
//!
//! Every listing is keyset-paginated: a page is "the next `limit` rows after this key" in the
//! order of an index, never `OFFSET`, so the 1,000th page costs what the first does. Each
//! filter is added to the statement only when given, so PostgreSQL plans each combination on
//! its own instead of one generic plan full of `$1 is null or ...`.
//!
//! The actions on what these list go through the services ([`crate::admin`]); these reads never
//! write.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, PgPool, Postgres, QueryBuilder};

use crate::tables::{inbox, outbox};

/// The most rows a page holds.
pub const MAX_PAGE: i64 = 500;

/// The listings' fixed statements and parts, on the tables' names ([`crate::tables`]).
struct Sql {
    /// The quarantined rows, up to the seq to start after.
    quarantined: String,
    quarantined_count: String,
    quarantined_seqs: String,
    /// The held chains, up to the (shard, order id) to start after.
    held: String,
    /// The held chains' watermarks, joined after their page is cut.
    held_applied: String,
    held_count: String,
    /// The "still dead" condition: not applied since, and the event's last record.
    still_dead: String,
}

static SQL: LazyLock<Sql> = LazyLock::new(|| {
    let quarantine = outbox().quarantine();
    let (progress, held) = (inbox().progress(), inbox().held());
    Sql {
        quarantined: format!(
            "select seq, aggregate_id, event_type, prev_seq, reason, created_at, quarantined_at
           from {quarantine} where seq > "
        ),
        quarantined_count: format!("select count(*) from {quarantine}"),
        quarantined_seqs: format!(
            "select seq from {quarantine}
          where (cardinality($1::bigint[]) > 0 and seq = any($1))
             or (cardinality($1::bigint[]) = 0 and aggregate_id = $2)
          order by seq limit 10000"
        ),
        held: format!(
            "select h.shard, h.order_id, p.last_seq as applied, h.held, h.waiting_for, h.oldest,
                (select d.reason from dead_letters d
                  where d.shard = h.shard and d.aggregate_type = 'order'
                    and d.order_id = h.order_id and d.seq = h.waiting_for
                  order by d.id desc limit 1) as dead_reason
           from (select shard, order_id, array_agg(seq order by seq) as held,
                        min(prev_seq) as waiting_for, min(held_at) as oldest
                   from {held}
                  where aggregate_type = 'order' and (shard, order_id) > ("
        ),
        held_applied: format!(
            ") h left join {progress} p
                on p.shard = h.shard and p.aggregate_type = 'order' and p.order_id = h.order_id"
        ),
        held_count: format!(
            "select count(*) from (select distinct shard, aggregate_type, order_id from {held}) h"
        ),
        still_dead: format!(
            " and d.seq is not null
   and not exists (select 1 from {progress} p
                    where p.shard = d.shard and p.aggregate_type = d.aggregate_type
                      and p.order_id = d.order_id and p.last_seq >= d.seq)
   and not exists (select 1 from dead_letters l
                    where l.shard = d.shard and l.aggregate_type = d.aggregate_type
                      and l.order_id = d.order_id and l.seq = d.seq and l.id > d.id)"
        ),
    }
});

/// The filters every listing takes; `None` leaves a filter out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub order_id: Option<i64>,
    /// The event type, exactly (quarantine only: mail-svc's tables do not keep it).
    pub event_type: Option<String>,
    /// Part of the reason, case-insensitive.
    pub reason: Option<String>,
    /// Only rows at least this old (seconds).
    pub min_age_secs: Option<i64>,
}

/// One page and the key of the next (`None`: the last page).
#[derive(Debug, Clone)]
pub struct Page<T, K> {
    pub rows: Vec<T>,
    pub next: Option<K>,
}

fn page<T, K>(mut rows: Vec<T>, limit: i64, key: impl Fn(&T) -> K) -> Page<T, K> {
    // One row more than asked tells whether a next page exists without a count.
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next = if more { rows.last().map(key) } else { None };
    Page { rows, next }
}

/// A quarantined row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Quarantined {
    pub seq: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    pub reason: String,
    pub created_at: DateTime<Utc>,
    pub quarantined_at: DateTime<Utc>,
}

fn like(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// The quarantined rows of one shard's orders database after seq `after`, in seq order.
pub async fn quarantined(
    orders: &PgPool,
    filter: &Filter,
    after: Option<i64>,
    limit: i64,
) -> Result<Page<Quarantined, i64>, sqlx::Error> {
    let limit = limit.clamp(1, MAX_PAGE);
    let mut q = QueryBuilder::<Postgres>::new(SQL.quarantined.as_str());
    q.push_bind(after.unwrap_or(i64::MIN));
    if let Some(id) = filter.order_id {
        q.push(" and aggregate_id = ").push_bind(id);
    }
    if let Some(t) = &filter.event_type {
        q.push(" and event_type = ").push_bind(t.clone());
    }
    if let Some(r) = &filter.reason {
        q.push(" and reason ilike ").push_bind(like(r));
    }
    if let Some(age) = filter.min_age_secs {
        q.push(" and created_at <= now() - make_interval(secs => ")
            .push_bind(age as f64)
            .push(")");
    }
    q.push(" order by seq limit ").push_bind(limit + 1);
    let rows = q.build_query_as().fetch_all(orders).await?;
    Ok(page(rows, limit, |r: &Quarantined| r.seq))
}

/// Quarantined rows in all (the overview's figure).
pub async fn quarantined_count(orders: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(AssertSqlSafe(SQL.quarantined_count.as_str()))
        .fetch_one(orders)
        .await
}

/// An order whose consumer holds events, waiting for a predecessor.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HeldChain {
    pub shard: i32,
    pub order_id: i64,
    /// The consumer's watermark (`None`: nothing applied yet).
    pub applied: Option<i64>,
    /// The held seqs, in chain order.
    pub held: Vec<i64>,
    /// The predecessor of the first held event: the seq the chain waits for.
    pub waiting_for: i64,
    pub oldest: DateTime<Utc>,
    /// The dead letter's reason when the awaited seq was dead-lettered (and not applied).
    pub dead_reason: Option<String>,
}

/// The held chains after `(shard, order id)` `after`, in that order.
pub async fn held(
    mail: &PgPool,
    filter: &Filter,
    after: Option<(i32, i64)>,
    limit: i64,
) -> Result<Page<HeldChain, (i32, i64)>, sqlx::Error> {
    let limit = limit.clamp(1, MAX_PAGE);
    let (s, o) = after.unwrap_or((i32::MIN, i64::MIN));
    let mut q = QueryBuilder::<Postgres>::new(SQL.held.as_str());
    q.push_bind(s).push(", ").push_bind(o).push(")");
    if let Some(id) = filter.order_id {
        q.push(" and order_id = ").push_bind(id);
    }
    q.push(" group by shard, order_id");
    if let Some(age) = filter.min_age_secs {
        q.push(" having min(held_at) <= now() - make_interval(secs => ")
            .push_bind(age as f64)
            .push(")");
    }
    q.push(" order by shard, order_id limit ")
        .push_bind(limit + 1)
        .push(&SQL.held_applied);
    if let Some(r) = &filter.reason {
        q.push(
            " where exists (select 1 from dead_letters d
                             where d.shard = h.shard and d.aggregate_type = 'order'
                               and d.order_id = h.order_id and d.seq = h.waiting_for
                               and d.reason ilike ",
        )
        .push_bind(like(r))
        .push(")");
    }
    q.push(" order by h.shard, h.order_id");
    let rows = q.build_query_as().fetch_all(mail).await?;
    Ok(page(rows, limit, |r: &HeldChain| (r.shard, r.order_id)))
}

/// Orders with held events in all (the overview's figure).
pub async fn held_count(mail: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(AssertSqlSafe(SQL.held_count.as_str()))
        .fetch_one(mail)
        .await
}

/// An event mail-svc dead-lettered and has not applied since (its last dead-lettering).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeadLetter {
    /// The dead-letter record's id: the listing's key.
    pub id: i64,
    pub shard: i32,
    pub order_id: i64,
    pub seq: i64,
    pub reason: String,
    pub at: DateTime<Utc>,
}

fn dead_filter(q: &mut QueryBuilder<Postgres>, filter: &Filter) {
    q.push(&SQL.still_dead);
    if let Some(id) = filter.order_id {
        q.push(" and d.order_id = ").push_bind(id);
    }
    if let Some(r) = &filter.reason {
        q.push(" and d.reason ilike ").push_bind(like(r));
    }
    if let Some(age) = filter.min_age_secs {
        q.push(" and d.at <= now() - make_interval(secs => ")
            .push_bind(age as f64)
            .push(")");
    }
}

/// The dead-lettered events not applied since, after record `after`, oldest first.
pub async fn dead_letters(
    mail: &PgPool,
    filter: &Filter,
    after: Option<i64>,
    limit: i64,
) -> Result<Page<DeadLetter, i64>, sqlx::Error> {
    let limit = limit.clamp(1, MAX_PAGE);
    let mut q = QueryBuilder::<Postgres>::new(
        "select d.id, d.shard, d.order_id, d.seq, d.reason, d.at from dead_letters d
          where d.aggregate_type = 'order' and d.id > ",
    );
    q.push_bind(after.unwrap_or(i64::MIN));
    dead_filter(&mut q, filter);
    q.push(" order by d.id limit ").push_bind(limit + 1);
    let rows = q.build_query_as().fetch_all(mail).await?;
    Ok(page(rows, limit, |r: &DeadLetter| r.id))
}

/// Every (shard, seq) a filter matches among the dead-lettered events not applied since, at
/// most `cap`: what a "redrive all matching" will move, shown before it runs.
pub async fn dead_letter_seqs(
    mail: &PgPool,
    filter: &Filter,
    cap: i64,
) -> Result<Vec<(i32, i64)>, sqlx::Error> {
    let mut q = QueryBuilder::<Postgres>::new(
        "select d.shard, d.seq from dead_letters d where d.aggregate_type = 'order'",
    );
    dead_filter(&mut q, filter);
    q.push(" order by d.shard, d.seq limit ").push_bind(cap);
    q.build_query_as().fetch_all(mail).await
}

/// Dead-lettered events not applied since, in all (the overview's figure).
pub async fn dead_letter_count(mail: &PgPool) -> Result<i64, sqlx::Error> {
    let mut q = QueryBuilder::<Postgres>::new(
        "select count(*) from dead_letters d where d.aggregate_type = 'order'",
    );
    dead_filter(&mut q, &Filter::default());
    q.build_query_scalar().fetch_one(mail).await
}

/// Which of `seqs` (or, without seqs, which rows of order `order`) are in one shard's
/// quarantine now: what a requeue or a drop would move, shown before it runs.
pub async fn quarantined_seqs(
    orders: &PgPool,
    seqs: &[i64],
    order: Option<i64>,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(AssertSqlSafe(SQL.quarantined_seqs.as_str()))
        .bind(seqs)
        .bind(order.unwrap_or(0))
        .fetch_all(orders)
        .await
}
