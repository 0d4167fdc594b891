//! The mail queue's statements, counted and never timed: `EXPLAIN (ANALYZE, BUFFERS, FORMAT
//! JSON)` of the very statement the service runs, against the real PostgreSQL, on a backlog
//! queued through the consumer's own batch path.
//!
//! The mailer's claim must cost O(batch) whatever the backlog, with or without statistics
//! (issue 24). The claim before migration 0006 chose, on a table not analysed yet, a
//! nested-loop anti join that read every unsent mail for each mail claimed: with this test's
//! 20,000 unsent mails, 2,560,071 rows visited and 1,287,366 buffers for a 64-mail claim
//! (71 rows and 211 buffers once analysed); the head walk visits 64 rows and 69 buffers either
//! way.

use mail_svc::{
    db,
    event::{Event, Kind},
    process,
};
use outbox_kit::testing;
use outbox_proto::orders::v1::OrderStatus;
use serde_json::Value;
use sqlx::{Connection, PgConnection, PgPool};

/// Orders with mails waiting, and mails in all: each order has ten, its first one its head.
const ORDERS: i64 = 2_000;
const MAILS: i64 = 20_000;
/// Mails per claim (the default BATCH_SIZE).
const BATCH: i64 = 64;

/// A fresh database holding [`MAILS`] unsent mails of [`ORDERS`] orders, queued by
/// `process::apply_batch` (the consumer's transactions) from events that arrived at once, seqs
/// interleaved across the orders as an outbox hands them out; a tenth of the orders' first mails
/// wait for their next attempt. Autovacuum is off for the table, so that it has no statistics,
/// as after a burst into a fresh or just restored database.
async fn backlog() -> (PgPool, String) {
    let url = testing::fresh_database_url("mail_cost");
    let pool = outbox_kit::db::connect(&url, 4).await.expect("database");
    db::MIGRATOR.run(&pool).await.expect("migrations");
    sqlx::query("alter table mails set (autovacuum_enabled = off)")
        .execute(&pool)
        .await
        .expect("autovacuum off");
    let events: Vec<Event> = (1..=MAILS)
        .map(|seq| {
            let order_id = (seq - 1) % ORDERS + 1;
            let first = seq <= ORDERS;
            Event {
                shard: 0,
                seq,
                order_id,
                prev_seq: (!first).then_some(seq - ORDERS),
                kind: if first {
                    Kind::Created
                } else {
                    Kind::StatusChanged(OrderStatus::Paid)
                },
                status: if first {
                    OrderStatus::Pending
                } else {
                    OrderStatus::Paid
                },
                recipient: format!("customer{order_id}@example.com"),
                ts_ms: 1_792_076_127_301,
            }
        })
        .collect();
    for chunk in events.chunks(500) {
        let items: Vec<process::Item<'_>> = chunk
            .iter()
            .map(|event| process::Item {
                event,
                traceparent: None,
            })
            .collect();
        let outcomes = process::apply_batch(&pool, "cost-test", &items)
            .await
            .expect("batch");
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, Some(process::Outcome::Processed(_)))),
            "every event is processed"
        );
    }
    let (unsent, heads): (i64, i64) = sqlx::query_as(
        "select count(*) filter (where sent_at is null), count(*) filter (where head) from mails",
    )
    .fetch_one(&pool)
    .await
    .expect("count");
    assert_eq!((unsent, heads), (MAILS, ORDERS), "one head per order");
    // A tenth of the heads were deferred by the server (greylisted), as `db::mark_deferred`
    // leaves them: due in an hour.
    sqlx::query(
        "update mails set attempts = 1, last_error = '451 greylisted',
                          next_attempt_at = clock_timestamp() + interval '1 hour'
          where head and seq % 10 = 3",
    )
    .execute(&pool)
    .await
    .expect("defer");
    (pool, url)
}

/// What one execution of a plan handled, from its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cost {
    /// Rows returned.
    rows: i64,
    /// Rows the scans read, and the rows filters and join filters threw away, over all loops.
    visited: i64,
    /// Shared buffers hit and read by the execution (planning not counted).
    buffers: i64,
}

