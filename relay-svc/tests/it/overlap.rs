//! The overlapped cycle: the next batch is read while the current one is confirmed, and the
//! confirmed seqs are deleted while the next batch is published. Its failure paths: an order
//! whose events span overlapping batches, a delete that fails, a broker cut mid-pipeline.

use std::{collections::HashMap, time::Duration};

use outbox_kit::testing::{self, Proxy};
use outbox_proto::orders::v1::OrderStatus;
use sqlx::PgPool;

use crate::common::*;

/// Inserts an outbox row as a writer would (raw SQL: no NOTIFY); returns its seq.
async fn insert_row(
    pool: &PgPool,
    order: i64,
    event_type: &str,
    prev_seq: Option<i64>,
    payload: &[u8],
) -> i64 {
    sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, prev_seq, payload) \
         values ($1, $2, $3, $4) returning seq",
    )
    .bind(order)
    .bind(event_type)
    .bind(prev_seq)
    .bind(payload)
    .fetch_one(pool)
    .await
    .expect("insert outbox row")
}

/// How often each seq reached the consumer.
fn copies(consumer: &Consumer) -> HashMap<u64, usize> {
    let mut n = HashMap::new();
    for s in consumer.seqs() {
        *n.entry(s).or_default() += 1;
    }
    n
}

fn assert_once(consumer: &Consumer) {
    let twice: Vec<u64> = copies(consumer)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(s, _)| s)
        .collect();
    assert!(twice.is_empty(), "published more than once: {twice:?}");
}

/// Order 1's events span two batches that overlap (the second is read while the first is
/// confirmed); its second event can never be encoded. The read-ahead must leave order 1 out
/// entirely: had it read order 1's third event, that event would be published although the
/// second one went to quarantine (a gap in the order's chain). Order 2, spread over several
/// batches with nothing wrong, arrives complete and in order, each event once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_spanning_overlapping_batches_never_overtakes_its_own_events() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let pool = &orders.pool;
    let good = payload(1, OrderStatus::Paid, OrderStatus::Pending);
    let created = "OrderCreated";
    let changed = "OrderStatusChanged";

    // Batch 1 (BATCH_SIZE 4): order 1's first two events and two fillers; order 1's third event
    // is the oldest row after it.
    let one_1 = insert_row(pool, 1, created, None, &good).await;
    let mut fillers = vec![
        insert_row(pool, 1_000, created, None, &good).await,
        insert_row(pool, 1_001, created, None, &good).await,
    ];
    let one_2 = insert_row(pool, 1, changed, Some(one_1), b"\xff\xff not protobuf").await;
    let one_3 = insert_row(pool, 1, changed, Some(one_2), &good).await;
    // Order 2's chain, interleaved with more fillers, spans the batches that follow.
    let mut two = Vec::new();
    for i in 0..12 {
        let prev = two.last().copied();
        let kind = if prev.is_none() { created } else { changed };
        two.push(insert_row(pool, 2, kind, prev, &good).await);
        fillers.push(insert_row(pool, 1_002 + i, created, None, &good).await);
    }

    let mut cfg = relay_config(&orders.database_url, &testing::amqp_url(), &exchange);
    cfg.batch_size = 4;
    let _relay = Relay::start(cfg).await;

    let mut want: Vec<u64> = fillers.iter().map(|s| *s as u64).collect();
    want.extend(two.iter().map(|s| *s as u64));
    want.push(one_1 as u64);
    wait_until("every healthy event is consumed", || async {
        consumer.has_all(&want)
    })
    .await;
    wait_until("only order 1's third event is left", || async {
        orders.outbox_seqs().await == vec![one_3]
    })
    .await;
    // Give a wrong read-ahead every chance to publish it.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let seqs = consumer.seqs();
    assert!(
        !seqs.contains(&(one_3 as u64)),
        "order 1's third event was published while its second one is in quarantine"
    );
    assert!(!seqs.contains(&(one_2 as u64)));
    let quarantined: Vec<i64> = sqlx::query_scalar("select seq from outbox_quarantine")
        .fetch_all(pool)
        .await
        .expect("quarantine");
    assert_eq!(quarantined, vec![one_2]);
    assert_once(&consumer);
    let mut chains = chains_of(
        &fillers
            .iter()
            .enumerate()
            .map(|(i, s)| (1_000 + i as i64, *s as u64))
            .collect::<Vec<_>>(),
    );
    chains.insert(2, two.iter().map(|s| *s as u64).collect());
    chains.insert(1, vec![one_1 as u64]);
    assert_complete_and_ordered(&consumer.snapshot(), &chains);
    consumer.cleanup().await;
}

