//! mail-svc as a user of `outbox_inbox::amqp::Consumer`: the judge ([`MailJudge`]: who published
//! a delivery, its shard and aggregate type, its size and format), the handler
//! ([`crate::process::Mails`]), and the callbacks that keep mail-svc's log lines, metrics, health
//! and durable dead-letter counter ([`consumer`]). See the [module docs](super) for batches,
//! sizes and trusted publishers.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use lapin::{BasicProperties, message::Delivery, types::AMQPValue};
use outbox::trace::TraceHeaders;
use outbox_inbox::{
    Envelope,
    amqp::{Consumer, Judge, Retrying, Topology},
};
use outbox_support::amqp::Change;
use tokio::sync::watch;

use crate::{
    db,
    event::{self, CONTENT_TYPE_PROTOBUF},
    process,
};

/// The shortest and longest wait between attempts at one delivery's transaction. The cap keeps
/// recovery after an outage within seconds; the growth keeps a long outage from costing more
/// than a few attempts per delivery per cap interval (no busy loop).
pub const BACKOFF_MIN: Duration = Duration::from_millis(100);
pub const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Judges a delivery before any database work: who published it, its aggregate type, its
/// shard, then its size and format (see [`event::decode`], which checks the size before
/// parsing). The envelope carries the body as it arrived (an `OrderEvent`, the form held events
/// are stored in) and a valid traceparent.
#[derive(Debug, Clone, Default)]
pub struct MailJudge {
    /// RabbitMQ users whose messages are processed (`TRUSTED_PUBLISHERS`); empty: everyone's.
    pub trusted_publishers: Vec<String>,
}

impl Judge for MailJudge {
    fn judge(&self, delivery: &Delivery) -> Result<Envelope, String> {
        let props = &delivery.properties;
        let content_type = props.content_type().as_ref().map(|c| c.as_str());
        let user_id = props.user_id().as_ref().map(|u| u.as_str());
        let shard = header_str(props, event::SHARD_HEADER);
        let aggregate_type = header_str(props, outbox::wire::HEADER_AGGREGATE_TYPE);
        let ev = event::check_publisher(&self.trusted_publishers, user_id)
            .and_then(|()| event::check_aggregate_type(aggregate_type.as_deref()))
            .and_then(|()| event::shard(shard.as_deref()))
            .and_then(|shard| {
                event::decode(content_type, &delivery.data).map(|ev| event::Event { shard, ..ev })
            })
            .map_err(|poison| poison.0)?;
        let traceparent =
            header_str(props, "traceparent").filter(|v| TraceHeaders::parse(v, None).is_some());
        // A protobuf body is an `OrderEvent` already; a hand-published JSON body is stored as one.
        let protobuf = content_type.is_none_or(|c| {
            let mime = c.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case(CONTENT_TYPE_PROTOBUF)
                || mime.eq_ignore_ascii_case("application/protobuf")
        });
        let body = protobuf.then_some(delivery.data.as_slice());
        Ok(process::envelope(&ev, body, traceparent))
    }
}

/// The consumer of `topology` with mail-svc's callbacks: what the broker says goes to `broker`
/// (for `GetStatus`) and the log; `ready` follows the consuming state (health); each retried
/// database attempt is logged and counted (`mail_db_retries_total`); each dead letter is counted
/// in this instance's durable counter row (before its ack) and in `mail_dead_lettered_total`.
pub fn consumer(
    topology: Topology,
    instance: &str,
    broker: &Arc<BrokerState>,
    ready: watch::Sender<bool>,
) -> Consumer {
    let instance = instance.to_owned();
    Consumer::new(topology)
        .on_change(broker.on_change())
        .with_retry_backoff(BACKOFF_MIN, BACKOFF_MAX)
        .on_consuming(move |consuming| {
            ready.send_replace(consuming);
            if consuming {
                tracing::info!("[mail] consuming");
            }
        })
        .on_retry(|r: &Retrying<'_>| {
            metrics::counter!(crate::metrics::DB_RETRIES).increment(1);
            tracing::warn!(
                error = r.error,
                sqlstate = r.sqlstate.unwrap_or("-"),
                attempt = r.attempt,
                "[mail] {}: database error ({:?}); retrying in {:?}",
                r.what,
                r.failure,
                r.delay
            );
        })
        .on_dead_letter(|delivery, reason| {
            let seq = delivery
                .properties
                .message_id()
                .as_ref()
                .map_or("?", |m| m.as_str());
            tracing::warn!("[mail] dead-letter seq={seq} reason={reason}");
            metrics::counter!(crate::metrics::DEAD_LETTERED).increment(1);
        })
        .record_dead_letters(move |conn, delivery, reason| {
            let instance = instance.clone();
            // What the message says of its event, when it is one (a poison message may not be).
            let event = Envelope::from_delivery(delivery).ok();
            let seq = delivery
                .properties
                .message_id()
                .as_ref()
                .and_then(|m| m.as_str().parse::<i64>().ok());
            let reason = reason.to_owned();
            Box::pin(async move {
                db::record_dead_letter(conn, event.as_ref(), seq, &reason).await?;
                db::bump(conn, &instance, db::DEAD_LETTERED, 1).await
            })
        })
}

/// What the broker says about the consumer's connection right now (see
/// [`outbox_support::amqp::watch`]), for `GetStatus`.
#[derive(Debug, Default)]
pub struct BrokerState {
    blocked: Mutex<Option<(String, Instant)>>,
}

impl BrokerState {
    /// The reason the broker gave and for how long, while it blocks the connection.
    pub fn blocked(&self) -> Option<(String, Duration)> {
        self.lock()
            .as_ref()
            .map(|(reason, since)| (reason.clone(), since.elapsed()))
    }

    fn set_blocked(&self, reason: Option<&str>) {
        *self.lock() = reason.map(|r| (r.to_owned(), Instant::now()));
        metrics::gauge!(crate::metrics::BROKER_BLOCKED).set(f64::from(u8::from(reason.is_some())));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(String, Instant)>> {
        self.blocked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs (once each), counts and records what the broker says about a connection.
    fn on_change(self: &Arc<Self>) -> impl Fn(&Change) + Send + Sync + 'static {
        let state = self.clone();
        move |change| match change {
            Change::Blocked(reason) => {
                tracing::warn!(
                    reason = %reason,
                    "[mail] the broker blocked the connection ({reason}): dead letters wait until it unblocks"
                );
                state.set_blocked(Some(reason));
            }
            Change::Unblocked { for_ } => {
                tracing::info!("[mail] the broker unblocked the connection after {for_:.1?}");
                state.set_blocked(None);
            }
            Change::Lost(lost) => {
                tracing::warn!(
                    reason = lost.label(),
                    "[mail] broker connection lost ({}); reconnecting",
                    lost.describe()
                );
                metrics::counter!(crate::metrics::AMQP_RECONNECTS, "reason" => lost.label())
                    .increment(1);
                state.set_blocked(None);
            }
        }
    }
}

/// A header's text value (string headers arrive as long or short strings).
fn header_str(props: &BasicProperties, name: &str) -> Option<String> {
    match props.headers().as_ref()?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}
