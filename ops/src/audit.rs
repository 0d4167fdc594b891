//! The completeness audit: every event the orders outbox appended must reach mail-svc's inbox.
//!
//! Per order, the producer's chain head (`outbox_heads.last_seq`, and when it moved) is compared
//! with the consumer's watermark (`order_progress.last_seq`: every event up to it is applied, in
//! chain order). An order whose watermark is behind its head waits for one event: the successor
//! of its watermark. The audit finds that event where it is — still in the outbox (the relay is
//! behind), in quarantine, published (kept in `outbox_published`) but dead-lettered by the
//! consumer, or published and never applied (lost on the way: a purged queue, a removed
//! binding, a restored consumer database) — and since when it waits. Only after the grace
//! period is an order *lagging*: normal latency and held chains that resolve are not alarms.
//!
//! It reads only, and incrementally ([`Auditor::pass`]): the orders published since the last
//! pass, the orders still behind at the last pass, and one slice of every order's head in key
//! order (so a consumer database restored from an older backup, whose orders did not change,
//! is found within a full round of slices). [`Auditor::full_pass`] reads every order at once.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::LazyLock,
    time::Duration,
};

use chrono::{DateTime, Utc};
use outbox::TableName;
use outbox_support::metrics::Metric;
use outbox_support::secret::SecretUrl;
use sqlx::{AssertSqlSafe, PgPool};

use crate::{fleet::Target, tables};

/// The statements on mail-svc's inbox, on its tables' names ([`crate::tables`]).
struct InboxSql {
    applied: String,
    consumer_side: String,
}

static INBOX_SQL: LazyLock<InboxSql> = LazyLock::new(|| {
    let (progress, held) = (tables::inbox().progress(), tables::inbox().held());
    InboxSql {
        applied: format!(
            "select p.aggregate_type, p.order_id, p.last_seq
           from unnest($2::text[], $3::bigint[]) k(t, id)
           join {progress} p on p.shard = $1 and p.aggregate_type = k.t and p.order_id = k.id"
        ),
        consumer_side: format!(
            "select k.t, k.id,
                (select count(*) from {held} h
                  where h.shard = $1 and h.aggregate_type = k.t and h.order_id = k.id),
                coalesce(array(select d.seq from dead_letters d
                                where d.shard = $1 and d.aggregate_type = k.t
                                  and d.order_id = k.id and d.seq is not null order by d.id), '{{}}'),
                coalesce(array(select d.reason from dead_letters d
                                where d.shard = $1 and d.aggregate_type = k.t
                                  and d.order_id = k.id and d.seq is not null order by d.id), '{{}}')
           from unnest($2::text[], $3::bigint[]) k(t, id)"
        ),
    }
});

/// The consumer this audit checks: mail-svc's inbox, as `outbox_audit_*{consumer="mail"}`.
pub const CONSUMER: &str = "mail";

/// Orders lagging, by consumer and stage.
pub const LAGGING: &str = "outbox_audit_lagging_aggregates";
/// The oldest wait of a lagging order, by consumer and stage.
pub const OLDEST_LAG: &str = "outbox_audit_oldest_lag_seconds";
/// Passes done.
pub const PASSES: &str = "outbox_audit_passes_total";
/// How long the last pass took.
pub const PASS_SECONDS: &str = "outbox_audit_pass_duration_seconds";
/// Passes that failed (a database unreachable); the figures keep the last pass's values.
pub const PASS_FAILURES: &str = "outbox_audit_pass_failures_total";

/// The audit's metrics (`outboxctl audit --watch`), with their HELP texts.
pub const METRICS: &[Metric] = &[
    Metric::gauge(
        LAGGING,
        "Orders whose consumer waits past the grace period for an event, by the stage of that \
         event (unpublished, quarantined, dead_lettered, not_applied).",
    ),
    Metric::gauge(
        OLDEST_LAG,
        "How long the oldest lagging order has waited, by stage (0: none).",
    ),
    Metric::counter(PASSES, "Audit passes done."),
    Metric::gauge(PASS_SECONDS, "How long the last audit pass took."),
    Metric::counter(
        PASS_FAILURES,
        "Audit passes that could not read a database.",
    ),
];

