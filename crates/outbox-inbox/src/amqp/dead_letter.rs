//! Dead-lettering with a reason: a copy of the message, confirmed by the broker, before the ack.
//!
//! A poison message is published to the topology's dead-letter exchange with a header
//! `x-death-reason` (at most [`MAX_REASON_BYTES`]; longer reasons are cut and say so) and the
//! original body and properties, on a confirm-mode channel of its own, and only then acked. A
//! publish the broker refuses closes only that channel: it is reopened (and the dead-letter
//! exchange and queue declared again), and after [`DEAD_LETTER_ATTEMPTS`] failures the caller
//! rejects the delivery without requeue, so the broker moves it to the same dead-letter queue
//! itself through the queue's `x-dead-letter-exchange` (with its `x-death` header; the reason is
//! then only in the caller's log).

use std::{borrow::Cow, time::Duration};

use lapin::{
    BasicProperties, Channel, Connection,
    message::Delivery,
    options::{BasicPublishOptions, ConfirmSelectOptions},
    types::{AMQPValue, FieldTable, LongString},
};

use super::{BrokerError, Topology, broker_call};

/// The header that carries why a message was dead-lettered.
pub const DEATH_REASON_HEADER: &str = "x-death-reason";
/// The header that carries a dead letter's original routing key.
pub const ORIGINAL_ROUTING_KEY_HEADER: &str = "x-original-routing-key";
/// The header that carries a dead letter's original `user_id` property.
pub const ORIGINAL_USER_ID_HEADER: &str = "x-original-user-id";

/// The longest `x-death-reason` header, in bytes; a longer reason is cut at a character boundary
/// and ends with `… (truncated, <n> bytes)`. A reason repeats parts of the message (a bad field's
/// value), and an unbounded header can exceed the broker's frame size, which closes the whole
/// connection.
pub const MAX_REASON_BYTES: usize = 1024;

/// Publishes of one dead letter (each on a healthy channel) before giving up (the caller then
/// rejects the delivery, which the broker dead-letters itself).
pub const DEAD_LETTER_ATTEMPTS: u32 = 3;

/// The confirm-mode channel dead letters go out on. A publish the broker refuses (an exchange
/// someone deleted, a message over the broker's size limit) closes this channel only; it is
/// reopened on the next use, so one bad dead letter never ends the consumer session.
#[derive(Debug)]
pub struct DeadLetterChannel<'a> {
    conn: &'a Connection,
    topology: &'a Topology,
    ch: tokio::sync::Mutex<Option<Channel>>,
}

impl<'a> DeadLetterChannel<'a> {
    /// A dead-letter channel on `conn` for `topology` (opened on first use).
    pub fn new(conn: &'a Connection, topology: &'a Topology) -> Self {
        Self {
            conn,
            topology,
            ch: tokio::sync::Mutex::new(None),
        }
    }

    /// The open channel, or a new one (with the dead-letter exchange and queue declared again:
    /// the broker closes the channel when a publish names an exchange that no longer exists).
    async fn get(&self) -> Result<Channel, BrokerError> {
        let mut current = self.ch.lock().await;
        if let Some(ch) = current.as_ref().filter(|ch| ch.status().connected()) {
            return Ok(ch.clone());
        }
        let ch = self.conn.create_channel().await?;
        // Confirm mode: a poison message is acked only once the broker has taken its copy.
        ch.confirm_select(ConfirmSelectOptions::default()).await?;
        self.topology.declare_dead_letter(&ch).await?;
        *current = Some(ch.clone());
        Ok(ch)
    }

    /// Opens the channel now (so that a session fails at its start, not at its first poison).
    pub async fn open(&self) -> Result<(), BrokerError> {
        self.get().await.map(drop)
    }

    /// Closes the channel (a quiet shutdown).
    pub async fn close(&self) {
        if let Some(ch) = self.ch.lock().await.take() {
            let _ = ch.close(200, "bye".into()).await;
        }
    }

    /// Publishes the message, unchanged but for the headers of [`dead_letter_properties`], to
    /// the dead-letter exchange and waits for the broker's confirm; up to
    /// [`DEAD_LETTER_ATTEMPTS`] times, on a reopened channel after a failure. `Ok` means the
    /// copy is safe: ack the original. The delivery itself is not settled here.
    pub async fn publish(&self, delivery: &Delivery, reason: &str) -> Result<(), BrokerError> {
        let properties =
            dead_letter_properties(&delivery.properties, reason, delivery.routing_key.as_str());
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = async {
                let ch = self.get().await?;
                self.publish_on(&ch, delivery, properties.clone()).await
            }
            .await;
            match result {
                Ok(()) => return Ok(()),
                Err(e) if attempt >= DEAD_LETTER_ATTEMPTS => return Err(e),
                Err(e) => {
                    tracing::warn!(
                        error = %e,
                        attempt,
                        "dead-letter publish failed; reopening the dead-letter channel"
                    );
                    tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                }
            }
        }
    }

    async fn publish_on(
        &self,
        ch: &Channel,
        delivery: &Delivery,
        properties: BasicProperties,
    ) -> Result<(), BrokerError> {
        let publish = async {
            ch.basic_publish(
                self.topology.dead_letter_exchange.as_str().into(),
                delivery.routing_key.clone(),
                // Mandatory: an unroutable dead letter (someone deleted the queue) comes back
                // as an error instead of vanishing.
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &delivery.data,
                properties,
            )
            .await?
            .await
        };
        let confirm = broker_call("dead-letter publish", publish).await?;
        if !confirm.is_ack() {
            return Err(BrokerError::Nacked {
                what: "dead letter".into(),
            });
        }
        if confirm.take_message().is_some() {
            // Declared again on the reopened channel.
            let _ = ch.close(200, "unroutable dead letter".into()).await;
            return Err(BrokerError::Unroutable {
                what: "dead letter".into(),
                queue: self.topology.dead_letter_queue.clone(),
            });
        }
        Ok(())
    }
}

