//! Batches: several deliveries applied in ONE transaction, then acked together. Each test builds
//! a batch it knows: with one batch in flight at a time (`CONSUMER_CONCURRENCY=1`), a first event
//! waits for an advisory lock the test holds on its order (the "gate") while the test publishes
//! the batch's deliveries; once the broker has handed them all over, the gate opens and they are
//! processed as the next batch. Mails queued by one transaction share `queued_at` (`now()` is the
//! transaction's start), which shows the batch committed as one.

use std::{collections::HashMap, time::Duration};

use lapin::{BasicProperties, Connection, ConnectionProperties};
use outbox_proto::orders::{events::v1::OrderEvent, v1::OrderStatus};
use prost::Message;
use rand::{Rng, SeedableRng, seq::SliceRandom};
use sqlx::{Connection as _, PgConnection};

use crate::common::{
    self, Names, Publisher, TestMail, changed, config, created, eventually, start,
};

const EMAIL: &str = "batch@example.jp";
/// The order whose lock holds the first batch back.
const GATE: i64 = 900;

/// Messages ready (not yet delivered to any consumer) in `queue`.
async fn ready(queue: &str) -> u32 {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let ready = outbox_testkit::ready_messages(&ch, queue).await;
    outbox_support::amqp::close(&conn, "bye").await;
    ready
}

/// The held-back first batch: the test's session holds order [`GATE`]'s lock.
struct Gate {
    conn: PgConnection,
}

impl Gate {
    /// Takes the lock, publishes an event of order [`GATE`] and waits until its batch waits for
    /// the lock.
    async fn close(names: &Names, publisher: &Publisher, seq: u64) -> Self {
        let mut conn = connect(names).await;
        sqlx::query("select pg_advisory_lock($1)")
            .bind(GATE)
            .execute(&mut conn)
            .await
            .expect("lock");
        publisher.proto(&created(seq, GATE, EMAIL)).await;
        let watch = sqlx::PgPool::connect(&names.database_url)
            .await
            .expect("connect");
        eventually("the first batch waits for the gate", 60, || {
            let watch = &watch;
            async move {
                let waiting: i64 = sqlx::query_scalar(
                    "select count(*) from pg_locks
                      where locktype = 'advisory' and not granted
                        and database = (select oid from pg_database
                                         where datname = current_database())",
                )
                .fetch_one(watch)
                .await
                .ok()?;
                (waiting > 0).then_some(())
            }
        })
        .await;
        watch.close().await;
        Self { conn }
    }

    /// Publishes `events` (and the gate's event, seq 1) behind a closed gate, then opens it: they
    /// are delivered together as the second batch.
    async fn one_batch(names: &Names, events: &[OrderEvent]) {
        let publisher = Publisher::connect(&names.exchange).await;
        let gate = Self::close(names, &publisher, 1).await;
        publisher.protos(events).await;
        gate.open(names).await;
    }

    /// Waits until the broker has delivered everything published so far, then lets the first
    /// batch go: what was delivered meanwhile is the next batch.
    async fn open(mut self, names: &Names) {
        eventually("every message delivered", 60, || async {
            (ready(&names.queue).await == 0).then_some(())
        })
        .await;
        // Deliveries reach the consumer loop shortly after the broker counts them out.
        tokio::time::sleep(Duration::from_millis(300)).await;
        sqlx::query("select pg_advisory_unlock($1)")
            .bind(GATE)
            .execute(&mut self.conn)
            .await
            .expect("unlock");
    }
}

/// Stops the service and checks that it settled (acked or dead-lettered) every delivery: none
/// comes back once the consumer is gone.
async fn stop_settled(svc: TestMail, names: &Names) {
    svc.stop().await;
    assert_eq!(ready(&names.queue).await, 0, "every delivery was settled");
    names.cleanup().await;
}

/// A session of the test's own on the service's database.
async fn connect(names: &Names) -> PgConnection {
    PgConnection::connect(&names.database_url)
        .await
        .expect("connect")
}

/// Transactions that queued the mails of `seqs` (distinct `queued_at`).
async fn transactions(svc: &TestMail, seqs: &[i64]) -> i64 {
    sqlx::query_scalar("select count(distinct queued_at) from mails where seq = any($1)")
        .bind(seqs)
        .fetch_one(&svc.pool)
        .await
        .expect("query")
}

fn one_at_a_time(names: &Names) -> mail_svc::Config {
    let mut cfg = config(names);
    cfg.consumer_concurrency = 1;
    cfg
}