/// An order: its orders shard, aggregate type and id (the consumer's chain key).
pub type Key = (i32, String, i64);

/// Where the event an order waits for is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Still in the outbox: the relay has not published it yet.
    Unpublished,
    /// In the outbox's quarantine: the relay can never publish it as it is.
    Quarantined,
    /// Published, and sent to the consumer's dead-letter queue.
    DeadLettered,
    /// Published and never applied: lost between the broker and the consumer's effect.
    NotApplied,
}

impl Stage {
    /// Every stage, for metrics that report zeros too.
    pub const ALL: [Stage; 4] = [
        Stage::Unpublished,
        Stage::Quarantined,
        Stage::DeadLettered,
        Stage::NotApplied,
    ];

    /// The metric label and the listing's word.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Unpublished => "unpublished",
            Stage::Quarantined => "quarantined",
            Stage::DeadLettered => "dead_lettered",
            Stage::NotApplied => "not_applied",
        }
    }
}

/// An order whose consumer is behind its head past the grace period.
#[derive(Debug, Clone, PartialEq)]
pub struct Lagging {
    pub key: Key,
    /// The outbox database the order lives in: its fleet name, or `shard-N`.
    pub database: String,
    /// The producer's last seq of the order.
    pub head: i64,
    /// The consumer's last applied seq (`None`: none of the order's events).
    pub applied: Option<i64>,
    /// The seq the consumer waits for (`None`: not found in the outbox, the quarantine or the
    /// published rows kept: published before the retention window).
    pub waiting_for: Option<i64>,
    pub stage: Stage,
    /// When the awaited event was appended (else when the head last moved).
    pub since: DateTime<Utc>,
    /// The quarantine's or the dead letter's reason; how many later events the consumer holds.
    pub detail: String,
}

/// The databases the audit reads: each orders database's pool (by its position in [`Sources::ids`])
/// and mail-svc's.
#[derive(Debug, Clone)]
pub struct Sources {
    pub shards: Vec<PgPool>,
    /// Each of [`Sources::shards`]'s name and the shard its events carry: `shard-N` and N for
    /// orders-svc's SHARDS, the registry's name and source id for a fleet's databases.
    pub ids: Vec<ShardId>,
    pub mail: PgPool,
}

/// An orders database's name and the shard its events carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardId {
    pub name: String,
    pub shard: i32,
}

impl Sources {
    /// Connects to each orders database (shard 0 first) and mail-svc's, every session read-only
    /// (`default_transaction_read_only`): the audit and the trace never write.
    pub async fn connect(orders: &[String], mail: &str) -> Result<Self, String> {
        let targets: Vec<Target> = orders
            .iter()
            .enumerate()
            .map(|(i, url)| Target {
                name: crate::fleet::shard_name(i),
                shard: i as i32,
                url: SecretUrl::new(url.trim()),
            })
            .collect();
        Self::connect_targets(&targets, mail).await
    }

    /// Connects to each of `targets` (a fleet's databases, or some of them) and mail-svc's
    /// database, read-only like [`Sources::connect`].
    pub async fn connect_targets(targets: &[Target], mail: &str) -> Result<Self, String> {
        let connect = |url: SecretUrl, what: String| async move {
            let options: sqlx::postgres::PgConnectOptions = url
                .parse(&what, "PostgreSQL URL", str::parse)
                .map_err(|e| e.to_string())?;
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(2)
                .acquire_timeout(Duration::from_secs(5))
                .connect_with(options.options([("default_transaction_read_only", "on")]))
                .await
                .map_err(|e| format!("cannot connect to {what}: {}", url.scrub(&e.to_string())))
        };
        let mut shards = Vec::new();
        for t in targets {
            let what = format!("the orders database {} (shard {})", t.name, t.shard);
            shards.push(connect(t.url.clone(), what).await?);
        }
        let ids = targets
            .iter()
            .map(|t| ShardId {
                name: t.name.clone(),
                shard: t.shard,
            })
            .collect();
        let mail = connect(
            SecretUrl::new(mail.trim()),
            "mail-svc's database".to_owned(),
        )
        .await?;
        Ok(Self { shards, ids, mail })
    }
}

