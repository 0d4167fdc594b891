//! Per-row problems hold back only their own aggregate: rows the encoder refuses go to
//! quarantine (and block their aggregate until an operator moves them back), everything else
//! flows.

use std::time::Duration;

use outbox_relay::operator::Operator;

use crate::support::{
    assert_complete_and_ordered,
    broker::Consumer,
    chains_of,
    db::{Db, UNREADABLE_HEADERS, event},
    relay::{Running, settings},
    wait_until,
};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// 300 rows no encoder can read at the head of the outbox, then normal load: the normal events
/// arrive promptly (the old relay read the same poison batch every cycle and backed off
/// globally for up to 30 s, so nothing else ever went out), and every poison row is still
/// there, unpublished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hundred_poison_rows_at_the_head_do_not_slow_anyone_else() {
    let db = Db::fresh("outbox_poison").await;
    let consumer = Consumer::start("#").await;

    // 150 parcels with two unreadable rows each, the second chained behind the first.
    let mut poison = Vec::new();
    for i in 0..150 {
        let parcel = 900_000 + i;
        let first = db.insert_row(parcel, None, Some(UNREADABLE_HEADERS)).await;
        let second = db
            .insert_row(parcel, Some(first), Some(UNREADABLE_HEADERS))
            .await;
        poison.extend([first, second]);
    }

    let mut s = settings(&db, &consumer.exchange);
    // The shipped defaults: the old relay's global backoff would climb to 30 s.
    s.batch_size = 256;
    s.backoff_min = Duration::from_millis(200);
    s.backoff_max = Duration::from_secs(30);
    s.poll_interval = Duration::from_secs(1);
    let relay = Running::start(s, db.pool.clone());

    let events = db
        .spawn_writers(8, 10, Duration::from_millis(20))
        .await
        .expect("writers");
    let all: Vec<i64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("every normal event consumed", || async {
        consumer.has_all(&all)
    })
    .await;

    let received = consumer.received();
    let mut latencies: Vec<f64> = received
        .iter()
        .filter(|r| all.contains(&(r.envelope.seq as i64)))
        .map(|r| (r.at.timestamp_millis() - r.envelope.ts_ms) as f64 / 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let (p50, p95, max) = (
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        latencies[latencies.len() - 1],
    );
    println!(
        "commit -> queue with 300 poison rows at the head: p50 {p50:.3}s p95 {p95:.3}s max {max:.3}s ({} events)",
        latencies.len()
    );
    assert!(
        p95 <= 5.0,
        "normal events must not wait behind poison rows: p95 {p95:.3}s"
    );
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));

    // Every poison row is still there, in the outbox or in quarantine; none was published. (The
    // relay deletes what it published after the confirm, in the background: wait for that.)
    let (first, second): (Vec<i64>, Vec<i64>) = poison.chunks(2).map(|p| (p[0], p[1])).unzip();
    wait_until("the published rows deleted", || async {
        db.unsent().await.iter().all(|s| poison.contains(s))
    })
    .await;
    let in_outbox = db.unsent().await;
    let quarantined = db.quarantined().await;
    assert_eq!(
        (quarantined, in_outbox),
        (first, second),
        "the first row of each parcel is quarantined, the second waits behind it; none vanished"
    );
    let published: Vec<i64> = consumer
        .seqs()
        .into_iter()
        .filter(|s| poison.contains(s))
        .collect();
    assert!(published.is_empty(), "poison published: {published:?}");
    let reasons: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select reason from {} order by seq",
        db.quarantine()
    )))
    .fetch_all(&db.pool)
    .await
    .expect("reasons");
    assert!(reasons.iter().all(|r| r.contains("headers")), "{reasons:?}");

    assert_eq!(relay.snapshot().quarantined_total, 150);
    wait_until("the quarantine and the held rows show", || async {
        let live = relay.snapshot();
        live.quarantined == 150 && live.backlog == 150
    })
    .await;
    assert_eq!(relay.snapshot().consecutive_failures, 0);
    consumer.cleanup().await;
}

/// An operator moves a quarantined row back into the outbox (here after repairing it, with the
/// library's [`Operator::requeue`]): it is published normally, then its aggregate's later
/// events that waited behind it, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_row_moved_back_from_quarantine_is_published_and_unblocks_its_aggregate() {
    let db = Db::fresh("outbox_poison").await;
    let consumer = Consumer::start("#").await;
    let _relay = Running::start(settings(&db, &consumer.exchange), db.pool.clone());

    let parcel = 4242;
    let broken = db.insert_row(parcel, None, Some(UNREADABLE_HEADERS)).await;
    let next = db.insert_row(parcel, Some(broken), None).await;
    let other = db.append(&[event(1, "created")]).await[0];

    wait_until(
        "the broken row is quarantined, other parcels flow",
        || async { db.quarantined().await == [broken] && consumer.has_all(&[other]) },
    )
    .await;
    // Several polls later, the parcel's later (valid) event still waits behind it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(db.unsent().await, [next]);
    assert!(!consumer.has_all(&[next]), "must not overtake");

    // The operator repairs the row and moves it back.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "update {} set headers = null where seq = $1",
        db.quarantine()
    )))
    .bind(broken)
    .execute(&db.pool)
    .await
    .expect("repair");
    let mut tx = db.pool.begin().await.expect("begin");
    let moved = Operator::new(db.outbox.table())
        .requeue(&mut tx, &[broken])
        .await
        .expect("move back");
    tx.commit().await.expect("commit");
    assert_eq!(moved, [broken]);

    wait_until(
        "the released row and its successor are published",
        || async { consumer.has_all(&[broken, next]) },
    )
    .await;
    wait_until("the outbox is drained", || async {
        db.unsent().await.is_empty()
    })
    .await;
    assert!(db.quarantined().await.is_empty());
    assert_complete_and_ordered(
        &consumer.envelopes(),
        &chains_of(&[(1, other), (parcel, broken), (parcel, next)]),
    );
    consumer.cleanup().await;
}
