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
//!
//! The retention prune (MAIL_RETENTION) must cost O(batch) whatever the table's size, and leave
//! the claim's cost as it was.

use std::{sync::Arc, time::Duration};

use mail_svc::{
    db,
    event::{Event, Kind},
    mailer::{Mailer, Transport},
    process, retention,
};
use outbox_proto::orders::v1::OrderStatus;
use serde_json::Value;
use sqlx::{Connection, PgConnection, PgPool};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Orders with mails waiting, and mails in all: each order has ten, its first one its head.
const ORDERS: i64 = 2_000;
const MAILS: i64 = 20_000;
/// Mails per claim (the default BATCH_SIZE).
const BATCH: i64 = 64;

/// A fresh database with mail-svc's tables. Autovacuum is off for `mails`, so that it has no
/// statistics, as after a burst into a fresh or just restored database (and no vacuum clears
/// what a prune leaves behind).
async fn database() -> (PgPool, String) {
    let url = outbox_testkit::fresh_database_url("mail_cost");
    let pool = outbox_kit::db::connect(&url, 4).await.expect("database");
    db::MIGRATOR.run(&pool).await.expect("migrations");
    sqlx::query("alter table mails set (autovacuum_enabled = off)")
        .execute(&pool)
        .await
        .expect("autovacuum off");
    (pool, url)
}

/// Queues the mails of `count` events from seq `first_seq` on, spread over `orders` orders from
/// `first_order` on (seqs interleaved across the orders, as an outbox hands them out, each
/// order's chain in seq order), through `process::apply_batch`: the consumer's transactions.
async fn queue(pool: &PgPool, first_seq: i64, count: i64, first_order: i64, orders: i64) {
    let events: Vec<Event> = (first_seq..first_seq + count)
        .map(|seq| {
            let n = seq - first_seq;
            let order_id = first_order + n % orders;
            let first = n < orders;
            Event {
                shard: 0,
                seq,
                order_id,
                prev_seq: (!first).then_some(seq - orders),
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
        let envelopes: Vec<_> = chunk
            .iter()
            .map(|event| process::envelope(event, None, None))
            .collect();
        let outcomes = process::apply_batch(pool, "cost-test", &envelopes)
            .await
            .expect("batch");
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, Some(outbox_inbox::Outcome::Processed { .. }))),
            "every event is processed"
        );
    }
}

/// (unsent mails, heads).
async fn unsent_and_heads(pool: &PgPool) -> (i64, i64) {
    sqlx::query_as(
        "select count(*) filter (where sent_at is null and failed_at is null),
                count(*) filter (where head)
           from mails",
    )
    .fetch_one(pool)
    .await
    .expect("count")
}

/// [`MAILS`] unsent mails of [`ORDERS`] orders, as after a burst: each order has ten, its first
/// one its head; a tenth of the heads wait for their next attempt (deferred by the server).
async fn backlog() -> (PgPool, String) {
    let (pool, url) = database().await;
    queue(&pool, 1, MAILS, 1, ORDERS).await;
    assert_eq!(
        unsent_and_heads(&pool).await,
        (MAILS, ORDERS),
        "one head per order"
    );
    // As `db::mark_deferred` leaves a greylisted mail: due in an hour.
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
    /// Rows read from tables and indexes, and the rows filters and join filters threw away, over
    /// all loops.
    visited: i64,
    /// Shared buffers hit and read by the execution (planning not counted).
    buffers: i64,
}