/// One pass's findings.
#[derive(Debug, Default)]
pub struct Report {
    pub lagging: Vec<Lagging>,
    /// Orders compared in this pass.
    pub checked: usize,
    /// Orders behind but still within the grace period.
    pub pending: usize,
}

impl Report {
    /// How many orders lag at each stage.
    pub fn counts(&self) -> BTreeMap<Stage, usize> {
        let mut counts: BTreeMap<Stage, usize> = Stage::ALL.iter().map(|s| (*s, 0)).collect();
        for l in &self.lagging {
            *counts.entry(l.stage).or_default() += 1;
        }
        counts
    }

    /// The oldest wait at each stage, in seconds at `now` (0: none).
    pub fn oldest(&self, now: DateTime<Utc>) -> BTreeMap<Stage, f64> {
        let mut oldest: BTreeMap<Stage, f64> = Stage::ALL.iter().map(|s| (*s, 0.0)).collect();
        for l in &self.lagging {
            let age = (now - l.since).num_milliseconds().max(0) as f64 / 1000.0;
            let o = oldest.entry(l.stage).or_default();
            *o = o.max(age);
        }
        oldest
    }

    /// How many orders lag in each database (by name; every database read, zeros included).
    pub fn by_database<'a>(&self, ids: &'a [ShardId]) -> BTreeMap<&'a str, usize> {
        let mut counts: BTreeMap<&str, usize> = ids.iter().map(|i| (i.name.as_str(), 0)).collect();
        for l in &self.lagging {
            if let Some(n) = counts.get_mut(l.database.as_str()) {
                *n += 1;
            }
        }
        counts
    }
}

/// An order behind its head: type, id, the consumer's watermark, the head, when it moved.
type Behind = (String, i64, Option<i64>, i64, Option<DateTime<Utc>>);
/// Where an awaited event is: type, id, seq, appended, stage, the quarantine's reason.
type FoundRow = (String, i64, i64, DateTime<Utc>, String, Option<String>);
/// The consumer's side of an order: type, id, held events, dead-lettered seqs and reasons.
type ConsumerRow = (String, i64, i64, Vec<i64>, Vec<String>);

/// Keeps what an incremental audit carries from pass to pass.
#[derive(Debug)]
pub struct Auditor {
    sources: Sources,
    table: TableName,
    grace: Duration,
    slice: i64,
    /// Per shard: published rows up to this time were read by an earlier pass.
    published_since: Vec<Option<DateTime<Utc>>>,
    /// Per shard: the last key of the previous slice of heads (`None`: start over).
    slice_after: Vec<Option<(String, i64)>>,
    /// Orders behind at the last pass (lagging or within grace): looked at again.
    behind: BTreeSet<Key>,
}

/// Published rows read again from a little before the last pass: `published_at` is taken while
/// the relay's delete runs, and a delete that committed a moment later than another may carry
/// an earlier one. Kept short: every row in it is read again by each pass.
const PUBLISHED_OVERLAP: chrono::Duration = chrono::Duration::seconds(5);

impl Auditor {
    /// An audit of orders-svc's outbox (`outbox`) against mail-svc's inbox; an order lags once
    /// its awaited event is older than `grace`; each pass also reads `slice` heads per shard.
    pub fn new(sources: Sources, grace: Duration, slice: i64) -> Self {
        let shards = sources.shards.len();
        Self {
            sources,
            table: tables::outbox().clone(),
            grace,
            slice: slice.max(1),
            published_since: vec![None; shards],
            slice_after: vec![None; shards],
            behind: BTreeSet::new(),
        }
    }

