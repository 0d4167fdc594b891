//! What the outbox crates (`outbox`, `outbox-relay`, `outbox-inbox`) and their services share,
//! none of it about the outbox itself: [`backoff`] (retry pacing), [`secret`] (URLs that never
//! print their password), [`failover`] (broker lists and the order they are tried in),
//! [`metrics`] (metric declarations with their Prometheus type and HELP text), and, with the
//! `amqp` feature, [`amqp`] (one way to open a RabbitMQ connection: TLS, heartbeat, TCP
//! keepalive, and a watch on its blocked and lost events).
//!
//! ## Stable API
//!
//! What this version promises, changed only with a new version and a CHANGELOG line with the
//! signature before → after (`docs/public-api/outbox-support.txt` lists every item; CI holds the
//! crate to it, see `.ci/public-api.sh`): the modules [`backoff`], [`secret`], [`failover`],
//! [`metrics`] and, with the feature `amqp`, `amqp` and the re-export of `lapin`. Nothing else is
//! public.

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
