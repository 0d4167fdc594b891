//! The consumer loop: one connection, deliveries gathered into batches, up to `concurrency`
//! batches in flight, each delivery settled (acked or dead-lettered) after its transaction
//! committed. See the [module docs](super) for batches, sizes and trusted publishers.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, anyhow};
use futures::{FutureExt, StreamExt, stream::FuturesUnordered};
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    message::Delivery,
    options::{BasicConsumeOptions, BasicQosOptions},
    types::{AMQPValue, FieldTable},
};
use outbox::trace::TraceHeaders;
use outbox_inbox::amqp::{DeadLetterChannel, Disposition, Topology, Unsettled, ack_together};
use outbox_support::{amqp::Change, backoff::Backoff, secret::SecretUrl};
use sqlx::PgPool;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    config::Hooks,
    event::{self, Event},
    process::{self, Outcome},
    retry,
};

/// How long connecting to one broker address may take before the next one is tried (a node that
/// hangs, rather than refusing, must not hold the consumer).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The consumer: one connection, up to `concurrency` deliveries processed at once, each acked
/// after its transaction committed.
#[derive(Debug)]
pub struct Consumer {
    /// The broker's addresses, shared with nothing else: a reconnect moves on from the node it
    /// lost.
    pub broker_urls: outbox_support::failover::Failover,
    /// TLS material for `amqps://` addresses.
    pub amqp_tls: outbox_support::amqp::Tls,
    /// The heartbeat the connection asks for unless its URL names one (`AMQP_HEARTBEAT`).
    pub heartbeat: Duration,
    /// What the broker says about the connection, for `GetStatus`.
    pub broker: Arc<BrokerState>,
    /// How long one database attempt may go unanswered (`DB_STATEMENT_TIMEOUT` + 1 s).
    pub db_step_timeout: Duration,
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

/// What the broker says about the consumer's connection right now (see
/// [`outbox_support::amqp::watch`]), for `GetStatus`.
#[derive(Debug, Default)]
pub struct BrokerState {
    blocked: Mutex<Option<(String, Instant)>>,
}

impl BrokerState {
    /// The reason the broker gave and for how long, while it blocks the connection.
    pub fn blocked(&self) -> Option<(String, Duration)> {
        self.lock()
            .as_ref()
            .map(|(reason, since)| (reason.clone(), since.elapsed()))
    }

    fn set_blocked(&self, reason: Option<&str>) {
        *self.lock() = reason.map(|r| (r.to_owned(), Instant::now()));
        metrics::gauge!(crate::metrics::BROKER_BLOCKED).set(f64::from(u8::from(reason.is_some())));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(String, Instant)>> {
        self.blocked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs (once each), counts and records what the broker says about a connection.
    fn on_change(self: &Arc<Self>) -> impl Fn(&Change) + Send + 'static {
        let state = self.clone();
        move |change| match change {
            Change::Blocked(reason) => {
                tracing::warn!(
                    reason = %reason,
                    "[mail] the broker blocked the connection ({reason}): dead letters wait until it unblocks"
                );
                state.set_blocked(Some(reason));
            }
            Change::Unblocked { for_ } => {
                tracing::info!("[mail] the broker unblocked the connection after {for_:.1?}");
                state.set_blocked(None);
            }
            Change::Lost(lost) => {
                tracing::warn!(
                    reason = lost.label(),
                    "[mail] broker connection lost ({}); reconnecting",
                    lost.describe()
                );
                metrics::counter!(crate::metrics::AMQP_RECONNECTS, "reason" => lost.label())
                    .increment(1);
                state.set_blocked(None);
            }
        }
    }
}

pub(super) enum End {
    Shutdown,
    /// The crash test hook fired.
    Crashed,
}

pub(super) enum Handled {
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
        let connect_one = async move |url: &SecretUrl| {
            let connect = async {
                let conn = outbox_support::amqp::connect(
                    url,
                    &self.amqp_tls,
                    self.heartbeat,
                    ConnectionProperties::default(),
                )
                .await?;
                // At once: lapin passes events on only to listeners that exist.
                let watch = outbox_support::amqp::watch(&conn, self.broker.on_change());
                Ok::<_, lapin::Error>((conn, watch))
            };
            tokio::time::timeout(CONNECT_TIMEOUT, connect)
                .await
                .map_err(|_| anyhow!("no answer within {CONNECT_TIMEOUT:?}"))?
                .map_err(anyhow::Error::from)
        };
        let ((conn, watch), _) = self
            .broker_urls
            .connect(connect_one)
            .await
            .context("AMQP_URL: cannot connect to RabbitMQ")?;
        let result = self.consume(&conn, &watch, shutdown, backoff).await;
        // A close of our own is no loss.
        watch.stop();
        // Closing the connection hands every unacked delivery back to the queue.
        let _ = conn.close(200, "bye".into()).await;
        result
    }