    /// Every order of every shard, compared now (`outboxctl audit` without `--watch`), one
    /// slice at a time: memory and statement sizes stay those of a slice, whatever the count.
    pub async fn full_pass(&mut self) -> Result<Report, sqlx::Error> {
        let mut report = Report::default();
        for shard in 0..self.sources.shards.len() {
            self.slice_after[shard] = None;
            loop {
                let slice = self.next_slice(shard).await?;
                let done = slice.len() < self.slice as usize;
                let part = self.compare(slice.into_iter().collect()).await?;
                report.checked += part.checked;
                report.pending += part.pending;
                report.lagging.extend(part.lagging);
                if done {
                    break;
                }
            }
        }
        report.lagging.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(report)
    }

    /// One incremental pass: the orders published since the last pass, those behind at the last
    /// pass, and the next slice of heads of each shard.
    pub async fn pass(&mut self) -> Result<Report, sqlx::Error> {
        let mut keys = std::mem::take(&mut self.behind);
        for shard in 0..self.sources.shards.len() {
            keys.extend(self.published_lately(shard).await?);
            keys.extend(self.next_slice(shard).await?);
        }
        self.compare(keys).await
    }

    /// The orders with events published since the last pass (on the first pass: none; the
    /// slices cover what came before).
    async fn published_lately(&mut self, shard: usize) -> Result<Vec<Key>, sqlx::Error> {
        let pool = &self.sources.shards[shard];
        let Some(since) = self.published_since[shard] else {
            let now: DateTime<Utc> = sqlx::query_scalar("select now()").fetch_one(pool).await?;
            self.published_since[shard] = Some(now);
            return Ok(Vec::new());
        };
        let rows: Vec<(String, i64, DateTime<Utc>)> = sqlx::query_as(AssertSqlSafe(format!(
            "select aggregate_type, aggregate_id, max(published_at) from {}
              where published_at > $1 group by 1, 2",
            self.table.published()
        )))
        .bind(since - PUBLISHED_OVERLAP)
        .fetch_all(pool)
        .await?;
        if let Some(latest) = rows.iter().map(|r| r.2).max() {
            self.published_since[shard] = Some(latest.max(since));
        }
        Ok(rows
            .into_iter()
            .map(|(t, id, _)| (self.sources.ids[shard].shard, t, id))
            .collect())
    }

    /// The next `slice` heads of `shard` in key order, starting over after the last.
    async fn next_slice(&mut self, shard: usize) -> Result<Vec<Key>, sqlx::Error> {
        let (after_type, after_id) = self.slice_after[shard]
            .clone()
            .unwrap_or((String::new(), i64::MIN));
        let rows: Vec<(String, i64)> = sqlx::query_as(AssertSqlSafe(format!(
            "select aggregate_type, aggregate_id from {}
              where (aggregate_type, aggregate_id) > ($1, $2)
              order by aggregate_type, aggregate_id limit $3",
            self.table.heads()
        )))
        .bind(after_type)
        .bind(after_id)
        .bind(self.slice)
        .fetch_all(&self.sources.shards[shard])
        .await?;
        self.slice_after[shard] = if (rows.len() as i64) < self.slice {
            None
        } else {
            rows.last().cloned()
        };
        Ok(rows
            .into_iter()
            .map(|(t, id)| (self.sources.ids[shard].shard, t, id))
            .collect())
    }