fn cost(explain: &Value) -> Cost {
    let top = &explain[0]["Plan"];
    let num = |node: &Value, key: &str| node[key].as_f64().unwrap_or(0.0);
    let mut visited = 0.0;
    let mut stack = vec![top];
    while let Some(node) = stack.pop() {
        // Per-loop averages in EXPLAIN's output: times the loops.
        let loops = num(node, "Actual Loops");
        let is_scan = node["Node Type"]
            .as_str()
            .is_some_and(|t| t.ends_with("Scan"));
        if is_scan {
            visited += num(node, "Actual Rows") * loops;
        }
        for removed in [
            "Rows Removed by Filter",
            "Rows Removed by Join Filter",
            "Rows Removed by Index Recheck",
        ] {
            visited += num(node, removed) * loops;
        }
        if let Some(children) = node["Plans"].as_array() {
            stack.extend(children);
        }
    }
    Cost {
        rows: num(top, "Actual Rows") as i64,
        visited: visited as i64,
        buffers: (num(top, "Shared Hit Blocks") + num(top, "Shared Read Blocks")) as i64,
    }
}

/// EXPLAIN (ANALYZE, BUFFERS) of [`db::CLAIM_SQL`] for a claim of [`BATCH`], as a prepared
/// statement (as sqlx runs it) with `plan_cache_mode` (`force_custom_plan`: planned for the
/// batch size given, as the first executions are; `force_generic_plan`: planned once for any,
/// as PostgreSQL may switch to after five). The claim's locks are rolled back.
async fn explain_claim(url: &str, plan_cache_mode: &str) -> (Cost, Value) {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    let mut tx = conn.begin().await.expect("begin");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "set local plan_cache_mode = {plan_cache_mode};
         prepare claim(bigint) as {}",
        db::CLAIM_SQL
    )))
    .execute(&mut *tx)
    .await
    .expect("prepare the claim");
    let plan: Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "explain (analyze, buffers, format json) execute claim({BATCH})"
    )))
    .fetch_one(&mut *tx)
    .await
    .expect("explain");
    tx.rollback().await.expect("rollback");
    let _ = conn.close().await;
    (cost(&plan), plan)
}

/// The claim's bounds: what a claim of [`BATCH`] may handle, whatever the backlog. An index walk
/// reads each claimed row once (plus the index pages); the locks touch each row's page again.
fn assert_o_batch(what: &str, (c, plan): &(Cost, Value)) {
    assert_eq!(c.rows, BATCH, "{what}: a full batch claimed\n{plan:#}");
    assert!(
        c.visited <= 2 * BATCH,
        "{what}: the claim visited {} rows for {BATCH} claimed with {MAILS} mails queued \
         (bound {}): its cost grows with the backlog\n{plan:#}",
        c.visited,
        2 * BATCH
    );
    assert!(
        c.buffers <= 4 * BATCH,
        "{what}: the claim touched {} buffers for {BATCH} claimed with {MAILS} mails queued \
         (bound {}): its cost grows with the backlog\n{plan:#}",
        c.buffers,
        4 * BATCH
    );
}

#[tokio::test]
async fn a_claim_costs_o_batch_with_20000_unsent_mails_with_and_without_statistics() {
    let (pool, url) = backlog().await;
    let analysed: i64 =
        sqlx::query_scalar("select count(*) from pg_stats where tablename = 'mails'")
            .fetch_one(&pool)
            .await
            .expect("pg_stats");
    assert_eq!(analysed, 0, "the table has no statistics yet");

    let mut figures = Vec::new();
    for stats in ["no statistics", "analysed"] {
        if stats == "analysed" {
            sqlx::query("analyze mails")
                .execute(&pool)
                .await
                .expect("analyze");
        }
        for mode in ["force_custom_plan", "force_generic_plan"] {
            let what = format!("{stats}, {mode}");
            let explained = explain_claim(&url, mode).await;
            figures.push(format!(
                "{what}: {} rows visited, {} buffers",
                explained.0.visited, explained.0.buffers
            ));
            assert_o_batch(&what, &explained);
        }
    }
    println!(
        "claim of {BATCH} with {MAILS} unsent mails of {ORDERS} orders:\n  {}",
        figures.join("\n  ")
    );

    // What the statement claims: each order's first mail (its lowest seq), the longest waiting
    // first, one per order, passing over the deferred ones.
    let mut tx = pool.begin().await.expect("begin");
    let claimed = db::claim_batch(&mut tx, BATCH).await.expect("claim");
    let seqs: Vec<i64> = claimed.iter().map(|m| m.seq).collect();
    let due: Vec<i64> = (1..).filter(|s| s % 10 != 3).take(BATCH as usize).collect();
    assert_eq!(seqs, due);
    tx.rollback().await.expect("rollback");
    pool.close().await;
}
