//! Waking the relay: a `NOTIFY` on the outbox's channel for every commit that appended events, at
//! most one per [`MIN_NOTIFY_GAP`] for all writers of a shard together.
//!
//! The first commit after a quiet gap carries the `NOTIFY` itself ([`RelayWaker::take_turn`]):
//! it is delivered the moment the transaction commits, with no statement after it on the path
//! from the commit to the publish. A commit within the gap leaves it to the waker's task
//! ([`run`]), which sends one notification for every such commit once the gap has passed. A
//! `NOTIFY` takes a database-wide lock from its commit on, so notifying transactions commit one at
//! a time: with one per gap, a writer's commit waits for another's flush at most once per gap.
//! A lost notification only costs latency: the relay also polls.

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};

use sqlx::PgPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::db;

/// The shortest gap between two notifications. Under load the relay is busy draining anyway;
/// without a gap the notifications alone would cost a statement per Upsert.
pub const MIN_NOTIFY_GAP: Duration = Duration::from_millis(2);

/// One shard's relay wake-ups.
#[derive(Debug, Default)]
pub struct RelayWaker {
    /// A commit is waiting for the task's notification (a single permit: a burst coalesces).
    pending: Notify,
    /// When the last notification went out (or was committed with a transaction).
    last: Mutex<Option<Instant>>,
}

impl RelayWaker {
    /// Whether the transaction about to commit should carry the `NOTIFY` (none went out within
    /// the gap); if so, it counts as sent now.
    pub fn take_turn(&self) -> bool {
        let mut last = self.last.lock().expect("the waker's clock");
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < MIN_NOTIFY_GAP) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// A commit that appended events without its own `NOTIFY`: the task sends one.
    pub fn wake_later(&self) {
        self.pending.notify_one();
    }

    /// How long until the gap since the last notification has passed.
    fn gap_left(&self) -> Duration {
        let last = *self.last.lock().expect("the waker's clock");
        last.map_or(Duration::ZERO, |t| {
            MIN_NOTIFY_GAP.saturating_sub(t.elapsed())
        })
    }
}

/// The waker's task: one `NOTIFY` (outside any write transaction) for the commits that left it
/// to the task, once the gap since the last notification has passed.
pub async fn run(pool: PgPool, waker: std::sync::Arc<RelayWaker>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = waker.pending.notified() => {}
        }
        tokio::time::sleep(waker.gap_left()).await;
        *waker.last.lock().expect("the waker's clock") = Some(Instant::now());
        if let Err(e) = db::notify_relay(&pool).await {
            // The relay's fallback poll picks the event up; only latency is lost.
            tracing::debug!(error = %e, "cannot notify the relay");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_transaction_per_gap_carries_the_notify() {
        let waker = RelayWaker::default();
        assert!(waker.take_turn(), "a quiet shard's first commit notifies");
        assert!(!waker.take_turn(), "within the gap, the task notifies");
        std::thread::sleep(MIN_NOTIFY_GAP);
        assert!(waker.take_turn(), "after the gap, a commit notifies again");
    }
}