    /// Compares the heads of `keys` with the consumer's watermarks and finds what each order
    /// that is behind waits for.
    async fn compare(&mut self, keys: BTreeSet<Key>) -> Result<Report, sqlx::Error> {
        let mut report = Report {
            checked: keys.len(),
            ..Report::default()
        };
        let now: DateTime<Utc> = sqlx::query_scalar("select now()")
            .fetch_one(&self.sources.mail)
            .await?;
        for shard in 0..self.sources.shards.len() {
            let (types, ids): (Vec<String>, Vec<i64>) = keys
                .iter()
                .filter(|k| k.0 == self.sources.ids[shard].shard)
                .map(|k| (k.1.clone(), k.2))
                .unzip();
            if ids.is_empty() {
                continue;
            }
            let heads = self.heads(shard, &types, &ids).await?;
            let applied = applied(
                &self.sources.mail,
                self.sources.ids[shard].shard,
                &types,
                &ids,
            )
            .await?;
            let behind: Vec<Behind> = heads
                .into_iter()
                .filter_map(|(t, id, head, moved)| {
                    let done = applied.get(&(t.clone(), id)).copied();
                    (done < Some(head)).then_some((t, id, done, head, moved))
                })
                .collect();
            for found in self.awaited(shard, &behind, now).await? {
                self.behind.insert(found.key.clone());
                if now - found.since >= chrono::Duration::from_std(self.grace).unwrap_or_default() {
                    report.lagging.push(found);
                } else {
                    report.pending += 1;
                }
            }
        }
        report.lagging.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(report)
    }

    /// Each order's head and when it last moved.
    async fn heads(
        &self,
        shard: usize,
        types: &[String],
        ids: &[i64],
    ) -> Result<Vec<(String, i64, i64, Option<DateTime<Utc>>)>, sqlx::Error> {
        sqlx::query_as(AssertSqlSafe(format!(
            "select h.aggregate_type, h.aggregate_id, h.last_seq, h.appended_at
               from unnest($1::text[], $2::bigint[]) k(t, id)
               join {} h on h.aggregate_type = k.t and h.aggregate_id = k.id
              where h.last_seq is not null",
            self.table.heads()
        )))
        .bind(types)
        .bind(ids)
        .fetch_all(&self.sources.shards[shard])
        .await
    }

