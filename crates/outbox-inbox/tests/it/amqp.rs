//! The `amqp` feature against the real RabbitMQ: dead letters with their reason, a dead-letter
//! queue someone deleted, acks after commit, and the consumer loop (with PostgreSQL).

use std::{
    num::{NonZeroU16, NonZeroUsize},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection,
    message::Delivery,
    options::{
        BasicConsumeOptions, BasicGetOptions, BasicPublishOptions, BasicQosOptions,
        ExchangeDeleteOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use outbox::wire;
use outbox_inbox::{
    Envelope, Handler,
    amqp::{
        Consumer, DEATH_REASON_HEADER, DeadLetterChannel, MAX_REASON_BYTES,
        ORIGINAL_ROUTING_KEY_HEADER, Topology, Unsettled, ack_together,
    },
};
use prost::Message;
use sqlx::PgConnection;

use crate::support::{accept_all, consume_while, fresh_inbox, record_handled};

pub(crate) struct Broker {
    pub(crate) conn: Connection,
    pub(crate) ch: Channel,
    pub(crate) topology: Topology,
    /// The topology's names, and the test's database once [`Broker::keep`] took it: removed when
    /// the test ends, passed or failed.
    made: Vec<outbox_testkit::Made>,
}

impl Broker {
    pub(crate) async fn start() -> Self {
        // Confirmed publishes: once one returns, the queue holds the message, and a test that
        // waits for the queue to drain does not see it empty before the message got there.
        let (conn, ch) = outbox_testkit::confirming_channel().await;
        let (exchange, queue) = (
            outbox_testkit::unique("inbox_x"),
            outbox_testkit::unique("inbox_q"),
        );
        let made = outbox_testkit::Made::new();
        made.mail_topology(&exchange, &queue);
        let topology = Topology::new(&exchange, &queue, "invoice.#");
        topology.declare(&ch).await.expect("declare");
        Self {
            conn,
            ch,
            topology,
            made: vec![made],
        }
    }

    /// Keeps `made` (the test's database) until the broker goes.
    pub(crate) fn keep(&mut self, made: outbox_testkit::Made) {
        self.made.push(made);
    }

    pub(crate) async fn publish(&self, key: &str, body: &[u8]) {
        self.publish_with(
            key,
            body,
            BasicProperties::default().with_message_id("7".into()),
        )
        .await;
    }

    pub(crate) async fn publish_with(&self, key: &str, body: &[u8], properties: BasicProperties) {
        self.ch
            .basic_publish(
                self.topology.exchange.as_str().into(),
                key.into(),
                BasicPublishOptions::default(),
                body,
                properties,
            )
            .await
            .expect("publish")
            .await
            .expect("sent");
    }

    /// The next `n` deliveries of the queue, unacked.
    pub(crate) async fn take(&self, n: usize) -> Vec<Delivery> {
        self.ch
            .basic_qos(n as u16, BasicQosOptions::default())
            .await
            .expect("qos");
        let mut consumer = self
            .ch
            .basic_consume(
                self.topology.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("consume");
        let mut out = Vec::new();
        while out.len() < n {
            let d = tokio::time::timeout(Duration::from_secs(10), consumer.next())
                .await
                .expect("a delivery in time")
                .expect("stream")
                .expect("delivery");
            out.push(d);
        }
        out
    }

    /// Messages ready in `queue` (passive declare on a fresh channel).
    pub(crate) async fn ready(&self, queue: &str) -> u32 {
        let ch = self.conn.create_channel().await.expect("channel");
        let ready = outbox_testkit::ready_messages(&ch, queue).await;
        let _ = ch.close(200, "bye".into()).await;
        ready
    }

    pub(crate) async fn dead_letter_get(&self) -> Option<lapin::message::BasicGetMessage> {
        let ch = self.conn.create_channel().await.expect("channel");
        ch.basic_get(
            self.topology.dead_letter_queue.as_str().into(),
            BasicGetOptions { no_ack: true },
        )
        .await
        .expect("get")
    }

    /// Checks that no delivery is left in the queue (`what`: why none should be), then
    /// [`cleanup`](Self::cleanup).
    pub(crate) async fn cleanup_settled(self, what: &str) {
        assert_eq!(self.ready(&self.topology.queue).await, 0, "{what}");
        self.cleanup().await;
    }

    pub(crate) async fn cleanup(self) {
        let ch = self.conn.create_channel().await.expect("channel");
        let t = &self.topology;
        for q in [&t.queue, &t.dead_letter_queue] {
            let _ = ch
                .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        for x in [&t.exchange, &t.dead_letter_exchange] {
            let _ = ch
                .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
                .await;
        }
        outbox_support::amqp::close(&self.conn, "bye").await;
    }
}

pub(crate) fn header(props: &BasicProperties, name: &str) -> String {
    match props.headers().as_ref().and_then(|h| h.inner().get(name)) {
        Some(AMQPValue::LongString(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        other => panic!("{name}: {other:?}"),
    }
}

#[tokio::test]
async fn a_dead_letter_keeps_the_message_and_says_why_in_a_bounded_header() {
    let b = Broker::start().await;
    b.publish("invoice.issued", b"not an invoice").await;
    let d = b.take(1).await.remove(0);
    let dl = DeadLetterChannel::new(&b.conn, &b.topology);
    dl.open().await.expect("open");
    let reason = format!("undecodable: {}", "x".repeat(5000));
    dl.publish(&d, &reason).await.expect("dead-lettered");
    ack_together(&Unsettled::default(), std::slice::from_ref(&d))
        .await
        .expect("ack");

    let got = b.dead_letter_get().await.expect("a dead letter");
    assert_eq!(got.delivery.data, b"not an invoice");
    let props = &got.delivery.properties;
    let why = header(props, DEATH_REASON_HEADER);
    assert!(
        why.starts_with("undecodable: xxx") && why.len() <= MAX_REASON_BYTES,
        "{why}"
    );
    assert_eq!(header(props, ORIGINAL_ROUTING_KEY_HEADER), "invoice.issued");
    assert_eq!(props.message_id().as_ref().map(|m| m.as_str()), Some("7"));
    dl.close().await;
    let _ = b.ch.close(200, "bye".into()).await;
    b.cleanup_settled("the original was acked").await;
}

#[tokio::test]
async fn a_deleted_dead_letter_queue_is_declared_again_and_the_copy_lands() {
    let b = Broker::start().await;
    b.publish("invoice.paid", b"poison").await;
    let d = b.take(1).await.remove(0);
    let dl = DeadLetterChannel::new(&b.conn, &b.topology);
    dl.open().await.expect("open");
    // Someone deletes the dead-letter queue: the first publish comes back unroutable, the
    // channel is reopened with the queue declared again, and the second lands.
    let admin = b.conn.create_channel().await.expect("channel");
    admin
        .queue_delete(
            b.topology.dead_letter_queue.as_str().into(),
            QueueDeleteOptions::default(),
        )
        .await
        .expect("delete");
    dl.publish(&d, "poison").await.expect("dead-lettered");
    let got = b.dead_letter_get().await.expect("a dead letter");
    assert_eq!(
        header(&got.delivery.properties, DEATH_REASON_HEADER),
        "poison"
    );
    dl.close().await;
    b.cleanup().await;
}

#[tokio::test]
async fn acks_together_settle_exactly_the_batch() {
    let b = Broker::start().await;
    for i in 0..5 {
        b.publish("invoice.issued", format!("{i}").as_bytes()).await;
    }
    let batch = b.take(5).await;
    let unsettled = Unsettled::default();
    for d in &batch {
        unsettled.delivered(d.delivery_tag);
    }
    // The last two first (one ack each: lower tags are unsettled), then the rest (one multiple).
    ack_together(&unsettled, &batch[3..]).await.expect("ack");
    ack_together(&unsettled, &batch[..3]).await.expect("ack");
    // An ack of a tag acked already (a `multiple` that reached too far) closes the channel.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(b.ch.status().connected(), "every tag acked exactly once");
    let _ = b.ch.close(200, "bye".into()).await;
    assert_eq!(b.ready(&b.topology.queue).await, 0, "nothing comes back");
    b.cleanup().await;
}

/// The consumer's handler in these tests: one row per handled event, in handling order (a
/// second row for one seq fails the unique constraint), and the most handlers running at once.
#[derive(Clone)]
struct Record {
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Handler for Record {
    type Error = sqlx::Error;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), sqlx::Error> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        // Long enough for the other slots' transactions to overlap this one.
        let slept = sqlx::query("select pg_sleep(0.02)")
            .execute(&mut *conn)
            .await;
        let written = match slept {
            Ok(_) => sqlx::query("insert into handled (aggregate_id, seq) values ($1, $2)")
                .bind(e.aggregate_id)
                .bind(e.seq)
                .execute(&mut *conn)
                .await
                .map(drop),
            Err(e) => Err(e),
        };
        self.running.fetch_sub(1, Ordering::SeqCst);
        written
    }
}

/// A relayed message's body: event `seq` of `aggregate_id`, after `prev_seq`.
pub(crate) fn relayed(aggregate_id: i64, seq: u64, prev_seq: Option<u64>) -> Vec<u8> {
    wire::Envelope {
        seq,
        r#type: "InvoicePaid".into(),
        aggregate_id,
        prev_seq,
        payload: format!("{aggregate_id}/{seq}").into_bytes(),
        ts_ms: 1,
    }
    .encode_to_vec()
}

#[tokio::test]
async fn the_consumer_applies_shuffled_duplicated_chains_once_in_order_four_at_a_time() {
    let b = Broker::start().await;
    let (pool, inbox, _made) = fresh_inbox(
        "consumer_inbox",
        "create table handled (n bigint generated always as identity, aggregate_id bigint,
                               seq bigint unique)",
    )
    .await;

    // Five invoices with chains of six events (seq 100a+1 ..= 100a+6), every third event twice,
    // shuffled (a fixed xorshift), and one poison message in the middle.
    const AGGREGATES: i64 = 5;
    const CHAIN: u64 = 6;
    let mut bodies = Vec::new();
    for a in 1..=AGGREGATES {
        for i in 1..=CHAIN {
            let seq = 100 * a as u64 + i;
            let body = relayed(a, seq, (i > 1).then_some(seq - 1));
            if i % 3 == 0 {
                bodies.push(body.clone());
            }
            bodies.push(body);
        }
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..bodies.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bodies.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let protobuf = BasicProperties::default().with_content_type(wire::CONTENT_TYPE_PROTOBUF.into());
    bodies.insert(bodies.len() / 2, b"not an envelope".to_vec());
    for body in &bodies {
        b.publish_with("invoice.paid", body, protobuf.clone()).await;
    }

    let record = Record {
        running: Arc::default(),
        most: Arc::default(),
    };
    let consumer = Consumer::new(b.topology.clone())
        .with_prefetch(NonZeroU16::new(16).expect("non-zero"))
        .with_concurrency(NonZeroUsize::new(4).expect("non-zero"));
    let expected = AGGREGATES * CHAIN as i64;
    consume_while(&consumer, (&b, &pool, &inbox), || record.clone(), async {
        for _ in 0..300 {
            let handled: i64 = sqlx::query_scalar("select count(*) from handled")
                .fetch_one(&pool)
                .await
                .expect("count");
            if handled == expected && b.ready(&b.topology.dead_letter_queue).await == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;

    for a in 1..=AGGREGATES {
        let seqs: Vec<i64> =
            sqlx::query_scalar("select seq from handled where aggregate_id = $1 order by n")
                .bind(a)
                .fetch_all(&pool)
                .await
                .expect("handled");
        let chain: Vec<i64> = (1..=CHAIN as i64).map(|i| 100 * a + i).collect();
        assert_eq!(seqs, chain, "invoice {a}: each event once, in chain order");
    }
    let held: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select count(*) from {}",
        inbox.tables().held()
    )))
    .fetch_one(&pool)
    .await
    .expect("held");
    assert_eq!(held, 0, "every held event was released");
    let most = record.most.load(Ordering::SeqCst);
    assert!(
        (2..=4).contains(&most),
        "up to 4 deliveries at once, got {most}"
    );

    let dead = b
        .dead_letter_get()
        .await
        .expect("the poison is dead-lettered");
    assert_eq!(dead.delivery.data, b"not an envelope");
    let why = header(&dead.delivery.properties, DEATH_REASON_HEADER);
    assert!(why.contains("not an outbox envelope"), "{why}");
    assert!(b.dead_letter_get().await.is_none(), "only the poison");
    // The consumer's channel is closed: anything it left unacked would be back in the queue.
    let _ = b.ch.close(200, "bye".into()).await;
    assert_eq!(b.ready(&b.topology.queue).await, 0, "everything was acked");
    b.cleanup().await;
}

/// Fails every event while `failures_left` is above zero (counting it down), then records.
#[derive(Clone)]
struct FailFirst {
    failures_left: Arc<AtomicUsize>,
    attempts: Arc<AtomicUsize>,
}

impl Handler for FailFirst {
    type Error = String;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), String> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let left = self.failures_left.load(Ordering::SeqCst);
        if left > 0 {
            self.failures_left.store(left - 1, Ordering::SeqCst);
            return Err("the ledger is down".into());
        }
        record_handled(
            conn,
            "insert into handled (aggregate_id, seq) values ($1, $2)",
            e,
        )
        .await
    }
}

/// Publishes one event, runs a consumer whose handler fails `failures` times, and stops it once
/// `stop_after`; returns the pool, the handler's attempts and the broker.
async fn run_failing(failures: usize, stop_after: Duration) -> (sqlx::PgPool, usize, Broker) {
    let mut b = Broker::start().await;
    let (pool, inbox, made) = fresh_inbox(
        "retry_inbox",
        "create table handled (aggregate_id bigint, seq bigint unique)",
    )
    .await;
    b.keep(made);
    let protobuf = BasicProperties::default().with_content_type(wire::CONTENT_TYPE_PROTOBUF.into());
    b.publish_with("invoice.paid", &relayed(1, 1, None), protobuf)
        .await;
    let handler = FailFirst {
        failures_left: Arc::new(AtomicUsize::new(failures)),
        attempts: Arc::default(),
    };
    let consumer = Consumer::new(b.topology.clone());
    let run = consumer.run(
        &b.conn,
        &pool,
        &inbox,
        accept_all,
        || handler.clone(),
        tokio::time::sleep(stop_after),
    );
    tokio::time::timeout(stop_after + Duration::from_secs(10), run)
        .await
        .expect("the consumer stops at shutdown")
        .expect("the consumer ends cleanly");
    let attempts = handler.attempts.load(Ordering::SeqCst);
    (pool, attempts, b)
}

async fn handled(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from handled")
        .fetch_one(pool)
        .await
        .expect("count")
}

#[tokio::test]
async fn a_failing_transaction_is_retried_after_a_backoff_and_acked_once_it_commits() {
    // Two failures wait about 100 ms and 200 ms (with jitter): done well within 3 s.
    let (pool, attempts, b) = run_failing(2, Duration::from_secs(3)).await;
    assert_eq!(
        attempts, 3,
        "two failures, then the commit, and no busy loop"
    );
    assert_eq!(handled(&pool).await, 1);
    let _ = b.ch.close(200, "bye".into()).await;
    assert_eq!(
        b.ready(&b.topology.queue).await,
        0,
        "acked after the commit"
    );
    assert!(b.dead_letter_get().await.is_none(), "an error is no poison");
    b.cleanup().await;
}

#[tokio::test]
async fn a_delivery_still_failing_at_shutdown_stays_unacked_and_returns_to_the_queue() {
    let (pool, attempts, b) = run_failing(usize::MAX, Duration::from_secs(2)).await;
    // Waits of 50-100, 100-200, 200-400, 400-800, 800-1600 ms: 5 or 6 attempts in 2 s, no spin.
    assert!((4..=6).contains(&attempts), "{attempts} attempts");
    assert_eq!(handled(&pool).await, 0);
    let _ = b.ch.close(200, "bye".into()).await;
    assert_eq!(
        b.ready(&b.topology.queue).await,
        1,
        "neither acked nor dead-lettered: back in the queue"
    );
    assert!(b.dead_letter_get().await.is_none());
    b.cleanup().await;
}
