//! The relay loop: take the leader lock, then read, publish, confirm, delete; forever.
//!
//! - **Leader**: a dedicated connection holds the session advisory lock
//!   [`LEADER_LOCK_KEY`](crate::db::LEADER_LOCK_KEY) as a lease ([`crate::lease`]): the leader
//!   pings it every second and publishes only while a recent ping proved it; standbys try to take
//!   it every `standby_retry` and terminate a holder whose session stayed silent for
//!   `LEADER_LEASE`.
//! - **Cycle**: read the oldest `BATCH_SIZE` rows present (leaving out held and quarantined
//!   orders), publish them in *waves* (wave k holds the k-th event of every order in the batch,
//!   in seq order, planned by [`outbox::rounds::of`]; all messages of a wave are pipelined on one
//!   confirm channel), delete the
//!   delivered seqs. An order's next event is only sent once its previous one was confirmed
//!   delivered, so a nack or a return can never let a later event of an order reach a queue
//!   before an earlier one.
//! - **Overlap** ([`Relay::cycle`]): while a full batch is confirmed, the previous batch's
//!   delete finishes and the next batch is read without the orders in flight; the batch's own
//!   delete then runs in the background while the next one is published.
//! - **Per-row problems hold back only their order** (the table in [`decide`]): a row that can
//!   never be encoded moves to quarantine; a returned or nacked row is retried with its order's
//!   own backoff while every other order flows at full speed.
//! - **Wake-up**: LISTEN on the outbox's channel (`outbox::TableName::notify_channel`) plus a
//!   fallback poll every `poll_interval`, and the end of the earliest order hold; a full batch
//!   loops at once.
//! - **Failures of the broker or the database** (connect, channel, timeout, query) end the cycle
//!   with a capped, jittered backoff; the next cycle reconnects what broke.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use outbox_support::{backoff::Backoff, failover::Failover};
use sqlx::{
    PgConnection, PgPool,
    postgres::{PgListener, PgPoolOptions},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{
    Settings,
    db::{self, OutboxRow, Queries},
    error::Error,
    floor::Reader,
    lease::{self, Attempt, Lease, Unproven},
    publisher::{Encoder, Outcome, Outgoing, Publisher},
    status::Status,
};

/// How long a database connect or lock ping may take before it counts as failed.
const DB_TIMEOUT: Duration = Duration::from_secs(5);
/// Under a steady stream of full batches, refresh the backlog figures at most this often.
const BACKLOG_REFRESH: Duration = Duration::from_millis(500);
/// While orders-svc has not created the outbox yet, look again at least this often.
const MISSING_TABLE_MAX_WAIT: Duration = Duration::from_secs(5);

/// One relay instance (leader or standby).
#[derive(Debug)]
pub(crate) struct Relay {
    cfg: Settings,
    /// `cfg.amqp_url`'s addresses: a reconnect moves on from the node it lost.
    broker: Failover,
    queries: Arc<Queries>,
    /// Reads from the read floor (see [`crate::floor`]).
    reader: Reader,
    encoder: Arc<dyn Encoder>,
    /// Its reads, deletes and figures; the lock and LISTEN connections are opened with its
    /// connect options.
    pool: PgPool,
    status: Arc<Status>,
    shutdown: CancellationToken,
    /// For failures of the broker or the database as a whole.
    backoff: Backoff,
    last_backlog_refresh: Option<Instant>,
    /// Orders whose returned or nacked event waits for its retry, each with its own backoff.
    held: HashMap<i64, Hold>,
    /// The next batch, read and encoded while the previous one was being confirmed (see
    /// [`Relay::cycle`]).
    prefetched: Option<Vec<Prepared>>,
    /// The delete of the last confirmed batch, running while the next batch is published.
    deleting: Option<JoinHandle<Undeleted>>,
    /// Confirmed seqs whose delete failed: left out of every read (never published again by
    /// this instance) and deleted again before the next read.
    undeleted: Vec<i64>,
}

/// A row and its message, or why it can never be encoded.
type Prepared = (OutboxRow, Result<Outgoing, String>);

fn prepare(encoder: &dyn Encoder, rows: Vec<OutboxRow>) -> Vec<Prepared> {
    rows.into_iter()
        .map(|row| {
            let message = encoder.encode(&row);
            (row, message)
        })
        .collect()
}

/// Seqs a delete did not remove (empty when it succeeded), and why.
type Undeleted = (Vec<i64>, Option<Error>);

/// At most this many batches' worth of confirmed seqs may wait for a failing delete; beyond it
/// the relay stops reading (a failure of the database as a whole) until a delete succeeds.
const UNDELETED_BATCHES: usize = 8;

/// An order held back by a returned or nacked event.
#[derive(Debug)]
struct Hold {
    until: Instant,
    backoff: Backoff,
}

/// How a cycle ended.
enum Cycle {
    /// The batch was full: more rows are probably waiting, go again at once.
    Full,
    /// Everything present was read: wait for a notification, the poll or a hold's end.
    Drained,
    /// Stopped between waves: shutdown, or the lease is not proven right now.
    Interrupted,
}

/// What becomes of one row after its wave (or without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Acked and not returned: delete it.
    Delete,
    /// It can never be encoded: move it to quarantine; its order waits for an operator.
    Quarantine(String),
    /// Returned or nacked: it stays; its order waits for its own retry.
    HoldOrder(String),
    /// It stays and is read again at once: an earlier event of its order was not delivered in
    /// this batch, or the wave was not answered (the connection broke: a global failure).
    Stay,
}

