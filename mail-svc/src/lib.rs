//! mail-svc: the seed's MailSender. It consumes order events from RabbitMQ (published by
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
//! locks, with exactly the result of one transaction per event ([`process::apply_batch`]); the
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
//! [`retry`] (which database errors are the event's fault, and the retry loop), [`db`] (SQL +
//! migrations), [`mail`] (the text table), [`mailer`] (delivery + the stuck-hold watch), [`amqp`]
//! (topology, consumer, dead letters), [`grpc`] (`mail.v1.MailService`), [`error`], and [`App`],
//! which wires them together.

pub mod amqp;
pub mod config;
pub mod db;
pub mod error;
pub mod event;
pub mod grpc;
pub mod mail;
pub mod mailer;
pub mod process;
pub mod retry;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_proto::mail::v1::mail_service_server::MailServiceServer;
use sqlx::PgPool;
use tokio::{
    net::TcpListener,
    sync::{Notify, watch},
    task::JoinHandle,
};
use tokio_stream::wrappers::TcpListenerStream;
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
    consumer: JoinHandle<()>,
    mailers: Vec<JoinHandle<()>>,
    watcher: JoinHandle<()>,
}

impl App {
    /// Validates the settings, connects and migrates the database, binds the listeners (port 0
    /// picks free ports) and starts the consumer, the mailer and the gRPC server, until
    /// `shutdown` is cancelled. The broker may be down at startup: the consumer keeps retrying.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<Self> {
        cfg.validate()?;
        // Install the metrics recorder now: `metrics::counter!` calls made before it exists are
        // dropped (kit's listener only installs it on the first scrape).
        outbox_kit::metrics::handle();
        let transport = mailer::Transport::from_config(&cfg)?;
        let pool = outbox_kit::db::connect(&cfg.database_url, cfg.db_max_connections).await?;
        db::MIGRATOR
            .run(&pool)
            .await
            .context("DATABASE_URL: running the mail migrations")?;

        let listener = TcpListener::bind(cfg.grpc_addr)
            .await
            .with_context(|| format!("GRPC_ADDR: cannot listen on {}", cfg.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        let metrics_addr =
            outbox_kit::metrics::serve(cfg.metrics_addr, "METRICS_ADDR", shutdown.clone()).await?;

        let topology = amqp::Topology::new(&cfg.amqp_exchange, &cfg.mail_queue);
        let mailer_wake = Arc::new(Notify::new());
        let (ready, consuming) = watch::channel(false);
        let consumer = amqp::Consumer {
            amqp_url: cfg.amqp_url.clone(),
            topology: topology.clone(),
            prefetch: cfg.prefetch,
            concurrency: usize::from(cfg.consumer_concurrency),
            batch_size: usize::from(cfg.batch_size),
            batch_window: std::time::Duration::from_millis(cfg.batch_window_ms),
            pool: pool.clone(),
            instance: format!("{:016x}", rand::random::<u64>()),
            mailer_wake: mailer_wake.clone(),
            ready,
            trusted_publishers: cfg.trusted_publishers.clone(),
            hooks: cfg.hooks.clone(),
        };
        let consumer = tokio::spawn(consumer.run(shutdown.clone()));
        let mailer = Arc::new(
            mailer::Mailer::new(pool.clone(), transport, mailer_wake)
                .with_batch_size(cfg.batch_size.into()),
        );
        let mailers = (0..cfg.mailer_concurrency)
            .map(|_| tokio::spawn(mailer.clone().run(shutdown.clone())))
            .collect();
        let watcher = tokio::spawn(mailer::watch_holds(
            pool.clone(),
            cfg.mail_hold_alert,
            shutdown.clone(),
        ));

        let (health, health_service) = outbox_kit::grpc::health_reporter();
        outbox_kit::grpc::set_serving::<MailServiceServer<grpc::MailGrpc>>(&health).await;
        let (reflection_v1, reflection_v1alpha) =
            outbox_kit::grpc::reflection(&["mail.v1.MailService"])?;
        let service = MailServiceServer::new(grpc::MailGrpc::new(pool.clone()));
        let server = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(health_service)
                .add_service(reflection_v1)
                .add_service(reflection_v1alpha)
                .add_service(service)
                .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async move {
                    shutdown.cancelled().await
                }),
        );
        tracing::info!(%grpc_addr, %metrics_addr, queue = %topology.queue, mailer = ?cfg.mailer, "mail-svc listening");
        Ok(Self {
            grpc_addr,
            metrics_addr,
            pool,
            topology,
            consuming,
            server,
            consumer,
            mailers,
            watcher,
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
    /// delivery and the send in flight finish first), then closes the pool.
    pub async fn run(self) -> anyhow::Result<()> {
        self.server.await.context("gRPC server task")??;
        self.consumer.await.context("consumer task")?;
        for mailer in self.mailers {
            mailer.await.context("mailer task")?;
        }
        self.watcher.await.context("hold watch task")?;
        self.pool.close().await;
        tracing::info!("mail-svc stopped");
        Ok(())
    }
}
