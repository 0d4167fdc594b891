//! Returned and nacked events hold back only their own aggregate. Returns are matched to their
//! own message: lapin hands the oldest pending `basic.return` to whichever confirm completes
//! next, and RabbitMQ sends a return at once but coalesces acks, so a wave mixing routable and
//! unroutable messages can see the return attached to the wrong one.

use std::{collections::HashSet, time::Duration};

use outbox_testkit::RefusingQueue;

use crate::support::{
    all_arrive, assert_complete_and_ordered,
    broker::Consumer,
    chains_of,
    db::{Db, LIFECYCLE},
    relay::{Running, settings},
    wait_until,
};

/// Splits writers' (parcel, seq) pairs into each parcel's first event and the later ones
/// (sorted).
fn first_and_later(events: &[(i64, i64)]) -> (Vec<i64>, Vec<i64>) {
    let mut seen = HashSet::new();
    let (mut first, mut later) = (Vec::new(), Vec::new());
    for (parcel, seq) in events {
        if seen.insert(*parcel) {
            first.push(*seq);
        } else {
            later.push(*seq);
        }
    }
    later.sort_unstable();
    (first, later)
}

/// A queue bound only to `parcel.created` while parcels are created and advanced under load:
/// every later event is unroutable. Not one of them may leave the outbox (a deleted, unroutable
/// event is a loss, and its aggregate's later events would be held by the consumer forever)
/// until a queue is bound for it; then all of them arrive, in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unroutable_event_in_a_mixed_wave_is_never_counted_as_delivered() {
    let db = Db::fresh("outbox_returns").await;
    let consumer = Consumer::start("parcel.created").await;
    let _relay = Running::start(settings(&db, &consumer.exchange), db.pool.clone());

    // Writers interleave creations and later steps of many parcels, so waves mix routable and
    // unroutable messages.
    let events = db
        .spawn_writers(8, 12, Duration::ZERO)
        .await
        .expect("writers");
    let (created, later) = first_and_later(&events);

    wait_until("every created event consumed", || async {
        consumer.has_all(&created)
    })
    .await;
    wait_until("every created row deleted", || async {
        db.unsent().await.len() <= later.len()
    })
    .await;
    // A few more rounds of retries of the unroutable rows.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let left = db.unsent().await;
    let lost: Vec<_> = later.iter().filter(|s| !left.contains(s)).collect();
    assert!(
        lost.is_empty(),
        "unroutable rows left the outbox unpublished: {lost:?}"
    );
    assert_eq!(left, later, "only the unroutable rows remain");
    assert!(
        consumer
            .received()
            .iter()
            .all(|r| r.routing_key == "parcel.created"),
        "nothing else was routable"
    );

    consumer.add_binding("parcel.#").await;
    all_arrive("once routable", &consumer, &db, &events).await;
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));
    consumer.cleanup().await;
}

/// A queue that refuses every event after a parcel's first (full, `x-overflow:
/// reject-publish`): the broker nacks those events. Each nacked row stays and only its
/// aggregate waits for its own retry; every other event flows, and the relay as a whole does
/// not back off. Once the refusing queue is gone, everything arrives in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_nacked_event_holds_back_only_its_aggregate() {
    let db = Db::fresh("outbox_returns").await;
    let consumer = Consumer::start("#").await;
    let full = RefusingQueue::declare("outbox_relay_full").await;
    for step in &LIFECYCLE[1..] {
        full.bind(&consumer.exchange, &format!("parcel.{step}"))
            .await;
    }
    let relay = Running::start(settings(&db, &consumer.exchange), db.pool.clone());

    let events = db
        .spawn_writers(4, 6, Duration::ZERO)
        .await
        .expect("writers");
    let (created, later) = first_and_later(&events);
    wait_until("every created event delivered and deleted", || async {
        consumer.has_all(&created) && db.unsent().await == later
    })
    .await;
    wait_until("the nacked rows are retried", || async {
        relay.snapshot().refused_total >= 2 * created.len() as u64
    })
    .await;
    assert_eq!(db.unsent().await, later, "nacked rows stay");
    let s = relay.snapshot();
    assert_eq!(s.consecutive_failures, 0, "no global backoff: {s:?}");

    full.delete().await;
    all_arrive("once the refusing queue is gone", &consumer, &db, &events).await;
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));
    consumer.cleanup().await;
}
