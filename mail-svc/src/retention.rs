//! Retention: the tables that would grow with every event or action forever are pruned here,
//! periodically, in small index-driven batches (migration 0007 says, table by table, why the
//! others stay bounded).
//!
//! - `mails`: sent mails older than `MAIL_RETENTION` (default 30 days), see
//!   [`db::PRUNE_SENT_SQL`]. Deduplication never needed them: a redelivered event is recognised
//!   by its order's watermark (`order_progress`), which is never pruned; `GetStatus`'s
//!   `processed` keeps counting them (the `pruned` counter). FAILED mails stay until an operator
//!   retries them.
//! - `admin_actions`: audit rows older than `ADMIN_ACTIONS_RETENTION` (default 365 days), see
//!   [`admin_db::prune_admin_actions`].
//!
//! Every instance prunes; `skip locked` lets them share the work without waiting for each other.
//! A prune runs every tenth of the shortest retention, at most every [`MAX_PERIOD`] and at least
//! every [`MIN_PERIOD`], and deletes batch after batch until it has caught up, pausing between
//! batches so that the consumer and the mailers get the database in between.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{admin::db as admin_db, db};

/// The longest wait between two prunes: a prune then deletes about a minute of mails.
pub const MAX_PERIOD: Duration = Duration::from_secs(60);
/// The shortest wait between two prunes (a retention of seconds, in tests).
pub const MIN_PERIOD: Duration = Duration::from_millis(100);
/// The pause between two batches of one prune.
const PAUSE: Duration = Duration::from_millis(10);

/// How long rows are kept (`None`: forever).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Sent mails (MAIL_RETENTION).
    pub mails: Option<Duration>,
    /// Operator audit rows (ADMIN_ACTIONS_RETENTION).
    pub admin_actions: Option<Duration>,
}

impl Retention {
    /// From the settings' durations: zero keeps forever.
    pub fn new(mails: Duration, admin_actions: Duration) -> Self {
        let keep = |d: Duration| (!d.is_zero()).then_some(d);
        Self {
            mails: keep(mails),
            admin_actions: keep(admin_actions),
        }
    }

    /// How often to prune: a tenth of the shortest retention, within [`MIN_PERIOD`] and
    /// [`MAX_PERIOD`]; `None` when nothing is pruned.
    pub fn period(&self) -> Option<Duration> {
        [self.mails, self.admin_actions]
            .into_iter()
            .flatten()
            .min()
            .map(|d| (d / 10).clamp(MIN_PERIOD, MAX_PERIOD))
    }
}

/// Prunes until `shutdown`, every [`Retention::period`]. A failed prune (the database away) is
/// logged and tried again at the next period.
pub async fn run(
    pool: PgPool,
    instance: String,
    retention: Retention,
    shutdown: CancellationToken,
) {
    let Some(period) = retention.period() else {
        return;
    };
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        if let Some(keep) = retention.mails {
            match prune_mails(&pool, &instance, keep, &shutdown).await {
                Ok(p) if p.rows > 0 => tracing::info!(
                    "[mail] pruned {} sent mails older than {} in {:?} ({:.0} rows/s)",
                    p.rows,
                    humantime::format_duration(keep),
                    p.took,
                    p.rows_per_second()
                ),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "[mail] cannot prune sent mails; retrying later")
                }
            }
        }
        if let Some(keep) = retention.admin_actions {
            match prune_admin_actions(&pool, keep, &shutdown).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    "[mail] pruned {n} admin_actions rows older than {}",
                    humantime::format_duration(keep)
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "[mail] cannot prune admin_actions; retrying later")
                }
            }
        }
    }
}

/// What one prune of the mails did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pruned {
    pub rows: i64,
    pub batches: u32,
    pub took: Duration,
}

impl Pruned {
    pub fn rows_per_second(&self) -> f64 {
        self.rows as f64 / self.took.as_secs_f64().max(1e-6)
    }
}

/// Deletes the mails sent longer than `keep` ago, batch after batch ([`db::PRUNE_BATCH`]), each
/// from the cursor the last one left, until a batch comes back short (caught up) or `shutdown`.
pub async fn prune_mails(
    pool: &PgPool,
    instance: &str,
    keep: Duration,
    shutdown: &CancellationToken,
) -> Result<Pruned, sqlx::Error> {
    let started = Instant::now();
    let mut cursor: Option<DateTime<Utc>> = None;
    let mut pruned = Pruned {
        rows: 0,
        batches: 0,
        took: Duration::ZERO,
    };
    loop {
        let (rows, last) = db::prune_sent(pool, instance, keep, cursor, db::PRUNE_BATCH).await?;
        pruned.rows += rows;
        pruned.batches += 1;
        metrics::counter!(crate::metrics::PRUNED_MAILS).increment(rows.max(0) as u64);
        if rows < db::PRUNE_BATCH || shutdown.is_cancelled() {
            break;
        }
        cursor = last.or(cursor);
        tokio::time::sleep(PAUSE).await;
    }
    pruned.took = started.elapsed();
    Ok(pruned)
}

/// Deletes the audit rows older than `keep`, batch after batch.
async fn prune_admin_actions(
    pool: &PgPool,
    keep: Duration,
    shutdown: &CancellationToken,
) -> Result<i64, sqlx::Error> {
    let mut total = 0;
    loop {
        let rows = admin_db::prune_admin_actions(pool, keep, db::PRUNE_BATCH).await?;
        total += rows;
        metrics::counter!(crate::metrics::PRUNED_ADMIN_ACTIONS).increment(rows.max(0) as u64);
        if rows < db::PRUNE_BATCH || shutdown.is_cancelled() {
            return Ok(total);
        }
        tokio::time::sleep(PAUSE).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_follows_the_shortest_retention() {
        let day = Duration::from_secs(86_400);
        let table = [
            (Duration::ZERO, Duration::ZERO, None),
            (30 * day, 365 * day, Some(MAX_PERIOD)),
            (Duration::ZERO, 365 * day, Some(MAX_PERIOD)),
            (
                Duration::from_secs(5),
                365 * day,
                Some(Duration::from_millis(500)),
            ),
            (Duration::from_secs(1), Duration::ZERO, Some(MIN_PERIOD)),
            (Duration::from_millis(200), Duration::ZERO, Some(MIN_PERIOD)),
        ];
        for (mails, admin, period) in table {
            assert_eq!(
                Retention::new(mails, admin).period(),
                period,
                "{mails:?} {admin:?}"
            );
        }
        assert_eq!(
            Retention::new(Duration::ZERO, day),
            Retention {
                mails: None,
                admin_actions: Some(day)
            }
        );
    }
}