/// The rule for one row, from what happened to it. Only a broken connection (no answer) is a
/// failure of the whole relay; everything else concerns this row's order alone.
pub(crate) fn decide(encoded: Result<Option<&Outcome>, &str>) -> Fate {
    match encoded {
        Err(reason) => Fate::Quarantine(reason.to_owned()),
        Ok(None) => Fate::Stay,
        Ok(Some(Outcome::Delivered)) => Fate::Delete,
        Ok(Some(Outcome::Returned {
            reply_code,
            reply_text,
        })) => Fate::HoldOrder(format!("returned by the broker: {reply_code} {reply_text}")),
        Ok(Some(Outcome::Nacked)) => Fate::HoldOrder("nacked by the broker".into()),
        Ok(Some(Outcome::Failed(_))) => Fate::Stay,
    }
}

/// What one batch's publishing achieved.
#[derive(Default)]
struct Delivery {
    /// Confirmed and not returned: safe to delete.
    delivered: Vec<(i64, DateTime<Utc>)>,
    /// Orders that had an event delivered (their hold, if any, ends).
    delivered_orders: HashSet<i64>,
    /// (seq, order, reason): never encodable, to quarantine.
    corrupt: Vec<(i64, i64, String)>,
    /// (seq, order, reason): returned or nacked, their orders to hold.
    refused: Vec<(i64, i64, String)>,
    /// Rows not delivered for any reason (including those waiting behind one of their order).
    undelivered: usize,
    /// The channel broke: reconnect before the next cycle.
    broken: Option<Error>,
    /// Stopped before the last wave.
    interrupted: bool,
}

impl Relay {
    pub(crate) fn new(
        cfg: Settings,
        encoder: Arc<dyn Encoder>,
        pool: PgPool,
        status: Arc<Status>,
        shutdown: CancellationToken,
    ) -> Self {
        let backoff = cfg.backoff();
        let queries = Arc::new(Queries::new(&cfg.table));
        let broker = Failover::new(cfg.amqp_url.clone());
        let reader = Reader::new(queries.clone(), pool.clone(), status.clone());
        Self {
            cfg,
            broker,
            queries,
            reader,
            encoder,
            pool,
            status,
            shutdown,
            backoff,
            last_backlog_refresh: None,
            held: HashMap::new(),
            prefetched: None,
            deleting: None,
            undeleted: Vec::new(),
        }
    }

    pub(crate) fn set_encoder(&mut self, encoder: Arc<dyn Encoder>) {
        self.encoder = encoder;
    }

    /// Stands by until it holds the leader lock, leads until it loses it, repeats; returns on
    /// shutdown.
    pub(crate) async fn run(mut self) {
        self.status.set_active(false);
        self.status.set_broker_blocked(None);
        while let Some(lock) = self.acquire_lock().await {
            self.status.set_active(true);
            tracing::info!("relay: active (holding the leader lock)");
            // The read floor is the term's own: it starts from the table's head.
            self.reader.reset().await;
            let lost = self.lead(lock).await;
            self.status.set_active(false);
            // A standby publishes nothing: its broker connection is no concern of its health.
            self.status.broker_connection_ok(0);
            // A new term starts with no holds and no read-ahead: the next leader's read decides
            // afresh.
            self.held.clear();
            self.prefetched = None;
            self.status.set_held_orders(0);
            match lost {
                None => break,
                Some(e) => tracing::warn!(error = %e, "relay: lost the leader lock, standing by"),
            }
        }
        tracing::info!("relay: stopped");
    }

