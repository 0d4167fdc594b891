//! relay-svc: publishes the orders outbox to RabbitMQ, losing nothing and keeping each order's
//! events in order, with one active instance and any number of standbys.
//!
//! The relay itself is the `outbox-relay` library (read rule, waves per order, confirms with
//! returns matched per message, exact deletes, quarantine, backoff, leader lease, metrics; its
//! crate docs and README give the guarantees and the failure windows). This binary adds the
//! settings, the gRPC status and health, and [`amqp::OrdersEncoder`], which publishes rows of
//! the first orders outbox (before orders-svc migration 0003) exactly as before.
//!
//! **Sharded writes** (`RELAY_SHARDS`): one relay per order database, each with its own leader
//! lock (in its own database), status and metrics labelled `shard`; `GetStatus` sums them (see
//! [`grpc::combine`]). The admin service lists every shard's rows, each naming its shard, and
//! moves rows of the one shard a request names (see [`admin`]).
//!
//! **Health** (`grpc.health.v1`, `""` and `relay.v1.RelayService`): SERVING while the orders
//! database (every shard's) answers a ping, leader or standby alike (a standby is ready to take over);
//! NOT_SERVING while it does not, and from the moment shutdown starts. Of the broker, only a
//! leader's lost connection counts ([`BrokerProbe`]): NOT_SERVING from its loss (missed
//! heartbeats, a failed socket, a close) until a new one is open. A broker that is merely
//! unreachable at start, or that blocks publishing (a resource alarm: `relay_broker_blocked`,
//! `GetStatus.broker_blocked_reason`), leaves it SERVING: the relay catches up by itself.
//!
//! Layout: [`config`] (settings → `outbox_relay::Settings`), [`grpc`] (`GetStatus`), [`admin`]
//! (`relay.admin.v1.RelayAdmin`: backlog and quarantine for operators, `outboxctl`), [`amqp`]
//! (the orders encoder), [`error`] (the library's errors as gRPC statuses). The relay's SQL,
//! figures, metric names and errors are the library's: `outbox_relay::{db, status, error}`.

pub mod admin;
pub mod amqp;
pub mod config;
pub mod error;
pub mod grpc;
#[doc(hidden)]
pub mod hook;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::health::{AllOf, DbProbe, Health, Probe};
use outbox_proto::relay::{
    admin::v1::relay_admin_server::RelayAdminServer, v1::relay_service_server::RelayServiceServer,
};
use outbox_relay::{
    db::Queries,
    status::{METRICS, Status},
};
use tokio::{net::TcpListener, task::AbortHandle, task::JoinHandle};
use tokio_util::sync::CancellationToken;

pub use config::Config;

/// A running relay-svc: its bound addresses, live status, and the tasks to wait for.
#[derive(Debug)]
pub struct App {
    grpc_addr: SocketAddr,
    metrics_addr: SocketAddr,
    statuses: Vec<Arc<Status>>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    relays: Vec<JoinHandle<()>>,
    health: JoinHandle<()>,
}

impl App {
    /// Validates the config, binds the listeners (port 0 picks free ports) and starts the relay
    /// loop. Neither the database nor the broker has to be up: the relay retries until they are,
    /// while status is served and health says NOT_SERVING until the database answers.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        let shards = cfg.shards()?;
        let sharded = cfg.relay_shards.is_some();
        // Lazy: the relay must start (and report) while the database is still away.
        let pools: Vec<_> = shards
            .iter()
            .map(|(_, _, pg)| outbox_kit::db::lazy_pool(&cfg.pool_options(pg), 4))
            .collect();

        let listener = TcpListener::bind(cfg.grpc_addr)
            .await
            .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        // Install the recorder now: figures recorded before the first scrape must not be lost.
        outbox_kit::metrics::register("relay-svc", env!("CARGO_PKG_VERSION"), METRICS);
        let metrics_addr =
            outbox_kit::metrics::serve(cfg.metrics_addr, "METRICS_ADDR", shutdown.clone()).await?;

