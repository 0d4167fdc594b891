//! Orders held back by a returned or nacked event, each with its own backoff, while every other
//! order flows.

use std::time::{Duration, Instant};

use outbox_support::backoff::Backoff;

use super::Relay;

/// An order held back by a returned or nacked event.
#[derive(Debug)]
pub(super) struct Hold {
    pub(super) until: Instant,
    pub(super) backoff: Backoff,
}

impl Relay {
    /// The orders to leave out of the next read (their hold has not ended), after dropping
    /// holds that ended long ago (their backoff starts over).
    pub(super) fn held_orders(&mut self) -> Vec<i64> {
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
    pub(super) fn next_hold_end(&self) -> Option<Instant> {
        let now = Instant::now();
        self.held
            .values()
            .map(|h| h.until)
            .filter(|u| *u > now)
            .min()
    }
}