    /// Returns the connection holding the lock, or `None` on shutdown. Paces the attempts of
    /// [`lease::try_acquire`]: a standby looks again every `STANDBY_RETRY`, an unreachable
    /// database backs off.
    async fn acquire_lock(&mut self) -> Option<PgConnection> {
        let mut conn: Option<PgConnection> = None;
        let mut said_standby = false;
        let lease = self.cfg.leader_lease;
        let lock_options = db::lock_options(&self.pool.connect_options());
        loop {
            if self.shutdown.is_cancelled() {
                return None;
            }
            let attempt = lease::try_acquire(
                &mut conn,
                &lock_options,
                self.cfg.leader_lock_key,
                lease,
                DB_TIMEOUT,
            );
            match attempt.await {
                Ok(Attempt::Held) => {
                    self.succeeded();
                    return conn;
                }
                Ok(Attempt::TookOver(t)) => {
                    self.succeeded();
                    tracing::warn!(
                        pid = t.pid,
                        idle_secs = t.idle_secs,
                        "relay: the leader's lock session was silent for {:.1}s (LEADER_LEASE {:?}): terminated it, taking over",
                        t.idle_secs,
                        lease
                    );
                    // The lock goes with the session (pg_terminate_backend waited for it to
                    // end): try again almost at once, never in a tight loop.
                    if !self.sleep(Duration::from_millis(100)).await {
                        return None;
                    }
                }
                Ok(Attempt::Standby) => {
                    self.succeeded();
                    if !said_standby {
                        tracing::info!("relay: standby (another instance holds the leader lock)");
                        said_standby = true;
                    }
                    if !self.sleep(self.cfg.standby_retry).await {
                        return None;
                    }
                }
                Err(e) => {
                    conn = None;
                    let delay = self.failed();
                    tracing::warn!(
                        error = %e,
                        retry = self.backoff.failures(),
                        "relay: cannot reach the database for the leader lock retry={}",
                        self.backoff.failures()
                    );
                    if !self.sleep(delay).await {
                        return None;
                    }
                }
            }
        }
    }

    /// Publishes while the lease lives. Returns `None` on shutdown (after releasing the lock),
    /// or why the lock was lost.
    async fn lead(&mut self, lock: PgConnection) -> Option<String> {
        let lease = Lease::start(lock, self.cfg.leader_lease, DB_TIMEOUT);
        let mut listener: Option<PgListener> = None;
        let mut publisher: Option<Publisher> = None;
        let lost = loop {
            if self.shutdown.is_cancelled() {
                break None;
            }
            match lease.check() {
                Ok(()) => {}
                Err(Unproven::Lost(e)) => break Some(e),
                // Late heartbeat (e.g. the process was frozen): a standby may have terminated
                // the session meanwhile. Publish nothing until a ping proves it did not.
                Err(Unproven::Stale) => {
                    tracing::warn!("relay: leader lease not proven recently, pausing until it is");
                    self.prefetched = None;
                    tokio::select! {
                        _ = self.shutdown.cancelled() => break None,
                        proven = lease.reproven() => match proven {
                            Ok(()) => continue,
                            Err(e) => break Some(e),
                        },
                    }
                }
            }
            if listener.is_none() {
                listener = self.listen().await;
            }
            // The lease is watched while the cycle runs: a lost lock stops it at once (the
            // wave in flight is abandoned: its rows stay, at worst a duplicate).
            let result = tokio::select! {
                r = self.cycle(&mut publisher, &lease) => r,
                e = lease.lost() => break Some(e),
            };
            match result {
                Ok(cycle) => {
                    self.succeeded();
                    if let Cycle::Drained = cycle {
                        tokio::select! {
                            _ = self.wait(&mut listener) => {}
                            e = lease.lost() => break Some(e),
                            // Replaced at once (the next cycle), not at the next event.
                            _ = connection_lost(&publisher) => {}
                        }
                    }
                }
                Err(e) => {
                    let mut delay = self.failed();
                    let retry = self.backoff.failures();
                    match &e {
                        Error::OutboxMissing => {
                            delay = delay.min(MISSING_TABLE_MAX_WAIT);
                            tracing::warn!(
                                retry,
                                "relay: waiting for the outbox table (orders-svc not migrated yet) retry={retry}"
                            );
                        }
                        Error::Db(_) => tracing::warn!(
                            error = %e,
                            retry,
                            "relay: cannot read the outbox retry={retry}"
                        ),
                        _ => {
                            let unsent = self.status.backlog_rows();
                            tracing::warn!(
                                error = %e,
                                unsent,
                                retry,
                                "relay: cannot publish (unsent {unsent}) retry={retry}"
                            );
                        }
                    }
                    // A broken or stalled channel (e.g. a broker blocking publishers) is
                    // replaced; late confirms of the old one no longer matter.
                    let broken = matches!(
                        e,
                        Error::Broker(_) | Error::ConfirmTimeout(_) | Error::Undelivered { .. }
                    );
                    if (broken || publisher.as_ref().is_some_and(|p| !p.is_open()))
                        && let Some(p) = publisher.take()
                    {
                        if let Error::ConfirmTimeout(_) = e {
                            let lost = outbox_support::amqp::Lost::Timeout;
                            self.status
                                .broker_connection_lost(lost.label(), lost.describe());
                        }
                        tokio::spawn(p.close());
                    }
                    tokio::select! {
                        again = self.sleep(delay) => if !again { break None },
                        e = lease.lost() => break Some(e),
                    }
                }
            }
        };
        // The last confirmed batch's delete finishes (bounded): otherwise its rows are published
        // again by the next leader, a duplicate.
        let _ = tokio::time::timeout(DB_TIMEOUT, self.finish_deletes()).await;
        // Bounded: a stalled broker or database must not hold up shutdown.
        if let Some(p) = publisher {
            let _ = tokio::time::timeout(DB_TIMEOUT, p.close()).await;
        }
        if lost.is_none() {
            // Ending the session releases the lock now, so a standby need not wait for a
            // timeout to take over.
            lease.release().await;
        }
        lost
    }