/// `reason`, cut to at most [`MAX_REASON_BYTES`] (at a character boundary) with a note of its
/// original size.
pub fn bounded_reason(reason: &str) -> Cow<'_, str> {
    if reason.len() <= MAX_REASON_BYTES {
        return Cow::Borrowed(reason);
    }
    let note = format!("… (truncated, {} bytes)", reason.len());
    let mut end = MAX_REASON_BYTES - note.len();
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}{note}", &reason[..end]))
}

/// The dead letter's properties: the original's, plus the `x-death-reason` and
/// `x-original-routing-key` headers, and without `user_id`, which moves to the
/// `x-original-user-id` header: RabbitMQ refuses a publish whose `user_id` is not the publishing
/// connection's user, and the consumer's user is not the original publisher's.
pub fn dead_letter_properties(
    original: &BasicProperties,
    reason: &str,
    routing_key: &str,
) -> BasicProperties {
    let mut headers = original.headers().clone().unwrap_or_default();
    headers.insert(
        DEATH_REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(bounded_reason(reason).as_ref())),
    );
    headers.insert(
        ORIGINAL_ROUTING_KEY_HEADER.into(),
        AMQPValue::LongString(LongString::from(routing_key)),
    );
    if let Some(user) = original.user_id() {
        headers.insert(
            ORIGINAL_USER_ID_HEADER.into(),
            AMQPValue::LongString(LongString::from(user.as_str())),
        );
    }
    with_properties_of(original, headers)
}

/// A message's properties for a copy of it: every property of `original` except `user_id`
/// (RabbitMQ accepts only the publishing connection's own), with `headers` in place of its
/// headers.
pub fn with_properties_of(original: &BasicProperties, headers: FieldTable) -> BasicProperties {
    let mut p = BasicProperties::default().with_headers(headers);
    // One line a property: lapin can set a property on a copy but not unset one.
    macro_rules! copy {
        ($($get:ident => $set:ident),* $(,)?) => {
            $(if let Some(v) = original.$get() {
                p = p.$set(v.to_owned());
            })*
        };
    }
    copy!(
        content_type => with_content_type,
        content_encoding => with_content_encoding,
        delivery_mode => with_delivery_mode,
        priority => with_priority,
        correlation_id => with_correlation_id,
        reply_to => with_reply_to,
        expiration => with_expiration,
        message_id => with_message_id,
        timestamp => with_timestamp,
        kind => with_type,
        app_id => with_app_id,
        cluster_id => with_cluster_id,
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_bounded() {
        assert_eq!(bounded_reason("short"), "short");
        let exact = "x".repeat(MAX_REASON_BYTES);
        assert_eq!(bounded_reason(&exact), exact);
        // Multi-byte characters around the cut: the result is valid UTF-8 and within the bound.
        let long = format!("unknown type {:?}", "é".repeat(100 * 1024));
        let cut = bounded_reason(&long);
        assert!(cut.len() <= MAX_REASON_BYTES, "{}", cut.len());
        assert!(cut.starts_with("unknown type \"éé"));
        assert!(
            cut.ends_with(&format!("… (truncated, {} bytes)", long.len())),
            "{cut}"
        );
    }

    #[test]
    fn dead_letters_keep_the_message_but_not_its_user_id() {
        let mut headers = FieldTable::default();
        headers.insert("traceparent".into(), AMQPValue::LongString("tp".into()));
        // What travels unchanged.
        let kept = BasicProperties::default()
            .with_content_type("application/x-protobuf".into())
            .with_message_id("7".into())
            .with_type("OrderCreated".into())
            .with_delivery_mode(2)
            .with_timestamp(42)
            .with_app_id("relay-svc".into());
        let original = kept
            .clone()
            .with_user_id("relay".into())
            .with_headers(headers);
        let dead = dead_letter_properties(&original, &"r".repeat(5000), "order.created");
        assert_eq!(dead.user_id(), &None);
        let h = dead.headers().clone().expect("headers");
        let text = |name: &str| match h.inner().get(name) {
            Some(AMQPValue::LongString(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(text(ORIGINAL_USER_ID_HEADER), "relay");
        assert_eq!(text(ORIGINAL_ROUTING_KEY_HEADER), "order.created");
        assert_eq!(text("traceparent"), "tp");
        assert!(text(DEATH_REASON_HEADER).len() <= MAX_REASON_BYTES);
        // Everything else travels unchanged.
        assert_eq!(dead, kept.with_headers(h));
    }
}
