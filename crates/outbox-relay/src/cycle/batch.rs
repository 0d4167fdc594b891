//! One read-publish-delete cycle, overlapped with its neighbours (see [`Relay::cycle`]).

use std::time::Instant;

use super::{
    Cycle, Relay,
    deletes::{UNDELETED_BATCHES, settle_deletes},
    figures::backlog_figures,
    holds::Hold,
    log::{log_published_events, seq_ranges},
};
use crate::{
    db::{self, OutboxRow},
    error::Error,
    lease::Lease,
    publisher::{Encoder, Outgoing, Publisher},
};

/// A row and its message, or why it can never be encoded.
pub(super) type Prepared = (OutboxRow, Result<Outgoing, String>);

pub(super) fn prepare(encoder: &dyn Encoder, rows: Vec<OutboxRow>) -> Vec<Prepared> {
    rows.into_iter()
        .map(|row| {
            let message = encoder.encode(&row);
            (row, message)
        })
        .collect()
}

impl Relay {
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
    pub(super) async fn cycle(
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
                self.figures_stale = false;
            } else {
                // Rows wait behind held or quarantined orders: count them.
                self.refresh_backlog(self.figures_stale).await?;
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
                    // The floor's move found by this batch's read, while it is confirmed (a
                    // read-ahead does it first).
                    Some(reader.advance().await.map(|()| Vec::new()))
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
        if (!more && self.backlog_due()) || delivery.undelivered > 0 {
            // Exact figures: the deletes first, so that deleted rows are not counted. At most
            // every BACKLOG_REFRESH after a batch that drained the outbox: the next idle cycle
            // sets them (see `Relay::wait`), so a light load does not pay five statements per
            // event for them.
            self.finish_deletes().await?;
            self.refresh_backlog(true).await?;
        } else if !more {
            self.figures_stale = true;
        }
        if let Some(e) = delivery.broken {
            return Err(e);
        }
        if delivery.interrupted {
            return Ok(Cycle::Interrupted);
        }
        if let Some(e) = delete_error
            && (matches!(e, Error::Fenced { .. })
                || self.undeleted.len() > UNDELETED_BATCHES * self.cfg.batch_size as usize)
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
}
