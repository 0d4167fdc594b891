//! Section 8, the completeness audit's cost: the end-to-end maximum (section 4's closed loop)
//! with and without `outboxctl audit --watch --interval 5s` beside it, runs alternated; and one audit pass at
//! `--audit-aggregates` orders (1,000,000 by default), incremental and full, next to the raw
//! PostgreSQL reads it is made of.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use outboxctl::audit::{Auditor, ShardId, Sources};
use serde::Serialize;
use sqlx::PgPool;

use super::{end_to_end::end_to_end, report::EndToEndRun};
use crate::{
    load::progress,
    stack::{Binaries, Stack, free_addr},
};

/// Orders changed between two incremental passes.
const CHANGED_PER_PASS: i64 = 1_000;
/// Heads each incremental pass reads beside the changed orders (`--slice`'s default).
const SLICE: i64 = 10_000;
/// Incremental passes measured.
const PASSES: usize = 5;
/// Ids far above the ones the load uses.
const FIRST_ID: i64 = 1_000_000_000;

#[derive(Debug, Serialize)]
pub struct AuditCost {
    /// Section 4's maximum without the audit, and with it passing every 5 s.
    pub without: Vec<EndToEndRun>,
    pub with: Vec<EndToEndRun>,
    pub aggregates: i64,
    pub changed_per_pass: i64,
    pub slice: i64,
    /// Milliseconds of each incremental pass.
    pub incremental_ms: Vec<f64>,
    /// Seconds of one full pass over every order.
    pub full_secs: f64,
    /// The raw reads in the same run: one slice of heads in key order and its watermarks, in ms;
    /// and a count of every head (a sequential scan), in seconds.
    pub raw_slice_ms: f64,
    pub raw_scan_secs: f64,
}

/// Runs both parts on the bench `stack`.
pub(super) async fn audit_cost(
    stack: &Stack,
    runs: u32,
    secs: f64,
    writers: usize,
    aggregates: i64,
) -> anyhow::Result<AuditCost> {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for run in 1..=runs {
        progress(format!("8. end to end without the audit, run {run}"));
        without.push(end_to_end(stack, None, secs, writers).await?);
        progress(format!(
            "8. end to end with outboxctl audit --watch, run {run}"
        ));
        let audit = AuditProcess::start(stack)?;
        with.push(end_to_end(stack, None, secs, writers).await?);
        drop(audit);
    }

    progress(format!("8. an audit pass at {aggregates} orders"));
    let orders = outbox_kit::db::connect(&stack.orders_db_url, 4).await?;
    let mail = outbox_kit::db::connect(&stack.mail_db_url, 4).await?;
    fill(&orders, &mail, aggregates).await?;
    let sources = Sources {
        shards: vec![orders.clone()],
        ids: vec![ShardId {
            name: outbox_ops::fleet::shard_name(0),
            shard: 0,
        }],
        mail: mail.clone(),
    };
    let mut auditor = Auditor::new(sources.clone(), Duration::from_secs(60), SLICE);
    auditor.pass().await?; // the first pass only notes the time
    let mut incremental_ms = Vec::new();
    for pass in 0..PASSES as i64 {
        change(&orders, &mail, aggregates, pass).await?;
        let started = Instant::now();
        let report = auditor.pass().await?;
        incremental_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(report.lagging.is_empty(), "no order lags: {report:?}");
    }
    let started = Instant::now();
    let full = Auditor::new(sources, Duration::from_secs(60), SLICE)
        .full_pass()
        .await?;
    let full_secs = started.elapsed().as_secs_f64();
    anyhow::ensure!(
        full.checked as i64 >= aggregates,
        "a full pass reads every order"
    );
    let (raw_slice_ms, raw_scan_secs) = raw_reads(&orders, &mail).await?;
    clean(&orders, &mail).await?;
    Ok(AuditCost {
        without,
        with,
        aggregates,
        changed_per_pass: CHANGED_PER_PASS,
        slice: SLICE,
        incremental_ms,
        full_secs,
        raw_slice_ms,
        raw_scan_secs,
    })
}

/// `outboxctl audit --watch` on the stack's databases, passing every 5 s; killed on drop.
struct AuditProcess(Child);

impl AuditProcess {
    fn start(stack: &Stack) -> anyhow::Result<Self> {
        let child = Command::new(Binaries::locate()?.path("outboxctl")?)
            // Six times as often as its default (30s), with its default slice.
            .args(["audit", "--watch", "--interval", "5s"])
            .arg(format!("--metrics-addr={}", free_addr()?))
            .arg(format!("--orders-db={}", stack.orders_db_url))
            .arg(format!("--mail-db={}", stack.mail_db_url))
            .stderr(Stdio::null())
            .spawn()?;
        Ok(Self(child))
    }
}

