//! Concurrent writers, and two relays with the active one killed mid-stream.

use std::time::Duration;

use crate::common::{self, *};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_committed_event_arrives_in_chain_order_under_concurrent_writers() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let mut cfg = relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
    // Small batches: many cycles, several waves per batch, rows committing mid-read.
    cfg.batch_size = 16;
    let relay = Relay::start(cfg).await;

    let events = spawn_writers(&orders.client, 8, 8, Duration::ZERO)
        .await
        .expect("writers");
    assert_eq!(events.len(), 8 * 8 * LIFECYCLE.len());
    all_arrive("every committed seq consumed", &consumer, &orders, &events).await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    let status = relay.status().await;
    assert_eq!(status.backlog, 0);
    assert!(status.published_total >= events.len() as u64);
    assert_eq!(
        status.last_published_seq,
        events.iter().map(|(_, s)| *s).max().expect("events")
    );
    consumer.cleanup().await;
}

/// Returns which of the two relays is active, once exactly one is.
async fn the_active_one(a: &Relay, b: &Relay) -> bool {
    let start = std::time::Instant::now();
    loop {
        let (sa, sb) = (a.status().await, b.status().await);
        if sa.active != sb.active {
            return sa.active;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "timed out waiting for exactly one active relay"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_takes_over_when_the_active_relay_is_killed_mid_stream() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let cfg = || {
        let mut c = relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
        c.batch_size = 8;
        c
    };
    let a = Relay::start(cfg()).await;
    let b = Relay::start(cfg()).await;
    let a_leads = the_active_one(&a, &b).await;
    // Several standby retries later, still exactly one.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(the_active_one(&a, &b).await, a_leads);
    let (active, standby) = if a_leads { (a, b) } else { (b, a) };

    let writers = spawn_writers(&orders.client, 6, 5, Duration::from_millis(15));
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;
    active.crash();
    wait_until("the standby takes over", || async {
        standby.status().await.active
    })
    .await;

    let events = writers.await.expect("writers");
    all_arrive("every committed seq consumed", &consumer, &orders, &events).await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_graceful_shutdown_hands_over_to_the_standby() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let cfg = || relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
    let a = Relay::start(cfg()).await;
    let b = Relay::start(cfg()).await;
    let (active, standby) = if the_active_one(&a, &b).await {
        (a, b)
    } else {
        (b, a)
    };
    let first = orders.upsert(1, common::LIFECYCLE[0]).await;
    wait_until("published by the leader", || async {
        consumer.has_all(&[first])
    })
    .await;

    let mut active = active;
    active.stop().await.expect("stops cleanly after shutdown");
    wait_until("the standby takes over", || async {
        standby.status().await.active
    })
    .await;
    let second = orders.upsert(1, common::LIFECYCLE[1]).await;
    wait_until("published by the new leader", || async {
        consumer.has_all(&[second])
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&[(1, first), (1, second)]));
    consumer.cleanup().await;
}
