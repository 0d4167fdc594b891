//! RabbitMQ: the exchange topology, the message of a row (format: [`outbox::wire`]), and
//! publishing with confirms.
//!
//! One connection and one confirm-mode channel per leader. A message counts as delivered only
//! when the broker acked it and did not return it: with `mandatory`, an unroutable message is
//! returned (basic.return) and then acked. lapin hands a returned message back inside *some*
//! confirm of the wave, not necessarily its own, so returns are matched to their message by
//! `message_id` (= seq) in [`attribute`].

use std::{collections::HashMap, str::FromStr, time::Duration};

use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
    message::BasicReturnMessage,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueDeclareOptions,
    },
    protocol::{AMQPErrorKind, AMQPSoftError},
    types::{AMQPValue, FieldTable, ShortString},
    uri::{AMQPUri, SASLMechanism},
};
use outbox::{
    trace::TraceHeaders,
    wire::{self, Envelope},
};
use prost::Message;

use crate::{db::OutboxRow, error::Error};

pub use outbox::wire::CONTENT_TYPE_PROTOBUF as CONTENT_TYPE;
/// `app_id` of every message (and the broker connection's name).
pub const APP_ID: &str = "relay-svc";

/// The default time a wave (or a replayed message) has to be sent and confirmed.
pub const DEFAULT_CONFIRM_TIMEOUT: Duration = Duration::from_secs(15);

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

/// Turns an outbox row into its message; a row it refuses is quarantined with the reason (its
/// aggregate's later events wait behind it until an operator moves it back).
///
/// [`EnvelopeEncoder`] handles every row written by the `outbox` crate. A service whose outbox
/// also holds rows of another shape can wrap it, or give those rows a routing key with a
/// migration and keep the default (orders-svc's migration 0006 did so for its first outbox).
pub trait Encoder: Send + Sync + std::fmt::Debug + 'static {
    /// The message for `row`, or why it can never be published.
    fn encode(&self, row: &OutboxRow) -> Result<Outgoing, String>;
}

/// The encoder of rows written by the `outbox` crate: [`Outgoing::from_row`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvelopeEncoder;

impl Encoder for EnvelopeEncoder {
    fn encode(&self, row: &OutboxRow) -> Result<Outgoing, String> {
        Outgoing::from_row(row)
    }
}

/// One outbox row as an AMQP message.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outgoing {
    /// The row's seq (also the `message_id`).
    pub seq: i64,
    /// Where the exchange routes it.
    pub routing_key: String,
    /// The body.
    pub body: Vec<u8>,
    /// Properties and headers (`user_id` is added by the [`Publisher`]).
    pub properties: BasicProperties,
    /// The publish span, a child of the trace context stored with the row (disabled for a row
    /// without one): it ends when the last copy of the message is dropped, after its confirm.
    pub span: tracing::Span,
}

impl Outgoing {
    /// The message of a row written by the `outbox` crate (format: [`outbox::wire`]): its
    /// payload goes out as it is, in an [`Envelope`], under the row's own routing key. A row
    /// without a routing key, or with unreadable headers, is refused.
    pub fn from_row(row: &OutboxRow) -> Result<Self, String> {
        let Some(routing_key) = &row.routing_key else {
            return Err("no routing key (not written by the outbox crate)".into());
        };
        let mut extra = FieldTable::default();
        extra.insert(
            wire::HEADER_AGGREGATE_TYPE.into(),
            AMQPValue::LongString(row.aggregate_type.as_str().into()),
        );
        if let Some(ct) = row
            .content_type
            .as_deref()
            .filter(|ct| *ct != wire::CONTENT_TYPE_PROTOBUF)
        {
            extra.insert(
                wire::HEADER_PAYLOAD_CONTENT_TYPE.into(),
                AMQPValue::LongString(ct.into()),
            );
        }
        if let Some(json) = &row.headers {
            for (name, value) in wire::parse_headers(json)? {
                extra.insert(name.as_str().into(), AMQPValue::LongString(value.into()));
            }
        }
        let envelope = Envelope {
            seq: row.seq as u64,
            r#type: row.event_type.clone(),
            aggregate_id: row.aggregate_id,
            prev_seq: row.prev_seq.map(|p| p as u64),
            payload: row.payload.clone(),
            ts_ms: row.created_at.timestamp_millis(),
        };
        Ok(Self::with_body(
            row,
            routing_key.clone(),
            envelope.encode_to_vec(),
            extra,
        ))
    }

