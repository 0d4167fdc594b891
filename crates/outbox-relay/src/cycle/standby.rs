//! Standing by until the leader lock is this instance's (see [`crate::lease`]).

use std::time::Duration;

use sqlx::PgConnection;

use super::{DB_TIMEOUT, Relay};
use crate::{
    db,
    lease::{self, Attempt},
};

impl Relay {
    /// Returns the connection holding the lock, or `None` on shutdown. Paces the attempts of
    /// [`lease::try_acquire`]: a standby looks again every `STANDBY_RETRY`, an unreachable
    /// database backs off.
    pub(super) async fn acquire_lock(&mut self) -> Option<PgConnection> {
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
}
