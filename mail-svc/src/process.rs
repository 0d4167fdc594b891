//! The transactions: skip, hold or process each event, decided under its order's lock.
//!
//! The rule and its bookkeeping (the watermark in `order_progress`, the held events in
//! `held_events`, the advisory lock per order) are the `outbox-inbox` crate's, on mail-svc's
//! tables ([`INBOX`]; the order is the aggregate), and so is the loop that runs the transactions
//! (`outbox_inbox::amqp::Consumer`, see [`crate::amqp`]). For an event `e` of order `o` with
//! watermark `w` (see [`outbox_inbox::decide()`]): `e.seq <= w`, or `e` already held -> **skip**;
//! `e.prev_seq == w` -> **process**: queue its mail, then the mails of the held successors it
//! releases, in chain order; `e.prev_seq > w` -> **hold** it durably; otherwise a **conflict**
//! no correct producer can cause: dead-letter it.
//!
//! What mail-svc adds is the handler, [`Mails`]: processing an event queues its mail in the same
//! transaction ([`db::insert_mail`] for one event; in a batch, every mail in the `queued` CTE of
//! [`db::push_mail_ctes`], part of the batch's one statement), and the duplicates bump this
//! instance's `skipped` counter in the same transaction. After the commit it logs what it did,
//! counts it and wakes the mailer; the broker message is acked only after that.

use std::{collections::HashMap, ops::ControlFlow, sync::Arc, sync::LazyLock};

use outbox::trace::TraceHeaders;
use outbox_inbox::{Conflict, Envelope, Handler, Inbox, Outcome, Tables, failure::Failure};
use outbox_kit::defaults;
use sqlx::{Connection, PgConnection, PgPool, Postgres, QueryBuilder};
use tokio::sync::Notify;

use crate::{
    db,
    event::{self, Event},
    mail,
};