    /// The orders to leave out of the next read (their hold has not ended), after dropping
    /// holds that ended long ago (their backoff starts over).
    fn held_orders(&mut self) -> Vec<i64> {
        let now = Instant::now();
        let forget = self.cfg.backoff_max + Duration::from_secs(60);
        self.held.retain(|_, h| h.until + forget > now);
        let held: Vec<i64> = self
            .held
            .iter()
            .filter(|(_, h)| h.until > now)
            .map(|(order, _)| *order)
            .collect();
        self.status.set_held_orders(self.held.len());
        held
    }

    /// When the earliest current hold ends (the relay wakes up for it).
    fn next_hold_end(&self) -> Option<Instant> {
        let now = Instant::now();
        self.held
            .values()
            .map(|h| h.until)
            .filter(|u| *u > now)
            .min()
    }

    /// One read-publish-delete round, overlapped with its neighbours: while this batch's waves
    /// are sent and confirmed, the previous batch's delete finishes and the next batch is read
    /// (when this one is full); this batch's delete then runs while the next one is published.
    ///
    /// The read-ahead leaves out every order of the batch in flight, so an order is never in two
    /// batches at once and its next event is still only sent after the previous one was
    /// confirmed. A read never starts before the earlier deletes ended: a deleted row cannot be
    /// read again, and a confirmed row whose delete failed is left out by seq until a retry
    /// removes it.
    #[tracing::instrument(skip_all, fields(first_seq, last_seq, events))]
    async fn cycle(
        &mut self,
        publisher: &mut Option<Publisher>,
        lease: &Lease,
    ) -> Result<Cycle, Error> {
        if publisher.as_ref().is_some_and(|p| !p.is_open()) {
            *publisher = None;
        }
        // A lost connection is replaced now, batch or not: the relay is not healthy until it
        // can publish again.
        if publisher.is_none() && self.status.broker_lost().is_some() {
            self.connect(publisher, 0).await?;
        }
        let held = self.held_orders();
        // A read-ahead left out the orders of the batch before it: more rows may be waiting.
        let (batch, read_ahead) = match self.prefetched.take() {
            Some(rows) => (rows, true),
            None => {
                self.finish_deletes().await?;
                let rows = self
                    .reader
                    .read(self.cfg.batch_size, &held, &self.undeleted, &[])
                    .await?;
                (prepare(self.encoder.as_ref(), rows), false)
            }
        };
        let (Some((first, _)), Some((last, _))) = (batch.first(), batch.last()) else {
            if held.is_empty() && self.status.quarantined() == 0 && self.undeleted.is_empty() {
                // Nothing present: that is the backlog, no need to count it (keeps idle load
                // at two statements per poll: the lock ping and this read).
                self.status.set_backlog(db::Backlog::default());
            } else {
                // Rows wait behind held or quarantined orders: count them.
                self.refresh_backlog(false).await?;
            }
            return Ok(Cycle::Drained);
        };
        let span = tracing::Span::current();
        span.record("first_seq", first.seq);
        span.record("last_seq", last.seq);
        span.record("events", batch.len());

        if publisher.as_ref().is_some_and(|p| !p.is_open()) {
            *publisher = None;
        }
        let publisher = match publisher {
            Some(p) => p,
            None => self.connect(publisher, batch.len()).await?,
        };

        let full = batch.len() >= self.cfg.batch_size as usize;
        let more = full || read_ahead;
        // The read-ahead: after the previous delete, the next batch without this batch's orders
        // (nor the held ones), and the periodic backlog figures, while this batch is confirmed.
        let ahead = {
            let pool = self.pool.clone();
            let queries = self.queries.clone();
            let reader = self.reader.clone();
            let in_flight: Vec<i64> = batch.iter().map(|(r, _)| r.seq).collect();
            let encoder = self.encoder.clone();
            let deleting = self.deleting.take();
            let mut undeleted = self.undeleted.clone();
            let limit = self.cfg.batch_size;
            let mut skip: Vec<i64> = held;
            skip.extend(batch.iter().map(|(r, _)| r.aggregate_id));
            let count_backlog = more && self.backlog_due();
            async move {
                let delete_error = settle_deletes(&queries, &pool, deleting, &mut undeleted).await;
                let next = if more {
                    // Encoded here too: the CPU work falls into the wait for the confirms.
                    Some(
                        reader
                            .read(limit, &skip, &undeleted, &in_flight)
                            .await
                            .map(|rows| prepare(encoder.as_ref(), rows)),
                    )
                } else {
                    None
                };
                let backlog = if count_backlog {
                    Some(backlog_figures(&queries, &pool).await)
                } else {
                    None
                };
                (undeleted, delete_error, next, backlog)
            }
        };
        let (delivery, (undeleted, delete_error, next, backlog)) =
            tokio::join!(self.publish_in_waves(publisher, &batch, lease), ahead);
        self.undeleted = undeleted;
        if let Some(e) = &delivery.broken {
            tracing::warn!(error = %e, "relay: broker connection broken, reconnecting");
        }
        if !delivery.delivered.is_empty() {
            let seqs: Vec<i64> = delivery.delivered.iter().map(|(s, _)| *s).collect();
            self.status.published(&delivery.delivered);
            tracing::info!("relay: published seq={}", seq_ranges(&seqs));
            log_published_events(batch.iter().map(|(r, _)| r), &seqs);
            for order in &delivery.delivered_orders {
                self.held.remove(order);
            }
            if let Some(hook) = &self.cfg.before_delete {
                hook.stop(seqs.clone()).await;
            }
            // Only after the confirm, and in the background while the next batch is published;
            // the next read waits for it. If it fails, the seqs are left out of reads and
            // deleted again; if we crash first, the rows are published again later: a
            // duplicate, never a loss.
            let pool = self.pool.clone();
            let queries = self.queries.clone();
            // Bounded: a delete on a socket gone silent would hold its pool connection (and the
            // next read, which waits for it) forever.
            let after = self.cfg.db_step_timeout;
            self.deleting = Some(tokio::spawn(async move {
                let deleted = tokio::time::timeout(after, db::delete(&queries, &pool, &seqs))
                    .await
                    .unwrap_or(Err(Error::DbTimeout {
                        what: "deleting a confirmed batch",
                        after,
                    }));
                match deleted {
                    Ok(_) => (Vec::new(), None),
                    Err(e) => {
                        tracing::warn!(
                            error = %e,
                            "relay: cannot delete the confirmed seq={} (left out of reads, deleted again before the next one)",
                            seq_ranges(&seqs)
                        );
                        (seqs, Some(e))
                    }
                }
            }));
        }
        if !delivery.corrupt.is_empty() {
            let rows: Vec<(i64, String)> = delivery
                .corrupt
                .iter()
                .map(|(seq, _, reason)| (*seq, reason.clone()))
                .collect();
            let moved = db::quarantine(&self.queries, &self.pool, &rows).await?;
            self.status.moved_to_quarantine(moved);
            for (seq, order, reason) in &delivery.corrupt {
                tracing::error!(
                    seq,
                    order_id = order,
                    reason = %reason,
                    "relay: quarantined seq={seq} order={order} ({reason}); the order is held until an operator moves the row back"
                );
            }
        }
        for (seq, order, reason) in &delivery.refused {
            let hold = self.held.entry(*order).or_insert_with(|| Hold {
                until: Instant::now(),
                backoff: self.cfg.backoff(),
            });
            let delay = hold.backoff.next_delay();
            hold.until = Instant::now() + delay;
            let retry = hold.backoff.failures();
            tracing::warn!(
                seq,
                order_id = order,
                retry,
                "relay: seq={seq} order={order} {reason}; order held, retry={retry} in {delay:?}"
            );
        }
        self.status.set_held_orders(self.held.len());
        if let Some(figures) = backlog {
            self.set_backlog(figures?);
        }
        if !more || delivery.undelivered > 0 {
            // Exact figures: the deletes first, so that deleted rows are not counted.
            self.finish_deletes().await?;
            self.refresh_backlog(true).await?;
        }
        if let Some(e) = delivery.broken {
            return Err(e);
        }
        if delivery.interrupted {
            return Ok(Cycle::Interrupted);
        }
        if let Some(e) = delete_error
            && self.undeleted.len() > UNDELETED_BATCHES * self.cfg.batch_size as usize
        {
            return Err(e);
        }
        if let Some(next) = next {
            let next = next?;
            if !next.is_empty() {
                self.prefetched = Some(next);
            }
        }
        Ok(if more { Cycle::Full } else { Cycle::Drained })
    }

