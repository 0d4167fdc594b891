//! Publishing one batch wave by wave: wave k carries the k-th event of every order in the
//! batch, and an order's next event goes out only after its previous one was confirmed.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::{
    Relay,
    batch::Prepared,
    fate::{Fate, decide},
};
use crate::{
    db::OutboxRow,
    error::Error,
    lease::Lease,
    publisher::{Outcome, Publisher},
};

/// What one batch's publishing achieved.
#[derive(Default)]
pub(super) struct Delivery {
    /// Confirmed and not returned: safe to delete.
    pub(super) delivered: Vec<(i64, DateTime<Utc>)>,
    /// Orders that had an event delivered (their hold, if any, ends).
    pub(super) delivered_orders: HashSet<i64>,
    /// (seq, order, reason): never encodable, to quarantine.
    pub(super) corrupt: Vec<(i64, i64, String)>,
    /// (seq, order, reason): returned or nacked, their orders to hold.
    pub(super) refused: Vec<(i64, i64, String)>,
    /// Rows not delivered for any reason (including those waiting behind one of their order).
    pub(super) undelivered: usize,
    /// The channel broke: reconnect before the next cycle.
    pub(super) broken: Option<Error>,
    /// Stopped before the last wave.
    pub(super) interrupted: bool,
}

impl Relay {
    /// Publishes `batch` wave by wave (see the module doc) and reports what became of each row.
    pub(super) async fn publish_in_waves(
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
}