/// mail-svc's inbox: the tables of migration 0001, keyed by `order_id` (and `shard`, 0005).
pub static INBOX: LazyLock<Inbox> = LazyLock::new(|| {
    Inbox::with_tables(
        Tables::existing(
            defaults::MAIL_INBOX_PROGRESS,
            defaults::MAIL_INBOX_HELD,
            defaults::MAIL_INBOX_AGGREGATE,
        )
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
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// The envelope the inbox keeps for a delivered event: `body` as it arrived when it is an
/// `OrderEvent` (protobuf), the form held events are stored in; a JSON body (the
/// hand-published shape, `CONTENT_TYPE_JSON`) is stored as the `OrderEvent` it decodes to.
pub fn envelope(ev: &Event, body: Option<&[u8]>, traceparent: Option<String>) -> Envelope {
    use prost::Message;
    let payload = match body {
        Some(b) => b.to_vec(),
        None => ev.to_proto().encode_to_vec(),
    };
    Envelope::new(ev.order_id, ev.seq, ev.prev_seq, payload)
        .with_shard(ev.shard)
        .with_aggregate_type(event::AGGREGATE_TYPE)
        .with_traceparent(traceparent)
}

/// Decodes a delivered or released event (of the shard its envelope names). A delivered one was
/// judged already; a held one was judged when it arrived (see [`event::decode_stored`]).
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

/// What every transaction's [`Mails`] shares: this process's counter rows, the mailer to wake,
/// the crash test hook.
#[derive(Debug)]
pub struct Shared {
    /// Names this process's counter rows.
    pub instance: String,
    /// Poked after mails were queued.
    pub mailer_wake: Arc<Notify>,
    /// The crash test hook (`Hooks::crash_after_commit_seq`).
    pub crash_after_commit_seq: Option<i64>,
}

/// mail-svc's handler (one per transaction): queues each processed event's mail, counts the
/// duplicates, and reports after the commit.
#[derive(Debug)]
pub struct Mails {
    shared: Arc<Shared>,
    /// The mails of a batch, for its one statement.
    staged: Vec<db::OwnedMail>,
    /// What each processed event queued, by (shard, seq), for the log lines after commit.
    queued: HashMap<(i32, i64), Queued>,
    /// Duplicates counted in the batch's statement already.
    counted_skips: i64,
}

impl Mails {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            staged: Vec::new(),
            queued: HashMap::new(),
            counted_skips: 0,
        }
    }
}

impl Handler for Mails {
    type Error = ApplyError;

    async fn handle(&mut self, tx: &mut PgConnection, e: &Envelope) -> Result<(), ApplyError> {
        let ev = decode_held(e)?;
        let q = queue(tx, &ev, e.traceparent.as_deref()).await?;
        self.queued.insert((ev.shard, ev.seq), q);
        Ok(())
    }

    fn classify(error: &ApplyError) -> Failure {
        match error {
            ApplyError::Db(e) => outbox_inbox::failure::classify(e),
            // Retrying keeps the event; the error is logged until someone repairs the row.
            ApplyError::CorruptHeld { .. } => Failure::Transient,
        }
    }

    /// The chain's mails, for the batch's one statement; an order with a corrupt held event is
    /// left out of the batch (its events are applied on their own, and retried until someone
    /// repairs the row), so that the others commit.
    fn stage(&mut self, chain: &[&Envelope]) -> Option<Result<(), ApplyError>> {
        let mut mails = Vec::with_capacity(chain.len());
        for e in chain {
            let ev = match decode_held(e) {
                Ok(ev) => ev,
                Err(err) => {
                    tracing::error!(
                        "[mail] {err}; applying order {}'s events on their own",
                        e.aggregate_id
                    );
                    return Some(Err(err));
                }
            };
            let tp = e.traceparent.as_deref();
            let text = mail::compose(&ev);
            self.queued
                .insert((ev.shard, ev.seq), queued_text(&ev, &text, tp));
            mails.push(db::OwnedMail {
                shard: ev.shard,
                seq: ev.seq,
                order_id: ev.order_id,
                event_type: ev.event_type(),
                recipient: ev.recipient,
                subject: text.subject,
                body: text.body,
                idempotency_key: mail::idempotency_key(ev.shard, ev.seq),
                traceparent: tp.map(str::to_owned),
            });
        }
        self.staged.extend(mails);
        Some(Ok(()))
    }

    fn push_writes(&mut self, q: &mut QueryBuilder<Postgres>, duplicates: i64) {
        db::push_mail_ctes(q, &self.shared.instance, &self.staged, duplicates);
        self.counted_skips = duplicates;
    }

    /// Found only by the batch's write: a seq held already (for another order: a broken
    /// producer reusing seqs) is a duplicate, as the one-event path reports it. And the one-event
    /// path's duplicate.
    async fn before_commit(
        &mut self,
        tx: &mut PgConnection,
        outcomes: &[&Outcome],
    ) -> Result<(), ApplyError> {
        let skips = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Skipped { .. }))
            .count() as i64;
        if skips > self.counted_skips {
            db::bump(
                tx,
                &self.shared.instance,
                db::SKIPPED,
                skips - self.counted_skips,
            )
            .await?;
        }
        Ok(())
    }

    fn committed(&mut self, e: &Envelope, outcome: &Outcome) -> ControlFlow<()> {
        let _span = event_span(e).entered();
        report(e, outcome, &self.queued);
        if matches!(outcome, Outcome::Processed { .. }) {
            self.shared.mailer_wake.notify_one();
        }
        if self.shared.crash_after_commit_seq == Some(e.seq) {
            tracing::error!("[mail] consumer crashed (test hook)");
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn conflict_reason(&self, c: &Conflict) -> String {
        conflict_reason(c)
    }
}

/// Logs and counts what a committed transaction did with a delivered event. Called inside the
/// event's [`event_span`].
fn report(e: &Envelope, outcome: &Outcome, queued: &HashMap<(i32, i64), Queued>) {
    match outcome {
        Outcome::Processed { seqs } => {
            for q in seqs.iter().filter_map(|s| queued.get(&(e.shard, *s))) {
                // A released successor carries its own trace (not the delivery's).
                let span = tracing::info_span!("mail", trace_id = tracing::field::Empty);
                if let Some(t) = q.trace_id.as_deref().filter(|_| q.seq != e.seq) {
                    span.record("trace_id", t);
                }
                span.in_scope(|| {
                    tracing::info!(
                        "[mail] send seq={} order={} \"{}\" ({})",
                        q.seq,
                        q.order_id,
                        q.en,
                        q.ja
                    )
                });
            }
            metrics::counter!(crate::metrics::PROCESSED).increment(seqs.len() as u64);
        }
        Outcome::Skipped { held } => {
            metrics::counter!(crate::metrics::SKIPPED).increment(1);
            tracing::info!(
                "[mail] skip seq={} order={} (already {})",
                e.seq,
                e.aggregate_id,
                if *held { "held" } else { "sent" }
            );
        }
        Outcome::Held { waiting_for } => {
            metrics::counter!(crate::metrics::HELD).increment(1);
            tracing::info!(
                "[mail] hold seq={} order={} (waiting for seq={waiting_for})",
                e.seq,
                e.aggregate_id
            );
        }
        // Dead-lettered by the consumer with [`conflict_reason`]; nothing was committed.
        _ => {}
    }
}

/// The span of one event's log lines: the `process` span of its trace, a child of the relay's
/// publish span (the context the delivery carries).
fn event_span(e: &Envelope) -> tracing::Span {
    let span = tracing::info_span!(
        "event",
        otel.name = "process",
        otel.kind = "consumer",
        order_id = e.aggregate_id,
        seq = e.seq,
        shard = tracing::field::Empty,
        trace_id = tracing::field::Empty
    );
    // Seqs repeat across shards: a sharded event's lines name its shard (shard 0's read as before).
    if e.shard != 0 {
        span.record("shard", e.shard);
    }
    if let Some(t) = e
        .traceparent
        .as_deref()
        .and_then(|tp| TraceHeaders::parse(tp, None))
    {
        t.continue_in(&span);
    }
    span
}

/// Applies a batch of judged events in ONE transaction, as the consumer does (the crate's
/// [`Inbox::apply_batch`] with [`Mails`], its skip count, the commit): for tests and tools that
/// queue mails without a broker. `None`: the event's order has a corrupt held event.
pub async fn apply_batch(
    pool: &PgPool,
    instance: &str,
    envelopes: &[Envelope],
) -> Result<Vec<Option<Outcome>>, ApplyError> {
    let mut handler = Mails::new(Arc::new(Shared {
        instance: instance.to_owned(),
        mailer_wake: Arc::new(Notify::new()),
        crash_after_commit_seq: None,
    }));
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    let outcomes = INBOX
        .apply_batch(&mut tx, envelopes, &mut handler)
        .await
        .map_err(|e| match e {
            outbox_inbox::ApplyError::Handler { source, .. } => source,
            outbox_inbox::ApplyError::Db(e) => ApplyError::Db(e),
        })?;
    let committed: Vec<&Outcome> = outcomes.iter().flatten().collect();
    handler.before_commit(&mut tx, &committed).await?;
    tx.commit().await?;
    Ok(outcomes)
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

fn queued_text(ev: &Event, text: &mail::MailText, traceparent: Option<&str>) -> Queued {
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
    Ok(queued_text(ev, &text, traceparent))
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
        let e = envelope(&ev, None, Some("tp".into()));
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