    /// A message for `row` with the given routing key, body and extra headers, and the
    /// properties and chain headers every message has (for encoders of rows of other shapes).
    pub fn with_body(
        row: &OutboxRow,
        routing_key: String,
        body: Vec<u8>,
        extra_headers: FieldTable,
    ) -> Self {
        let mut headers = FieldTable::default();
        headers.insert(
            wire::HEADER_AGGREGATE_ID.into(),
            AMQPValue::LongLongInt(row.aggregate_id),
        );
        if let Some(prev) = row.prev_seq {
            headers.insert(wire::HEADER_PREV_SEQ.into(), AMQPValue::LongLongInt(prev));
        }
        for (name, value) in extra_headers.inner() {
            headers.insert(name.clone(), value.clone());
        }
        // The publish is a span of its own in the request's trace, and the consumer continues
        // it: its context, not the stored one, goes with the message (after the extra headers,
        // which hold the stored trace state). A relay without the OpenTelemetry layer has no
        // span context to give: it passes the stored one on as it is.
        let span = publish_span(row);
        if let Some(trace) = TraceHeaders::of_span(&span).or_else(|| row.trace()) {
            headers.insert(
                wire::HEADER_TRACEPARENT.into(),
                AMQPValue::LongString(trace.traceparent().into()),
            );
            if let Some(state) = trace.tracestate() {
                headers.insert(
                    wire::HEADER_TRACESTATE.into(),
                    AMQPValue::LongString(state.into()),
                );
            }
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
        Self {
            seq: row.seq,
            routing_key,
            body,
            properties,
            span,
        }
    }
}

/// The `publish` span of a row with a stored trace context, its child; none otherwise (a row
/// nobody traced starts no trace here).
fn publish_span(row: &OutboxRow) -> tracing::Span {
    let Some(stored) = row.trace() else {
        return tracing::Span::none();
    };
    let span = tracing::info_span!(
        "publish",
        otel.kind = "producer",
        seq = row.seq,
        aggregate_id = row.aggregate_id,
        trace_id = tracing::field::Empty,
    );
    stored.continue_in(&span);
    span
}

/// What the broker said about one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Acked, and no `basic.return` of the wave names its seq: routed to at least one queue.
    Delivered,
    /// Unroutable: returned (mandatory) then acked. Not delivered.
    Returned {
        /// The broker's reply code (312 NO_ROUTE).
        reply_code: u16,
        /// The broker's reason.
        reply_text: String,
    },
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

/// One message's confirm as lapin reported it, reduced to what [`attribute`] needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Ack (`true`) or nack, and the returned message lapin attached to *this* confirm (which
    /// may belong to another message of the wave).
    Confirmed {
        /// `true` for an ack, `false` for a nack.
        acked: bool,
        /// The return lapin attached to this confirm, if any.
        returned: Option<Return>,
    },
    /// No confirm: the channel failed, or it is not in confirm mode.
    Failed(String),
}

/// A `basic.return`: the returned message's `message_id` read as a seq, and the broker's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Return {
    /// The returned message's `message_id` as a seq (`None` when it is not a number).
    pub seq: Option<i64>,
    /// The broker's reply code.
    pub reply_code: u16,
    /// The broker's reason.
    pub reply_text: String,
}

