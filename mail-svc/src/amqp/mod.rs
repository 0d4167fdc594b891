//! RabbitMQ: the topology mail-svc declares ([`topology`]) and its use of the consumer loop
//! ([`consumer`]). The loop itself (batches, acks after commit, dead-lettering with a reason,
//! retries, reconnects over the broker list) is `outbox-inbox`'s `amqp::Consumer`; what is
//! mail-svc's is here and in [`crate::process`]: judging a delivery, the handler, the log lines
//! and metrics, the durable dead-letter counter.
//!
//! Topology (all durable, declared idempotently on every (re)connect):
//!
//! ```text
//! AMQP_EXCHANGE (topic) --order.#--> MAIL_QUEUE (quorum, x-dead-letter-exchange=MAIL_QUEUE.dlx)
//! MAIL_QUEUE.dlx (fanout) ---------> MAIL_QUEUE.dead-letter (quorum)
//! ```
//!
//! Poison messages are published by this service to `MAIL_QUEUE.dlx` with a header
//! `x-death-reason` (at most [`MAX_REASON_BYTES`]; longer reasons are cut and say so) and the
//! original body and properties, confirmed by the broker, and only then acked. A dead-letter
//! publish the broker refuses closes only the dead-letter channel: it is reopened (and the
//! dead-letter exchange and queue declared again), and after [`DEAD_LETTER_ATTEMPTS`] failures
//! the delivery is rejected without requeue, so the broker moves it to the same dead-letter queue
//! itself (with its `x-death` header; the reason is in the log). The consumer session goes on
//! either way. The queue's own dead-letter exchange is also the broker-side safety net: a message
//! redelivered more than [`DELIVERY_LIMIT`] times (e.g. one that crashes the process every time)
//! lands in the same dead-letter queue instead of cycling forever.
//!
//! **Batches.** Deliveries are gathered into batches of up to `BATCH_SIZE`: an idle consumer
//! starts one at once with what has arrived; while another batch is in flight, a batch waits at
//! most `BATCH_WINDOW` for more. Each delivery is judged first (publisher, size, format) and
//! poison is dead-lettered on its own; the rest are applied in one transaction (the crate's
//! `Inbox::apply_batch` with [`crate::process::Mails`]), retried as a whole on a database error
//! (see `outbox_inbox::failure`) or applied one by one when an event's data failed it, so that
//! only that event is dead-lettered.
//! After the commit, chain conflicts are dead-lettered and the others acked together: one
//! `basic.ack` with `multiple` on the highest tag when no other unsettled delivery of the channel
//! lies below it (a `multiple` ack settles everything up to its tag), else one ack each.
//!
//! **Message size.** RabbitMQ 3.10 has no per-queue limit on a message's size, only the
//! broker-wide `max_message_size` (default 128 MiB), and lapin assembles a whole message before
//! handing it over. What a publisher can make one mail-svc buffer is therefore bounded by
//! `PREFETCH` × the broker's `max_message_size`: operators set `max_message_size` on the broker
//! (docs/OPERATIONS.md says how). mail-svc itself checks the body size before it reads, copies or
//! stores anything ([`crate::event::MAX_BODY_BYTES`]) and dead-letters larger bodies.
//!
//! **Trusted publishers.** With `TRUSTED_PUBLISHERS` set, a message whose AMQP `user_id`
//! property is missing or not in the list is dead-lettered unread. RabbitMQ refuses a publish
//! whose `user_id` differs from the publishing connection's user, so the property names who
//! published.

pub mod consumer;

pub use outbox_inbox::amqp::{
    DEAD_LETTER_ATTEMPTS, DEATH_REASON_HEADER, DELIVERY_LIMIT, Disposition, MAX_REASON_BYTES,
    Topology, bounded_reason, dead_letter_properties, with_properties_of,
};

/// The routing keys mail-svc consumes: every order event (order.created, order.status_changed,
/// future ones).
pub const BINDING_KEY: &str = "order.#";

/// The names mail-svc declares: `queue` bound to `exchange` with [`BINDING_KEY`], dead letters in
/// `<queue>.dlx` and `<queue>.dead-letter`.
pub fn topology(exchange: &str, queue: &str) -> Topology {
    Topology::new(exchange, queue, BINDING_KEY)
}
