//! Health that tells the truth: each service's `grpc.health.v1` status, for the whole server
//! (`""`) and for its own service, is SERVING only while the service can do its job, and
//! NOT_SERVING while it cannot and as soon as shutdown starts.
//!
//! - [`Health`] owns the two statuses; it starts NOT_SERVING and refuses SERVING once the
//!   shutdown token is cancelled. [`Health::stopped`] is the gRPC server's shutdown future: it
//!   flips to NOT_SERVING *before* the server stops taking calls.
//! - [`monitor`] runs a [`Probe`] every [`PROBE_INTERVAL`] (and at once when the probe reports a
//!   change) and sets the status from its answer, logging each transition
//!   (`health: NOT_SERVING (database: …)`, `health: SERVING`).
//! - [`DbProbe`] pings PostgreSQL over its own connection (a protocol round trip, no query, no
//!   transaction: a saturated pool does not make the service look down); [`Flag`] turns a
//!   `watch` of "this part is working" (e.g. mail-svc's consumer is consuming) into a probe; a
//!   pair of probes is healthy when both are.
//! - [`Command::Healthcheck`] / [`healthcheck`]: `<binary> healthcheck` asks the service's own
//!   health endpoint at `GRPC_ADDR` and exits 0 when SERVING, 1 otherwise, so a container needs
//!   no extra tool.

use std::{
    future::Future,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    process::ExitCode,
    sync::Arc,
    time::Duration,
};

use sqlx::{
    Connection,
    postgres::{PgConnectOptions, PgConnection},
};
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;
use tonic_health::{
    ServingStatus,
    pb::{
        HealthCheckRequest, health_check_response::ServingStatus as WireStatus,
        health_client::HealthClient, health_server::HealthServer,
    },
    server::HealthReporter,
};

/// How often a probe runs.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long one probe may take before the dependency counts as unreachable.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long `healthcheck` waits for the answer.
pub const HEALTHCHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The health statuses of one server: `""` and its own service, always set together.
#[derive(Debug, Clone)]
pub struct Health {
    reporter: HealthReporter,
    service: String,
    shutdown: CancellationToken,
    /// The last status set (for logging transitions); the lock also orders concurrent updates,
    /// so that a probe finishing during shutdown cannot undo the shutdown's NOT_SERVING.
    last: Arc<Mutex<Option<bool>>>,
}

impl Health {
    /// The health service to mount, NOT_SERVING until the first [`Health::set`] says otherwise.
    /// `S` names the service (`orders.v1.OrderService`, …).
    pub async fn new<S: tonic::server::NamedService>(
        shutdown: CancellationToken,
    ) -> (
        Self,
        HealthServer<impl tonic_health::pb::health_server::Health>,
    ) {
        let (reporter, service) = tonic_health::server::health_reporter();
        let health = Self {
            reporter,
            service: S::NAME.to_owned(),
            shutdown,
            last: Arc::new(Mutex::new(None)),
        };
        // tonic-health starts the server status at SERVING; nothing has been checked yet.
        health.write(ServingStatus::NotServing).await;
        (health, service)
    }

    /// Sets SERVING for `Ok`, NOT_SERVING (logging the reason) for `Err`; always NOT_SERVING once
    /// shutdown has started.
    pub async fn set(&self, result: Result<(), String>) {
        let mut last = self.last.lock().await;
        let result = if self.shutdown.is_cancelled() {
            Err("shutting down".to_owned())
        } else {
            result
        };
        let serving = result.is_ok();
        // Only changes are published: every publish is a message to each `Watch` stream, and
        // the probe runs every second.
        if *last != Some(serving) {
            self.write(if serving {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            })
            .await;
            match &result {
                Ok(()) => tracing::info!(service = %self.service, "health: SERVING"),
                Err(reason) => {
                    tracing::warn!(service = %self.service, reason = %reason, "health: NOT_SERVING ({reason})")
                }
            }
            *last = Some(serving);
        }
    }

