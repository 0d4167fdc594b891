//! The relay's one error type.

use std::time::Duration;

/// Everything a relay cycle, or a [`replay`](crate::replay), can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The writer has not created the outbox (or its quarantine) yet; the relay waits for it.
    #[error("the outbox tables do not exist yet (is the writing service migrated?)")]
    OutboxMissing,
    /// The broker connection or channel failed (refused, dropped, closed by the broker).
    #[error("broker: {0}")]
    Broker(#[from] lapin::Error),
    /// A wave was not sent and confirmed in time (confirms missing, or the broker not reading:
    /// flow control, a stalled network): the connection is treated as broken.
    #[error("broker did not take and confirm the wave within {0:?}")]
    ConfirmTimeout(Duration),
    /// `AMQP_URL` cannot be read (checked at startup, so only a bug gets here).
    #[error("AMQP_URL: {0}")]
    BadUrl(String),
    /// Connecting to the broker did not finish in time.
    #[error("broker connect timed out after {0:?}")]
    ConnectTimeout(Duration),
    /// The broker connection broke during a batch: some events got no answer; they stay in the
    /// outbox. (Returned, nacked and unreadable rows are per-order matters, not errors.)
    #[error("{undelivered} of {attempted} events not delivered ({reason})")]
    Undelivered {
        /// Events without an answer.
        undelivered: usize,
        /// Events of the batch.
        attempted: usize,
        /// What broke.
        reason: String,
    },
    /// A database step did not finish in time (a stalled server or network).
    #[error("{what} did not finish within {after:?}")]
    DbTimeout {
        /// The step.
        what: &'static str,
        /// The limit.
        after: Duration,
    },
    /// A replay found no published row of the aggregate in the range: never published, or
    /// older than the retention window (`Settings::published_retention`).
    #[error("nothing in the retention window: no published event of {aggregate}{range}")]
    NothingToReplay {
        /// `<aggregate_type> <aggregate_id>`.
        aggregate: String,
        /// ` with seqs <from> to <to>`, or empty for every seq.
        range: String,
    },
    /// A replay's target queue does not exist; nothing was published.
    #[error("queue {0:?} does not exist (nothing replayed): check the name, or declare it first")]
    QueueMissing(String),
    /// A replayed message was not delivered to the queue (returned, nacked, or refused by the
    /// encoder); the ones before it were, the ones after it were not sent.
    #[error("seq {seq} was not replayed ({why}); replayed before it: {replayed:?}")]
    ReplayRefused {
        /// The seq that failed.
        seq: i64,
        /// What the broker (or the encoder) said.
        why: String,
        /// The seqs delivered before it, in order.
        replayed: Vec<i64>,
    },
    /// A fleet relay's delete or quarantine move changed nothing: the outbox database's fence
    /// holds a newer epoch than this instance's lease (another instance owns the database now;
    /// see `fleet::fence`). The relay stops at once.
    #[error("fenced: the outbox database's fence has moved past this relay's epoch {epoch}")]
    Fenced {
        /// The epoch this relay held.
        epoch: i64,
    },
    /// The database failed.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl Error {
    /// Maps sqlx's "undefined table" to [`Error::OutboxMissing`].
    pub fn from_db(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::Database(e) if e.code().as_deref() == Some("42P01") => {
                Error::OutboxMissing
            }
            _ => Error::Db(err),
        }
    }
}
