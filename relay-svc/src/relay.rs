//! The relay loop: take the leader lock, then read, publish, confirm, delete; forever.
//!
//! - **Leader**: a dedicated connection holds the session advisory lock
//!   [`LEADER_LOCK_KEY`](crate::db::LEADER_LOCK_KEY). Standbys try to take it every
//!   `STANDBY_RETRY_MS`. The leader pings that connection every cycle and steps down the moment
//!   it fails (the session, and with it the lock, may be gone and a standby may already lead).
//! - **Cycle**: read the oldest `BATCH_SIZE` rows present, publish them in *waves* (wave k
//!   holds the k-th event of every order in the batch, in seq order; all messages of a wave are
//!   pipelined on one confirm channel), delete the delivered seqs. An order's next event is only
//!   sent once its previous one was confirmed delivered, so a nack or a return can never let a
//!   later event of an order reach a queue before an earlier one.
//! - **Wake-up**: LISTEN on [`NOTIFY_CHANNEL`](outbox_kit::outbox::NOTIFY_CHANNEL) plus a
//!   fallback poll every `POLL_INTERVAL_MS`; a full batch loops at once.
//! - **Failures**: anything failing (database, broker, unroutable, nack) ends the cycle with a
//!   capped, jittered backoff; the next cycle reconnects what broke.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use outbox_kit::backoff::Backoff;
use sqlx::{
    Connection, PgConnection, PgPool,
    postgres::{PgConnectOptions, PgListener},
};
use tokio_util::sync::CancellationToken;

use crate::{
    Config,
    amqp::{Outcome, Outgoing, Publisher},
    db::{self, OutboxRow},
    error::Error,
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
    cfg: Config,
    pg: PgConnectOptions,
    pool: PgPool,
    status: Arc<Status>,
    shutdown: CancellationToken,
    backoff: Backoff,
    last_backlog_refresh: Option<Instant>,
}

/// How a cycle ended.
enum Cycle {
    /// The batch was full: more rows are probably waiting, go again at once.
    Full,
    /// Everything present was read: wait for a notification or the poll.
    Drained,
}

/// What one batch's publishing achieved.
#[derive(Default)]
struct Delivery {
    /// Confirmed, routed, and not held back: safe to delete.
    delivered: Vec<(i64, DateTime<Utc>)>,
    /// Not delivered (including those held back behind an earlier failure of their order).
    undelivered: usize,
    first_reason: Option<String>,
    /// The channel broke: reconnect before the next cycle.
    broken: Option<Error>,
}

impl Relay {
    pub(crate) fn new(
        cfg: Config,
        pg: PgConnectOptions,
        pool: PgPool,
        status: Arc<Status>,
        shutdown: CancellationToken,
    ) -> Self {
        let backoff = cfg.backoff();
        Self {
            cfg,
            pg,
            pool,
            status,
            shutdown,
            backoff,
            last_backlog_refresh: None,
        }
    }

    /// Stands by until it holds the leader lock, leads until it loses it, repeats; returns on
    /// shutdown.
    pub(crate) async fn run(mut self) {
        self.status.set_active(false);
        while let Some(lock) = self.acquire_lock().await {
            self.status.set_active(true);
            tracing::info!("relay: active (holding the leader lock)");
            let lost = self.lead(lock).await;
            self.status.set_active(false);
            match lost {
                None => break,
                Some(e) => tracing::warn!(error = %e, "relay: lost the leader lock, standing by"),
            }
        }
        tracing::info!("relay: stopped");
    }

