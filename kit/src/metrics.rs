//! Prometheus metrics: one process-wide recorder, and a `/metrics` HTTP listener per service.
//!
//! Every service registers its metrics once at start-up through [`register`], from the one
//! module that names them: each gets a `# HELP` line, every counter starts at 0 (so that
//! `increase()` in an alert sees the first event, not only the second), and a `build_info`
//! gauge says which service and version answers. Each scrape also reads the process figures
//! (`process_*`, read by the private `process` module) fresh from `/proc`.

pub(crate) mod process;

use std::{net::SocketAddr, sync::OnceLock};

use anyhow::Context;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The `process_*` metrics every service exports (its `/metrics` renders each).
pub const PROCESS_METRICS: &[&str] = process::NAMES;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The content type of the Prometheus text exposition format.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The name of the gauge that is 1 with the service's name and version as labels.
pub const BUILD_INFO: &str = "build_info";

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

/// Installs the recorder, gives every metric of `metrics` its HELP text, starts every counter
/// at 0 and sets `build_info{service, version}` to 1. Call once from `App::build`, before
/// anything is recorded.
pub fn register(
    service: &'static str,
    version: &'static str,
    metrics: &[outbox_support::metrics::Metric],
) {
    handle();
    metrics::describe_gauge!(
        BUILD_INFO,
        "Always 1; the labels say which service and version exports these metrics."
    );
    metrics::gauge!(BUILD_INFO, "service" => service, "version" => version).set(1.0);
    outbox_support::metrics::describe(metrics);
}

/// What `GET /metrics` answers: the recorder's metrics, then this process's figures.
pub fn render() -> String {
    let mut text = handle().render();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&process::render());
    text
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
        axum::routing::get(|| async {
            // The text format's own content type: Prometheus 3 refuses a scrape without one it
            // knows.
            ([(axum::http::header::CONTENT_TYPE, TEXT_FORMAT)], render())
        }),
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
