//! A silent network, for real: kit's `Proxy` black-holes a connection (no byte either way,
//! nothing closed, as a firewall or a half-dead NAT does) while events flow. The broker side:
//! the consumer notices within two heartbeats and consumes again from the next address of its
//! list. The database side: no transaction, claim or mark waits on a silent socket forever (the
//! sockets the black hole swallowed stay silent for good). Either way every event is mailed
//! once, each order's mails in chain order.
//!
//! The figures are printed (`--nocapture`); the bounds asserted are loose on purpose.

use std::time::{Duration, Instant};

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::Proxy;

use crate::common::{
    self, Names, Publisher, TestMail, changed, config, created, eventually, start,
};

/// A short heartbeat, so the test does not wait for the default's 20 s.
const HEARTBEAT: Duration = Duration::from_secs(2);
const ORDERS: u64 = 20;
const STEPS: [OrderStatus; 3] = [
    OrderStatus::Paid,
    OrderStatus::Shipped,
    OrderStatus::Delivered,
];

/// Publishes every order's four events, a step of all orders at a time (seq `k * ORDERS +
/// order`), one event every `pause`: load that lasts through the black hole.
fn spawn_load(exchange: String, pause: Duration) -> tokio::task::JoinHandle<u64> {
    tokio::spawn(async move {
        let publisher = Publisher::connect(&exchange).await;
        let mut n = 0;
        for order in 1..=ORDERS {
            publisher
                .proto(&created(order, order as i64, "kuro@example.jp"))
                .await;
            n += 1;
            tokio::time::sleep(pause).await;
        }
        for (k, status) in STEPS.iter().enumerate() {
            let k = k as u64 + 1;
            for order in 1..=ORDERS {
                let seq = k * ORDERS + order;
                let ev = changed(seq, seq - ORDERS, order as i64, *status, "kuro@example.jp");
                publisher.proto(&ev).await;
                n += 1;
                tokio::time::sleep(pause).await;
            }
        }
        n
    })
}

/// Every event mailed once (one row per seq, sent), each order's mails sent in chain order.
async fn assert_all_mailed_once_in_chain_order(svc: &TestMail, events: u64) {
    eventually("every event mailed", 120, || async {
        let sent: i64 = sqlx::query_scalar("select count(*) from mails where sent_at is not null")
            .fetch_one(&svc.pool)
            .await
            .ok()?;
        (sent as u64 == events).then_some(())
    })
    .await;
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("select order_id, seq from mails order by order_id, sent_at, seq")
            .fetch_all(&svc.pool)
            .await
            .expect("mails");
    assert_eq!(rows.len() as u64, events, "one mail per event");
    for order in 1..=ORDERS as i64 {
        let seqs: Vec<i64> = rows
            .iter()
            .filter(|(o, _)| *o == order)
            .map(|(_, s)| *s)
            .collect();
        let chain: Vec<i64> = (0..4).map(|k| k * ORDERS as i64 + order).collect();
        assert_eq!(seqs, chain, "order {order}'s mails in chain order");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_broker_is_noticed_within_two_heartbeats_and_the_next_address_takes_over() {
    // The reconnect counter read below is process-wide: only in a process of its own does it
    // count this test's reconnects alone.
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::a_silent_broker_is_noticed_within_two_heartbeats_and_the_next_address_takes_over"
    )) {
        return;
    }
    let names = Names::new();
    let first = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let second = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let mut cfg = config(&names);
    cfg.amqp_url = format!(
        "{},{}",
        outbox_testkit::amqp_url_via(first.addr()),
        outbox_testkit::amqp_url_via(second.addr())
    )
    .into();
    cfg.server.liveness.amqp_heartbeat = HEARTBEAT;
    let svc = start(cfg).await;
    assert_eq!(second.connections(), 0, "the first address is used first");

    let load = spawn_load(names.exchange.clone(), Duration::from_millis(100));
    eventually("mails flowing", 60, || async {
        (svc.status().await.processed >= 10).then_some(())
    })
    .await;
    let silent = Instant::now();
    first.blackhole();
    let mut consuming = svc.consuming.clone();
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| !*c))
        .await
        .expect("the consumer notices the silent connection")
        .expect("consumer state");
    let noticed = silent.elapsed();
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| *c))
        .await
        .expect("consuming again")
        .expect("consumer state");
    let resumed = silent.elapsed();
    outbox_testkit::assert_black_hole_noticed(
        HEARTBEAT,
        noticed,
        "consuming from the next address",
        resumed,
    );
    assert!(second.connections() >= 1, "the next address took over");

    let events = load.await.expect("load");
    assert_all_mailed_once_in_chain_order(&svc, events).await;
    let reconnects = common::metric(
        svc.metrics_addr,
        "mail_amqp_reconnects_total{reason=\"heartbeat\"}",
    )
    .await
    .unwrap_or(0.0);
    assert!(reconnects >= 1.0, "counted: {reconnects}");
    names.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_database_hangs_nothing_and_every_event_is_mailed_once() {
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let mut names = Names::new();
    let database = outbox_testkit::unique("mail_blackhole_test");
    names.database_url = outbox_testkit::pg_url_via(db.addr(), &database);
    let mut cfg = config(&names);
    cfg.server.liveness.db_statement_timeout = Duration::from_secs(2);
    let svc = start(cfg).await;
    // The test's own view of the tables, around the proxy.
    let direct = sqlx::PgPool::connect(&format!("{}/{database}", outbox_testkit::pg_server_url()))
        .await
        .expect("direct connection");

    let load = spawn_load(names.exchange.clone(), Duration::from_millis(100));
    eventually("mails flowing", 60, || async {
        let n: i64 = sqlx::query_scalar("select count(*) from mails")
            .fetch_one(&direct)
            .await
            .ok()?;
        (n >= 10).then_some(())
    })
    .await;
    db.blackhole();
    tokio::time::sleep(Duration::from_secs(6)).await;
    // The network is back; the sockets the black hole swallowed stay silent for good: whatever
    // waited on one would wait forever.
    db.restore();
    let back = Instant::now();
    let events = load.await.expect("load");
    let direct_view = TestMail {
        pool: direct,
        ..svc
    };
    assert_all_mailed_once_in_chain_order(&direct_view, events).await;
    println!(
        "database black hole for 6s: every event mailed {:.1?} after the network came back",
        back.elapsed()
    );
    names.cleanup().await;
}
