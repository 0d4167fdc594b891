//! `Replay`: an order's published events sent again to one queue ([`outbox_relay::replay`]),
//! over a broker connection of its own made with the relay's settings (AMQP_URL with failover,
//! TLS, heartbeat), and recorded in the shard's `admin_actions`.
//!
//! Recorded before it acts: a broker and a database cannot commit together, so the audit row is
//! written (and committed) with the seqs about to be sent once they are read and the queue found,
//! and only then is anything published; a row that cannot be written stops the replay with
//! nothing sent. After the publish the row is completed with what was sent (fewer seqs when the
//! broker failed half-way) and the error; should that update fail, the row still names every seq
//! that may have been sent.

use outbox_kit::admin as kit;
use outbox_proto::relay::admin::v1::ReplayRequest;
use outbox_relay::{EnvelopeEncoder, Publisher, Replay, Settings, error::Error};
use outbox_support::failover::Failover;
use serde_json::json;
use sqlx::PgPool;
use tonic::Status;

use crate::error::grpc_status;

/// The aggregate type of orders-svc's events.
pub const AGGREGATE_TYPE: &str = "order";

/// The audit row's `action`.
const ACTION: &str = "Replay";

/// The longest queue name AMQP allows (a short string).
const MAX_QUEUE_BYTES: usize = 255;

/// How a replay reaches the broker: the relay's own settings.
#[derive(Debug)]
pub struct Broker {
    /// Shared by every call: a connect moves on from the node last used.
    failover: Failover,
    settings: Settings,
}

impl Broker {
    /// The broker of the relay's `settings`.
    pub fn new(settings: &Settings) -> Self {
        Self {
            failover: Failover::new(settings.amqp_url.clone()),
            settings: settings.clone(),
        }
    }

    /// A confirm-mode connection to the first broker address that answers, closed by the
    /// caller.
    async fn connect(&self) -> Result<Publisher, Error> {
        let s = &self.settings;
        let (publisher, _) = self
            .failover
            .connect(|url| {
                Publisher::connect(
                    url,
                    &s.amqp_tls,
                    s.amqp_heartbeat,
                    &s.amqp_exchange,
                    s.confirm_timeout,
                    |_| {},
                )
            })
            .await?;
        Ok(publisher)
    }
}

/// A checked request: every field named when it is wrong.
pub fn checked(r: &ReplayRequest) -> Result<(Replay, String), Status> {
    let order_id = match kit::order_id(r.order_id)? {
        Some(id) => id,
        None => return Err(Status::invalid_argument("order_id: required")),
    };
    let queue = r.queue.trim();
    if queue.is_empty() {
        return Err(Status::invalid_argument(
            "queue: required (the one queue that receives the events)",
        ));
    }
    if queue.len() > MAX_QUEUE_BYTES {
        return Err(Status::invalid_argument(format!(
            "queue: at most {MAX_QUEUE_BYTES} bytes"
        )));
    }
    // A queue name goes to the broker and into the audit row: plain text only.
    if let Some(c) = queue.chars().find(|c| c.is_control()) {
        return Err(Status::invalid_argument(format!(
            "queue: control character {c:?} in the name"
        )));
    }
    let seq = |field: &str, v: i64| match v {
        0 => Ok(None),
        v if v > 0 => Ok(Some(v)),
        v => Err(Status::invalid_argument(format!(
            "{field}: {v} is not a seq (0: no bound)"
        ))),
    };
    let (from_seq, to_seq) = (seq("from_seq", r.from_seq)?, seq("to_seq", r.to_seq)?);
    if let (Some(from), Some(to)) = (from_seq, to_seq)
        && from > to
    {
        return Err(Status::invalid_argument(format!(
            "from_seq: {from} is after to_seq: {to}"
        )));
    }
    let reason = kit::reason(&r.reason)?;
    let mut replay = Replay::new(AGGREGATE_TYPE, order_id, queue);
    replay.from_seq = from_seq;
    replay.to_seq = to_seq;
    Ok((replay, reason))
}

/// Runs `replay` of the outbox `table` in `pool` (a shard's database), recorded there first (see
/// the module docs). Returns the seqs sent.
pub async fn run(
    broker: &Broker,
    pool: &PgPool,
    replay: &Replay,
    reason: &str,
    operator: Option<&str>,
) -> Result<Vec<i64>, Status> {
    let mut replay = replay.clone();
    replay.confirm_timeout = broker.settings.confirm_timeout;
    let publisher = broker.connect().await.map_err(grpc_status)?;
    let result = recorded(broker, pool, &replay, &publisher, reason, operator).await;
    publisher.close().await;
    result
}

