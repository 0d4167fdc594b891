//! Returns matched to their own message: lapin hands the oldest pending `basic.return` to
//! whichever confirm completes next, and RabbitMQ sends a return at once but coalesces acks, so
//! a wave mixing routable and unroutable messages can see the return attached to the wrong one.

use std::{collections::HashSet, time::Duration};

use outbox_kit::testing;

use crate::common::*;

/// A queue bound only to `order.created` while orders are created and advanced under load: every
/// `order.status_changed` is unroutable. Not one of them may leave the outbox (a deleted,
/// unroutable event is a loss, and its order's later events would be held by mail-svc forever)
/// until a queue is bound for it; then all of them arrive, in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unroutable_event_in_a_mixed_wave_is_never_counted_as_delivered() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("order.created")).await;
    let _relay = Relay::start(relay_config(
        &orders.database_url,
        &testing::amqp_url(),
        &exchange,
    ))
    .await;

    // Writers interleave creations and status changes of many orders, so waves mix routable
    // and unroutable messages.
    let events = spawn_writers(&orders.client, 8, 12, Duration::ZERO)
        .await
        .expect("writers");
    let mut seen = HashSet::new();
    let (mut created, mut changed) = (Vec::new(), Vec::new());
    for (order, seq) in &events {
        if seen.insert(*order) {
            created.push(*seq);
        } else {
            changed.push(*seq as i64);
        }
    }
    changed.sort_unstable();

    wait_until("every OrderCreated consumed", || async {
        consumer.has_all(&created)
    })
    .await;
    wait_until("every OrderCreated row deleted", || async {
        orders.outbox_seqs().await.len() <= changed.len()
    })
    .await;
    // A few more rounds of retries of the unroutable rows.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let left = orders.outbox_seqs().await;
    let lost: Vec<_> = changed.iter().filter(|s| !left.contains(s)).collect();
    assert!(
        lost.is_empty(),
        "unroutable OrderStatusChanged rows left the outbox unpublished: {lost:?}"
    );
    assert_eq!(left, changed, "only the unroutable rows remain");
    assert!(
        consumer
            .snapshot()
            .iter()
            .all(|r| r.routing_key == "order.created"),
        "nothing else was routable"
    );

    consumer.add_binding("order.status_changed").await;
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("every event consumed once routable", || async {
        consumer.has_all(&all)
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

/// A queue that refuses every `order.status_changed` (full, `x-overflow: reject-publish`): the
/// broker nacks those events. Each nacked row stays and only its order waits for its own retry;
/// every other event flows, and the relay as a whole does not back off. Once the refusing queue
/// is gone, everything arrives in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_nacked_event_holds_back_only_its_order() {
    use lapin::{
        Connection, ConnectionProperties,
        options::{QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions},
        types::{AMQPValue, FieldTable},
    };
    // The counter read below is process-wide: only in a process of its own does it count this
    // test's nacks alone.
    if testing::run_in_own_process(concat!(
        module_path!(),
        "::a_nacked_event_holds_back_only_its_order"
    )) {
        return;
    }
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let channel = conn.create_channel().await.expect("channel");
    let full = testing::unique("relay_full");
    let mut args = FieldTable::default();
    args.insert("x-max-length".into(), AMQPValue::LongInt(0));
    args.insert(
        "x-overflow".into(),
        AMQPValue::LongString("reject-publish".into()),
    );
    channel
        .queue_declare(
            full.as_str().into(),
            QueueDeclareOptions {
                auto_delete: true,
                ..Default::default()
            },
            args,
        )
        .await
        .expect("declare the refusing queue");
    channel
        .queue_bind(
            full.as_str().into(),
            exchange.as_str().into(),
            "order.status_changed".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("bind");
    let relay = Relay::start(relay_config(
        &orders.database_url,
        &testing::amqp_url(),
        &exchange,
    ))
    .await;

    let events = spawn_writers(&orders.client, 4, 6, Duration::ZERO)
        .await
        .expect("writers");
    let mut seen = HashSet::new();
    let (mut created, mut changed) = (Vec::new(), Vec::new());
    for (order, seq) in &events {
        if seen.insert(*order) {
            created.push(*seq);
        } else {
            changed.push(*seq as i64);
        }
    }
    changed.sort_unstable();
    wait_until("every OrderCreated delivered and deleted", || async {
        consumer.has_all(&created) && orders.outbox_seqs().await == changed
    })
    .await;
    wait_until("the nacked rows are retried", || async {
        relay.live.snapshot().refused_total >= 2 * created.len() as u64
    })
    .await;
    assert_eq!(orders.outbox_seqs().await, changed, "nacked rows stay");
    let s = relay.status().await;
    assert_eq!(s.consecutive_failures, 0, "no global backoff: {s:?}");
    // Every counter is exported at 0 from the start: the nacks must have counted.
    let metrics = relay.metrics().await;
    let nacked = outbox_kit::testing::Exposition::parse(&metrics)
        .value("relay_publish_failed_total{reason=\"nacked\"}");
    assert!(nacked.is_some_and(|v| v >= 1.0), "{metrics}");

    channel
        .queue_delete(full.as_str().into(), QueueDeleteOptions::default())
        .await
        .expect("delete the refusing queue");
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("every event consumed", || async { consumer.has_all(&all) }).await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    let _ = conn.close(200, "test done".into()).await;
    consumer.cleanup().await;
}