/// Decides each message's outcome from the confirms of one fully answered wave.
///
/// lapin does not tie a `basic.return` to its own publish: it hands the oldest waiting return to
/// whichever confirm completes next, and RabbitMQ sends a return at once but coalesces acks
/// (`multiple=true`) in any order. So the returns are pooled over the wave and matched by
/// `message_id` (= seq): a message is delivered only if it was acked **and** no return names it.
/// Every return of a wave arrives before the last confirm of the wave (the broker sends a
/// message's return before its ack, and each confirm resolution takes one waiting return), and
/// the next wave is published only after this one is answered, so no return crosses waves. A
/// return whose `message_id` cannot be read could be any message's: then no ack of the wave
/// counts (a duplicate later, never a loss).
pub fn attribute(seqs: &[i64], answers: &[Answer]) -> Vec<Outcome> {
    let mut returned: HashMap<i64, &Return> = HashMap::new();
    let mut unattributed: Option<&Return> = None;
    for answer in answers {
        if let Answer::Confirmed {
            returned: Some(r), ..
        } = answer
        {
            match r.seq.filter(|s| seqs.contains(s)) {
                Some(seq) => {
                    returned.insert(seq, r);
                }
                None => unattributed = Some(r),
            }
        }
    }
    let as_returned = |r: &Return| Outcome::Returned {
        reply_code: r.reply_code,
        reply_text: r.reply_text.clone(),
    };
    seqs.iter()
        .zip(answers)
        .map(|(seq, answer)| match answer {
            Answer::Failed(e) => Outcome::Failed(e.clone()),
            Answer::Confirmed { acked: false, .. } => Outcome::Nacked,
            Answer::Confirmed { acked: true, .. } => match (returned.get(seq), unattributed) {
                (Some(r), _) => as_returned(r),
                (None, Some(r)) => as_returned(r),
                (None, None) => Outcome::Delivered,
            },
        })
        .collect()
}

/// A connection with one confirm-mode channel and the exchange declared, and what the broker
/// says about it ([`outbox_support::amqp::watch`]: blocked, lost).
#[derive(Debug)]
pub struct Publisher {
    connection: Connection,
    channel: Channel,
    watch: outbox_support::amqp::Watch,
    exchange: ShortString,
    /// The `user_id` property: the connection's own user, which RabbitMQ verifies (it rejects
    /// a `user_id` that is not the authenticated user), so a consumer knows who published.
    user_id: Option<ShortString>,
}

/// The user the AMQP URL authenticates as (lapin's default `guest` when the URL names none), or
/// `None` where the URL does not say: with `auth_mechanism=external` (or anonymous) the broker
/// derives the user from the TLS certificate, and a `user_id` from the URL would be rejected.
pub fn url_user(url: &str) -> Result<Option<String>, String> {
    let uri = AMQPUri::from_str(url)?;
    Ok(match uri.query.auth_mechanism.unwrap_or_default() {
        SASLMechanism::External | SASLMechanism::Anonymous => None,
        _ => Some(uri.authority.userinfo.username),
    })
}

