//! A generic consumer loop: judge, apply in a transaction, commit, then settle; deliveries in
//! batches (one transaction and one ack each), a bounded number of batches at once, and with
//! [`Consumer::run_reconnecting`] a session after session over a list of brokers.

use std::{
    fmt,
    num::{NonZeroU16, NonZeroUsize},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::{FutureExt, StreamExt, future::BoxFuture, stream::FuturesUnordered};
use lapin::{
    Connection, ConnectionProperties,
    message::Delivery,
    options::{BasicCancelOptions, BasicConsumeOptions, BasicQosOptions},
    types::FieldTable,
};
use outbox_support::{
    amqp::{Change, Tls, Watch},
    backoff::Backoff,
    failover::Failover,
};
use sqlx::{PgConnection, PgPool};

use super::{
    BrokerError, DEFAULT_HEARTBEAT, DeadLetterChannel, Judge, Topology, Unsettled,
    batch::{Attempts, Work},
    broker_call,
    counts::{Counters, Counts},
    hooks::{Hooks, Retrying},
};
use crate::{Handler, Inbox};

/// The first wait before a delivery whose transaction failed is tried again (doubling, with
/// jitter, up to [`RETRY_MAX`]).
pub const RETRY_MIN: Duration = Duration::from_millis(100);
/// The longest wait between two attempts of one delivery.
pub const RETRY_MAX: Duration = Duration::from_secs(30);

/// The first wait before [`Consumer::run_reconnecting`] connects again after a session ended on
/// a broker failure (doubling, with jitter, up to [`RECONNECT_MAX`]; reset once a session
/// consumes).
pub const RECONNECT_MIN: Duration = Duration::from_millis(200);
/// The longest wait between two connection attempts.
pub const RECONNECT_MAX: Duration = Duration::from_secs(10);
/// How long connecting to one broker address may take before the next one is tried (a node that
/// hangs, rather than refusing, must not hold the consumer).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A consumer of one queue into an [`Inbox`]: every delivery is applied exactly once, in its
/// aggregate's chain order; deliveries are gathered into batches of up to `batch_size`, each
/// applied in one transaction and acked together, up to `concurrency` batches at once.
///
/// For each batch, [`Consumer::run`]:
///
/// 1. judges each delivery before any database work ([`Judge`]: by default
///    [`Envelope::from_delivery`](crate::Envelope::from_delivery), then the caller's closure); a
///    refused one is published to the dead-letter exchange with the reason
///    ([`DeadLetterChannel`]) and acked only once the broker confirmed the copy;
/// 2. applies the rest in ONE transaction ([`Inbox::batch`], the handler from `make_handler`
///    for every event it processes, in each chain's order; a batch of one: [`Inbox::apply`]),
///    commits, and only then dead-letters the chain [`Conflict`](crate::Conflict)s (nothing was
///    written for them) and acks the others together: one `basic.ack` with `multiple` on the
///    highest tag when no other unsettled delivery of the channel lies below it, else one each;
/// 3. when the batch's transaction fails, nothing of it was written: a database error that is
///    the database's (an outage, a lock timeout, a switchover: see [`crate::failure`]) tries
///    the whole batch again after a backoff ([`RETRY_MIN`] doubling to [`RETRY_MAX`], see
///    [`Consumer::with_retry_backoff`]), so that an outage slows the consumer down instead of
///    spinning it; a handler error, or an error the event's own data causes
///    ([`Failure::Poison`](crate::failure::Failure::Poison)), applies the members one by one instead,
///    each in a transaction of its own: the others commit and are acked, a member whose data
///    the database refuses is dead-lettered (`cannot be stored: …`), and a member that still
///    fails otherwise is neither acked nor rejected but tried again after the backoff. At
///    shutdown what is not committed stays unacked and the broker redelivers it (the queue's
///    delivery limit bounds redeliveries).
///
/// A batch starts when it is full, when no other batch is in flight (an idle consumer adds no
/// latency: it takes what has arrived), or when it has waited `batch_window` for more.
/// Deliveries of one aggregate may be in different batches at once: the aggregate's lock
/// serialises them. Give `pool` at least `concurrency` connections, and a prefetch of at least
/// `batch_size` × `concurrency`, or batches stay small.
///
/// [`Consumer::counts`] says what it did (processed, skipped, held, dead-lettered, reconnects,
/// retries).
///
/// **Extension points**, for a service that needs more than the loop: what a handler's error
/// means ([`Handler::classify`]: tried again, dead-lettered, or on a fresh connection); the
/// handler's writes for a whole batch in the batch's one statement ([`Handler::stage`],
/// [`Handler::push_writes`]); writes just before the commit ([`Handler::before_commit`]); a
/// callback per committed delivery, before its ack ([`Handler::committed`]: log lines, metrics,
/// waking a worker, or stopping as a crash would); the dead-letter reason of a chain conflict
/// ([`Handler::conflict_reason`]); a bound on each attempt ([`Consumer::with_attempt_timeout`])
/// and its backoff ([`Consumer::with_retry_backoff`]); callbacks for each retry
/// ([`Consumer::on_retry`]), each dead letter ([`Consumer::on_dead_letter`]), the consuming
/// state ([`Consumer::on_consuming`]) and the connection ([`Consumer::on_change`]); a durable
/// record of each dead letter written before its ack ([`Consumer::record_dead_letters`]).
///
/// ```no_run
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
/// use std::{num::{NonZeroU16, NonZeroUsize}, time::Duration};
/// use outbox_inbox::{Envelope, Handler, Inbox, amqp::{Consumer, Failover, Topology}};
///
/// struct Ledger;
/// impl Handler for Ledger {
///     type Error = sqlx::Error;
///     async fn handle(&mut self, tx: &mut sqlx::PgConnection, e: &Envelope) -> Result<(), sqlx::Error> {
///         sqlx::query("insert into ledger (seq) values ($1)").bind(e.seq).execute(tx).await.map(drop)
///     }
/// }
///
/// let inbox = Inbox::new("billing.ledger_inbox")?;
/// let consumer = Consumer::new(Topology::new("invoices", "ledger", "invoice.#"))
///     .with_batch(NonZeroUsize::new(64).unwrap(), Duration::from_millis(5))
///     .with_prefetch(NonZeroU16::new(256).unwrap())
///     .with_concurrency(NonZeroUsize::new(4).unwrap());
/// let judge = |e: &Envelope| match e.payload.is_empty() {
///     true => Err("an empty payload".to_owned()),
///     false => Ok(()),
/// };
/// // Tried in turn; a reconnect starts after the node it lost.
/// let brokers = Failover::new("amqp://rabbit-1:5672/%2f,amqp://rabbit-2:5672/%2f");
/// // E.g. a `CancellationToken`'s `cancelled()`, or a signal.
/// let shutdown = std::future::pending::<()>();
/// consumer.run_reconnecting(&brokers, &pool, &inbox, judge, || Ledger, shutdown).await;
/// println!("{:?}", consumer.counts());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Consumer {
    topology: Topology,
    prefetch: NonZeroU16,
    concurrency: NonZeroUsize,
    batch_size: NonZeroUsize,
    batch_window: Duration,
    tls: Tls,
    heartbeat: Duration,
    connection_name: Option<String>,
    attempts: Attempts,
    hooks: Hooks,
    counters: Arc<Counters>,
}

