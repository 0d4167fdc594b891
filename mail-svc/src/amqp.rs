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
//! `x-death-reason` (at most [`MAX_REASON_BYTES`]; longer reasons are cut and say so) and the
//! original body and properties, confirmed by the broker, and only then acked. A dead-letter
//! publish the broker refuses closes only the dead-letter channel: it is reopened (and the
//! dead-letter exchange and queue declared again), and after [`DEAD_LETTER_ATTEMPTS`] failures
//! the delivery is rejected without requeue, so the broker moves it to the same dead-letter queue
//! itself (with its `x-death` header; the reason is in the log). The consumer session goes on
//! either way. The queue's own dead-letter exchange is also the broker-side safety net: a message
//! redelivered more than [`DELIVERY_LIMIT`] times (e.g. one that crashes the process every time)
//! lands in the same dead-letter queue instead of cycling forever.
//!
//! **Batches.** Deliveries are gathered into batches of up to `BATCH_SIZE`: an idle consumer
//! starts one at once with what has arrived; while another batch is in flight, a batch waits at
//! most `BATCH_WINDOW` for more. Each delivery is judged first (publisher, size, format) and
//! poison is dead-lettered on its own; the rest are applied in one transaction
//! ([`process::apply_batch`]), retried as a whole on a database error (see [`crate::retry`]) or
//! applied one by one when an event's data failed it, so that only that event is dead-lettered.
//! After the commit, chain conflicts are dead-lettered and the others acked together: one
//! `basic.ack` with `multiple` on the highest tag when no other unsettled delivery of the channel
//! lies below it (a `multiple` ack settles everything up to its tag), else one ack each.
//!
//! **Message size.** RabbitMQ 3.10 has no per-queue limit on a message's size, only the
//! broker-wide `max_message_size` (default 128 MiB), and lapin assembles a whole message before
//! handing it over. What a publisher can make one mail-svc buffer is therefore bounded by
//! `PREFETCH` × the broker's `max_message_size`: operators set `max_message_size` on the broker
//! (docs/OPERATIONS.md says how). mail-svc itself checks the body size before it reads, copies or
//! stores anything ([`crate::event::MAX_BODY_BYTES`]) and dead-letters larger bodies.
//!
//! **Trusted publishers.** With `TRUSTED_PUBLISHERS` set, a message whose AMQP `user_id`
//! property is missing or not in the list is dead-lettered unread. RabbitMQ refuses a publish
//! whose `user_id` differs from the publishing connection's user, so the property names who
//! published.

use std::{borrow::Cow, collections::BTreeSet, sync::Arc, time::Duration};

use anyhow::{Context, anyhow};
use futures::{FutureExt, StreamExt, stream::FuturesUnordered};
use lapin::{
    BasicProperties, Channel, Connection, ExchangeKind,
    message::Delivery,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        BasicRejectOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
        QueueDeclareOptions,
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
    retry,
};

/// The header that carries why a message was dead-lettered.
pub const DEATH_REASON_HEADER: &str = "x-death-reason";

/// Redeliveries after which the broker itself dead-letters a message (quorum queue
/// `x-delivery-limit`).
pub const DELIVERY_LIMIT: i64 = 50;

/// The longest `x-death-reason` header, in bytes; a longer reason is cut at a character boundary
/// and ends with `… (truncated, <n> bytes)`. A reason repeats parts of the message (a bad field's
/// value), and an unbounded header can exceed the broker's frame size, which closes the whole
/// connection.
pub const MAX_REASON_BYTES: usize = 1024;

/// Publishes of one dead letter (each on a healthy channel) before falling back to rejecting the
/// delivery, which the broker dead-letters itself.
pub const DEAD_LETTER_ATTEMPTS: u32 = 3;

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
        ch.exchange_declare(
            self.exchange.as_str().into(),
            ExchangeKind::Topic,
            DURABLE_EXCHANGE,
            FieldTable::default(),
        )
        .await?;
        self.declare_dead_letter(ch).await?;

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
        ch.queue_declare(self.queue.as_str().into(), DURABLE_QUEUE, args)
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

    /// Declares the dead-letter exchange and queue and binds them (also when the dead-letter
    /// channel is reopened: a refused publish may mean someone deleted them).
    pub async fn declare_dead_letter(&self, ch: &Channel) -> lapin::Result<()> {
        // Fanout: every dead-lettered message reaches the dead-letter queue, whatever its
        // original routing key (kept on the message for the reader).
        ch.exchange_declare(
            self.dead_letter_exchange.as_str().into(),
            ExchangeKind::Fanout,
            DURABLE_EXCHANGE,
            FieldTable::default(),
        )
        .await?;
        let mut dlq_args = FieldTable::default();
        dlq_args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        ch.queue_declare(
            self.dead_letter_queue.as_str().into(),
            DURABLE_QUEUE,
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
        Ok(())
    }
}

