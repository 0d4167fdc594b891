//! relay-svc: publishes the orders outbox to RabbitMQ, losing nothing and keeping each order's
//! events in order, with one active instance and any number of standbys.
//!
//! The relay itself is the `outbox-relay` library (read rule, waves per order, confirms with
//! returns matched per message, exact deletes, quarantine, backoff, leader lease, metrics; its
//! crate docs and README give the guarantees and the failure windows), with its default
//! encoding of the rows. This binary adds the settings, the gRPC status and health, and the wait
//! for orders-svc's schema ([`schema`]).
//!
//! **Startup**: each database's relay starts once orders-svc's migration
//! [`schema::NEEDED_MIGRATION`] is applied (it gave the rows of the first orders outbox their
//! routing keys; a relay reading them before would quarantine them). Until then it takes no
//! leader lock, logs the wait, and health is NOT_SERVING.
//!
//! **Sharded writes** (`RELAY_SHARDS`): one relay per order database, each with its own leader
//! lock (in its own database), status and metrics labelled `shard`; `GetStatus` sums them (see
//! [`grpc::combine`]). The admin service lists every shard's rows, each naming its shard, and
//! moves rows of the one shard a request names (see [`admin`]).
//!
//! **Health** (`grpc.health.v1`, `""` and `relay.v1.RelayService`): SERVING while the orders
//! database (every shard's) answers a ping and has orders-svc's schema ([`SchemaProbe`]), leader
//! or standby alike (a standby is ready to take over); NOT_SERVING while it does not, and from
//! the moment shutdown starts. Of the broker, only a leader's lost connection counts
//! ([`BrokerProbe`]): NOT_SERVING from its loss (missed heartbeats, a failed socket, a close)
//! until a new one is open. A broker that is merely
//! unreachable at start, or that blocks publishing (a resource alarm: `relay_broker_blocked`,
//! `GetStatus.broker_blocked_reason`), leaves it SERVING: the relay catches up by itself.
//!
//! **Fleet mode** (`FLEET_DATABASE_URL`, see [`fleet`]): one of a fleet of instances that
//! publishes every outbox database of a registry, added, drained and removed at runtime, each
//! by one instance at a time (`outbox_relay::fleet`); metrics labelled `db`.
//!
//! Layout: [`config`] (settings → `outbox_relay::Settings`), [`grpc`] (`GetStatus`), [`admin`]
//! (`relay.admin.v1.RelayAdmin`: backlog, quarantine and replay for operators, `outboxctl`), [`schema`]
//! (the orders-svc migration it waits for), [`error`] (the library's errors as gRPC statuses).
//! The relay's SQL, figures, metric names and errors are the library's (`outbox_relay::Status`,
//! `outbox_relay::status` for the metric names, `outbox_relay::Error`).

pub mod admin;
pub mod config;
pub mod error;
pub mod fleet;
pub mod grpc;
#[doc(hidden)]
pub mod schema;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::health::{AllOf, DbProbe, Health, Probe};
use outbox_proto::relay::{
    admin::v1::relay_admin_server::RelayAdminServer, v1::relay_service_server::RelayServiceServer,
};
use outbox_relay::{Status, operator::Operator, status::METRICS};
use outbox_support::backoff::Backoff;
use tokio::{net::TcpListener, sync::watch, task::AbortHandle, task::JoinHandle};
use tokio_util::sync::CancellationToken;

pub use config::Config;

/// A running relay-svc: its bound addresses, live status, and the tasks to wait for.
#[derive(Debug)]
pub struct App {
    grpc_addr: SocketAddr,
    metrics_addr: SocketAddr,
    statuses: Vec<Arc<Status>>,
    /// Each shard's orders-svc schema as its relay last read it (see [`schema`]).
    schemas: Vec<watch::Receiver<schema::Schema>>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    relays: Vec<JoinHandle<()>>,
    health: JoinHandle<()>,
}

impl App {
    /// Validates the config, binds the listeners (port 0 picks free ports) and starts the relay
    /// loop. Neither the database nor the broker has to be up, nor orders-svc's schema migrated:
    /// the relay retries until they are, while status is served and health says NOT_SERVING
    /// until the database answers and has orders-svc's migration [`schema::NEEDED_MIGRATION`].
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        if let Some(url) = cfg.fleet.fleet_database_url.clone() {
            return fleet::build(cfg, url, shutdown).await;
        }
        let shards = cfg.shards()?;
        let sharded = cfg.relay_shards.is_some();
        // Lazy: the relay must start (and report) while the database is still away.
        let pools: Vec<_> = shards
            .iter()
            .map(|(_, _, pg)| outbox_kit::db::lazy_pool(&cfg.pool_options(pg), 4))
            .collect();

        let (listener, grpc_addr, metrics_addr) = listen(&cfg, &shutdown).await?;