    async fn consume(
        &self,
        conn: &Connection,
        watch: &outbox_support::amqp::Watch,
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
        let dl = DeadLetterChannel::new(conn, &self.topology);
        dl.open().await?;
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
        // the broker restarts), and one whose network went silent never does: the watch (missed
        // heartbeats, the connection's state) ends the session, and the next one connects to
        // the next address.
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
                lost = watch.lost_wait() => {
                    return Err(anyhow!("the broker connection was lost ({})", lost.describe()));
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
                retry::within(
                    self.db_step_timeout,
                    process::apply_batch(&self.pool, &self.instance, &items),
                )
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
                let _span = event_span(&v.ev, v.traceparent.as_deref()).entered();
                match self.report(&v.ev, outcome) {
                    Disposition::DeadLetter { reason } => conflicts.push((v.delivery, reason)),
                    _ => acks.push(v.delivery),
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
                Disposition::Ack => {
                    if self.hooks.crash_after_commit_seq == Some(v.ev.seq) {
                        return Ok(Handled::Crashed);
                    }
                    ack_together(unsettled, std::slice::from_ref(&v.delivery)).await?;
                    continue;
                }
                Disposition::DeadLetter { reason } => reason,
                _ => return Ok(Handled::Shutdown),
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

    /// Judges a delivery before any database work: who published it, its shard, then its size and format
    /// (see `event::decode`, which checks the size before parsing). Also its valid traceparent.
    fn judge(&self, delivery: &Delivery) -> (Result<Event, event::Poison>, Option<String>) {
        let props = &delivery.properties;
        let traceparent =
            header_str(props, "traceparent").filter(|v| TraceHeaders::parse(v, None).is_some());
        let content_type = props.content_type().as_ref().map(|c| c.as_str().to_owned());
        let user_id = props.user_id().as_ref().map(|u| u.as_str());
        let shard = header_str(props, event::SHARD_HEADER);
        let aggregate_type = header_str(props, outbox::wire::HEADER_AGGREGATE_TYPE);
        let decoded = event::check_publisher(&self.trusted_publishers, user_id)
            .and_then(|()| event::check_aggregate_type(aggregate_type.as_deref()))
            .and_then(|()| event::shard(shard.as_deref()))
            .and_then(|shard| {
                event::decode(content_type.as_deref(), &delivery.data)
                    .map(|ev| event::Event { shard, ..ev })
            });
        (decoded, traceparent)
    }

    /// Runs the event's transaction until it commits, and says what to do with the delivery:
    /// [`Disposition::Retry`] when shutdown came first (nothing acked, the broker redelivers).
    async fn apply(
        &self,
        ev: &Event,
        traceparent: Option<&str>,
        shutdown: &CancellationToken,
    ) -> Disposition {
        // Database errors are retried for as long as it takes unless the event itself caused
        // them (see `retry`).
        let outcome = retry::until_done(shutdown, "processing an event", || {
            retry::within(
                self.db_step_timeout,
                process::apply(&self.pool, &self.instance, ev, traceparent),
            )
        })
        .await;
        match outcome {
            None => Disposition::Retry,
            Some(Ok(o)) => self.report(ev, o),
            Some(Err(e)) => Disposition::dead_letter(format!("cannot be stored: {e}")),
        }
    }

    /// Logs and counts what a committed transaction did with `ev`: [`Disposition::Ack`], or a
    /// dead letter for a chain conflict (nothing was written for it). Called inside `ev`'s
    /// [`event_span`].
    fn report(&self, ev: &Event, outcome: Outcome) -> Disposition {
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
            Outcome::Conflict(reason) => return Disposition::dead_letter(reason),
        }
        Disposition::Ack
    }
}

/// A delivery that passed [`Consumer::judge`].
struct Valid {
    delivery: Delivery,
    ev: Event,
    traceparent: Option<String>,
}

/// The span of one event's processing and log lines: the `process` span of its trace, a child
/// of the relay's publish span (the context the delivery carries).
fn event_span(ev: &Event, traceparent: Option<&str>) -> tracing::Span {
    let span = tracing::info_span!(
        "event",
        otel.name = "process",
        otel.kind = "consumer",
        order_id = ev.order_id,
        seq = ev.seq,
        shard = tracing::field::Empty,
        trace_id = tracing::field::Empty
    );
    // Seqs repeat across shards: a sharded event's lines name its shard (shard 0's read as before).
    if ev.shard != 0 {
        span.record("shard", ev.shard);
    }
    if let Some(t) = traceparent.and_then(|tp| TraceHeaders::parse(tp, None)) {
        t.continue_in(&span);
    }
    span
}

/// A header's text value (string headers arrive as long or short strings).
fn header_str(props: &BasicProperties, name: &str) -> Option<String> {
    match props.headers().as_ref()?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}
