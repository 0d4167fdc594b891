//! The broker side the tests observe: an exchange of their own and an exclusive queue bound to
//! it, as a raw stream ([`consume_all`]) or collected in the background ([`Consumer`]).

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use futures::StreamExt;
use lapin::{
    Connection, ConnectionProperties,
    options::{BasicConsumeOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions},
    types::FieldTable,
};
use outbox::wire::Envelope;
use outbox_kit::testing;
use prost::Message;

/// Declares a fresh exchange (`<prefix>_ex`) as the relay does and a queue bound to it under
/// `binding`, before anything is published (an unroutable event would stay in the outbox), and
/// consumes the queue without acks. The queue is exclusive: the broker drops it with the
/// returned connection, whatever the test's end.
pub async fn consume_all(prefix: &str, binding: &str) -> (String, Connection, lapin::Consumer) {
    let queue = Queue::declare(prefix).await;
    queue.bind(binding).await;
    let deliveries = queue.consume().await;
    (queue.exchange, queue.connection, deliveries)
}

/// A fresh exchange, declared as the relay does, and an exclusive queue of the test's own on a
/// connection of its own.
struct Queue {
    exchange: String,
    name: String,
    channel: lapin::Channel,
    connection: Connection,
}

impl Queue {
    async fn declare(prefix: &str) -> Self {
        let exchange = testing::unique(&format!("{prefix}_ex"));
        let name = testing::unique(&format!("{prefix}_q"));
        let connection = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
            .await
            .expect("broker");
        let channel = connection.create_channel().await.expect("channel");
        outbox_relay::publisher::declare_exchange(&channel, &exchange)
            .await
            .expect("exchange");
        let exclusive = QueueDeclareOptions {
            exclusive: true,
            auto_delete: true,
            ..Default::default()
        };
        channel
            .queue_declare(name.as_str().into(), exclusive, FieldTable::default())
            .await
            .expect("queue");
        Self {
            exchange,
            name,
            channel,
            connection,
        }
    }

    async fn bind(&self, binding: &str) {
        self.channel
            .queue_bind(
                self.name.as_str().into(),
                self.exchange.as_str().into(),
                binding.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind");
    }

    /// Consumes the queue without acks.
    async fn consume(&self) -> lapin::Consumer {
        let no_ack = BasicConsumeOptions {
            no_ack: true,
            ..Default::default()
        };
        self.channel
            .basic_consume(
                self.name.as_str().into(),
                "".into(),
                no_ack,
                FieldTable::default(),
            )
            .await
            .expect("consume")
    }
}

/// One message as the [`Consumer`] saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub routing_key: String,
    pub envelope: Envelope,
    /// When it arrived (to measure commit → queue).
    pub at: chrono::DateTime<chrono::Utc>,
}

/// An independent consumer: its own connection, a fresh exchange declared as the relay does,
/// and an exclusive queue bound to it, collecting every message in the background.
pub struct Consumer {
    pub exchange: String,
    queue: Queue,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Consumer {
    /// A fresh exchange and, bound with `binding`, a queue consumed from now on.
    pub async fn start(binding: &str) -> Self {
        let queue = Queue::declare("outbox_relay").await;
        queue.bind(binding).await;
        let mut deliveries = queue.consume().await;
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let collected = received.clone();
        tokio::spawn(async move {
            while let Some(Ok(d)) = deliveries.next().await {
                let envelope = Envelope::decode(d.data.as_slice()).expect("an envelope");
                collected.lock().expect("lock").push(Received {
                    routing_key: d.routing_key.to_string(),
                    envelope,
                    at: chrono::Utc::now(),
                });
            }
        });
        Self {
            exchange: queue.exchange.clone(),
            queue,
            received,
        }
    }

    /// Binds the queue with one more routing key: one queue, one consumer, so the arrival order
    /// stays the queue's order.
    pub async fn add_binding(&self, binding: &str) {
        self.queue.bind(binding).await;
    }

    /// Everything received so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// The envelopes received so far, in arrival order.
    pub fn envelopes(&self) -> Vec<Envelope> {
        self.received().into_iter().map(|r| r.envelope).collect()
    }

    /// The seqs received so far, in arrival order (a seq published twice shows twice).
    pub fn seqs(&self) -> Vec<i64> {
        self.received()
            .iter()
            .map(|r| r.envelope.seq as i64)
            .collect()
    }

    /// True once every seq in `want` was received at least once.
    pub fn has_all(&self, want: &[i64]) -> bool {
        let got: HashSet<i64> = self.seqs().into_iter().collect();
        want.iter().all(|s| got.contains(s))
    }

    /// How often each seq arrived.
    pub fn copies(&self) -> HashMap<i64, usize> {
        let mut n = HashMap::new();
        for s in self.seqs() {
            *n.entry(s).or_default() += 1;
        }
        n
    }

    /// Asserts that no seq arrived twice.
    pub fn assert_once(&self) {
        let twice: Vec<i64> = self
            .copies()
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(s, _)| s)
            .collect();
        assert!(twice.is_empty(), "published more than once: {twice:?}");
    }

    /// Deletes the exchange (the queue is exclusive and goes with the connection).
    pub async fn cleanup(self) {
        let _ = self
            .queue
            .channel
            .exchange_delete(
                self.exchange.as_str().into(),
                ExchangeDeleteOptions::default(),
            )
            .await;
        let _ = self.queue.connection.close(200, "test done".into()).await;
    }
}
