//! The stuck-hold watch: a loop of its own beside the delivery loops, which keeps the held and
//! unsent gauges fresh and warns when an event has waited too long for its predecessor.

use std::time::Duration;

use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::db;

/// The stuck-hold watch: refreshes the gauges and warns while the oldest held event is older
/// than `alert` (its predecessor may be lost: dead-lettered, or never published).
pub async fn watch_holds(
    pool: PgPool,
    alert: Duration,
    db_step_timeout: Duration,
    shutdown: CancellationToken,
) {
    let period = (alert / 2).clamp(Duration::from_millis(200), Duration::from_secs(5));
    let mut last_warning: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        let stats = match crate::retry::within(db_step_timeout, db::stats(&pool)).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the hold statistics");
                continue;
            }
        };
        metrics::gauge!(crate::metrics::HELD_EVENTS).set(stats.held as f64);
        metrics::gauge!(crate::metrics::UNSENT_MAILS).set(stats.unsent as f64);
        metrics::gauge!(crate::metrics::OLDEST_HELD_AGE)
            .set(stats.oldest_held_age_ms as f64 / 1000.0);
        let stuck = Duration::from_millis(stats.oldest_held_age_ms.max(0) as u64) > alert;
        // Warn once per alert period while it lasts, not at every check.
        let due = last_warning.is_none_or(|t| t.elapsed() >= alert);
        if stuck
            && due
            && let Ok(Some((seq, order, prev, age_ms))) =
                crate::retry::within(db_step_timeout, db::oldest_held(&pool)).await
        {
            tracing::warn!(
                held = stats.held,
                "[mail] held seq={seq} order={order} for {}s (waiting for seq={prev})",
                age_ms / 1000
            );
            last_warning = Some(tokio::time::Instant::now());
        }
        if !stuck {
            last_warning = None;
        }
    }
}