    /// Waits for the background delete and deletes again what failed before. A delete that
    /// fails again leaves its seqs out of reads; beyond [`UNDELETED_BATCHES`] batches of them
    /// the relay stops reading until the database takes them.
    async fn finish_deletes(&mut self) -> Result<(), Error> {
        let deleting = self.deleting.take();
        let error = settle_deletes(&self.queries, &self.pool, deleting, &mut self.undeleted).await;
        match error {
            Some(e) if self.undeleted.len() > UNDELETED_BATCHES * self.cfg.batch_size as usize => {
                Err(e)
            }
            _ => Ok(()),
        }
    }

    /// Whether the periodic backlog figures are due (at most every [`BACKLOG_REFRESH`]).
    fn backlog_due(&self) -> bool {
        self.last_backlog_refresh
            .is_none_or(|t| t.elapsed() >= BACKLOG_REFRESH)
    }

    fn set_backlog(&mut self, (backlog, quarantined): (db::Backlog, u64)) {
        self.status.set_backlog(backlog);
        self.status.set_quarantined(quarantined);
        self.last_backlog_refresh = Some(Instant::now());
    }

    /// Connects to the first broker address that answers, starting after the one last
    /// connected to. On failure the `unsent` rows of the batch in hand count as unreachable.
    async fn connect<'p>(
        &mut self,
        publisher: &'p mut Option<Publisher>,
        unsent: usize,
    ) -> Result<&'p mut Publisher, Error> {
        let cfg = &self.cfg;
        let (exchange, timeout, tls, heartbeat) = (
            &cfg.amqp_exchange,
            cfg.confirm_timeout,
            &cfg.amqp_tls,
            cfg.amqp_heartbeat,
        );
        let status = &self.status;
        let connected = self
            .broker
            .connect(|url| {
                let (number, on_change) = status.on_broker_change();
                let connect = Publisher::connect(url, tls, heartbeat, exchange, timeout, on_change);
                async move { connect.await.map(|p| (number, p)) }
            })
            .await;
        match connected {
            Ok(((number, p), _)) => {
                tracing::info!(exchange = %self.cfg.amqp_exchange, "relay: connected to the broker");
                self.status.broker_connection_ok(number);
                Ok(publisher.insert(p))
            }
            Err(e) => {
                self.status.failed("unreachable", unsent);
                let _ = self.refresh_backlog(true).await;
                Err(e)
            }
        }
    }

    /// Publishes `batch` wave by wave (see the module doc) and reports what became of each row.
    async fn publish_in_waves(
        &self,
        publisher: &Publisher,
        batch: &[Prepared],
        lease: &Lease,
    ) -> Delivery {
        let waves = outbox::rounds::of(batch.iter().map(|(row, _)| row.aggregate_id));

        let mut out = Delivery::default();
        // Orders with an undelivered event in this batch: their later events wait.
        let mut blocked: HashSet<i64> = HashSet::new();
        for wave in waves {
            // Nothing more goes out once the relay stops or cannot prove it still leads.
            if !out.interrupted
                && out.broken.is_none()
                && (self.shutdown.is_cancelled() || lease.check().is_err())
            {
                out.interrupted = true;
            }
            let mut rows = Vec::with_capacity(wave.len());
            let mut messages = Vec::with_capacity(wave.len());
            for (row, message) in wave.into_iter().map(|i| &batch[i]) {
                if out.broken.is_some() || out.interrupted || blocked.contains(&row.aggregate_id) {
                    out.undelivered += 1;
                    continue;
                }
                match message {
                    Ok(m) => {
                        rows.push(row);
                        messages.push(m);
                    }
                    Err(reason) => self.settle(row, decide(Err(reason)), &mut out, &mut blocked),
                }
            }
            if messages.is_empty() {
                continue;
            }
            // A broker that blocks publishing (a resource alarm) reads nothing: send nothing
            // either (lapin would only queue it) until it unblocks; the watch said so once.
            if publisher.blocked().is_some() {
                tokio::select! {
                    _ = publisher.unblocked() => {}
                    _ = self.shutdown.cancelled() => {}
                }
                // The wait may have been long: the lease must still be proven.
                if self.shutdown.is_cancelled() || lease.check().is_err() {
                    out.interrupted = true;
                    out.undelivered += messages.len();
                    continue;
                }
            }
            let timeout = self.cfg.confirm_timeout;
            match publisher.publish(&messages, timeout, &self.shutdown).await {
                Ok(outcomes) => {
                    for (row, outcome) in rows.iter().zip(outcomes) {
                        if let Outcome::Failed(e) = &outcome
                            && out.broken.is_none()
                        {
                            out.broken = Some(Error::Undelivered {
                                undelivered: 1,
                                attempted: batch.len(),
                                reason: format!("seq={}: {e}", row.seq),
                            });
                        }
                        if outcome != Outcome::Delivered {
                            self.status.failed(outcome.reason(), 1);
                        }
                        self.settle(row, decide(Ok(Some(&outcome))), &mut out, &mut blocked);
                    }
                }
                Err(e) => {
                    self.status.failed("error", messages.len());
                    out.undelivered += messages.len();
                    out.broken = Some(e);
                }
            }
        }
        if out.broken.is_none() && out.undelivered > 0 && !publisher.is_open() {
            out.broken = Some(Error::Undelivered {
                undelivered: out.undelivered,
                attempted: batch.len(),
                reason: "broker channel closed".into(),
            });
        }
        out
    }

    /// Applies `fate` to `row`: what to delete, quarantine, hold, and which order is blocked for
    /// the rest of the batch.
    fn settle(&self, row: &OutboxRow, fate: Fate, out: &mut Delivery, blocked: &mut HashSet<i64>) {
        match fate {
            Fate::Delete => {
                out.delivered.push((row.seq, row.created_at));
                out.delivered_orders.insert(row.aggregate_id);
                return;
            }
            Fate::Quarantine(reason) => {
                self.status.failed("corrupt", 1);
                out.corrupt.push((row.seq, row.aggregate_id, reason));
            }
            Fate::HoldOrder(reason) => out.refused.push((row.seq, row.aggregate_id, reason)),
            Fate::Stay => {}
        }
        blocked.insert(row.aggregate_id);
        out.undelivered += 1;
    }

    /// Updates the backlog figures (always when `force`, else at most every
    /// [`BACKLOG_REFRESH`]), and the quarantine count with them.
    async fn refresh_backlog(&mut self, force: bool) -> Result<(), Error> {
        if !force && !self.backlog_due() {
            return Ok(());
        }
        let figures = backlog_figures(&self.queries, &self.pool).await?;
        self.set_backlog(figures);
        Ok(())
    }

    /// A LISTEN connection, or `None` if the database cannot give one now (then the fallback
    /// poll alone wakes the relay, and the next cycle tries again).
    async fn listen(&self) -> Option<PgListener> {
        // A pool of one connection of its own (outside `self.pool`, whose connections it would
        // keep forever), which `PgListener` also uses to reconnect.
        let own = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with((*self.pool.connect_options()).clone());
        let connect = async {
            let mut l = PgListener::connect_with(&own).await?;
            l.listen(&self.cfg.table.notify_channel()).await?;
            Ok::<_, sqlx::Error>(l)
        };
        match tokio::time::timeout(DB_TIMEOUT, connect).await {
            Ok(Ok(l)) => Some(l),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "relay: cannot LISTEN, polling only for now");
                None
            }
            Err(_) => None,
        }
    }

    /// Waits for a notification, the fallback poll, the end of the earliest order hold, or
    /// shutdown.
    async fn wait(&self, listener: &mut Option<PgListener>) {
        let mut until = Instant::now() + self.cfg.poll_interval;
        if let Some(hold_end) = self.next_hold_end() {
            until = until.min(hold_end);
        }
        let poll = tokio::time::sleep_until(until.into());
        let Some(l) = listener.as_mut() else {
            tokio::select! {
                _ = self.shutdown.cancelled() => {}
                _ = poll => {}
            }
            return;
        };
        tokio::select! {
            _ = self.shutdown.cancelled() => {}
            _ = poll => {}
            received = l.try_recv() => match received {
                // Many commits, one cycle: drop the notifications already queued.
                Ok(Some(_)) => while l.next_buffered().is_some() {},
                // The connection dropped and was re-established: notifications in between are
                // lost, so read now.
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "relay: LISTEN connection lost");
                    *listener = None;
                }
            },
        }
    }

    /// Sleeps unless shutdown comes first; returns false on shutdown.
    async fn sleep(&self, d: Duration) -> bool {
        tokio::select! {
            _ = self.shutdown.cancelled() => false,
            _ = tokio::time::sleep(d) => true,
        }
    }

    fn failed(&mut self) -> Duration {
        let delay = self.backoff.next_delay();
        self.status
            .set_consecutive_failures(self.backoff.failures());
        delay
    }

    fn succeeded(&mut self) {
        if self.backoff.failures() > 0 {
            tracing::info!("relay: recovered");
        }
        self.backoff.reset();
        self.status.set_consecutive_failures(0);
    }
}

