//! The transactions: skip, hold or process each event, decided under its order's lock.
//!
//! The rule and its bookkeeping (the watermark in `order_progress`, the held events in
//! `held_events`, the advisory lock per order) are the `outbox-inbox` crate's, on mail-svc's
//! tables ([`INBOX`]; the order is the aggregate). For an event `e` of order `o` with watermark
//! `w` (see [`outbox_inbox::decide()`]): `e.seq <= w`, or `e` already held -> **skip**;
//! `e.prev_seq == w` -> **process**: queue its mail, then the mails of the held successors it
//! releases, in chain order; `e.prev_seq > w` -> **hold** it durably; otherwise a **conflict**
//! no correct producer can cause: dead-letter it.
//!
//! What mail-svc adds is the handler: processing an event queues its mail ([`db::insert_mail`],
//! or in a batch the `queued` CTE of [`db::push_mail_ctes`]) in the same transaction, and a
//! duplicate bumps this instance's `skipped` counter. The broker message is acked only after the
//! commit. [`apply_batch`] applies a batch of deliveries in one transaction with a fixed number of
//! statements; [`apply`] is the one-event transaction the consumer falls back to.

use std::{borrow::Cow, sync::LazyLock};

use outbox::trace::TraceHeaders;
use outbox_inbox::{Chain, Conflict, Envelope, Handler, Inbox, Tables};
use prost::Message;
use sqlx::{Connection, PgConnection, PgPool};

use crate::{
    db,
    event::{self, Event},
    mail, retry,
};

/// mail-svc's inbox: the tables of migration 0001, keyed by `order_id` (and `shard`, 0005).
pub static INBOX: LazyLock<Inbox> = LazyLock::new(|| {
    Inbox::with_tables(
        Tables::existing("order_progress", "held_events", "order_id")
            .expect("mail-svc's table names are valid identifiers"),
    )
});

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

/// Why a transaction failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// A held event of the order cannot be decoded: a bug or a manual edit. The delivery is
    /// retried (with backoff, logged) until someone repairs the row, rather than skip a mail or
    /// dead-letter this valid event.
    #[error("held successor seq {seq} of order {order_id} is corrupt: {reason}")]
    CorruptHeld {
        seq: i64,
        order_id: i64,
        reason: String,
    },
    /// An outcome this version of mail-svc does not know (`outbox_inbox::Outcome` may grow):
    /// retried and logged, never dead-lettered, until mail-svc is updated.
    #[error("outbox-inbox reported an outcome mail-svc does not handle: {0}")]
    UnknownOutcome(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl retry::Retry for ApplyError {
    fn failure(&self) -> retry::Failure {
        match self {
            ApplyError::Db(e) => e.failure(),
            // Retrying keeps the event; the error is logged until someone repairs the row.
            ApplyError::CorruptHeld { .. } | ApplyError::UnknownOutcome(_) => {
                retry::Failure::Transient
            }
        }
    }
    fn sqlstate(&self) -> Option<String> {
        match self {
            ApplyError::Db(e) => e.sqlstate(),
            _ => None,
        }
    }
}

impl From<outbox_inbox::ApplyError<ApplyError>> for ApplyError {
    fn from(e: outbox_inbox::ApplyError<ApplyError>) -> Self {
        match e {
            outbox_inbox::ApplyError::Handler { source, .. } => source,
            outbox_inbox::ApplyError::Db(e) => ApplyError::Db(e),
        }
    }
}

/// The envelope the inbox keeps for `ev`: held events are stored as their re-encoded
/// `OrderEvent`, as before the crate.
fn envelope(ev: &Event, traceparent: Option<&str>) -> Envelope {
    Envelope::new(
        ev.order_id,
        ev.seq,
        ev.prev_seq,
        ev.to_proto().encode_to_vec(),
    )
    .with_shard(ev.shard)
    .with_aggregate_type(event::AGGREGATE_TYPE)
    .with_traceparent(traceparent.map(str::to_owned))
}

/// Decodes a released held event (of the shard it was held in).
pub fn decode_held(e: &Envelope) -> Result<Event, ApplyError> {
    match event::decode_stored(&e.payload) {
        Ok(ev) => Ok(Event {
            shard: e.shard,
            ..ev
        }),
        Err(p) => Err(ApplyError::CorruptHeld {
            seq: e.seq,
            order_id: e.aggregate_id,
            reason: p.0,
        }),
    }
}

/// Applies one validated event in ONE transaction (see the module docs). `instance` names this
/// process's counter rows.
pub async fn apply(
    pool: &PgPool,
    instance: &str,
    ev: &Event,
    traceparent: Option<&str>,
) -> Result<Outcome, ApplyError> {
    let mut conn = pool.acquire().await?;
    let result = apply_on(&mut conn, instance, ev, traceparent).await;
    if let Err(e) = &result
        && retry::Retry::failure(e) == retry::Failure::Reconnect
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
) -> Result<Outcome, ApplyError> {
    let mut tx = conn.begin().await?;
    let mut mailer = QueueMails {
        delivered: ev,
        queued: Vec::new(),
    };
    let applied = INBOX
        .apply(&mut tx, &envelope(ev, traceparent), &mut mailer)
        .await?;
    let outcome = match applied {
        outbox_inbox::Outcome::Processed { .. } => Outcome::Processed(mailer.queued),
        outbox_inbox::Outcome::Skipped { held } => {
            db::bump(&mut tx, instance, db::SKIPPED, 1).await?;
            Outcome::Skipped { held }
        }
        outbox_inbox::Outcome::Held { waiting_for } => Outcome::Held { waiting_for },
        outbox_inbox::Outcome::Conflict(c) => {
            tx.rollback().await?;
            return Ok(Outcome::Conflict(conflict_reason(&c)));
        }
        other => return Err(ApplyError::UnknownOutcome(format!("{other:?}"))),
    };
    tx.commit().await?;
    Ok(outcome)
}

/// The one-event path's handler: queues the mail of the delivered event (decoded already) and of
/// each held successor it releases.
struct QueueMails<'a> {
    delivered: &'a Event,
    queued: Vec<Queued>,
}