        let security = cfg.grpc_security.load()?;
        let cfg_admin_token = cfg
            .admin_token
            .clone()
            .with_file(cfg.admin_tokens_file.as_deref())?;
        let settings = cfg.settings()?;
        let queries = Queries::new(&settings.table);
        let mut statuses = Vec::with_capacity(shards.len());
        let mut relays = Vec::with_capacity(shards.len());
        for (index, pool) in pools.iter().enumerate() {
            let status = Arc::new(if sharded {
                Status::labelled("shard", index.to_string())
            } else {
                Status::default()
            });
            // The leader lock is per database: one leader per shard among the instances. The
            // relay's lock and LISTEN connections use the shard pool's connect options.
            relays.push(tokio::spawn(
                outbox_relay::Relay::new(
                    settings.clone(),
                    pool.clone(),
                    status.clone(),
                    shutdown.clone(),
                )
                .with_encoder(Arc::new(amqp::OrdersEncoder))
                .run(),
            ));
            statuses.push(status);
        }

        let (health, health_service) =
            Health::new::<RelayServiceServer<grpc::RelayGrpc>>(shutdown.clone()).await;
        // The first answer is already true: probe once before serving, then keep probing.
        let mut probe = (
            AllOf(
                shards
                    .iter()
                    .map(|(setting, _, pg)| (setting.clone(), DbProbe::new(pg.clone())))
                    .collect(),
            ),
            BrokerProbe(statuses.clone()),
        );
        health.set(probe.check().await).await;
        let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));
        let admin = RelayAdminServer::new(admin::RelayAdminGrpc::new(
            pools.clone(),
            &settings.table,
            cfg_admin_token.clone(),
        ));
        let service = RelayServiceServer::new(grpc::RelayGrpc::new(
            pools.into_iter().zip(statuses.iter().cloned()).collect(),
            queries,
        ));
        let services =
            outbox_kit::grpc::Services::new(service).with_admin(admin, cfg_admin_token.clone());
        let token_lists = security
            .tokens
            .iter()
            .chain(cfg_admin_token.list())
            .cloned();
        outbox_kit::auth::reload_on_sighup(token_lists.collect(), shutdown.clone());
        let server =
            outbox_kit::grpc::serve(listener, services, &health, health_service, security)?;
        tracing::info!(%grpc_addr, %metrics_addr, "relay-svc listening");
        Ok(Self {
            grpc_addr,
            metrics_addr,
            statuses,
            server,
            relays,
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

    /// The live status of this instance's relay of shard 0, the only one without
    /// `RELAY_SHARDS` (what `GetStatus` returns then, without the database read).
    pub fn status(&self) -> Arc<Status> {
        self.statuses[0].clone()
    }

    /// The live status of each shard's relay, shard 0 first.
    pub fn shard_statuses(&self) -> &[Arc<Status>] {
        &self.statuses
    }

    /// Handles that stop the relay and the gRPC server at once, without any cleanup, as a crash
    /// would (tests). The database and broker connections are dropped, not closed politely.
    pub fn crash_handle(&self) -> CrashHandle {
        CrashHandle {
            tasks: self
                .relays
                .iter()
                .map(JoinHandle::abort_handle)
                .chain([self.server.abort_handle(), self.health.abort_handle()])
                .collect(),
        }
    }

    /// Waits until the relay loop has finished its cycle and released the lock, and the server
    /// has drained, after shutdown.
    pub async fn run(self) -> anyhow::Result<()> {
        for relay in self.relays {
            relay.await.context("relay task")?;
        }
        self.server.await.context("gRPC server task")??;
        self.health.await.context("health monitor task")?;
        tracing::info!("relay-svc stopped");
        Ok(())
    }
}

/// NOT_SERVING from the loss of a leader's broker connection (any shard's) until a new one is
/// open; see the crate docs' Health.
#[derive(Debug)]
pub struct BrokerProbe(pub Vec<Arc<Status>>);

impl Probe for BrokerProbe {
    async fn check(&mut self) -> Result<(), String> {
        match self.0.iter().find_map(|s| s.broker_lost()) {
            Some(why) => Err(format!("broker: connection lost ({why}); reconnecting")),
            None => Ok(()),
        }
    }
}

/// See [`App::crash_handle`].
#[derive(Debug)]
pub struct CrashHandle {
    tasks: Vec<AbortHandle>,
}

impl CrashHandle {
    /// Aborts the tasks at their next await point.
    pub fn crash(&self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
