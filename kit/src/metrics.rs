//! Prometheus metrics: one process-wide recorder, and a `/metrics` HTTP listener per service.

use std::{net::SocketAddr, sync::OnceLock};

use anyhow::Context;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process-wide recorder, installed on first use (tests start several services in one
/// process; they share it).
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(&[
                0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                5.0, 10.0, 30.0, 60.0,
            ])
            .unwrap_or_else(|_| PrometheusBuilder::new())
            .build_recorder();
        let handle = recorder.handle();
        // Fails only if another recorder is installed already; then ours just stays unused.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Binds `addr` (port 0 picks a free one) for `GET /metrics`; `setting` names the config
/// option in the error. Returns the bound address; serves until `shutdown` fires.
pub async fn serve(
    addr: SocketAddr,
    setting: &str,
    shutdown: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    // Install the recorder before anything is recorded: counts recorded before the first scrape
    // would otherwise be lost.
    handle();
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("{setting}: cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(|| async { handle().render() }),
    );
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "metrics listener stopped");
        }
    });
    Ok(local)
}
