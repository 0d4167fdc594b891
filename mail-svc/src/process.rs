//! The per-event transaction: skip, hold or process, decided under the order's lock.
//!
//! For an event `e` of order `o` with watermark `w` (the seq of `o`'s last processed event,
//! `None` before the first):
//!
//! - `e.seq <= w`, or `e` already held -> **skip** (a duplicate; dedup never expires);
//! - `e.prev_seq == w` -> **process**: queue its mail, move `w` to `e.seq`, then release held
//!   successors whose `prev_seq` is the new `w`, one after the other, in chain order;
//! - `e.prev_seq > w` (or `w` is `None` and `e` has a predecessor) -> **hold** it durably;
//! - otherwise (`e.seq > w` but its `prev_seq` is below `w`, or an `OrderCreated` for an order
//!   that has events) -> a **conflict** no correct producer can cause: dead-letter it.
//!
//! All of it is one transaction that starts by taking the order's advisory lock, so deliveries of
//! the same order on several instances are applied one at a time, and the broker message is
//! acked only after the commit.

use outbox_kit::trace::TraceParent;
use prost::Message;
use sqlx::{Connection, PgConnection, PgPool};

use crate::{
    db,
    event::{self, Event},
    mail, retry,
};

/// A mail queued by a transaction (for the log line after commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub seq: i64,
    pub order_id: i64,
    pub ja: &'static str,
    pub en: &'static str,
    pub trace_id: Option<String>,
}

/// What the transaction did with an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The event's mail and those of released successors, in chain order.
    Processed(Vec<Queued>),
    /// A duplicate (already processed, or already held).
    Skipped { held: bool },
    /// Waiting for the order's event `waiting_for`.
    Held { waiting_for: i64 },
    /// Contradicts the order's chain; the reason goes to the dead-letter queue.
    Conflict(String),
}

/// Applies one validated event in ONE transaction (see the module docs). `instance` names this
/// process's counter rows.
pub async fn apply(
    pool: &PgPool,
    instance: &str,
    ev: &Event,
    traceparent: Option<&str>,
) -> Result<Outcome, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let result = apply_on(&mut conn, instance, ev, traceparent).await;
    if let Err(e) = &result
        && retry::classify(e) == retry::Failure::Reconnect
    {
        // A session that is read-only (it reached a standby, or the database was switched to
        // read-only while it was open) stays so: do not hand it back to the pool, or the retry
        // may get it again, forever.
        conn.close_on_drop();
    }
    result
}

async fn apply_on(
    conn: &mut PgConnection,
    instance: &str,
    ev: &Event,
    traceparent: Option<&str>,
) -> Result<Outcome, sqlx::Error> {
    let mut tx = conn.begin().await?;
    db::lock_order(&mut tx, ev.order_id).await?;
    let watermark = db::watermark(&mut tx, ev.order_id).await?;

    let outcome = match decide(watermark, ev.seq, ev.prev_seq) {
        Decision::Skip => {
            db::bump(&mut tx, instance, db::SKIPPED, 1).await?;
            Outcome::Skipped { held: false }
        }
        Decision::Process => {
            let mut queued = vec![queue(&mut tx, ev, traceparent).await?];
            let mut last = ev.seq;
            // Release the held chain that this event unblocked, in chain order.
            while let Some((bytes, tp)) = db::take_successor(&mut tx, ev.order_id, last).await? {
                // Held events were validated before they were stored; a corrupt one is a bug or
                // a manual edit: fail the transaction (the delivery is retried, with backoff and
                // an error in the log, until someone repairs the row) rather than skip a mail or
                // dead-letter this valid event.
                let next = event::decode_stored(&bytes).map_err(|e| {
                    sqlx::Error::Protocol(format!(
                        "held successor of seq {last} of order {} is corrupt: {e}",
                        ev.order_id
                    ))
                })?;
                queued.push(queue(&mut tx, &next, tp.as_deref()).await?);
                last = next.seq;
            }
            db::set_watermark(&mut tx, ev.order_id, last).await?;
            Outcome::Processed(queued)
        }
        Decision::Hold(prev) => {
            let encoded = ev.to_proto().encode_to_vec();
            if db::hold(&mut tx, ev.seq, ev.order_id, prev, &encoded, traceparent).await? {
                Outcome::Held { waiting_for: prev }
            } else {
                db::bump(&mut tx, instance, db::SKIPPED, 1).await?;
                Outcome::Skipped { held: true }
            }
        }
        Decision::Conflict => Outcome::Conflict(format!(
            "chain conflict: order {} has processed up to seq {}, but seq {} follows {}",
            ev.order_id,
            watermark.unwrap_or_default(),
            ev.seq,
            ev.prev_seq.map_or_else(
                || "nothing (OrderCreated)".to_owned(),
                |p| format!("seq {p}")
            )
        )),
    };
    if matches!(outcome, Outcome::Conflict(_)) {
        tx.rollback().await?;
    } else {
        tx.commit().await?;
    }
    Ok(outcome)
}

/// The rule, on its own: what to do with event `seq` (predecessor `prev`) when the order's
/// watermark is `watermark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Skip,
    Process,
    /// Hold until this seq is processed.
    Hold(i64),
    Conflict,
}

/// See the module docs.
pub fn decide(watermark: Option<i64>, seq: i64, prev: Option<i64>) -> Decision {
    match (watermark, prev) {
        (Some(w), _) if seq <= w => Decision::Skip,
        (w, p) if w == p => Decision::Process,
        (None, Some(p)) => Decision::Hold(p),
        (Some(w), Some(p)) if p > w => Decision::Hold(p),
        _ => Decision::Conflict,
    }
}

async fn queue(
    conn: &mut sqlx::PgConnection,
    ev: &Event,
    traceparent: Option<&str>,
) -> Result<Queued, sqlx::Error> {
    let text = mail::compose(ev);
    let key = mail::idempotency_key(ev.seq);
    db::insert_mail(
        conn,
        &db::NewMail {
            seq: ev.seq,
            order_id: ev.order_id,
            event_type: ev.event_type(),
            recipient: &ev.recipient,
            subject: &text.subject,
            body: &text.body,
            idempotency_key: &key,
            traceparent,
        },
    )
    .await?;
    Ok(Queued {
        seq: ev.seq,
        order_id: ev.order_id,
        ja: text.ja,
        en: text.en,
        trace_id: traceparent.and_then(TraceParent::parse).map(|t| t.trace_id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Decision::*;

    #[test]
    fn decision_table() {
        assert_eq!(decide(None, 3, None), Process);
        assert_eq!(decide(None, 5, Some(4)), Hold(4));
        assert_eq!(decide(Some(3), 3, None), Skip);
        assert_eq!(decide(Some(4), 2, Some(1)), Skip);
        assert_eq!(decide(Some(4), 5, Some(4)), Process);
        assert_eq!(decide(Some(4), 9, Some(7)), Hold(7));
        assert_eq!(decide(Some(4), 9, Some(2)), Conflict);
        assert_eq!(decide(Some(4), 9, None), Conflict);
    }
}
