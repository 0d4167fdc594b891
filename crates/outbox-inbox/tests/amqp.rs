//! The `amqp` feature against the real RabbitMQ: dead letters with their reason, a dead-letter
//! queue someone deleted, acks after commit.

use std::time::Duration;

use futures::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    message::Delivery,
    options::{
        BasicConsumeOptions, BasicGetOptions, BasicPublishOptions, BasicQosOptions,
        ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use outbox_inbox::amqp::{
    DEATH_REASON_HEADER, DeadLetterChannel, MAX_REASON_BYTES, ORIGINAL_ROUTING_KEY_HEADER,
    Topology, Unsettled, ack_together,
};
use outbox_kit::testing;

struct Broker {
    conn: Connection,
    ch: Channel,
    topology: Topology,
}

impl Broker {
    async fn start() -> Self {
        let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
            .await
            .expect("connect");
        let ch = conn.create_channel().await.expect("channel");
        let topology = Topology::new(
            &testing::unique("inbox_x"),
            &testing::unique("inbox_q"),
            "invoice.#",
        );
        topology.declare(&ch).await.expect("declare");
        Self { conn, ch, topology }
    }

    async fn publish(&self, key: &str, body: &[u8]) {
        self.ch
            .basic_publish(
                self.topology.exchange.as_str().into(),
                key.into(),
                BasicPublishOptions::default(),
                body,
                BasicProperties::default().with_message_id("7".into()),
            )
            .await
            .expect("publish")
            .await
            .expect("sent");
    }

    /// The next `n` deliveries of the queue, unacked.
    async fn take(&self, n: usize) -> Vec<Delivery> {
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
    async fn ready(&self, queue: &str) -> u32 {
        let ch = self.conn.create_channel().await.expect("channel");
        let q = ch
            .queue_declare(
                queue.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("passive declare");
        let _ = ch.close(200, "bye".into()).await;
        q.message_count()
    }

    async fn dead_letter_get(&self) -> Option<lapin::message::BasicGetMessage> {
        let ch = self.conn.create_channel().await.expect("channel");
        ch.basic_get(
            self.topology.dead_letter_queue.as_str().into(),
            BasicGetOptions { no_ack: true },
        )
        .await
        .expect("get")
    }

    async fn cleanup(self) {
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
        let _ = self.conn.close(200, "bye".into()).await;
    }
}

fn header(props: &BasicProperties, name: &str) -> String {
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
    assert_eq!(
        b.ready(&b.topology.queue).await,
        0,
        "the original was acked"
    );
    b.cleanup().await;
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