impl Publisher {
    /// Connects (with `tls` for an `amqps://` URL, asking for `heartbeat` unless the URL names
    /// one), enables publisher confirms and declares the exchange. `on_change` hears what the
    /// broker says about the connection from then on (see [`outbox_support::amqp::watch`]).
    pub async fn connect(
        url: &str,
        tls: &outbox_support::amqp::Tls,
        heartbeat: Duration,
        exchange: &str,
        timeout: Duration,
        on_change: impl Fn(&outbox_support::amqp::Change) + Send + 'static,
    ) -> Result<Self, Error> {
        let user_id = url_user(url).map_err(Error::BadUrl)?;
        let connect = async {
            // No lapin auto-recovery: the relay reconnects itself (with its own backoff) and
            // must know that confirms of the old connection are lost.
            let props = ConnectionProperties::default().with_connection_name(APP_ID.into());
            let connection = outbox_support::amqp::connect(url, tls, heartbeat, props).await?;
            let watch = outbox_support::amqp::watch(&connection, on_change);
            let channel = connection.create_channel().await?;
            channel
                .confirm_select(ConfirmSelectOptions::default())
                .await?;
            declare_exchange(&channel, exchange).await?;
            Ok::<_, Error>((connection, channel, watch))
        };
        let (connection, channel, watch) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| Error::ConnectTimeout(timeout))??;
        Ok(Self {
            connection,
            channel,
            watch,
            exchange: exchange.into(),
            user_id: user_id.map(Into::into),
        })
    }

    /// False once the connection or channel has failed; then reconnect.
    pub fn is_open(&self) -> bool {
        self.connection.status().connected() && self.channel.status().connected()
    }

    /// The broker's reason, while it blocks this connection's publishing (a resource alarm).
    pub fn blocked(&self) -> Option<outbox_support::amqp::Blocked> {
        self.watch.blocked()
    }

    /// Resolves when the broker does not block this connection (at once when it does not), or
    /// when the connection is lost.
    pub async fn unblocked(&self) {
        self.watch.unblocked().await
    }

    /// Resolves once the connection is lost, with why.
    pub async fn lost(&self) -> outbox_support::amqp::Lost {
        self.watch.lost_wait().await
    }

    /// Publishes `messages` pipelined (all sent, then all confirms awaited) and returns one
    /// outcome per message, in order. The whole wave, sending included, runs under `timeout`:
    /// a broker that stops reading (a stalled network) blocks the sends, not only the
    /// confirms. Time during which the broker says it blocks the connection (a resource alarm:
    /// it reads again once the alarm clears) does not count: the wave waits it out rather than
    /// replacing a healthy connection, unless `shutdown` comes. An error means the channel
    /// broke mid-way or the wave did not finish in time: treat every message as undelivered and
    /// reconnect.
    pub async fn publish(
        &self,
        messages: &[&Outgoing],
        timeout: Duration,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<Outcome>, Error> {
        self.publish_through(&self.exchange, messages, timeout, shutdown)
            .await
    }

    /// Publishes `messages` as [`Publisher::publish`] does, through the default exchange (`""`)
    /// instead: each reaches exactly the queue its `routing_key` names and no binding of the
    /// events exchange, and a missing queue is a return, not a silent drop (a replay to one
    /// consumer, [`crate::Replay`]).
    pub async fn publish_to_queue(
        &self,
        messages: &[&Outgoing],
        timeout: Duration,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<Outcome>, Error> {
        self.publish_through(&ShortString::from(""), messages, timeout, shutdown)
            .await
    }

    /// Whether `queue` exists, asked with a passive declare on a throwaway channel (the broker
    /// closes the channel of a passive declare that finds nothing). A queue exclusive to another
    /// connection exists: a publish reaches it.
    pub async fn queue_exists(&self, queue: &str) -> Result<bool, Error> {
        let channel = self.connection.create_channel().await?;
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        let declared = channel
            .queue_declare(queue.into(), passive, FieldTable::default())
            .await;
        let soft_error = |e: &lapin::Error| match e.kind() {
            lapin::ErrorKind::ProtocolError(amqp) => match amqp.kind() {
                AMQPErrorKind::Soft(soft) => Some(soft.clone()),
                AMQPErrorKind::Hard(_) => None,
            },
            _ => None,
        };
        match declared {
            Ok(_) => {
                let _ = channel.close(200, "checked".into()).await;
                Ok(true)
            }
            Err(e) => match soft_error(&e) {
                Some(AMQPSoftError::NOTFOUND) => Ok(false),
                Some(AMQPSoftError::RESOURCELOCKED) => Ok(true),
                _ => Err(e.into()),
            },
        }
    }

    async fn publish_through(
        &self,
        exchange: &ShortString,
        messages: &[&Outgoing],
        timeout: Duration,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<Outcome>, Error> {
        let wave = self.publish_wave(exchange, messages);
        tokio::pin!(wave);
        loop {
            tokio::select! {
                outcomes = &mut wave => return outcomes,
                _ = tokio::time::sleep(timeout) => {
                    if self.watch.blocked().is_none() {
                        return Err(Error::ConfirmTimeout(timeout));
                    }
                    // Blocked: the time-out starts again once the broker reads again.
                    tokio::select! {
                        outcomes = &mut wave => return outcomes,
                        _ = self.watch.unblocked() => {}
                        _ = shutdown.cancelled() => return Err(Error::ConfirmTimeout(timeout)),
                    }
                }
            }
        }
    }

    async fn publish_wave(
        &self,
        exchange: &ShortString,
        messages: &[&Outgoing],
    ) -> Result<Vec<Outcome>, Error> {
        let mut confirms = Vec::with_capacity(messages.len());
        for m in messages {
            let confirm = self
                .channel
                .basic_publish(
                    exchange.clone(),
                    m.routing_key.as_str().into(),
                    BasicPublishOptions {
                        // Return it if no queue is bound for it: an unroutable event must
                        // stay in the outbox rather than be acked into the void.
                        mandatory: true,
                        ..BasicPublishOptions::default()
                    },
                    &m.body,
                    match &self.user_id {
                        Some(user) => m.properties.clone().with_user_id(user.clone()),
                        None => m.properties.clone(),
                    },
                )
                .await?;
            confirms.push(confirm);
        }
        let answers: Vec<Answer> = futures::future::join_all(confirms)
            .await
            .into_iter()
            .map(|r| match r {
                Ok(Confirmation::Ack(returned)) => Answer::Confirmed {
                    acked: true,
                    returned: returned.map(|m| return_of(&m)),
                },
                Ok(Confirmation::Nack(returned)) => Answer::Confirmed {
                    acked: false,
                    returned: returned.map(|m| return_of(&m)),
                },
                Ok(Confirmation::NotRequested) => {
                    Answer::Failed("channel is not in confirm mode".into())
                }
                Err(e) => Answer::Failed(e.to_string()),
            })
            .collect();
        let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
        Ok(attribute(&seqs, &answers))
    }

    /// Closes the connection politely (best effort, bounded); not reported as a loss.
    pub async fn close(self) {
        self.watch.stop();
        outbox_support::amqp::close(&self.connection, "relay-svc stopping").await;
    }
}

fn return_of(m: &BasicReturnMessage) -> Return {
    Return {
        seq: m
            .delivery
            .properties
            .message_id()
            .as_ref()
            .and_then(|id| id.as_str().parse().ok()),
        reply_code: m.reply_code,
        reply_text: m.reply_text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(returned: Option<i64>) -> Answer {
        Answer::Confirmed {
            acked: true,
            returned: returned.map(|seq| Return {
                seq: Some(seq),
                reply_code: 312,
                reply_text: "NO_ROUTE".into(),
            }),
        }
    }

    fn returned() -> Outcome {
        Outcome::Returned {
            reply_code: 312,
            reply_text: "NO_ROUTE".into(),
        }
    }

    #[test]
    fn a_return_counts_for_the_message_it_names_not_the_confirm_it_came_with() {
        use Outcome::*;
        let nack = Answer::Confirmed {
            acked: false,
            returned: None,
        };
        let cases: Vec<(&[i64], Vec<Answer>, Vec<Outcome>)> = vec![
            // Plain acks.
            (
                &[1, 2],
                vec![ack(None), ack(None)],
                vec![Delivered, Delivered],
            ),
            // The return of 2 handed to 1's confirm (coalesced acks): 2 is the undelivered one.
            (
                &[1, 2],
                vec![ack(Some(2)), ack(None)],
                vec![Delivered, returned()],
            ),
            (
                &[1, 2, 3],
                vec![ack(None), ack(None), ack(Some(1))],
                vec![returned(), Delivered, Delivered],
            ),
            // A nack stays a nack, with or without a return attached to it.
            (
                &[1, 2],
                vec![nack.clone(), ack(Some(2))],
                vec![Nacked, returned()],
            ),
            (
                &[5],
                vec![Answer::Failed("closed".into())],
                vec![Failed("closed".into())],
            ),
        ];
        for (seqs, answers, want) in cases {
            assert_eq!(attribute(seqs, &answers), want, "{seqs:?} {answers:?}");
        }
    }

    #[test]
    fn a_return_that_names_no_message_of_the_wave_fails_every_ack() {
        let stray = Answer::Confirmed {
            acked: true,
            returned: Some(Return {
                seq: None,
                reply_code: 312,
                reply_text: "NO_ROUTE".into(),
            }),
        };
        assert_eq!(
            attribute(&[1, 2], &[stray, ack(None)]),
            vec![returned(), returned()]
        );
        assert_eq!(
            attribute(&[1, 2], &[ack(Some(9)), ack(None)]),
            vec![returned(), returned()]
        );
    }

    #[test]
    fn the_user_id_is_the_urls_user() {
        let user = |url| url_user(url).expect("valid url");
        assert_eq!(
            user("amqp://relay:secret@h:5672/%2f").as_deref(),
            Some("relay")
        );
        assert_eq!(user("amqp://r%40x:pw@h/%2f").as_deref(), Some("r@x"));
        assert_eq!(user("amqp://h/%2f").as_deref(), Some("guest"));
        assert_eq!(user("amqps://h/%2f?auth_mechanism=external"), None);
    }
}
