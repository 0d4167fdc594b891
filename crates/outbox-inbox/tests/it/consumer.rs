//! The consumer loop's batches, reconnects and counts, against the real RabbitMQ and
//! PostgreSQL: duplicates, reorders, a poison and a chain conflict inside one batch; a member
//! whose transaction fails; a connection the broker closes.

use std::{
    num::{NonZeroU16, NonZeroUsize},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use lapin::BasicProperties;
use outbox::wire;
use outbox_inbox::{
    Envelope, Handler, Inbox,
    amqp::{Consumer, Counts, DEATH_REASON_HEADER, Failover},
};
use sqlx::{PgConnection, PgPool};

use crate::{
    amqp::{Broker, header, relayed},
    support::{accept_all, consume_while, fresh_inbox, record_handled, shutdown_signal},
};

/// The aggregate of the gate event: its handler waits until the test opens the gate, so that
/// the deliveries behind it gather into one batch.
pub(crate) const GATE: i64 = 9;

/// One row per handled event with the transaction that handled it; a second row for one seq
/// fails the unique constraint. Fails `fail_once`'s seq the first time it sees it.
#[derive(Clone, Default)]
pub(crate) struct Log {
    pub(crate) gate: Arc<AtomicBool>,
    pub(crate) fail_once: Arc<Mutex<Option<i64>>>,
}

impl Handler for Log {
    type Error = String;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), String> {
        if e.aggregate_id == GATE {
            while !self.gate.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let fail = {
            let mut once = self.fail_once.lock().expect("lock");
            once.take_if(|s| *s == e.seq).is_some()
        };
        if fail {
            return Err(format!("the ledger refuses seq {} once", e.seq));
        }
        // The transaction id shows which deliveries were applied together.
        let insert = "insert into handled (aggregate_id, seq, tx) values ($1, $2, txid_current())";
        record_handled(conn, insert, e).await
    }
}

pub(crate) async fn setup() -> (Broker, PgPool, Inbox) {
    let mut b = Broker::start().await;
    let (pool, inbox, made) = fresh_inbox(
        "batch_inbox",
        "create table handled (n bigint generated always as identity, aggregate_id bigint,
                               seq bigint unique, tx bigint)",
    )
    .await;
    b.keep(made);
    (b, pool, inbox)
}

pub(crate) fn protobuf() -> BasicProperties {
    BasicProperties::default().with_content_type(wire::CONTENT_TYPE_PROTOBUF.into())
}

/// Each aggregate's handled seqs, in handling order, and the transactions that handled them.
pub(crate) async fn handled(pool: &PgPool, aggregate_id: i64) -> (Vec<i64>, Vec<i64>) {
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("select seq, tx from handled where aggregate_id = $1 order by n")
            .bind(aggregate_id)
            .fetch_all(pool)
            .await
            .expect("handled");
    rows.into_iter().unzip()
}

pub(crate) async fn handled_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from handled")
        .fetch_one(pool)
        .await
        .expect("count")
}

/// Waits (up to 30 s) until `done` says so.
pub(crate) async fn until(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..300 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within 30 s");
}

/// Ten deliveries for one batch: invoice 1's chain reversed with a duplicate, invoice 2's with
/// a duplicate and a poison message between, invoice 3's with a second "first" event.
pub(crate) async fn publish_ten(b: &Broker) {
    let bodies: [&[u8]; 10] = [
        &relayed(1, 3, Some(2)),
        &relayed(2, 11, None),
        &relayed(1, 2, Some(1)),
        b"not an envelope",
        &relayed(1, 1, None),
        &relayed(2, 11, None),
        &relayed(3, 21, None),
        &relayed(1, 2, Some(1)),
        &relayed(2, 12, Some(11)),
        &relayed(3, 22, None),
    ];
    for body in bodies {
        b.publish_with("invoice.paid", body, protobuf()).await;
    }
}

