//! A generic consumer loop: judge, apply in a transaction of its own, commit, then settle; a
//! bounded number of deliveries at once.

use std::{
    num::{NonZeroU16, NonZeroUsize},
    time::Duration,
};

use futures::{FutureExt, StreamExt, future::Shared, stream::FuturesUnordered};
use lapin::{
    Connection,
    message::Delivery,
    options::BasicRejectOptions,
    options::{BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicQosOptions},
    types::FieldTable,
};
use outbox_support::backoff::Backoff;
use sqlx::PgPool;

use super::{BrokerError, DeadLetterChannel, Disposition, Topology, broker_call};
use crate::{ApplyError, Envelope, Handler, Inbox, Outcome};

/// The first wait before a delivery whose transaction failed is tried again (doubling, with
/// jitter, up to [`RETRY_MAX`]).
pub const RETRY_MIN: Duration = Duration::from_millis(100);
/// The longest wait between two attempts of one delivery.
pub const RETRY_MAX: Duration = Duration::from_secs(30);

/// A consumer of one queue into an [`Inbox`]: every delivery is applied exactly once, in its
/// aggregate's chain order, up to `concurrency` at once.
///
/// For each delivery, [`Consumer::run`]:
///
/// 1. judges it before any database work: [`Envelope::from_delivery`], then the caller's
///    `judge`; an `Err(reason)` publishes it to the dead-letter exchange with that reason
///    ([`DeadLetterChannel`]) and acks it only once the broker confirmed the copy;
/// 2. applies it with [`Inbox::apply`] and a handler from `make_handler`, in a transaction of
///    its own, commits, and only then acks it (a chain [`Conflict`](crate::Conflict) is rolled
///    back and dead-lettered with its reason);
/// 3. on a database or handler error, neither acks nor rejects it: the same delivery is tried
///    again after a backoff ([`RETRY_MIN`] doubling to [`RETRY_MAX`]), in its slot, so a database
///    outage slows the consumer down instead of spinning it. At shutdown it stays unacked and
///    the broker redelivers it (the queue's delivery limit bounds redeliveries).
///
/// Deliveries of one aggregate may be in flight together: [`Inbox::apply`] serialises them with
/// the aggregate's lock. Give `pool` at least `concurrency` connections.
///
/// ```no_run
/// # async fn demo(conn: lapin::Connection, pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
/// use std::num::{NonZeroU16, NonZeroUsize};
/// use outbox_inbox::{Envelope, Handler, Inbox, amqp::{Consumer, Topology}};
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
///     .with_prefetch(NonZeroU16::new(32).unwrap())
///     .with_concurrency(NonZeroUsize::new(4).unwrap());
/// let judge = |e: &Envelope| match e.payload.is_empty() {
///     true => Err("an empty payload".to_owned()),
///     false => Ok(()),
/// };
/// // E.g. a `CancellationToken`'s `cancelled()`, or a signal.
/// let shutdown = std::future::pending::<()>();
/// consumer.run(&conn, &pool, &inbox, judge, || Ledger, shutdown).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Consumer {
    topology: Topology,
    prefetch: NonZeroU16,
    concurrency: NonZeroUsize,
}

impl Consumer {
    /// A consumer of `topology`'s queue, with a prefetch of 32 and one delivery at a time.
    pub fn new(topology: Topology) -> Self {
        Self {
            topology,
            prefetch: NonZeroU16::new(32).expect("non-zero"),
            concurrency: NonZeroUsize::MIN,
        }
    }

    /// Deliveries the broker hands this consumer unacked (`basic.qos`); the rest wait in the
    /// queue for any instance. At least the concurrency, or slots stay idle.
    pub fn with_prefetch(mut self, prefetch: NonZeroU16) -> Self {
        self.prefetch = prefetch;
        self
    }

