//! A broker that stops reading (flow control, a stalled network) must not hang the leader or
//! its shutdown: the whole publish of a wave, sending included, runs under the confirm timeout.

use std::time::{Duration, Instant};

use outbox::NewEvent;

use crate::support::{
    broker::Consumer,
    db::{Db, event},
    relay::{Running, settings_via},
    stall::StallProxy,
    wait_until,
};

/// Events big enough (24 × 1 MiB) that sending them fills every socket buffer on the way.
fn big_events(first_parcel: i64) -> Vec<NewEvent> {
    (first_parcel..first_parcel + 24)
        .map(|id| {
            NewEvent::new(
                "parcel",
                id,
                "created",
                "parcel.created",
                vec![b'x'; 1 << 20],
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broker_that_stops_reading_neither_hangs_the_leader_nor_its_shutdown() {
    let db = Db::fresh("outbox_stall").await;
    let consumer = Consumer::start("#").await;
    let broker = StallProxy::start(&outbox_testkit::amqp_addr()).await;
    let mut s = settings_via(
        &db,
        &outbox_testkit::amqp_url_via(broker.addr()),
        &consumer.exchange,
    );
    s.confirm_timeout = Duration::from_secs(2);
    let mut relay = Running::start(s, db.pool.clone());
    let first = db.append(&[event(1, "created")]).await;
    wait_until("connected and publishing", || async {
        consumer.has_all(&first)
    })
    .await;

    // The broker stops reading while a wave is being sent: the sends themselves block.
    broker.stall();
    let big = db.append(&big_events(1_000)).await;
    wait_until(
        "the stalled wave times out and counts as a failure",
        || async { relay.snapshot().consecutive_failures >= 1 },
    )
    .await;
    assert!(
        relay.snapshot().active,
        "still leading: the lease is proven meanwhile"
    );
    assert_eq!(db.unsent().await, big, "nothing deleted");

    broker.resume();
    wait_until(
        "everything delivered once the broker reads again",
        || async { consumer.has_all(&big) },
    )
    .await;
    wait_until("the outbox is drained", || async {
        db.unsent().await.is_empty()
    })
    .await;

    // Stalled again, mid-wave: the shutdown token (SIGTERM in a service) still ends the relay,
    // bounded by the confirm timeout and the few-second close timeouts, not by the broker.
    broker.stall();
    db.append(&big_events(2_000)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(20), relay.stop())
        .await
        .expect("shutdown must not hang on a stalled broker");
    println!(
        "shutdown with the broker stalled mid-wave took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    broker.resume();
    consumer.cleanup().await;
}