fn cost(explain: &Value) -> Cost {
    let top = &explain[0]["Plan"];
    let num = |node: &Value, key: &str| node[key].as_f64().unwrap_or(0.0);
    let buffers = |node: &Value| num(node, "Shared Hit Blocks") + num(node, "Shared Read Blocks");
    let mut nodes = Vec::new();
    let mut stack = vec![top];
    while let Some(node) = stack.pop() {
        nodes.push(node);
        if let Some(children) = node["Plans"].as_array() {
            stack.extend(children);
        }
    }
    let mut visited = 0.0;
    for node in &nodes {
        // Per-loop averages in EXPLAIN's output: times the loops.
        let loops = num(node, "Actual Loops");
        // Scans only: the delete or insert node names its table too.
        if node.get("Relation Name").is_some() && node["Node Type"] != "ModifyTable" {
            visited += (num(node, "Actual Rows")
                + num(node, "Rows Removed by Filter")
                + num(node, "Rows Removed by Index Recheck"))
                * loops;
        }
        visited += num(node, "Rows Removed by Join Filter") * loops;
    }
    // A data-modifying CTE that the statement does not read runs after the plan: its buffers
    // are not in the top node's.
    let scanned: Vec<&str> = nodes
        .iter()
        .filter_map(|n| n["CTE Name"].as_str())
        .collect();
    let after: f64 = nodes
        .iter()
        .filter(|n| {
            n["Subplan Name"]
                .as_str()
                .and_then(|s| s.strip_prefix("CTE "))
                .is_some_and(|name| !scanned.contains(&name))
        })
        .map(|n| buffers(n))
        .sum();
    Cost {
        rows: num(top, "Actual Rows") as i64,
        visited: visited as i64,
        buffers: (buffers(top) + after) as i64,
    }
}

/// The buffers of a plan's index scans (a walk over dead index entries shows here).
fn index_walk_buffers(explain: &Value) -> i64 {
    let mut total = 0.0;
    let mut stack = vec![&explain[0]["Plan"]];
    while let Some(node) = stack.pop() {
        if node["Node Type"] == "Index Scan" {
            total += node["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                + node["Shared Read Blocks"].as_f64().unwrap_or(0.0);
        }
        if let Some(children) = node["Plans"].as_array() {
            stack.extend(children);
        }
    }
    total as i64
}

/// EXPLAIN (ANALYZE, BUFFERS) of `sql` (a statement of `db`) executed with `args`, as a prepared
/// statement (as sqlx runs it) with `plan_cache_mode` (`force_custom_plan`: planned for the
/// arguments given, as the first executions are; `force_generic_plan`: planned once for any, as
/// PostgreSQL may switch to after five). Rolled back: what it locked or deleted stays.
async fn explain(
    url: &str,
    sql: &str,
    types: &str,
    args: &str,
    plan_cache_mode: &str,
) -> (Cost, Value) {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    let mut tx = conn.begin().await.expect("begin");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "set local plan_cache_mode = {plan_cache_mode};
         prepare explained({types}) as {sql}"
    )))
    .execute(&mut *tx)
    .await
    .expect("prepare");
    let plan: Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "explain (analyze, buffers, format json) execute explained({args})"
    )))
    .fetch_one(&mut *tx)
    .await
    .expect("explain");
    tx.rollback().await.expect("rollback");
    let _ = conn.close().await;
    (cost(&plan), plan)
}

/// [`db::CLAIM_SQL`] for a claim of [`BATCH`], explained (see [`explain`]).
async fn explain_claim(url: &str, plan_cache_mode: &str) -> (Cost, Value) {
    explain(
        url,
        db::CLAIM_SQL,
        "bigint",
        &BATCH.to_string(),
        plan_cache_mode,
    )
    .await
}

/// The claim's bounds: what a claim of [`BATCH`] may handle, whatever the backlog. An index walk
/// reads each claimed row once (plus the index pages); the locks touch each row's page again.
fn assert_o_batch(what: &str, (c, plan): &(Cost, Value)) {
    assert_eq!(c.rows, BATCH, "{what}: a full batch claimed\n{plan:#}");
    assert!(
        c.visited <= 2 * BATCH,
        "{what}: the claim visited {} rows for {BATCH} claimed (bound {}): its cost grows with \
         the backlog\n{plan:#}",
        c.visited,
        2 * BATCH
    );
    assert!(
        c.buffers <= 4 * BATCH,
        "{what}: the claim touched {} buffers for {BATCH} claimed (bound {}): its cost grows \
         with the backlog\n{plan:#}",
        c.buffers,
        4 * BATCH
    );
}