    /// Resolves once shutdown has started *and* the status is NOT_SERVING: give it to the gRPC
    /// server as its shutdown signal, so that clients (and `watch`ers) see NOT_SERVING before
    /// the server stops taking calls.
    pub fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let health = self.clone();
        async move {
            health.shutdown.cancelled().await;
            health.set(Err("shutting down".to_owned())).await;
        }
    }

    async fn write(&self, status: ServingStatus) {
        self.reporter.set_service_status("", status).await;
        self.reporter
            .set_service_status(&self.service, status)
            .await;
    }
}

/// Something a service needs in order to do its job.
pub trait Probe: Send + 'static {
    /// `Ok` while it works; `Err(reason)` (a short text for the log) while it does not. Bounded
    /// by [`PROBE_TIMEOUT`] by the caller too.
    fn check(&mut self) -> impl Future<Output = Result<(), String>> + Send;

    /// Resolves when the probe knows its answer may have changed (default: never; the monitor
    /// asks every [`PROBE_INTERVAL`] anyway).
    fn changed(&mut self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }
}

/// Runs `probe` until shutdown and keeps `health` in step with it; the first check is
/// immediate. Ends NOT_SERVING.
pub async fn monitor<P: Probe>(health: Health, mut probe: P) {
    let shutdown = health.shutdown.clone();
    loop {
        let result = tokio::select! {
            _ = shutdown.cancelled() => break,
            r = tokio::time::timeout(PROBE_TIMEOUT, probe.check()) => {
                r.unwrap_or_else(|_| Err(format!("no answer within {PROBE_TIMEOUT:?}")))
            }
        };
        health.set(result).await;
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(PROBE_INTERVAL) => {}
            _ = probe.changed() => {}
        }
    }
    health.set(Err("shutting down".to_owned())).await;
}

/// PostgreSQL is reachable: a ping (protocol Sync round trip) over a connection of its own,
/// reconnected when it broke.
#[derive(Debug)]
pub struct DbProbe {
    options: PgConnectOptions,
    conn: Option<PgConnection>,
}

impl DbProbe {
    /// A probe of the database `options` point at (nothing is connected until the first check).
    pub fn new(options: PgConnectOptions) -> Self {
        Self {
            options,
            conn: None,
        }
    }

    async fn ping(&mut self) -> Result<(), sqlx::Error> {
        if let Some(conn) = self.conn.as_mut() {
            if conn.ping().await.is_ok() {
                return Ok(());
            }
            // The old session is gone (database restarted, connection cut): try a new one
            // before calling the database unreachable.
            self.conn = None;
        }
        let mut conn = PgConnection::connect_with(&self.options).await?;
        conn.ping().await?;
        self.conn = Some(conn);
        Ok(())
    }
}

impl Probe for DbProbe {
    async fn check(&mut self) -> Result<(), String> {
        match tokio::time::timeout(PROBE_TIMEOUT, self.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                self.conn = None;
                Err(format!("database: {e}"))
            }
            Err(_) => {
                // A ping cut off half-way leaves the connection unusable.
                self.conn = None;
                Err(format!("database: no answer within {PROBE_TIMEOUT:?}"))
            }
        }
    }
}

/// Several probes that must all pass (e.g. every shard's database): the first failure is the
/// answer, prefixed with that probe's name when there are several.
#[derive(Debug)]
pub struct AllOf<P>(pub Vec<(String, P)>);

impl<P: Probe + Sync> Probe for AllOf<P> {
    async fn check(&mut self) -> Result<(), String> {
        let several = self.0.len() > 1;
        for (name, probe) in &mut self.0 {
            probe
                .check()
                .await
                .map_err(|e| if several { format!("{name}: {e}") } else { e })?;
        }
        Ok(())
    }
}

/// A part of the service that reports itself through a `watch` (true while it works).
#[derive(Debug)]
pub struct Flag {
    what: &'static str,
    state: watch::Receiver<bool>,
}

impl Flag {
    /// `what` names the part in the NOT_SERVING reason (`broker: not consuming`).
    pub fn new(what: &'static str, state: watch::Receiver<bool>) -> Self {
        Self { what, state }
    }
}