/// Durable: the exchanges and queues (and the persistent messages in them) survive a broker
/// restart.
const DURABLE_EXCHANGE: ExchangeDeclareOptions = ExchangeDeclareOptions {
    passive: false,
    durable: true,
    auto_delete: false,
    internal: false,
    nowait: false,
};
const DURABLE_QUEUE: QueueDeclareOptions = QueueDeclareOptions {
    passive: false,
    durable: true,
    exclusive: false,
    auto_delete: false,
    nowait: false,
};

/// The consumer: one connection, up to `concurrency` deliveries processed at once, each acked
/// after its transaction committed.
#[derive(Debug)]
pub struct Consumer {
    pub amqp_url: outbox_kit::secret::SecretUrl,
    /// TLS material for an `amqps://` URL.
    pub amqp_tls: outbox_kit::amqp::Tls,
    pub topology: Topology,
    pub prefetch: u16,
    /// Batches in processing at once.
    pub concurrency: usize,
    /// The most deliveries in one batch (one transaction, one ack).
    pub batch_size: usize,
    /// How long a batch may wait for more deliveries while another batch is in flight.
    pub batch_window: Duration,
    pub pool: PgPool,
    /// Names this process's counter rows.
    pub instance: String,
    /// Poked after mails were queued.
    pub mailer_wake: Arc<Notify>,
    /// True while consuming.
    pub ready: watch::Sender<bool>,
    /// RabbitMQ users whose messages are processed (`TRUSTED_PUBLISHERS`); empty: everyone's.
    pub trusted_publishers: Vec<String>,
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

/// The confirm-mode channel dead letters go out on. A publish the broker refuses (an exchange
/// someone deleted, a message over the broker's size limit) closes this channel only; it is
/// reopened on the next use, so one bad dead letter never ends the consumer session.
struct DeadLetterChannel<'a> {
    conn: &'a Connection,
    topology: &'a Topology,
    ch: tokio::sync::Mutex<Option<Channel>>,
}