impl fmt::Debug for Consumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("topology", &self.topology)
            .field("prefetch", &self.prefetch)
            .field("concurrency", &self.concurrency)
            .field("batch_size", &self.batch_size)
            .field("batch_window", &self.batch_window)
            .field("tls", &self.tls)
            .field("heartbeat", &self.heartbeat)
            .field("connection_name", &self.connection_name)
            .field("attempts", &self.attempts)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl Consumer {
    /// A consumer of `topology`'s queue, with a prefetch of 32, one delivery per batch, one batch
    /// at a time, and (for [`Consumer::run_reconnecting`]) no TLS material and a heartbeat of
    /// [`DEFAULT_HEARTBEAT`].
    pub fn new(topology: Topology) -> Self {
        Self {
            topology,
            prefetch: NonZeroU16::new(32).expect("non-zero"),
            concurrency: NonZeroUsize::MIN,
            batch_size: NonZeroUsize::MIN,
            batch_window: Duration::ZERO,
            tls: Tls::default(),
            heartbeat: DEFAULT_HEARTBEAT,
            connection_name: None,
            attempts: Attempts {
                timeout: None,
                backoff_min: RETRY_MIN,
                backoff_max: RETRY_MAX,
            },
            hooks: Hooks::default(),
            counters: Arc::default(),
        }
    }

    /// Deliveries the broker hands this consumer unacked (`basic.qos`); the rest wait in the
    /// queue for any instance. At least `batch_size` × `concurrency`, or batches stay small and
    /// slots idle.
    pub fn with_prefetch(mut self, prefetch: NonZeroU16) -> Self {
        self.prefetch = prefetch;
        self
    }

    /// Batches processed at once, each in a transaction (and pool connection) of its own.
    pub fn with_concurrency(mut self, concurrency: NonZeroUsize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Up to `size` deliveries per transaction and ack; while another batch is in flight, a
    /// batch waits up to `window` for more (an idle consumer starts one at once). Larger
    /// batches cost fewer statements and commits per event, not more latency.
    pub fn with_batch(mut self, size: NonZeroUsize, window: Duration) -> Self {
        self.batch_size = size;
        self.batch_window = window;
        self
    }

    /// TLS material for `amqps://` broker addresses ([`Consumer::run_reconnecting`]).
    pub fn with_tls(mut self, tls: Tls) -> Self {
        self.tls = tls;
        self
    }

    /// The heartbeat a connection asks for unless its URL names one
    /// ([`Consumer::run_reconnecting`]; see [`connect`](super::connect)).
    pub fn with_heartbeat(mut self, heartbeat: Duration) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// The name its connections show in the broker's management tools (`connection_name`).
    pub fn with_connection_name(mut self, name: impl Into<String>) -> Self {
        self.connection_name = Some(name.into());
        self
    }

    /// Called with what the broker says about each connection of
    /// [`Consumer::run_reconnecting`] (blocked, unblocked, lost; see [`outbox_support::amqp::watch`]),
    /// from a task of its own: the place to log, count and update health.
    pub fn on_change(mut self, on_change: impl Fn(&Change) + Send + Sync + 'static) -> Self {
        self.hooks.on_change = Some(Arc::new(on_change));
        self
    }

    /// Bounds each attempt at a transaction (connection, statements, commit): an attempt with
    /// no answer within `limit` is abandoned as a broken connection
    /// ([`Failure::Reconnect`](crate::failure::Failure::Reconnect)) and tried again. A socket gone
    /// silent (a firewall, a NAT) gives no error at all: without a bound, the attempt waits for
    /// the kernel's TCP timeout. Default: none (the statement timeout of your pool's sessions
    /// bounds the statements).
    pub fn with_attempt_timeout(mut self, limit: Duration) -> Self {
        self.attempts.timeout = Some(limit);
        self
    }

    /// The backoff between two attempts at one transaction: from `min`, doubling with jitter, up
    /// to `max` (default [`RETRY_MIN`] to [`RETRY_MAX`]). A lower cap recovers sooner after an
    /// outage, at the cost of more attempts during it.
    pub fn with_retry_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.attempts.backoff_min = min;
        self.attempts.backoff_max = max.max(min);
        self
    }

    /// Called with `true` once a session consumes (the topology declared, the consumer
    /// registered) and with `false` when it stops: the place to update health and readiness.
    pub fn on_consuming(mut self, on_consuming: impl Fn(bool) + Send + Sync + 'static) -> Self {
        self.hooks.on_consuming = Some(Arc::new(on_consuming));
        self
    }

    /// Called for each failed attempt at a transaction that is tried again after a backoff
    /// (see [`Retrying`]): the place to log and count database trouble. [`Counts::retries`]
    /// counts them too.
    pub fn on_retry(mut self, on_retry: impl Fn(&Retrying<'_>) + Send + Sync + 'static) -> Self {
        self.hooks.on_retry = Some(Arc::new(on_retry));
        self
    }

    /// Called for each delivery once it is dead-lettered and settled, with its reason (as
    /// bounded in `x-death-reason`): the place to log and count poison.
    pub fn on_dead_letter(
        mut self,
        on_dead_letter: impl Fn(&Delivery, &str) + Send + Sync + 'static,
    ) -> Self {
        self.hooks.on_dead_letter = Some(Arc::new(on_dead_letter));
        self
    }

    /// Records each dead letter in your database before its delivery is acked (e.g. a durable
    /// counter that survives restarts, an audit row): `record` runs on a connection of the pool,
    /// after the broker confirmed the dead-letter copy, and is tried again like a transaction
    /// (after a backoff, bounded by the attempt timeout) until it succeeds; a
    /// [`Failure::Poison`](crate::failure::Failure::Poison) error is logged and not tried again. When
    /// shutdown comes first the delivery stays unacked: it comes back and is judged (and
    /// recorded) again, and the dead-letter queue then holds two copies of it.
    ///
    /// ```no_run
    /// # fn demo(consumer: outbox_inbox::amqp::Consumer) -> outbox_inbox::amqp::Consumer {
    /// consumer.record_dead_letters(|conn, _delivery, _reason| {
    ///     Box::pin(async move {
    ///         sqlx::query("update stats set dead_letters = dead_letters + 1")
    ///             .execute(conn)
    ///             .await
    ///             .map(drop)
    ///     })
    /// })
    /// # }
    /// ```
    pub fn record_dead_letters<F>(mut self, record: F) -> Self
    where
        F: for<'c> Fn(
                &'c mut PgConnection,
                &'c Delivery,
                &'c str,
            ) -> BoxFuture<'c, Result<(), sqlx::Error>>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.record_dead_letter = Some(Arc::new(record));
        self
    }

    /// Its topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// What it (and its clones) did so far.
    pub fn counts(&self) -> Counts {
        self.counters.snapshot()
    }

    /// Consumes until `shutdown` completes, connecting to the first of `brokers` that answers
    /// (each within [`CONNECT_TIMEOUT`]) and running [`Consumer::run`] on it; when the session
    /// ends on a broker failure (a lost or closed connection, a cancelled consumer, no broker
    /// answering), it waits a backoff ([`RECONNECT_MIN`] doubling to [`RECONNECT_MAX`], never a
    /// busy loop) and connects again, starting after the node it lost. Unacked deliveries of a
    /// lost session return to the queue and are applied (or skipped as duplicates) again.
    pub async fn run_reconnecting<J, M, H>(
        &self,
        brokers: &Failover,
        pool: &PgPool,
        inbox: &Inbox,
        judge: J,
        make_handler: M,
        shutdown: impl Future<Output = ()>,
    ) where
        J: Judge,
        M: Fn() -> H,
        H: Handler,
        H::Error: fmt::Display,
    {
        let shutdown = shutdown.shared();
        let mut backoff = Backoff::new(RECONNECT_MIN, RECONNECT_MAX);
        let stopped = AtomicBool::new(false);
        while !is_done(&shutdown) {
            let connected = tokio::select! {
                () = shutdown.clone() => break,
                connected = self.connect(brokers) => connected,
            };
            let mut consumed = false;
            let error = match connected {
                Ok((conn, watch)) => {
                    let ran = self
                        .session(
                            &conn,
                            &watch,
                            &mut consumed,
                            &stopped,
                            pool,
                            inbox,
                            &judge,
                            &make_handler,
                            shutdown.clone(),
                        )
                        .await;
                    // A close of our own is no loss.
                    watch.stop();
                    // Closing the connection hands every unacked delivery back to the queue.
                    outbox_support::amqp::close(&conn, "bye").await;
                    match ran {
                        Ok(()) if is_done(&shutdown) || stopped.load(Ordering::SeqCst) => break,
                        Ok(()) => "the broker cancelled the consumer".to_owned(),
                        Err(e) => e.to_string(),
                    }
                }
                Err(e) => e,
            };
            if consumed {
                // A session that consumed is a success: the next failure backs off from the
                // start, and this one is a reconnect.
                backoff.reset();
                self.counters.reconnected();
            }
            let delay = backoff.next_delay();
            tracing::warn!(
                %error,
                retry = backoff.failures(),
                queue = %self.topology.queue,
                "broker unavailable; retrying in {delay:?}"
            );
            tokio::select! {
                () = shutdown.clone() => break,
                () = tokio::time::sleep(delay) => {}
            }
        }
        tracing::info!(queue = %self.topology.queue, "consumer stopped");
    }

    /// One connection to the first of `brokers` that answers, watched from the start.
    async fn connect(&self, brokers: &Failover) -> Result<(Connection, Watch), String> {
        let connect_one = async |url: &outbox_support::secret::SecretUrl| {
            let mut properties = ConnectionProperties::default();
            if let Some(name) = &self.connection_name {
                properties = properties.with_connection_name(name.as_str().into());
            }
            let connect = async {
                let conn =
                    super::connect(url.expose(), &self.tls, self.heartbeat, properties).await?;
                // At once: lapin passes events on only to listeners that exist.
                let on_change = self.hooks.on_change.clone();
                let watch = outbox_support::amqp::watch(&conn, move |change| {
                    if let Some(f) = &on_change {
                        f(change);
                    }
                });
                Ok::<_, lapin::Error>((conn, watch))
            };
            match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
                Ok(connected) => connected.map_err(|e| url.scrub(&e.to_string())),
                Err(_) => Err(format!("no answer within {CONNECT_TIMEOUT:?}")),
            }
        };
        let (connected, _) = brokers
            .connect(connect_one)
            .await
            .map_err(|e| format!("cannot connect to the broker: {e}"))?;
        Ok(connected)
    }

    /// Declares the topology, then consumes its queue with manual acks on `conn` until
    /// `shutdown` completes (or the broker cancels the consumer): then it takes no new delivery,
    /// finishes the batches in flight, and closes its channels; what it had not started goes
    /// back to the queue.
    ///
    /// `judge` refuses (with the reason) a delivery that can never apply, e.g. a payload your
    /// handler cannot decode (see [`Judge`]); `make_handler` makes the handler of one
    /// transaction.
    ///
    /// `Err` is a broker failure (the connection or channel failed or was lost, an ack got no
    /// answer): unacked deliveries go back to the queue; connect and run again, or let
    /// [`Consumer::run_reconnecting`] do it. Connect with [`connect`](super::connect), which
    /// asks for a heartbeat ([`DEFAULT_HEARTBEAT`] unless you give another or the URL names
    /// one): then a connection whose network went silent is noticed within about two
    /// heartbeats and ends the run. Database and handler errors are not returned: the delivery
    /// is retried (see [`Consumer`]).
    pub async fn run<J, M, H>(
        &self,
        conn: &Connection,
        pool: &PgPool,
        inbox: &Inbox,
        judge: J,
        make_handler: M,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), BrokerError>
    where
        J: Judge,
        M: Fn() -> H,
        H: Handler,
        H::Error: fmt::Display,
    {
        let watch = outbox_support::amqp::watch(conn, |_| {});
        self.session(
            conn,
            &watch,
            &mut false,
            &AtomicBool::new(false),
            pool,
            inbox,
            &judge,
            &make_handler,
            shutdown.shared(),
        )
        .await
    }

    /// [`Consumer::run`] on a watched connection; sets `consumed` once it consumes.
    #[expect(
        clippy::too_many_arguments,
        reason = "one session's parts, passed once"
    )]
    async fn session<J, M, H, S>(
        &self,
        conn: &Connection,
        watch: &Watch,
        consumed: &mut bool,
        stopped: &AtomicBool,
        pool: &PgPool,
        inbox: &Inbox,
        judge: &J,
        make_handler: &M,
        shutdown: futures::future::Shared<S>,
    ) -> Result<(), BrokerError>
    where
        J: Judge,
        M: Fn() -> H,
        H: Handler,
        H::Error: fmt::Display,
        S: Future<Output = ()>,
    {
        let ch = conn.create_channel().await?;
        self.topology.declare(&ch).await?;
        // Dead-letter publishes get their own channel in confirm mode: a poison message is
        // acked only once the broker has taken its dead-letter copy.
        let dead_letters = DeadLetterChannel::new(conn, &self.topology);
        dead_letters.open().await?;
        ch.basic_qos(self.prefetch.get(), BasicQosOptions::default())
            .await?;
        // Manual acks (no_ack is false): a delivery leaves the queue only once it is settled.
        let mut deliveries = ch
            .basic_consume(
                self.topology.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        *consumed = true;
        tracing::info!(queue = %self.topology.queue, "consuming");
        self.consuming(true);
        let unsettled = Unsettled::default();
        let work = Work {
            pool,
            inbox,
            judge,
            make_handler,
            dead_letters: &dead_letters,
            unsettled: &unsettled,
            counters: &self.counters,
            hooks: &self.hooks,
            attempts: self.attempts,
            stopped,
            shutdown: shutdown.clone(),
        };
        let (size, concurrency) = (self.batch_size.get(), self.concurrency.get());
        let mut in_flight = FuturesUnordered::new();
        let mut gathering: Vec<Delivery> = Vec::with_capacity(size);
        let mut window_end = tokio::time::Instant::now();
        // A connection whose network went silent never ends the delivery stream: its loss
        // (missed heartbeats, a failed socket, a close) ends the session.
        let mut result = loop {
            if !gathering.is_empty()
                && in_flight.len() < concurrency
                && (gathering.len() >= size
                    || in_flight.is_empty()
                    || tokio::time::Instant::now() >= window_end)
            {
                let batch = std::mem::replace(&mut gathering, Vec::with_capacity(size));
                in_flight.push(work.batch(batch));
                continue;
            }
            tokio::select! {
                biased;
                () = shutdown.clone() => break Ok(()),
                lost = watch.lost_wait() => break Err(BrokerError::Lost(lost)),
                Some(settled) = in_flight.next(), if !in_flight.is_empty() => {
                    if let Err(e) = settled {
                        break Err(e);
                    }
                    if stopped.load(Ordering::SeqCst) {
                        break Ok(());
                    }
                }
                () = tokio::time::sleep_until(window_end),
                    if !gathering.is_empty() && in_flight.len() < concurrency => {}
                next = deliveries.next(), if gathering.len() < size => match next {
                    Some(Ok(delivery)) => {
                        if gathering.is_empty() {
                            window_end = tokio::time::Instant::now() + self.batch_window;
                        }
                        unsettled.delivered(delivery.delivery_tag);
                        gathering.push(delivery);
                        // And whatever else has arrived already (an end or an error of the
                        // stream is seen by the next poll).
                        while gathering.len() < size {
                            let Some(Some(Ok(d))) = deliveries.next().now_or_never() else {
                                break;
                            };
                            unsettled.delivered(d.delivery_tag);
                            gathering.push(d);
                        }
                    }
                    Some(Err(e)) => break Err(e.into()),
                    None => break Ok(()),
                },
            }
        };
        // No new deliveries; those gathered or prefetched but not started return to the queue
        // when the channel closes.
        drop(gathering);
        let tag = deliveries.tag();
        let _ = broker_call(
            "cancel",
            ch.basic_cancel(tag.as_str().into(), BasicCancelOptions::default()),
        )
        .await;
        // Stopped by a handler: as a crash, the batches in flight end where they are, unacked.
        if !stopped.load(Ordering::SeqCst) {
            while let Some(settled) = in_flight.next().await {
                result = result.and(settled);
            }
        }
        drop(in_flight);
        self.consuming(false);
        dead_letters.close().await;
        let _ = ch.close(200, "bye".into()).await;
        result
    }
}

impl Consumer {
    fn consuming(&self, consuming: bool) {
        if let Some(f) = &self.hooks.on_consuming {
            f(consuming);
        }
    }
}

/// Whether `shutdown` has completed (without waiting for it).
fn is_done<S: Future<Output = ()>>(shutdown: &futures::future::Shared<S>) -> bool {
    shutdown.clone().now_or_never().is_some()
}
