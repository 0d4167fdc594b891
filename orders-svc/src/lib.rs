//! orders-svc: the seed's `OrdersDB.upsert(id, status)` as a gRPC service on PostgreSQL.
//!
//! Each `Upsert` that creates an order or changes its status writes the order row AND appends
//! exactly one event to the `outbox` table in the same transaction; relay-svc publishes the
//! outbox later. Layout:
//!
//! - [`config`]: flags and environment variables;
//! - [`order`]: statuses, the transition table, request validation;
//! - [`db`]: migrations and the `Upsert` transaction;
//! - [`batch`]: the group commit that applies concurrent `Upsert`s in one transaction;
//! - [`grpc`]: the tonic service;
//! - [`metrics`]: every Prometheus metric it exports, with its HELP text;
//! - [`App`]: wires them into a server with health, reflection and metrics.
//!
//! Health (`grpc.health.v1`, for `""` and `orders.v1.OrderService`) is SERVING while the
//! database answers a ping, NOT_SERVING while it does not and from the moment shutdown starts.
//! orders-svc needs its database to start (it creates and migrates it first); relay-svc and
//! mail-svc are the ones that wait.

pub mod batch;
pub mod config;
pub mod db;
pub mod error;
pub mod grpc;
pub mod metrics;
pub mod order;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::health::{DbProbe, Health, Probe};
use outbox_proto::orders::v1::order_service_server::OrderServiceServer;
use sqlx::PgPool;
use tokio::{net::TcpListener, sync::Notify, task::JoinHandle};
use tokio_util::sync::CancellationToken;

pub use config::Config;

/// A running orders-svc: its bound addresses, and the tasks to wait for.
#[derive(Debug)]
pub struct App {
    grpc_addr: SocketAddr,
    metrics_addr: SocketAddr,
    pool: PgPool,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    waker: JoinHandle<()>,
    health: JoinHandle<()>,
}

impl App {
    /// Connects and migrates the database, binds the listeners (port 0 picks free ports) and
    /// starts serving until `shutdown` is cancelled.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        let security = cfg.grpc_security.load()?;
        let pool = outbox_kit::db::connect(&cfg.database_url, cfg.db_max_connections).await?;
        db::MIGRATOR
            .run(&pool)
            .await
            .context("DATABASE_URL: running the orders migrations")?;

        let listener = TcpListener::bind(cfg.grpc_addr)
            .await
            .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        metrics::register();
        let metrics_addr =
            outbox_kit::metrics::serve(cfg.metrics_addr, "METRICS_ADDR", shutdown.clone()).await?;

        let relay_waker = Arc::new(Notify::new());
        let waker = tokio::spawn(wake_relay(
            pool.clone(),
            relay_waker.clone(),
            shutdown.clone(),
        ));

        let (health, health_service) =
            Health::new::<OrderServiceServer<grpc::OrdersGrpc>>(shutdown.clone()).await;
        // The first answer is already true: probe once before serving, then keep probing.
        let mut probe = DbProbe::new(outbox_kit::db::options(&cfg.database_url)?);
        health.set(probe.check().await).await;
        let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));
        let orders = OrderServiceServer::new(grpc::OrdersGrpc::new(pool.clone(), relay_waker));
        let services = outbox_kit::grpc::Services::new(orders);
        if let Some(tokens) = &security.tokens {
            outbox_kit::auth::reload_on_sighup(vec![tokens.clone()], shutdown.clone());
        }
        let server =
            outbox_kit::grpc::serve(listener, services, &health, health_service, security)?;
        tracing::info!(%grpc_addr, %metrics_addr, "orders-svc listening");
        Ok(Self {
            grpc_addr,
            metrics_addr,
            pool,
            server,
            waker,
            health: health_monitor,
        })
    }

    /// The address the gRPC server is bound to.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    /// The address `/metrics` is served on.
    pub fn metrics_addr(&self) -> SocketAddr {
        self.metrics_addr
    }

    /// The database pool (tests inspect the outbox through it).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Waits until the server has drained after shutdown, then closes the pool.
    pub async fn run(self) -> anyhow::Result<()> {
        self.server.await.context("gRPC server task")??;
        self.waker.await.context("relay waker task")?;
        self.health.await.context("health monitor task")?;
        self.pool.close().await;
        tracing::info!("orders-svc stopped");
        Ok(())
    }
}

/// The shortest gap between two notifications. Under load the relay is busy draining anyway;
/// without a gap the notifications alone would be a second transaction per Upsert.
const MIN_NOTIFY_GAP: std::time::Duration = std::time::Duration::from_millis(2);

/// Sends one `NOTIFY` per wake-up; wake-ups that arrive while one is in flight (or within
/// [`MIN_NOTIFY_GAP`] of the last) coalesce (`Notify` keeps a single permit), so a burst of commits
/// costs one notification. A quiet system's first commit is notified at once.
async fn wake_relay(pool: PgPool, waker: Arc<Notify>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = waker.notified() => {}
        }
        if let Err(e) = db::notify_relay(&pool).await {
            // The relay's fallback poll picks the event up; only latency is lost.
            tracing::debug!(error = %e, "cannot notify the relay");
        }
        tokio::time::sleep(MIN_NOTIFY_GAP).await;
    }
}