impl DeadLetterChannel<'_> {
    /// The open channel, or a new one (with the dead-letter exchange and queue declared again:
    /// the broker closes the channel when a publish names an exchange that no longer exists).
    async fn get(&self) -> anyhow::Result<Channel> {
        let mut current = self.ch.lock().await;
        if let Some(ch) = current.as_ref().filter(|ch| ch.status().connected()) {
            return Ok(ch.clone());
        }
        let ch = self.conn.create_channel().await?;
        // Confirm mode: a poison message is acked only once the broker has taken its copy.
        ch.confirm_select(ConfirmSelectOptions::default()).await?;
        self.topology.declare_dead_letter(&ch).await?;
        *current = Some(ch.clone());
        Ok(ch)
    }

    async fn close(&self) {
        if let Some(ch) = self.ch.lock().await.take() {
            let _ = ch.close(200, "bye".into()).await;
        }
    }
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
        let conn = outbox_kit::amqp::connect(&self.amqp_url, &self.amqp_tls, Default::default())
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
        let dl_ch = conn.create_channel().await?;
        dl_ch
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        let dl = DeadLetterChannel {
            conn,
            topology: &self.topology,
            ch: tokio::sync::Mutex::new(Some(dl_ch)),
        };
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
        // Deliveries are gathered into batches (up to `batch_size`), and up to `concurrency`
        // batches are processed side by side; a batch's acks may complete before an earlier
        // batch's.
        let unsettled = Unsettled::default();
        let mut in_flight = FuturesUnordered::new();
        let mut gathering: Vec<Delivery> = Vec::with_capacity(self.batch_size);
        let mut window_end = tokio::time::Instant::now();
        let end = loop {
            // A batch starts when it is full, when nothing else is in flight (an idle consumer
            // adds no latency: it takes what is ready), or when its window has passed.
            if !gathering.is_empty()
                && in_flight.len() < self.concurrency
                && (gathering.len() >= self.batch_size
                    || in_flight.is_empty()
                    || tokio::time::Instant::now() >= window_end)
            {
                let batch = std::mem::replace(&mut gathering, Vec::with_capacity(self.batch_size));
                in_flight.push(self.handle_batch(&dl, &unsettled, batch, shutdown));
                continue;
            }
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
                _ = tokio::time::sleep_until(window_end),
                    if !gathering.is_empty() && in_flight.len() < self.concurrency => {}
                next = deliveries.next(), if gathering.len() < self.batch_size => {
                    let delivery = match next {
                        None => return Err(anyhow!("the broker cancelled the consumer")),
                        Some(Err(e)) => return Err(e).context("consuming"),
                        Some(Ok(d)) => d,
                    };
                    if gathering.is_empty() {
                        window_end = tokio::time::Instant::now() + self.batch_window;
                    }
                    unsettled.delivered(delivery.delivery_tag);
                    gathering.push(delivery);
                    // And whatever else has arrived already.
                    while gathering.len() < self.batch_size {
                        match deliveries.next().now_or_never() {
                            Some(Some(Ok(d))) => {
                                unsettled.delivered(d.delivery_tag);
                                gathering.push(d);
                            }
                            Some(None) => {
                                return Err(anyhow!("the broker cancelled the consumer"));
                            }
                            Some(Some(Err(e))) => return Err(e).context("consuming"),
                            None => break,
                        }
                    }
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
        dl.close().await;
        Ok(end)
    }

    /// One batch of deliveries (see the module docs, "Batches"): judge each (publisher, size,
    /// format) and dead-letter the poison on its own; apply the rest in one transaction; then
    /// dead-letter the chain conflicts and ack the others together. An error means the broker
    /// connection is in trouble: what is not acked yet comes back.
    async fn handle_batch(
        &self,
        dl: &DeadLetterChannel<'_>,
        unsettled: &Unsettled,
        batch: Vec<Delivery>,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Handled> {
        let span = tracing::info_span!("batch", size = batch.len());
        async move {
            let mut valid = Vec::with_capacity(batch.len());
            for delivery in batch {
                let (decoded, traceparent) = self.judge(&delivery);
                match decoded {
                    Ok(ev) => valid.push(Valid {
                        delivery,
                        ev,
                        traceparent,
                    }),
                    Err(poison) => {
                        let handled = self
                            .reject(dl, unsettled, &delivery, &poison.0, shutdown)
                            .await?;
                        if !matches!(handled, Handled::Acked) {
                            return Ok(handled);
                        }
                    }
                }
            }
            if valid.is_empty() {
                return Ok(Handled::Acked);
            }
            let items: Vec<process::Item<'_>> = valid
                .iter()
                .map(|v| process::Item {
                    event: &v.ev,
                    traceparent: v.traceparent.as_deref(),
                })
                .collect();
            // Database errors retry the whole batch, unacked, for as long as it takes, unless an
            // event's data caused them (see `retry`).
            let applied = retry::until_done(shutdown, "processing a batch", || {
                process::apply_batch(&self.pool, &self.instance, &items)
            })
            .await;
            drop(items);
            let outcomes = match applied {
                None => return Ok(Handled::Shutdown),
                Some(Ok(outcomes)) => outcomes,
                Some(Err(e)) => {
                    // One event's data fails the whole statement: find it by applying the events
                    // one by one, so that only the guilty one is dead-lettered.
                    tracing::warn!(
                        error = %e,
                        "[mail] a batch of {} failed on an event's data; applying its events one \
                         by one",
                        valid.len()
                    );
                    return self.one_by_one(dl, unsettled, valid, shutdown).await;
                }
            };
            let crash_seq = self.hooks.crash_after_commit_seq;
            let mut crashed = false;
            let mut acks = Vec::with_capacity(valid.len());
            let mut conflicts = Vec::new();
            let mut alone = Vec::new();
            for (v, outcome) in valid.into_iter().zip(outcomes) {
                let Some(outcome) = outcome else {
                    alone.push(v);
                    continue;
                };
                crashed |= crash_seq == Some(v.ev.seq);
                match self.report(&v.ev, v.traceparent.as_deref(), outcome) {
                    Ok(()) => acks.push(v.delivery),
                    Err(reason) => conflicts.push((v.delivery, reason)),
                }
            }
            if crashed {
                return Ok(Handled::Crashed);
            }
            for (delivery, reason) in conflicts {
                let handled = self
                    .reject(dl, unsettled, &delivery, &reason, shutdown)
                    .await?;
                if !matches!(handled, Handled::Acked) {
                    return Ok(handled);
                }
            }
            ack_together(unsettled, &acks).await?;
            if !alone.is_empty() {
                return self.one_by_one(dl, unsettled, alone, shutdown).await;
            }
            Ok(Handled::Acked)
        }
        .instrument(span)
        .await
    }

    /// Applies each event in its own transaction, in delivery order, and settles it: the
    /// fallback for a batch that failed on an event's data, and for the events of an order
    /// whose held successor is corrupt (they are retried, and logged, until someone repairs it).
    async fn one_by_one(
        &self,
        dl: &DeadLetterChannel<'_>,
        unsettled: &Unsettled,
        valid: Vec<Valid>,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Handled> {
        for v in valid {
            let span = event_span(&v.ev, v.traceparent.as_deref());
            let reason = match self
                .apply(&v.ev, v.traceparent.as_deref(), shutdown)
                .instrument(span)
                .await
            {
                None => return Ok(Handled::Shutdown),
                Some(Ok(())) => {
                    if self.hooks.crash_after_commit_seq == Some(v.ev.seq) {
                        return Ok(Handled::Crashed);
                    }
                    ack_together(unsettled, std::slice::from_ref(&v.delivery)).await?;
                    continue;
                }
                Some(Err(reason)) => reason,
            };
            let handled = self
                .reject(dl, unsettled, &v.delivery, &reason, shutdown)
                .await?;
            if !matches!(handled, Handled::Acked) {
                return Ok(handled);
            }
        }
        Ok(Handled::Acked)
    }

    /// Judges a delivery before any database work: who published it, then its size and format
    /// (see `event::decode`, which checks the size before parsing). Also its valid traceparent.
    fn judge(&self, delivery: &Delivery) -> (Result<Event, event::Poison>, Option<String>) {
        let props = &delivery.properties;
        let traceparent =
            header_str(props, "traceparent").filter(|v| TraceParent::parse(v).is_some());
        let content_type = props.content_type().as_ref().map(|c| c.as_str().to_owned());
        let user_id = props.user_id().as_ref().map(|u| u.as_str());
        let decoded = event::check_publisher(&self.trusted_publishers, user_id)
            .and_then(|()| event::decode(content_type.as_deref(), &delivery.data));
        (decoded, traceparent)
    }

    /// Dead-letters a delivery with `reason`, counts it, and settles it (ack, or a reject the
    /// broker dead-letters itself when the copy cannot be published).
    async fn reject(
        &self,
        dl: &DeadLetterChannel<'_>,
        unsettled: &Unsettled,
        delivery: &Delivery,
        reason: &str,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Handled> {
        let reason = bounded_reason(reason);
        let seq = delivery
            .properties
            .message_id()
            .as_ref()
            .map_or("?", |m| m.as_str());
        tracing::warn!("[mail] dead-letter seq={seq} reason={reason}");
        let copied = self.dead_letter(dl, delivery, &reason).await;
        if !self.count_dead_letter(shutdown).await {
            // Shutting down: the original is not settled; it comes back and is judged (and
            // counted) again. If the copy was published, the dead-letter queue has two.
            return Ok(Handled::Shutdown);
        }
        metrics::counter!(crate::metrics::DEAD_LETTERED).increment(1);
        match copied {
            Ok(()) => {
                broker_call("ack", delivery.ack(BasicAckOptions::default())).await?;
            }
            Err(e) => {
                // The broker moves it to the same dead-letter queue through the queue's
                // x-dead-letter-exchange, with an `x-death` header instead of our reason.
                tracing::error!(
                    error = format!("{e:#}"),
                    "[mail] dead-letter seq={seq}: the copy could not be published \
                     {DEAD_LETTER_ATTEMPTS} times; rejecting it so the broker dead-letters it"
                );
                let reject = delivery.reject(BasicRejectOptions { requeue: false });
                broker_call("reject", reject).await?;
            }
        }
        unsettled.settled(&[delivery.delivery_tag]);
        Ok(Handled::Acked)
    }

    /// Adds one to this instance's dead-letter counter row; false when shutdown came first.
    async fn count_dead_letter(&self, shutdown: &CancellationToken) -> bool {
        let (pool, instance) = (&self.pool, self.instance.as_str());
        let counted = retry::until_done(shutdown, "counting a dead letter", || async move {
            let mut conn = pool.acquire().await?;
            let result = db::bump(&mut conn, instance, db::DEAD_LETTERED, 1).await;
            if let Err(e) = &result
                && retry::classify(e) == retry::Failure::Reconnect
            {
                // As in `process::apply`: a read-only or broken session is not reused.
                conn.close_on_drop();
            }
            result
        })
        .await;
        match counted {
            None => false,
            Some(Err(e)) => {
                tracing::error!(error = %e, "cannot count a dead letter");
                true
            }
            Some(Ok(())) => true,
        }
    }

    /// Runs the event's transaction until it commits. `Some(Err(reason))` means dead-letter it;
    /// `None` means shutdown came first (nothing acked, the broker redelivers).
    async fn apply(
        &self,
        ev: &Event,
        traceparent: Option<&str>,
        shutdown: &CancellationToken,
    ) -> Option<Result<(), String>> {
        // Database errors are retried for as long as it takes unless the event itself caused
        // them (see `retry`).
        let outcome = retry::until_done(shutdown, "processing an event", || {
            process::apply(&self.pool, &self.instance, ev, traceparent)
        })
        .await?;
        match outcome {
            Ok(o) => Some(self.report(ev, traceparent, o)),
            Err(e) => Some(Err(format!("cannot be stored: {e}"))),
        }
    }

    /// Logs and counts what a committed transaction did with `ev`; `Err(reason)` for a chain
    /// conflict (nothing was written for it): dead-letter it.
    fn report(
        &self,
        ev: &Event,
        traceparent: Option<&str>,
        outcome: Outcome,
    ) -> Result<(), String> {
        let _span = event_span(ev, traceparent).entered();
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
                metrics::counter!(crate::metrics::PROCESSED).increment(queued.len() as u64);
                self.mailer_wake.notify_one();
            }
            Outcome::Skipped { held } => {
                metrics::counter!(crate::metrics::SKIPPED).increment(1);
                tracing::info!(
                    "[mail] skip seq={} order={} (already {})",
                    ev.seq,
                    ev.order_id,
                    if held { "held" } else { "sent" }
                );
            }
            Outcome::Held { waiting_for } => {
                metrics::counter!(crate::metrics::HELD).increment(1);
                tracing::info!(
                    "[mail] hold seq={} order={} (waiting for seq={waiting_for})",
                    ev.seq,
                    ev.order_id
                );
            }
            Outcome::Conflict(reason) => return Err(reason),
        }
        Ok(())
    }

    /// Publishes the message, unchanged but for the headers of [`dead_letter_properties`], to the
    /// dead-letter exchange and waits for the broker's confirm; up to [`DEAD_LETTER_ATTEMPTS`]
    /// times, on a reopened channel after a failure.
    async fn dead_letter(
        &self,
        dl: &DeadLetterChannel<'_>,
        delivery: &Delivery,
        reason: &str,
    ) -> anyhow::Result<()> {
        let properties =
            dead_letter_properties(&delivery.properties, reason, delivery.routing_key.as_str());
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = async {
                let ch = dl.get().await?;
                self.publish_dead_letter(&ch, delivery, properties.clone())
                    .await
            }
            .await;
            match result {
                Ok(()) => return Ok(()),
                Err(e) if attempt >= DEAD_LETTER_ATTEMPTS => return Err(e),
                Err(e) => {
                    tracing::warn!(
                        error = format!("{e:#}"),
                        attempt,
                        "[mail] dead-letter publish failed; reopening the dead-letter channel"
                    );
                    tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                }
            }
        }
    }

    async fn publish_dead_letter(
        &self,
        ch: &Channel,
        delivery: &Delivery,
        properties: BasicProperties,
    ) -> anyhow::Result<()> {
        let publish = async {
            ch.basic_publish(
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
            // Declared again on the reopened channel.
            let _ = ch.close(200, "unroutable dead letter".into()).await;
            return Err(anyhow!(
                "the dead letter was unroutable: {} is not bound",
                self.topology.dead_letter_queue
            ));
        }
        Ok(())
    }
}

/// A delivery that passed [`Consumer::judge`].
struct Valid {
    delivery: Delivery,
    ev: Event,
    traceparent: Option<String>,
}

/// The span of one event's log lines.
fn event_span(ev: &Event, traceparent: Option<&str>) -> tracing::Span {
    let span = tracing::info_span!(
        "event",
        order_id = ev.order_id,
        seq = ev.seq,
        trace_id = tracing::field::Empty
    );
    if let Some(t) = traceparent.and_then(TraceParent::parse) {
        span.record("trace_id", t.trace_id.as_str());
    }
    span
}

/// The delivery tags of this channel that are neither acked nor rejected yet (delivered to this
/// consumer, waiting for a batch or in one).
#[derive(Debug, Default)]
struct Unsettled(std::sync::Mutex<BTreeSet<u64>>);

impl Unsettled {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u64>> {
        // Plain data: a panic while holding the lock cannot leave it inconsistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn delivered(&self, tag: u64) {
        self.lock().insert(tag);
    }

    fn settled(&self, tags: &[u64]) {
        let mut set = self.lock();
        for t in tags {
            set.remove(t);
        }
    }

    /// Whether acking `tags` with `multiple` on the highest acks exactly them: every unsettled
    /// tag up to the highest is one of them (a `multiple` ack settles everything up to its tag on
    /// the channel, so a lower tag of another batch still in flight must not be below it).
    fn is_prefix(&self, tags: &[u64]) -> bool {
        let Some(&max) = tags.iter().max() else {
            return false;
        };
        let mine: BTreeSet<u64> = tags.iter().copied().collect();
        self.lock().range(..=max).all(|t| mine.contains(t))
    }
}

/// Acks committed deliveries together: one `basic.ack` with `multiple` on the highest tag when
/// no other unsettled delivery lies below it, else one ack each (pipelined on the channel).
async fn ack_together(unsettled: &Unsettled, deliveries: &[Delivery]) -> anyhow::Result<()> {
    let tags: Vec<u64> = deliveries.iter().map(|d| d.delivery_tag).collect();
    let Some(highest) = deliveries.iter().max_by_key(|d| d.delivery_tag) else {
        return Ok(());
    };
    if deliveries.len() > 1 && unsettled.is_prefix(&tags) {
        let multiple = BasicAckOptions { multiple: true };
        broker_call("ack", highest.ack(multiple)).await?;
    } else {
        let acks = deliveries
            .iter()
            .map(|d| broker_call("ack", d.ack(BasicAckOptions::default())));
        futures::future::try_join_all(acks).await?;
    }
    unsettled.settled(&tags);
    Ok(())
}

/// `reason`, cut to at most [`MAX_REASON_BYTES`] (at a character boundary) with a note of its
/// original size.
pub fn bounded_reason(reason: &str) -> Cow<'_, str> {
    if reason.len() <= MAX_REASON_BYTES {
        return Cow::Borrowed(reason);
    }
    let note = format!("… (truncated, {} bytes)", reason.len());
    let mut end = MAX_REASON_BYTES - note.len();
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}{note}", &reason[..end]))
}