        let security = cfg.server.grpc_security.load()?;
        let cfg_admin_token = cfg.server.admin.tokens()?;
        let settings = cfg.settings()?;
        let operator = Operator::new(&settings.table);
        let mut statuses = Vec::with_capacity(shards.len());
        let mut schemas = Vec::with_capacity(shards.len());
        let mut relays = Vec::with_capacity(shards.len());
        for (index, pool) in pools.iter().enumerate() {
            let status = Arc::new(if sharded {
                Status::labelled("shard", index.to_string())
            } else {
                Status::default()
            });
            let (schema, schema_rx) =
                watch::channel(schema::Schema::Unknown("not read yet".into()));
            // The leader lock is per database: one leader per shard among the instances. The
            // relay's lock and LISTEN connections use the shard pool's connect options.
            let relay = outbox_relay::Relay::new(
                settings.clone(),
                pool.clone(),
                status.clone(),
                shutdown.clone(),
            );
            let (pool, backoff, shutdown) = (
                pool.clone(),
                Backoff::new(settings.backoff_min, settings.backoff_max),
                shutdown.clone(),
            );
            let database = shards[index].0.clone();
            relays.push(tokio::spawn(async move {
                // Not before orders-svc converted the rows of the first outbox: see `schema`.
                if schema::wait_until_ready(&pool, &database, &schema, backoff, &shutdown).await {
                    relay.run().await;
                }
            }));
            statuses.push(status);
            schemas.push(schema_rx);
        }

        // The first health answer includes the schema: wait (bounded) for its first read.
        let _ = tokio::time::timeout(outbox_kit::health::PROBE_TIMEOUT, async {
            for schema in &mut schemas {
                let _ = schema.changed().await;
            }
        })
        .await;

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
            (
                BrokerProbe(statuses.clone()),
                SchemaProbe::new(&shards, &schemas),
            ),
        );
        health.set(probe.check().await).await;
        let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));
        let admin = RelayAdminServer::new(admin::RelayAdminGrpc::new(
            admin::targets::Databases::fixed(pools.clone(), &settings),
            cfg_admin_token.clone(),
        ));
        let service = RelayServiceServer::new(grpc::RelayGrpc::new(
            pools.into_iter().zip(statuses.iter().cloned()).collect(),
            operator,
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
            schemas,
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

    /// The live status of each shard's relay, shard 0 first (none in fleet mode: the
    /// databases come and go, see [`fleet::FleetGrpc`]).
    pub fn shard_statuses(&self) -> &[Arc<Status>] {
        &self.statuses
    }

    /// Each shard's orders-svc schema as its relay reads it, shard 0 first: the relay of a
    /// shard runs once its schema is [`schema::Schema::Ready`].
    pub fn schemas(&self) -> Vec<watch::Receiver<schema::Schema>> {
        self.schemas.clone()
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

/// NOT_SERVING while any shard's relay waits for orders-svc's schema (see [`schema`]).
#[derive(Debug)]
pub struct SchemaProbe(Vec<(String, watch::Receiver<schema::Schema>)>);

impl SchemaProbe {
    /// A probe of each shard's schema, named by the setting its database came from.
    fn new<T, U>(shards: &[(String, T, U)], schemas: &[watch::Receiver<schema::Schema>]) -> Self {
        Self(
            shards
                .iter()
                .map(|(setting, _, _)| setting.clone())
                .zip(schemas.iter().cloned())
                .collect(),
        )
    }
}

impl Probe for SchemaProbe {
    async fn check(&mut self) -> Result<(), String> {
        let several = self.0.len() > 1;
        for (setting, schema) in &mut self.0 {
            if let Some(why) = schema.borrow_and_update().waiting() {
                return Err(if several {
                    format!("{setting}: {why}")
                } else {
                    why
                });
            }
        }
        Ok(())
    }

    /// At once when a shard's schema is read: a relay that starts is SERVING without waiting
    /// for the next probe.
    async fn changed(&mut self) {
        let changes = self.0.iter_mut().map(|(_, s)| Box::pin(s.changed()));
        match futures::future::select_all(changes).await {
            (Ok(()), _, _) => {}
            // The shard's relay task ended (shutdown): its last value stands.
            (Err(_), _, _) => std::future::pending::<()>().await,
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

/// Binds `GRPC_ADDR` and serves the metrics on `METRICS_ADDR`, the recorder installed first:
/// figures recorded before the first scrape must not be lost. Returns the listener, its address
/// and the metrics' address.
async fn listen(
    cfg: &Config,
    shutdown: &CancellationToken,
) -> anyhow::Result<(TcpListener, SocketAddr, SocketAddr)> {
    let listener = TcpListener::bind(cfg.server.grpc_addr)
        .await
        .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.server.grpc_addr))?;
    let grpc_addr = listener.local_addr()?;
    outbox_kit::metrics::register("relay-svc", env!("CARGO_PKG_VERSION"), METRICS);
    let metrics_addr =
        outbox_kit::metrics::serve(cfg.server.metrics_addr, "METRICS_ADDR", shutdown.clone())
            .await?;
    Ok((listener, grpc_addr, metrics_addr))
}
