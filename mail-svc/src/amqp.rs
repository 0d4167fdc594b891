//! RabbitMQ: the topology mail-svc declares, the consumer loop, and dead-lettering.
//!
//! Topology (all durable, declared idempotently on every (re)connect):
//!
//! ```text
//! AMQP_EXCHANGE (topic) --order.#--> MAIL_QUEUE (quorum, x-dead-letter-exchange=MAIL_QUEUE.dlx)
//! MAIL_QUEUE.dlx (fanout) ---------> MAIL_QUEUE.dead-letter (quorum)
//! ```
//!
//! Poison messages are published by this service to `MAIL_QUEUE.dlx` with a header
//! `x-death-reason` (and the original body and properties), confirmed by the broker, and only
//! then acked. The queue's own dead-letter exchange is the broker-side safety net: a message
//! redelivered more than [`DELIVERY_LIMIT`] times (e.g. one that crashes the process every time)
//! lands in the same dead-letter queue instead of cycling forever.

use std::{sync::Arc, time::Duration};

use anyhow::{Context, anyhow};
use futures::{StreamExt, stream::FuturesUnordered};
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties, ExchangeKind,
    message::Delivery,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use outbox_kit::{backoff::Backoff, trace::TraceParent};
use sqlx::PgPool;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    config::Hooks,
    db,
    event::{self, Event},
    process::{self, Outcome},
};

/// The header that carries why a message was dead-lettered.
pub const DEATH_REASON_HEADER: &str = "x-death-reason";

/// Redeliveries after which the broker itself dead-letters a message (quorum queue
/// `x-delivery-limit`).
pub const DELIVERY_LIMIT: i64 = 50;

/// Attempts at a delivery whose transaction fails for a reason other than the database being
/// unreachable (a bug, a corrupt row) before it is dead-lettered with that reason.
const MAX_FAILED_ATTEMPTS: u32 = 5;

/// The names mail-svc declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The topic exchange relay-svc publishes to.
    pub exchange: String,
    /// The queue this service consumes.
    pub queue: String,
    /// `<queue>.dlx`: where poison goes.
    pub dead_letter_exchange: String,
    /// `<queue>.dead-letter`: where poison stays, for a person to look at.
    pub dead_letter_queue: String,
}

impl Topology {
    pub fn new(exchange: &str, queue: &str) -> Self {
        Self {
            exchange: exchange.to_owned(),
            queue: queue.to_owned(),
            dead_letter_exchange: format!("{queue}.dlx"),
            dead_letter_queue: format!("{queue}.dead-letter"),
        }
    }

    /// Declares everything (idempotent: the same arguments every time, by every instance).
    pub async fn declare(&self, ch: &Channel) -> lapin::Result<()> {
        // Durable: the exchanges and queues (and the persistent messages in them) survive a
        // broker restart. The exchange declaration matches relay-svc's (durable topic), so
        // whichever service starts first creates it.
        let durable_exchange = ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        };
        ch.exchange_declare(
            self.exchange.as_str().into(),
            ExchangeKind::Topic,
            durable_exchange,
            FieldTable::default(),
        )
        .await?;
        // Fanout: every dead-lettered message reaches the dead-letter queue, whatever its
        // original routing key (kept on the message for the reader).
        ch.exchange_declare(
            self.dead_letter_exchange.as_str().into(),
            ExchangeKind::Fanout,
            durable_exchange,
            FieldTable::default(),
        )
        .await?;
        let durable_queue = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        let mut dlq_args = FieldTable::default();
        dlq_args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        ch.queue_declare(
            self.dead_letter_queue.as_str().into(),
            durable_queue,
            dlq_args,
        )
        .await?;
        ch.queue_bind(
            self.dead_letter_queue.as_str().into(),
            self.dead_letter_exchange.as_str().into(),
            "".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;

        // A quorum queue: replicated, and it counts redeliveries (x-delivery-limit), so nothing
        // is requeued forever.
        let mut args = FieldTable::default();
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        args.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(self.dead_letter_exchange.as_str().into()),
        );
        args.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(DELIVERY_LIMIT),
        );
        ch.queue_declare(self.queue.as_str().into(), durable_queue, args)
            .await?;
        // `order.#`: every order event (order.created, order.status_changed, future ones).
        ch.queue_bind(
            self.queue.as_str().into(),
            self.exchange.as_str().into(),
            "order.#".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        Ok(())
    }
}