/// Makes every delete from the outbox fail while `relay_test_refuse_delete.on` is true.
async fn refuse_deletes(pool: &PgPool) {
    for sql in [
        "create table relay_test_refuse_delete (on_ boolean not null)",
        "insert into relay_test_refuse_delete values (true)",
        "create function relay_test_refuse_delete() returns trigger language plpgsql as $$ \
         begin \
           if (select on_ from relay_test_refuse_delete) then \
             raise exception 'test: the outbox refuses deletes'; \
           end if; \
           return null; \
         end $$",
        "create trigger relay_test_refuse_delete before delete on outbox \
         for each statement execute function relay_test_refuse_delete()",
    ] {
        sqlx::query(sql).execute(pool).await.expect(sql);
    }
}

/// A confirmed batch whose delete fails is neither published again nor lost, and does not hold
/// back its orders: the seqs are left out of the reads and deleted once the database takes the
/// delete. (The relay before the overlap failed the cycle and published the batch again.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_delete_publishes_nothing_twice_and_holds_back_nothing() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    refuse_deletes(&orders.pool).await;
    let relay = Relay::start(relay_config(
        &orders.database_url,
        &testing::amqp_url(),
        &exchange,
    ))
    .await;

    let mut events = Vec::new();
    for id in 1..=4 {
        events.push((id, orders.upsert(id, OrderStatus::Pending).await));
    }
    let first: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("the first events are consumed", || async {
        consumer.has_all(&first)
    })
    .await;
    // Time for several retries of the delete (and, for a relay that re-reads them, re-sends).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        orders.outbox_seqs().await.len(),
        4,
        "the deletes fail: the rows stay"
    );

    for id in 1..=4 {
        events.push((id, orders.upsert(id, OrderStatus::Paid).await));
    }
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until(
        "the orders' next events are consumed while the deletes fail",
        || async { consumer.has_all(&all) },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_once(&consumer);
    assert_eq!(orders.outbox_seqs().await.len(), 8);

    sqlx::query("update relay_test_refuse_delete set on_ = false")
        .execute(&orders.pool)
        .await
        .expect("allow deletes");
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    wait_until("the backlog reads zero", || async {
        relay.status().await.backlog == 0
    })
    .await;
    assert_once(&consumer);
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

/// The broker connection is cut while a batch is being confirmed and the next one has been read:
/// the relay streams full batches through a proxy that first stalls (the wave in flight waits
/// for its confirms, the read-ahead completes meanwhile) and is then cut. Nothing is lost, and no
/// order's events reach the consumer out of chain order: the read-ahead of the broken cycle is
/// dropped and read again after the batch that was in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broker_cut_mid_pipeline_loses_and_reorders_nothing() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let events = preload(&orders.pool, 6_000, 100).await;
    let broker = Proxy::start(&testing::amqp_addr()).await.expect("proxy");
    let stall = StallProxy::start(&broker.addr().to_string()).await;
    let amqp_url = testing::amqp_url_via(stall.addr());
    let relay = Relay::start(relay_config(&orders.database_url, &amqp_url, &exchange)).await;

    wait_until("the drain is under way", || async {
        consumer.seqs().len() >= 1_000
    })
    .await;
    stall.stall();
    // The wave in flight gets no confirm; the next batch's read (PostgreSQL only) completes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    broker.cut();
    wait_until("the relay sees the outage", || async {
        relay.status().await.consecutive_failures > 0
    })
    .await;
    let left = orders.outbox_seqs().await.len();
    assert!(left > 0, "the cut landed before the drain ended");
    stall.resume();
    broker.restore();

    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("everything consumed after the broker is back", || async {
        consumer.has_all(&all)
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    let dups = copies(&consumer).values().filter(|n| **n > 1).count();
    println!(
        "cut with {left} rows left; {dups} events arrived twice (the batch in flight at the cut)"
    );
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}
