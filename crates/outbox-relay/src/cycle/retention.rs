//! The published rows' partitions: the leader creates the coming days' and drops the expired
//! ones (`T_published_roll`), when it starts leading and then every hour.

use std::time::{Duration, Instant};

use super::Relay;
use crate::db;

/// How often the leader rolls the partitions. They are made two days ahead, so a roll that
/// fails (a lock it could not get within 200 ms) has many hours of retries before it matters.
const ROLL_EVERY: Duration = Duration::from_secs(3600);
/// After a failed roll, try again this soon.
const ROLL_RETRY: Duration = Duration::from_secs(60);

impl Relay {
    /// Rolls the published rows' partitions when it is due. Never fails the cycle: a roll that
    /// cannot run now is logged and retried.
    pub(super) async fn roll_published_if_due(&mut self) {
        let Some(keep) = self.cfg.published_retention else {
            return;
        };
        if self.next_roll.is_some_and(|at| Instant::now() < at) {
            return;
        }
        match db::roll_published(&self.queries, &self.pool, keep).await {
            Ok(done) => {
                for what in done {
                    tracing::info!("relay: published rows: {what}");
                }
                self.next_roll = Some(Instant::now() + ROLL_EVERY);
            }
            Err(e) => {
                tracing::warn!(error = %e, "relay: cannot roll the published rows' partitions, retrying in a minute");
                self.next_roll = Some(Instant::now() + ROLL_RETRY);
            }
        }
    }

    /// A leader that starts rolls at once.
    pub(super) fn roll_at_once(&mut self) {
        self.next_roll = None;
    }
}
