//! What the services' health tests share: asking `grpc.health.v1` over a real connection, the
//! shutdown promise (NOT_SERVING reaches a watcher before the server stops), and running the
//! binary's `healthcheck` subcommand as a container would.

use std::{net::SocketAddr, process::Command, time::Duration};

use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

/// A health client connected to the service at `addr`.
pub async fn client(addr: SocketAddr) -> HealthClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect()
        .await
        .expect("health connects");
    HealthClient::new(channel)
}

/// The status `Check` answers for `service` (`""`: the whole server), as the wire `i32`.
pub async fn status(addr: SocketAddr, service: &str) -> i32 {
    client(addr)
        .await
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("check")
        .into_inner()
        .status
}

/// Whether every one of `services` is `want` right now (one connection for all of them).
pub async fn all_are(addr: SocketAddr, services: &[&str], want: ServingStatus) -> bool {
    let mut c = client(addr).await;
    for service in services {
        let got = c
            .check(HealthCheckRequest {
                service: (*service).into(),
            })
            .await
            .expect("check")
            .into_inner()
            .status;
        if got != want as i32 {
            return false;
        }
    }
    true
}

/// Watches `service` (which must be SERVING), starts shutdown, and asserts that NOT_SERVING
/// reaches the watcher while the server is still delivering the stream. The watch is dropped on
/// return, so the server can finish stopping.
pub async fn assert_not_serving_once_shutdown_starts(
    addr: SocketAddr,
    service: &str,
    shutdown: &CancellationToken,
) {
    let mut watch = client(addr)
        .await
        .watch(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("watch")
        .into_inner();
    let first = watch.message().await.expect("stream").expect("first");
    assert_eq!(first.status, ServingStatus::Serving as i32);

    shutdown.cancel();
    // The server is still delivering this stream: NOT_SERVING reaches the client before it stops.
    let next = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("an update within 10s")
        .expect("stream")
        .expect("an update before the server stopped");
    assert_eq!(next.status, ServingStatus::NotServing as i32);
}

/// Runs `<binary> healthcheck` against `grpc_addr` with only `env` in its environment (settings
/// that lead nowhere: the check must not need them). Returns (exit 0, its one line of output).
pub async fn healthcheck(
    binary: &'static str,
    grpc_addr: String,
    env: &'static [(&'static str, &'static str)],
) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(binary)
            .arg("healthcheck")
            .env_clear()
            .env("GRPC_ADDR", grpc_addr)
            .envs(env.iter().copied())
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
        (out.status.success(), stdout)
    })
    .await
    .expect("the healthcheck runner")
}