/// Once the gate event's batch is in flight (its handler waiting at `log`'s gate), publishes the
/// ten of [`publish_ten`], waits until the broker has handed them to the consumer, and opens the
/// gate: the ten are one batch behind it.
pub(crate) async fn ten_behind_the_gate(b: &Broker, log: &Log) {
    until("the gate's batch is in flight", async || {
        b.ready(&b.topology.queue).await == 0
    })
    .await;
    publish_ten(b).await;
    until("the ten are with the consumer", async || {
        b.ready(&b.topology.queue).await == 0
    })
    .await;
    // What the broker has sent reaches the consumer's batch within milliseconds, but a
    // loaded machine (the suite runs these tests side by side) may not poll it for longer.
    tokio::time::sleep(Duration::from_secs(2)).await;
    log.gate.store(true, Ordering::SeqCst);
}

/// Runs a consumer of batches of ten, one at a time, over a gate event and then the ten
/// deliveries of [`publish_ten`]: while the gate's handler waits, the ten gather into one batch
/// (full, it waits for the gate's to end). Stops once every event is handled and both dead
/// letters are in; returns the consumer's counts.
async fn consume_gate_then_ten(b: &Broker, pool: &PgPool, inbox: &Inbox, log: &Log) -> Counts {
    b.publish_with("invoice.paid", &relayed(GATE, 901, None), protobuf())
        .await;
    let consumer = Consumer::new(b.topology.clone())
        .with_batch(
            NonZeroUsize::new(10).expect("non-zero"),
            Duration::from_secs(5),
        )
        .with_prefetch(NonZeroU16::new(32).expect("non-zero"));
    consume_while(&consumer, (b, pool, inbox), || log.clone(), async {
        ten_behind_the_gate(b, log).await;
        until("all applied and two dead letters in", async || {
            handled_count(pool).await == 7 && b.ready(&b.topology.dead_letter_queue).await == 2
        })
        .await;
    })
    .await;
    consumer.counts()
}

/// The outcome both batch tests must reach, whether the batch committed whole or one by one.
async fn assert_applied_once_in_order(b: &Broker, pool: &PgPool, counts: Counts) {
    assert_eq!(handled(pool, 1).await.0, [1, 2, 3], "reversed, duplicated");
    assert_eq!(handled(pool, 2).await.0, [11, 12], "duplicated");
    assert_eq!(
        handled(pool, 3).await.0,
        [21],
        "the second first event is not applied"
    );
    assert_eq!(
        (counts.processed, counts.skipped, counts.held),
        (7, 2, 2),
        "the gate, 1-3, 11, 12 and 21 processed; two duplicates; 3 and 2 held"
    );
    assert_eq!((counts.dead_lettered, counts.reconnects), (2, 0));
    let mut reasons = Vec::new();
    while let Some(dead) = b.dead_letter_get().await {
        reasons.push(header(&dead.delivery.properties, DEATH_REASON_HEADER));
    }
    reasons.sort();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("chain conflict: aggregate 3 has processed up to seq 21"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains("not an outbox envelope"), "{reasons:?}");
    let _ = b.ch.close(200, "bye".into()).await;
    assert_eq!(
        b.ready(&b.topology.queue).await,
        0,
        "everything was settled"
    );
}

/// Consumes the gate then the ten events (with `fail_once`: the seq whose handler refuses it
/// once), asserts they are applied once in chain order, and returns the distinct transactions
/// that applied them.
async fn applied_in_transactions(fail_once: Option<i64>) -> (Broker, Vec<i64>) {
    let (b, pool, inbox) = setup().await;
    let log = Log::default();
    *log.fail_once.lock().expect("lock") = fail_once;
    let counts = consume_gate_then_ten(&b, &pool, &inbox, &log).await;
    assert_applied_once_in_order(&b, &pool, counts).await;
    let mut txs: Vec<i64> = Vec::new();
    for a in 1..=3 {
        txs.extend(handled(&pool, a).await.1);
    }
    txs.sort_unstable();
    txs.dedup();
    (b, txs)
}