async fn recorded(
    broker: &Broker,
    pool: &PgPool,
    replay: &Replay,
    publisher: &Publisher,
    reason: &str,
    operator: Option<&str>,
) -> Result<Vec<i64>, Status> {
    let prepared = replay
        .prepare(pool, &broker.settings.table, publisher, &EnvelopeEncoder)
        .await
        .map_err(grpc_status)?;
    let planned = prepared.seqs();
    let detail = json!({
        "order_id": replay.aggregate_id,
        "queue": replay.queue,
        "from_seq": replay.from_seq,
        "to_seq": replay.to_seq,
        "planned": planned,
    });
    let id = record(pool, &planned, reason, operator, detail)
        .await
        .map_err(|e| {
            tracing::error!(
                error = %e, seqs = ?planned, queue = %replay.queue, operator, reason,
                "[admin] replay not sent: its audit row could not be written"
            );
            grpc_status(e)
        })?;
    let (sent, failed) = match prepared.send(publisher).await {
        Ok(seqs) => (seqs, None),
        Err(Error::ReplayRefused { seq, why, replayed }) => {
            let sent = replayed.clone();
            (sent, Some(Error::ReplayRefused { seq, why, replayed }))
        }
        Err(e) => (Vec::new(), Some(e)),
    };
    let outcome = json!({ "error": failed.as_ref().map(ToString::to_string) });
    if let Err(e) = complete(pool, id, &sent, outcome).await {
        // The row names every seq that may have been sent; only the outcome is missing.
        tracing::error!(
            error = %e, audit_id = id, seqs = ?sent, queue = %replay.queue,
            "[admin] replayed, but its audit row could not be completed"
        );
    }
    tracing::warn!(
        order_id = replay.aggregate_id, seqs = ?sent, queue = %replay.queue, operator, reason,
        "[admin] replayed events to one queue"
    );
    match failed {
        Some(e) => Err(grpc_status(e)),
        None => Ok(sent),
    }
}

/// Writes and commits the audit row of a replay about to be sent; returns its id.
async fn record(
    pool: &PgPool,
    seqs: &[i64],
    reason: &str,
    operator: Option<&str>,
    detail: serde_json::Value,
) -> Result<i64, Error> {
    let mut tx = pool.begin().await.map_err(Error::from_db)?;
    let id = kit::audit(&mut tx, ACTION, seqs, reason, operator, detail)
        .await
        .map_err(Error::from_db)?;
    tx.commit().await.map_err(Error::from_db)?;
    Ok(id)
}

/// The audit row `id` says what was sent and how it ended.
async fn complete(
    pool: &PgPool,
    id: i64,
    sent: &[i64],
    outcome: serde_json::Value,
) -> Result<(), Error> {
    let mut conn = pool.acquire().await.map_err(Error::from_db)?;
    kit::audit_outcome(&mut conn, id, sent, outcome)
        .await
        .map_err(Error::from_db)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        order_id: i64,
        from_seq: i64,
        to_seq: i64,
        queue: &str,
        reason: &str,
    ) -> ReplayRequest {
        ReplayRequest {
            order_id,
            shard: 0,
            from_seq,
            to_seq,
            queue: queue.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn every_bad_field_is_named() {
        let long = "q".repeat(256);
        for (r, field) in [
            (request(0, 0, 0, "q", "x"), "order_id: required"),
            (request(-3, 0, 0, "q", "x"), "order_id: -3"),
            (request(7, 0, 0, " ", "x"), "queue: required"),
            (request(7, 0, 0, &long, "x"), "queue: at most 255"),
            (request(7, -1, 0, "q", "x"), "from_seq: -1"),
            (request(7, 0, -2, "q", "x"), "to_seq: -2"),
            (request(7, 9, 3, "q", "x"), "from_seq: 9 is after to_seq: 3"),
            (request(7, 0, 0, "q", " "), "reason: required"),
            (request(7, 0, 0, "q", "a\0b"), "reason: control character"),
            (request(7, 0, 0, "q\0", "x"), "queue: control character"),
        ] {
            let e = checked(&r).expect_err(field);
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{field}");
            assert!(e.message().starts_with(field), "{field}: {}", e.message());
        }
    }

    #[test]
    fn zero_bounds_mean_every_kept_seq() {
        let (replay, reason) = checked(&request(7, 0, 0, " q ", " why ")).expect("valid");
        assert_eq!(
            (replay.aggregate_id, replay.from_seq, replay.to_seq),
            (7, None, None)
        );
        assert_eq!(
            (replay.aggregate_type.as_str(), replay.queue.as_str()),
            ("order", "q")
        );
        assert_eq!(reason, "why");
        let (replay, _) = checked(&request(7, 4, 4, "q", "x")).expect("one seq");
        assert_eq!((replay.from_seq, replay.to_seq), (Some(4), Some(4)));
    }
}