impl Drop for AuditProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `aggregates` orders, each with one event published (within today's partition) and applied.
async fn fill(orders: &PgPool, mail: &PgPool, aggregates: i64) -> anyhow::Result<()> {
    sqlx::query(
        "insert into outbox_heads (aggregate_type, aggregate_id, last_seq, appended_at)
         select 'order', $1 + g, $1 + g, now() from generate_series(1, $2) g",
    )
    .bind(FIRST_ID)
    .bind(aggregates)
    .execute(orders)
    .await?;
    sqlx::query(PUBLISH_SQL)
        .bind(FIRST_ID)
        .bind(1_i64)
        .bind(aggregates)
        .bind(0_i64)
        .execute(orders)
        .await?;
    sqlx::query(
        "insert into order_progress (shard, aggregate_type, order_id, last_seq)
         select 0, 'order', $1 + g, $1 + g from generate_series(1, $2) g",
    )
    .bind(FIRST_ID)
    .bind(aggregates)
    .execute(mail)
    .await?;
    for (pool, tables) in [
        (orders, "outbox_heads, outbox_published"),
        (mail, "order_progress"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!("analyze {tables}")))
            .execute(pool)
            .await?;
    }
    Ok(())
}

/// Orders `$1 + g` for g in `$2..=$3` published the event `$1 + g + $4` (an empty payload) ten
/// minutes ago (within today's partition), as a steady stream would have: not since the pass.
const PUBLISH_SQL: &str = "insert into outbox_published
        (seq, aggregate_type, aggregate_id, event_type, routing_key, content_type, payload,
         created_at, published_at)
     select $1 + g + $4, 'order', $1 + g, 'OrderStatusChanged', 'order.status_changed',
            'application/x-protobuf', '', t.at, t.at
       from generate_series($2, $3) g,
            (select greatest(now() - interval '10 minutes',
                             date_trunc('day', now() at time zone 'utc') at time zone 'utc') at) t";

/// [`CHANGED_PER_PASS`] orders, spread over all of them, publish one more event, which the
/// consumer applies: what the next incremental pass must look at.
async fn change(orders: &PgPool, mail: &PgPool, aggregates: i64, pass: i64) -> anyhow::Result<()> {
    let step = aggregates / CHANGED_PER_PASS;
    let bump = (pass + 1) * aggregates * 10;
    let picked: Vec<i64> = (0..CHANGED_PER_PASS)
        .map(|i| FIRST_ID + 1 + i * step + pass)
        .collect();
    sqlx::query(
        "insert into outbox_published
           (seq, aggregate_type, aggregate_id, event_type, routing_key, content_type, payload,
            created_at, published_at)
         select id + $2, 'order', id, 'OrderStatusChanged', 'order.status_changed',
                'application/x-protobuf', '', clock_timestamp(), clock_timestamp()
           from unnest($1::bigint[]) id",
    )
    .bind(&picked)
    .bind(bump)
    .execute(orders)
    .await?;
    sqlx::query(
        "update outbox_heads set last_seq = aggregate_id + $2, appended_at = now()
          where aggregate_type = 'order' and aggregate_id = any($1)",
    )
    .bind(&picked)
    .bind(bump)
    .execute(orders)
    .await?;
    sqlx::query(
        "update order_progress set last_seq = order_id + $2
          where shard = 0 and aggregate_type = 'order' and order_id = any($1)",
    )
    .bind(&picked)
    .bind(bump)
    .execute(mail)
    .await?;
    Ok(())
}

/// The reads a pass is made of, raw: one slice of heads in key order plus its watermarks (ms),
/// and a sequential count of every head (s).
async fn raw_reads(orders: &PgPool, mail: &PgPool) -> anyhow::Result<(f64, f64)> {
    let started = Instant::now();
    let ids: Vec<i64> = sqlx::query_scalar(
        "select aggregate_id from outbox_heads where (aggregate_type, aggregate_id) > ('order', $1)
          order by aggregate_type, aggregate_id limit $2",
    )
    .bind(FIRST_ID + 500_000)
    .bind(SLICE)
    .fetch_all(orders)
    .await?;
    let _: Vec<i64> = sqlx::query_scalar(
        "select p.last_seq from unnest($1::bigint[]) id
           join order_progress p on p.shard = 0 and p.aggregate_type = 'order' and p.order_id = id",
    )
    .bind(&ids)
    .fetch_all(mail)
    .await?;
    let slice_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = Instant::now();
    let _: i64 = sqlx::query_scalar("select count(*) from outbox_heads")
        .fetch_one(orders)
        .await?;
    Ok((slice_ms, started.elapsed().as_secs_f64()))
}

/// Removes the filled orders, so that the stack's databases are as before (best effort).
async fn clean(orders: &PgPool, mail: &PgPool) -> anyhow::Result<()> {
    sqlx::query("delete from outbox_heads where aggregate_id > $1")
        .bind(FIRST_ID)
        .execute(orders)
        .await?;
    sqlx::query("delete from outbox_published where aggregate_id > $1")
        .bind(FIRST_ID)
        .execute(orders)
        .await?;
    sqlx::query("delete from order_progress where order_id > $1")
        .bind(FIRST_ID)
        .execute(mail)
        .await?;
    Ok(())
}
