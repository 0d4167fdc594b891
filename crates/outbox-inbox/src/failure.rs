//! What a failed transaction means for the delivery it applied: [`Failure`], and the rule for
//! database errors ([`classify`]).
//!
//! The one rule: a delivery is dead-lettered for a database error only when the event itself
//! caused it (its data); every other error is the database's (an outage, a switchover, overload,
//! a lock or serialisation conflict, a schema a rolling deploy has not finished migrating) and
//! the delivery is tried again after a backoff, unacked, for as long as it takes. Dead-lettering
//! a valid event is the worse mistake: its aggregate's later events are then held forever.
//!
//! | SQLSTATE / error | meaning | [`Failure`] |
//! |---|---|---|
//! | class `22` (data exception) | a value the event supplied does not fit (too long, out of range, invalid bytes) | `Poison` |
//! | `23505` unique, `23514` check, `23P01` exclusion | the event's values collide with stored data | `Poison` |
//! | `23502` not null, `23503` foreign key, `23001`, `23000` | the schema and the code disagree (a column or reference it does not fill) | `Transient` |
//! | `25006` read-only transaction, `25P03` idle-session timeout | this session is unusable (a standby, a switchover): close it | `Reconnect` |
//! | class `08`, `57P01`..`57P05` | connection lost, server shutting down or starting | `Reconnect` |
//! | `53*` resources, `57014` statement timeout, `40001`/`40P01` serialisation/deadlock, `55P03` lock not available, `58*`, `XX*`, `42*` (a deploy mid-migration), anything else | the database, not the event | `Transient` |
//! | IO, TLS (a broken socket) | the connection is gone | `Reconnect` |
//! | pool timeout or closed, worker crash, protocol, decode, encode, row not found | not the event's data | `Transient` |

/// What to do with a delivery whose transaction failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The event's own data caused it: the same event fails the same way every time.
    /// Dead-letter it.
    Poison,
    /// Try again after a backoff, without limit.
    Transient,
    /// Try again after a backoff, without limit, on a fresh connection: this one is unusable
    /// (e.g. read-only after a switchover, and it would stay so). Close it rather than hand it
    /// back to the pool.
    Reconnect,
}

/// Classifies a database error (see the [module table](self)).
pub fn classify(err: &sqlx::Error) -> Failure {
    match err {
        sqlx::Error::Database(e) => e
            .code()
            .map_or(Failure::Transient, |c| classify_sqlstate(&c)),
        // A broken socket: the connection is gone.
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) => Failure::Reconnect,
        // The pool exhausted or closing, a protocol or decode error (a column of an unexpected
        // type: a deploy mid-migration), an encode error (a bug, not the event): trying again
        // keeps the event, and the error is logged until someone fixes the cause.
        _ => Failure::Transient,
    }
}

/// Classifies a SQLSTATE (see the [module table](self)).
pub fn classify_sqlstate(code: &str) -> Failure {
    match code {
        "23505" | "23514" | "23P01" => Failure::Poison,
        "25006" | "25P03" => Failure::Reconnect,
        c if c.starts_with("22") => Failure::Poison,
        c if c.starts_with("08") || c.starts_with("57P") => Failure::Reconnect,
        _ => Failure::Transient,
    }
}

/// The SQLSTATE of a database error, for log lines.
pub fn sqlstate(err: &sqlx::Error) -> Option<String> {
    match err {
        sqlx::Error::Database(e) => e.code().map(|c| c.into_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{Failure::*, *};

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
            // The session is unusable: try again on another connection.
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
