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
//! - **Per-row problems hold back only their order** (the table in [`fate::decide`]): a row that can
//!   never be encoded moves to quarantine; a returned or nacked row is retried with its order's
//!   own backoff while every other order flows at full speed.
//! - **Wake-up**: LISTEN on the outbox's channel (`outbox::TableName::notify_channel`) plus a
//!   fallback poll every `poll_interval`, and the end of the earliest order hold; a full batch
//!   loops at once.
//! - **Failures of the broker or the database** (connect, channel, timeout, query) end the cycle
//!   with a capped, jittered backoff; the next cycle reconnects what broke.
//!
//! Layout: here the loop (stand by or lead, and the lead's cycles); [`standby`] (taking the
//! lock), [`batch`] (one overlapped cycle), [`waves`] (publishing a batch wave by wave),
//! [`fate`] (the per-row rule table), [`holds`] (held orders), [`deletes`] (the background
//! delete and its retries), [`retention`] (the published rows' partitions), [`figures`] (the
//! backlog figures), [`wake`] (LISTEN and the poll), [`broker`] (connecting with failover),
//! [`log`] (what an operator greps).

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use outbox_support::{backoff::Backoff, failover::Failover};
use sqlx::{PgPool, postgres::PgListener};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{
    Settings,
    db::Queries,
    error::Error,
    floor::Reader,
    lease::{Lease, Unproven},
    publisher::{Encoder, Publisher},
    status::Status,
};

use self::{batch::Prepared, deletes::Undeleted, holds::Hold, wake::connection_lost};

mod batch;
mod broker;
mod deletes;
mod fate;
mod figures;
mod holds;
mod log;
mod retention;
mod standby;
mod wake;
mod waves;

/// How long a database connect or lock ping may take before it counts as failed.
const DB_TIMEOUT: Duration = Duration::from_secs(5);
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
    /// The figures were not counted after the last batch (it drained the outbox within
    /// `BACKLOG_REFRESH` of the last count): the next idle cycle sets them.
    figures_stale: bool,
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
    /// When the leader next rolls the published rows' partitions (`None`: at once).
    next_roll: Option<Instant>,
}

/// How a cycle ended.
pub(super) enum Cycle {
    /// The batch was full: more rows are probably waiting, go again at once.
    Full,
    /// Everything present was read: wait for a notification, the poll or a hold's end.
    Drained,
    /// Stopped between waves: shutdown, or the lease is not proven right now.
    Interrupted,
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
        let queries = match cfg.published_retention {
            Some(_) => Queries::new(&cfg.table),
            None => Queries::new(&cfg.table).without_published(),
        };
        let queries = Arc::new(queries);
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
            figures_stale: false,
            held: HashMap::new(),
            prefetched: None,
            deleting: None,
            undeleted: Vec::new(),
            next_roll: None,
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
            tracing::info!("relay: active (holding the leader lock)");
            let lease = Lease::start(lock, self.cfg.leader_lease, DB_TIMEOUT);
            match self.term(lease).await {
                None => break,
                Some(e) => tracing::warn!(error = %e, "relay: lost the leader lock, standing by"),
            }
        }
        tracing::info!("relay: stopped");
    }

    /// Publishes under a fleet registry's `lease`, its deletes and quarantine moves fenced at
    /// `epoch` (see [`crate::fleet::fence`]), until shutdown (`None`) or until the lease is
    /// lost or the fence taken by a newer owner (why). Never stands by: the fleet instance
    /// decides what runs next.
    pub(crate) async fn run_owned(mut self, lease: Lease, epoch: i64) -> Option<String> {
        self.queries = Arc::new(self.queries.as_ref().clone().fenced(epoch));
        self.reader = Reader::new(self.queries.clone(), self.pool.clone(), self.status.clone());
        self.status.set_broker_blocked(None);
        let lost = self.term(lease).await;
        tracing::info!("relay: stopped");
        lost
    }

    /// One term as the publisher of the outbox: leads while `lease` lives, then forgets the
    /// term's state. Returns `None` on shutdown, or why the lease was lost.
    async fn term(&mut self, lease: Lease) -> Option<String> {
        self.status.set_active(true);
        // The read floor is the term's own: it starts from the table's head.
        self.reader.reset().await;
        let lost = self.lead(lease).await;
        self.status.set_active(false);
        // A standby publishes nothing: its broker connection is no concern of its health.
        self.status.broker_connection_ok(0);
        // A new term starts with no holds and no read-ahead: the next leader's read decides
        // afresh.
        self.held.clear();
        self.prefetched = None;
        self.status.set_held_orders(0);
        lost
    }

    /// Publishes while the lease lives. Returns `None` on shutdown (after releasing the lock),
    /// or why the lease was lost (or the fence taken by a newer owner).
    async fn lead(&mut self, lease: Lease) -> Option<String> {
        self.roll_at_once();
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
            self.roll_published_if_due().await;
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
                Err(Error::Fenced { epoch }) => {
                    // A newer owner took the database: nothing more of ours may take effect.
                    break Some(Error::Fenced { epoch }.to_string());
                }
                Err(e) => {
                    self.status.set_last_error(Some(e.to_string()));
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
        self.status.set_last_error(None);
    }
}