    /// Where the event each order that is behind waits for is: the first of the order's events
    /// after its watermark, in the outbox, the quarantine or the published rows; then, for a
    /// published one, whether the consumer dead-lettered it, and how many later events it holds.
    /// `now` is the pass's time (an order published before the retention window waits since
    /// its head moved, or since now when that is unknown).
    async fn awaited(
        &self,
        shard: usize,
        behind: &[Behind],
        now: DateTime<Utc>,
    ) -> Result<Vec<Lagging>, sqlx::Error> {
        if behind.is_empty() {
            return Ok(Vec::new());
        }
        let types: Vec<&str> = behind.iter().map(|b| b.0.as_str()).collect();
        let ids: Vec<i64> = behind.iter().map(|b| b.1).collect();
        let after: Vec<i64> = behind.iter().map(|b| b.2.unwrap_or(0)).collect();
        let t = &self.table;
        // The outbox is read from the relay's read floor (plus its holes), as the relay reads
        // it: never the dead rows a pinned horizon keeps below the floor.
        let found: Vec<FoundRow> = sqlx::query_as(AssertSqlSafe(format!(
            "with k as (select * from unnest($1::text[], $2::bigint[], $3::bigint[])
                                   as k(t, id, after)),
                      unsent as (
                        select o.aggregate_type, o.aggregate_id, o.seq, o.created_at
                          from {events} o
                         where o.seq >= (select last_value from {floor})
                            or o.seq = any(array(select seq from {holes})))
                 select k.t, k.id, w.seq, w.created_at, w.stage, w.detail
                   from k cross join lateral (
                     select * from (
                       (select u.seq, u.created_at, 'unpublished' as stage, null::text as detail
                          from unsent u
                         where u.aggregate_type = k.t and u.aggregate_id = k.id and u.seq > k.after
                         order by u.seq limit 1)
                       union all
                       (select q.seq, q.created_at, 'quarantined', q.reason from {quarantine} q
                         where q.aggregate_id = k.id and q.aggregate_type = k.t and q.seq > k.after
                         order by q.seq limit 1)
                       union all
                       (select p.seq, p.created_at, 'published', null from {published} p
                         where p.aggregate_type = k.t and p.aggregate_id = k.id and p.seq > k.after
                         order by p.seq limit 1)
                     ) first order by seq limit 1) w",
            events = t.events(),
            floor = t.read_floor(),
            holes = t.holes(),
            quarantine = t.quarantine(),
            published = t.published(),
        )))
        .bind(&types)
        .bind(&ids)
        .bind(&after)
        .fetch_all(&self.sources.shards[shard])
        .await?;
        let found: BTreeMap<(String, i64), _> = found
            .into_iter()
            .map(|(t, id, seq, at, stage, detail)| ((t, id), (seq, at, stage, detail)))
            .collect();
        let consumer = consumer_side(
            &self.sources.mail,
            self.sources.ids[shard].shard,
            &types,
            &ids,
        )
        .await?;
        let mut out = Vec::new();
        for (t, id, applied, head, moved) in behind {
            let key = (self.sources.ids[shard].shard, t.clone(), *id);
            let (held, dead) = consumer.get(&(t.clone(), *id)).cloned().unwrap_or_default();
            let (waiting_for, since, stage, reason) = match found.get(&(t.clone(), *id)) {
                Some((seq, at, stage, detail)) => {
                    let dead_reason = dead.iter().find(|(s, _)| s == seq).map(|(_, r)| r);
                    let (stage, reason) = match (stage.as_str(), dead_reason) {
                        ("unpublished", _) => (Stage::Unpublished, None),
                        ("quarantined", _) => (Stage::Quarantined, detail.clone()),
                        (_, Some(reason)) => (Stage::DeadLettered, Some(reason.clone())),
                        _ => (Stage::NotApplied, None),
                    };
                    (Some(*seq), *at, stage, reason)
                }
                // Published before the retention window: only the head's time is known.
                None => (
                    None,
                    moved.unwrap_or(now),
                    Stage::NotApplied,
                    Some("published before the retention window".to_owned()),
                ),
            };
            let held = (held > 0).then(|| format!("{held} later event(s) held"));
            let detail = [reason, held]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ");
            out.push(Lagging {
                key,
                database: self.sources.ids[shard].name.clone(),
                head: *head,
                applied: *applied,
                waiting_for,
                stage,
                since,
                detail,
            });
        }
        Ok(out)
    }
}

/// The consumer's watermark of each order of `shard` it has applied events of.
async fn applied(
    mail: &PgPool,
    shard: i32,
    types: &[String],
    ids: &[i64],
) -> Result<BTreeMap<(String, i64), i64>, sqlx::Error> {
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(AssertSqlSafe(INBOX_SQL.applied.as_str()))
        .bind(shard)
        .bind(types)
        .bind(ids)
        .fetch_all(mail)
        .await?;
    Ok(rows.into_iter().map(|(t, id, s)| ((t, id), s)).collect())
}

/// Per order: how many events the consumer holds (waiting for a predecessor), and its dead
/// letters (seq, reason).
type ConsumerSide = BTreeMap<(String, i64), (i64, Vec<(i64, String)>)>;

async fn consumer_side(
    mail: &PgPool,
    shard: i32,
    types: &[&str],
    ids: &[i64],
) -> Result<ConsumerSide, sqlx::Error> {
    let rows: Vec<ConsumerRow> = sqlx::query_as(AssertSqlSafe(INBOX_SQL.consumer_side.as_str()))
        .bind(shard)
        .bind(types)
        .bind(ids)
        .fetch_all(mail)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(t, id, held, seqs, reasons)| {
            ((t, id), (held, seqs.into_iter().zip(reasons).collect()))
        })
        .collect())
}
