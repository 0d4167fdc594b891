//! The delete of a confirmed batch, in the background while the next batch is published, and
//! the retries of one that failed.

use sqlx::PgPool;
use tokio::task::JoinHandle;

use super::{Relay, log::seq_ranges};
use crate::{
    db::{self, Queries},
    error::Error,
};

/// Seqs a delete did not remove (empty when it succeeded), and why.
pub(super) type Undeleted = (Vec<i64>, Option<Error>);

/// At most this many batches' worth of confirmed seqs may wait for a failing delete; beyond it
/// the relay stops reading (a failure of the database as a whole) until a delete succeeds.
pub(super) const UNDELETED_BATCHES: usize = 8;

impl Relay {
    /// Waits for the background delete and deletes again what failed before. A delete that
    /// fails again leaves its seqs out of reads; beyond [`UNDELETED_BATCHES`] batches of them
    /// the relay stops reading until the database takes them.
    pub(super) async fn finish_deletes(&mut self) -> Result<(), Error> {
        let deleting = self.deleting.take();
        let error = settle_deletes(&self.queries, &self.pool, deleting, &mut self.undeleted).await;
        match error {
            // Another instance owns the database now: stop, nothing of ours may take effect.
            Some(e @ Error::Fenced { .. }) => Err(e),
            Some(e) if self.undeleted.len() > UNDELETED_BATCHES * self.cfg.batch_size as usize => {
                Err(e)
            }
            _ => Ok(()),
        }
    }
}

/// Waits for `deleting` (adding what it could not delete to `undeleted`), then deletes
/// `undeleted` again in one statement. Returns the error of a delete that failed; its seqs stay
/// in `undeleted`.
pub(super) async fn settle_deletes(
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