#[tokio::test]
async fn a_poison_message_and_a_chain_conflict_inside_a_batch_are_dead_lettered_alone() {
    let names = Names::new();
    let svc = start(one_at_a_time(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    let gate = Gate::close(&names, &publisher, 1).await;

    publisher
        .protos(&[
            created(2, 1, EMAIL),
            changed(3, 2, 1, OrderStatus::Paid, EMAIL),
        ])
        .await;
    // Not protobuf: judged before the transaction.
    publisher
        .raw(
            "order.created",
            b"\xff\xff not an event",
            BasicProperties::default()
                .with_content_type("application/x-protobuf".into())
                .with_message_id("garbage".into())
                .with_delivery_mode(2),
        )
        .await;
    publisher
        .protos(&[
            created(4, 2, EMAIL),
            // A second OrderCreated for order 1: a chain conflict, found inside the transaction.
            created(5, 1, EMAIL),
            changed(6, 4, 2, OrderStatus::Paid, EMAIL),
        ])
        .await;
    gate.open(&names).await;

    let dead = common::take_dead_letters(&names.dead_letter_queue(), 2).await;
    let reasons: HashMap<String, String> = dead
        .iter()
        .map(|d| (d.message_id.clone().unwrap_or_default(), d.reason.clone()))
        .collect();
    assert!(reasons.contains_key("garbage"), "{reasons:?}");
    assert!(
        reasons
            .get("5")
            .is_some_and(|r| r.contains("chain conflict")),
        "{reasons:?}"
    );
    let s = svc
        .status_once("the batch processed", |s| {
            s.processed == 5 && s.dead_lettered == 2
        })
        .await;
    assert_eq!(s.skipped, 0);
    assert_eq!(svc.seqs(1).await, vec![2, 3]);
    assert_eq!(svc.seqs(2).await, vec![4, 6]);
    assert_eq!(
        transactions(&svc, &[2, 3, 4, 6]).await,
        1,
        "the valid events committed in one transaction, poison and conflict notwithstanding"
    );
    // Everything was settled: nothing comes back when the consumer goes away.
    stop_settled(svc, &names).await;
}

#[tokio::test]
async fn several_events_of_one_order_out_of_order_in_one_batch_are_applied_in_chain_order() {
    let names = Names::new();
    let svc = start(one_at_a_time(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    // Held before the batch (stored in held_events): the batch releases it.
    publisher
        .proto(&changed(22, 21, 6, OrderStatus::Paid, EMAIL))
        .await;
    eventually("seq 22 held", 60, || async {
        (svc.status().await.held == 1).then_some(())
    })
    .await;
    let deliveries = [
        changed(13, 12, 5, OrderStatus::Shipped, EMAIL), // hold (waits for 12)
        changed(22, 21, 6, OrderStatus::Paid, EMAIL),    // held already: skip
        changed(12, 11, 5, OrderStatus::Paid, EMAIL),    // hold (waits for 11)
        changed(13, 12, 5, OrderStatus::Shipped, EMAIL), // held earlier in this batch: skip
        created(11, 5, EMAIL),                           // process, release 12 then 13
        created(21, 6, EMAIL),                           // process, release the stored 22
        changed(14, 13, 5, OrderStatus::Delivered, EMAIL), // process
        created(11, 5, EMAIL),                           // processed: skip
        changed(23, 22, 6, OrderStatus::Shipped, EMAIL), // process
    ];
    Gate::one_batch(&names, &deliveries).await;

    let s = svc
        .status_once("the batch processed", |s| s.processed == 8 && s.held == 0)
        .await;
    assert_eq!(s.skipped, 3, "22 (held), 13 (held in the batch), 11 (sent)");
    assert_eq!(s.dead_lettered, 0);
    assert_eq!(svc.seqs(5).await, vec![11, 12, 13, 14]);
    assert_eq!(svc.seqs(6).await, vec![21, 22, 23]);
    assert_eq!(
        transactions(&svc, &[11, 12, 13, 14, 21, 22, 23]).await,
        1,
        "one transaction"
    );
    // The batch's own holds were released in the batch: nothing is left waiting.
    let held: i64 = sqlx::query_scalar("select count(*) from held_events")
        .fetch_one(&svc.pool)
        .await
        .expect("query");
    assert_eq!(held, 0);
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_database_error_in_the_middle_of_a_batch_retries_the_whole_batch() {
    let names = Names::new();
    let svc = start(one_at_a_time(&names)).await;
    let mut db = connect(&names).await;
    // Every write of a watermark fails with 55P03 (lock not available: the database's trouble,
    // not the events'): the batch's mails are inserted first, in the same transaction, and must
    // be rolled back.
    outbox_testkit::install_fault(&mut db, "insert or update on order_progress", "55P03").await;
    let publisher = Publisher::connect(&names.exchange).await;
    let mut seqs = Vec::new();
    for order in 1..=10 {
        let seq = order as u64 * 10;
        publisher
            .protos(&[
                created(seq, order, EMAIL),
                changed(seq + 1, seq, order, OrderStatus::Paid, EMAIL),
            ])
            .await;
        seqs.extend([seq as i64, seq as i64 + 1]);
    }
    // Failing: at least a few attempts, and none of their mail inserts survived.
    eventually("the batch retried", 60, || async {
        let retries = common::metric(svc.metrics_addr, "mail_db_retries_total").await?;
        (retries >= 3.0).then_some(())
    })
    .await;
    let mails: i64 = sqlx::query_scalar("select count(*) from mails")
        .fetch_one(&mut db)
        .await
        .expect("count");
    assert_eq!(mails, 0, "a failed batch leaves no mail behind");
    sqlx::query("update fault set on_ = false")
        .execute(&mut db)
        .await
        .expect("heal");

    let s = svc
        .status_once("every event processed", |s| s.processed == 20)
        .await;
    assert_eq!(s.dead_lettered, 0, "a database error dead-letters nothing");
    assert_eq!(s.skipped, 0);
    for order in 1..=10 {
        let seq = order as u64 * 10;
        assert_eq!(svc.seqs(order).await, vec![seq, seq + 1]);
    }
    println!(
        "20 events committed in {} transactions",
        transactions(&svc, &seqs).await
    );
    stop_settled(svc, &names).await;
}

#[tokio::test]
async fn a_data_error_in_a_batch_dead_letters_only_the_guilty_event() {
    let names = Names::new();
    let svc = start(one_at_a_time(&names)).await;
    let mut db = connect(&names).await;
    // Seq 7's mail cannot be stored (22023, a data exception: the event's own data).
    for sql in [
        "create function bad_value() returns trigger language plpgsql as $$
         begin raise exception 'bad value' using errcode = '22023'; end $$",
        "create trigger bad_value before insert on mails
           for each row when (new.seq = 7) execute function bad_value()",
    ] {
        sqlx::query(sql).execute(&mut db).await.expect("install");
    }
    Gate::one_batch(
        &names,
        &[
            created(2, 1, EMAIL),
            changed(3, 2, 1, OrderStatus::Paid, EMAIL),
            created(7, 3, EMAIL),
            created(8, 4, EMAIL),
            changed(9, 3, 1, OrderStatus::Shipped, EMAIL),
        ],
    )
    .await;

    let dead = common::take_dead_letters(&names.dead_letter_queue(), 1).await;
    assert_eq!(dead[0].message_id.as_deref(), Some("7"));
    assert!(dead[0].reason.contains("cannot be stored"), "{dead:?}");
    let s = svc
        .status_once("the others processed", |s| {
            s.processed == 5 && s.dead_lettered == 1
        })
        .await;
    assert_eq!(s.skipped, 0);
    assert_eq!(svc.seqs(1).await, vec![2, 3, 9]);
    assert_eq!(svc.seqs(3).await, Vec::<u64>::new());
    assert_eq!(svc.seqs(4).await, vec![8]);
    stop_settled(svc, &names).await;
}

#[tokio::test]
async fn a_crash_between_the_commit_and_the_ack_of_a_batch_redelivers_it_and_it_is_skipped() {
    let names = Names::new();
    let mut crashing = one_at_a_time(&names);
    crashing.hooks.crash_after_commit_seq = Some(4);
    let first = start(crashing).await;
    Gate::one_batch(
        &names,
        &[
            created(2, 1, EMAIL),
            changed(3, 2, 1, OrderStatus::Paid, EMAIL),
            created(4, 2, EMAIL),
            changed(5, 4, 2, OrderStatus::Paid, EMAIL),
        ],
    )
    .await;

    let mut consuming = first.consuming.clone();
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| !*c))
        .await
        .expect("the consumer crashed")
        .expect("state");
    assert_eq!(
        first.seqs(1).await,
        vec![2, 3],
        "committed before the crash"
    );
    assert_eq!(
        first.seqs(2).await,
        vec![4, 5],
        "committed before the crash"
    );
    assert_eq!(transactions(&first, &[2, 3, 4, 5]).await, 1, "one batch");
    assert_eq!(first.status().await.skipped, 0);

    // The whole batch comes back (none of it was acked) and every delivery is skipped.
    let second = start(config(&names)).await;
    let s = second
        .status_once("the redelivered batch skipped", |s| s.skipped == 4)
        .await;
    assert_eq!(s.processed, 5, "no mail twice");
    assert_eq!(s.dead_lettered, 0);
    assert_eq!(second.seqs(1).await, vec![2, 3]);
    assert_eq!(second.seqs(2).await, vec![4, 5]);
    first.stop().await;
    second.stop().await;
    names.cleanup().await;
}

/// Deadlocks detected in the database so far (PostgreSQL's statistics).
async fn deadlocks(names: &Names) -> i64 {
    let mut conn = connect(names).await;
    sqlx::query_scalar(
        "select deadlocks::bigint from pg_stat_database where datname = current_database()",
    )
    .fetch_one(&mut conn)
    .await
    .expect("pg_stat_database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_batching_the_same_orders_events_never_deadlock() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let names = Names::new();
    // The queue is filled before either instance consumes, so both take full batches, each
    // holding events of most of the few orders, in random order.
    let (conn, _) = names.declare().await;
    outbox_support::amqp::close(&conn, "bye").await;

    const ORDERS: i64 = 12;
    const LENGTH: u64 = 40;
    let mut events: Vec<OrderEvent> = Vec::new();
    let mut seq = 0;
    let mut last: HashMap<i64, u64> = HashMap::new();
    for _ in 0..LENGTH {
        for order in 1..=ORDERS {
            seq += 1;
            events.push(match last.insert(order, seq) {
                None => created(seq, order, EMAIL),
                Some(prev) => changed(seq, prev, order, OrderStatus::Paid, EMAIL),
            });
        }
    }
    let total = events.len();
    let mut deliveries = events.clone();
    for ev in &events {
        if rng.random_bool(0.3) {
            deliveries.push(ev.clone());
        }
    }
    deliveries.shuffle(&mut rng);
    let duplicates = deliveries.len() - total;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.pipelined(&deliveries).await;

    // Create and migrate the database first: two instances starting together would both try to
    // create it.
    let pool = outbox_kit::db::connect(&names.database_url, 2)
        .await
        .expect("database");
    mail_svc::db::MIGRATOR.run(&pool).await.expect("migrate");
    pool.close().await;
    let (a, b) = tokio::join!(start(config(&names)), start(config(&names)));
    a.handled_all(total, duplicates).await;
    for order in 1..=ORDERS {
        let seqs = a.seqs(order).await;
        let chain: Vec<u64> = (0..LENGTH)
            .map(|i| i * ORDERS as u64 + order as u64)
            .collect();
        assert_eq!(
            seqs, chain,
            "order {order}: one mail per event, in chain order"
        );
    }
    let all: Vec<i64> = (1..=total as i64).collect();
    let txs = transactions(&a, &all).await;
    println!(
        "{total} events, {} deliveries, mails queued by {txs} transactions",
        deliveries.len()
    );
    assert!(txs < total as i64 / 2, "the instances worked in batches");
    a.stop().await;
    b.stop().await;
    // Statistics reach pg_stat_database when the sessions end (the pools are closed now).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        deadlocks(&names).await,
        0,
        "batches lock their orders in id order: no deadlock"
    );
    names.cleanup().await;
}

#[tokio::test]
async fn a_corrupt_held_event_holds_back_only_its_order_not_the_batch() {
    let names = Names::new();
    let svc = start(one_at_a_time(&names)).await;
    let mut db = connect(&names).await;
    // Seq 5 of order 3 waits for seq 4, but its stored bytes are not an event (a manual edit).
    sqlx::query(
        "insert into held_events (seq, order_id, prev_seq, event) values (5, 3, 4, 'garbage')",
    )
    .execute(&mut db)
    .await
    .expect("corrupt hold");
    Gate::one_batch(
        &names,
        &[
            created(10, 8, EMAIL),
            created(4, 3, EMAIL),
            created(11, 9, EMAIL),
        ],
    )
    .await;

    // The batch commits without order 3; its event is retried on its own (not dead-lettered).
    eventually("the rest of the batch processed", 60, || async {
        (svc.seqs(8).await == [10] && svc.seqs(9).await == [11]).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(svc.seqs(3).await, Vec::<u64>::new(), "order 3 waits");
    assert_eq!(svc.status().await.dead_lettered, 0);

    // Repaired: seq 4 goes through and releases seq 5.
    sqlx::query("update held_events set event = $1 where seq = 5")
        .bind(changed(5, 4, 3, OrderStatus::Paid, EMAIL).encode_to_vec())
        .execute(&mut db)
        .await
        .expect("repair");
    eventually("order 3 processed after the repair", 60, || async {
        (svc.seqs(3).await == [4, 5]).then_some(())
    })
    .await;
    let s = svc.status().await;
    assert_eq!((s.processed, s.held, s.dead_lettered), (5, 0, 0));
    stop_settled(svc, &names).await;
}
