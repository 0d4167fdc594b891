//! Replay to one consumer: the published events of one aggregate (kept in `T_published` for
//! the retention window), sent again to one queue and no other.
//!
//! Each row becomes the message the relay sent (the same [`Encoder`]: body, properties, chain
//! headers) plus [`wire::HEADER_REPLAY`], published through the default exchange with the queue
//! as routing key: the other bindings of the events exchange never see it, and with `mandatory`
//! a queue deleted meanwhile is a return, not a silent drop. Messages go one at a time, each
//! confirmed before the next, so they arrive in seq order and a failure names the first seq that
//! did not arrive (the ones before it did). The outbox itself is not touched.
//!
//! A consumer that dedupes by seq (an inbox) skips what it already handled: a replay fills the
//! holes of a consumer that lost messages (a purged queue) or serves one that rebuilt its state.

use std::time::Duration;

use lapin::types::AMQPValue;
use outbox::{TableName, wire};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{
    db,
    error::Error,
    publisher::{self, Encoder, Outcome, Outgoing, Publisher},
};

/// What to replay, and to which queue. [`Replay::new`] replays every kept event of the
/// aggregate; set `from_seq` / `to_seq` to narrow it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Replay {
    /// The aggregate's type (`order` for orders-svc).
    pub aggregate_type: String,
    /// The aggregate's id.
    pub aggregate_id: i64,
    /// The first seq to replay (inclusive); `None`: from the first kept.
    pub from_seq: Option<i64>,
    /// The last seq to replay (inclusive); `None`: to the last kept.
    pub to_seq: Option<i64>,
    /// The one queue that receives the messages.
    pub queue: String,
    /// How long each message may take to be confirmed (default
    /// [`DEFAULT_CONFIRM_TIMEOUT`](crate::DEFAULT_CONFIRM_TIMEOUT), the relay's).
    pub confirm_timeout: Duration,
}

impl Replay {
    /// Every kept event of aggregate (`aggregate_type`, `aggregate_id`), to `queue`.
    pub fn new(
        aggregate_type: impl Into<String>,
        aggregate_id: i64,
        queue: impl Into<String>,
    ) -> Self {
        Self {
            aggregate_type: aggregate_type.into(),
            aggregate_id,
            from_seq: None,
            to_seq: None,
            queue: queue.into(),
            confirm_timeout: publisher::DEFAULT_CONFIRM_TIMEOUT,
        }
    }

    /// Reads the aggregate's published rows of outbox `table` in the range, encodes them with
    /// `encoder` (as the relay did), checks the queue exists, and publishes them on `publisher`
    /// to the queue only, in seq order, each confirmed. Returns the seqs replayed.
    ///
    /// Errors: [`Error::NothingToReplay`] when no row is kept in the range,
    /// [`Error::QueueMissing`] (nothing published), [`Error::ReplayRefused`] naming the first seq
    /// not delivered, and the broker's and database's own.
    pub async fn run(
        &self,
        pool: &PgPool,
        table: &TableName,
        publisher: &Publisher,
        encoder: &dyn Encoder,
    ) -> Result<Vec<i64>, Error> {
        self.prepare(pool, table, publisher, encoder)
            .await?
            .send(publisher)
            .await
    }

