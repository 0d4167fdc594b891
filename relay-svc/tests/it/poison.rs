//! Per-row problems hold back only their own order: rows that can never be encoded go to
//! quarantine (and block their order until an operator moves them back), everything else flows.

use std::time::Duration;

use outbox_kit::testing;
use outbox_proto::orders::v1::OrderStatus;
use sqlx::PgPool;

use crate::common::*;

/// Inserts an outbox row as a writer would (raw SQL: no NOTIFY); returns its seq.
async fn insert_row(
    pool: &PgPool,
    order: i64,
    event_type: &str,
    prev_seq: Option<i64>,
    payload: &[u8],
) -> i64 {
    sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, prev_seq, payload) \
         values ($1, $2, $3, $4) returning seq",
    )
    .bind(order)
    .bind(event_type)
    .bind(prev_seq)
    .bind(payload)
    .fetch_one(pool)
    .await
    .expect("insert outbox row")
}

async fn count_in(pool: &PgPool, table: &str, seqs: &[i64]) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select count(*) from {table} where seq = any($1)"
    )))
    .bind(seqs)
    .fetch_one(pool)
    .await
    .expect("count")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// 300 undecodable rows at the head of the outbox, then normal load: the normal events arrive
/// promptly (the old relay read the same poison batch every cycle and backed off globally for
/// up to 30 s, so nothing else ever went out), and every poison row is still there, unpublished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hundred_poison_rows_at_the_head_do_not_slow_anyone_else() {
    // The counters read below are process-wide: only in a process of its own do they count
    // this test's rows alone.
    if testing::run_in_own_process(concat!(
        module_path!(),
        "::three_hundred_poison_rows_at_the_head_do_not_slow_anyone_else"
    )) {
        return;
    }
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;

    // 150 orders with two undecodable rows each: an unknown event type (a rolling deploy that
    // emits a new event), and a payload that is not an OrderPayload.
    let mut poison = Vec::new();
    for i in 0..150 {
        let order = 900_000 + i;
        let valid = payload(order, OrderStatus::Pending, OrderStatus::Unspecified);
        let first = insert_row(&orders.pool, order, "OrderTeleported", None, &valid).await;
        let second = insert_row(
            &orders.pool,
            order,
            "OrderStatusChanged",
            Some(first),
            &[0xff, 0xff, 0xff, 0x01],
        )
        .await;
        poison.extend([first, second]);
    }

    let mut cfg = relay_config(&orders.database_url, &testing::amqp_url(), &exchange);
    // The shipped defaults: the old relay's global backoff would climb to 30 s.
    cfg.batch_size = 256;
    cfg.backoff_min = Some(Duration::from_millis(200));
    cfg.backoff_max = Some(Duration::from_secs(30));
    cfg.poll_interval = Some(Duration::from_secs(1));
    let relay = Relay::start(cfg).await;

    let events = spawn_writers(&orders.client, 8, 10, Duration::from_millis(20))
        .await
        .expect("writers");
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("every normal event consumed", || async {
        consumer.has_all(&all)
    })
    .await;

    let received = consumer.snapshot();
    let mut latencies: Vec<f64> = received
        .iter()
        .filter(|r| all.contains(&r.event.seq))
        .map(|r| (r.received_at.timestamp_millis() - r.event.ts_ms) as f64 / 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let (p50, p95, max) = (
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        latencies[latencies.len() - 1],
    );
    println!(
        "commit -> queue with 300 poison rows at the head: p50 {p50:.3}s p95 {p95:.3}s max {max:.3}s ({} events)",
        latencies.len()
    );
    assert!(
        p95 <= 5.0,
        "normal events must not wait behind poison rows: p95 {p95:.3}s"
    );
    assert_complete_and_ordered(&received, &chains_of(&events));

    // Every poison row is still there, in the outbox or in quarantine; none was published.
    let in_outbox = count_in(&orders.pool, "outbox", &poison).await;
    let quarantined = count_in(&orders.pool, "outbox_quarantine", &poison).await;
    assert_eq!(in_outbox + quarantined, 300, "no poison row may vanish");
    assert_eq!(
        quarantined, 150,
        "the first row of each order is quarantined; the second waits behind it"
    );
    let published: Vec<u64> = consumer
        .seqs()
        .into_iter()
        .filter(|s| poison.contains(&(*s as i64)))
        .collect();
    assert!(published.is_empty(), "poison published: {published:?}");
    let reasons: Vec<String> =
        sqlx::query_scalar("select reason from outbox_quarantine order by seq")
            .fetch_all(&orders.pool)
            .await
            .expect("reasons");
    assert!(
        reasons.iter().any(|r| r.contains("OrderTeleported")),
        "{reasons:?}"
    );

    let live = relay.live.snapshot();
    assert_eq!(live.quarantined_total, 150);
    wait_until("the quarantine and the held rows show", || async {
        let live = relay.live.snapshot();
        let s = relay.status().await;
        live.quarantined == 150 && s.backlog == 150
    })
    .await;
    assert_eq!(relay.status().await.consecutive_failures, 0);
    let metrics = relay.metrics().await;
    // Counted (every counter is exported at 0 from the start, and this test has the process to
    // itself).
    let exposed = outbox_kit::testing::Exposition::parse(&metrics);
    for name in [
        "relay_quarantined_total",
        "relay_publish_failed_total{reason=\"corrupt\"}",
    ] {
        let counted = exposed.value(name);
        assert!(counted.is_some_and(|v| v >= 150.0), "{name} in:\n{metrics}");
    }
    assert!(
        exposed.value("relay_outbox_quarantined").is_some(),
        "relay_outbox_quarantined in:\n{metrics}"
    );
    consumer.cleanup().await;
}

