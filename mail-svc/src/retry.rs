//! What a database error means for the event being processed, and the retry loop that acts on it.
//!
//! The one rule: an event is dead-lettered for a database error only when the event itself caused
//! it (its data); every other error is the database's (an outage, a switchover, overload, a lock
//! or serialisation conflict, a schema a rolling deploy has not finished migrating) and the
//! delivery is retried with capped backoff, unacked, for as long as it takes. Dead-lettering a
//! valid event is the worse mistake: its order's later events are then held forever.
//!
//! | SQLSTATE / error | meaning | [`Failure`] |
//! |---|---|---|
//! | class `22` (data exception) | a value the event supplied does not fit (too long, out of range, invalid bytes) | `Poison` |
//! | `23505` unique, `23514` check, `23P01` exclusion | the event's values collide with stored data | `Poison` |
//! | `23502` not null, `23503` foreign key, `23001`, `23000` | the schema and this code disagree (a column or reference it does not fill) | `Transient` |
//! | `25006` read-only transaction, `25P03` idle-session timeout | this session is unusable (a standby, a switchover): close it | `Reconnect` |
//! | class `08`, `57P01`..`57P05` | connection lost, server shutting down or starting | `Reconnect` |
//! | `53*` resources (`53300` too many connections, `53100` disk full), `57014` statement timeout, `40001`/`40P01` serialisation/deadlock, `55P03` lock not available, `58*`, `XX*`, `42*` (a deploy mid-migration), anything else | the database, not the event | `Transient` |
//! | IO, TLS (a broken socket) | the connection is gone | `Reconnect` |
//! | pool timeout or closed, worker crash, protocol, decode, encode, row not found | not the event's data | `Transient` |
//!
//! Chain conflicts (an event that contradicts its order's chain) are not SQL errors: the decision
//! table in [`crate::process`] finds them and the event is dead-lettered from there. Inserts that
//! could collide on a seq use `on conflict do nothing`, so no SQLSTATE `23` is raised for them
//! today; the `Poison` rows above keep the rule right if a constraint on event values is added.

use std::time::Duration;

use outbox_support::backoff::Backoff;
use tokio_util::sync::CancellationToken;

/// What to do with a delivery whose transaction failed with a database error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The event's own data caused it: the same event fails the same way every time.
    /// Dead-letter it.
    Poison,
    /// Retry with backoff, without limit.
    Transient,
    /// Retry with backoff, without limit, on a fresh connection: this one is unusable (e.g. it is
    /// read-only after a switchover and would stay so).
    Reconnect,
}

/// An error the retry loop can judge.
pub trait Retry: std::fmt::Display {
    /// What to do about it.
    fn failure(&self) -> Failure;
    /// Its SQLSTATE, when the database raised it (for the log line).
    fn sqlstate(&self) -> Option<String> {
        None
    }
}

impl Retry for sqlx::Error {
    fn failure(&self) -> Failure {
        classify(self)
    }
    fn sqlstate(&self) -> Option<String> {
        match self {
            sqlx::Error::Database(e) => e.code().map(|c| c.into_owned()),
            _ => None,
        }
    }
}

/// Classifies `err` (see the module table).
pub fn classify(err: &sqlx::Error) -> Failure {
    match err {
        sqlx::Error::Database(e) => e
            .code()
            .map_or(Failure::Transient, |c| classify_sqlstate(&c)),
        // A broken socket: the connection is gone.
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) => Failure::Reconnect,
        // The server unreachable, the pool exhausted or closing: the database.
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => {
            Failure::Transient
        }
        // Protocol, decode (a column of an
        // unexpected type: a deploy mid-migration), encode (our parameters are integers, text and
        // bytes; failing to encode them is a bug, not the event): retrying keeps the event, and
        // the error is logged until someone fixes the cause.
        _ => Failure::Transient,
    }
}

/// Classifies a SQLSTATE (see the module table).
pub fn classify_sqlstate(code: &str) -> Failure {
    match code {
        "23505" | "23514" | "23P01" => Failure::Poison,
        "25006" | "25P03" => Failure::Reconnect,
        c if c.starts_with("22") => Failure::Poison,
        c if c.starts_with("08") || c.starts_with("57P") => Failure::Reconnect,
        _ => Failure::Transient,
    }
}