/// The consumer: one connection, up to `concurrency` deliveries processed at once, each acked
/// after its transaction committed.
#[derive(Debug)]
pub struct Consumer {
    pub amqp_url: outbox_kit::secret::SecretUrl,
    pub topology: Topology,
    pub prefetch: u16,
    /// Deliveries in processing at once.
    pub concurrency: usize,
    pub pool: PgPool,
    /// Names this process's counter rows.
    pub instance: String,
    /// Poked after mails were queued.
    pub mailer_wake: Arc<Notify>,
    /// True while consuming.
    pub ready: watch::Sender<bool>,
    pub hooks: Hooks,
}

enum End {
    Shutdown,
    /// The crash test hook fired.
    Crashed,
}

enum Handled {
    Acked,
    Shutdown,
    Crashed,
}

impl Consumer {
    /// Consumes until `shutdown`; reconnects with backoff whenever the broker goes away.
    pub async fn run(self, shutdown: CancellationToken) {
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(10));
        while !shutdown.is_cancelled() {
            let result = self.session(&shutdown, &mut backoff).await;
            self.ready.send_replace(false);
            match result {
                Ok(End::Shutdown) => break,
                Ok(End::Crashed) => {
                    tracing::error!("[mail] consumer crashed (test hook)");
                    return;
                }
                Err(e) => {
                    let delay = backoff.next_delay();
                    tracing::warn!(
                        error = format!("{e:#}"),
                        retry = backoff.failures(),
                        "[mail] broker unavailable; retrying in {delay:?}"
                    );
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
        tracing::info!("[mail] consumer stopped");
    }

    async fn session(
        &self,
        shutdown: &CancellationToken,
        backoff: &mut Backoff,
    ) -> anyhow::Result<End> {
        let conn = Connection::connect(&self.amqp_url, ConnectionProperties::default())
            .await
            .context("AMQP_URL: cannot connect to RabbitMQ")?;
        let result = self.consume(&conn, shutdown, backoff).await;
        // Closing the connection hands every unacked delivery back to the queue.
        let _ = conn.close(200, "bye".into()).await;
        result
    }

    async fn consume(
        &self,
        conn: &Connection,
        shutdown: &CancellationToken,
        backoff: &mut Backoff,
    ) -> anyhow::Result<End> {
        let ch = conn.create_channel().await?;
        self.topology
            .declare(&ch)
            .await
            .context("declaring the topology")?;
        // Dead-letter publishes get their own channel in confirm mode: a poison message is acked
        // only once the broker has taken its dead-letter copy.
        let dl = conn.create_channel().await?;
        dl.confirm_select(ConfirmSelectOptions::default()).await?;
        // Prefetch bounds the deliveries in flight to this consumer (unacked); the rest wait in
        // the queue for any instance.
        ch.basic_qos(self.prefetch, BasicQosOptions::default())
            .await?;
        // Manual acks (no_ack: false): a delivery leaves the queue only after its transaction
        // committed.
        let mut deliveries = ch
            .basic_consume(
                self.topology.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        backoff.reset();
        self.ready.send_replace(true);
        tracing::info!(queue = %self.topology.queue, "[mail] consuming");
        // A connection that dies under us does not always end the delivery stream (seen when
        // the broker restarts): watch the connection too, and start a new session when it is
        // gone.
        let mut watchdog = tokio::time::interval(Duration::from_secs(1));
        // Deliveries of different orders are processed side by side; acks are per delivery, so
        // they may complete in any order.
        let mut in_flight = FuturesUnordered::new();
        let end = loop {
            tokio::select! {
                _ = shutdown.cancelled() => break End::Shutdown,
                _ = watchdog.tick() => {
                    if !conn.status().connected() {
                        return Err(anyhow!("the broker connection was lost"));
                    }
                }
                Some(handled) = in_flight.next(), if !in_flight.is_empty() => {
                    match handled? {
                        Handled::Acked => {}
                        Handled::Shutdown => break End::Shutdown,
                        Handled::Crashed => break End::Crashed,
                    }
                }
                next = deliveries.next(), if in_flight.len() < self.concurrency => {
                    let delivery = match next {
                        None => return Err(anyhow!("the broker cancelled the consumer")),
                        Some(Err(e)) => return Err(e).context("consuming"),
                        Some(Ok(d)) => d,
                    };
                    in_flight.push(self.handle(&dl, delivery, shutdown));
                }
            }
        };
        // Shutting down: what is in flight finishes (and is acked) first.
        if matches!(end, End::Shutdown) {
            while let Some(handled) = in_flight.next().await {
                handled?;
            }
        }
        drop(in_flight);
        // Close the channels before the connection (a quiet shutdown); unacked deliveries go
        // back to the queue.
        let _ = ch.close(200, "bye".into()).await;
        let _ = dl.close(200, "bye".into()).await;
        Ok(end)
    }

    /// One delivery: decode, then dead-letter or apply, then ack. An error means the broker
    /// connection is in trouble: the delivery stays unacked and comes back.
    async fn handle(
        &self,
        dl: &Channel,
        delivery: Delivery,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Handled> {
        let props = &delivery.properties;
        let traceparent =
            header_str(props, "traceparent").filter(|v| TraceParent::parse(v).is_some());
        let trace_id = traceparent
            .as_deref()
            .and_then(TraceParent::parse)
            .map(|t| t.trace_id);
        let content_type = props.content_type().as_ref().map(|c| c.as_str().to_owned());
        let decoded = event::decode(content_type.as_deref(), &delivery.data);
        let span = tracing::info_span!(
            "event",
            order_id = tracing::field::Empty,
            seq = tracing::field::Empty,
            trace_id = tracing::field::Empty
        );
        if let Some(t) = &trace_id {
            span.record("trace_id", t.as_str());
        }
        if let Ok(ev) = &decoded {
            span.record("order_id", ev.order_id);
            span.record("seq", ev.seq);
        }
        async move {
            let reason = match decoded {
                Err(poison) => poison.0,
                Ok(ev) => match self.apply(&ev, traceparent.as_deref(), shutdown).await {
                    None => return Ok(Handled::Shutdown),
                    Some(Ok(())) => {
                        if self.hooks.crash_after_commit_seq == Some(ev.seq) {
                            return Ok(Handled::Crashed);
                        }
                        broker_call("ack", delivery.ack(BasicAckOptions::default())).await?;
                        return Ok(Handled::Acked);
                    }
                    Some(Err(reason)) => reason,
                },
            };
            self.dead_letter(dl, &delivery, &reason).await?;
            let (pool, instance) = (&self.pool, self.instance.as_str());
            let counted = retry_db(shutdown, "counting a dead letter", || async move {
                let mut conn = pool.acquire().await?;
                db::bump(&mut conn, instance, db::DEAD_LETTERED, 1).await
            })
            .await;
            match counted {
                // Shutting down: the copy is in the dead-letter queue but the original is not
                // acked; it comes back and is dead-lettered (and counted) again.
                None => return Ok(Handled::Shutdown),
                Some(Err(e)) => tracing::error!(error = %e, "cannot count a dead letter"),
                Some(Ok(())) => {}
            }
            broker_call("ack", delivery.ack(BasicAckOptions::default())).await?;
            Ok(Handled::Acked)
        }
        .instrument(span)
        .await
    }

    /// Runs the event's transaction until it commits. `Some(Err(reason))` means dead-letter it;
    /// `None` means shutdown came first (nothing acked, the broker redelivers).
    async fn apply(
        &self,
        ev: &Event,
        traceparent: Option<&str>,
        shutdown: &CancellationToken,
    ) -> Option<Result<(), String>> {
        let outcome = retry_db(shutdown, "processing an event", || {
            process::apply(&self.pool, &self.instance, ev, traceparent)
        })
        .await?;
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => return Some(Err(format!("cannot be processed: {e}"))),
        };
        match outcome {
            Outcome::Processed(queued) => {
                for q in &queued {
                    // A released successor carries its own trace (not the delivery's).
                    let span = tracing::info_span!("mail", trace_id = tracing::field::Empty);
                    if let Some(t) = q.trace_id.as_deref().filter(|_| q.seq != ev.seq) {
                        span.record("trace_id", t);
                    }
                    span.in_scope(|| {
                        tracing::info!(
                            "[mail] send seq={} order={} \"{}\" ({})",
                            q.seq,
                            q.order_id,
                            q.en,
                            q.ja
                        )
                    });
                }
                metrics::counter!("mail_processed_total").increment(queued.len() as u64);
                self.mailer_wake.notify_one();
            }
            Outcome::Skipped { held } => {
                metrics::counter!("mail_skipped_total").increment(1);
                tracing::info!(
                    "[mail] skip seq={} order={} (already {})",
                    ev.seq,
                    ev.order_id,
                    if held { "held" } else { "sent" }
                );
            }
            Outcome::Held { waiting_for } => {
                metrics::counter!("mail_held_total").increment(1);
                tracing::info!(
                    "[mail] hold seq={} order={} (waiting for seq={waiting_for})",
                    ev.seq,
                    ev.order_id
                );
            }
            Outcome::Conflict(reason) => return Some(Err(reason)),
        }
        Some(Ok(()))
    }

    /// Publishes the message, unchanged plus an `x-death-reason` header, to the dead-letter
    /// exchange and waits for the broker's confirm.
    async fn dead_letter(
        &self,
        dl: &Channel,
        delivery: &Delivery,
        reason: &str,
    ) -> anyhow::Result<()> {
        let seq = delivery
            .properties
            .message_id()
            .as_ref()
            .map_or("?", |m| m.as_str());
        tracing::warn!("[mail] dead-letter seq={seq} reason={reason}");
        let mut headers = delivery.properties.headers().clone().unwrap_or_default();
        headers.insert(
            DEATH_REASON_HEADER.into(),
            AMQPValue::LongString(LongString::from(reason)),
        );
        headers.insert(
            "x-original-routing-key".into(),
            AMQPValue::LongString(LongString::from(delivery.routing_key.as_str())),
        );
        let properties = delivery.properties.clone().with_headers(headers);
        let publish = async {
            dl.basic_publish(
                self.topology.dead_letter_exchange.as_str().into(),
                delivery.routing_key.clone(),
                // Mandatory: an unroutable dead letter (someone deleted the queue) comes back
                // as an error instead of vanishing.
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &delivery.data,
                properties,
            )
            .await?
            .await
        };
        let confirm = broker_call("dead-letter publish", publish).await?;
        if !confirm.is_ack() {
            return Err(anyhow!("the broker refused the dead letter (nack)"));
        }
        if confirm.take_message().is_some() {
            return Err(anyhow!(
                "the dead letter was unroutable: {} is not bound",
                self.topology.dead_letter_queue
            ));
        }
        metrics::counter!("mail_dead_lettered_total").increment(1);
        Ok(())
    }
}

/// A header's text value (string headers arrive as long or short strings).
fn header_str(props: &BasicProperties, name: &str) -> Option<String> {
    match props.headers().as_ref()?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}

/// Runs `op` until it succeeds: with backoff and without limit while the database is
/// unreachable (the delivery waits, unacked, never lost), and up to [`MAX_FAILED_ATTEMPTS`]
/// times for other errors. `None` when shutdown came first.
async fn retry_db<T, F, Fut>(
    shutdown: &CancellationToken,
    what: &str,
    mut op: F,
) -> Option<Result<T, sqlx::Error>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
    let mut failed = 0;
    loop {
        if shutdown.is_cancelled() {
            return None;
        }
        let err = match op().await {
            Ok(v) => return Some(Ok(v)),
            Err(e) => e,
        };
        if !outbox_kit::db::is_unavailable(&err) {
            failed += 1;
            if failed >= MAX_FAILED_ATTEMPTS {
                tracing::error!(error = %err, "[mail] {what} failed {failed} times; giving up");
                return Some(Err(err));
            }
        }
        let delay = backoff.next_delay();
        tracing::warn!(error = %err, "[mail] {what}: database error; retrying in {delay:?}");
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// How long a call to the broker (an ack, a confirmed publish) may take before the connection is
/// considered dead and a new session is started; the delivery then comes back unacked.
const BROKER_CALL_TIMEOUT: Duration = Duration::from_secs(10);

async fn broker_call<T>(
    what: &str,
    call: impl std::future::Future<Output = lapin::Result<T>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(BROKER_CALL_TIMEOUT, call).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(anyhow!("{what} got no answer in {BROKER_CALL_TIMEOUT:?}")),
    }
}
