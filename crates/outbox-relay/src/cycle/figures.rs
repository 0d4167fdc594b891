//! The backlog figures: counted when the outbox is not simply empty, at most every
//! [`BACKLOG_REFRESH`] under a steady stream.

use std::time::{Duration, Instant};

use sqlx::PgPool;

use super::Relay;
use crate::{
    db::{self, Queries},
    error::Error,
};

/// Under a steady stream of full batches, refresh the backlog figures at most this often.
const BACKLOG_REFRESH: Duration = Duration::from_millis(500);

impl Relay {
    /// When the figures, skipped after a batch that drained the outbox, are next due: an idle
    /// relay wakes up for them.
    pub(super) fn figures_due_at(&self) -> Option<Instant> {
        if !self.figures_stale {
            return None;
        }
        Some(
            self.last_backlog_refresh
                .map_or_else(Instant::now, |t| t + BACKLOG_REFRESH),
        )
    }

    /// Whether the periodic backlog figures are due (at most every [`BACKLOG_REFRESH`]).
    pub(super) fn backlog_due(&self) -> bool {
        self.last_backlog_refresh
            .is_none_or(|t| t.elapsed() >= BACKLOG_REFRESH)
    }

    pub(super) fn set_backlog(&mut self, (backlog, quarantined): (db::Backlog, u64)) {
        self.status.set_backlog(backlog);
        self.status.set_quarantined(quarantined);
        self.last_backlog_refresh = Some(Instant::now());
        self.figures_stale = false;
    }

    /// Updates the backlog figures (always when `force`, else at most every
    /// [`BACKLOG_REFRESH`]), and the quarantine count with them.
    pub(super) async fn refresh_backlog(&mut self, force: bool) -> Result<(), Error> {
        if !force && !self.backlog_due() {
            return Ok(());
        }
        let figures = backlog_figures(&self.queries, &self.pool).await?;
        self.set_backlog(figures);
        Ok(())
    }
}

/// The backlog and the quarantine count.
pub(super) async fn backlog_figures(
    q: &Queries,
    pool: &PgPool,
) -> Result<(db::Backlog, u64), Error> {
    Ok((db::backlog(q, pool).await?, db::quarantined(q, pool).await?))
}
