//! RabbitMQ: the exchange topology, the wire format of an event, and publishing with confirms.
//!
//! One connection and one confirm-mode channel per leader. A message counts as delivered only
//! when the broker acked it and did not return it: with `mandatory`, an unroutable message is
//! returned (basic.return) and then acked, and lapin hands the returned message back inside the
//! [`Confirmation::Ack`].

use std::time::Duration;

use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
    options::{BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions},
    types::{AMQPValue, FieldTable, ShortString},
};
use outbox_kit::trace::TraceParent;
use outbox_proto::orders::events::v1::{
    ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload,
};
use prost::Message;

use crate::{db::OutboxRow, error::Error};

/// Routing key of `OrderCreated` events.
pub const ROUTING_KEY_CREATED: &str = "order.created";
/// Routing key of `OrderStatusChanged` events.
pub const ROUTING_KEY_STATUS_CHANGED: &str = "order.status_changed";
/// `content_type` of every message: the body is a protobuf `orders.events.v1.OrderEvent`.
pub const CONTENT_TYPE: &str = "application/x-protobuf";
/// `app_id` of every message.
pub const APP_ID: &str = "relay-svc";

/// Declares the events exchange. Every service declares it the same way, so whichever starts
/// first creates it.
pub async fn declare_exchange(channel: &Channel, exchange: &str) -> Result<(), lapin::Error> {
    channel
        .exchange_declare(
            exchange.into(),
            // Topic: consumers bind `order.*`, `order.created`, or `#`.
            ExchangeKind::Topic,
            ExchangeDeclareOptions {
                // Survives a broker restart, like the persistent messages routed through it.
                durable: true,
                ..ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
}

/// One outbox row as an AMQP message.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub seq: i64,
    pub routing_key: &'static str,
    pub body: Vec<u8>,
    pub properties: BasicProperties,
}

impl Outgoing {
    /// Builds the message for `row`; a row whose payload or type this version cannot read is
    /// an error (the row stays in the outbox, its order's later events wait behind it).
    pub fn from_row(row: &OutboxRow) -> Result<Self, Error> {
        let corrupt = |reason: String| Error::CorruptRow {
            seq: row.seq,
            reason,
        };
        let routing_key = match row.event_type.as_str() {
            ORDER_CREATED => ROUTING_KEY_CREATED,
            ORDER_STATUS_CHANGED => ROUTING_KEY_STATUS_CHANGED,
            other => return Err(corrupt(format!("unknown event_type {other:?}"))),
        };
        let payload = OrderPayload::decode(row.payload.as_slice())
            .map_err(|e| corrupt(format!("payload is not an OrderPayload: {e}")))?;
        let event = OrderEvent {
            seq: row.seq as u64,
            r#type: row.event_type.clone(),
            aggregate_id: row.aggregate_id,
            prev_seq: row.prev_seq.map(|p| p as u64),
            payload: Some(payload),
            ts_ms: row.created_at.timestamp_millis(),
        };

        let mut headers = FieldTable::default();
        headers.insert(
            "aggregate_id".into(),
            AMQPValue::LongLongInt(row.aggregate_id),
        );
        if let Some(prev) = row.prev_seq {
            headers.insert("prev_seq".into(), AMQPValue::LongLongInt(prev));
        }
        // The publish is a span of its own in the request's trace: the consumer continues it.
        if let Some(trace) = row.traceparent.as_deref().and_then(TraceParent::parse) {
            headers.insert(
                "traceparent".into(),
                AMQPValue::LongString(trace.child().to_string().into()),
            );
        }
        let properties = BasicProperties::default()
            .with_content_type(CONTENT_TYPE.into())
            // 2 = persistent: a durable queue keeps the message across a broker restart.
            .with_delivery_mode(2)
            .with_message_id(row.seq.to_string().into())
            .with_type(row.event_type.as_str().into())
            .with_timestamp(row.created_at.timestamp().max(0) as u64)
            .with_app_id(APP_ID.into())
            .with_headers(headers);
        Ok(Self {
            seq: row.seq,
            routing_key,
            body: event.encode_to_vec(),
            properties,
        })
    }
}

/// What the broker said about one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Acked and routed to at least one queue.
    Delivered,
    /// Unroutable: returned (mandatory) then acked. Not delivered.
    Returned { reply_code: u16, reply_text: String },
    /// The broker refused it (nack).
    Nacked,
    /// No answer (the channel or connection failed first).
    Failed(String),
}