    /// Returns the connection holding the lock, or `None` on shutdown.
    async fn acquire_lock(&mut self) -> Option<PgConnection> {
        let mut conn: Option<PgConnection> = None;
        let mut said_standby = false;
        loop {
            if self.shutdown.is_cancelled() {
                return None;
            }
            let attempt = async {
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => conn.insert(
                        tokio::time::timeout(DB_TIMEOUT, PgConnection::connect_with(&self.pg))
                            .await
                            .map_err(|_| sqlx::Error::PoolTimedOut)??,
                    ),
                };
                tokio::time::timeout(DB_TIMEOUT, db::try_lock(c))
                    .await
                    .map_err(|_| sqlx::Error::PoolTimedOut)?
            };
            match attempt.await {
                Ok(true) => {
                    self.succeeded();
                    return conn;
                }
                Ok(false) => {
                    self.succeeded();
                    if !said_standby {
                        tracing::info!("relay: standby (another instance holds the leader lock)");
                        said_standby = true;
                    }
                    if !self.sleep(self.cfg.standby_retry()).await {
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

    /// Publishes while `lock` lives. Returns `None` on shutdown (after releasing the lock), or
    /// why the lock was lost.
    async fn lead(&mut self, mut lock: PgConnection) -> Option<sqlx::Error> {
        let mut listener: Option<PgListener> = None;
        let mut publisher: Option<Publisher> = None;
        let lost = loop {
            if self.shutdown.is_cancelled() {
                break None;
            }
            // The lock lives exactly as long as its session: if this connection is gone, so is
            // the lock, and a standby may be publishing already. Stop at once.
            match tokio::time::timeout(DB_TIMEOUT, db::ping(&mut lock)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => break Some(e),
                Err(_) => break Some(sqlx::Error::PoolTimedOut),
            }
            if listener.is_none() {
                listener = self.listen().await;
            }
            match self.cycle(&mut publisher).await {
                Ok(cycle) => {
                    self.succeeded();
                    if let Cycle::Drained = cycle {
                        self.wait(&mut listener).await;
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
                    let broken = matches!(e, Error::Broker(_) | Error::ConfirmTimeout(_));
                    if (broken || publisher.as_ref().is_some_and(|p| !p.is_open()))
                        && let Some(p) = publisher.take()
                    {
                        tokio::spawn(p.close());
                    }
                    if !self.sleep(delay).await {
                        break None;
                    }
                }
            }
        };
        // Bounded: a stalled broker or database must not hold up shutdown.
        if let Some(p) = publisher {
            let _ = tokio::time::timeout(DB_TIMEOUT, p.close()).await;
        }
        if lost.is_none() {
            // Ending the session releases the lock now, so a standby need not wait for a
            // timeout to take over.
            let _ = tokio::time::timeout(DB_TIMEOUT, lock.close()).await;
        }
        lost
    }

    /// One read-publish-delete round.
    #[tracing::instrument(skip_all, fields(first_seq, last_seq, events))]
    async fn cycle(&mut self, publisher: &mut Option<Publisher>) -> Result<Cycle, Error> {
        let batch = db::fetch_batch(&self.pool, self.cfg.batch_size).await?;
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            // Nothing present: that is the backlog, no need to count it (keeps idle load at
            // two statements per poll: the lock ping and this read).
            self.status.set_backlog(db::Backlog::default());
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
            None => {
                match Publisher::connect(
                    &self.cfg.amqp_url,
                    &self.cfg.amqp_exchange,
                    self.cfg.confirm_timeout(),
                )
                .await
                {
                    Ok(p) => {
                        tracing::info!(exchange = %self.cfg.amqp_exchange, "relay: connected to the broker");
                        publisher.insert(p)
                    }
                    Err(e) => {
                        self.status.failed("unreachable", batch.len());
                        let _ = self.refresh_backlog(true).await;
                        return Err(e);
                    }
                }
            }
        };

        let delivery = self.publish_in_waves(publisher, &batch).await;
        if let Some(e) = &delivery.broken {
            tracing::warn!(error = %e, "relay: broker connection broken, reconnecting");
        }
        if !delivery.delivered.is_empty() {
            let seqs: Vec<i64> = delivery.delivered.iter().map(|(s, _)| *s).collect();
            if let Some(hook) = &self.cfg.before_delete {
                hook.stop(seqs.clone()).await;
            }
            // Only after the confirm. If this delete fails (or we crash first), the rows are
            // published again later: a duplicate, never a loss.
            db::delete(&self.pool, &seqs).await?;
            self.status.published(&delivery.delivered);
            tracing::info!("relay: published seq={}", seq_ranges(&seqs));
            log_published_events(&batch, &seqs);
        }
        let full = batch.len() >= self.cfg.batch_size as usize;
        self.refresh_backlog(!full || delivery.undelivered > 0)
            .await?;
        if let Some(e) = delivery.broken {
            return Err(e);
        }
        if delivery.undelivered > 0 {
            return Err(Error::Undelivered {
                undelivered: delivery.undelivered,
                attempted: batch.len(),
                reason: delivery.first_reason.unwrap_or_default(),
            });
        }
        Ok(if full { Cycle::Full } else { Cycle::Drained })
    }

    /// Publishes `batch` wave by wave (see the module doc) and reports what was delivered.
    async fn publish_in_waves(&self, publisher: &Publisher, batch: &[OutboxRow]) -> Delivery {
        let mut waves: Vec<Vec<&OutboxRow>> = Vec::new();
        let mut per_order: HashMap<i64, usize> = HashMap::new();
        for row in batch {
            let k = per_order.entry(row.aggregate_id).or_default();
            if waves.len() <= *k {
                waves.push(Vec::new());
            }
            waves[*k].push(row);
            *k += 1;
        }

        let mut out = Delivery::default();
        // Orders with an undelivered event in this batch: their later events wait.
        let mut blocked: HashSet<i64> = HashSet::new();
        for wave in waves {
            let mut rows = Vec::with_capacity(wave.len());
            let mut messages = Vec::with_capacity(wave.len());
            for row in wave {
                if out.broken.is_some() || blocked.contains(&row.aggregate_id) {
                    out.undelivered += 1;
                    continue;
                }
                match Outgoing::from_row(row) {
                    Ok(m) => {
                        rows.push(row);
                        messages.push(m);
                    }
                    Err(e) => {
                        tracing::error!(seq = row.seq, order_id = row.aggregate_id, error = %e, "relay: cannot encode event, order held");
                        self.status.failed("corrupt", 1);
                        blocked.insert(row.aggregate_id);
                        out.undelivered += 1;
                        out.first_reason.get_or_insert_with(|| e.to_string());
                    }
                }
            }
            if messages.is_empty() {
                continue;
            }
            match publisher
                .publish(&messages, self.cfg.confirm_timeout())
                .await
            {
                Ok(outcomes) => {
                    for (row, outcome) in rows.iter().zip(outcomes) {
                        if outcome == Outcome::Delivered {
                            out.delivered.push((row.seq, row.created_at));
                            continue;
                        }
                        self.status.failed(outcome.reason(), 1);
                        blocked.insert(row.aggregate_id);
                        out.undelivered += 1;
                        out.first_reason.get_or_insert_with(|| match &outcome {
                            Outcome::Returned {
                                reply_code,
                                reply_text,
                            } => format!(
                                "seq={} returned by the broker: {reply_code} {reply_text}",
                                row.seq
                            ),
                            Outcome::Failed(e) => format!("seq={}: {e}", row.seq),
                            other => format!("seq={} {}", row.seq, other.reason()),
                        });
                    }
                }
                Err(e) => {
                    self.status.failed("error", messages.len());
                    out.undelivered += messages.len();
                    out.first_reason.get_or_insert_with(|| e.to_string());
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

    /// Updates the backlog figures (always when `force`, else at most every
    /// [`BACKLOG_REFRESH`]).
    async fn refresh_backlog(&mut self, force: bool) -> Result<(), Error> {
        if !force
            && self
                .last_backlog_refresh
                .is_some_and(|t| t.elapsed() < BACKLOG_REFRESH)
        {
            return Ok(());
        }
        let backlog = db::backlog(&self.pool).await?;
        self.status.set_backlog(backlog);
        self.last_backlog_refresh = Some(Instant::now());
        Ok(())
    }

    /// A LISTEN connection, or `None` if the database cannot give one now (then the fallback
    /// poll alone wakes the relay, and the next cycle tries again).
    async fn listen(&self) -> Option<PgListener> {
        let connect = async {
            let mut l = PgListener::connect(&self.cfg.database_url).await?;
            l.listen(outbox_kit::outbox::NOTIFY_CHANNEL).await?;
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

    /// Waits for a notification, the fallback poll, or shutdown.
    async fn wait(&self, listener: &mut Option<PgListener>) {
        let poll = tokio::time::sleep(self.cfg.poll_interval());
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
fn log_published_events(batch: &[db::OutboxRow], published: &[i64]) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    for row in batch.iter().filter(|r| published.contains(&r.seq)) {
        let trace_id = row
            .traceparent
            .as_deref()
            .and_then(outbox_kit::trace::TraceParent::parse)
            .map(|t| t.trace_id)
            .unwrap_or_default();
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
    use super::seq_ranges;

    #[test]
    fn ranges_read_like_the_seed() {
        assert_eq!(seq_ranges(&[3]), "3..3");
        assert_eq!(seq_ranges(&[6, 7, 8]), "6..8");
        assert_eq!(seq_ranges(&[8, 6, 7]), "6..8");
        assert_eq!(seq_ranges(&[6, 8, 12]), "6..12 (3 events)");
    }
}
