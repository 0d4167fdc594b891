//! What a failed mail's verdict writes in the round's transaction: FAILED for good, deferred on
//! the mail's own retry schedule ([`retry_delay`]), or nothing (the session's fault), with the
//! log line and the counter of each outcome.

use std::time::Duration;

use rand::Rng;

use super::{
    Mailer,
    failure::{SendFailure, Verdict},
};
use crate::db::{self, MailRow};

/// A deferred mail's first retry; each further deferral doubles it, up to [`RETRY_MAX`].
const RETRY_MIN: Duration = Duration::from_secs(1);

/// The longest wait between two attempts of one deferred mail. Deferred mails are retried until
/// the server accepts or rejects them for good (the mail blocks only its own order meanwhile).
const RETRY_MAX: Duration = Duration::from_secs(600);

/// How long a mail waits after its `attempts`-th deferral: `RETRY_MIN` doubling up to
/// `RETRY_MAX`, drawn from the upper half of the step so that many mails deferred together
/// do not come due together.
pub fn retry_delay(attempts: i32) -> Duration {
    let step = RETRY_MIN
        .saturating_mul(2u32.saturating_pow(attempts.clamp(1, 31) as u32 - 1))
        .min(RETRY_MAX);
    let half = step / 2;
    half + Duration::from_millis(rand::rng().random_range(0..=half.as_millis() as u64))
}

impl Mailer {
    /// Records a failed mail in the round's transaction according to `verdict`, whose failure it
    /// is. Returns true when the server refused the session (the round stops).
    pub(super) async fn record_failure(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
        m: &MailRow,
        failure: &SendFailure,
        verdict: Verdict,
    ) -> anyhow::Result<bool> {
        match verdict {
            Verdict::Permanent => {
                db::mark_failed(tx, m, &failure.error).await?;
                metrics::counter!(crate::metrics::FAILED).increment(1);
                tracing::error!(
                    "[mail] failed seq={} order={} to={}: {}",
                    m.seq,
                    m.order_id,
                    m.recipient,
                    failure.error
                );
                Ok(false)
            }
            Verdict::Defer => {
                let (attempts, delay) = defer(tx, m, failure).await?;
                tracing::warn!(
                    "[mail] deferred seq={} order={} to={} attempt={attempts}, next in {delay:?}: {}",
                    m.seq,
                    m.order_id,
                    m.recipient,
                    failure.error
                );
                Ok(false)
            }
            Verdict::Session if failure.stage.is_mails_own() => {
                // A session-level reply inside the mail's own transaction (e.g. "relay access
                // denied" at RCPT). Most likely nobody can be sent, but should it concern only
                // this mail, the circuit's next probe must not pick it again and stop everyone:
                // defer it as well.
                defer(tx, m, failure).await?;
                Ok(true)
            }
            // Not this mail's fault: leave it exactly as it was.
            Verdict::Session => Ok(true),
        }
    }
}

/// Defers a mail the server refused for now, on its own retry schedule.
async fn defer(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    m: &MailRow,
    failure: &SendFailure,
) -> anyhow::Result<(i32, Duration)> {
    let attempts = m.attempts.saturating_add(1);
    let delay = retry_delay(attempts);
    db::mark_deferred(tx, m, &failure.error, delay).await?;
    metrics::counter!(crate::metrics::DEFERRED).increment(1);
    Ok((attempts, delay))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_double_then_cap() {
        for (attempts, low, high) in [
            (1, 500, 1_000),
            (2, 1_000, 2_000),
            (3, 2_000, 4_000),
            (10, 256_000, 512_000),
            (11, 300_000, 600_000),
            (1_000, 300_000, 600_000),
        ] {
            for _ in 0..20 {
                let d = retry_delay(attempts).as_millis();
                assert!(
                    (low..=high).contains(&d),
                    "attempt {attempts}: {d} ms not in {low}..={high}"
                );
            }
        }
    }
}
