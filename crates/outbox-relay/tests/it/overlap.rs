//! The overlapped cycle: the next batch is read while the current one is confirmed, and the
//! confirmed seqs are deleted while the next batch is published. Its failure paths: an
//! aggregate whose events span overlapping batches, a delete that fails, a broker cut
//! mid-pipeline.

use std::time::Duration;

use outbox_testkit::Proxy;

use crate::support::{
    all_arrive, assert_complete_and_ordered,
    broker::Consumer,
    chains_of,
    db::{Db, UNREADABLE_HEADERS, event},
    relay::{Running, settings, settings_via},
    stall::StallProxy,
    wait_until,
};

/// Parcel 1's events span two batches that overlap (the second is read while the first is
/// confirmed); its second event can never be encoded. The read-ahead must leave parcel 1 out
/// entirely: had it read parcel 1's third event, that event would be published although the
/// second one went to quarantine (a gap in the chain). Parcel 2, spread over several batches
/// with nothing wrong, arrives complete and in order, each event once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_aggregate_spanning_overlapping_batches_never_overtakes_its_own_events() {
    let db = Db::fresh("outbox_overlap").await;
    let consumer = Consumer::start("#").await;

    // Batch 1 (batch size 4): parcel 1's first two events and two fillers; parcel 1's third
    // event is the oldest row after it.
    let one_1 = db.insert_row(1, None, None).await;
    let mut fillers = vec![
        db.insert_row(1_000, None, None).await,
        db.insert_row(1_001, None, None).await,
    ];
    let one_2 = db
        .insert_row(1, Some(one_1), Some(UNREADABLE_HEADERS))
        .await;
    let one_3 = db.insert_row(1, Some(one_2), None).await;
    // Parcel 2's chain, interleaved with more fillers, spans the batches that follow.
    let mut two = Vec::new();
    for i in 0..12 {
        let prev = two.last().copied();
        two.push(db.insert_row(2, prev, None).await);
        fillers.push(db.insert_row(1_002 + i, None, None).await);
    }

    let mut s = settings(&db, &consumer.exchange);
    s.batch_size = 4;
    let _relay = Running::start(s, db.pool.clone());

    let mut want = fillers.clone();
    want.extend(&two);
    want.push(one_1);
    wait_until("every healthy event is consumed", || async {
        consumer.has_all(&want)
    })
    .await;
    wait_until("only parcel 1's third event is left", || async {
        db.unsent().await == vec![one_3]
    })
    .await;
    // Give a wrong read-ahead every chance to publish it.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let seqs = consumer.seqs();
    assert!(
        !seqs.contains(&one_3),
        "parcel 1's third event was published while its second one is in quarantine"
    );
    assert!(!seqs.contains(&one_2));
    assert_eq!(db.quarantined().await, vec![one_2]);
    consumer.assert_once();
    let mut chains = chains_of(
        &fillers
            .iter()
            .enumerate()
            .map(|(i, s)| (1_000 + i as i64, *s))
            .collect::<Vec<_>>(),
    );
    chains.insert(2, two);
    chains.insert(1, vec![one_1]);
    assert_complete_and_ordered(&consumer.envelopes(), &chains);
    consumer.cleanup().await;
}

/// Makes every delete from `db`'s outbox fail while `relay_test_refuse_delete.on_` is true.
async fn refuse_deletes(db: &Db) {
    let events = db.events();
    for sql in [
        "create table relay_test_refuse_delete (on_ boolean not null)".to_owned(),
        "insert into relay_test_refuse_delete values (true)".to_owned(),
        "create function relay_test_refuse_delete() returns trigger language plpgsql as $$ \
         begin \
           if (select on_ from relay_test_refuse_delete) then \
             raise exception 'test: the outbox refuses deletes'; \
           end if; \
           return null; \
         end $$"
            .to_owned(),
        format!(
            "create trigger relay_test_refuse_delete before delete on {events} \
             for each statement execute function relay_test_refuse_delete()"
        ),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
            .execute(&db.pool)
            .await
            .expect(&sql);
    }
}

/// A confirmed batch whose delete fails is neither published again nor lost, and does not hold
/// back its aggregates: the seqs are left out of the reads and deleted once the database takes
/// the delete. (The relay before the overlap failed the cycle and published the batch again.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_delete_publishes_nothing_twice_and_holds_back_nothing() {
    let db = Db::fresh("outbox_overlap").await;
    let consumer = Consumer::start("#").await;
    refuse_deletes(&db).await;
    let relay = Running::start(settings(&db, &consumer.exchange), db.pool.clone());

    let mut events = Vec::new();
    for id in 1..=4 {
        events.push((id, db.append(&[event(id, "created")]).await[0]));
    }
    let first: Vec<i64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("the first events are consumed", || async {
        consumer.has_all(&first)
    })
    .await;
    // Time for several retries of the delete (and, for a relay that re-reads them, re-sends).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        db.unsent().await.len(),
        4,
        "the deletes fail: the rows stay"
    );

    for id in 1..=4 {
        events.push((id, db.append(&[event(id, "packed")]).await[0]));
    }
    let all: Vec<i64> = events.iter().map(|(_, s)| *s).collect();
    wait_until(
        "the parcels' next events are consumed while the deletes fail",
        || async { consumer.has_all(&all) },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    consumer.assert_once();
    assert_eq!(db.unsent().await.len(), 8);

    sqlx::query("update relay_test_refuse_delete set on_ = false")
        .execute(&db.pool)
        .await
        .expect("allow deletes");
    wait_until("the outbox is drained", || async {
        db.unsent().await.is_empty()
    })
    .await;
    wait_until("the backlog reads zero", || async {
        relay.snapshot().backlog == 0
    })
    .await;
    consumer.assert_once();
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));
    consumer.cleanup().await;
}

/// The broker connection is cut while a batch is being confirmed and the next one has been read:
/// the relay streams full batches through a proxy that first stalls (the wave in flight waits
/// for its confirms, the read-ahead completes meanwhile) and is then cut. Nothing is lost, and no
/// aggregate's events reach the consumer out of chain order: the read-ahead of the broken cycle
/// is dropped and read again after the batch that was in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broker_cut_mid_pipeline_loses_and_reorders_nothing() {
    let db = Db::fresh("outbox_overlap").await;
    let consumer = Consumer::start("#").await;
    let events = db.preload(6_000, 100).await;
    let broker = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    let stall = StallProxy::start(&broker.addr().to_string()).await;
    let amqp_url = outbox_testkit::amqp_url_via(stall.addr());
    let relay = Running::start(
        settings_via(&db, &amqp_url, &consumer.exchange),
        db.pool.clone(),
    );

    wait_until("the drain is under way", || async {
        consumer.seqs().len() >= 1_000
    })
    .await;
    stall.stall();
    // The wave in flight gets no confirm; the next batch's read (PostgreSQL only) completes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    broker.cut();
    wait_until("the relay sees the outage", || async {
        relay.snapshot().consecutive_failures > 0
    })
    .await;
    let left = db.unsent().await.len();
    assert!(left > 0, "the cut landed before the drain ended");
    stall.resume();
    broker.restore();

    all_arrive("after the broker is back", &consumer, &db, &events).await;
    let dups = consumer.copies().values().filter(|n| **n > 1).count();
    println!(
        "cut with {left} rows left; {dups} events arrived twice (the batch in flight at the cut)"
    );
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));
    consumer.cleanup().await;
}