#[tokio::test]
async fn one_batch_applies_duplicates_and_reorders_in_one_transaction_around_a_poison() {
    let (b, txs) = applied_in_transactions(None).await;
    assert_eq!(
        txs.len(),
        1,
        "the batch's six events in one transaction: {txs:?}"
    );
    b.cleanup().await;
}

#[tokio::test]
async fn a_batch_whose_transaction_fails_is_applied_one_by_one_with_the_same_outcome() {
    // The batch fails on seq 12 (its handler refuses it once): nothing of it commits, and
    // its members are applied one by one.
    let (b, txs) = applied_in_transactions(Some(12)).await;
    assert_eq!(
        txs.len(),
        4,
        "one by one: 1-3 (released together), 11, 21, 12: {txs:?}"
    );
    b.cleanup().await;
}

/// The broker's process id of the connection named `name` (`rabbitmqctl list_connections`).
fn connection_pid(name: &str) -> Option<String> {
    let out = std::process::Command::new("rabbitmqctl")
        .args([
            "-q",
            "list_connections",
            "--no-table-headers",
            "pid",
            "client_properties",
        ])
        .output()
        .expect("rabbitmqctl runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|line| line.contains(name))
        .and_then(|line| line.split_whitespace().next())
        .map(str::to_owned)
}

#[tokio::test]
async fn the_consumer_reconnects_after_the_broker_closes_its_connection() {
    let (b, pool, inbox) = setup().await;
    let name = outbox_testkit::unique("inbox_consumer");
    let consumer = Consumer::new(b.topology.clone())
        .with_batch(
            NonZeroUsize::new(8).expect("non-zero"),
            Duration::from_millis(5),
        )
        .with_connection_name(name.clone());
    // A dead address first: each (re)connect tries it, is refused, and takes the next.
    let brokers = Failover::new(format!(
        "amqp://guest:guest@127.0.0.1:1/%2f,{}",
        outbox_testkit::amqp_url()
    ));
    let log = Log::default();
    log.gate.store(true, Ordering::SeqCst);
    let (stop, stopped) = shutdown_signal();
    let run =
        consumer.run_reconnecting(&brokers, &pool, &inbox, accept_all, || log.clone(), stopped);
    let drive = async {
        for seq in 1..=3 {
            let prev = (seq > 1).then(|| seq - 1);
            b.publish_with("invoice.paid", &relayed(1, seq, prev), protobuf())
                .await;
        }
        until("the first three applied", async || {
            handled_count(&pool).await == 3
        })
        .await;
        let named = name.clone();
        let pid = tokio::task::spawn_blocking(move || connection_pid(&named))
            .await
            .expect("join")
            .expect("the consumer's connection is listed under its name");
        let closed = tokio::task::spawn_blocking(move || {
            std::process::Command::new("rabbitmqctl")
                .args([
                    "-q",
                    "close_connection",
                    &pid,
                    "the consumer test closes it",
                ])
                .status()
                .expect("rabbitmqctl runs")
        })
        .await
        .expect("join");
        assert!(closed.success(), "close_connection");
        for seq in 4..=6 {
            b.publish_with("invoice.paid", &relayed(1, seq, Some(seq - 1)), protobuf())
                .await;
        }
        until("the next three applied on a new connection", async || {
            handled_count(&pool).await == 6
        })
        .await;
        let _ = stop.send(());
    };
    tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(run, drive) })
        .await
        .expect("the consumer stops at shutdown");
    assert_eq!(handled(&pool, 1).await.0, [1, 2, 3, 4, 5, 6]);
    let counts = consumer.counts();
    // A delivery whose ack the close overtook comes back and is skipped as a duplicate: the
    // skips are not asserted, every other figure is.
    assert_eq!(
        (
            counts.processed,
            counts.held,
            counts.dead_lettered,
            counts.reconnects
        ),
        (6, 0, 0, 1),
        "every event processed once; one reconnect"
    );
    assert_eq!(b.ready(&b.topology.queue).await, 0, "everything was acked");
    b.cleanup().await;
}