/// Runs `check` under each condition a statement's plan may meet: on the table without
/// statistics and analysed, each as a custom and as a generic plan. `check` gets the condition's
/// name and the `plan_cache_mode` to explain with.
async fn under_every_plan(pool: &PgPool, mut check: impl AsyncFnMut(String, &'static str)) {
    for stats in ["no statistics", "analysed"] {
        if stats == "analysed" {
            sqlx::query("analyze mails")
                .execute(pool)
                .await
                .expect("analyze");
        }
        for mode in ["force_custom_plan", "force_generic_plan"] {
            check(format!("{stats}, {mode}"), mode).await;
        }
    }
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
    under_every_plan(&pool, async |what, mode| {
        let explained = explain_claim(&url, mode).await;
        figures.push(format!(
            "{what}: {} rows visited, {} buffers",
            explained.0.visited, explained.0.buffers
        ));
        assert_o_batch(&what, &explained);
    })
    .await;
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

/// Delivers every queued mail with the real mailer (the log mailer, two loops, claims of
/// [`BATCH`]); returns the rate, mails per second.
async fn drain(pool: &PgPool) -> f64 {
    let (unsent, _) = unsent_and_heads(pool).await;
    let started = std::time::Instant::now();
    let shutdown = CancellationToken::new();
    let mailer = Arc::new(
        Mailer::new(pool.clone(), Transport::Log, Arc::new(Notify::new()))
            .with_batch_size(BATCH as usize),
    );
    let loops: Vec<_> = (0..2)
        .map(|_| tokio::spawn(mailer.clone().run(shutdown.clone())))
        .collect();
    let deadline = started + Duration::from_secs(300);
    while unsent_and_heads(pool).await.0 > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the mailer did not drain {unsent} mails"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rate = unsent as f64 / started.elapsed().as_secs_f64();
    shutdown.cancel();
    for l in loops {
        l.await.expect("mailer loop");
    }
    rate
}

/// The prune's bounds for one batch of [`db::PRUNE_BATCH`]: the walk reads each row once and the
/// delete fetches it again by its ctid; buffers: the row's page to lock it, to fetch it and to
/// delete it, the visibility map's page twice on a vacuumed table, and the index pages.
fn assert_prune_o_batch(what: &str, (c, plan): &(Cost, Value)) {
    let batch = db::PRUNE_BATCH;
    assert!(
        c.visited <= 2 * batch,
        "{what}: the prune visited {} rows for a batch of {batch} (bound {})\n{plan:#}",
        c.visited,
        2 * batch
    );
    assert!(
        c.buffers <= 6 * batch,
        "{what}: the prune touched {} buffers for a batch of {batch} (bound {})\n{plan:#}",
        c.buffers,
        6 * batch
    );
}

/// MAIL_RETENTION's prune: a batch costs O(batch) (EXPLAIN of [`db::PRUNE_SENT_SQL`], with and
/// without statistics), deletes only mails sent before the cut-off, keeps `processed`, and
/// leaves the claim's cost as it was. Prints the mailer's drain rate and the prune's rate.
#[tokio::test]
async fn a_prune_costs_o_batch_and_leaves_the_claim_as_it_was() {
    const OLD: i64 = 10_000;
    const RECENT: i64 = 2_000;
    const WAITING: i64 = 5_000;
    let month = Duration::from_secs(30 * 86_400);
    let (pool, url) = database().await;

    // A burst of 10,000 mails (1,000 orders, ten each) delivered by the real mailer, each once
    // and every order's in chain order; then sent 40 days ago, as far as retention can tell.
    queue(&pool, 1, OLD, 1, OLD / 10).await;
    let drained = drain(&pool).await;
    let (unsent, out_of_order, attempts): (i64, i64, i64) = sqlx::query_as(
        "select (select count(*) from mails where sent_at is null),
                (select count(*) from mails m join mails n
                    on n.shard = m.shard and n.order_id = m.order_id and n.seq > m.seq
                   and n.sent_at < m.sent_at),
                (select sum(attempts)::bigint from mails)",
    )
    .fetch_one(&pool)
    .await
    .expect("sent");
    assert_eq!(
        (unsent, out_of_order, attempts),
        (0, 0, OLD),
        "each mail sent once, in order"
    );
    sqlx::query("update mails set sent_at = sent_at - interval '40 days'")
        .execute(&pool)
        .await
        .expect("age");
    // Mails sent just now, and a backlog waiting.
    queue(&pool, OLD + 1, RECENT, 10_001, RECENT).await;
    drain(&pool).await;
    queue(&pool, OLD + RECENT + 1, WAITING, 20_001, WAITING).await;
    let mut figures = Vec::new();
    // The claim index still holds the entries of the 12,000 heads sent (their old versions)
    // until a vacuum removes them: the first claim walks them (and marks them dead).
    let unvacuumed = explain_claim(&url, "force_custom_plan").await;
    figures.push(format!(
        "claim before any vacuum, after 12,000 mails sent: {} rows visited, {} buffers",
        unvacuumed.0.visited, unvacuumed.0.buffers
    ));
    // As autovacuum does with migration 0007's settings (it is off in this test).
    sqlx::query("vacuum mails")
        .execute(&pool)
        .await
        .expect("vacuum");
    let before = explain_claim(&url, "force_custom_plan").await;
    figures.push(format!(
        "claim before the prune: {} rows visited, {} buffers",
        before.0.visited, before.0.buffers
    ));
    assert_o_batch("before the prune", &before);

    let prune_args = |cursor: Option<chrono::DateTime<chrono::Utc>>| {
        let cursor = cursor.map_or("null".to_owned(), |c| format!("'{}'", c.to_rfc3339()));
        format!(
            "{cursor}, {}, {}, 'cost-test', '{}'",
            month.as_millis(),
            db::PRUNE_BATCH,
            db::PRUNED
        )
    };
    let types = "timestamptz, float8, bigint, text, text";
    under_every_plan(&pool, async |what, mode| {
        let explained = explain(&url, db::PRUNE_SENT_SQL, types, &prune_args(None), mode).await;
        assert_eq!(explained.0.rows, 1, "{what}");
        assert_eq!(
            explained.1[0]["Plan"]["Plans"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|n| n["Subplan Name"] == "CTE gone")
                .map(|n| n["Actual Rows"].as_i64()),
            Some(Some(db::PRUNE_BATCH)),
            "{what}: a full batch deleted\n{:#}",
            explained.1
        );
        figures.push(format!(
            "{what}: {} rows visited, {} buffers",
            explained.0.visited, explained.0.buffers
        ));
        assert_prune_o_batch(&what, &explained);
    })
    .await;

    // Half way through a long prune, the next batch starts at the cursor, not at the batches
    // already deleted.
    let mut cursor = None;
    for _ in 0..5 {
        let (rows, last) = db::prune_sent(&pool, "cost-test", month, cursor, db::PRUNE_BATCH)
            .await
            .expect("prune");
        assert_eq!(rows, db::PRUNE_BATCH);
        cursor = last;
    }
    for (what, from) in [("from the cursor", cursor), ("from the start", None)] {
        let explained = explain(
            &url,
            db::PRUNE_SENT_SQL,
            types,
            &prune_args(from),
            "force_custom_plan",
        )
        .await;
        figures.push(format!(
            "after 5 batches, {what}: {} rows visited, {} buffers, {} of them the index walk's",
            explained.0.visited,
            explained.0.buffers,
            index_walk_buffers(&explained.1)
        ));
        if from.is_some() {
            assert_prune_o_batch(what, &explained);
        }
    }

    // The rest, as the service prunes.
    let pruned = retention::prune_mails(&pool, "cost-test", month, &CancellationToken::new())
        .await
        .expect("prune");
    assert_eq!(pruned.rows, OLD - 5 * db::PRUNE_BATCH);
    let left: (i64, i64, i64) = sqlx::query_as(
        "select count(*) filter (where sent_at is not null),
                count(*) filter (where sent_at is null),
                (select sum(value)::bigint from counters where name = 'pruned')
           from mails",
    )
    .fetch_one(&pool)
    .await
    .expect("left");
    assert_eq!(
        left,
        (RECENT, WAITING, OLD),
        "the recent and the unsent are kept"
    );
    assert_eq!(
        db::stats(&pool).await.expect("stats").processed,
        OLD + RECENT + WAITING
    );

    // The claim is as cheap as before: the prune touches no unsent mail and no claim entry.
    for mode in ["force_custom_plan", "force_generic_plan"] {
        let after = explain_claim(&url, mode).await;
        figures.push(format!(
            "claim after the prune, {mode}: {} rows visited, {} buffers",
            after.0.visited, after.0.buffers
        ));
        assert_o_batch(&format!("after the prune, {mode}"), &after);
        assert!(
            after.0.buffers <= before.0.buffers + 8,
            "after the prune, {mode}: the claim touched {} buffers, {} before",
            after.0.buffers,
            before.0.buffers
        );
    }
    println!(
        "drain of {OLD} mails (1,000 orders, log mailer, 2 loops, debug build): {drained:.0} \
         mails/s\nprune of {} sent mails: {} batches in {:?}, {:.0} rows/s\n  {}",
        pruned.rows,
        pruned.batches,
        pruned.took,
        pruned.rows_per_second(),
        figures.join("\n  ")
    );
    pool.close().await;
}

/// The mailer's promotion of the next heads ([`db::PROMOTE_EARLIEST_UNSENT`]) on a connection with
/// the service's own session settings ([`mail_svc::config::Config::pool_options`]): planned for
/// its arguments every time (`plan_cache_mode`), prepared and run six times while `mails` held
/// 100 mails, analysed, then explained after a burst of [`MAILS`] mails, costs a few probes per
/// chain. At the end-to-end maximum, before the setting, PostgreSQL reused a generic plan cached
/// while the table was small, which joined the whole table to the chains and probed the index
/// once per row: 330,000 buffers for 18 chains, and the maximum halved (docs/BENCHMARKS.md,
/// "Speed round 3"). That plan depends on the statistics of the moment and did not come back in
/// this test without the setting, so the test checks the setting as well as the cost.
#[tokio::test]
async fn promoting_heads_costs_o_chains_after_the_table_grew_under_a_cached_plan() {
    use std::str::FromStr;
    const SMALL: i64 = 100;
    let (pool, url) = database().await;
    let cfg = crate::common::config(&crate::common::Names::new());
    let options = cfg.pool_options(
        &sqlx::postgres::PgConnectOptions::from_str(&url).expect("the test database's URL"),
    );
    let mut conn = PgConnection::connect_with(&options).await.expect("connect");
    let mode: String = sqlx::query_scalar("show plan_cache_mode")
        .fetch_one(&mut conn)
        .await
        .expect("plan_cache_mode");
    assert_eq!(
        mode, "force_custom_plan",
        "every statement planned for its own arguments"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "prepare promote(integer[], bigint[]) as {}",
        db::PROMOTE_EARLIEST_UNSENT
    )))
    .execute(&mut conn)
    .await
    .expect("prepare");
    // A small table, analysed: what the planner knows when the generic plan is cached.
    queue(&pool, 1, SMALL, 1, SMALL / 10).await;
    sqlx::query("analyze mails")
        .execute(&pool)
        .await
        .expect("analyze");
    for _ in 0..6 {
        sqlx::raw_sql("execute promote('{0}', '{1}')")
            .execute(&mut conn)
            .await
            .expect("promote on the small table");
    }
    queue(&pool, SMALL + 1, MAILS, SMALL / 10 + 1, ORDERS).await;
    const CHAINS: i64 = 16;
    let first_big = SMALL / 10 + 1;
    let orders: Vec<String> = (first_big..first_big + CHAINS)
        .map(|o| o.to_string())
        .collect();
    let shards = vec!["0"; CHAINS as usize].join(",");
    let mut tx = conn.begin().await.expect("begin");
    let plan: Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "explain (analyze, buffers, format json) execute promote('{{{shards}}}', '{{{}}}')",
        orders.join(",")
    )))
    .fetch_one(&mut *tx)
    .await
    .expect("explain");
    tx.rollback().await.expect("rollback");
    let c = cost(&plan);
    // Each chain: an index probe for its earliest unsent mail and one for that mail's row.
    assert!(
        c.buffers <= 20 * CHAINS && c.visited <= 10 * CHAINS,
        "promoting {CHAINS} chains' heads touched {} buffers and visited {} rows among {MAILS} \
         mails (bounds {} and {}): its plan walks the table\n{plan:#}",
        c.buffers,
        c.visited,
        20 * CHAINS,
        10 * CHAINS
    );
    let _ = conn.close().await;
    pool.close().await;
    outbox_testkit::drop_database(outbox_testkit::database_name(&url))
        .await
        .expect("drop the test database");
}
