//! Health that tells the truth: SERVING while the database answers, NOT_SERVING while it does
//! not (cut for real through a proxy) and from the moment shutdown starts; and the binary's
//! `healthcheck` subcommand, run as a container would run it.

use std::{net::SocketAddr, time::Duration};

use outbox_testkit::{Proxy, health, unique};
use tonic_health::pb::health_check_response::ServingStatus;

use crate::common::{self, config, start_with};

const SERVICES: [&str; 2] = ["", "orders.v1.OrderService"];

use health::status;

/// Waits until both statuses are `want`; returns how long it took.
async fn wait_for(addr: SocketAddr, want: ServingStatus, within: Duration) -> Duration {
    let start = std::time::Instant::now();
    loop {
        let mut all = true;
        for service in SERVICES {
            all &= status(addr, service).await == want as i32;
        }
        if all {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "health is not {want:?} after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn health_follows_the_database() {
    let proxy = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let name = unique("orders_health_test");
    let t = start_with(config(outbox_testkit::pg_url_via(proxy.addr(), &name))).await;
    for service in SERVICES {
        assert_eq!(
            status(t.grpc_addr, service).await,
            ServingStatus::Serving as i32,
            "{service:?} SERVING right after start"
        );
    }

    proxy.cut();
    let took = wait_for(
        t.grpc_addr,
        ServingStatus::NotServing,
        Duration::from_secs(20),
    )
    .await;
    println!("database cut -> NOT_SERVING in {took:?}");

    proxy.restore();
    let took = wait_for(t.grpc_addr, ServingStatus::Serving, Duration::from_secs(20)).await;
    println!("database back -> SERVING in {took:?}");

    t.shutdown.cancel();
    t.app.await.expect("join").expect("clean stop");
}

#[tokio::test]
async fn not_serving_as_soon_as_shutdown_starts() {
    let t = common::start().await;
    health::assert_not_serving_once_shutdown_starts(
        t.grpc_addr,
        "orders.v1.OrderService",
        &t.shutdown,
    )
    .await;
    tokio::time::timeout(Duration::from_secs(30), t.app)
        .await
        .expect("stops once the watcher left")
        .expect("join")
        .expect("clean stop");
}

/// Runs `orders-svc healthcheck` with only the service's own environment (a DATABASE_URL that
/// leads nowhere: the check must not need it).
async fn healthcheck(grpc_addr: String) -> (bool, String) {
    health::healthcheck(
        env!("CARGO_BIN_EXE_orders-svc"),
        grpc_addr,
        &[(
            "DATABASE_URL",
            "postgres://app:pw@nowhere.invalid:5432/orders",
        )],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthcheck_subcommand_exits_0_only_when_serving() {
    let proxy = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let name = unique("orders_healthcheck_test");
    let t = start_with(config(outbox_testkit::pg_url_via(proxy.addr(), &name))).await;
    // 0.0.0.0 means "this host": the check goes to loopback.
    let any = format!("0.0.0.0:{}", t.grpc_addr.port());
    let (ok, line) = healthcheck(any).await;
    assert!(ok, "exit 0 while serving: {line}");
    assert!(line.contains("SERVING"), "{line}");

    proxy.cut();
    wait_for(
        t.grpc_addr,
        ServingStatus::NotServing,
        Duration::from_secs(20),
    )
    .await;
    let addr = t.grpc_addr.to_string();
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 while the database is away: {line}");
    assert!(line.contains("NOT_SERVING"), "{line}");
    proxy.restore();

    t.shutdown.cancel();
    t.app.await.expect("join").expect("clean stop");

    // Nothing listens there any more.
    let addr = t.grpc_addr.to_string();
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 on a closed port: {line}");
    println!("closed port: {line}");
}