/// The dead letter's properties: the original's, plus the `x-death-reason` and
/// `x-original-routing-key` headers, and without `user_id`, which moves to the
/// `x-original-user-id` header: RabbitMQ refuses a publish whose `user_id` is not the publishing
/// connection's user, and mail-svc's user is not the original publisher's.
pub fn dead_letter_properties(
    original: &BasicProperties,
    reason: &str,
    routing_key: &str,
) -> BasicProperties {
    let mut headers = original.headers().clone().unwrap_or_default();
    headers.insert(
        DEATH_REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(bounded_reason(reason).as_ref())),
    );
    headers.insert(
        "x-original-routing-key".into(),
        AMQPValue::LongString(LongString::from(routing_key)),
    );
    if let Some(user) = original.user_id() {
        headers.insert(
            "x-original-user-id".into(),
            AMQPValue::LongString(LongString::from(user.as_str())),
        );
    }
    with_properties_of(original, headers)
}

/// A message's properties for a copy of it: every property of `original` except `user_id`
/// (RabbitMQ accepts only the publishing connection's own), with `headers` in place of its
/// headers.
pub(crate) fn with_properties_of(
    original: &BasicProperties,
    headers: FieldTable,
) -> BasicProperties {
    let o = original;
    let mut p = BasicProperties::default().with_headers(headers);
    if let Some(v) = o.content_type() {
        p = p.with_content_type(v.clone());
    }
    if let Some(v) = o.content_encoding() {
        p = p.with_content_encoding(v.clone());
    }
    if let Some(v) = o.delivery_mode() {
        p = p.with_delivery_mode(*v);
    }
    if let Some(v) = o.priority() {
        p = p.with_priority(*v);
    }
    if let Some(v) = o.correlation_id() {
        p = p.with_correlation_id(v.clone());
    }
    if let Some(v) = o.reply_to() {
        p = p.with_reply_to(v.clone());
    }
    if let Some(v) = o.expiration() {
        p = p.with_expiration(v.clone());
    }
    if let Some(v) = o.message_id() {
        p = p.with_message_id(v.clone());
    }
    if let Some(v) = o.timestamp() {
        p = p.with_timestamp(*v);
    }
    if let Some(v) = o.kind() {
        p = p.with_type(v.clone());
    }
    if let Some(v) = o.app_id() {
        p = p.with_app_id(v.clone());
    }
    if let Some(v) = o.cluster_id() {
        p = p.with_cluster_id(v.clone());
    }
    p
}

