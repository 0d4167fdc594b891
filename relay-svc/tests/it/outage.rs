//! Real outages through kit's TCP proxy (broker, database) and a crash between the broker's
//! confirm and the outbox delete.

use std::time::Duration;

use outbox_proto::orders::v1::OrderStatus;
use outbox_relay::hook::BeforeDelete;
use outbox_testkit::Proxy;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broker_outage_mid_stream_loses_nothing_and_shows_the_backlog() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let broker = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let amqp_url = outbox_testkit::amqp_url_via(broker.addr());
    let relay = Relay::start(relay_config(&orders.database_url, &amqp_url, &exchange)).await;

    // Writers run through the outage; the cut lands while the relay is publishing.
    let writers = spawn_writers(&orders.client, 4, 5, Duration::from_millis(10));
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 10
    })
    .await;
    broker.cut();
    let events = writers.await.expect("writers");
    wait_until(
        "GetStatus shows the backlog (matching the table) and failures",
        || async {
            let s = relay.status().await;
            let rows = orders.outbox_seqs().await.len() as u64;
            s.active && s.backlog > 0 && s.backlog == rows && s.consecutive_failures > 0
        },
    )
    .await;
    assert!(relay.status().await.oldest_unsent_age_ms > 0);
    let connections = broker.connections();

    broker.restore();
    all_arrive(
        "everything consumed after the broker is back",
        &consumer,
        &orders,
        &events,
    )
    .await;
    wait_until("GetStatus shows recovery", || async {
        let s = relay.status().await;
        s.backlog == 0 && s.consecutive_failures == 0
    })
    .await;
    assert!(broker.connections() > connections, "the relay reconnected");
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_outage_is_survived_and_publishing_resumes() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let via_proxy = outbox_testkit::pg_url_via(db.addr(), &orders.database);
    let relay = Relay::start(relay_config(
        &via_proxy,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;

    let mut events = vec![(1, orders.upsert(1, OrderStatus::Pending).await)];
    wait_until("published before the outage", || async {
        consumer.has_all(&[events[0].1])
    })
    .await;

    db.cut();
    // orders-svc reaches the database directly: writes go on during the relay's outage.
    for id in 1..=4 {
        let status = if id == 1 {
            OrderStatus::Paid
        } else {
            OrderStatus::Pending
        };
        events.push((id, orders.upsert(id, status).await));
    }
    // Its lock connection is gone, and with it the lock: it must stop publishing.
    wait_until("the relay steps down and reports failures", || async {
        let s = relay.status().await;
        !s.active && s.consecutive_failures > 0
    })
    .await;

    db.restore();
    all_arrive(
        "everything consumed after the database is back",
        &consumer,
        &orders,
        &events,
    )
    .await;
    wait_until("leading again, no failures", || async {
        let s = relay.status().await;
        s.active && s.consecutive_failures == 0 && s.backlog == 0
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

/// Every relay has this window: the broker confirmed, the relay dies before deleting. The rows
/// must still be there and go out again (duplicates), never be lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_killed_between_confirm_and_delete_republishes_on_restart() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let mut events = Vec::new();
    for id in 1..=3 {
        for status in [OrderStatus::Pending, OrderStatus::Paid] {
            events.push((id, orders.upsert(id, status).await));
        }
    }

    let (hook, mut reached) = BeforeDelete::new();
    let mut cfg = relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
    cfg.before_delete = Some(hook);
    let doomed = Relay::start(cfg).await;
    let confirmed = tokio::time::timeout(PATIENCE, reached.wait_for(|s| !s.is_empty()))
        .await
        .expect("the relay reaches the delete")
        .expect("hook")
        .clone();
    let confirmed: Vec<u64> = confirmed.iter().map(|s| *s as u64).collect();
    assert_eq!(confirmed.len(), 6, "one batch, all confirmed");
    wait_until("the confirmed events reached the queue", || async {
        consumer.has_all(&confirmed)
    })
    .await;
    assert_eq!(
        orders.outbox_seqs().await.len(),
        6,
        "confirmed, not yet deleted"
    );
    doomed.crash();

    let _relay = Relay::start_for(&orders, &exchange).await;
    wait_until("every event published again", || async {
        let seqs = consumer.seqs();
        confirmed
            .iter()
            .all(|c| seqs.iter().filter(|s| *s == c).count() >= 2)
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}
