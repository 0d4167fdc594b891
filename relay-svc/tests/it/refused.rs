//! What relay-svc adds to the library's handling of events it cannot deliver (the behaviour
//! itself is tested in `crates/outbox-relay/tests/it`): the quarantine of rows the default
//! encoding refuses in the orders outbox, and the figures it exports. Each test runs in a process
//! of its own: the counters read are process-wide.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::{Exposition, RefusingQueue};

use crate::common::*;

/// A row without a routing key (written the first orders outbox's way after migration 0006: by
/// an orders-svc of before 0003 still running, or by hand) and one with headers that are not a
/// JSON object of strings are quarantined, each with its reason; the quarantine shows in the
/// figures and the metrics, and other orders flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rows_the_encoding_refuses_are_quarantined_and_counted() {
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::rows_the_encoding_refuses_are_quarantined_and_counted"
    )) {
        return;
    }
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let valid = payload(900_001, OrderStatus::Pending, OrderStatus::Unspecified);
    let keyless: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, payload) \
         values (900001, 'OrderCreated', $1) returning seq",
    )
    .bind(&valid)
    .fetch_one(&orders.pool)
    .await
    .expect("insert the row without a routing key");
    let bad_headers: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, routing_key, headers, payload) \
         values (900002, 'OrderCreated', 'order.created', '[1]', $1) returning seq",
    )
    .bind(&valid)
    .fetch_one(&orders.pool)
    .await
    .expect("insert the row with unreadable headers");
    let relay = Relay::start_for(&orders, &exchange).await;
    let other = orders.upsert(1, OrderStatus::Pending).await;
    wait_until("other orders flow", || async { consumer.has_all(&[other]) }).await;

    wait_until("the quarantine shows", || async {
        relay.live.snapshot().quarantined == 2
    })
    .await;
    let reasons: Vec<(i64, String)> =
        sqlx::query_as("select seq, reason from outbox_quarantine order by seq")
            .fetch_all(&orders.pool)
            .await
            .expect("reasons");
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons[0].0, keyless);
    assert!(reasons[0].1.contains("no routing key"), "{reasons:?}");
    assert_eq!(reasons[1].0, bad_headers);
    assert!(
        reasons[1].1.contains("headers are not a JSON object"),
        "{reasons:?}"
    );
    assert_eq!(relay.status().await.consecutive_failures, 0);

    // Counted (every counter is exported at 0 from the start, and this test has the process to
    // itself).
    let metrics = relay.metrics().await;
    let exposed = Exposition::parse(&metrics);
    for name in [
        "relay_quarantined_total",
        "relay_publish_failed_total{reason=\"corrupt\"}",
        "relay_outbox_quarantined",
    ] {
        let counted = exposed.value(name);
        assert!(counted.is_some_and(|v| v >= 2.0), "{name} in:\n{metrics}");
    }
    consumer.cleanup().await;
}

/// An event the broker nacks (its queue is full, `x-overflow: reject-publish`) is counted as
/// `relay_publish_failed_total{reason="nacked"}`, and delivered once the queue is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_nacked_event_is_counted_in_the_metrics() {
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::a_nacked_event_is_counted_in_the_metrics"
    )) {
        return;
    }
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let full = RefusingQueue::declare("relay_full").await;
    full.bind(&exchange, "order.status_changed").await;
    let relay = Relay::start_for(&orders, &exchange).await;

    let created = orders.upsert(1, OrderStatus::Pending).await;
    let paid = orders.upsert(1, OrderStatus::Paid).await;
    wait_until("the nacked event is retried", || async {
        relay.live.snapshot().refused_total >= 2
    })
    .await;
    let metrics = relay.metrics().await;
    let nacked = Exposition::parse(&metrics).value("relay_publish_failed_total{reason=\"nacked\"}");
    assert!(nacked.is_some_and(|v| v >= 1.0), "{metrics}");

    full.delete().await;
    wait_until("both events consumed", || async {
        consumer.has_all(&[created, paid])
    })
    .await;
    consumer.cleanup().await;
}
