//! A broker that stops reading (flow control, a stalled network) must not hang the leader or its
//! shutdown: the whole publish of a wave, sending included, runs under CONFIRM_TIMEOUT.

use std::time::{Duration, Instant};

use outbox_kit::testing;
use outbox_proto::orders::{events::v1::OrderPayload, v1::OrderStatus};
use prost::Message;

use crate::common::*;

/// Rows big enough (24 × 1 MiB) that sending them fills every socket buffer on the way.
async fn insert_big_rows(orders: &Orders, first_order: i64) -> Vec<u64> {
    let mut seqs = Vec::new();
    for order in first_order..first_order + 24 {
        let body = OrderPayload {
            id: order,
            status: OrderStatus::Pending as i32,
            customer_email: "x".repeat(1 << 20),
            previous_status: OrderStatus::Unspecified as i32,
        }
        .encode_to_vec();
        let seq: i64 = sqlx::query_scalar(
            "insert into outbox (aggregate_id, event_type, payload) \
             values ($1, 'OrderCreated', $2) returning seq",
        )
        .bind(order)
        .bind(body)
        .fetch_one(&orders.pool)
        .await
        .expect("insert");
        seqs.push(seq as u64);
    }
    seqs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broker_that_stops_reading_neither_hangs_the_leader_nor_its_shutdown() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let broker = StallProxy::start(&outbox_kit::testing::amqp_addr()).await;
    let mut cfg = relay_config(
        &orders.database_url,
        &outbox_kit::testing::amqp_url_via(broker.addr()),
        &exchange,
    );
    cfg.confirm_timeout = Some(Duration::from_secs(2));
    let mut relay = Relay::start(cfg).await;
    let first = orders.upsert(1, OrderStatus::Pending).await;
    wait_until("connected and publishing", || async {
        consumer.has_all(&[first])
    })
    .await;

    // The broker stops reading while a wave is being sent: the sends themselves block.
    broker.stall();
    let big = insert_big_rows(&orders, 1_000).await;
    wait_until(
        "the stalled wave times out and counts as a failure",
        || async { relay.status().await.consecutive_failures >= 1 },
    )
    .await;
    let s = relay.status().await;
    assert!(s.active, "still leading: the lease is proven meanwhile");
    assert_eq!(
        orders.outbox_seqs().await.len(),
        big.len(),
        "nothing deleted"
    );

    broker.resume();
    wait_until(
        "everything delivered once the broker reads again",
        || async { consumer.has_all(&big) },
    )
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;

    // Stalled again, mid-wave: SIGTERM (the shutdown token) still ends the relay, bounded by
    // CONFIRM_TIMEOUT and the few-second close timeouts, not by the broker.
    broker.stall();
    let _more = insert_big_rows(&orders, 2_000).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(20), relay.stop())
        .await
        .expect("shutdown must not hang on a stalled broker")
        .expect("stops cleanly");
    println!(
        "shutdown with the broker stalled mid-wave took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    broker.resume();
    consumer.cleanup().await;
}