/// A header's text value (string headers arrive as long or short strings).
fn header_str(props: &BasicProperties, name: &str) -> Option<String> {
    match props.headers().as_ref()?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_bounded() {
        assert_eq!(bounded_reason("short"), "short");
        let exact = "x".repeat(MAX_REASON_BYTES);
        assert_eq!(bounded_reason(&exact), exact);
        // Multi-byte characters around the cut: the result is valid UTF-8 and within the bound.
        let long = format!("unknown type {:?}", "é".repeat(100 * 1024));
        let cut = bounded_reason(&long);
        assert!(cut.len() <= MAX_REASON_BYTES, "{}", cut.len());
        assert!(cut.starts_with("unknown type \"éé"));
        assert!(
            cut.ends_with(&format!("… (truncated, {} bytes)", long.len())),
            "{cut}"
        );
    }

    #[test]
    fn dead_letters_keep_the_message_but_not_its_user_id() {
        let mut headers = FieldTable::default();
        headers.insert("traceparent".into(), AMQPValue::LongString("tp".into()));
        let original = BasicProperties::default()
            .with_content_type("application/x-protobuf".into())
            .with_message_id("7".into())
            .with_type("OrderCreated".into())
            .with_delivery_mode(2)
            .with_timestamp(42)
            .with_app_id("relay-svc".into())
            .with_user_id("relay".into())
            .with_headers(headers);
        let dead = dead_letter_properties(&original, &"r".repeat(5000), "order.created");
        assert_eq!(dead.user_id(), &None);
        let h = dead.headers().clone().expect("headers");
        let text = |name: &str| match h.inner().get(name) {
            Some(AMQPValue::LongString(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(text("x-original-user-id"), "relay");
        assert_eq!(text("x-original-routing-key"), "order.created");
        assert_eq!(text("traceparent"), "tp");
        assert!(text(DEATH_REASON_HEADER).len() <= MAX_REASON_BYTES);
        // Everything else travels unchanged.
        let expected = BasicProperties::default()
            .with_content_type("application/x-protobuf".into())
            .with_message_id("7".into())
            .with_type("OrderCreated".into())
            .with_delivery_mode(2)
            .with_timestamp(42)
            .with_app_id("relay-svc".into())
            .with_headers(h);
        assert_eq!(dead, expected);
    }
}
