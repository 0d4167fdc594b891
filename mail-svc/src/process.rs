//! The transactions: skip, hold or process each event, decided under its order's lock.
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
//! acked only after the commit. [`apply_batch`] does the same for a batch of deliveries in one
//! transaction (the orders' locks taken in ascending id order), with [`plan_order`] applying the
//! rule to each order's events in delivery order; [`apply`] is the one-event transaction the
//! consumer falls back to.

use outbox_kit::trace::TraceHeaders;
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
        Decision::Conflict => Outcome::Conflict(conflict_reason(ev, watermark)),
    };
    if matches!(outcome, Outcome::Conflict(_)) {
        tx.rollback().await?;
    } else {
        tx.commit().await?;
    }
    Ok(outcome)
}

/// One validated delivery of a batch: the event and the `traceparent` it arrived with.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub event: &'a Event,
    pub traceparent: Option<&'a str>,
}

/// Applies a batch of validated events in ONE transaction with one statement per kind of write,
/// with exactly the result of applying them one by one in slice (delivery) order: the batch's
/// orders are locked (sorted, see [`db::lock_orders`]), their watermarks and held events read once,
/// every event decided by [`plan_order`] (the rule of [`decide`], several events of one order in
/// chain order, held successors released), then the mails, holds, releases and watermarks written
/// and committed together.
///
/// The result has one entry per item: `None` when the item's order has a held successor that
/// cannot be decoded (a bug or a manual edit): that order's events are left out of the batch so
/// that the others commit, and the caller applies them on their own with [`apply`], which keeps
/// failing (retried, logged) until someone repairs the row, as before batching.
pub async fn apply_batch(
    pool: &PgPool,
    instance: &str,
    items: &[Item<'_>],
) -> Result<Vec<Option<Outcome>>, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let result = apply_batch_on(&mut conn, instance, items).await;
    if let Err(e) = &result
        && retry::classify(e) == retry::Failure::Reconnect
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
) -> Result<Vec<Option<Outcome>>, sqlx::Error> {
    let mut order_ids: Vec<i64> = items.iter().map(|i| i.event.order_id).collect();
    order_ids.sort_unstable();
    order_ids.dedup();

    let mut tx = conn.begin().await?;
    db::lock_orders(&mut tx, &order_ids).await?;
    let mut state = db::orders_state(&mut tx, &order_ids).await?;

    let mut outcomes: Vec<Option<Outcome>> = vec![None; items.len()];
    let mut writes = db::BatchWrites::default();
    for &order_id in &order_ids {
        let events: Vec<(usize, Item<'_>)> = items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.event.order_id == order_id)
            .map(|(n, i)| (n, *i))
            .collect();
        let watermark = state.watermarks.get(&order_id).copied();
        let held = state.held.remove(&order_id).unwrap_or_default();
        match plan_order(watermark, held, &events) {
            Ok(p) => add(&mut writes, watermark, p, &mut outcomes),
            Err(corrupt) => {
                tracing::error!("[mail] {corrupt}; applying order {order_id}'s events on their own")
            }
        }
    }

    let stored = db::write_batch(&mut tx, instance, &writes).await?;
    // A seq that is held already (for another order: a broken producer reusing seqs) is a
    // duplicate, as `hold` reports it one by one.
    let mut refused = 0;
    for h in writes.holds.iter().filter(|h| !stored.contains(&h.seq)) {
        for (n, item) in items.iter().enumerate() {
            if item.event.seq == h.seq && matches!(outcomes[n], Some(Outcome::Held { .. })) {
                outcomes[n] = Some(Outcome::Skipped { held: true });
                refused += 1;
            }
        }
    }
    if refused > 0 {
        db::bump(&mut tx, instance, db::SKIPPED, refused).await?;
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// Adds one order's plan to the batch's writes and outcomes (also used by the admin release,
/// [`crate::admin`]).
pub fn add(
    w: &mut db::BatchWrites,
    watermark: Option<i64>,
    p: OrderPlan,
    outcomes: &mut [Option<Outcome>],
) {
    for (ev, tp) in &p.mails {
        let text = mail::compose(ev);
        w.mails.push(db::OwnedMail {
            seq: ev.seq,
            order_id: ev.order_id,
            event_type: ev.event_type(),
            recipient: ev.recipient.clone(),
            subject: text.subject,
            body: text.body,
            idempotency_key: mail::idempotency_key(ev.seq),
            traceparent: tp.clone(),
        });
    }
    w.holds.extend(p.holds);
    w.released.extend(p.released);
    if p.watermark != watermark
        && let Some(seq) = p.watermark
    {
        w.watermark_orders.push(p.order_id);
        w.watermark_seqs.push(seq);
    }
    for (n, o) in p.outcomes {
        if matches!(o, Outcome::Skipped { .. }) {
            w.skipped += 1;
        }
        outcomes[n] = Some(o);
    }
}

/// What one order's events in a batch come to (see [`plan_order`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPlan {
    pub order_id: i64,
    /// The watermark after the batch.
    pub watermark: Option<i64>,
    /// The mails to queue, in chain order, with their traceparents.
    pub mails: Vec<(Event, Option<String>)>,
    /// Events of the batch still waiting for a predecessor at its end.
    pub holds: Vec<db::NewHold>,
    /// Stored held events released by the batch.
    pub released: Vec<i64>,
    /// The outcome of each of the order's items (by its index in the batch).
    pub outcomes: Vec<(usize, Outcome)>,
}

/// A held event the batch may release: stored, or held earlier in the same batch.
#[derive(Debug, Clone)]
enum Waiting {
    Stored(db::HeldRow),
    Batch { index: usize, prev_seq: i64 },
}

impl Waiting {
    fn seq_prev(&self, events: &[(usize, Item<'_>)]) -> (i64, i64) {
        match self {
            Waiting::Stored(r) => (r.seq, r.prev_seq),
            Waiting::Batch { index, prev_seq } => {
                let ev = events
                    .iter()
                    .find(|(n, _)| n == index)
                    .map(|(_, i)| i.event.seq)
                    .unwrap_or_default();
                (ev, *prev_seq)
            }
        }
    }
}

/// The pure rule for one order's events in a batch, given its watermark and its stored held
/// events: the result of applying `events` one by one in the given (delivery) order, each with
/// [`decide`], exactly as one transaction per event would. An event held earlier in the batch and
/// released later in it is never written to `held_events` (its outcome is still `Held`, and its
/// mail is among the releasing event's). `Err` names a stored held event that cannot be decoded.
pub fn plan_order(
    watermark: Option<i64>,
    stored: Vec<db::HeldRow>,
    events: &[(usize, Item<'_>)],
) -> Result<OrderPlan, String> {
    let order_id = events.first().map_or(0, |(_, i)| i.event.order_id);
    let mut w = watermark;
    let mut waiting: Vec<Waiting> = stored.into_iter().map(Waiting::Stored).collect();
    let mut plan = OrderPlan {
        order_id,
        watermark,
        mails: Vec::new(),
        holds: Vec::new(),
        released: Vec::new(),
        outcomes: Vec::new(),
    };
    for &(n, item) in events {
        let ev = item.event;
        let outcome = match decide(w, ev.seq, ev.prev_seq) {
            Decision::Skip => Outcome::Skipped { held: false },
            Decision::Hold(prev) => {
                if waiting.iter().any(|h| h.seq_prev(events).0 == ev.seq) {
                    Outcome::Skipped { held: true }
                } else {
                    waiting.push(Waiting::Batch {
                        index: n,
                        prev_seq: prev,
                    });
                    Outcome::Held { waiting_for: prev }
                }
            }
            Decision::Conflict => Outcome::Conflict(conflict_reason(ev, w)),
            Decision::Process => {
                let mut queued = vec![queued(ev, item.traceparent)];
                plan.mails
                    .push((ev.clone(), item.traceparent.map(str::to_owned)));
                let mut last = ev.seq;
                // Release the held chain that this event unblocked, in chain order (the lowest
                // seq first if a faulty producer forked the chain, as `take_successor` does).
                while let Some(pos) = waiting
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| h.seq_prev(events).1 == last)
                    .min_by_key(|(_, h)| h.seq_prev(events).0)
                    .map(|(pos, _)| pos)
                {
                    let (next, tp) = match waiting.remove(pos) {
                        Waiting::Stored(row) => {
                            let next = event::decode_stored(&row.event).map_err(|e| {
                                format!(
                                    "held successor of seq {last} of order {order_id} is \
                                     corrupt: {e}"
                                )
                            })?;
                            plan.released.push(row.seq);
                            (next, row.traceparent)
                        }
                        Waiting::Batch { index, .. } => {
                            let (_, i) = events
                                .iter()
                                .find(|(m, _)| *m == index)
                                .expect("a batch hold is one of the order's items");
                            (i.event.clone(), i.traceparent.map(str::to_owned))
                        }
                    };
                    queued.push(self::queued(&next, tp.as_deref()));
                    last = next.seq;
                    plan.mails.push((next, tp));
                }
                w = Some(last);
                Outcome::Processed(queued)
            }
        };
        plan.outcomes.push((n, outcome));
    }
    for h in waiting {
        if let Waiting::Batch { index, prev_seq } = h {
            let (_, i) = events
                .iter()
                .find(|(m, _)| *m == index)
                .expect("a batch hold is one of the order's items");
            plan.holds.push(db::NewHold {
                seq: i.event.seq,
                order_id,
                prev_seq,
                event: i.event.to_proto().encode_to_vec(),
                traceparent: i.traceparent.map(str::to_owned),
            });
        }
    }
    plan.watermark = w;
    Ok(plan)
}

fn conflict_reason(ev: &Event, watermark: Option<i64>) -> String {
    format!(
        "chain conflict: order {} has processed up to seq {}, but seq {} follows {}",
        ev.order_id,
        watermark.unwrap_or_default(),
        ev.seq,
        ev.prev_seq.map_or_else(
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
        trace_id: traceparent
            .and_then(|tp| TraceHeaders::parse(tp, None))
            .map(|t| t.trace_id()),
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

    fn ev(seq: i64, prev: Option<i64>) -> Event {
        use outbox_proto::orders::v1::OrderStatus;
        Event {
            seq,
            order_id: 7,
            prev_seq: prev,
            kind: match prev {
                None => event::Kind::Created,
                Some(_) => event::Kind::StatusChanged(OrderStatus::Paid),
            },
            status: OrderStatus::Paid,
            recipient: "a@example.com".into(),
            ts_ms: 1,
        }
    }

    /// Mail seqs, new holds, released holds, the watermark after, and the outcomes.
    type Planned = (Vec<i64>, Vec<i64>, Vec<i64>, Option<i64>, Vec<Outcome>);

    /// Plans `events` (delivered in this order) for order 7.
    fn plan(watermark: Option<i64>, stored: Vec<db::HeldRow>, events: &[Event]) -> Planned {
        let items: Vec<(usize, Item<'_>)> = events
            .iter()
            .enumerate()
            .map(|(n, e)| {
                (
                    n,
                    Item {
                        event: e,
                        traceparent: None,
                    },
                )
            })
            .collect();
        let p = plan_order(watermark, stored, &items).expect("plan");
        assert_eq!(p.outcomes.len(), events.len());
        (
            p.mails.iter().map(|(e, _)| e.seq).collect(),
            p.holds.iter().map(|h| h.seq).collect(),
            p.released,
            p.watermark,
            p.outcomes.into_iter().map(|(_, o)| o).collect(),
        )
    }

    fn stored(seq: i64, prev: i64) -> db::HeldRow {
        db::HeldRow {
            seq,
            order_id: 7,
            prev_seq: prev,
            event: ev(seq, Some(prev)).to_proto().encode_to_vec(),
            traceparent: None,
        }
    }

    fn processed(o: &Outcome) -> Vec<i64> {
        match o {
            Outcome::Processed(q) => q.iter().map(|q| q.seq).collect(),
            other => panic!("not processed: {other:?}"),
        }
    }

    #[test]
    fn a_batch_applies_an_orders_events_as_one_transaction_each_would() {
        // In chain order.
        let (mails, holds, released, w, out) =
            plan(None, vec![], &[ev(1, None), ev(2, Some(1)), ev(3, Some(2))]);
        assert_eq!(
            (mails, holds, released, w),
            (vec![1, 2, 3], vec![], vec![], Some(3))
        );
        assert_eq!(
            out.iter().map(processed).collect::<Vec<_>>(),
            [[1], [2], [3]]
        );

        // Reversed: held in the batch, released in the batch, never stored.
        let (mails, holds, _, w, out) =
            plan(None, vec![], &[ev(3, Some(2)), ev(2, Some(1)), ev(1, None)]);
        assert_eq!((mails, holds, w), (vec![1, 2, 3], vec![], Some(3)));
        assert_eq!(out[0], Outcome::Held { waiting_for: 2 });
        assert_eq!(out[1], Outcome::Held { waiting_for: 1 });
        assert_eq!(processed(&out[2]), [1, 2, 3]);

        // A stored hold released; a duplicate of it while held; duplicates after.
        let (mails, holds, released, w, out) = plan(
            Some(1),
            vec![stored(3, 2)],
            &[ev(3, Some(2)), ev(2, Some(1)), ev(2, Some(1)), ev(1, None)],
        );
        assert_eq!(
            (mails, holds, released, w),
            (vec![2, 3], vec![], vec![3], Some(3))
        );
        assert_eq!(out[0], Outcome::Skipped { held: true });
        assert_eq!(processed(&out[1]), [2, 3]);
        assert_eq!(out[2], Outcome::Skipped { held: false });
        assert_eq!(out[3], Outcome::Skipped { held: false });

        // A duplicate of an event held earlier in the batch; what still waits is stored.
        let (mails, holds, _, w, out) = plan(Some(1), vec![], &[ev(5, Some(4)), ev(5, Some(4))]);
        assert_eq!((mails, holds, w), (vec![], vec![5], Some(1)));
        assert_eq!(out[1], Outcome::Skipped { held: true });

        // A forked chain releases the lowest seq first, as `take_successor` does.
        let (mails, ..) = plan(Some(1), vec![stored(4, 2), stored(3, 2)], &[ev(2, Some(1))]);
        assert_eq!(mails, [2, 3]);

        // A conflict changes nothing.
        let (mails, _, _, w, out) = plan(Some(4), vec![], &[ev(9, None), ev(5, Some(4))]);
        assert!(matches!(out[0], Outcome::Conflict(_)));
        assert_eq!((mails, w), (vec![5], Some(5)));
    }

    #[test]
    fn a_corrupt_stored_hold_leaves_the_order_out_of_the_batch() {
        let mut bad = stored(3, 2);
        bad.event = b"not an event".to_vec();
        let e = ev(2, Some(1));
        let items = [(
            0,
            Item {
                event: &e,
                traceparent: None,
            },
        )];
        assert!(plan_order(Some(1), vec![bad], &items).is_err());
    }
}
