//! What a [`Consumer`](super::Consumer) did, counted as it happens, for its user to read and
//! export (e.g. as Prometheus counters).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::Outcome;

/// A [`Consumer`](super::Consumer)'s figures since it was made (shared by its clones): every
/// delivery is counted once, when it is settled, as what its committed transaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Events handled in a committed transaction: the delivered ones and the held events they
    /// released.
    pub processed: u64,
    /// Deliveries skipped as duplicates (processed already, or held already).
    pub skipped: u64,
    /// Deliveries held until their predecessor is processed.
    pub held: u64,
    /// Deliveries dead-lettered: refused by the judge, or in conflict with their chain.
    pub dead_lettered: u64,
    /// Consuming sessions that ended on a broker failure (a lost or closed connection, a
    /// cancelled consumer) and were followed by a reconnect
    /// ([`Consumer::run_reconnecting`](super::Consumer::run_reconnecting) only).
    pub reconnects: u64,
    /// Failed attempts at a transaction (a batch's, a delivery's, recording a dead letter) that
    /// were tried again after a backoff.
    pub retries: u64,
}

/// The live counters behind [`Counts`].
#[derive(Debug, Default)]
pub(super) struct Counters {
    processed: AtomicU64,
    skipped: AtomicU64,
    held: AtomicU64,
    dead_lettered: AtomicU64,
    reconnects: AtomicU64,
    retries: AtomicU64,
}

impl Counters {
    /// A committed delivery's outcome (a conflict is counted when it is dead-lettered).
    pub(super) fn committed(&self, outcome: &Outcome) {
        match outcome {
            Outcome::Processed { seqs } => self.processed.fetch_add(seqs.len() as u64, Relaxed),
            Outcome::Skipped { .. } => self.skipped.fetch_add(1, Relaxed),
            Outcome::Held { .. } => self.held.fetch_add(1, Relaxed),
            Outcome::Conflict(_) => return,
        };
    }

    pub(super) fn dead_lettered(&self) {
        self.dead_lettered.fetch_add(1, Relaxed);
    }

    pub(super) fn reconnected(&self) {
        self.reconnects.fetch_add(1, Relaxed);
    }

    pub(super) fn retried(&self) {
        self.retries.fetch_add(1, Relaxed);
    }

    pub(super) fn snapshot(&self) -> Counts {
        Counts {
            processed: self.processed.load(Relaxed),
            skipped: self.skipped.load(Relaxed),
            held: self.held.load(Relaxed),
            dead_lettered: self.dead_lettered.load(Relaxed),
            reconnects: self.reconnects.load(Relaxed),
            retries: self.retries.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Conflict;

    #[test]
    fn each_outcome_counts_where_it_belongs() {
        let c = Counters::default();
        c.committed(&Outcome::Processed {
            seqs: vec![3, 4, 5],
        });
        c.committed(&Outcome::Skipped { held: true });
        c.committed(&Outcome::Skipped { held: false });
        c.committed(&Outcome::Held { waiting_for: 9 });
        c.committed(&Outcome::Conflict(Conflict::new(1, Some(2), 3, None)));
        c.dead_lettered();
        c.reconnected();
        c.retried();
        let want = Counts {
            processed: 3,
            skipped: 2,
            held: 1,
            dead_lettered: 1,
            reconnects: 1,
            retries: 1,
        };
        assert_eq!(c.snapshot(), want);
    }
}
