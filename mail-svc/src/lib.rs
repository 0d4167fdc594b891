//! mail-svc: the service that mails customers about their orders. It consumes order events from RabbitMQ (published by
//! relay-svc, at least once and in no particular order) and sends exactly one mail per event, in
//! each order's chain order, even under redelivery, reordering, crashes and several instances.
//!
//! **The watermark.** Each order's events form a chain (`prev_seq` links). mail-svc processes an
//! order's events strictly along the chain, so one number per order, `order_progress.last_seq`,
//! says what was processed: a delivery with `seq <= last_seq` is a duplicate and is skipped,
//! however late it arrives (dedup never expires, and the table does not grow per event).
//!
//! **Holds.** An event whose predecessor has not been processed yet is stored in `held_events`
//! and released, in chain order, by the transaction that processes its predecessor. An event held
//! longer than `MAIL_HOLD_ALERT` raises a warning and the `mail_oldest_held_age_seconds` gauge:
//! its predecessor may be lost.
//!
//! **Batches: one transaction for up to `BATCH_SIZE` deliveries, then one ack.** The decision
//! (skip / hold / process + release) of every event of a batch and their writes (the mail rows,
//! the watermarks, the held rows, the skip counter) commit together under the orders' advisory
//! locks, with exactly the result of one transaction per event ([`process::Mails`], run by
//! `outbox_inbox::amqp::Consumer`); the
//! broker messages are acked only after the commit. A crash between commit and ack redelivers the
//! batch, which is then skipped. Poison messages are judged before the transaction and
//! dead-lettered on their own with an `x-death-reason` header ([`amqp`]).
//!
//! **The duplicate window.** Mails leave through the [`mailer`]: it claims a queued mail, sends
//! it and marks it sent in one transaction. If the process dies after the server accepted the mail
//! and before the mark commits, the mail is sent again, with the same `Message-ID`
//! (`<order-event-<seq>@outbox>`) and `X-Idempotency-Key` (`order-event-<seq>`), so a provider can
//! drop it. That is the only way a customer can get a mail twice; no mail is ever lost or sent
//! for an event that does not exist.
//!
//! Layout: [`config`], [`event`] (decode + validate), [`process`] (the batch and per-event transactions),
//! [`retry`] (the bound on one database step), [`db`] (SQL +
//! migrations), [`mail`] (the text table), [`mailer`] (delivery + the stuck-hold watch),
//! [`retention`] (the periodic prune of old sent mails and audit rows),
//! [`metrics`] (every metric with its HELP text), [`amqp`] (topology, consumer, dead letters),
//! [`grpc`] (`mail.v1.MailService`), [`admin`] (`mail.admin.v1.MailAdmin`: held chains, dead
//! letters, failed mails for operators and `outboxctl`), [`error`], and [`App`],
//! which wires them together.

