//! What the outbox crates (`outbox`, `outbox-relay`, `outbox-inbox`) and their services share,
//! none of it about the outbox itself: [`backoff`] (retry pacing), [`secret`] (URLs that never
//! print their password), [`failover`] (broker lists and the order they are tried in),
//! [`metrics`] (metric declarations with their Prometheus type and HELP text), and, with the
//! `amqp` feature, [`amqp`] (one way to open a RabbitMQ connection: TLS, heartbeat, TCP
//! keepalive, and a watch on its blocked and lost events).

#![warn(missing_docs)]

// The foreign crate the AMQP API takes and returns, re-exported so a user's version always
// matches (two lapins in one build give baffling type errors).
#[cfg(feature = "amqp")]
pub use lapin;

#[cfg(feature = "amqp")]
pub mod amqp;
pub mod backoff;
pub mod failover;
pub mod metrics;
pub mod secret;