/// Bounds one database attempt: no answer within `limit` is an IO error (the connection is
/// counted as dead: [`Failure::Reconnect`]). A socket gone silent (a firewall, a NAT) gives no
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

/// The shortest and longest wait between attempts at one delivery. The cap keeps recovery after
/// an outage within seconds; the growth keeps a long outage from costing more than a few attempts
/// per delivery per cap interval (no busy loop).
pub const BACKOFF_MIN: Duration = Duration::from_millis(100);
pub const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Runs `op` until it succeeds or fails with [`Failure::Poison`] (returned as `Some(Err)`),
/// waiting with capped backoff between attempts (each one counted in `mail_db_retries_total`). `None` when shutdown came first: nothing was
/// committed by this call, and the caller leaves the delivery unacked.
pub async fn until_done<T, E, F, Fut>(
    shutdown: &CancellationToken,
    what: &str,
    mut op: F,
) -> Option<Result<T, E>>
where
    E: Retry,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut backoff = Backoff::new(BACKOFF_MIN, BACKOFF_MAX);
    loop {
        if shutdown.is_cancelled() {
            return None;
        }
        let err = match op().await {
            Ok(v) => return Some(Ok(v)),
            Err(e) => e,
        };
        let failure = err.failure();
        if failure == Failure::Poison {
            return Some(Err(err));
        }
        metrics::counter!(crate::metrics::DB_RETRIES).increment(1);
        let delay = backoff.next_delay();
        let code = err.sqlstate();
        tracing::warn!(
            error = %err,
            sqlstate = code.as_deref().unwrap_or("-"),
            attempt = backoff.failures(),
            "[mail] {what}: database error ({failure:?}); retrying in {delay:?}"
        );
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Failure::*;

    #[test]
    fn sqlstate_table() {
        for (code, want) in [
            // The event's data.
            ("22001", Poison), // string data right truncation
            ("22003", Poison), // numeric value out of range
            ("22021", Poison), // invalid byte sequence (a NUL in text)
            ("22P02", Poison), // invalid text representation
            ("23505", Poison), // unique violation
            ("23514", Poison), // check violation
            ("23P01", Poison), // exclusion violation
            // The schema and the code disagree: wait for the deploy to finish.
            ("23502", Transient), // not null violation
            ("23503", Transient), // foreign key violation
            ("23000", Transient),
            ("23001", Transient),
            ("42P01", Transient), // undefined table
            ("42703", Transient), // undefined column
            // The session is unusable: retry on another connection.
            ("25006", Reconnect), // read-only transaction (a standby, a switchover)
            ("25P03", Reconnect), // idle-in-transaction timeout
            ("08000", Reconnect),
            ("08006", Reconnect), // connection failure
            ("57P01", Reconnect), // admin shutdown (pg_terminate_backend)
            ("57P02", Reconnect),
            ("57P03", Reconnect), // cannot connect now
            // The database, not the event.
            ("53300", Transient), // too many connections
            ("53100", Transient), // disk full
            ("53200", Transient), // out of memory
            ("57014", Transient), // statement timeout / cancel
            ("40001", Transient), // serialization failure
            ("40P01", Transient), // deadlock
            ("55P03", Transient), // lock not available
            ("58030", Transient), // IO error
            ("XX000", Transient), // internal error
            ("0A000", Transient),
            ("", Transient),
        ] {
            assert_eq!(classify_sqlstate(code), want, "{code}");
        }
    }

    #[test]
    fn driver_errors_are_never_poison() {
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert_eq!(classify(&io), Reconnect);
        assert_eq!(classify(&sqlx::Error::PoolTimedOut), Transient);
        assert_eq!(classify(&sqlx::Error::PoolClosed), Transient);
        assert_eq!(classify(&sqlx::Error::WorkerCrashed), Transient);
        assert_eq!(
            classify(&sqlx::Error::Protocol("corrupt".into())),
            Transient
        );
        assert_eq!(classify(&sqlx::Error::RowNotFound), Transient);
    }
}