pub mod admin;
pub mod amqp;
pub mod config;
pub mod db;
pub mod error;
pub mod event;
pub mod grpc;
pub mod mail;
pub mod mailer;
pub mod metrics;
pub mod process;
pub mod retention;
pub mod retry;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::health::{DbProbe, Flag, Health};
use outbox_proto::mail::{
    admin::v1::mail_admin_server::MailAdminServer, v1::mail_service_server::MailServiceServer,
};
use outbox_support::backoff::Backoff;
use sqlx::PgPool;
use tokio::{
    net::TcpListener,
    sync::{Notify, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

pub use config::Config;

/// A running mail-svc: its bound addresses, and the tasks to wait for.
#[derive(Debug)]
pub struct App {
    grpc_addr: SocketAddr,
    metrics_addr: SocketAddr,
    pool: PgPool,
    topology: amqp::Topology,
    consuming: watch::Receiver<bool>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    workers: JoinHandle<anyhow::Result<()>>,
    health: JoinHandle<()>,
}

impl App {
    /// Validates the settings, binds the listeners (port 0 picks free ports) and starts the
    /// gRPC server, then the consumer, the mailer, the hold watch and the retention prune once
    /// the database is created and migrated, until `shutdown` is cancelled.
    ///
    /// Neither the database nor the broker has to be up: while the database is unreachable the
    /// service waits (retrying with capped backoff, logging each retry) and reports NOT_SERVING;
    /// the consumer keeps retrying the broker. Anything waiting cannot fix (a bad setting,
    /// refused credentials, a failed migration) stops start-up with an error naming the setting.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        // Install the metrics recorder now: `metrics::counter!` calls made before it exists are
        // dropped (kit's listener only installs it on the first scrape).
        metrics::register();
        let transport = cfg.transport()?;
        let pg = outbox_kit::db::options(&cfg.database_url)?;
        // Lazy: the service runs (and answers NOT_SERVING, and UNAVAILABLE to MailService
        // calls) while its database is away.
        let pool = outbox_kit::db::lazy_pool(&cfg.pool_options(&pg), cfg.db_max_connections);
        let db_step_timeout =
            outbox_kit::db::step_timeout(cfg.server.liveness.db_statement_timeout);
        // One attempt now: when the database is there, everything is migrated before `build`
        // returns; when it is unreachable, the workers wait for it in the background.
        let prepared = match outbox_kit::db::prepare(&pg, &db::MIGRATOR).await {
            Ok(()) => true,
            Err(e) if e.unreachable => {
                tracing::warn!(error = %e, "database unreachable at start-up; waiting for it");
                false
            }
            Err(e) => return Err(e.into()),
        };

        let listener = TcpListener::bind(cfg.server.grpc_addr)
            .await
            .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.server.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        let metrics_addr =
            outbox_kit::metrics::serve(cfg.server.metrics_addr, "METRICS_ADDR", shutdown.clone())
                .await?;

        let topology = amqp::topology(&cfg.amqp_exchange, &cfg.mail_queue);
        let security = cfg.server.grpc_security.load()?;
        let admin_token = cfg.server.admin.tokens()?;
        let amqp_tls = cfg.amqp_tls.load(&cfg.amqp_url)?;
        let (ready, consuming) = watch::channel(false);
        let broker = Arc::new(amqp::consumer::BrokerState::default());

        // SERVING while the database answers and the consumer is consuming.
        let (health, health_service) =
            Health::new::<MailServiceServer<grpc::MailGrpc>>(shutdown.clone()).await;
        let probe = (
            DbProbe::new(pg.clone()),
            Flag::new("broker: not consuming", consuming.clone()),
        );
        let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));

        let instance = format!("{:016x}", rand::random::<u64>());
        let consumer = amqp::consumer::consumer(topology.clone(), &instance, &broker, ready)
            .with_tls(amqp_tls.clone())
            .with_heartbeat(cfg.server.liveness.amqp_heartbeat)
            .with_prefetch(nonzero_u16(cfg.prefetch, "PREFETCH")?)
            .with_concurrency(nonzero(
                usize::from(cfg.consumer_concurrency),
                "CONSUMER_CONCURRENCY",
            )?)
            .with_batch(
                nonzero(usize::from(cfg.batch_size), "BATCH_SIZE")?,
                cfg.batch_window,
            )
            .with_attempt_timeout(db_step_timeout);
        let workers = Workers {
            consumer,
            brokers: outbox_support::failover::Failover::new(cfg.amqp_url.clone()),
            judge: amqp::consumer::MailJudge {
                trusted_publishers: cfg.trusted_publishers.clone(),
            },
            shared: Arc::new(process::Shared {
                instance,
                mailer_wake: Arc::new(Notify::new()),
                crash_after_commit_seq: cfg.hooks.crash_after_commit_seq,
            }),
            pool: pool.clone(),
            transport,
            mailer_concurrency: cfg.mailer_concurrency,
            mailer_batch: usize::from(cfg.batch_size),
            mail_hold_alert: cfg.mail_hold_alert,
            retention: cfg.retention(),
            db_step_timeout,
            pg,
        };
        let workers = tokio::spawn(workers.run(prepared, shutdown.clone()));

        let service = MailServiceServer::new(grpc::MailGrpc::new(pool.clone()).with_broker(broker));
        let admin = MailAdminServer::new(admin::MailAdminGrpc::new(
            pool.clone(),
            admin::dead_letters::DeadLetters::new(cfg.amqp_url.clone(), amqp_tls, topology.clone())
                .with_heartbeat(cfg.server.liveness.amqp_heartbeat),
            admin_token.clone(),
            cfg.trusted_publishers.clone(),
        ));
        let services =
            outbox_kit::grpc::Services::new(service).with_admin(admin, admin_token.clone());
        let token_lists = security.tokens.iter().chain(admin_token.list()).cloned();
        outbox_kit::auth::reload_on_sighup(token_lists.collect(), shutdown.clone());
        let server =
            outbox_kit::grpc::serve(listener, services, &health, health_service, security)?;
        tracing::info!(%grpc_addr, %metrics_addr, queue = %topology.queue, mailer = ?cfg.mailer, "mail-svc listening");
        Ok(Self {
            grpc_addr,
            metrics_addr,
            pool,
            topology,
            consuming,
            server,
            workers,
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

    /// The database pool (tests inspect the tables through it).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The exchange and queue names in use.
    pub fn topology(&self) -> &amqp::Topology {
        &self.topology
    }

    /// Turns true once the consumer has declared its topology and is consuming (false again
    /// while it reconnects).
    pub fn consuming(&self) -> watch::Receiver<bool> {
        self.consuming.clone()
    }

    /// Waits until the server, the consumer and the mailer have stopped after shutdown (the
    /// delivery and the send in flight finish first), then closes the pool. An error when the
    /// database could not be prepared for a reason waiting cannot fix (the service then stops).
    pub async fn run(self) -> anyhow::Result<()> {
        self.server.await.context("gRPC server task")??;
        self.workers.await.context("worker tasks")??;
        self.health.await.context("health monitor task")?;
        self.pool.close().await;
        tracing::info!("mail-svc stopped");
        Ok(())
    }
}

/// What runs once the database is ready: the consumer, the delivery loops, the hold watch, the
/// retention prune.
#[derive(Debug)]
struct Workers {
    consumer: outbox_inbox::amqp::Consumer,
    /// The broker's addresses, shared with nothing else: a reconnect moves on from the node it
    /// lost.
    brokers: outbox_support::failover::Failover,
    judge: amqp::consumer::MailJudge,
    /// What every transaction's handler shares.
    shared: Arc<process::Shared>,
    pool: PgPool,
    transport: mailer::Transport,
    mailer_concurrency: u16,
    /// Mails the log mailer claims and marks sent in one transaction (BATCH_SIZE).
    mailer_batch: usize,
    mail_hold_alert: std::time::Duration,
    retention: retention::Retention,
    /// How long one database step may go unanswered (`DB_STATEMENT_TIMEOUT` + 1 s).
    db_step_timeout: std::time::Duration,
    pg: sqlx::postgres::PgConnectOptions,
}

impl Workers {
    /// Waits for the database unless `prepared`, then runs everything until `shutdown`.
    async fn run(self, prepared: bool, shutdown: CancellationToken) -> anyhow::Result<()> {
        if !prepared {
            let backoff = Backoff::new(DB_WAIT_MIN, DB_WAIT_MAX);
            match outbox_kit::db::wait_until_prepared(&self.pg, &db::MIGRATOR, backoff, &shutdown)
                .await
            {
                Ok(true) => tracing::info!("database ready; starting the consumer"),
                Ok(false) => return Ok(()),
                Err(e) => {
                    // Waiting cannot fix it: stop the whole service, with the reason.
                    tracing::error!(error = format!("{e:#}"), "cannot prepare the database");
                    shutdown.cancel();
                    return Err(e);
                }
            }
        }
        let pool = self.pool.clone();
        let mailer_wake = self.shared.mailer_wake.clone();
        let pruner = tokio::spawn(retention::run(
            pool.clone(),
            self.shared.instance.clone(),
            self.retention,
            shutdown.clone(),
        ));
        let consumer = {
            let (consumer, brokers, judge, shared) =
                (self.consumer, self.brokers, self.judge, self.shared);
            let (pool, shutdown) = (pool.clone(), shutdown.clone());
            tokio::spawn(async move {
                consumer
                    .run_reconnecting(
                        &brokers,
                        &pool,
                        &process::INBOX,
                        judge,
                        || process::Mails::new(shared.clone()),
                        shutdown.cancelled(),
                    )
                    .await;
                tracing::info!("[mail] consumer stopped");
            })
        };
        let mailer = Arc::new(
            mailer::Mailer::new(pool.clone(), self.transport, mailer_wake)
                .with_batch_size(self.mailer_batch)
                .with_db_step_timeout(self.db_step_timeout),
        );
        let mailers: Vec<_> = (0..self.mailer_concurrency)
            .map(|_| tokio::spawn(mailer.clone().run(shutdown.clone())))
            .collect();
        let watcher = tokio::spawn(mailer::watch_holds(
            pool,
            self.mail_hold_alert,
            self.db_step_timeout,
            shutdown.clone(),
        ));
        consumer.await.context("consumer task")?;
        for mailer in mailers {
            mailer.await.context("mailer task")?;
        }
        watcher.await.context("hold watch task")?;
        pruner.await.context("retention task")?;
        Ok(())
    }
}

/// A setting that must not be zero (`validate` has checked it already).
fn nonzero(value: usize, name: &str) -> anyhow::Result<std::num::NonZeroUsize> {
    std::num::NonZeroUsize::new(value).with_context(|| format!("{name} must be at least 1"))
}

fn nonzero_u16(value: u16, name: &str) -> anyhow::Result<std::num::NonZeroU16> {
    std::num::NonZeroU16::new(value).with_context(|| format!("{name} must be at least 1"))
}

/// Retry delays while waiting for the database at start-up: from 200 ms, doubling, capped at 10 s.
const DB_WAIT_MIN: std::time::Duration = std::time::Duration::from_millis(200);
const DB_WAIT_MAX: std::time::Duration = std::time::Duration::from_secs(10);