/// Resolves when the connection of `publisher` is lost (never without one).
async fn connection_lost(publisher: &Option<Publisher>) {
    match publisher {
        Some(p) => {
            p.lost().await;
        }
        None => std::future::pending().await,
    }
}

/// The backlog and the quarantine count.
async fn backlog_figures(q: &Queries, pool: &PgPool) -> Result<(db::Backlog, u64), Error> {
    Ok((db::backlog(q, pool).await?, db::quarantined(q, pool).await?))
}

/// Waits for `deleting` (adding what it could not delete to `undeleted`), then deletes
/// `undeleted` again in one statement. Returns the error of a delete that failed; its seqs stay
/// in `undeleted`.
async fn settle_deletes(
    queries: &Queries,
    pool: &PgPool,
    deleting: Option<JoinHandle<Undeleted>>,
    undeleted: &mut Vec<i64>,
) -> Option<Error> {
    let mut error = None;
    if let Some(task) = deleting {
        match task.await {
            Ok((failed, e)) => {
                undeleted.extend(failed);
                error = e;
            }
            // It panicked: whether its rows went is unknown; at worst they are published
            // again (a duplicate).
            Err(e) => tracing::error!(error = %e, "relay: the delete task failed"),
        }
    }
    if error.is_none() && !undeleted.is_empty() {
        match db::delete(queries, pool, undeleted).await {
            Ok(_) => {
                tracing::info!(
                    "relay: deleted the confirmed seq={} at last",
                    seq_ranges(undeleted)
                );
                undeleted.clear();
            }
            Err(e) => error = Some(e),
        }
    }
    error
}

