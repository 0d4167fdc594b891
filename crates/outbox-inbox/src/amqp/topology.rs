//! The queue a consumer declares, with its dead-letter exchange and queue.

use lapin::{
    Channel, ExchangeKind,
    options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions},
    types::{AMQPValue, FieldTable},
};

/// Redeliveries after which the broker itself dead-letters a message (quorum queue
/// `x-delivery-limit`): a message that crashes the consumer every time ends in the dead-letter
/// queue instead of cycling forever.
pub const DELIVERY_LIMIT: i64 = 50;

/// The names a consumer declares (all durable, declared idempotently on every (re)connect):
///
/// ```text
/// exchange (topic) --binding_key--> queue (quorum, x-dead-letter-exchange=<queue>.dlx)
/// <queue>.dlx (fanout) -----------> <queue>.dead-letter (quorum)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Topology {
    /// The topic exchange the relay publishes to.
    pub exchange: String,
    /// The queue this consumer reads.
    pub queue: String,
    /// The routing-key pattern that binds the queue to the exchange (e.g. `invoice.#`).
    pub binding_key: String,
    /// `<queue>.dlx`: where poison goes.
    pub dead_letter_exchange: String,
    /// `<queue>.dead-letter`: where poison stays, for a person to look at.
    pub dead_letter_queue: String,
}

/// Durable: the exchanges and queues (and the persistent messages in them) survive a broker
/// restart.
const DURABLE_EXCHANGE: ExchangeDeclareOptions = ExchangeDeclareOptions {
    passive: false,
    durable: true,
    auto_delete: false,
    internal: false,
    nowait: false,
};
const DURABLE_QUEUE: QueueDeclareOptions = QueueDeclareOptions {
    passive: false,
    durable: true,
    exclusive: false,
    auto_delete: false,
    nowait: false,
};

impl Topology {
    /// `queue` bound to `exchange` with `binding_key`, dead letters in `<queue>.dlx` and
    /// `<queue>.dead-letter`.
    pub fn new(exchange: &str, queue: &str, binding_key: &str) -> Self {
        Self {
            exchange: exchange.to_owned(),
            queue: queue.to_owned(),
            binding_key: binding_key.to_owned(),
            dead_letter_exchange: format!("{queue}.dlx"),
            dead_letter_queue: format!("{queue}.dead-letter"),
        }
    }

    /// Declares everything (idempotent: the same arguments every time, by every instance).
    pub async fn declare(&self, ch: &Channel) -> lapin::Result<()> {
        // The exchange declaration matches the relay's (durable topic), so whichever service
        // starts first creates it.
        ch.exchange_declare(
            self.exchange.as_str().into(),
            ExchangeKind::Topic,
            DURABLE_EXCHANGE,
            FieldTable::default(),
        )
        .await?;
        self.declare_dead_letter(ch).await?;

        // A quorum queue: replicated, and it counts redeliveries (x-delivery-limit), so nothing
        // is requeued forever.
        let mut args = FieldTable::default();
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        args.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(self.dead_letter_exchange.as_str().into()),
        );
        args.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(DELIVERY_LIMIT),
        );
        ch.queue_declare(self.queue.as_str().into(), DURABLE_QUEUE, args)
            .await?;
        ch.queue_bind(
            self.queue.as_str().into(),
            self.exchange.as_str().into(),
            self.binding_key.as_str().into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        Ok(())
    }

    /// Declares the dead-letter exchange and queue and binds them (also when the dead-letter
    /// channel is reopened: a refused publish may mean someone deleted them).
    pub async fn declare_dead_letter(&self, ch: &Channel) -> lapin::Result<()> {
        // Fanout: every dead-lettered message reaches the dead-letter queue, whatever its
        // original routing key (kept on the message for the reader).
        ch.exchange_declare(
            self.dead_letter_exchange.as_str().into(),
            ExchangeKind::Fanout,
            DURABLE_EXCHANGE,
            FieldTable::default(),
        )
        .await?;
        let mut dlq_args = FieldTable::default();
        dlq_args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        ch.queue_declare(
            self.dead_letter_queue.as_str().into(),
            DURABLE_QUEUE,
            dlq_args,
        )
        .await?;
        ch.queue_bind(
            self.dead_letter_queue.as_str().into(),
            self.dead_letter_exchange.as_str().into(),
            "".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        Ok(())
    }
}
