//! orders-svc: `Upsert(id, status)` and `GetOrder` on the orders table, a gRPC service on PostgreSQL.
//!
//! Each `Upsert` that creates an order or changes its status writes the order row AND appends
//! exactly one event to the `outbox` table in the same transaction; relay-svc publishes the
//! outbox later. Layout:
//!
//! - [`config`]: flags and environment variables;
//! - [`order`]: statuses, the transition table, request validation;
//! - [`db`]: migrations and the statements of the `Upsert` transaction;
//! - [`batch`]: the one write path (`batch::apply`: a batch of `Upsert`s, one call or many, in one
//!   transaction) and the group commit that feeds it the concurrent calls;
//! - [`shard`]: which of the `SHARDS` databases an order lives in;
//! - [`grpc`]: the tonic service;
//! - [`metrics`]: every Prometheus metric it exports, with its HELP text;
//! - [`App`]: wires them into a server with health, reflection and metrics.
//!
//! Health (`grpc.health.v1`, for `""` and `orders.v1.OrderService`) is SERVING while the
//! database (every shard's) answers a ping, NOT_SERVING while it does not and from the moment shutdown starts.
//! orders-svc needs its database to start (it creates and migrates it first); relay-svc and
//! mail-svc are the ones that wait.

pub mod batch;
pub mod config;
pub mod db;
pub mod error;
pub mod grpc;
pub mod metrics;
pub mod order;
pub mod shard;
pub mod wake;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::health::{AllOf, DbProbe, Health, Probe};
use outbox_proto::orders::v1::order_service_server::OrderServiceServer;
use sqlx::PgPool;
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_util::sync::CancellationToken;

pub use config::Config;

/// A running orders-svc: its bound addresses, and the tasks to wait for.
#[derive(Debug)]
pub struct App {
    grpc_addr: SocketAddr,
    metrics_addr: SocketAddr,
    pools: Vec<PgPool>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    wakers: Vec<JoinHandle<()>>,
    health: JoinHandle<()>,
}

impl App {
    /// Connects and migrates the database (every shard's), binds the listeners (port 0 picks free ports) and
    /// starts serving until `shutdown` is cancelled.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        let security = cfg.server.grpc_security.load()?;
        let shard_options = cfg.shard_options()?;
        let mut pools = Vec::with_capacity(shard_options.len());
        for (setting, options) in &shard_options {
            let pool =
                outbox_kit::db::connect_with(setting, options.clone(), cfg.db_max_connections)
                    .await?;
            db::MIGRATOR
                .run(&pool)
                .await
                .with_context(|| format!("{setting}: running the orders migrations"))?;
            pools.push(pool);
        }

        let listener = TcpListener::bind(cfg.server.grpc_addr)
            .await
            .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.server.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        metrics::register();
        let metrics_addr =
            outbox_kit::metrics::serve(cfg.server.metrics_addr, "METRICS_ADDR", shutdown.clone())
                .await?;

        // Each shard has its own outbox, so its own relay group and its own wake-ups.
        let mut shards = Vec::with_capacity(pools.len());
        let mut wakers = Vec::with_capacity(pools.len());
        for pool in &pools {
            let relay_waker = Arc::new(wake::RelayWaker::default());
            wakers.push(tokio::spawn(wake::run(
                pool.clone(),
                relay_waker.clone(),
                shutdown.clone(),
            )));
            shards.push((pool.clone(), relay_waker));
        }

        let (health, health_service) =
            Health::new::<OrderServiceServer<grpc::OrdersGrpc>>(shutdown.clone()).await;
        // The first answer is already true: probe once before serving, then keep probing.
        // SERVING only while every shard answers: an Upsert of any order may need any shard.
        let mut probe = AllOf(
            shard_options
                .into_iter()
                .enumerate()
                .map(|(index, (_, options))| (format!("shard {index}"), DbProbe::new(options)))
                .collect(),
        );
        health.set(probe.check().await).await;
        let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));
        let orders = OrderServiceServer::new(grpc::OrdersGrpc::new(shards));
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
            pools,
            server,
            wakers,
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

    /// The database pool of shard 0, the only one without `SHARDS` (tests inspect the outbox
    /// through it).
    pub fn pool(&self) -> &PgPool {
        &self.pools[0]
    }

    /// Every shard's pool, shard 0 first.
    pub fn pools(&self) -> &[PgPool] {
        &self.pools
    }

    /// Waits until the server has drained after shutdown, then closes the pool.
    pub async fn run(self) -> anyhow::Result<()> {
        self.server.await.context("gRPC server task")??;
        for waker in self.wakers {
            waker.await.context("relay waker task")?;
        }
        self.health.await.context("health monitor task")?;
        for pool in &self.pools {
            pool.close().await;
        }
        tracing::info!("orders-svc stopped");
        Ok(())
    }
}
