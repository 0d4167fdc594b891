//! A silent network, for real: kit's `Proxy` black-holes a connection (no byte either way,
//! nothing closed, as a firewall or a half-dead NAT does) under load. The broker side: the relay
//! notices within two heartbeats, replaces the connection with the next address of its list and
//! publishes everything, in chain order. The database side: no cycle hangs on a silent socket;
//! the relay steps down, and leads and publishes again once the database answers.
//!
//! The figures are printed (`--nocapture`); the bounds asserted are loose on purpose.

use std::time::{Duration, Instant};

use outbox_testkit::Proxy;

use crate::common::*;

/// A short heartbeat, so the test does not wait for the default's 20 s.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// Recovery after a database black hole takes a lease and a few connect time-outs: more than
/// `wait_until`'s patience on a busy machine.
async fn wait_long<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_broker_is_noticed_within_two_heartbeats_and_the_next_address_takes_over() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    // Two addresses of the one broker: the first goes silent, the second stays.
    let first = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let second = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let amqp_url = format!(
        "{},{}",
        outbox_testkit::amqp_url_via(first.addr()),
        outbox_testkit::amqp_url_via(second.addr())
    );
    let mut cfg = relay_config(&orders.database_url, &amqp_url, &exchange);
    cfg.server.liveness.amqp_heartbeat = HEARTBEAT;
    // Long enough that only the heartbeat can tell (the issue: a 15 s confirm time-out did).
    cfg.confirm_timeout = Duration::from_secs(60);
    let relay = Relay::start(cfg).await;

    let writers = spawn_writers(&orders.client, 4, 30, Duration::from_millis(20));
    wait_until(
        "the stream is flowing through the first address",
        || async { consumer.seqs().len() >= 20 },
    )
    .await;
    assert_eq!(second.connections(), 0, "the first address is used first");

    let silent = Instant::now();
    first.blackhole();
    wait_until("the relay notices the silent connection", || async {
        relay.live.snapshot().amqp_reconnects >= 1
    })
    .await;
    let noticed = silent.elapsed();
    wait_long("publishing again, through the second address", || async {
        second.connections() >= 1 && relay.live.broker_lost().is_none()
    })
    .await;
    let resumed = silent.elapsed();
    outbox_testkit::assert_black_hole_noticed(
        HEARTBEAT,
        noticed,
        "publishing on the next address",
        resumed,
    );

    let events = writers.await.expect("writers");
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_long("everything consumed", || async { consumer.has_all(&all) }).await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    let received = consumer.snapshot();
    println!(
        "{} events, {} deliveries ({} duplicates: a wave whose confirms the black hole kept)",
        all.len(),
        received.len(),
        received.len() - all.len()
    );
    assert_complete_and_ordered(&received, &chains_of(&events));
    let s = relay.status().await;
    assert!(s.active && s.consecutive_failures == 0, "{s:?}");
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_database_hangs_no_cycle_and_publishing_resumes() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let via_proxy = outbox_testkit::pg_url_via(db.addr(), &orders.database);
    let mut cfg = relay_config(&via_proxy, &outbox_testkit::amqp_url(), &exchange);
    cfg.server.liveness.db_statement_timeout = Duration::from_secs(2);
    // The swallowed lock session holds the lock until a standby's lease check ends it.
    cfg.leader_lease = Duration::from_secs(4);
    let relay = Relay::start(cfg).await;

    // orders-svc reaches the database directly: writes go on through the relay's outage.
    let writers = spawn_writers(&orders.client, 4, 20, Duration::from_millis(20));
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;

    let silent = Instant::now();
    db.blackhole();
    // Every socket it had is silent: the lease's ping gets no answer, and the cycle in flight
    // must not wait on its own silent socket forever.
    wait_until("the relay steps down", || async {
        !relay.live.snapshot().active
    })
    .await;
    let noticed = silent.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The network is back; the connections the black hole swallowed stay silent for good.
    db.restore();
    let back = Instant::now();
    let events = writers.await.expect("writers");
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_long("everything consumed after the database is back", || async {
        consumer.has_all(&all)
    })
    .await;
    wait_long(
        "the outbox is drained and the relay leads again",
        || async {
            let s = relay.status().await;
            s.active && s.backlog == 0 && orders.outbox_seqs().await.is_empty()
        },
    )
    .await;
    println!(
        "database black hole: the relay stepped down after {noticed:.1?}; everything published \
         {:.1?} after the network came back",
        back.elapsed()
    );
    assert!(
        noticed <= Duration::from_secs(20),
        "stepped down after {noticed:?}"
    );
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}
