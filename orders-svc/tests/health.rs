//! Health that tells the truth: SERVING while the database answers, NOT_SERVING while it does
//! not (cut for real through a proxy) and from the moment shutdown starts; and the binary's
//! `healthcheck` subcommand, run as a container would run it.

mod common;

use std::{net::SocketAddr, process::Command, time::Duration};

use common::{config, start_with};
use outbox_kit::testing::{Proxy, unique};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

const SERVICES: [&str; 2] = ["", "orders.v1.OrderService"];

async fn client(addr: SocketAddr) -> HealthClient<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect()
        .await
        .expect("health connects");
    HealthClient::new(channel)
}

async fn status(addr: SocketAddr, service: &str) -> i32 {
    let mut client = client(addr).await;
    client
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("check")
        .into_inner()
        .status
}

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
    let proxy = Proxy::start(&outbox_kit::testing::pg_addr())
        .await
        .expect("proxy");
    let name = unique("orders_health_test");
    let t = start_with(config(outbox_kit::testing::pg_url_via(proxy.addr(), &name))).await;
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
    let mut client = client(t.grpc_addr).await;
    let mut watch = client
        .watch(HealthCheckRequest {
            service: "orders.v1.OrderService".into(),
        })
        .await
        .expect("watch")
        .into_inner();
    let first = watch.message().await.expect("stream").expect("first");
    assert_eq!(first.status, ServingStatus::Serving as i32);

    t.shutdown.cancel();
    // The server is still delivering this stream: NOT_SERVING reaches the client before it stops.
    let next = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("an update within 10s")
        .expect("stream")
        .expect("an update before the server stopped");
    assert_eq!(next.status, ServingStatus::NotServing as i32);
    drop(watch);
    tokio::time::timeout(Duration::from_secs(30), t.app)
        .await
        .expect("stops once the watcher left")
        .expect("join")
        .expect("clean stop");
}

/// Runs `orders-svc healthcheck` with only the service's own environment (a DATABASE_URL that
/// leads nowhere: the check must not need it).
fn healthcheck(grpc_addr: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_orders-svc"))
        .arg("healthcheck")
        .env_clear()
        .env("GRPC_ADDR", grpc_addr)
        .env(
            "DATABASE_URL",
            "postgres://app:pw@nowhere.invalid:5432/orders",
        )
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    (out.status.success(), stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthcheck_subcommand_exits_0_only_when_serving() {
    let proxy = Proxy::start(&outbox_kit::testing::pg_addr())
        .await
        .expect("proxy");
    let name = unique("orders_healthcheck_test");
    let t = start_with(config(outbox_kit::testing::pg_url_via(proxy.addr(), &name))).await;
    // 0.0.0.0 means "this host": the check goes to loopback.
    let any = format!("0.0.0.0:{}", t.grpc_addr.port());
    let (ok, line) = tokio::task::spawn_blocking(move || healthcheck(&any))
        .await
        .unwrap();
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
    let (ok, line) = tokio::task::spawn_blocking(move || healthcheck(&addr))
        .await
        .unwrap();
    assert!(!ok, "exit 1 while the database is away: {line}");
    assert!(line.contains("NOT_SERVING"), "{line}");
    proxy.restore();

    t.shutdown.cancel();
    t.app.await.expect("join").expect("clean stop");

    // Nothing listens there any more.
    let addr = t.grpc_addr.to_string();
    let (ok, line) = tokio::task::spawn_blocking(move || healthcheck(&addr))
        .await
        .unwrap();
    assert!(!ok, "exit 1 on a closed port: {line}");
    println!("closed port: {line}");
}