impl Outcome {
    /// A short label for logs and the `reason` metric label.
    pub fn reason(&self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Returned { .. } => "returned",
            Outcome::Nacked => "nacked",
            Outcome::Failed(_) => "error",
        }
    }
}

/// A connection with one confirm-mode channel and the exchange declared.
#[derive(Debug)]
pub struct Publisher {
    connection: Connection,
    channel: Channel,
    exchange: ShortString,
}

impl Publisher {
    /// Connects, enables publisher confirms and declares the exchange.
    pub async fn connect(url: &str, exchange: &str, timeout: Duration) -> Result<Self, Error> {
        let connect = async {
            // No lapin auto-recovery: the relay reconnects itself (with its own backoff) and
            // must know that confirms of the old connection are lost.
            let props = ConnectionProperties::default().with_connection_name(APP_ID.into());
            let connection = Connection::connect(url, props).await?;
            let channel = connection.create_channel().await?;
            channel
                .confirm_select(ConfirmSelectOptions::default())
                .await?;
            declare_exchange(&channel, exchange).await?;
            Ok::<_, Error>((connection, channel))
        };
        let (connection, channel) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| Error::ConnectTimeout(timeout))??;
        Ok(Self {
            connection,
            channel,
            exchange: exchange.into(),
        })
    }

    /// False once the connection or channel has failed; then reconnect.
    pub fn is_open(&self) -> bool {
        self.connection.status().connected() && self.channel.status().connected()
    }

    /// Publishes `messages` pipelined (all sent, then all confirms awaited) and returns one
    /// outcome per message, in order. An error means the channel broke mid-way or the confirms
    /// did not come in time: treat every message as undelivered and reconnect.
    pub async fn publish(
        &self,
        messages: &[Outgoing],
        confirm_timeout: Duration,
    ) -> Result<Vec<Outcome>, Error> {
        let mut confirms = Vec::with_capacity(messages.len());
        for m in messages {
            let confirm = self
                .channel
                .basic_publish(
                    self.exchange.clone(),
                    m.routing_key.into(),
                    BasicPublishOptions {
                        // Return it if no queue is bound for it: an unroutable event must
                        // stay in the outbox rather than be acked into the void.
                        mandatory: true,
                        ..BasicPublishOptions::default()
                    },
                    &m.body,
                    m.properties.clone(),
                )
                .await?;
            confirms.push(confirm);
        }
        let results = tokio::time::timeout(confirm_timeout, futures::future::join_all(confirms))
            .await
            .map_err(|_| Error::ConfirmTimeout(confirm_timeout))?;
        Ok(results
            .into_iter()
            .map(|r| match r {
                Ok(Confirmation::Ack(None)) => Outcome::Delivered,
                Ok(Confirmation::Ack(Some(returned))) => Outcome::Returned {
                    reply_code: returned.reply_code,
                    reply_text: returned.reply_text.to_string(),
                },
                Ok(Confirmation::Nack(_)) => Outcome::Nacked,
                Ok(Confirmation::NotRequested) => {
                    Outcome::Failed("channel is not in confirm mode".into())
                }
                Err(e) => Outcome::Failed(e.to_string()),
            })
            .collect())
    }

    /// Closes the connection politely (best effort).
    pub async fn close(self) {
        let _ = self
            .connection
            .close(200, "relay-svc stopping".into())
            .await;
    }
}