impl Probe for Flag {
    async fn check(&mut self) -> Result<(), String> {
        if *self.state.borrow_and_update() {
            Ok(())
        } else {
            Err(self.what.to_owned())
        }
    }

    async fn changed(&mut self) {
        if self.state.changed().await.is_err() {
            // The part is gone for good; its last value stands.
            std::future::pending::<()>().await;
        }
    }
}

/// Healthy when both are.
impl<A: Probe, B: Probe> Probe for (A, B) {
    async fn check(&mut self) -> Result<(), String> {
        let (a, b) = tokio::join!(self.0.check(), self.1.check());
        match (a, b) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(a), Err(b)) => Err(format!("{a}; {b}")),
        }
    }

    async fn changed(&mut self) {
        tokio::select! {
            _ = self.0.changed() => {}
            _ = self.1.changed() => {}
        }
    }
}

/// The subcommands every service binary has besides running the service.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Ask the running service's health endpoint (GRPC_ADDR; 0.0.0.0 and `[::]` mean this host)
    /// whether it is SERVING: exit 0 if so, 1 otherwise, with a one-line message. Reads no
    /// other setting than its own (TLS: GRPC_CA_FILE, …) and reaches nothing else. Health needs
    /// no token.
    Healthcheck(HealthcheckArgs),
}

/// How `healthcheck` reaches a gRPC port behind TLS.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HealthcheckArgs {
    #[command(flatten)]
    pub tls: crate::tls::ClientTls,
}

/// Where to reach a server listening on `addr` from the same host: the unspecified addresses
/// (`0.0.0.0`, `[::]`) become loopback.
pub fn loopback(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), addr.port())
        }
        _ => addr,
    }
}

/// Asks the health endpoint of the server listening on `addr` for the whole server's (`""`)
/// status. `Ok(true)` when SERVING.
pub async fn query(addr: SocketAddr, tls: &crate::tls::ClientTls) -> Result<bool, String> {
    let target = loopback(addr);
    let ask = async {
        let mut endpoint =
            tonic::transport::Endpoint::from_shared(format!("{}://{target}", tls.scheme()))
                .map_err(|e| e.to_string())?;
        if let Some(config) = tls.load().map_err(|e| format!("{e:#}"))? {
            endpoint = endpoint.tls_config(config).map_err(|e| e.to_string())?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {target}: {}", source_text(&e)))?;
        let response = HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map_err(|s| format!("{target} answered {:?}: {}", s.code(), s.message()))?;
        Ok(response.into_inner().status == WireStatus::Serving as i32)
    };
    tokio::time::timeout(HEALTHCHECK_TIMEOUT, ask)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "no answer from {target} within {HEALTHCHECK_TIMEOUT:?}"
            ))
        })
}

/// `<binary> healthcheck`: prints one line and returns the exit code (0 SERVING, 1 otherwise).
pub async fn healthcheck(
    binary: &str,
    grpc_addr: SocketAddr,
    tls: &crate::tls::ClientTls,
) -> ExitCode {
    let target = loopback(grpc_addr);
    match query(grpc_addr, tls).await {
        Ok(true) => {
            println!("{binary}: SERVING ({target})");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("{binary}: NOT_SERVING ({target})");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("{binary}: unhealthy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The innermost cause's text (tonic's transport error alone says only "transport error").
fn source_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unspecified_addresses_become_loopback() {
        let cases = [
            ("0.0.0.0:50051", "127.0.0.1:50051"),
            ("[::]:50052", "[::1]:50052"),
            ("127.0.0.1:1", "127.0.0.1:1"),
            ("10.1.2.3:50053", "10.1.2.3:50053"),
            ("[::1]:7", "[::1]:7"),
        ];
        for (addr, want) in cases {
            assert_eq!(
                loopback(addr.parse().unwrap()),
                want.parse::<SocketAddr>().unwrap(),
                "{addr}"
            );
        }
    }
}