/// An operator moves a quarantined row back into the outbox (here after repairing its payload):
/// it is published normally, then its order's later events that waited behind it, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_row_moved_back_from_quarantine_is_published_and_unblocks_its_order() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let _relay = Relay::start(relay_config(
        &orders.database_url,
        &testing::amqp_url(),
        &exchange,
    ))
    .await;

    let order = 4242;
    let broken = insert_row(&orders.pool, order, "OrderCreated", None, b"\xff\xff").await;
    let paid = insert_row(
        &orders.pool,
        order,
        "OrderStatusChanged",
        Some(broken),
        &payload(order, OrderStatus::Paid, OrderStatus::Pending),
    )
    .await;
    let other = orders.upsert(1, OrderStatus::Pending).await;

    wait_until(
        "the broken row is quarantined, other orders flow",
        || async {
            count_in(&orders.pool, "outbox_quarantine", &[broken]).await == 1
                && consumer.has_all(&[other])
        },
    )
    .await;
    // Several polls later, the order's later (valid) event still waits behind it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(orders.outbox_seqs().await, [paid]);
    assert!(!consumer.has_all(&[paid as u64]), "must not overtake");

    // The operator repairs the row and moves it back (the statement in migration 0002).
    sqlx::query("update outbox_quarantine set payload = $2 where seq = $1")
        .bind(broken)
        .bind(payload(
            order,
            OrderStatus::Pending,
            OrderStatus::Unspecified,
        ))
        .execute(&orders.pool)
        .await
        .expect("repair");
    sqlx::query(
        "with r as (delete from outbox_quarantine where seq = $1 \
                    returning seq, aggregate_id, event_type, prev_seq, payload, traceparent, \
                              created_at) \
         insert into outbox (seq, aggregate_id, event_type, prev_seq, payload, traceparent, \
                             created_at) \
         overriding system value select * from r",
    )
    .bind(broken)
    .execute(&orders.pool)
    .await
    .expect("move back");

    wait_until(
        "the released row and its successor are published",
        || async { consumer.has_all(&[broken as u64, paid as u64]) },
    )
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert_eq!(
        count_in(&orders.pool, "outbox_quarantine", &[broken]).await,
        0
    );
    assert_complete_and_ordered(
        &consumer.snapshot(),
        &chains_of(&[(1, other), (order, broken as u64), (order, paid as u64)]),
    );
    consumer.cleanup().await;
}