impl Handler for QueueMails<'_> {
    type Error = ApplyError;
    async fn handle(&mut self, tx: &mut PgConnection, e: &Envelope) -> Result<(), ApplyError> {
        let ev = if e.seq == self.delivered.seq {
            Cow::Borrowed(self.delivered)
        } else {
            Cow::Owned(decode_held(e)?)
        };
        self.queued
            .push(queue(tx, &ev, e.traceparent.as_deref()).await?);
        Ok(())
    }
}

/// One validated delivery of a batch: the event and the `traceparent` it arrived with.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub event: &'a Event,
    pub traceparent: Option<&'a str>,
}

/// Applies a batch of validated events in ONE transaction with exactly the result of applying
/// them one by one in slice (delivery) order: [`Inbox::batch`] locks the batch's orders (sorted,
/// one statement) and reads their watermarks and held events (one statement) and plans every
/// event; one statement then writes the releases, watermarks and holds with the mails and the
/// skip counter (see [`db::push_mail_ctes`]), and the transaction commits.
///
/// The result has one entry per item: `None` when the item's order has a held successor that
/// cannot be decoded (a bug or a manual edit): that order's events are left out of the batch so
/// that the others commit, and the caller applies them on their own with [`apply`], which keeps
/// failing (retried, logged) until someone repairs the row, as before batching.
pub async fn apply_batch(
    pool: &PgPool,
    instance: &str,
    items: &[Item<'_>],
) -> Result<Vec<Option<Outcome>>, ApplyError> {
    let mut conn = pool.acquire().await?;
    let result = apply_batch_on(&mut conn, instance, items).await;
    if let Err(e) = &result
        && retry::Retry::failure(e) == retry::Failure::Reconnect
    {
        // As in `apply`: a read-only or broken session is not handed back to the pool.
        conn.close_on_drop();
    }
    result
}

async fn apply_batch_on(
    conn: &mut PgConnection,
    instance: &str,
    items: &[Item<'_>],
) -> Result<Vec<Option<Outcome>>, ApplyError> {
    let envelopes: Vec<Envelope> = items
        .iter()
        .map(|i| envelope(i.event, i.traceparent))
        .collect();
    let mut tx = conn.begin().await?;
    let mut batch = INBOX.batch(&mut tx, &envelopes).await?;

    // The events to mail, in chain order per order: the batch's own (decoded already) and the
    // held events it releases (decoded here; an order with a corrupt one is left out).
    let mut to_mail: Vec<(Cow<'_, Event>, Option<String>)> = Vec::new();
    let mut corrupt = Vec::new();
    for p in batch.processed() {
        let ev = match p.item {
            Some(n) => Cow::Borrowed(items[n].event),
            None => match decode_held(p.envelope) {
                Ok(ev) => Cow::Owned(ev),
                Err(e) => {
                    tracing::error!(
                        "[mail] {e}; applying order {}'s events on their own",
                        p.envelope.aggregate_id
                    );
                    corrupt.push(p.envelope.chain());
                    continue;
                }
            },
        };
        to_mail.push((ev, p.envelope.traceparent.clone()));
    }
    for chain in &corrupt {
        batch.exclude(chain);
    }
    to_mail.retain(|(ev, _)| {
        !corrupt.contains(&Chain::new(ev.shard, event::AGGREGATE_TYPE, ev.order_id))
    });
    let mails: Vec<db::OwnedMail> = to_mail
        .iter()
        .map(|(ev, tp)| {
            let text = mail::compose(ev);
            db::OwnedMail {
                shard: ev.shard,
                seq: ev.seq,
                order_id: ev.order_id,
                event_type: ev.event_type(),
                recipient: ev.recipient.clone(),
                subject: text.subject,
                body: text.body,
                idempotency_key: mail::idempotency_key(ev.shard, ev.seq),
                traceparent: tp.clone(),
            }
        })
        .collect();
    let planned_skips = batch.duplicates();
    let applied = batch
        .write(&mut tx, |q| {
            db::push_mail_ctes(q, instance, &mails, planned_skips)
        })
        .await?;

    // Found only by the write: a seq held already (for another order: a broken producer reusing
    // seqs) is a duplicate, as the one-event path reports it.
    let skips = applied
        .iter()
        .filter(|o| matches!(o, Some(outbox_inbox::Outcome::Skipped { .. })))
        .count() as i64;
    if skips > planned_skips {
        db::bump(&mut tx, instance, db::SKIPPED, skips - planned_skips).await?;
    }
    let outcomes = applied
        .into_iter()
        .zip(items)
        .map(|(o, item)| {
            o.map(|o| outcome(item.event.shard, o, &to_mail))
                .transpose()
        })
        .collect::<Result<Vec<_>, _>>()?;
    tx.commit().await?;
    Ok(outcomes)
}

/// mail-svc's outcome of a batch event, with the mails of the events it processed.
fn outcome(
    shard: i32,
    o: outbox_inbox::Outcome,
    mailed: &[(Cow<'_, Event>, Option<String>)],
) -> Result<Outcome, ApplyError> {
    Ok(match o {
        outbox_inbox::Outcome::Processed { seqs } => Outcome::Processed(
            seqs.iter()
                .filter_map(|s| {
                    mailed
                        .iter()
                        .find(|(ev, _)| (ev.shard, ev.seq) == (shard, *s))
                })
                .map(|(ev, tp)| queued(ev, tp.as_deref()))
                .collect(),
        ),
        outbox_inbox::Outcome::Skipped { held } => Outcome::Skipped { held },
        outbox_inbox::Outcome::Held { waiting_for } => Outcome::Held { waiting_for },
        outbox_inbox::Outcome::Conflict(c) => Outcome::Conflict(conflict_reason(&c)),
        other => return Err(ApplyError::UnknownOutcome(format!("{other:?}"))),
    })
}

/// The dead-letter reason of a chain conflict, in mail-svc's words (the order is the aggregate).
fn conflict_reason(c: &Conflict) -> String {
    let shard = match c.shard {
        0 => String::new(),
        s => format!(" of shard {s}"),
    };
    format!(
        "chain conflict: order {}{shard} has processed up to seq {}, but seq {} follows {}",
        c.aggregate_id,
        c.watermark.unwrap_or_default(),
        c.seq,
        c.prev_seq.map_or_else(
            || "nothing (OrderCreated)".to_owned(),
            |p| format!("seq {p}")
        )
    )
}

fn queued(ev: &Event, traceparent: Option<&str>) -> Queued {
    let text = mail::compose(ev);
    Queued {
        seq: ev.seq,
        order_id: ev.order_id,
        ja: text.ja,
        en: text.en,
        trace_id: traceparent
            .and_then(|tp| TraceHeaders::parse(tp, None))
            .map(|t| t.trace_id()),
    }
}

/// Queues `ev`'s mail (the one-event path's handler, and the admin release's).
pub async fn queue(
    conn: &mut PgConnection,
    ev: &Event,
    traceparent: Option<&str>,
) -> Result<Queued, sqlx::Error> {
    let text = mail::compose(ev);
    let key = mail::idempotency_key(ev.shard, ev.seq);
    db::insert_mail(
        conn,
        &db::NewMail {
            shard: ev.shard,
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
    Ok(queued(ev, traceparent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_reasons_name_the_order_and_the_chain() {
        let c = |prev| Conflict::new(7, Some(4), 9, prev);
        assert_eq!(
            conflict_reason(&c(Some(2))),
            "chain conflict: order 7 has processed up to seq 4, but seq 9 follows seq 2"
        );
        assert_eq!(
            conflict_reason(&c(None)),
            "chain conflict: order 7 has processed up to seq 4, but seq 9 follows nothing \
             (OrderCreated)"
        );
        assert_eq!(
            conflict_reason(&c(None).in_shard(2)),
            "chain conflict: order 7 of shard 2 has processed up to seq 4, but seq 9 follows \
             nothing (OrderCreated)"
        );
    }

    #[test]
    fn held_events_are_stored_as_the_order_event_they_decode_back_to() {
        use outbox_proto::orders::v1::OrderStatus;
        let ev = Event {
            shard: 3,
            seq: 5,
            order_id: 7,
            prev_seq: Some(4),
            kind: event::Kind::StatusChanged(OrderStatus::Paid),
            status: OrderStatus::Paid,
            recipient: "a@example.com".into(),
            ts_ms: 1,
        };
        let e = envelope(&ev, Some("tp"));
        assert_eq!(
            (e.shard, e.aggregate_id, e.seq, e.prev_seq),
            (3, 7, 5, Some(4))
        );
        assert_eq!(
            decode_held(&e).expect("decodes"),
            ev,
            "with the shard it was held in"
        );
        let mut bad = e.clone();
        bad.payload = b"not an event".to_vec();
        let err = decode_held(&bad).expect_err("corrupt").to_string();
        assert!(err.contains("seq 5 of order 7 is corrupt"), "{err}");
    }
}