/// `6..8` for contiguous seqs, `6..12 (5 events)` otherwise (`seqs` non-empty, any order).
fn seq_ranges(seqs: &[i64]) -> String {
    let min = seqs.iter().min().copied().unwrap_or_default();
    let max = seqs.iter().max().copied().unwrap_or_default();
    if (max - min + 1) as usize == seqs.len() {
        format!("{min}..{max}")
    } else {
        format!("{min}..{max} ({} events)", seqs.len())
    }
}

/// One line per published event with its trace id, so an operator can follow one Upsert's trace
/// from orders-svc through the relay to mail-svc by grepping the id.
fn log_published_events<'a>(batch: impl Iterator<Item = &'a OutboxRow>, published: &[i64]) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    let published: HashSet<i64> = published.iter().copied().collect();
    for row in batch.filter(|r| published.contains(&r.seq)) {
        let trace_id = row.trace().map(|t| t.trace_id()).unwrap_or_default();
        tracing::info!(
            trace_id = %trace_id,
            "relay: sent seq={} order={} type={}",
            row.seq,
            row.aggregate_id,
            row.event_type
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{Fate, decide, seq_ranges};
    use crate::publisher::Outcome;

    #[test]
    fn per_row_problems_concern_only_their_order() {
        let returned = Outcome::Returned {
            reply_code: 312,
            reply_text: "NO_ROUTE".into(),
        };
        let cases = [
            (Ok(Some(&Outcome::Delivered)), Fate::Delete),
            (
                Ok(Some(&returned)),
                Fate::HoldOrder("returned by the broker: 312 NO_ROUTE".into()),
            ),
            (
                Ok(Some(&Outcome::Nacked)),
                Fate::HoldOrder("nacked by the broker".into()),
            ),
            // No answer: the connection broke, a failure of the whole relay (backoff, reconnect).
            (Ok(Some(&Outcome::Failed("closed".into()))), Fate::Stay),
            // Not sent (behind an earlier event of its order, or the wave never went out).
            (Ok(None), Fate::Stay),
            (
                Err("unknown event_type"),
                Fate::Quarantine("unknown event_type".into()),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(decide(input), want, "{input:?}");
        }
    }

    #[test]
    fn ranges_read_like_the_seed() {
        assert_eq!(seq_ranges(&[3]), "3..3");
        assert_eq!(seq_ranges(&[6, 7, 8]), "6..8");
        assert_eq!(seq_ranges(&[8, 6, 7]), "6..8");
        assert_eq!(seq_ranges(&[6, 8, 12]), "6..12 (3 events)");
    }
}
