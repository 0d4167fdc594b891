//! Bounding one database step: what a socket gone silent would otherwise hold for the kernel's
//! TCP timeout. What a failed step means for an event (dead-lettered only when its own data
//! caused it; otherwise tried again, on a fresh connection when this one is unusable) is the
//! `outbox-inbox` crate's rule, `outbox_inbox::failure`, which the consumer applies.

use std::time::Duration;

/// Bounds one database attempt: no answer within `limit` is an IO error (the connection is
/// counted as dead: `outbox_inbox::failure::Failure::Reconnect`). A socket gone silent (a firewall, a NAT) gives no
/// error at all; only this frees the attempt, whose connection the pool then closes.
pub async fn within<T, E: From<sqlx::Error>>(
    limit: Duration,
    attempt: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    tokio::time::timeout(limit, attempt)
        .await
        .unwrap_or_else(|_| {
            Err(E::from(sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer from the database within {limit:?}"),
            ))))
        })
}
