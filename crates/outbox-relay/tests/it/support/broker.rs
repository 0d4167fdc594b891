//! The broker side the tests observe: an exchange of their own and an exclusive queue bound to
//! it, as a raw stream ([`consume_all`]) or collected in the background ([`Consumer`]).

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{BasicConsumeOptions, BasicPublishOptions, QueueBindOptions, QueueDeclareOptions},
    types::FieldTable,
};
use outbox::wire::Envelope;
use prost::Message;

/// Declares a fresh exchange (`<prefix>_ex`) as the relay does and a queue bound to it under
/// `binding`, before anything is published (an unroutable event would stay in the outbox), and
/// consumes the queue without acks. The queue is exclusive: the broker drops it with the
/// returned connection; the exchange goes with the returned guard, whatever the test's end.
pub async fn consume_all(
    prefix: &str,
    binding: &str,
) -> (String, Connection, lapin::Consumer, outbox_testkit::Made) {
    let queue = Queue::declare(prefix, None, true).await;
    queue.bind(binding).await;
    let deliveries = queue.consume().await;
    (queue.exchange, queue.connection, deliveries, queue.made)
}

/// An exchange (fresh, or one given), declared as the relay does, and a queue of the test's own
/// on a connection of its own.
struct Queue {
    exchange: String,
    name: String,
    channel: lapin::Channel,
    connection: Connection,
    /// The exchange and the queue, removed when the queue's owner goes (passing or failing).
    made: outbox_testkit::Made,
}

impl Queue {
    /// `exclusive`: the broker drops the queue with the connection; otherwise it is auto-delete
    /// (dropped once its consumer is gone) and other connections may declare it too.
    async fn declare(prefix: &str, exchange: Option<&str>, exclusive: bool) -> Self {
        let exchange = exchange.map_or_else(
            || outbox_testkit::unique(&format!("{prefix}_ex")),
            Into::into,
        );
        let name = outbox_testkit::unique(&format!("{prefix}_q"));
        let made = outbox_testkit::Made::new();
        made.exchange(&exchange).queue(&name);
        let connection =
            Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
                .await
                .expect("broker");
        let channel = connection.create_channel().await.expect("channel");
        outbox_relay::declare_exchange(&channel, &exchange)
            .await
            .expect("exchange");
        let options = QueueDeclareOptions {
            exclusive,
            auto_delete: true,
            ..Default::default()
        };
        channel
            .queue_declare(name.as_str().into(), options, FieldTable::default())
            .await
            .expect("queue");
        Self {
            exchange,
            name,
            channel,
            connection,
            made,
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
    /// The body as it came.
    pub body: Vec<u8>,
    pub properties: BasicProperties,
    /// When it arrived (to measure commit → queue).
    pub at: chrono::DateTime<chrono::Utc>,
}

/// An independent consumer: its own connection, a fresh exchange declared as the relay does,
/// and an exclusive queue bound to it, collecting every message in the background.
pub struct Consumer {
    pub exchange: String,
    queue: Queue,
    received: Arc<Mutex<Vec<Received>>>,
    /// Markers of [`Consumer::drained`] taken off the queue.
    markers: Arc<AtomicUsize>,
}

/// The `type` of a [`Consumer::drained`] marker (never among what the consumer received).
const MARKER: &str = "test.marker";

impl Consumer {
    /// A fresh exchange and, bound with `binding`, an exclusive queue consumed from now on.
    pub async fn start(binding: &str) -> Self {
        Self::on(Queue::declare("outbox_relay", None, true).await, binding).await
    }

    /// As [`Consumer::start`], on `exchange` when given (a second consumer of one exchange),
    /// with a queue that other connections may declare too (a replay checks its queue with a
    /// passive declare, which the broker refuses for another connection's exclusive queue).
    pub async fn start_shared(exchange: Option<&str>, binding: &str) -> Self {
        Self::on(
            Queue::declare("outbox_relay", exchange, false).await,
            binding,
        )
        .await
    }

    async fn on(queue: Queue, binding: &str) -> Self {
        queue.bind(binding).await;
        let mut deliveries = queue.consume().await;
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let markers = Arc::new(AtomicUsize::new(0));
        let (collected, seen) = (received.clone(), markers.clone());
        tokio::spawn(async move {
            while let Some(Ok(d)) = deliveries.next().await {
                if d.properties.kind().as_ref().map(|k| k.as_str()) == Some(MARKER) {
                    seen.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                let envelope = Envelope::decode(d.data.as_slice()).expect("an envelope");
                collected.lock().expect("lock").push(Received {
                    routing_key: d.routing_key.to_string(),
                    envelope,
                    body: d.data.clone(),
                    properties: d.properties.clone(),
                    at: chrono::Utc::now(),
                });
            }
        });
        Self {
            exchange: queue.exchange.clone(),
            queue,
            received,
            markers,
        }
    }

    /// The queue's name.
    pub fn queue(&self) -> &str {
        &self.queue.name
    }

    /// Returns once every message the broker put in the queue before this call has been
    /// received: a marker sent to the queue after them arrives after them (one queue, one
    /// consumer). What a test asserts did not arrive is then known not to be on its way.
    pub async fn drained(&self) {
        let before = self.markers.load(Ordering::SeqCst);
        self.queue
            .channel
            .basic_publish(
                "".into(),
                self.queue.name.as_str().into(),
                BasicPublishOptions::default(),
                b"",
                BasicProperties::default().with_type(MARKER.into()),
            )
            .await
            .expect("marker");
        outbox_testkit::wait_until("the marker arrives", || async {
            self.markers.load(Ordering::SeqCst) > before
        })
        .await;
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

    /// Deletes the exchange and the queue now.
    pub async fn cleanup(self) {
        outbox_support::amqp::close(&self.queue.connection, "test done").await;
        self.queue
            .made
            .remove()
            .await
            .expect("the consumer's names removed");
    }
}