    /// [`Replay::run`] up to its first message: reads and encodes the rows and checks the queue
    /// exists, sending nothing. The caller learns which seqs [`Prepared::send`] would send, so it
    /// can record them first (an operator's replay writes its audit row before anything leaves:
    /// a broker and a database cannot commit together, and a send must never go unrecorded).
    ///
    /// Errors: as [`Replay::run`]'s before its first message.
    pub async fn prepare(
        &self,
        pool: &PgPool,
        table: &TableName,
        publisher: &Publisher,
        encoder: &dyn Encoder,
    ) -> Result<Prepared, Error> {
        let range = (
            self.from_seq.unwrap_or(i64::MIN),
            self.to_seq.unwrap_or(i64::MAX),
        );
        let rows =
            db::published_of(table, pool, &self.aggregate_type, self.aggregate_id, range).await?;
        if rows.is_empty() {
            return Err(self.nothing_kept());
        }
        // Every message made before anything is sent: a row the encoder refuses now stops the
        // replay before its first message, not half-way.
        let messages = rows
            .iter()
            .map(|row| {
                let message = encoder.encode(row).map_err(|why| Error::ReplayRefused {
                    seq: row.seq,
                    why: format!("the encoder refuses it: {why}"),
                    replayed: Vec::new(),
                })?;
                Ok(self.to_queue(message))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        if !publisher.queue_exists(&self.queue).await? {
            return Err(Error::QueueMissing(self.queue.clone()));
        }
        Ok(Prepared {
            queue: self.queue.clone(),
            confirm_timeout: self.confirm_timeout,
            messages,
        })
    }
}

/// A replay read, encoded and addressed ([`Replay::prepare`]), nothing sent yet.
#[derive(Debug)]
pub struct Prepared {
    queue: String,
    confirm_timeout: Duration,
    messages: Vec<Outgoing>,
}

impl Prepared {
    /// The seqs [`Prepared::send`] sends, in order.
    pub fn seqs(&self) -> Vec<i64> {
        self.messages.iter().map(|m| m.seq).collect()
    }

    /// Publishes the messages on `publisher` to the queue only, in seq order, each confirmed
    /// before the next. Returns the seqs replayed; [`Error::ReplayRefused`] names the first seq
    /// not delivered and those delivered before it.
    pub async fn send(self, publisher: &Publisher) -> Result<Vec<i64>, Error> {
        // Nothing cancels an operator's replay half-way but its own time-out.
        let never = CancellationToken::new();
        let mut replayed = Vec::with_capacity(self.messages.len());
        for message in &self.messages {
            let outcome = match publisher
                .publish_to_queue(&[message], self.confirm_timeout, &never)
                .await
            {
                Ok(outcome) => outcome,
                // The broker failed as a whole: as it is before the first message, with what
                // was sent after it (the caller records that).
                Err(e) if replayed.is_empty() => return Err(e),
                Err(e) => {
                    return Err(Error::ReplayRefused {
                        seq: message.seq,
                        why: e.to_string(),
                        replayed,
                    });
                }
            };
            match outcome.first() {
                Some(Outcome::Delivered) => replayed.push(message.seq),
                other => {
                    return Err(Error::ReplayRefused {
                        seq: message.seq,
                        why: match other {
                            Some(Outcome::Returned { reply_text, .. }) => {
                                format!("returned by the broker: {reply_text}")
                            }
                            Some(Outcome::Nacked) => "nacked by the broker".into(),
                            Some(Outcome::Failed(e)) => e.clone(),
                            _ => "no answer".into(),
                        },
                        replayed,
                    });
                }
            }
            tracing::info!(
                seq = message.seq,
                queue = %self.queue,
                "replayed seq={} to queue {}",
                message.seq,
                self.queue
            );
        }
        Ok(replayed)
    }
}

impl Replay {
    /// The relay's message for the row, marked as a replay and addressed to the queue (through
    /// the default exchange, whose routing key is a queue name).
    fn to_queue(&self, mut message: Outgoing) -> Outgoing {
        let mut headers = message.properties.headers().clone().unwrap_or_default();
        headers.insert(
            wire::HEADER_REPLAY.into(),
            AMQPValue::LongString("true".into()),
        );
        message.properties = message.properties.with_headers(headers);
        message.routing_key = self.queue.clone();
        message
    }

    fn nothing_kept(&self) -> Error {
        let range = match (self.from_seq, self.to_seq) {
            (None, None) => String::new(),
            (Some(from), None) => format!(" with seqs from {from}"),
            (None, Some(to)) => format!(" with seqs up to {to}"),
            (Some(from), Some(to)) => format!(" with seqs {from} to {to}"),
        };
        Error::NothingToReplay {
            aggregate: format!("{} {}", self.aggregate_type, self.aggregate_id),
            range,
        }
    }
}