    /// Deliveries processed at once, each in a transaction (and pool connection) of its own.
    pub fn with_concurrency(mut self, concurrency: NonZeroUsize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Its topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Declares the topology, then consumes its queue with manual acks until `shutdown`
    /// completes (or the broker cancels the consumer): then it takes no new delivery, finishes
    /// those in flight, and closes its channels; what it had not started goes back to the queue.
    ///
    /// `judge` refuses (with the reason) an envelope that can never apply, e.g. a payload your
    /// handler cannot decode; `make_handler` makes the handler of one delivery.
    ///
    /// `Err` is a broker failure (the connection or channel failed or was lost, an ack got no
    /// answer): unacked deliveries go back to the queue; reconnect and run again. Connect with
    /// [`connect`](super::connect), which asks for a heartbeat ([`DEFAULT_HEARTBEAT`](super::DEFAULT_HEARTBEAT)
    /// unless you give another or the URL names one): then a connection whose network went
    /// silent is noticed within about two heartbeats and ends the run. Database and handler
    /// errors are not returned: the delivery is retried (see [`Consumer`]).
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
        J: Fn(&Envelope) -> Result<(), String>,
        M: Fn() -> H,
        H: Handler,
        H::Error: std::fmt::Display,
    {
        let ch = conn.create_channel().await?;
        self.topology.declare(&ch).await?;
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
        let shutdown = shutdown.shared();
        let each = Each {
            pool,
            inbox,
            judge: &judge,
            make_handler: &make_handler,
            dead_letters: &dead_letters,
            shutdown: shutdown.clone(),
        };
        // A connection whose network went silent never ends the delivery stream: its loss
        // (missed heartbeats, a failed socket, a close) ends the run.
        let watch = outbox_support::amqp::watch(conn, |_| {});
        let mut in_flight = FuturesUnordered::new();
        let mut result = loop {
            let room = in_flight.len() < self.concurrency.get();
            tokio::select! {
                biased;
                () = shutdown.clone() => break Ok(()),
                lost = watch.lost_wait() => break Err(BrokerError::Lost(lost)),
                Some(settled) = in_flight.next(), if !in_flight.is_empty() => {
                    if let Err(e) = settled {
                        break Err(e);
                    }
                }
                next = deliveries.next(), if room => match next {
                    Some(Ok(delivery)) => in_flight.push(each.settle(delivery)),
                    Some(Err(e)) => break Err(e.into()),
                    None => break Ok(()),
                },
            }
        };
        // No new deliveries; those prefetched but not started return to the queue when the
        // channel closes.
        let tag = deliveries.tag();
        let _ = broker_call(
            "cancel",
            ch.basic_cancel(tag.as_str().into(), BasicCancelOptions::default()),
        )
        .await;
        while let Some(settled) = in_flight.next().await {
            result = result.and(settled);
        }
        dead_letters.close().await;
        let _ = ch.close(200, "bye".into()).await;
        result
    }
}

/// What every delivery's processing shares.
struct Each<'a, J, M, S: Future> {
    pool: &'a PgPool,
    inbox: &'a Inbox,
    judge: &'a J,
    make_handler: &'a M,
    dead_letters: &'a DeadLetterChannel<'a>,
    shutdown: Shared<S>,
}

impl<J, M, H, S> Each<'_, J, M, S>
where
    J: Fn(&Envelope) -> Result<(), String>,
    M: Fn() -> H,
    H: Handler,
    H::Error: std::fmt::Display,
    S: Future<Output = ()>,
{
    /// Processes one delivery and settles it as its [`Disposition`] says.
    async fn settle(&self, delivery: Delivery) -> Result<(), BrokerError> {
        match self.dispose(&delivery).await {
            Disposition::Ack => ack(&delivery).await,
            Disposition::DeadLetter { reason } => {
                match self.dead_letters.publish(&delivery, &reason).await {
                    // The copy is safe: only now the original goes.
                    Ok(()) => ack(&delivery).await,
                    Err(e) => {
                        // The queue's own dead-lettering takes it (without the reason).
                        tracing::error!(error = %e, %reason, "dead-letter publish failed; rejecting");
                        let reject = delivery.reject(BasicRejectOptions { requeue: false });
                        broker_call("reject", reject).await.map(drop)
                    }
                }
            }
            // Left unacked: the broker redelivers it when the channel closes.
            _ => Ok(()),
        }
    }

    /// The delivery's disposition: judged first, then applied (retried after a backoff on a
    /// database or handler error, until it commits or shutdown comes).
    async fn dispose(&self, delivery: &Delivery) -> Disposition {
        let judged = Envelope::from_delivery(delivery)
            .and_then(|envelope| (self.judge)(&envelope).map(|()| envelope));
        let envelope = match judged {
            Ok(envelope) => envelope,
            Err(reason) => return Disposition::dead_letter(reason),
        };
        let mut backoff = Backoff::new(RETRY_MIN, RETRY_MAX);
        loop {
            match self.apply(&envelope).await {
                Ok(disposition) => return disposition,
                Err(error) => {
                    let delay = backoff.next_delay();
                    tracing::warn!(
                        %error,
                        seq = envelope.seq,
                        aggregate_id = envelope.aggregate_id,
                        failures = backoff.failures(),
                        ?delay,
                        "applying a delivery failed; trying it again"
                    );
                    tokio::select! {
                        () = self.shutdown.clone() => return Disposition::Retry,
                        () = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
    }

    /// One attempt: a transaction of its own, committed unless the event conflicts with its
    /// chain (then nothing was written, and it can never apply).
    async fn apply(&self, envelope: &Envelope) -> Result<Disposition, String> {
        let mut tx = self.pool.begin().await.map_err(|e| e.to_string())?;
        let mut handler = (self.make_handler)();
        match self.inbox.apply(&mut tx, envelope, &mut handler).await {
            Ok(Outcome::Conflict(conflict)) => Ok(Disposition::dead_letter(conflict.to_string())),
            // Processed (with the held successors it released), held, or a duplicate.
            Ok(_) => {
                tx.commit().await.map_err(|e| e.to_string())?;
                Ok(Disposition::Ack)
            }
            // Dropping `tx` rolls back.
            Err(ApplyError::Handler { seq, source }) => {
                Err(format!("handling seq {seq}: {source}"))
            }
            Err(ApplyError::Db(e)) => Err(e.to_string()),
        }
    }
}

async fn ack(delivery: &Delivery) -> Result<(), BrokerError> {
    broker_call("ack", delivery.ack(BasicAckOptions::default()))
        .await
        .map(drop)
}
