//! The lapin glue of a consumer (feature `amqp`): what to do with a delivery ([`Disposition`]),
//! the queue topology with its dead-letter exchange ([`Topology`]), dead-lettering with a reason
//! ([`DeadLetterChannel`]), acks after commit ([`ack_together`]), and the envelope of a message an
//! outbox relay published ([`Envelope::from_delivery`](crate::Envelope::from_delivery)), and
//! [`Consumer`], a loop that puts them together: batches (one transaction and one ack each),
//! reconnects over a list of brokers ([`Consumer::run_reconnecting`]), and what it did
//! ([`Counts`]).
//!
//! The order of work for every delivery: judge it (poison is dead-lettered unread), apply it
//! with [`Inbox::apply`](crate::Inbox::apply) or [`Inbox::batch`](crate::Inbox::batch) in your
//! transaction, **commit**, and only then settle it as its [`Disposition`] says. A crash between
//! commit and ack redelivers the message, and the inbox skips it as a duplicate; an ack before
//! the commit could lose it.
//!
//! Bound what a consumer holds with the channel's prefetch (`basic.qos`): unacked deliveries are
//! this consumer's; the rest wait in the queue for any instance.

mod ack;
mod batch;
mod consumer;
mod counts;
mod dead_letter;
mod hooks;
mod judge;
mod message;
mod topology;

pub use ack::{BROKER_CALL_TIMEOUT, BrokerError, Unsettled, ack_together, broker_call};
pub use consumer::{CONNECT_TIMEOUT, Consumer, RECONNECT_MAX, RECONNECT_MIN, RETRY_MAX, RETRY_MIN};
pub use counts::Counts;
pub use dead_letter::{
    DEAD_LETTER_ATTEMPTS, DEATH_REASON_HEADER, DeadLetterChannel, MAX_REASON_BYTES,
    ORIGINAL_ROUTING_KEY_HEADER, ORIGINAL_USER_ID_HEADER, bounded_reason, dead_letter_properties,
    with_properties_of,
};
pub use hooks::Retrying;
pub use judge::Judge;
pub use topology::{DELIVERY_LIMIT, Topology};

/// Opening the connection a [`Consumer`] runs on: one URL, TLS material, a heartbeat (a silent
/// network is noticed within about two), what the broker says about it; and the list of
/// brokers [`Consumer::run_reconnecting`] fails over, from the `outbox-support` crate.
pub use outbox_support::{
    amqp::{Change, DEFAULT_HEARTBEAT, Lost, Tls, connect},
    failover::{BrokerUrls, Failover},
};

/// What to do with a delivery once its transaction is over.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disposition {
    /// Committed (processed, held or a duplicate): ack it.
    Ack,
    /// It can never be processed (undecodable, untrusted, a chain conflict): publish it to the
    /// dead-letter exchange with this reason in `x-death-reason`, then ack it.
    DeadLetter {
        /// Why, for the person reading the dead-letter queue.
        reason: String,
    },
    /// Not settled now (shutdown came first, or a database outage outlasted the attempt):
    /// leave it unacked; the broker redelivers it when the channel closes.
    Retry,
}

impl Disposition {
    /// A dead letter with `reason`.
    pub fn dead_letter(reason: impl Into<String>) -> Self {
        Disposition::DeadLetter {
            reason: reason.into(),
        }
    }
}
