//! Health that tells the truth: SERVING while the orders database answers (leader and standby
//! alike), NOT_SERVING while it is cut for real and from the moment shutdown starts; the relay
//! starts while its database is down and catches up; and the binary's `healthcheck` subcommand.

use std::{net::SocketAddr, time::Duration};

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::{Proxy, health};
use tonic_health::pb::health_check_response::ServingStatus;

use crate::common::*;

const SERVICES: [&str; 2] = ["", "relay.v1.RelayService"];

async fn is(addr: SocketAddr, want: ServingStatus) -> bool {
    health::all_are(addr, &SERVICES, want).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starts_with_the_database_down_and_health_follows_it() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    db.cut();
    let via_proxy = outbox_testkit::pg_url_via(db.addr(), &orders.database);
    let relay = Relay::start(relay_config(
        &via_proxy,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;
    assert!(
        is(relay.grpc_addr, ServingStatus::NotServing).await,
        "NOT_SERVING while its database is down"
    );
    let seq = orders.upsert(1, OrderStatus::Pending).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        consumer.seqs().is_empty(),
        "nothing published without the database"
    );
    assert!(is(relay.grpc_addr, ServingStatus::NotServing).await);

    db.restore();
    wait_until("SERVING once the database is up", || {
        is(relay.grpc_addr, ServingStatus::Serving)
    })
    .await;
    wait_until("the waiting relay publishes", || async {
        consumer.has_all(&[seq])
    })
    .await;

    db.cut();
    wait_until("NOT_SERVING while the database is cut", || {
        is(relay.grpc_addr, ServingStatus::NotServing)
    })
    .await;
    db.restore();
    wait_until("SERVING again", || {
        is(relay.grpc_addr, ServingStatus::Serving)
    })
    .await;
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_is_serving() {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let first = Relay::start_for(&orders, &exchange).await;
    wait_until("the first relay leads", || async {
        first.status().await.active
    })
    .await;
    let second = Relay::start_for(&orders, &exchange).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!second.status().await.active, "the second one stands by");
    assert!(is(first.grpc_addr, ServingStatus::Serving).await, "leader");
    assert!(
        is(second.grpc_addr, ServingStatus::Serving).await,
        "standby"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn not_serving_as_soon_as_shutdown_starts() {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let mut relay = Relay::start_for(&orders, &exchange).await;
    health::assert_not_serving_once_shutdown_starts(
        relay.grpc_addr,
        "relay.v1.RelayService",
        &relay.shutdown,
    )
    .await;
    tokio::time::timeout(Duration::from_secs(30), relay.stop())
        .await
        .expect("stops once the watcher left")
        .expect("clean stop");
}

/// Runs `relay-svc healthcheck` with the service's own environment, whose database and broker
/// lead nowhere: the check must not need them.
async fn healthcheck(grpc_addr: String) -> (bool, String) {
    health::healthcheck(
        env!("CARGO_BIN_EXE_relay-svc"),
        grpc_addr,
        &[
            (
                "DATABASE_URL",
                "postgres://app:pw@nowhere.invalid:5432/orders",
            ),
            ("AMQP_URL", "amqp://app:pw@nowhere.invalid:5672/%2f"),
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn healthcheck_subcommand_exits_0_only_when_serving() {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let via_proxy = outbox_testkit::pg_url_via(db.addr(), &orders.database);
    let mut relay = Relay::start(relay_config(
        &via_proxy,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;

    let any = format!("0.0.0.0:{}", relay.grpc_addr.port());
    let (ok, line) = healthcheck(any).await;
    assert!(ok, "exit 0 while serving: {line}");

    db.cut();
    wait_until("NOT_SERVING", || {
        is(relay.grpc_addr, ServingStatus::NotServing)
    })
    .await;
    let addr = relay.grpc_addr.to_string();
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 while the database is away: {line}");
    assert!(line.contains("NOT_SERVING"), "{line}");
    db.restore();

    relay.stop().await.expect("clean stop");
    let addr = relay.grpc_addr.to_string();
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 on a closed port: {line}");
}
